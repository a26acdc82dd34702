//! Plan digests (`conformance::report::digest`): one base seed draws one plan, and another
//! seed another, for the differential workloads and for the fault, power-loss and disk-error
//! plans separately. The plans are drawn without running the official library (fast); one test runs
//! a short property against the newest built version to check that the drawn workloads are
//! the ones a property run runs, and one that merging shards gives one digest whatever their
//! order.

use std::sync::Mutex;

use conformance::differential::property::{
    check_property_with, draw_workloads, PropConfig, PropOutcome,
};
use conformance::differential::workload::{GenConfig, Repro, Workload};
use conformance::diskerr::section::DiskerrSection;
use conformance::diskerr::suite::{draw_plan as draw_diskerr_plan, DiskerrConfig};
use conformance::fault::section::FaultSection;
use conformance::fault::suite::{draw_plan as draw_fault_plan, BasePlan, SuiteConfig, Target};
use conformance::powerloss::record::{Recording, Step, SyncKind, PAGE};
use conformance::powerloss::section::PowerlossSection;
use conformance::powerloss::suite::{
    draw_plan as draw_powerloss_plan, draw_recording, recording_states, PowerlossConfig,
};
use conformance::report::cell::{CellResult, CellSpec};
use conformance::report::digest::cell_digest;
use conformance::report::merge::merge;
use conformance::report::{Report, Row, RowCounts, Source};
use conformance::sides::official::OfficialLib;
use conformance::sides::sys::SysLib;
use conformance::writer::child::ChildExe;
use conformance::writer::Kill;
use conformance::{Features, RealReader, StoreKind};

const TAG: &str = "v2.4.2";

fn features() -> Features {
    Features::from_tag(TAG).expect("a release tag")
}

fn target(kind: StoreKind) -> Target {
    Target {
        tag: TAG.to_string(),
        can_recover: true,
        features: features(),
        kind,
    }
}

/// A report cell as the report makes it under `base`: property seeds `base` and `base + 1`.
fn cell(base: u64, kind: StoreKind) -> CellSpec {
    CellSpec {
        tag: TAG.to_string(),
        kind,
        cases: 3,
        seeds: vec![base, base + 1],
        many_keys: 20,
        real_clock: false,
        gen: Some(GenConfig::default()),
    }
}

#[test]
fn one_seed_draws_one_set_of_workloads() {
    let digest = |base: u64, kind| cell_digest(&cell(base, kind), features(), 4096);
    let a = digest(1, StoreKind::Aes128);
    assert_eq!(a.len(), 64);
    assert_eq!(a, digest(1, StoreKind::Aes128), "the same seed, twice");
    assert_ne!(a, digest(2, StoreKind::Aes128), "base seed 2");
    assert_ne!(a, digest(1, StoreKind::Plain), "another kind");
    assert_ne!(
        a,
        cell_digest(&cell(1, StoreKind::Aes128), features(), 16384),
        "another page size"
    );
    // what the digest stands for: base seed 2 draws other workloads
    let drawn = |seed| draw_workloads(StoreKind::Aes128, features(), GenConfig::default(), seed, 3);
    assert_ne!(drawn(1), drawn(3));

    // the report's workloads part: the same cells give the same digest
    let report = |base: u64| Report {
        versions: vec![row(base)],
        ..Report::default()
    };
    let (r1, r2) = (report(1).plan_digest(), report(2).plan_digest());
    assert_eq!(r1, report(1).plan_digest());
    assert_ne!(r1.workloads, r2.workloads);
    assert_ne!(r1.plan, r2.plan);
    assert_eq!((r1.faults, r1.powerloss), (None, None));
}

/// A live row with an AES-128 cell drawn under `base`.
fn row(base: u64) -> Row {
    let spec = cell(base, StoreKind::Aes128);
    let result = CellResult {
        passed: true,
        workloads: 7,
        plan_digest: Some(cell_digest(&spec, features(), 4096)),
        ..CellResult::default()
    };
    Row {
        tag: TAG.to_string(),
        page_size: 4096,
        source: Source::Live,
        kinds: [("aes128".to_string(), conformance::report::Cell::Pass)]
            .into_iter()
            .collect(),
        ran: RowCounts {
            workloads: 7,
            ..RowCounts::default()
        },
        failures: Vec::new(),
        notes: Vec::new(),
        cells: [("aes128".to_string(), result)].into_iter().collect(),
        live_writer: None,
        unbuilt: None,
    }
}

fn fault_config(seed: u64) -> SuiteConfig {
    let mut cfg = SuiteConfig::new(
        ChildExe::conformance("conformance").with_page_size(4096),
        60,
    );
    cfg.common.seed = seed;
    cfg.common.ops = 40;
    cfg
}

#[test]
fn one_seed_draws_one_fault_plan() {
    let targets = [target(StoreKind::Plain), target(StoreKind::Aes128)];
    let layout = |p: &BasePlan| (p.writer.kill != Kill::Never, 8192, 3000);
    let a = draw_fault_plan(&fault_config(1), &targets, layout);
    assert_eq!(a, draw_fault_plan(&fault_config(1), &targets, layout));
    assert_ne!(a, draw_fault_plan(&fault_config(2), &targets, layout));

    // The damage counts, except after a timed kill (what that writer leaves is timing).
    let runs = 60 / fault_config(1).per_base;
    let timed = (1..=runs)
        .filter(|&n| {
            let kill = BasePlan::draw(1, n, StoreKind::Plain, 40).writer.kill;
            matches!(kill, Kill::During(..))
        })
        .count();
    assert!(timed > 0 && timed < runs, "seed 1 draws both kinds of run");
    let timed_longer = |p: &BasePlan| match p.writer.kill {
        Kill::During(..) => (true, 12288, 7000),
        _ => layout(p),
    };
    assert_eq!(
        a,
        draw_fault_plan(&fault_config(1), &targets, timed_longer),
        "a timed kill's states count by their index alone"
    );
    let all_longer = |p: &BasePlan| (p.writer.kill != Kill::Never, 12288, 7000);
    assert_ne!(
        a,
        draw_fault_plan(&fault_config(1), &targets, all_longer),
        "the damage of the other runs counts"
    );
}

/// A recording of 8 data pages and a meta page over 6 calls with a sync after the third:
/// enough page versions that states are sampled (the generator chooses them).
fn recording(target: &Target, seed: u64) -> Recording {
    let pages = 8;
    let mut data = vec![0u8; pages * PAGE];
    let mut meta = vec![0u8; PAGE];
    let mut steps = vec![step(&data, &meta, Some(SyncKind::Open))];
    for call in 1..=6u8 {
        for p in 0..pages {
            if (p + usize::from(call)) % 3 != 0 {
                data[p * PAGE + usize::from(call)] = call;
            }
        }
        meta[usize::from(call)] = call;
        steps.push(step(
            &data,
            &meta,
            (call == 3).then_some(SyncKind::Explicit),
        ));
    }
    Recording {
        tag: target.tag.clone(),
        kind: target.kind,
        seed,
        page: PAGE,
        steps,
    }
}

fn step(data: &[u8], meta: &[u8], sync: Option<SyncKind>) -> Step {
    Step {
        label: String::new(),
        data: data.to_vec(),
        meta: meta.to_vec(),
        data_sync: sync,
        meta_sync: sync,
    }
}

fn powerloss_config(seed: u64) -> PowerlossConfig {
    let mut cfg = PowerlossConfig::new(
        ChildExe::conformance("conformance").with_page_size(4096),
        40,
    );
    cfg.common.seed = seed;
    cfg.common.ops = 40;
    cfg.per_point = 6;
    cfg
}

#[test]
fn one_seed_draws_one_power_loss_plan() {
    let targets = [target(StoreKind::Plain), target(StoreKind::Aes256)];
    let a = draw_powerloss_plan(&powerloss_config(1), &targets, recording);
    assert_eq!(
        a,
        draw_powerloss_plan(&powerloss_config(1), &targets, recording)
    );
    assert_ne!(
        a,
        draw_powerloss_plan(&powerloss_config(2), &targets, recording)
    );
    // what the digest stands for: another seed chooses other crash states of one recording
    let chosen = |seed| {
        let (mut rng, _) = draw_recording(seed, 1);
        let rec = recording(&targets[0], 0);
        let states = recording_states(&rec, 6, 20, &mut rng);
        states.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    assert_eq!(chosen(1), chosen(1));
    assert_ne!(chosen(1), chosen(2));
}

#[test]
fn one_seed_draws_one_disk_error_plan() {
    let targets = [target(StoreKind::Plain), target(StoreKind::Aes128)];
    let config = |seed: u64, states: usize| {
        let mut cfg = DiskerrConfig::new(
            ChildExe::conformance("conformance").with_page_size(4096),
            states,
        );
        cfg.common.seed = seed;
        cfg
    };
    let a = draw_diskerr_plan(&config(1, 24), &targets);
    assert_eq!(a, draw_diskerr_plan(&config(1, 24), &targets));
    assert_ne!(a, draw_diskerr_plan(&config(2, 24), &targets), "seed 2");
    assert_ne!(
        a,
        draw_diskerr_plan(&config(1, 23), &targets),
        "one state fewer"
    );
    assert_ne!(
        a,
        draw_diskerr_plan(&config(1, 24), &targets[..1]),
        "one kind"
    );
}

#[test]
fn merged_shards_have_one_digest_whatever_their_order() {
    let shard = |tag: &str, faults: &str, powerloss: &str, diskerr: &str| {
        let mut r = row(1);
        r.tag = tag.to_string();
        Report {
            versions: vec![r],
            faults: Some(FaultSection {
                states: 6,
                plan_digests: vec![faults.to_string()],
                ..FaultSection::default()
            }),
            powerloss: Some(PowerlossSection {
                states: 9,
                plan_digests: vec![powerloss.to_string()],
                ..PowerlossSection::default()
            }),
            diskerr: Some(DiskerrSection {
                states: 4,
                plan_digests: vec![diskerr.to_string()],
                ..DiskerrSection::default()
            }),
            seed: Some(1),
            ..Report::default()
        }
    };
    let json = |r: &Report| serde_json::from_str::<Report>(&r.to_json()).unwrap();
    let a = shard("v2.4.2", "f1", "p1", "d1");
    let b = shard("v1.3.14", "f2", "p2", "d2");
    let ab = merge(vec![json(&a), json(&b)]).plan_digest();
    let ba = merge(vec![json(&b), json(&a)]).plan_digest();
    assert_eq!(ab, ba);
    assert_ne!(ab, a.plan_digest());
    // the disk-error plan is a part: another one, another report digest
    let other = shard("v2.4.2", "f1", "p1", "d3").plan_digest();
    assert_eq!(
        (&other.faults, &other.powerloss),
        (&Some("f1".into()), &Some("p1".into()))
    );
    assert_ne!(other.plan, a.plan_digest().plan);
    // one shard merged alone keeps its digest; the JSON carries it
    assert_eq!(merge(vec![json(&a)]).plan_digest(), a.plan_digest());
    let doc: serde_json::Value = serde_json::from_str(&a.to_json()).unwrap();
    assert_eq!(doc["plan_digest"]["plan"], a.plan_digest().plan.as_str());
    assert_eq!(doc["plan_digest"]["faults"], "f1");
    assert_eq!(doc["plan_digest"]["diskerr"], "d1");
    assert_eq!(doc["faults"]["plan_digests"][0], "f1");
    assert!(a.summary_line().ends_with(&format!(
        "plan digest: {} (workloads {}, faults f1, power-loss p1, disk-error d1)",
        a.plan_digest().plan,
        &a.plan_digest().workloads[..16]
    )));
}

#[test]
fn drawn_workloads_are_the_ones_a_property_run_runs() {
    let Some(tag) = mmkv_sys::built_versions().last() else {
        eprintln!("no official version built: nothing to run");
        return;
    };
    let lib = SysLib::load(tag).expect("load");
    let dir = tempfile::tempdir().unwrap();
    let running = dir.path().join("workload.yaml");
    let ran: Mutex<Vec<Workload>> = Mutex::new(Vec::new());
    let (kind, seed, cases) = (StoreKind::Aes128, 7, 3);
    let cfg = PropConfig {
        cases,
        seed: Some(seed),
        save_failures: false,
        running: Some(running.clone()),
        ..PropConfig::default()
    };
    let heartbeat = || {
        let text = std::fs::read_to_string(&running).unwrap();
        let repro = Repro::from_yaml(&text).unwrap();
        ran.lock().unwrap().push(repro.workload);
    };
    let _clock = conformance::vocab::test_clock::Scoped::new(true);
    let outcome = check_property_with(&lib, kind, &RealReader::new(), &cfg, &heartbeat);
    assert!(matches!(outcome, PropOutcome::Pass { .. }), "{outcome:?}");
    let drawn = draw_workloads(kind, lib.features(), cfg.gen, seed, cases as usize);
    let ran = ran.into_inner().unwrap();
    assert_eq!(ran.len(), drawn.len(), "cases run and drawn");
    for (i, (r, d)) in ran.iter().zip(&drawn).enumerate() {
        // (a workload's Debug text is long: the YAML of the first difference says enough)
        assert!(
            r == d,
            "case {i}: ran {} ops, drawn {} ops",
            r.ops.len(),
            d.ops.len()
        );
    }
}
