//! Disk errors (CI size): official writers run while chosen file calls fail (`ftruncate`,
//! `mmap`, `msync`, `write`), and the states they leave are judged as the fault suite judges
//! its damaged states. `DISKERR_STATES` sets the run's size (default 36; `conformance report`
//! and `conformance faults diskerr` judge 200). A broken reader is caught on these states, its
//! saved folder replays as a failure with it and as a pass with the real reader; and a writer
//! with the empty schedule leaves the power-loss writer's final state.

use std::path::Path;

use conformance::diskerr::suite::{draw_plan, run_diskerr, DiskerrConfig, SCHEDULED};
use conformance::fault::cli::states_from_env;
use conformance::fault::suite::targets;
use conformance::vocab::STORE_ID;
use conformance::writer::child::ChildExe;
use conformance::writer::{Done, Plan, WriterSpec};
use conformance::StoreKind;

mod common;

use common::{conformance_in, newest, text, with_break};

fn exe() -> ChildExe {
    ChildExe::conformance(env!("CARGO_BIN_EXE_conformance"))
}

#[test]
fn reader_agrees_with_official_on_disk_error_states() {
    if newest().is_none() {
        return;
    }
    conformance::vocab::seed::announce();
    let failures = tempfile::tempdir().unwrap();
    let mut cfg = DiskerrConfig::new(exe(), states_from_env("DISKERR_STATES", 36));
    cfg.common.save = Some(failures.path().to_path_buf());
    let s = run_diskerr(&cfg, |_| {}).unwrap();
    println!("{}", s.to_text());
    assert_eq!(s.states as usize, cfg.common.states);
    // The run carries the plan its seed draws (what the report's digest covers).
    let c = &cfg.common;
    let drawn = draw_plan(&cfg, &targets(&c.tags, &c.kinds, true).unwrap());
    assert_eq!(s.plan_digests, vec![drawn]);
    // The schedules fail every call they draw from, and the API saw it.
    for call in SCHEDULED {
        assert!(
            s.failed_calls.get(call.name()).is_some_and(|n| *n > 0),
            "no {call} failed:\n{}",
            s.to_text()
        );
    }
    assert!(s.runs_with_failures * 2 >= s.states, "{}", s.to_text());
    assert!(
        s.returned.keys().any(|k| k.ends_with(" false")),
        "no set was refused:\n{}",
        s.to_text()
    );
    let agree: u64 = s
        .verdicts
        .iter()
        .filter(|(k, _)| k.ends_with(" agree"))
        .map(|(_, n)| n)
        .sum();
    assert!(agree > 0, "{}", s.to_text());
    assert!(s.passed(), "{}", s.to_text());
}

/// `--break i32-via-u32` (an i32 read through the u32 getter) is caught on disk-error states;
/// a saved state replays as a failure with it and as a pass with the real reader.
#[test]
fn a_broken_reader_is_caught_on_disk_error_states() {
    let Some(tag) = newest() else {
        return;
    };
    let failures = tempfile::tempdir().unwrap();
    let json = failures.path().join("diskerr.json");
    let run = |extra: &[&str], broken: Option<&str>| {
        let mut args = vec!["faults", "diskerr", "--states", "12", "--tags", &tag];
        args.extend_from_slice(&["--kinds", "plain", "--json", json.to_str().unwrap()]);
        args.extend_from_slice(extra);
        conformance_in(&with_break(&args, broken), Some(failures.path()))
    };
    let o = run(&[], Some("i32-via-u32"));
    assert_eq!(
        o.status.code(),
        Some(1),
        "a disagreement exits 1:\n{}",
        text(&o)
    );
    let section: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(section["disagreeing"].as_u64().unwrap() > 0, "{}", text(&o));
    let saved = std::fs::read_dir(failures.path().join("diskerr"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            std::fs::read_to_string(p.join("verdict.txt")).is_ok_and(|t| t.contains("DISAGREE"))
        })
        .expect("a disagreeing state saved");
    assert!(saved.join("state").join(STORE_ID).is_file());
    let replay = saved.to_str().unwrap();
    let broken = run(&["--replay", replay], Some("i32-via-u32"));
    assert_eq!(broken.status.code(), Some(1), "{}", text(&broken));
    assert!(text(&broken).contains("DISAGREE"), "{}", text(&broken));
    let real = run(&["--replay", replay], None);
    assert_eq!(real.status.code(), Some(0), "{}", text(&real));
    let o = run(&[], None);
    assert_eq!(
        o.status.code(),
        Some(0),
        "the real reader passes:\n{}",
        text(&o)
    );
}

/// With the empty schedule the disk-error writer is the power-loss writer: the same final
/// state (count, the digest of every value read back, full write-backs) and files of the same
/// sizes. Not byte for byte: two runs of the same power-loss writer, wrapped or not, now and
/// then differ in a few bytes of the data file.
#[test]
fn an_empty_schedule_writes_what_the_power_loss_writer_writes() {
    let Some(tag) = newest() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for plan in [Plan::Powerloss, Plan::Diskerr] {
        let dir = tmp.path().join(format!("{plan:?}"));
        std::fs::create_dir_all(&dir).unwrap();
        let spec = WriterSpec {
            seed: 11,
            kind: StoreKind::Plain,
            ..WriterSpec::new(plan, 120, 0)
        };
        let out = spec.command(&exe(), &tag, &dir).output().unwrap();
        assert!(out.status.success(), "{plan:?}: {}", text(&out));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            !stdout.contains("ioerr"),
            "{plan:?} failed a call: {stdout}"
        );
        let done = stdout.lines().filter_map(Done::parse).next_back().unwrap();
        let data = dir.join(STORE_ID);
        let meta = mmkv_reader::meta_path(&data);
        let len = |p: &Path| std::fs::metadata(p).unwrap().len();
        files.push((
            (done.count, done.digest, done.seq_end),
            len(&data),
            len(&meta),
        ));
    }
    assert!(files[0].0 .0 > 0, "the writer left keys: {files:?}");
    assert_eq!(files[0], files[1], "the same final state and file sizes");
}
