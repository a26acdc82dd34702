//! `conformance hunt` end to end: about a second of differential runs against a deliberately
//! broken reader (`--break i32-via-u32`) on one version and one kind must give exactly one
//! signature, whose saved folder replays as a failure with that reader and as a pass with the
//! real one; the same `--seed` draws the same first run. Then a few seconds of fault,
//! power-loss and disk-error batches: the same broken reader is caught by each suite, its main
//! signature in each (`get i32`; for fault and power loss already on the undamaged store)
//! replays as a failure with it and as a pass with the real reader, and the real reader on the
//! same budget finds nothing.

use std::path::Path;
use std::process::Output;

mod common;

use common::{conformance, newest_plain, text, with_break};

/// A hunt of 1.2 seconds with the broken reader on `tag`'s plain stores; its JSON document.
fn hunt(tag: &str, seed: &str, out: &Path) -> serde_json::Value {
    let json = out.join("h.json");
    let o = conformance(&[
        "hunt",
        "--minutes",
        "0.02",
        "--break",
        "i32-via-u32",
        "--only",
        tag,
        "--kinds",
        "plain",
        "--suites",
        "differential",
        "--cases",
        "16",
        "--max-shrink-iters",
        "32",
        "--seed",
        seed,
        "--out",
        out.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "a finding exits 1:\n{}", text(&o));
    assert!(text(&o).contains("1 signature(s)"), "{}", text(&o));
    serde_json::from_str(&std::fs::read_to_string(&json).expect("JSON written")).expect("JSON")
}

#[test]
fn a_broken_reader_gives_one_replayable_signature() {
    let tag = newest_plain();
    let out = tempfile::tempdir().unwrap();
    let doc = hunt(tag, "3", out.path());
    assert_eq!(doc["schema"], "conformance-hunt/3");
    assert_eq!(doc["base_seed"], 3);
    assert_eq!(doc["versions"], serde_json::json!([tag]));
    let runs = doc["runs"]["differential"].as_u64().unwrap();
    assert!(runs >= 1, "{doc}");
    assert_eq!(doc["runs"]["migration"], 0, "one version: no pair");
    // 1.2 s is 1.199999999 s as a Duration
    let elapsed = doc["elapsed_s"].as_f64().unwrap();
    assert!(elapsed >= 1.19, "ran to its budget: {doc}");
    let sigs = doc["signatures"].as_array().unwrap();
    assert_eq!(sigs.len(), 1, "exactly one signature: {doc:#}");
    let s = &sigs[0];
    assert_eq!(s["suite"], "differential");
    assert_eq!(s["versions"], tag);
    assert_eq!(s["version_list"], serde_json::json!([tag]));
    assert_eq!(s["kind"], "plain");
    assert_eq!(s["compared"], "get i32");
    assert_eq!(s["first_op"], "set");
    assert_eq!(s["count"].as_u64(), Some(runs), "every run fails");
    let id = s["id"].as_str().unwrap();
    assert!(
        id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit()),
        "{id}"
    );

    let ex = &s["example"];
    let dir = Path::new(ex["dir"].as_str().unwrap());
    assert!(
        dir.starts_with(out.path()),
        "saved under --out: {}",
        dir.display()
    );
    let workload = std::fs::read_to_string(dir.join("workload.yaml")).expect("workload.yaml");
    assert_eq!(ex["workload"], workload.as_str());
    assert!(workload.contains("op: set"), "{workload}");
    let replay = ex["replay"].as_str().unwrap();
    assert_eq!(
        replay,
        format!(
            "cargo run --release -p conformance -- replay {} --break i32-via-u32",
            dir.display()
        )
    );
    // The replay line's command, run by this build.
    let d = dir.to_str().unwrap();
    let broken = conformance(&["replay", d, "--break", "i32-via-u32"]);
    assert_eq!(broken.status.code(), Some(1), "{}", text(&broken));
    assert!(text(&broken).contains("get i32"), "{}", text(&broken));
    let real = conformance(&["replay", d]);
    assert_eq!(
        real.status.code(),
        Some(0),
        "the real reader agrees: {}",
        text(&real)
    );

    // The same seed: the same first run, the same signature.
    let again = tempfile::tempdir().unwrap();
    let doc2 = hunt(tag, "3", again.path());
    let s2 = &doc2["signatures"][0];
    assert_eq!(s2["id"], s["id"]);
    assert_eq!(s2["example"]["seed"], ex["seed"]);
}

/// A 9-second hunt of fault, power-loss and disk-error batches (24, 24 and 12 states) on
/// `tag`'s plain stores, with `broken` (or the real reader); its exit status and JSON document.
fn state_hunt(tag: &str, broken: Option<&str>, out: &Path) -> (Option<i32>, serde_json::Value) {
    let json = out.join("h.json");
    let args = [
        "hunt",
        "--minutes",
        "0.15",
        "--only",
        tag,
        "--kinds",
        "plain",
        "--suites",
        "fault,powerloss,diskerr",
        "--fault-states",
        "24",
        "--powerloss-states",
        "24",
        "--diskerr-states",
        "12",
        "--seed",
        "5",
        "--out",
        out.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ];
    let o = conformance(&with_break(&args, broken));
    let doc =
        std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("no JSON ({e}):\n{}", text(&o)));
    (o.status.code(), serde_json::from_str(&doc).expect("JSON"))
}

/// The replay line's command run by this build (its `cargo run ... --` prefix dropped).
fn replay(line: &str, with_break: bool) -> Output {
    let args = line
        .strip_prefix("cargo run --release -p conformance -- ")
        .unwrap_or_else(|| panic!("not a replay line: {line}"));
    let mut args: Vec<&str> = args.split(' ').collect();
    if !with_break {
        let at = args.iter().position(|a| *a == "--break").expect("--break");
        args.truncate(at);
    }
    conformance(&args)
}

#[test]
fn state_batches_catch_a_broken_reader_and_pass_the_real_one() {
    let tag = newest_plain();
    let out = tempfile::tempdir().unwrap();
    let (code, doc) = state_hunt(tag, Some("i32-via-u32"), out.path());
    assert_eq!(code, Some(1), "a finding exits 1: {doc:#}");
    assert_eq!(
        doc["suites"],
        serde_json::json!(["fault", "powerloss", "diskerr"])
    );
    let runs = &doc["runs"];
    assert_eq!(
        (&runs["differential"], &runs["migration"]),
        (&0.into(), &0.into())
    );
    let sigs = doc["signatures"].as_array().unwrap();
    // A disk-error state has no store before it: its first op is how its writer ended and
    // which calls failed.
    for (suite, states, first_op, text_file) in [
        (
            "fault",
            24,
            Some("no damage needed (the written store)"),
            "verdict.txt",
        ),
        (
            "powerloss",
            24,
            Some("no lost page needed (the crash point)"),
            "state.txt",
        ),
        ("diskerr", 12, None, "verdict.txt"),
    ] {
        assert!(runs[suite].as_u64().unwrap() >= states, "{suite}: {doc:#}");
        let of: Vec<&serde_json::Value> = sigs.iter().filter(|s| s["suite"] == suite).collect();
        assert!(!of.is_empty(), "{suite} caught nothing: {doc:#}");
        for s in &of {
            let c = s["compared"].as_str().unwrap();
            assert!(
                c.ends_with(": get i32") || c.ends_with(": reader refused"),
                "{suite}: only the i32 getter differs (or a refusal the judge then cannot \
                 explain with it): {c}"
            );
            assert_eq!((&s["versions"], &s["kind"]), (&tag.into(), &"plain".into()));
        }
        // One signature for the bug itself: the undamaged store already differs, most often.
        let main = of.iter().max_by_key(|s| s["count"].as_u64()).unwrap();
        match first_op {
            Some(op) => assert_eq!(main["first_op"], op, "{suite}: {doc:#}"),
            None => {
                let op = main["first_op"].as_str().unwrap();
                assert!(
                    op.ends_with(" failed") && op.contains(':'),
                    "{suite}: a failure class: {op}"
                );
            }
        }
        assert!(main["compared"].as_str().unwrap().ends_with(": get i32"));
        assert_eq!(
            of.iter()
                .filter(|s| s["first_op"] == main["first_op"] && s["compared"] == main["compared"])
                .count(),
            1,
            "grouped into one signature"
        );
        let ex = &main["example"];
        let dir = Path::new(ex["dir"].as_str().unwrap());
        assert!(dir.starts_with(out.path().join(suite)), "{}", dir.display());
        let saved = std::fs::read_to_string(dir.join(text_file)).expect("saved description");
        assert_eq!(ex["workload"], saved.as_str());
        // The example is a state of that store: its own first verdict may be a refusal.
        let shows = |t: &str| t.contains("get i32") || t.contains("reader refused");
        assert!(shows(&saved), "{saved}");
        let line = ex["replay"].as_str().unwrap();
        assert!(line.ends_with(" --break i32-via-u32"), "{line}");
        let broken = replay(line, true);
        assert_eq!(broken.status.code(), Some(1), "{}", text(&broken));
        assert!(
            text(&broken).contains("DISAGREE") && shows(&text(&broken)),
            "{}",
            text(&broken)
        );
        let real = replay(line, false);
        assert_eq!(
            real.status.code(),
            Some(0),
            "the real reader agrees: {}",
            text(&real)
        );
    }

    let clean = tempfile::tempdir().unwrap();
    let (code, doc) = state_hunt(tag, None, clean.path());
    assert_eq!(doc["signatures"], serde_json::json!([]), "{doc:#}");
    assert_eq!(code, Some(0));
    for (suite, states) in [("fault", 24), ("powerloss", 24), ("diskerr", 12)] {
        assert!(doc["runs"][suite].as_u64().unwrap() >= states, "{doc:#}");
    }
}
