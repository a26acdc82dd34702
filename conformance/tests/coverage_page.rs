//! The page's coverage section (`report --html DIR --coverage FILE`): per version and file
//! the line, branch and function figures and the functions never executed, upstream text
//! (file and function names) escaped; without a coverage file the section says it was not
//! measured.

use std::path::{Path, PathBuf};

use conformance::html::coverage::CoverageView;
use conformance::html::{render, Inputs};
use conformance::report::Report;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/html")
        .join(name)
}

fn report() -> Report {
    serde_json::from_str(&std::fs::read_to_string(fixture("report-fail.json")).unwrap()).unwrap()
}

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
