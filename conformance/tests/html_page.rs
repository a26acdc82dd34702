//! The report's web page (`report --html`) and its one-document JSON (`report --json`), on a
//! report fixture with a FAIL cell, an unbuilt row whose reason and a failure whose key are
//! HTML/JS injections, and a grade file whose reader and case names are too. The browser half
//! of the check (the DOM after scripts ran, clicks, network, console, screenshot) is
//! tests/browser/check_page.py, run by .ci/run.

use std::path::{Path, PathBuf};
use std::process::Command;

use conformance::html::grades::Grades;
use conformance::html::speed::Speed;
use conformance::html::{render, write_site, Inputs};
use conformance::report::Report;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/html")
        .join(name)
}

fn report() -> Report {
    serde_json::from_str(&std::fs::read_to_string(fixture("report-fail.json")).unwrap()).unwrap()
}

fn inputs() -> Inputs {
    Inputs {
        grades: Some(Grades::load(&fixture("grades.json")).unwrap()),
        ..Inputs::default()
    }
}

/// The page's `<section id="ID">`, to its end.
fn section<'a>(page: &'a str, id: &str) -> &'a str {
    let start = format!("<section id=\"{id}\">");
    let from = page
        .split(&start)
        .nth(1)
        .unwrap_or_else(|| panic!("no {start}"));
    from.split("</section>").next().unwrap()
}

const INJECTIONS: &[&str] = &[
    "<img src=x onerror=",
    "<script>document.title='pwned'</script>",
];

#[test]
fn store_derived_text_is_escaped() {
    let page = render(&report(), &inputs()).unwrap();
    for raw in INJECTIONS {
        assert!(!page.contains(raw), "{raw} printed unescaped");
    }
    assert!(page.contains("&#60;img src=x onerror=") || page.contains("&lt;img src=x onerror="));
    // the page's own script and nothing else
    assert_eq!(page.matches("<script").count(), 1);
    assert!(!page.contains("<img"));
}

#[test]
fn matrix_has_a_row_per_tag_and_the_failing_cell_its_replay_command() {
    let report = report();
    let page = render(&report, &inputs()).unwrap();
    let body = page.split("<tbody>").nth(1).unwrap();
    let body = body.split("</tbody>").next().unwrap();
    assert_eq!(body.matches("<tr ").count(), report.versions.len());
    assert_eq!(
        body.matches("<td class=\"cell ").count(),
        report.versions.len() * conformance::StoreKind::ALL.len()
    );
    // the FAIL cell links to its detail, which holds the replay command
    assert!(
        body.contains("<td class=\"cell fail\" data-kind=\"aes256\"><a href=\"#c-v2.4.2-aes256\"")
    );
    let detail = page
        .split("<section id=\"c-v2.4.2-aes256\"")
        .nth(1)
        .unwrap()
        .split("</section>")
        .next()
        .unwrap();
    assert!(detail.contains(
        "<code class=\"replay\">cargo run -p conformance -- replay target/conformance-failures/v2.4.2-aes256-0</code>"
    ));
    assert!(detail.contains("Saved failure folder"));
    assert!(detail.contains("live writer v2.4.2"));
    // readers, faults, accepted differences (with this run's uses)
    assert!(page.contains("2 case(s) not passed"));
    assert!(page.contains("discard/store exception:zero-fill"));
    assert!(page.contains("<td class=\"num\">12</td>"));
    // the power-loss suite: its verdicts per version, in the same table shape
    let powerloss = section(&page, "powerloss");
    assert!(powerloss.contains("40 power-loss state(s) judged, 0 disagreeing"));
    assert!(powerloss.contains("<th scope=\"row\">v2.4.2</th><td class=\"num\">40</td><td class=\"num\">37</td><td class=\"num\">3</td>"));
    // the disk-error suite: the same table, its disagreement and upstream finding (whose
    // store-derived text is escaped, `store_derived_text_is_escaped`)
    let diskerr = section(&page, "diskerr");
    assert!(page.contains("<a href=\"#diskerr\">Disk errors</a>"));
    assert!(diskerr.contains("<span class=\"v fail\">FAIL</span> 24 disk-error state(s) judged, 1 disagreeing, 1 upstream finding(s)"), "{diskerr}");
    assert!(diskerr.contains("<th scope=\"row\">v2.4.2</th><td class=\"num\">24</td><td class=\"num\">21</td><td class=\"num\">1</td><td class=\"num\">2</td>"), "{diskerr}");
    assert!(
        diskerr.contains("DISAGREEMENT: #7 v2.4.2 plain seed 9"),
        "{diskerr}"
    );
    assert!(
        diskerr.contains("upstream finding: #11 v2.4.2 plain writer crashed"),
        "{diskerr}"
    );
    assert!(
        diskerr.contains("onerror=alert(7)") && !diskerr.contains("<img"),
        "{diskerr}"
    );
    // one table of accepted differences, the fault suite's rows with their uses too
    let row = |code: &str| {
        let at = page.find(&format!("<code>{code}</code>")).unwrap();
        page[at..].split("</tr>").next().unwrap().to_string()
    };
    assert!(row("zero-fill").contains("<td class=\"num\">5</td>"));
    assert!(row("default-for-absent-scalar").contains("<td class=\"num\">12</td>"));
    assert!(row("crypt-overlong-length").contains("<td class=\"num\">0</td>"));
    // without grades the section says so
    let bare = render(&report, &Inputs::default()).unwrap();
    assert!(bare.contains("Not graded in this run"));
}

#[test]
fn csp_hashes_match_the_inline_style_and_script() {
    use base64::Engine as _;
    use sha2::Digest as _;
    let page = render(&report(), &inputs()).unwrap();
    let between = |open: &str, close: &str| -> String {
        let start = page.find(open).unwrap() + open.len();
        let end = start + page[start..].find(close).unwrap();
        page[start..end].to_string()
    };
    let hash = |t: &str| {
        base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(t.as_bytes()))
    };
    let csp = between("http-equiv=\"Content-Security-Policy\" content=\"", "\"");
    assert!(csp.starts_with("default-src &#39;none&#39;") || csp.starts_with("default-src 'none'"));
    assert!(csp.contains(&hash(&between("<style>", "</style>"))));
    assert!(csp.contains(&hash(&between("<script>", "</script>"))));
}

#[test]
fn speed_from_criterion_and_from_the_checked_in_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let s = Speed::from_criterion(&root.join("benches/tests/fixtures/criterion")).unwrap();
    assert!(!s.ops.is_empty());
    assert!(s.ops.iter().all(|o| o.row.reader.is_some()));
    assert!(
        Speed::from_criterion(&root.join("corpus")).is_err(),
        "no estimate there"
    );
    let checked_in = Speed::checked_in(root).unwrap();
    assert!(checked_in.ops.iter().any(|o| o.row.label == "get_i32"));
    let page = render(
        &report(),
        &Inputs {
            speed: Some(s),
            ..Inputs::default()
        },
    )
    .unwrap();
    assert!(page.contains("<svg class=\"chart\""));
    assert!(page.contains("official MULTI_PROCESS"));
}

#[test]
fn site_is_written_and_merge_json_is_one_document() {
    let dir = tempfile::tempdir().unwrap();
    let index = write_site(dir.path(), &report(), &inputs()).unwrap();
    assert!(index.ends_with("index.html"));
    let back: Report =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(back.versions.len(), report().versions.len());

    // `merge ... --json --html DIR` (CI's sharded run): stdout is exactly one JSON document
    // (the lines that used to follow it go to stderr), and the page is written
    let site = dir.path().join("site");
    let out = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .arg("merge")
        .arg(fixture("report-fail.json"))
        .arg(fixture("report-fail.json"))
        .arg("--json")
        .arg("--html")
        .arg(&site)
        .arg("--grades")
        .arg(fixture("grades.json"))
        .arg("--markdown")
        .arg(dir.path().join("table.md"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "the fixture has a FAIL cell");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document: {e}"));
    assert_eq!(doc["versions"][4]["kinds"]["aes256"], "FAIL");
    // two shards' uses are summed
    assert_eq!(doc["exceptions_used"]["default-for-absent-scalar"], 24);
    assert_eq!(
        doc["faults"]["verdicts_per_version"]["v2.4.2"]["discard/store exception:zero-fill"],
        6
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("conformance report: FAIL"), "{stderr}");
    assert!(site.join("index.html").is_file());

    // `report --merge` (the alias) with `--json FILE`: the document in the file, the table on
    // stdout
    let file = dir.path().join("report.json");
    let out = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args(["report", "--merge"])
        .arg(fixture("report-fail.json"))
        .arg("--json")
        .arg(&file)
        .arg("--markdown")
        .arg(dir.path().join("table.md"))
        .output()
        .unwrap();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(doc["versions"].as_array().unwrap().len(), 5);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("tag"));
}

/// The readers section reads what `suite grade --json` writes: a grade report built from the
/// suite's own types, serialized, loads and renders (a change of either side fails here).
#[test]
fn grades_from_the_suite_grade_json() {
    use std::collections::BTreeMap;

    use conformance::suite::case::{Class, Era};
    use conformance::suite::grade::{CaseRow, Grade, GradeReport, ReaderRow, Result1};

    let results = |grade: Grade, detail: &str| -> BTreeMap<String, Result1> {
        [(
            "other<b>".to_string(),
            Result1 {
                grade,
                detail: detail.to_string(),
            },
        )]
        .into_iter()
        .collect()
    };
    let report = GradeReport {
        schema: 1,
        grades: Grade::ALL.iter().map(|g| g.name()).collect(),
        eras: vec!["v1.x", "v2.0-v2.3", "v2.4"],
        readers: vec![ReaderRow {
            name: "other<b>".to_string(),
            command: "python3 drivers/other.py".to_string(),
            counts: [("pass", 1), ("missing_key", 1)].into_iter().collect(),
            by_class: [("must_read", [1, 2])].into_iter().collect(),
            by_era: [("v2.4", [1, 2])].into_iter().collect(),
        }],
        cases: vec![
            CaseRow {
                name: "y_v2.4.2_plain".to_string(),
                class: Class::MustRead,
                writer: "v2.4.2".to_string(),
                era: Era::V24,
                what: "a plain store".to_string(),
                results: results(Grade::Pass, ""),
            },
            CaseRow {
                name: "y_v2.4.2_removed".to_string(),
                class: Class::MustRead,
                writer: "v2.4.2".to_string(),
                era: Era::V24,
                what: "removed keys".to_string(),
                results: results(Grade::MissingKey, "missing keys 6b30"),
            },
        ],
        seconds: 1.5,
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("grades.json");
    std::fs::write(&file, serde_json::to_string(&report).unwrap()).unwrap();
    let grades = Grades::load(&file).unwrap();
    assert_eq!(grades.readers.len(), 1);
    assert_eq!(grades.cases.len(), 2);
    let page = render(
        &self::report(),
        &Inputs {
            grades: Some(grades),
            ..Inputs::default()
        },
    )
    .unwrap();
    assert!(
        page.contains("other&#60;b&#62;: 1 case(s) not passed")
            || page.contains("other&lt;b&gt;: 1 case(s) not passed")
    );
    assert!(page.contains("<code>y_v2.4.2_removed</code>"));
    assert!(page.contains("missing keys 6b30"));
}

/// The page's coverage section (`report --html DIR --coverage FILE`): per version and file
/// the line, branch and function figures and the functions never executed, upstream text
/// (file and function names) escaped; without a coverage file the section says it was not
/// measured.
mod coverage_section {
    use super::{fixture, report};
    use conformance::html::coverage::CoverageView;
    use conformance::html::{render, Inputs};

    /// The coverage section of a page.
    fn section(page: &str) -> &str {
        let start = page
            .find("<section id=\"coverage\">")
            .expect("a coverage section");
        let rest = &page[start..];
        &rest[..rest.find("</section>").unwrap()]
    }

    #[test]
    fn the_section_shows_each_file_and_the_unreached_functions_escaped() {
        let coverage = CoverageView::load(&fixture("coverage-summary.json")).unwrap();
        let page = render(
            &report(),
            &Inputs {
                coverage: Some(coverage),
                ..Inputs::default()
            },
        )
        .unwrap();
        let s = section(&page);
        assert!(s.contains("<h3>v2.4.2</h3>"), "{s}");
        assert!(
            s.contains(
                "Lines 72.7% (3392/4667), branches 43.5% (2022/4647), functions 78.9% (363/460)"
            ),
            "{s}"
        );
        assert!(s.contains("<td><code>MMKV.cpp</code></td><td class=\"num\">90.0% (900/1000)</td>"));
        assert!(s.contains("fault suite: 120 damaged states"));
        assert!(s.contains("v2.4.2: 2 function(s) never executed"));
        assert!(s.contains("<code>MMKV.cpp:20</code></td><td><code>mmkv::MMKV::lock()</code>"));
        // Upstream names are text.
        assert!(!page.contains("<img"));
        assert_eq!(page.matches("<script").count(), 1);
        assert!(
            s.contains("&#60;script&#62;") || s.contains("&lt;script&gt;"),
            "{s}"
        );
    }

    #[test]
    fn without_a_coverage_file_the_section_says_not_measured() {
        let page = render(&report(), &Inputs::default()).unwrap();
        assert!(section(&page).contains("Not measured in this run"));
    }

    #[test]
    fn a_bad_coverage_file_fails_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("c.json");
        std::fs::write(
            &file,
            r#"{"schema": "other/1", "paths": [], "versions": []}"#,
        )
        .unwrap();
        let e = Inputs::load(None, None, Some(&file)).unwrap_err();
        assert!(e.to_string().contains("schema"), "{e}");
        assert!(Inputs::load(None, None, Some(&dir.path().join("none.json"))).is_err());
    }
}
