//! The harness catches a broken reader: deliberately wrong reader adapters are injected into
//! the same property runs and golden checks, which must fail, shrink to a minimal workload and
//! save a repro folder.
//!
//! Breakages (the reader crate itself is not modified):
//! - `I32ViaU32`: `getInt32` decoded as an unsigned 32-bit varint and range-checked into i32
//!   (negative values are lost);
//! - `IgnoreExpiry`: a clock stuck at 1 s after the epoch, so expired keys stay visible
//!   (checked with already-expired keys from wrapped durations, and with a 1-second duration
//!   and a real sleep);
//! - `ClockFarAhead`: a clock at `u32::MAX`, so every key with an expire time is gone.

use std::path::Path;
use std::sync::Arc;

use conformance::golden::{check_corpus_dir, corpus_root};
use conformance::official::OfficialLib;
use conformance::prop::{check_property, PropConfig, PropOutcome};
use conformance::run::load_repro;
use conformance::sys::{built_versions, SysLib};
use conformance::workload::{GenConfig, Op, Workload, PAST_EXPIRE, SHORT_EXPIRE};
use conformance::{ReaderFactory, ReaderView, RealReader, StoreKind, Value, ValueType};
use mmkv_reader::FixedClock;

/// Decodes `getInt32` through the u32 getter (a classic sign bug).
struct I32ViaU32(RealReader);

struct I32ViaU32View(Box<dyn ReaderView>);

impl ReaderFactory for I32ViaU32 {
    fn name(&self) -> String {
        "broken: i32 via u32".into()
    }

    fn open(
        &self,
        path: &Path,
        key: Option<&[u8]>,
        aes256: bool,
    ) -> Result<Box<dyn ReaderView>, String> {
        Ok(Box::new(I32ViaU32View(self.0.open(path, key, aes256)?)))
    }
}

impl ReaderView for I32ViaU32View {
    fn read(&self, key: &[u8], ty: ValueType) -> Option<Value> {
        if ty == ValueType::I32 {
            return match self.0.read(key, ValueType::U32)? {
                Value::U32(u) => i32::try_from(u).ok().map(Value::I32),
                _ => None,
            };
        }
        self.0.read(key, ty)
    }
    fn contains(&self, key: &[u8]) -> bool {
        self.0.contains(key)
    }
    fn keys(&self) -> Vec<Vec<u8>> {
        self.0.keys()
    }
    fn count(&self) -> usize {
        self.0.count()
    }
    fn expire_at(&self, key: &[u8]) -> Option<u32> {
        self.0.expire_at(key)
    }
}

/// The oldest built version with `kind` (its `u32` expire sums wrap, so [`PAST_EXPIRE`] is
/// already expired; newer versions saturate them).
fn oldest_with(kind: StoreKind) -> SysLib {
    let tag = built_versions()
        .iter()
        .find(|t| {
            SysLib::load(t)
                .map(|l| kind.supported_by(&l.features()))
                .unwrap_or(false)
        })
        .unwrap_or_else(|| panic!("no built version supports {kind}"));
    SysLib::load(tag).expect("load")
}

fn newest_with(kind: StoreKind) -> SysLib {
    let tag = built_versions()
        .iter()
        .rev()
        .find(|t| {
            SysLib::load(t)
                .map(|l| kind.supported_by(&l.features()))
                .unwrap_or(false)
        })
        .unwrap_or_else(|| panic!("no built version supports {kind}"));
    SysLib::load(tag).expect("load")
}

/// Runs the property with a broken reader; returns the minimal workload after checking that
/// the failure was saved with everything a repro needs.
fn expect_failure(
    lib: &SysLib,
    kind: StoreKind,
    reader: &dyn ReaderFactory,
    gen: GenConfig,
    cases: u32,
    max_shrink_iters: u32,
) -> Workload {
    let out = tempfile::tempdir().expect("tempdir");
    let cfg = PropConfig {
        cases,
        seed: Some(7),
        gen,
        max_shrink_iters,
        source_file: None,
        save_failures: true,
        failures_dir: out.path().to_path_buf(),
        running: None,
    };
    match check_property(lib, kind, reader, &cfg) {
        PropOutcome::Pass { .. } => panic!("{} was not caught on {}", reader.name(), lib.tag()),
        PropOutcome::Fail {
            minimal,
            message,
            saved,
            repro_line,
        } => {
            eprintln!(
                "{}: caught; minimal workload ({} ops): {:?}\n  {message}\n  {repro_line}",
                reader.name(),
                minimal.ops.len(),
                minimal.ops
            );
            let saved = saved.expect("failure folder saved");
            assert!(repro_line.contains("replay"), "{repro_line}");
            assert!(repro_line.contains(&saved.display().to_string()));
            for f in [
                "workload.yaml",
                "diff.txt",
                kind.id(),
                &format!("{}.crc", kind.id()),
            ] {
                assert!(
                    saved.join(f).is_file(),
                    "{f} missing in {}",
                    saved.display()
                );
            }
            let repro = load_repro(&saved).expect("saved workload parses");
            assert_eq!(repro.workload, minimal);
            assert_eq!(repro.kind, kind);
            let diff = std::fs::read_to_string(saved.join("diff.txt")).unwrap();
            assert!(!diff.trim().is_empty(), "diff.txt is empty");
            minimal
        }
    }
}

fn sets(ops: &[Op]) -> Vec<&Op> {
    ops.iter()
        .filter(|op| matches!(op, Op::Set { .. }))
        .collect()
}

#[test]
fn i32_decoded_as_u32_is_caught_and_shrunk() {
    let lib = newest_with(StoreKind::Plain);
    let ops = expect_failure(
        &lib,
        StoreKind::Plain,
        &I32ViaU32(RealReader::new()),
        GenConfig {
            max_ops: 12,
            ..GenConfig::default()
        },
        64,
        256,
    )
    .ops;
    // Minimal: one set whose payload reads as a negative i32 (any type may produce it).
    assert_eq!(ops.len(), 1, "not minimal: {ops:?}");
    assert_eq!(sets(&ops).len(), 1);
}

#[test]
fn clock_far_ahead_is_caught_and_shrunk() {
    let lib = newest_with(StoreKind::Expire);
    let reader = RealReader::with_clock(Arc::new(FixedClock(u32::MAX)));
    let gen = GenConfig {
        max_ops: 12,
        short_expire_weight: 0,
        ..GenConfig::default()
    };
    let w = expect_failure(&lib, StoreKind::Expire, &reader, gen, 64, 256);
    assert_eq!(w.ops.len(), 1, "not minimal: {w:?}");
    assert!(
        matches!(w.ops[0], Op::Set { expire, .. } if expire.unwrap_or(w.default_expire) > 0),
        "expected one expiring set: {w:?}"
    );
}

#[test]
fn ignoring_expiry_is_caught_and_shrunk() {
    // Already-expired keys without sleeping: durations that wrap around to the past.
    let lib = oldest_with(StoreKind::Expire);
    let reader = RealReader::with_clock(Arc::new(FixedClock(1)));
    let gen = GenConfig {
        max_ops: 12,
        short_expire_weight: 0,
        past_expire_weight: 30,
        big_value_weight: 0,
    };
    let ops = expect_failure(&lib, StoreKind::Expire, &reader, gen, 64, 256).ops;
    assert_eq!(ops.len(), 1, "not minimal: {ops:?}");
    assert!(
        matches!(
            ops[0],
            Op::Set {
                expire: Some(PAST_EXPIRE),
                ..
            }
        ),
        "expected one already-expired set: {ops:?}"
    );
}

#[test]
fn ignoring_expiry_is_caught_with_a_real_sleep() {
    // The same breakage through a 1-second duration: each such case sleeps until it has
    // passed, so workloads are tiny and shrinking is bounded.
    let lib = newest_with(StoreKind::Expire);
    let reader = RealReader::with_clock(Arc::new(FixedClock(1)));
    let gen = GenConfig {
        max_ops: 2,
        short_expire_weight: 100,
        past_expire_weight: 0,
        big_value_weight: 0,
    };
    let ops = expect_failure(&lib, StoreKind::Expire, &reader, gen, 8, 12).ops;
    assert!(ops.len() <= 2, "not minimal: {ops:?}");
    assert!(
        ops.iter().any(|op| matches!(
            op,
            Op::Set {
                expire: Some(SHORT_EXPIRE),
                ..
            }
        )),
        "expected a 1-second set: {ops:?}"
    );
}

#[test]
fn golden_check_catches_i32_via_u32() {
    // v2.0.0's corpus has negative i32 values in several stores.
    let check = check_corpus_dir(&corpus_root().join("v2.0.0"), &I32ViaU32(RealReader::new()))
        .expect("corpus loads");
    assert!(!check.passed(), "broken reader passed the golden corpus");
    let good = check_corpus_dir(&corpus_root().join("v2.0.0"), &RealReader::new()).unwrap();
    assert!(good.passed());
}
