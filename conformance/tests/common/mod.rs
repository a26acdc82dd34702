//! What the tests that run this build's `conformance` binary share (`mod common;` in each):
//! running it with a deliberately broken reader or the real one (`--break NAME` or not), the
//! text of what it printed, and the versions to run it on. Each test uses some of it.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

use conformance::sides::official::OfficialLib;
use conformance::sides::sys::{built_versions, SysLib};
use conformance::StoreKind;

/// `conformance ARGS` run by this build (the suites' own `*_STATES` overrides removed, so
/// that the test's `--states` counts), saving failures under `failures` when given.
pub fn conformance_in(args: &[&str], failures: Option<&Path>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_conformance"));
    cmd.args(args);
    for var in ["FAULT_STATES", "POWERLOSS_STATES", "DISKERR_STATES"] {
        cmd.env_remove(var);
    }
    if let Some(dir) = failures {
        cmd.env("CONFORMANCE_FAILURES_DIR", dir);
    }
    cmd.output().expect("run conformance")
}

/// `conformance ARGS` run by this build ([`conformance_in`], failures where it saves them).
pub fn conformance(args: &[&str]) -> Output {
    conformance_in(args, None)
}

/// What it printed: standard output, then standard error.
pub fn text(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `args`, then `--break NAME` when `broken` names a broken reader.
pub fn with_break<'a>(args: &[&'a str], broken: Option<&'a str>) -> Vec<&'a str> {
    let mut all = args.to_vec();
    if let Some(b) = broken {
        all.extend(["--break", b]);
    }
    all
}

/// The newest built version (`None`, said on stderr, when none is built: the tests need one).
pub fn newest() -> Option<String> {
    let tag = built_versions().last().map(|t| t.to_string());
    if tag.is_none() {
        eprintln!("no official version built (MMKV_VERSIONS=none): nothing to compare against");
    }
    tag
}

/// The newest built version with plaintext stores.
pub fn newest_plain() -> &'static str {
    built_versions()
        .iter()
        .rev()
        .find(|t| SysLib::load(t).is_ok_and(|l| StoreKind::Plain.supported_by(&l.features())))
        .expect("a built version")
}
