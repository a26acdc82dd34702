//! `docs/format.md`, the file-format specification, checked against the suite it cites.
//!
//! The rules (also stated in the document's "Conventions" section):
//! - A section is normative when the line after its heading is `<!-- normative -->`; its
//!   subsections are too, unless the line after a subsection's heading is
//!   `<!-- informative -->`. In a normative section every paragraph, every list item and every
//!   table body row is a statement, and each statement must end with `[cite: NAME, ...]` (a
//!   final `.` may follow; table rows: in their last cell). Fenced blocks and HTML comments are
//!   not statements.
//! - A NAME is a case folder under `suite/cases` or a scenario family. A case is
//!   `<class>_<writer>_<scenario>` (class `y`, `n` or `i`; writer `v` and a release number); its
//!   family is the scenario's leading part up to the first `-` or `_`
//!   (`y_v2.4.2_flipped-meta-crc_grown_plain` is of family `flipped`).
//! - Every family present in `suite/cases` is cited, by its name or by one of its cases.
//! - A hex example is a fenced block directly preceded by the line
//!   `<!-- hex: case=NAME file=FILE offset=N -->` (N decimal). Each line of the block is
//!   `OOOOOOOO  hh hh ...`, optionally followed by two spaces and `# note`: the offset (8 hex
//!   digits) is where the line's 1 to 16 bytes start in FILE of the case, the first line at N,
//!   each next line where the previous one ended. The bytes must equal the file's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One thing wrong with the document, with its 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Problem {
    line: usize,
    what: String,
}

/// What the document may cite: the suite's case folders.
struct Suite {
    cases: PathBuf,
    names: BTreeSet<String>,
}

impl Suite {
    fn open(cases: &Path) -> Suite {
        let names = std::fs::read_dir(cases)
            .unwrap_or_else(|e| panic!("{}: {e}", cases.display()))
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| family(n).is_some())
            .collect();
        Suite {
            cases: cases.to_path_buf(),
            names,
        }
    }

    /// Family -> the cases of it.
    fn families(&self) -> BTreeMap<String, BTreeSet<String>> {
        let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for n in &self.names {
            if let Some(f) = family(n) {
                out.entry(f.to_string()).or_default().insert(n.clone());
            }
        }
        out
    }
}

/// The family of a case name (`None`: not a case name).
fn family(case: &str) -> Option<&str> {
    let mut parts = case.splitn(3, '_');
    let class = parts.next()?;
    let writer = parts.next()?;
    let scenario = parts.next()?;
    let release = writer.strip_prefix('v')?;
    let release_ok = !release.is_empty()
        && release
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    if !matches!(class, "y" | "n" | "i") || !release_ok {
        return None;
    }
    let fam = scenario.split(['-', '_']).next()?;
    (!fam.is_empty()).then_some(fam)
}

/// A statement of a normative section: its first line and text.
#[derive(Debug)]
struct Statement {
    line: usize,
    text: String,
    table_row: bool,
}

/// A hex example: where its bytes are said to come from, and the block's lines.
#[derive(Debug)]
struct HexBlock {
    line: usize,
    case: String,
    file: String,
    offset: u64,
    body: Vec<(usize, String)>,
}

#[derive(Default, Debug)]
struct Parsed {
    statements: Vec<Statement>,
    hex: Vec<HexBlock>,
    problems: Vec<Problem>,
}

fn heading_level(line: &str) -> Option<usize> {
    let n = line.bytes().take_while(|&b| b == b'#').count();
    (n > 0 && line.as_bytes().get(n) == Some(&b' ')).then_some(n)
}

fn is_list_item(line: &str) -> bool {
    let t = line.trim_start();
    if t.starts_with("- ") || t.starts_with("* ") {
        return true;
    }
    let digits = t.bytes().take_while(|b| b.is_ascii_digit()).count();
    digits > 0 && t[digits..].starts_with(". ")
}

/// Splits the document into statements (normative sections only) and hex blocks.
fn parse(doc: &str) -> Parsed {
    let lines: Vec<&str> = doc.lines().collect();
    let mut out = Parsed::default();
    // (level, normative) of the open headings
    let mut stack: Vec<(usize, bool)> = Vec::new();
    let mut normative = false;
    let mut current: Option<Statement> = None;
    let mut pending_hex: Option<HexBlock> = None;
    let flush = |cur: &mut Option<Statement>, out: &mut Parsed, normative: bool| {
        if let Some(s) = cur.take() {
            if normative {
                out.statements.push(s);
            }
        }
    };
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let n = i + 1;
        let trimmed = line.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            flush(&mut current, &mut out, normative);
            let fence = &trimmed[..3];
            let mut body = Vec::new();
            let mut j = i + 1;
            while j < lines.len() && !lines[j].trim().starts_with(fence) {
                body.push((j + 1, lines[j].to_string()));
                j += 1;
            }
            if j == lines.len() {
                out.problems.push(Problem {
                    line: n,
                    what: "fenced block never closed".into(),
                });
            }
            if let Some(mut h) = pending_hex.take() {
                h.body = body;
                out.hex.push(h);
            } else if trimmed.trim_start_matches(fence).trim() == "hex" {
                out.problems.push(Problem {
                    line: n,
                    what: "hex block without a `<!-- hex: ... -->` line directly above it".into(),
                });
            }
            i = j + 1;
            continue;
        }
        if let Some(h) = pending_hex.take() {
            out.problems.push(Problem {
                line: h.line,
                what: "a hex directive must be directly followed by a fenced block".into(),
            });
        }
        if let Some(level) = heading_level(line) {
            flush(&mut current, &mut out, normative);
            while stack.last().is_some_and(|&(l, _)| l >= level) {
                stack.pop();
            }
            let inherited = stack.last().is_some_and(|&(_, norm)| norm);
            let marker = lines.get(i + 1).map(|l| l.trim());
            let norm = match marker {
                Some("<!-- normative -->") => true,
                Some("<!-- informative -->") => false,
                _ => inherited,
            };
            stack.push((level, norm));
            normative = norm;
            i += 1;
            continue;
        }
        if trimmed.starts_with("<!--") {
            flush(&mut current, &mut out, normative);
            if let Some(rest) = trimmed.strip_prefix("<!-- hex:") {
                match parse_hex_directive(rest, n) {
                    Ok(h) => pending_hex = Some(h),
                    Err(p) => out.problems.push(p),
                }
            }
            // skip to the end of the comment
            let mut j = i;
            while j < lines.len() && !lines[j].contains("-->") {
                j += 1;
            }
            i = j + 1;
            continue;
        }
        if trimmed.is_empty() {
            flush(&mut current, &mut out, normative);
            i += 1;
            continue;
        }
        if trimmed.starts_with('|') {
            flush(&mut current, &mut out, normative);
            // a table: header row, delimiter row, body rows
            let mut j = i;
            while j < lines.len() && lines[j].trim().starts_with('|') {
                let row = lines[j].trim();
                let delimiter = row.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '));
                if j >= i + 2 && !delimiter && normative {
                    out.statements.push(Statement {
                        line: j + 1,
                        text: row.to_string(),
                        table_row: true,
                    });
                }
                j += 1;
            }
            i = j;
            continue;
        }
        if is_list_item(line) {
            flush(&mut current, &mut out, normative);
            current = Some(Statement {
                line: n,
                text: trimmed.to_string(),
                table_row: false,
            });
        } else if let Some(s) = current.as_mut() {
            s.text.push(' ');
            s.text.push_str(trimmed);
        } else {
            current = Some(Statement {
                line: n,
                text: trimmed.to_string(),
                table_row: false,
            });
        }
        i += 1;
    }
    flush(&mut current, &mut out, normative);
    if let Some(h) = pending_hex {
        out.problems.push(Problem {
            line: h.line,
            what: "a hex directive must be directly followed by a fenced block".into(),
        });
    }
    out
}

fn parse_hex_directive(rest: &str, line: usize) -> Result<HexBlock, Problem> {
    let bad = |what: &str| Problem {
        line,
        what: format!("hex directive: {what}"),
    };
    let rest = rest
        .trim()
        .strip_suffix("-->")
        .ok_or_else(|| bad("must end with `-->` on its line"))?;
    let mut fields = BTreeMap::new();
    for part in rest.split_whitespace() {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| bad(&format!("`{part}` is not key=value")))?;
        if fields.insert(k, v).is_some() {
            return Err(bad(&format!("`{k}` given twice")));
        }
    }
    let get = |k: &str| {
        fields
            .get(k)
            .map(|v| v.to_string())
            .ok_or_else(|| bad(&format!("no `{k}=`")))
    };
    if fields.len() != 3 {
        return Err(bad("exactly case=, file= and offset= are allowed"));
    }
    let offset = get("offset")?
        .parse::<u64>()
        .map_err(|_| bad("offset is not a decimal number"))?;
    Ok(HexBlock {
        line,
        case: get("case")?,
        file: get("file")?,
        offset,
        body: Vec::new(),
    })
}

/// The citation a statement ends with (table rows: contains), as names.
fn citations(s: &Statement) -> Option<Vec<String>> {
    let text = s.text.trim_end();
    let start = text.rfind("[cite:")?;
    let inner = &text[start + "[cite:".len()..];
    let end = inner.find(']')?;
    let tail = inner[end + 1..].trim();
    if !s.table_row && !matches!(tail, "" | ".") {
        return None;
    }
    if s.table_row && !tail.trim_end_matches('|').trim().is_empty() {
        return None;
    }
    Some(
        inner[..end]
            .split(',')
            .map(|n| n.trim().to_string())
            .collect(),
    )
}

/// Every citation in a text (for coverage), wherever it is.
fn all_citations(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(p) = rest.find("[cite:") {
        rest = &rest[p + "[cite:".len()..];
        if let Some(end) = rest.find(']') {
            out.extend(rest[..end].split(',').map(|n| n.trim().to_string()));
            rest = &rest[end..];
        }
    }
    out
}

/// One hex line: its offset and bytes.
fn hex_line(text: &str) -> Option<(u64, Vec<u8>)> {
    let body = match text.find("  #") {
        Some(p) => &text[..p],
        None => text,
    };
    let (off, bytes) = body.split_once("  ")?;
    if off.len() != 8 || !off.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let offset = u64::from_str_radix(off, 16).ok()?;
    let bytes = bytes.trim_end();
    let mut out = Vec::new();
    for b in bytes.split(' ') {
        if b.len() != 2 || !b.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')) {
            return None;
        }
        out.push(u8::from_str_radix(b, 16).ok()?);
    }
    (!out.is_empty() && out.len() <= 16).then_some((offset, out))
}

fn check_hex(h: &HexBlock, suite: &Suite, problems: &mut Vec<Problem>) {
    let mut fail = |line: usize, what: String| problems.push(Problem { line, what });
    if !suite.names.contains(&h.case) {
        fail(h.line, format!("hex: no case `{}` in suite/cases", h.case));
        return;
    }
    if h.file.is_empty() || h.file.contains('/') || h.file.contains("..") {
        fail(h.line, format!("hex: `{}` is not a file of a case", h.file));
        return;
    }
    let path = suite.cases.join(&h.case).join(&h.file);
    let data = match std::fs::read(&path) {
        Ok(d) => d,
        Err(e) => return fail(h.line, format!("hex: {}: {e}", path.display())),
    };
    if h.body.is_empty() {
        return fail(h.line, "hex: empty block".into());
    }
    let mut expect_off = h.offset;
    for (n, text) in &h.body {
        let Some((off, bytes)) = hex_line(text) else {
            fail(*n, format!("hex: `{text}` is not `OOOOOOOO  hh hh ...`"));
            continue;
        };
        if off != expect_off {
            fail(
                *n,
                format!("hex: line offset {off:#x}, expected {expect_off:#x}"),
            );
        }
        let start = off as usize;
        let end = start + bytes.len();
        match data.get(start..end) {
            Some(real) if real == bytes.as_slice() => {}
            Some(real) => fail(
                *n,
                format!(
                    "hex: bytes differ from {}/{} at {off:#x}: the file has {}",
                    h.case,
                    h.file,
                    real.iter()
                        .map(|b| format!("{b:02x}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
            ),
            None => fail(
                *n,
                format!(
                    "hex: {}/{} has {} bytes, the line reaches {end}",
                    h.case,
                    h.file,
                    data.len()
                ),
            ),
        }
        expect_off = off + bytes.len() as u64;
    }
}

/// Every problem of `doc` against the case folders in `cases`.
fn check(doc: &str, cases: &Path) -> Vec<Problem> {
    let suite = Suite::open(cases);
    let families = suite.families();
    let parsed = parse(doc);
    let mut problems = parsed.problems;
    for s in &parsed.statements {
        match citations(s) {
            None => problems.push(Problem {
                line: s.line,
                what: format!(
                    "normative statement without a final [cite: ...]: {}",
                    s.text.chars().take(80).collect::<String>()
                ),
            }),
            Some(names) => {
                for name in names {
                    if name.is_empty() {
                        problems.push(Problem {
                            line: s.line,
                            what: "empty name in [cite: ...]".into(),
                        });
                    } else if !suite.names.contains(&name) && !families.contains_key(&name) {
                        problems.push(Problem {
                            line: s.line,
                            what: format!("cites `{name}`: neither a case nor a family"),
                        });
                    }
                }
            }
        }
    }
    let cited: BTreeSet<String> = all_citations(doc).into_iter().collect();
    for (fam, cases_of) in &families {
        if !cited.contains(fam) && cases_of.is_disjoint(&cited) {
            problems.push(Problem {
                line: 0,
                what: format!("family `{fam}` of suite/cases is cited nowhere"),
            });
        }
    }
    for h in &parsed.hex {
        check_hex(h, &suite, &mut problems);
    }
    problems
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn the_specification_cites_the_suite() {
    let path = root().join("docs/format.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let problems = check(&doc, &root().join("suite/cases"));
    let listing: Vec<String> = problems
        .iter()
        .map(|p| format!("docs/format.md:{}: {}", p.line, p.what))
        .collect();
    assert!(problems.is_empty(), "{}", listing.join("\n"));
    // it says something: statements and hex examples
    let parsed = parse(&doc);
    assert!(parsed.statements.len() >= 50, "{}", parsed.statements.len());
    assert!(parsed.hex.len() >= 5, "{}", parsed.hex.len());
}

#[test]
fn the_family_rule_is_the_documented_one() {
    let doc = std::fs::read_to_string(root().join("docs/format.md")).unwrap();
    for (case, fam) in [
        ("y_v2.4.2_flipped-meta-crc_grown_plain", "flipped"),
        ("y_v1.1.0_remove_plain", "remove"),
        ("n_v1.3.17_page16k-truncated-data_remove_plain", "page16k"),
        ("i_v1.2.0_corpus-aes128", "corpus"),
    ] {
        assert_eq!(family(case), Some(fam), "{case}");
    }
    assert_eq!(family("x_v1.1.0_remove_plain"), None);
    assert_eq!(family("y_1.1.0_remove_plain"), None);
    assert_eq!(family("y_v1.1.0"), None);
    let flat = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("scenario up to the first `-` or `_`"),
        "the document states the family rule"
    );
}

#[cfg(test)]
mod synthetic {
    use super::*;

    /// A suite of two cases of families `remove` and `grown`, each with a `store` file.
    fn suite() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, data) in [
            (
                "y_v2.4.2_remove_plain",
                &[0u8, 0, 0, 0, 0xaa, 0xbb, 0xcc][..],
            ),
            ("n_v1.1.0_grown_aes128", &[9u8, 8, 7][..]),
        ] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
            std::fs::write(dir.path().join(name).join("store"), data).unwrap();
        }
        dir
    }

    const GOOD: &str = "# Spec\n\nIntro, informative.\n\n## Data\n<!-- normative -->\n\n\
        The header is zero [cite: y_v2.4.2_remove_plain].\n\n\
        - growing files [cite: grown]\n\n\
        | offset | field |\n|---|---|\n| 0 | size [cite: remove] |\n\n\
        <!-- hex: case=y_v2.4.2_remove_plain file=store offset=3 -->\n\
        ```\n00000003  00  # header end\n00000004  aa bb\n```\n\n\
        ### Notes\n<!-- informative -->\n\nNo citation needed here.\n";

    fn problems(doc: &str) -> Vec<String> {
        let dir = suite();
        check(doc, dir.path()).into_iter().map(|p| p.what).collect()
    }

    fn fails_with(doc: &str, needle: &str) {
        let p = problems(doc);
        assert!(
            p.iter().any(|w| w.contains(needle)),
            "expected a problem containing `{needle}`, got {p:?}"
        );
    }

    #[test]
    fn a_good_document_passes() {
        assert_eq!(problems(GOOD), Vec::<String>::new());
        let parsed = parse(GOOD);
        assert_eq!(parsed.statements.len(), 3);
        assert_eq!(parsed.hex.len(), 1);
    }

    #[test]
    fn an_unknown_case_fails() {
        fails_with(
            &GOOD.replace(
                "[cite: y_v2.4.2_remove_plain]",
                "[cite: y_v2.4.2_remove_aes128]",
            ),
            "neither a case nor a family",
        );
    }

    #[test]
    fn an_unknown_family_fails() {
        fails_with(
            &GOOD.replace("[cite: grown]", "[cite: grow]"),
            "cites `grow`",
        );
    }

    #[test]
    fn an_uncited_family_fails() {
        // the only citations of `grown` go
        fails_with(
            &GOOD.replace("[cite: grown]", "[cite: remove]"),
            "family `grown` of suite/cases is cited nowhere",
        );
    }

    #[test]
    fn a_statement_without_citation_fails() {
        fails_with(
            &GOOD.replace(" [cite: y_v2.4.2_remove_plain]", ""),
            "without a final [cite",
        );
        // a citation must end the statement
        fails_with(
            &GOOD.replace("[cite: grown]", "[cite: grown] and more"),
            "without a final [cite",
        );
        // a table row without one
        fails_with(&GOOD.replace(" [cite: remove] |", " |"), "without a final");
        // a list item's continuation line is part of it
        let doc = GOOD.replace(
            "- growing files [cite: grown]",
            "- growing [cite: grown]\n  files",
        );
        fails_with(&doc, "without a final");
    }

    #[test]
    fn informative_sections_need_no_citation() {
        let doc = GOOD.replace(
            "## Data\n<!-- normative -->",
            "## Data\n<!-- informative -->",
        );
        // only the family coverage remains to satisfy (it still is)
        assert_eq!(problems(&doc), Vec::<String>::new());
        assert!(parse(&doc).statements.is_empty());
    }

    #[test]
    fn hex_bytes_that_differ_fail() {
        fails_with(
            &GOOD.replace("00000004  aa bb", "00000004  aa bc"),
            "bytes differ",
        );
        fails_with(
            &GOOD.replace("00000004  aa bb", "00000004  aa bb cc dd"),
            "has 7 bytes",
        );
        fails_with(&GOOD.replace("offset=3", "offset=2"), "expected 0x2");
        fails_with(
            &GOOD.replace("00000004  aa bb", "00000005  bb cc"),
            "expected 0x4",
        );
        fails_with(
            &GOOD.replace("00000004  aa bb", "4: aa bb"),
            "is not `OOOOOOOO",
        );
        fails_with(&GOOD.replace("file=store", "file=store.crc"), "store.crc");
        fails_with(
            &GOOD.replace(
                "case=y_v2.4.2_remove_plain file",
                "case=y_v9_remove_plain file",
            ),
            "no case `y_v9_remove_plain`",
        );
    }

    #[test]
    fn a_hex_directive_must_precede_its_block() {
        fails_with(
            &GOOD.replace("offset=3 -->\n```", "offset=3 -->\n\n```"),
            "directly followed by a fenced block",
        );
        let doc = GOOD.replace(
            "<!-- hex: case=y_v2.4.2_remove_plain file=store offset=3 -->\n```",
            "```hex",
        );
        fails_with(&doc, "hex block without");
        fails_with(&GOOD.replace("offset=3", "offset=0x3"), "not a decimal");
    }
}

/// The first-column names of the table under `heading` in a Markdown text: the code spans of
/// each body row's first cell.
fn table_names(text: &str, heading: &str) -> BTreeSet<String> {
    let Some(start) = text.find(heading) else {
        return BTreeSet::new();
    };
    let mut names = BTreeSet::new();
    let rows = text[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2);
    for row in rows {
        let cell = row.split('|').nth(1).unwrap_or_default();
        names.extend(cell.split('`').skip(1).step_by(2).map(str::to_string));
    }
    names
}

#[test]
fn the_suite_readme_points_every_class_and_family_to_the_format() {
    let text = std::fs::read_to_string(root().join("suite/README.md")).unwrap();
    let listed = table_names(&text, "### What the format says about each case");
    let suite = Suite::open(&root().join("suite/cases"));
    let mut wanted: BTreeSet<String> = suite.families().into_keys().collect();
    wanted.extend(["y_", "n_", "i_"].map(String::from));
    assert_eq!(
        listed, wanted,
        "suite/README.md's table of classes and families"
    );
    // the helper sees a table's first column only
    let t = "### H\n\n| a | b |\n|---|---|\n| `x`, `y` | `z` |\n";
    assert_eq!(
        table_names(t, "### H"),
        BTreeSet::from(["x".into(), "y".into()])
    );
}
