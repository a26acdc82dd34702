//! The base seed every generated workload, fault state and power-loss state is drawn from:
//! `CONFORMANCE_SEED` (a decimal `u64`), else [`DEFAULT_SEED`]. The same commit then runs the
//! same cases (CI fails only for the change that broke it); another seed draws other cases.
//! The property tests draw one stream per label with [`derive`], so adding one leaves the
//! others' cases as they were; the fault and power-loss suites take the base seed and split it
//! per writer run themselves (`SplitMix::stream`).
//!
//! Outside the seed: the instant a timed kill (`Kill::During`) lands, and the official IV of
//! the real-clock cells (Core takes it from `time()`); the verdicts they lead to are still
//! judged, but their bytes differ between runs. A run shows what it drew as a plan digest
//! ([`crate::vocab::digest`]; the report's: `crate::report::digest`).

use std::sync::OnceLock;

use crate::vocab::rng::SplitMix;

/// The variable that sets the base seed of every suite.
pub const SEED_VAR: &str = "CONFORMANCE_SEED";

/// The base seed when [`SEED_VAR`] is unset.
pub const DEFAULT_SEED: u64 = 1;

/// The base seed in `value` (the text of [`SEED_VAR`]; `None` when unset).
pub fn parse(value: Option<&str>) -> Result<u64, String> {
    match value {
        None => Ok(DEFAULT_SEED),
        Some(v) => v
            .trim()
            .parse()
            .map_err(|_| format!("{SEED_VAR}={v:?} is not a seed (a decimal number below 2^64)")),
    }
}

/// The base seed of this process.
///
/// Panics when [`SEED_VAR`] is set but is no seed: a run must not silently draw other cases
/// than it was asked for (the CLI reads the variable through clap, which refuses it first).
pub fn base() -> u64 {
    static BASE: OnceLock<u64> = OnceLock::new();
    *BASE.get_or_init(|| {
        parse(std::env::var(SEED_VAR).ok().as_deref()).unwrap_or_else(|e| panic!("{e}"))
    })
}

/// Prints the base seed on stderr, once per process (a test binary, the report; child
/// processes never call it): `conformance seed: N (CONFORMANCE_SEED)` or `(default)`.
pub fn announce() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let from = match std::env::var_os(SEED_VAR) {
            Some(_) => SEED_VAR,
            None => "default",
        };
        eprintln!("conformance seed: {} ({from})", base());
    });
}

/// The seed of the stream named `label` (a test, a suite, a version and kind) under `base`.
pub fn derive_from(base: u64, label: &str) -> u64 {
    // FNV-1a of the label, mixed with the base through SplitMix.
    let hash = label.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    SplitMix::stream(base, hash).next_u64()
}

/// The seed of the stream named `label` under this process's [`base`] seed.
pub fn derive(label: &str) -> u64 {
    derive_from(base(), label)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_is_the_default_and_bad_values_are_refused() {
        assert_eq!(parse(None), Ok(DEFAULT_SEED));
        assert_eq!(parse(Some(" 42 ")), Ok(42));
        assert!(parse(Some("0x10")).is_err());
        assert!(parse(Some("")).is_err());
        assert!(parse(Some("-1")).is_err());
    }

    #[test]
    fn the_same_seed_draws_the_same_workloads() {
        use crate::differential::property::draw_workloads;
        use crate::differential::workload::GenConfig;
        use crate::vocab::kind::{Features, StoreKind};

        let features = Features::from_tag("v2.4.2").unwrap();
        let draw = |label: &str, base: u64| {
            let seed = derive_from(base, label);
            draw_workloads(StoreKind::Aes128, features, GenConfig::default(), seed, 8)
        };
        let a = draw("differential v2.4.2 aes128", 1);
        assert_eq!(a.len(), 8);
        assert_eq!(a, draw("differential v2.4.2 aes128", 1));
        assert_ne!(
            a,
            draw("differential v2.4.2 aes128", 2),
            "another base seed"
        );
        assert_ne!(a, draw("differential v2.4.1 aes128", 1), "another label");
    }

    #[test]
    fn labels_and_bases_draw_apart() {
        let a = derive_from(1, "differential v2.4.2 plain");
        assert_eq!(a, derive_from(1, "differential v2.4.2 plain"));
        assert_ne!(a, derive_from(2, "differential v2.4.2 plain"));
        assert_ne!(a, derive_from(1, "differential v2.4.2 aes128"));
    }
}
