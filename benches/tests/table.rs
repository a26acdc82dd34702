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
    assert_eq!(r.reloads.len(), 2);
    assert_eq!(r.reloads[0].by_append, vec![Some(2000.0), Some(300_000.0)]);
    assert_eq!(r.reloads[1].by_append, vec![Some(1900.0), None]);
    let m = r.memory.as_ref().unwrap();
    assert_eq!(m.data_bytes, 67_108_864);
    assert_eq!(r.fixtures["gets"].keys, 1000);
    assert_eq!(r.estimates_found(), 15 + 2 + 3);

    let t = r.targets();
    let met: Vec<Option<bool>> = t.iter().map(|t| t.met()).collect();
    // 8× ≥ 5 yes; 250× ≥ 100 yes; 1.25 ≤ 1.3 yes; 11/10 = 1.1 ≤ 1.1 yes; 3× ≥ 1.5 yes.
    assert_eq!(met, vec![Some(true); 5]);
    assert!(close(t[3].value, 1.1));

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
    };
    let s = render(&r, &m, "2026-01-02 03:04 UTC", Some("shared machine"));
    assert!(s.starts_with("Measured 2026-01-02 03:04 UTC on Fixture CPU (2 cores), official MMKV v9.9.9, criterion median per call; shared machine."));
    assert!(s.contains("| op | official single (ns) | official multi (ns) | reader (ns) | floor (ns) | speedup vs single | speedup vs multi | reader / floor |"));
    assert!(
        s.contains("| get_i32 | 80.0 | 2,500 | 10.0 | 8.0 | 8.00× | 250× | 1.25 |"),
        "{s}"
    );
    assert!(
        s.contains("| get_string (38 B) | 120 | 2,600 | 30.0 | 25.0 | 4.00× | 86.7× | 1.20 |"),
        "{s}"
    );
    assert!(
        s.contains("| get_bytes 4 KB copy | 400 | 3,000 | 200 | 190 | 2.00× | 15.0× | 1.05 |"),
        "{s}"
    );
    assert!(
        s.contains("| get_bytes 4 KB zero-copy | 400 | 3,000 | 11.0 | — | 36.4× | 273× | — |"),
        "{s}"
    );
    assert!(
        s.contains("| open + first access | 90.0 | 30.0 | 3.00× |"),
        "{s}"
    );
    assert!(s.contains("| 100,000 keys × 650 B | 2.00 | 300.0 |"), "{s}");
    assert!(s.contains("| 1,000 keys × 100 B | 1.90 | — |"), "{s}");
    assert!(
        s.contains("| 64.0 MiB | 66.8 MiB | 1.04 | 133.5 MiB | 65.8 MiB | 76.3 MiB |"),
        "{s}"
    );
    assert!(
        s.contains("| reader get_i32 / floor | 1.25 | ≤ 1.3 | yes |"),
        "{s}"
    );
    assert!(
        s.contains("\nNotes:\n\n- reload: 3 full reloads after writer compaction were not timed\n")
    );
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
