//! A report that would run nothing has not passed: `conformance report` refuses `--cases 0`,
//! `--fault-states 0` and an `--only` that matches no tag with exit status 2 (a usage error,
//! README "Conformance") and says why, before any workload runs.

use std::process::Command;

#[test]
fn a_report_that_would_run_nothing_is_a_usage_error() {
    let refusals: [(&[&str], &str); 3] = [
        (&["--cases", "0"], "--cases 0"),
        (&["--fault-states", "0"], "--fault-states 0"),
        (&["--only", "v0.0.1"], "matches no tag"),
    ];
    for (args, says) in refusals {
        let out = Command::new(env!("CARGO_BIN_EXE_conformance"))
            .arg("report")
            .args(args)
            .env_remove("CONFORMANCE_CASES")
            .env_remove("CONFORMANCE_FAULT_STATES")
            .output()
            .expect("run the conformance binary");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "report {args:?}: {stderr}");
        assert!(stderr.contains(says), "report {args:?}: {stderr}");
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("PASS"),
            "report {args:?} claimed a pass"
        );
    }
}
