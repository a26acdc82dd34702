//! `suite grade`'s batch mode (suite/README.md, "Reader protocol") gives every case exactly the
//! result of single mode (one process per case): a test driver answers the cases from their
//! `case.json` and misbehaves on some (dies, hangs, prints a traceback after its answer, is
//! killed right after answering, prints stray lines, answers for another case); graded in
//! batch mode and in single mode (the same driver refusing batch mode), every result is the
//! same, the misbehaving cases get their single-mode grades, and batch mode started fewer
//! processes than there are cases.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

use conformance::suite::case::{load_all, suite_root, Class};
use conformance::suite::driver::{DriverStats, ReaderSpec};
use conformance::suite::grade::{grade_all, Grade, GradeReport};

/// Answers a case from its `case.json` (an oracle: `y_` and `i_` the expected entries, `n_` an
/// error), except as the case folder's `behaviour` file says.
const DRIVER: &str = r#"
import json, os, signal, sys, time

BATCH = os.environ.get("MMKV_SUITE_BATCH") == "1" and len(sys.argv) == 1

def behaviour(case_dir):
    try:
        with open(os.path.join(case_dir, "behaviour")) as f:
            return f.read().strip()
    except FileNotFoundError:
        return ""

def answer(case_dir):
    with open(os.path.join(case_dir, "case.json")) as f:
        case = json.load(f)
    b = behaviour(case_dir)
    if b == "traceback":
        raise ValueError("the reader failed")
    if b == "hang-in-batch" and BATCH:
        time.sleep(60)
    if b == "stray-line":
        print("a stray line", flush=True)
    if case["class"] == "must_not_read":
        return {"error": "discarded"}
    entries = [{"key": e["key_hex"], "value": e["payload_hex"]}
               for e in case["expect"].get("entries", [])]
    return {"entries": entries}

def after(case_dir):
    b = behaviour(case_dir)
    if b == "late-traceback":
        sys.stderr.write("Traceback (most recent call last):\n  late\nValueError: late\n")
        sys.stderr.flush()
    if b == "killed-after-answer":
        os.kill(os.getpid(), signal.SIGKILL)

PANIC = "thread 'main' panicked at src/x.rs:1:1:\nboom\n"

if BATCH:
    print(json.dumps({"batch": 1}), flush=True)
    for line in iter(sys.stdin.readline, ""):
        case_dir = line.rstrip("\n")
        out = answer(case_dir)
        b = behaviour(case_dir)
        case = "another" if b == "wrong-case" else case_dir
        stderr = PANIC if b == "stderr-panic" else ""
        print(json.dumps({"case": case, "stderr": stderr, **out}), flush=True)
        after(case_dir)
elif len(sys.argv) == 2:
    case_dir = sys.argv[1]
    out = answer(case_dir)
    if behaviour(case_dir) == "stderr-panic":
        sys.stderr.write(PANIC)
    print(json.dumps(out), flush=True)
    after(case_dir)
else:
    sys.exit("usage: driver.py CASE_DIR")
"#;

/// (behaviour, the grade single mode gives it on a must-read case).
const MISBEHAVING: [(&str, Grade); 7] = [
    ("traceback", Grade::Crash),
    ("late-traceback", Grade::Crash),
    ("killed-after-answer", Grade::Crash),
    ("stderr-panic", Grade::Crash),
    ("stray-line", Grade::Error),
    ("hang-in-batch", Grade::Pass),
    ("wrong-case", Grade::Pass),
];

fn copy_case(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        // fs::copy follows the corpus symlinks
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

fn grade(root: &Path, command: String) -> (GradeReport, DriverStats) {
    let stats = DriverStats::default();
    let reader = ReaderSpec {
        name: "oracle".into(),
        command,
    };
    let report = grade_all(
        root,
        &[reader],
        None,
        Duration::from_secs(3),
        2,
        false,
        &stats,
    )
    .unwrap();
    (report, stats)
}

#[test]
fn batch_mode_grades_every_case_as_single_mode_does() {
    // 40 cases of every class, the misbehaving ones must-read, the last one among them.
    // (not the golden corpus cases: their case.json points into ../corpus)
    let all: Vec<_> = load_all(&suite_root())
        .unwrap()
        .into_iter()
        .filter(|(_, c)| c.corpus.is_none())
        .collect();
    let mut picked: Vec<_> = Class::ALL
        .iter()
        .flat_map(|&class| all.iter().filter(move |(_, c)| c.class == class).take(11))
        .collect();
    let must_read: Vec<_> = all
        .iter()
        .filter(|(_, c)| c.class == Class::MustRead)
        .skip(11)
        .take(MISBEHAVING.len())
        .collect();
    picked.extend(&must_read);
    let tmp = tempfile::tempdir().unwrap();
    let cases = tmp.path().join("cases");
    for (dir, case) in &picked {
        copy_case(dir, &cases.join(&case.name));
    }
    // cases are graded in name order (y_ last): the late traceback goes to the very last case
    let mut misbehaving = Vec::new();
    for (i, (b, g)) in MISBEHAVING.iter().enumerate() {
        let name = &must_read[(i + MISBEHAVING.len() - 1) % MISBEHAVING.len()]
            .1
            .name;
        std::fs::write(cases.join(name).join("behaviour"), b).unwrap();
        misbehaving.push((name.clone(), *b, *g));
    }
    let driver = tmp.path().join("driver.py");
    std::fs::write(&driver, DRIVER).unwrap();

    let (batch, batch_stats) = grade(tmp.path(), format!("python3 {}", driver.display()));
    // the same driver without batch mode: it refuses a run without CASE_DIR
    let (single, single_stats) = grade(
        tmp.path(),
        format!("MMKV_SUITE_BATCH=0 python3 {}", driver.display()),
    );
    let n = picked.len();
    assert_eq!(single.cases.len(), n);
    assert_eq!(single_stats.alone.load(Ordering::Relaxed), n);
    for (b, s) in batch.cases.iter().zip(&single.cases) {
        let (b, s) = (&b.results["oracle"], &s.results["oracle"]);
        assert_eq!(
            (b.grade, &b.detail),
            (s.grade, &s.detail),
            "batch and single mode differ"
        );
    }
    for (name, behaviour, want) in &misbehaving {
        let row = batch.cases.iter().find(|c| &c.name == name).unwrap();
        assert_eq!(row.results["oracle"].grade, *want, "{name}: {behaviour}");
    }
    let passed = |r: &GradeReport| r.readers[0].counts["pass"];
    assert_eq!(passed(&batch), n - 5, "{}", batch.table());
    assert_eq!(batch.table(), single.table());
    // batch mode did save processes: most answers came from batch processes
    let processes = batch_stats.processes.load(Ordering::Relaxed);
    let alone = batch_stats.alone.load(Ordering::Relaxed);
    assert!(alone <= 2 * MISBEHAVING.len(), "{alone} cases run alone");
    assert!(processes < n / 2, "{processes} processes for {n} cases");
}
