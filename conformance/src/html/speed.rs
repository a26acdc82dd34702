//! The speed section's input: nanoseconds per read of the reader, the official library
//! (single-process and MULTI_PROCESS) and the floor (a bare `HashMap` lookup), per operation,
//! with the machine and load they were measured on, and the log-scale bar chart of them.
//!
//! Two sources: a criterion directory (`--speed DIR`, collected by the speedup-table tool's
//! own `benches::table::collect`), or the speedup table checked in to the repository (the
//! Markdown between the tool's markers, in the README or a page of docs/).

use std::path::Path;

use benches::table::{
    collect, fmt_factor, fmt_num, fmt_ratio, GetRow, Stat, BEGIN_MARKER, END_MARKER,
};

use crate::error::{Error, Result};

/// The measurements shown.
#[derive(Debug, Clone, PartialEq)]
pub struct Speed {
    /// Where they come from (a directory, a document).
    pub source: String,
    /// Machine and load lines (`amd64: <cpu> (2 cores), load average ...`).
    pub machine: Vec<String>,
    /// How and when they were measured (the table's first line), if known.
    pub note: Option<String>,
    /// One row per (architecture, operation).
    pub ops: Vec<SpeedOp>,
}

/// One read operation on one architecture: the speedup table's row (nanoseconds per call).
#[derive(Debug, Clone, PartialEq)]
pub struct SpeedOp {
    /// Architecture (`amd64`).
    pub arch: String,
    /// The times of the reader, the official library (single, multi) and the floor.
    pub row: GetRow,
}

impl SpeedOp {
    /// The series in chart order, with their names.
    pub fn series(&self) -> [(&'static str, Option<f64>); 4] {
        [
            ("reader", self.row.reader),
            ("official single-process", self.row.official_single),
            ("official MULTI_PROCESS", self.row.official_multi),
            ("floor (HashMap)", self.row.floor),
        ]
    }

    /// The table's cells after the op: the four times in series order, the two speedups and
    /// reader over floor, formatted as the speedup table formats them.
    pub fn cells(&self) -> Vec<String> {
        let r = &self.row;
        let mut cells: Vec<String> = self.series().iter().map(|(_, v)| fmt_num(*v)).collect();
        cells.extend([
            fmt_factor(r.speedup_single()),
            fmt_factor(r.speedup_multi()),
            fmt_ratio(r.reader_over_floor()),
        ]);
        cells
    }
}

impl Speed {
    /// From a criterion directory (`target/criterion` after `cargo bench -p benches`).
    pub fn from_criterion(dir: &Path) -> Result<Speed> {
        let report = collect(dir, Stat::Median)
            .map_err(|e| Error::Other(format!("--speed {}: {e}", dir.display())))?;
        if report.estimates_found() == 0 {
            return Err(Error::Other(format!(
                "--speed {}: no criterion estimate of the benches there (run `cargo bench -p benches` first)",
                dir.display()
            )));
        }
        let arch = report
            .machine
            .as_ref()
            .map_or_else(|| "this machine".to_string(), |m| m.arch.clone());
        let machine = report
            .machine
            .iter()
            .map(|m| {
                format!(
                    "{}: {} ({} cores), load average {}",
                    m.arch,
                    m.cpu,
                    m.cores,
                    m.load.as_deref().unwrap_or("not recorded")
                )
            })
            .collect();
        Ok(Speed {
            source: dir.display().to_string(),
            machine,
            note: Some("criterion median per call".to_string()),
            ops: report
                .gets
                .iter()
                .map(|g| SpeedOp {
                    arch: arch.clone(),
                    row: g.clone(),
                })
                .filter(|o| o.series().iter().any(|(_, v)| v.is_some()))
                .collect(),
        })
    }

    /// From the speedup table checked in under `root`: the first of the README,
    /// benches/README.md and the Markdown files of docs/ that holds the markers. `Err` says
    /// why there is none.
    pub fn checked_in(root: &Path) -> std::result::Result<Speed, String> {
        let mut candidates = vec![root.join("README.md"), root.join("benches/README.md")];
        if let Ok(dir) = std::fs::read_dir(root.join("docs")) {
            let mut docs: Vec<_> = dir
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "md"))
                .collect();
            docs.sort();
            candidates.extend(docs);
        }
        for path in candidates {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            if let Some(speed) = Speed::from_markdown(&text) {
                let name = path.strip_prefix(root).unwrap_or(&path);
                return Ok(Speed {
                    source: format!("{} (checked in)", name.display()),
                    ..speed
                });
            }
        }
        Err(format!(
            "no speedup table: neither --speed DIR nor a document of {} with the speedup-table markers",
            root.display()
        ))
    }

    /// Parses the speedup table's Markdown (between its markers): the first line, the machine
    /// list and the reads table. `None` without markers or read rows with a number.
    pub fn from_markdown(doc: &str) -> Option<Speed> {
        let start = doc.find(BEGIN_MARKER)? + BEGIN_MARKER.len();
        let end = start + doc[start..].find(END_MARKER)?;
        let body = &doc[start..end];
        let mut lines = body.lines().map(str::trim).filter(|l| !l.is_empty());
        let note = lines
            .clone()
            .next()
            .filter(|l| !l.starts_with('-') && !l.starts_with('|'))
            .map(String::from);
        // the first list: one line per architecture
        let machine = body
            .lines()
            .map(str::trim)
            .skip_while(|l| !l.starts_with("- "))
            .map_while(|l| l.strip_prefix("- "))
            .map(String::from)
            .collect();
        let mut ops = Vec::new();
        let mut in_reads = false;
        for l in lines.by_ref() {
            if l.starts_with("| arch | op |") {
                in_reads = l.contains("official single");
                continue;
            }
            if !l.starts_with('|') {
                in_reads = false;
                continue;
            }
            if !in_reads || l.starts_with("|---") {
                continue;
            }
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            if cells.len() < 6 {
                continue;
            }
            let num = |s: &str| s.replace(',', "").parse::<f64>().ok().filter(|v| *v > 0.0);
            let op = SpeedOp {
                arch: cells[0].to_string(),
                row: GetRow {
                    group: cells[1].to_string(),
                    label: cells[1].to_string(),
                    official_single: num(cells[2]),
                    official_multi: num(cells[3]),
                    reader: num(cells[4]),
                    floor: num(cells[5]),
                },
            };
            if op.series().iter().any(|(_, v)| v.is_some()) {
                ops.push(op);
            }
        }
        (!ops.is_empty()).then_some(Speed {
            source: String::new(),
            machine,
            note,
            ops,
        })
    }

    /// The bar chart of [`Speed::ops`].
    pub fn chart(&self) -> Chart {
        Chart::of(&self.ops)
    }
}

/// A horizontal bar chart on a log scale, laid out for an inline SVG.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Width and height of the view box.
    pub width: u32,
    /// Height of the view box.
    pub height: u32,
    /// x of the axis start (left of it: the labels).
    pub left: u32,
    /// One group per operation.
    pub groups: Vec<ChartGroup>,
    /// Vertical grid lines, one per decade.
    pub ticks: Vec<ChartTick>,
    /// y of the tick labels.
    pub axis_y: u32,
}

/// One operation's bars.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartGroup {
    /// `amd64 get_i32`.
    pub label: String,
    /// y of the label.
    pub y: u32,
    /// The bars.
    pub bars: Vec<ChartBar>,
}

/// One bar.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartBar {
    /// Series index (0 reader, 1 single, 2 multi, 3 floor): its CSS class.
    pub series: usize,
    /// Series name.
    pub name: &'static str,
    /// Top.
    pub y: u32,
    /// Length.
    pub w: f64,
    /// The value as text (`8.8 ns`).
    pub text: String,
    /// x of the value text.
    pub text_x: f64,
}

/// A decade line.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartTick {
    /// x of the line.
    pub x: f64,
    /// `10 ns`.
    pub label: String,
}

const BAR: u32 = 14;
const GROUP_GAP: u32 = 22;
const PLOT: f64 = 420.0;

impl Chart {
    fn of(ops: &[SpeedOp]) -> Chart {
        let values: Vec<f64> = ops
            .iter()
            .flat_map(|o| o.series().map(|(_, v)| v))
            .flatten()
            .collect();
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(0.0, f64::max);
        // whole decades around the values: 1 ns .. 1000 ns for 5.2 .. 515
        let (d0, d1) = if values.is_empty() {
            (0, 1)
        } else {
            let d0 = lo.log10().floor() as i32;
            (d0, (hi.log10().ceil() as i32).max(d0 + 1))
        };
        let span = f64::from(d1 - d0);
        let left = 190;
        let x = |v: f64| (v.log10() - f64::from(d0)) / span * PLOT;
        let mut y = 8;
        let mut groups = Vec::new();
        for o in ops {
            let label_y = y + BAR;
            let mut bars = Vec::new();
            for (i, (name, v)) in o.series().into_iter().enumerate() {
                if let Some(v) = v {
                    let w = x(v).max(1.0);
                    bars.push(ChartBar {
                        series: i,
                        name,
                        y,
                        w,
                        text: format!("{} ns", fmt_num(Some(v))),
                        text_x: f64::from(left) + w + 4.0,
                    });
                }
                y += BAR;
            }
            groups.push(ChartGroup {
                label: format!("{} {}", o.arch, o.row.label),
                y: label_y,
                bars,
            });
            y += GROUP_GAP - BAR + 4;
        }
        let ticks = (d0..=d1)
            .map(|d| ChartTick {
                x: f64::from(left) + f64::from(d - d0) / span * PLOT,
                label: if d >= 0 {
                    format!("{} ns", 10u64.pow(d.unsigned_abs()))
                } else {
                    format!("{} ns", 10f64.powi(d))
                },
            })
            .collect();
        Chart {
            width: left + PLOT as u32 + 90,
            height: y + 24,
            left,
            groups,
            ticks,
            axis_y: y + 14,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "intro\n<!-- speedup-table:begin -->\nRendered 2026-12-03; criterion median.\n\n\
        - amd64: Xeon (2 cores), load average 0.6\n- arm64: not measured yet\n\n\
        | arch | op | official single (ns) | official multi (ns) | reader (ns) | floor (ns) | speedup vs single | speedup vs multi | reader / floor |\n\
        |---|---|---:|---:|---:|---:|---:|---:|---:|\n\
        | amd64 | get_i32 | 56.2 | 320 | 8.8 | 5.2 | 6.42× | 36.6× | 1.68 |\n\
        | arm64 | get_i32 | not measured | — | — | — | — | — | — |\n\n\
        | arch | 1 thread (ns) | 2 threads (ns) |\n|---|---:|---:|\n| amd64 | 9.0 | 9.1 |\n\
        <!-- speedup-table:end -->\n";

    #[test]
    fn parses_the_checked_in_table() {
        let s = Speed::from_markdown(DOC).unwrap();
        assert_eq!(s.ops.len(), 1, "the unmeasured arm64 row is left out");
        let o = &s.ops[0];
        assert_eq!(
            (o.arch.as_str(), o.row.label.as_str()),
            ("amd64", "get_i32")
        );
        let r = &o.row;
        assert_eq!(
            (r.official_single, r.official_multi, r.reader, r.floor),
            (Some(56.2), Some(320.0), Some(8.8), Some(5.2))
        );
        assert_eq!(o.cells()[4], "6.39×");
        assert_eq!(s.machine.len(), 2);
        assert!(s.note.unwrap().starts_with("Rendered"));
        assert!(Speed::from_markdown("no markers").is_none());
    }

    #[test]
    fn chart_is_log_scale_over_whole_decades() {
        let s = Speed::from_markdown(DOC).unwrap();
        let c = s.chart();
        // 5.2 .. 320 ns: decades 1, 10, 100, 1000
        let labels: Vec<&str> = c.ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["1 ns", "10 ns", "100 ns", "1000 ns"]);
        let bars = &c.groups[0].bars;
        assert_eq!(bars.len(), 4);
        // 10x the time is one decade longer, whatever the value
        let w = |i: usize| bars[i].w;
        assert!(w(2) > w(1) && w(1) > w(0) && w(0) > w(3));
        assert!((w(1) - w(0) - (56.2f64 / 8.8).log10() * PLOT / 3.0).abs() < 1e-9);
        assert_eq!(bars[2].text, "320 ns");
    }
}
