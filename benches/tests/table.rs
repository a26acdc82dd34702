//! The table tool on a fixture criterion directory (tests/fixtures/criterion).

use std::path::{Path, PathBuf};

use benches::table::{
    collect, estimate, render, replace_between, Machine, Stat, TableError, BEGIN_MARKER, END_MARKER,
};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/criterion")
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9 * b.abs().max(1.0))
}

#[test]
fn reads_new_estimates_with_the_chosen_statistic() {
    let d = fixture();
    // The fixture's median is the listed value, its mean twice that; base/ holds 1.0.
    assert_eq!(
        estimate(&d, "get_i32", "reader", Stat::Median).unwrap(),
        Some(10.0)
    );
    assert_eq!(
        estimate(&d, "get_i32", "reader", Stat::Mean).unwrap(),
        Some(20.0)
    );
    assert_eq!(
        estimate(&d, "get_i32", "nonexistent", Stat::Median).unwrap(),
        None
    );
}

#[test]
fn computes_ratios() {
    let r = collect(&fixture(), Stat::Median).unwrap();
    let i32_row = r.get("get_i32").unwrap();
    assert!(close(i32_row.speedup_single(), 8.0));
    assert!(close(i32_row.speedup_multi(), 250.0));
    assert!(close(i32_row.reader_over_floor(), 1.25));
    let zc = r.get("get_bytes_zero_copy").unwrap();
    assert_eq!(zc.floor, None);
    assert_eq!(zc.reader_over_floor(), None);
    assert!(close(zc.speedup_single(), 400.0 / 11.0));
    assert!(close(r.open.speedup(), 3.0));
    assert_eq!(r.scaling.len(), 4);
    assert_eq!(
        r.scaling[0].by_append,
        vec![Some(2000.0), Some(20_000.0), Some(300_000.0)]
    );
    assert_eq!(r.scaling[3].by_append, vec![Some(1900.0), None, None]);
    assert_eq!(r.scaling[0].open, Some(100_000.0));
    assert_eq!(r.scaling[1].open, None);
    assert!(r.scaling[1].size.is_none());
    assert!(close(
        r.scaling[3].size.as_ref().and_then(|z| z.heap_ratio()),
        1.4
    ));
    assert!(close(r.threads.scaling(), 20.0 / 11.0));
    assert!(close(r.threads.floor_scaling(), 2.0 * 5.0 / 6.0));
    let m = r.memory.as_ref().unwrap();
    assert_eq!(m.data_bytes, 67_108_864);
    assert_eq!(r.fixtures["gets"].keys, 1000);
    assert_eq!(r.estimates_found(), 15 + 2 + 6 + 4);

    let t = r.targets();
    let met: Vec<Option<bool>> = t.iter().map(|t| t.met()).collect();
    // i32 1.25 ≤ 1.3, string 1.2 ≤ 1.3 yes; zero-copy has no floor: unmeasured; copy
    // 200/190 ≤ 1.2 yes; 8× ≥ 8, 250× ≥ 50 yes; threads 20/11 ≥ 1.8 yes; open 3× ≥ 1.5 yes;
    // worst heap ratio 1.4 (the 1M-key store) > 1.3: no.
    assert_eq!(
        met,
        vec![
            Some(true),
            Some(true),
            None,
            Some(true),
            Some(true),
            Some(true),
            Some(true),
            Some(true),
            Some(false)
        ]
    );
    assert!(close(t[8].value, 1.4));

    // With the mean (2× every value) the ratios stay, so do the verdicts.
    let mean = collect(&fixture(), Stat::Mean).unwrap();
    assert!(close(mean.get("get_i32").unwrap().reader, 20.0));
    assert!(close(mean.get("get_i32").unwrap().speedup_single(), 8.0));
}

#[test]
fn renders_all_rows() {
    let r = collect(&fixture(), Stat::Median).unwrap();
    let m = Machine {
        cpu: "Fixture CPU".into(),
        cores: 2,
        arch: "amd64".into(),
        load: Some("0.10 0.20 0.30".into()),
    };
    let s = render(&r, &m, "2026-01-02 03:04 UTC", Some("shared machine"));
    assert!(
        s.starts_with("Rendered 2026-01-02 03:04 UTC; official MMKV v9.9.9, criterion median per call; shared machine.\n\n- amd64: Fixture CPU (2 cores), load average 0.10 0.20 0.30 when the reads were measured\n- arm64: not measured yet\n"),
        "{s}"
    );
    assert!(s.contains("| arch | op | official single (ns) | official multi (ns) | reader (ns) | floor (ns) | speedup vs single | speedup vs multi | reader / floor |"));
    for line in [
        "| amd64 | get_i32 | 80.0 | 2,500 | 10.0 | 8.0 | 8.00× | 250× | 1.25 |",
        "| amd64 | get_string (38 B) | 120 | 2,600 | 30.0 | 25.0 | 4.00× | 86.7× | 1.20 |",
        "| amd64 | get_bytes 4 KB copy | 400 | 3,000 | 200 | 190 | 2.00× | 15.0× | 1.05 |",
        "| amd64 | get_bytes 4 KB zero-copy | 400 | 3,000 | 11.0 | — | 36.4× | 273× | — |",
        "| arm64 | get_i32 | not measured | — | — | — | — | — | — |",
        "| amd64 | 10.0 | 11.0 | 1.82× | 5.0 | 6.0 | 1.67× |",
        "| arm64 | not measured | — | — | — | — | — |",
        "| amd64 | open + first access | 90.0 | 30.0 | 3.00× |",
        "| arm64 | open + first access | not measured | — | — |",
        "| amd64 | 1,000 | 107.4 KiB | 0.10 | 118.2 KiB | 1.10 | 2.00 | 20.0 | 300.0 |",
        "| amd64 | 10,000 | — | — | — | — | — | — | — |",
        "| amd64 | 1,000,000 | 104.9 MiB | 100.0 | 146.9 MiB | 1.40 | 1.90 | — | — |",
        "| arm64 | 1,000,000 | not measured | — | — | — | — | — | — |",
        "| amd64 | 64.0 MiB | 66.8 MiB | 1.04 | 133.5 MiB | 65.8 MiB | 76.3 MiB |",
        "| amd64 | reader get_i32 / floor | 1.25 | ≤ 1.3 | yes |",
        "| amd64 | reader heap / data size (worst store) | 1.40 | ≤ 1.3 | **no** |",
        "| amd64 | reader zero-copy 4 KB get_bytes / floor | — | ≤ 1.3 | — |",
        "| arm64 | reader get_i32 / floor | not measured | ≤ 1.3 | — |",
    ] {
        assert!(s.contains(line), "missing {line:?} in\n{s}");
    }
    assert!(s.contains(
        "\nNotes:\n\n- amd64 scaling: 3 full reloads after writer compaction were not timed\n"
    ));
    // Every rendered table row has the header's column count.
    for table in s.split("\n\n").filter(|b| b.starts_with('|')) {
        let cols: Vec<usize> = table.lines().map(|l| l.matches('|').count()).collect();
        assert!(cols.windows(2).all(|w| w[0] == w[1]), "{table}");
    }
}

#[test]
fn missing_directory_gives_empty_report_and_malformed_file_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let r = collect(tmp.path(), Stat::Median).unwrap();
    assert_eq!(r.estimates_found(), 0);
    assert!(r.memory.is_none());
    assert!(r.targets().iter().all(|t| t.met().is_none()));

    let d = tmp.path().join("get_i32/reader/new");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("estimates.json"), "{\"median\": 3}").unwrap();
    match collect(tmp.path(), Stat::Median) {
        Err(TableError::Format { path, .. }) => {
            assert!(path.ends_with("get_i32/reader/new/estimates.json"))
        }
        other => panic!("expected a format error, got {other:?}"),
    }
    std::fs::write(
        d.join("estimates.json"),
        "{\"median\": {\"point_estimate\": 3}}",
    )
    .unwrap();
    std::fs::write(tmp.path().join("memory.json"), "{\"keys\": 1}").unwrap();
    assert!(matches!(
        collect(tmp.path(), Stat::Median),
        Err(TableError::Format { .. })
    ));
}

#[test]
fn replaces_between_markers_only() {
    let doc = format!("# T\n\nintro\n{BEGIN_MARKER}\nold table\n| a |\n{END_MARKER}\n\ntail\n");
    let out = replace_between(&doc, "new\n| b |\n\n").unwrap();
    assert_eq!(
        out,
        format!("# T\n\nintro\n{BEGIN_MARKER}\nnew\n| b |\n{END_MARKER}\n\ntail\n")
    );
    // Idempotent.
    assert_eq!(replace_between(&out, "new\n| b |").unwrap(), out);

    assert!(matches!(
        replace_between("no markers", "x"),
        Err(TableError::Markers(_))
    ));
    assert!(matches!(
        replace_between(&format!("{BEGIN_MARKER} only"), "x"),
        Err(TableError::Markers(_))
    ));
    assert!(matches!(
        replace_between(&format!("{END_MARKER}\n{BEGIN_MARKER}"), "x"),
        Err(TableError::Markers(_))
    ));
    assert!(matches!(
        replace_between(&format!("{BEGIN_MARKER}{BEGIN_MARKER}{END_MARKER}"), "x"),
        Err(TableError::Markers(_))
    ));
}
