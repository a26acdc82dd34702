//! The report as text, Markdown and JSON, and its one summary line.

use std::fmt::Write as _;

use crate::report::{Cell, Report, Row, Source};
use crate::vocab::kind::StoreKind;

impl Report {
    /// `{"versions": [{"tag", "source", "kinds": {...}}], ..., "plan_digest": {...}}`: the
    /// report, and its [`Report::plan_digest`] (computed, not read back: a merge computes it
    /// again from the merged rows and sections).
    pub fn to_json(&self) -> String {
        #[derive(serde::Serialize)]
        struct WithDigest<'a> {
            #[serde(flatten)]
            report: &'a Report,
            plan_digest: crate::report::digest::PlanDigest,
        }
        let doc = WithDigest {
            report: self,
            plan_digest: self.plan_digest(),
        };
        serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "{}".to_string())
    }

    fn header() -> Vec<String> {
        let mut h = vec!["tag".to_string(), "source".to_string()];
        h.extend(StoreKind::ALL.iter().map(|k| k.id().to_string()));
        h.extend(["workloads", "ops", "keys compared"].map(String::from));
        h
    }

    fn cells(row: &Row) -> Vec<String> {
        let mut c = vec![
            row.label(),
            match row.source {
                Source::Live => "live".to_string(),
                Source::Golden => "golden".to_string(),
                Source::Unbuilt => "unbuilt".to_string(),
            },
        ];
        c.extend(StoreKind::ALL.iter().map(|k| {
            row.kinds
                .get(k.id())
                .copied()
                .unwrap_or(Cell::NotApplicable)
                .text()
                .to_string()
        }));
        c.extend([
            row.ran.workloads.to_string(),
            row.ran.ops.to_string(),
            row.ran.keys_compared.to_string(),
        ]);
        c
    }

    /// The one summary line: verdict (without the strict switch) and what ran.
    pub fn summary_line(&self) -> String {
        let tally = self.tally();
        let t = self.totals();
        let failing_rows = self
            .versions
            .iter()
            .filter(|r| !r.failures.is_empty())
            .count();
        format!(
            "conformance report: {} — {} versions{}: {} live, {} golden, {} unbuilt; cells: {} pass, \
             {} FAIL, {} golden, {} unbuilt, {} n/a; {} workload(s), {} operation(s), {} key(s) \
             compared ({} reads), long-lived reader reloads {} partial / {} full; {} corpus \
             store(s) checked; {}; {}{}{}{}; {}",
            if self.passed(false) { "PASS" } else { "FAIL" },
            self.tags(),
            self.page_sizes_phrase(),
            tally.rows("live"),
            tally.rows("golden"),
            tally.rows("unbuilt"),
            tally.cells("pass"),
            tally.cells("FAIL"),
            tally.cells("golden"),
            tally.cells("unbuilt"),
            tally.cells("n/a"),
            t.workloads,
            t.ops,
            t.keys_compared,
            t.reads_compared,
            t.partial_reloads,
            t.full_reloads,
            t.corpus_stores,
            match &self.faults {
                Some(f) => f.phrase(),
                None => "fault suite not run".to_string(),
            },
            match &self.powerloss {
                Some(p) => p.phrase(),
                None => "power-loss suite not run".to_string(),
            },
            match &self.diskerr {
                Some(d) => format!("; {}", d.phrase()),
                None => String::new(),
            },
            if failing_rows > 0 {
                format!("; {failing_rows} row(s) with failures")
            } else {
                String::new()
            },
            match self.seed {
                Some(seed) => format!("; seed {seed}"),
                None => String::new(),
            },
            self.plan_digest().phrase()
        )
    }

    /// Distinct tags among the rows.
    fn tags(&self) -> usize {
        let tags: std::collections::BTreeSet<&str> =
            self.versions.iter().map(|r| r.tag.as_str()).collect();
        tags.len()
    }

    /// ` (rows: 50 at 4 KiB, 50 at 16 KiB)` when a row is not at 4 KiB, else nothing.
    fn page_sizes_phrase(&self) -> String {
        let mut per: std::collections::BTreeMap<u64, usize> = Default::default();
        for r in &self.versions {
            *per.entry(r.page_size).or_default() += 1;
        }
        if per
            .keys()
            .all(|&p| p == crate::report::pages::DEFAULT_PAGE_SIZE)
        {
            return String::new();
        }
        let parts: Vec<String> = per
            .iter()
            .map(|(p, n)| format!("{n} at {}", crate::report::pages::label(*p)))
            .collect();
        format!(" (rows: {})", parts.join(", "))
    }

    /// A plain-text table.
    pub fn to_text(&self) -> String {
        let mut rows = vec![Report::header()];
        rows.extend(self.versions.iter().map(Report::cells));
        let mut out = aligned_table(&rows, |_| Align::Left, TableStyle::Text);
        if let Some(f) = &self.faults {
            out.push('\n');
            out.push_str(&f.to_text());
        }
        if let Some(p) = &self.powerloss {
            out.push('\n');
            out.push_str(&p.to_text());
        }
        if let Some(d) = &self.diskerr {
            out.push('\n');
            out.push_str(&d.to_text());
        }
        out
    }

    /// A Markdown table (for the README).
    pub fn to_markdown(&self) -> String {
        let header = Report::header();
        let mut out = String::new();
        let _ = writeln!(out, "| {} |", header.join(" | "));
        let _ = writeln!(out, "|{}", "---|".repeat(header.len()));
        for row in &self.versions {
            let _ = writeln!(out, "| {} |", Report::cells(row).join(" | "));
        }
        out
    }
}

/// How a column of [`aligned_table`] is aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Padded on the right.
    Left,
    /// Padded on the left (numbers).
    Right,
}

/// How [`aligned_table`] draws a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableStyle {
    /// Two spaces between columns, no trailing blanks.
    Text,
    /// `| a | b |` rows, and after the header a separator row whose `:` marks right-aligned
    /// columns.
    Markdown,
}

/// The one aligned-table writer (the report's text table, the suite's grade table): `rows`
/// (the first is the header) with every column padded to its widest cell, column `i` aligned
/// as `align(i)` says; one line per row.
pub fn aligned_table(
    rows: &[Vec<String>],
    align: impl Fn(usize) -> Align,
    style: TableStyle,
) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<String>| match style {
        TableStyle::Text => format!("{}\n", cells.join("  ").trim_end()),
        TableStyle::Markdown => format!("| {} |\n", cells.join(" | ")),
    };
    let mut out = String::new();
    for (n, r) in rows.iter().enumerate() {
        let cells = (widths.iter().enumerate())
            .map(|(i, &w)| {
                let c = r.get(i).map_or("", String::as_str);
                match align(i) {
                    Align::Left => format!("{c:<w$}"),
                    Align::Right => format!("{c:>w$}"),
                }
            })
            .collect();
        out.push_str(&line(cells));
        if n == 0 && style == TableStyle::Markdown {
            let seps = (widths.iter().enumerate())
                .map(|(i, &w)| match align(i) {
                    Align::Left => "-".repeat(w),
                    Align::Right => format!("{}:", "-".repeat(w.saturating_sub(1))),
                })
                .collect();
            out.push_str(&line(seps));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_tables() {
        let rows: Vec<Vec<String>> = [["name", "n"], ["ab", "100"], ["abcd", "7"]]
            .iter()
            .map(|r| r.map(String::from).to_vec())
            .collect();
        let right = |i| if i == 0 { Align::Left } else { Align::Right };
        assert_eq!(
            aligned_table(&rows, right, TableStyle::Markdown),
            "| name |   n |\n| ---- | --: |\n| ab   | 100 |\n| abcd |   7 |\n"
        );
        assert_eq!(
            aligned_table(&rows, |_| Align::Left, TableStyle::Text),
            "name  n\nab    100\nabcd  7\n"
        );
    }
}
