//! The report as text, Markdown and JSON, and its one summary line.

use std::fmt::Write as _;

use crate::report::{Cell, Report, Row, Source};
use crate::vocab::kind::StoreKind;

impl Report {
    /// `{"versions": [{"tag", "source", "kinds": {...}}]}`.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".to_string())
    }

    fn header() -> Vec<String> {
        let mut h = vec!["tag".to_string(), "source".to_string()];
        h.extend(StoreKind::ALL.iter().map(|k| k.id().to_string()));
        h.extend(["workloads", "ops", "keys compared"].map(String::from));
        h
    }

    fn cells(row: &Row) -> Vec<String> {
        let mut c = vec![
            row.tag.clone(),
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
            "conformance report: {} — {} versions: {} live, {} golden, {} unbuilt; cells: {} pass, \
             {} FAIL, {} golden, {} unbuilt, {} n/a; {} workload(s), {} operation(s), {} key(s) \
             compared ({} reads), long-lived reader reloads {} partial / {} full; {} corpus \
             store(s) checked; {}; {}{}",
            if self.passed(false) { "PASS" } else { "FAIL" },
            self.versions.len(),
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
            if failing_rows > 0 {
                format!("; {failing_rows} row(s) with failures")
            } else {
                String::new()
            }
        )
    }

    /// A plain-text table.
    pub fn to_text(&self) -> String {
        let mut rows = vec![Report::header()];
        rows.extend(self.versions.iter().map(Report::cells));
        let widths: Vec<usize> = (0..rows[0].len())
            .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
            .collect();
        let mut out = String::new();
        for r in &rows {
            let line: Vec<String> = r
                .iter()
                .zip(&widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect();
            let _ = writeln!(out, "{}", line.join("  ").trim_end());
        }
        if let Some(f) = &self.faults {
            out.push('\n');
            out.push_str(&f.to_text());
        }
        if let Some(p) = &self.powerloss {
            out.push('\n');
            out.push_str(&p.to_text());
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
