//! Saved workloads (`tests/regressions/*.yaml`, the format of `workload.yaml` in a failure
//! folder) replayed on every built version that supports their store kind: the reader must
//! agree with the official library. A failure folder's `workload.yaml` copied here becomes a
//! permanent regression test.
//!
//! `upstream-1351-encrypted-overwrite.yaml` also pins how the harness treats an upstream
//! in-memory bug (Tencent/MMKV#1351, v1.3.3 until v1.3.9): a divergence, not a reader failure.
//! `upstream-1351-rekey-write-back.yaml` pins the same bug's reKey: one key overwritten in
//! place with a large value, whose saved cipher state is wrong, then a reKey to plaintext
//! writes back the misread value, and the library's reload discards its store.
//! `upstream-rekey-after-trim.yaml` pins the unwritten reKey of v1.1.0-v1.2.5 the same way
//! (`upstream-rekey-after-removal-writeback.yaml`: v1.1.x rewrites the store when a removal
//! empties it, so a reKey right after leaves a removal record that no key reads), and
//! `upstream-rekey-same-long-key.yaml` the cipher-stream restart of v1.1.0-v1.1.2, and
//! `upstream-crypt-loader-zero-double.yaml` the encrypted loader of v1.2.0-v1.2.2 dropping a
//! small value. `upstream-is-file-valid-zero-header.yaml` pins the static isFileValid of v2.4.0+
//! calling every store with content invalid, and `file-changing-api.yaml` runs every
//! file-changing call (each must run where the version has it).
//! `upstream-read-only-without-expiry.yaml` pins the read-only instances of v2.3.0+ that cannot
//! enable key expiration, `upstream-read-only-empty-store.yaml` the read-only load of an empty
//! store that crashes v2.0.0-v2.2.4 (skipped), and `name-space.yaml` a store opened through a
//! name space (v2.1.0+). A workload with continuations (`then:`, a migration) is replayed from every
//! built version of its pin's first range into every later built version:
//! `upstream-v1.2.0-writeback-over-v1.1.yaml` pins v1.2.0's full write-back over a v1.1.x file.

use std::path::Path;

use conformance::differential::failures::load_repro;
use conformance::differential::runner::{run_repro, run_workload};
use conformance::sides::official::OfficialLib;
use conformance::sides::sys::{built_versions, SysLib};
use conformance::RealReader;
use mmkv_sys::versions::Tag;

/// A release.
type Release = Tag;

/// `vMAJOR.MINOR.PATCH` in a const table.
const fn v(major: u32, minor: u32, patch: u32) -> Tag {
    Tag {
        major,
        minor,
        patch,
    }
}

/// Saved workloads whose run must stop on an upstream bug (the official library no longer
/// matches its own files) in exactly these versions (inclusive), and pass everywhere else.
const LOST_FILES_PINS: &[(&str, Release, Release)] = &[
    (
        "upstream-1351-encrypted-file-loss.yaml",
        v(1, 3, 3),
        v(1, 3, 8),
    ),
    (
        "upstream-1351-rekey-write-back.yaml",
        v(1, 3, 3),
        v(1, 3, 7),
    ),
    ("upstream-rekey-after-trim.yaml", v(1, 1, 0), v(1, 2, 5)),
    (
        "upstream-rekey-after-removal-writeback.yaml",
        v(1, 1, 0),
        v(1, 1, 2),
    ),
    ("upstream-rekey-same-long-key.yaml", v(1, 1, 0), v(1, 1, 2)),
    (
        "upstream-crypt-loader-zero-double.yaml",
        v(1, 2, 0),
        v(1, 2, 2),
    ),
];

/// An inclusive range of releases.
type Releases = (Release, Release);

/// Saved migration workloads: replayed from every built version in the first range (inclusive)
/// into every later built version; the run must stop on the upstream bug exactly when the
/// continuing version is in the second range, and pass everywhere.
const MIGRATION_PINS: &[(&str, Releases, Releases)] = &[(
    "upstream-v1.2.0-writeback-over-v1.1.yaml",
    (v(1, 1, 0), v(1, 1, 2)),
    (v(1, 2, 0), v(1, 2, 0)),
)];

/// Replays a saved migration workload as its pin says; returns the runs made.
fn replay_migration(file: &Path, failures: &mut Vec<String>) -> usize {
    let repro = load_repro(file).expect("regression parses");
    let (_, from, to) = MIGRATION_PINS
        .iter()
        .find(|p| file.ends_with(p.0))
        .unwrap_or_else(|| panic!("{}: a migration workload needs a pin", file.display()));
    assert_eq!(repro.then.len(), 1, "{}: one continuation", file.display());
    let reader = RealReader::new();
    let tags = built_versions();
    let mut runs = 0;
    for a in tags {
        let va = Tag::parse(a).expect("tag");
        if !(from.0..=from.1).contains(&va) {
            continue;
        }
        let la = SysLib::load(a).expect("load");
        for b in tags {
            let vb = Tag::parse(b).expect("tag");
            if vb <= va {
                continue;
            }
            let lb = SysLib::load(b).expect("load");
            if !repro.kind.supported_by(&la.features()) || !repro.kind.supported_by(&lb.features())
            {
                continue;
            }
            let outcome = run_repro(&[&la, &lb], &repro, &reader).expect("run");
            runs += 1;
            if !outcome.passed() {
                failures.push(format!(
                    "{} on {a} -> {b}:\n{}",
                    file.display(),
                    outcome.diff_text()
                ));
            }
            let affected = (to.0..=to.1).contains(&vb);
            assert_eq!(
                outcome.official_lost_files(),
                affected,
                "{a} -> {b}: {} must stop on its upstream bug exactly when continued by {}..={}: {}",
                file.display(),
                to.0,
                to.1,
                outcome.diff_text()
            );
        }
    }
    runs
}

#[test]
fn saved_workloads_pass_on_every_built_version() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/regressions")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no saved workload in {}", dir.display());
    let reader = RealReader::new();
    let mut failures = Vec::new();
    let mut runs = 0;
    for file in &files {
        let repro = load_repro(file).expect("regression parses");
        if !repro.then.is_empty() {
            runs += replay_migration(file, &mut failures);
            continue;
        }
        for tag in built_versions() {
            let lib = SysLib::load(tag).expect("load");
            if !repro.kind.supported_by(&lib.features()) {
                continue;
            }
            let outcome = run_workload(&lib, repro.kind, &repro.workload, &reader).expect("run");
            runs += 1;
            if !outcome.passed() {
                failures.push(format!(
                    "{} on {tag}:\n{}",
                    file.display(),
                    outcome.diff_text()
                ));
            }
            if let Some((_, first, last)) = LOST_FILES_PINS.iter().find(|p| file.ends_with(p.0)) {
                let v = Tag::parse(tag).expect("tag");
                let affected = (*first..=*last).contains(&v);
                assert_eq!(
                    outcome.official_lost_files(),
                    affected,
                    "{tag}: {} must stop on its upstream bug exactly in {first}..={last}: {}",
                    file.display(),
                    outcome.diff_text()
                );
            }
            let features = lib.features();
            if file.ends_with("upstream-is-file-valid-zero-header.yaml") {
                // Exactly the two checks of a store with content differ, on v2.4.0+ only.
                let got = Tag::parse(tag).expect("tag");
                let affected = got >= v(2, 4, 0);
                let codes: Vec<_> = outcome
                    .divergences
                    .iter()
                    .map(|d| d.exception.difference.code())
                    .collect();
                let want = if affected { 2 } else { 0 };
                assert_eq!(
                    codes,
                    vec!["is-file-valid-zero-header"; want],
                    "{tag}: isFileValid differs only on v2.4.0+: {}",
                    outcome.diff_text()
                );
            }
            if file.ends_with("file-changing-api.yaml") {
                // The calls ran where the version has them (none is silently skipped).
                let skipped = [
                    !features.compare_before_set,
                    !features.backup_restore,
                    !features.backup_restore,
                    !features.import_from,
                    !features.remove_storage,
                ];
                let want = skipped.iter().filter(|s| **s).count() as u64;
                assert_eq!(
                    outcome.stats.unsupported_ops, want,
                    "{tag}: skipped calls: {:?}",
                    outcome.stats
                );
                assert_eq!(
                    outcome.stats.backups_judged,
                    u64::from(features.backup_restore),
                    "{tag}: {:?}",
                    outcome.stats
                );
            }
            let got = Tag::parse(tag).expect("tag");
            let codes: Vec<_> = (outcome.divergences.iter())
                .map(|d| d.exception.difference.code())
                .collect();
            if file.ends_with("upstream-read-only-without-expiry.yaml") {
                // The read-only side differs on v2.3.0+ only, and runs from v2.0.0 (the reopen
                // and the end).
                let affected = got >= v(2, 3, 0);
                assert_eq!(
                    !codes.is_empty(),
                    affected,
                    "{tag}: the read-only instance differs only on v2.3.0+: {}",
                    outcome.diff_text()
                );
                assert!(
                    codes.iter().all(|c| *c == "read-only-without-expiry"),
                    "{codes:?}"
                );
                let checks = if features.read_only { 2 } else { 0 };
                assert_eq!(
                    outcome.stats.read_only_checks, checks,
                    "{tag}: {:?}",
                    outcome.stats
                );
            }
            if file.ends_with("upstream-read-only-empty-store.yaml") {
                // The end (an empty store) is skipped where the read-only load crashes.
                let crashes = (v(2, 0, 0)..v(2, 3, 0)).contains(&got);
                let (checks, skipped) = match (features.read_only, crashes) {
                    (false, _) => (0, 0),
                    (true, true) => (1, 1),
                    (true, false) => (2, 0),
                };
                let stats = &outcome.stats;
                assert_eq!(
                    (stats.read_only_checks, stats.read_only_skipped),
                    (checks, skipped),
                    "{tag}: {stats:?}"
                );
            }
            if file.ends_with("name-space.yaml") {
                // Start, two reopens and the read-only checks' reopens, all through the name
                // space where the version has one.
                let opens = outcome.stats.name_space_opens;
                assert_eq!(opens > 0, features.name_space, "{tag}: {:?}", outcome.stats);
                assert!(
                    outcome.store_dir.ends_with("name-space"),
                    "{:?}",
                    outcome.store_dir
                );
            }
            if file.ends_with("upstream-1351-encrypted-overwrite.yaml") {
                let got = Tag::parse(tag).expect("tag");
                let affected = (v(1, 3, 3)..v(1, 3, 9)).contains(&got);
                assert_eq!(
                    !outcome.divergences.is_empty(),
                    affected,
                    "{tag}: MMKV#1351 divergence expected only in v1.3.3..v1.3.9: {}",
                    outcome.diff_text()
                );
            }
        }
    }
    eprintln!("{} saved workload(s), {runs} run(s)", files.len());
    assert!(
        runs > 0,
        "no saved workload ran on any built version (built: {:?})",
        built_versions()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
