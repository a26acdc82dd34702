//! Rendering a run: the speed targets met or not, the architectures merged (every table has an
//! `arch` column; one not measured says so), the Markdown tables, and their place in benches/README.md
//! between [`BEGIN_MARKER`] and [`END_MARKER`].

use super::collect::{GetRow, Machine, Report, Stat};
use super::TableError;
use crate::ids;
use crate::memory::{MemoryReport, ScaleStore};

/// Marker comment opening the generated section of benches/README.md.
pub const BEGIN_MARKER: &str = "<!-- speedup-table:begin -->";
/// Marker comment closing the generated section of benches/README.md.
pub const END_MARKER: &str = "<!-- speedup-table:end -->";

impl Report {
    /// The targets of the speed issue, evaluated on this report.
    pub fn targets(&self) -> Vec<Target> {
        let row = |g: ids::GetGroup| self.get(g.group);
        let over_floor = |g: ids::GetGroup| row(g).and_then(GetRow::reader_over_floor);
        let i32_row = row(ids::GET_I32);
        let worst_heap = self
            .scaling
            .iter()
            .filter_map(|r| r.size.as_ref().and_then(ScaleStore::heap_ratio))
            .chain(self.memory.as_ref().and_then(MemoryReport::heap_ratio))
            .reduce(f64::max);
        vec![
            Target::at_most("reader get_i32 / floor", over_floor(ids::GET_I32), 1.3, ""),
            Target::at_most(
                "reader get_string / floor",
                over_floor(ids::GET_STRING),
                1.3,
                "",
            ),
            Target::at_most(
                "reader zero-copy 4 KB get_bytes / floor",
                over_floor(ids::GET_BYTES_ZERO_COPY),
                1.3,
                "",
            ),
            Target::at_most(
                "reader 4 KB get_bytes copy / floor",
                over_floor(ids::GET_BYTES_COPY),
                1.2,
                "",
            ),
            Target::at_least(
                "reader get_i32 vs official single-process",
                i32_row.and_then(GetRow::speedup_single),
                8.0,
                "×",
            ),
            Target::at_least(
                "reader get_i32 vs official MULTI_PROCESS",
                i32_row.and_then(GetRow::speedup_multi),
                50.0,
                "×",
            ),
            Target::at_least(
                "2 reader threads / 1 thread, reads per second",
                self.threads.scaling(),
                1.8,
                "×",
            ),
            Target::at_least("open vs official load", self.open.speedup(), 1.5, "×"),
            Target::at_most("reader heap / data size (worst store)", worst_heap, 1.3, ""),
        ]
    }
}

/// One target: a measured ratio against a bound.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// What is compared.
    pub name: String,
    /// The measured ratio.
    pub value: Option<f64>,
    /// The bound.
    pub bound: f64,
    /// `true`: value >= bound is required; `false`: value <= bound.
    pub at_least: bool,
    /// Unit suffix for display (`×` or empty).
    pub unit: &'static str,
}

impl Target {
    fn at_least(name: &str, value: Option<f64>, bound: f64, unit: &'static str) -> Target {
        Target {
            name: name.into(),
            value,
            bound,
            at_least: true,
            unit,
        }
    }
    fn at_most(name: &str, value: Option<f64>, bound: f64, unit: &'static str) -> Target {
        Target {
            name: name.into(),
            value,
            bound,
            at_least: false,
            unit,
        }
    }
    /// Whether the target is met (`None` when not measured).
    pub fn met(&self) -> Option<bool> {
        self.value.map(|v| {
            if self.at_least {
                v >= self.bound
            } else {
                v <= self.bound
            }
        })
    }
}

/// The architectures the table always shows (rows of one not measured say so).
pub const ARCHES: [&str; 2] = ["amd64", "arm64"];

/// `YYYY-MM-DD HH:MM UTC` of a Unix time in seconds.
pub fn utc_datetime(unix_secs: u64) -> String {
    i64::try_from(unix_secs)
        .ok()
        .and_then(|s| jiff::Timestamp::from_second(s).ok())
        .map(|t| t.strftime("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_else(|| format!("{unix_secs} (Unix seconds)"))
}

fn group_thousands(int: u64) -> String {
    let digits = int.to_string();
    let groups: Vec<&str> = digits
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(|g| std::str::from_utf8(g).unwrap_or("?"))
        .collect();
    groups.join(",")
}

/// A time for the table: one decimal below 100, whole numbers with thousands separators above.
pub fn fmt_num(v: Option<f64>) -> String {
    match v {
        None => "—".into(),
        Some(x) if x < 100.0 => format!("{x:.1}"),
        Some(x) => group_thousands(x.round() as u64),
    }
}

/// A speedup factor: `12.3×`, `2.47×`, `1,234×`.
pub fn fmt_factor(v: Option<f64>) -> String {
    match v {
        None => "—".into(),
        Some(x) if x >= 100.0 => format!("{}×", group_thousands(x.round() as u64)),
        Some(x) if x >= 10.0 => format!("{x:.1}×"),
        Some(x) => format!("{x:.2}×"),
    }
}

/// A plain ratio with two decimals.
pub fn fmt_ratio(v: Option<f64>) -> String {
    v.map_or_else(|| "—".into(), |x| format!("{x:.2}"))
}

/// Bytes as MiB/KiB/B.
pub fn fmt_bytes(b: f64) -> String {
    let a = b.abs();
    if a >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / (1024.0 * 1024.0))
    } else if a >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{b:.0} B")
    }
}

fn scaled(v: Option<f64>, div: f64) -> Option<f64> {
    v.map(|x| x / div)
}

/// One architecture's run for [`render_runs`]: its report, or `None` when not measured.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchRun {
    /// `amd64`, `arm64`...
    pub arch: String,
    /// The machine the run was made on (when known).
    pub machine: Option<Machine>,
    /// The run's report (`None`: this architecture was not measured).
    pub report: Option<Report>,
}

/// The runs to show: `measured` (one per architecture), plus an unmeasured entry for every
/// architecture of [`ARCHES`] missing from it, in [`ARCHES`] order (others after).
pub fn with_missing_arches(measured: Vec<ArchRun>) -> Vec<ArchRun> {
    let mut out: Vec<ArchRun> = ARCHES
        .iter()
        .map(|a| {
            measured
                .iter()
                .find(|r| r.arch == *a)
                .cloned()
                .unwrap_or_else(|| ArchRun {
                    arch: a.to_string(),
                    machine: None,
                    report: None,
                })
        })
        .collect();
    out.extend(
        measured
            .into_iter()
            .filter(|r| !ARCHES.contains(&r.arch.as_str())),
    );
    out
}

/// Renders one run (on `machine`) as Markdown, with rows saying "not measured" for the other
/// architectures of [`ARCHES`] (see [`render_runs`]).
pub fn render(report: &Report, machine: &Machine, date: &str, note: Option<&str>) -> String {
    let runs = with_missing_arches(vec![ArchRun {
        arch: machine.arch.clone(),
        machine: Some(report.machine.clone().unwrap_or_else(|| machine.clone())),
        report: Some(report.clone()),
    }]);
    render_runs(&runs, date, note)
}

const NOT_MEASURED: &str = "not measured";

/// A table row: `| arch | cells... |`, or for an unmeasured run `| arch | first |` followed by
/// "not measured" and dashes.
fn row(o: &mut String, arch: &str, cells: &[String]) {
    use std::fmt::Write as _;
    let _ = write!(o, "| {arch} |");
    for c in cells {
        let _ = write!(o, " {c} |");
    }
    o.push('\n');
}

fn unmeasured_row(o: &mut String, arch: &str, first: &str, n_cells: usize) {
    let mut cells = vec![first.to_string(), NOT_MEASURED.to_string()];
    cells.resize(n_cells.max(2), "—".to_string());
    row(o, arch, &cells);
}

/// "N keys, SIZE" of the fixture `bench` recorded in the first measured run that has it, else
/// `default`.
fn fixture_desc(measured: &[&ArchRun], bench: &str, default: &str) -> String {
    measured
        .iter()
        .filter_map(|r| r.report.as_ref()?.fixtures.get(bench))
        .map(|f| {
            format!(
                "{} keys, {}",
                group_thousands(f.keys),
                fmt_bytes(f.data_bytes as f64)
            )
        })
        .next()
        .unwrap_or_else(|| default.into())
}

/// Renders runs of several architectures as Markdown (the text that goes between the document's
/// markers): every table has an `arch` column; an architecture without a report gets rows
/// saying "not measured", never a number. `date` is shown as is (see [`utc_datetime`]);
/// `note` (e.g. "quiet machine") is appended to the header line.
pub fn render_runs(runs: &[ArchRun], date: &str, note: Option<&str>) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let measured: Vec<&ArchRun> = runs.iter().filter(|r| r.report.is_some()).collect();
    let stat = measured
        .first()
        .and_then(|r| r.report.as_ref())
        .map_or(Stat::Median, |r| r.stat);
    let version = measured
        .iter()
        .filter_map(|r| r.report.as_ref())
        .flat_map(|r| {
            r.fixtures
                .values()
                .map(|f| f.mmkv_version.clone())
                .chain(r.memory.iter().map(|m| m.mmkv_version.clone()))
        })
        .next()
        .unwrap_or_else(|| "(unknown)".into());
    let _ = write!(
        o,
        "Rendered {date}; official MMKV {version}, criterion {} per call",
        stat.key()
    );
    if let Some(n) = note.filter(|n| !n.trim().is_empty()) {
        let _ = write!(o, "; {}", n.trim());
    }
    o.push_str(".\n\n");
    for r in runs {
        match (&r.report, &r.machine) {
            (Some(_), Some(m)) => {
                let load = m.load.as_deref().map_or(String::new(), |l| {
                    format!(", load average {l} when the reads were measured")
                });
                let _ = writeln!(o, "- {}: {} ({} cores){load}", r.arch, m.cpu, m.cores);
            }
            (Some(_), None) => {
                let _ = writeln!(o, "- {}: machine not recorded", r.arch);
            }
            (None, _) => {
                let _ = writeln!(o, "- {}: not measured yet", r.arch);
            }
        }
    }
    o.push_str("\nReproduce: `cargo bench`, then `cargo run --release -p benches --bin speedup-table`.\n\n");

    let gets_desc = fixture_desc(&measured, "gets", "1,000 keys");
    let _ = writeln!(o, "**Reads** (store of {gets_desc}, written by the official library; the reader checks the meta file on every read):\n");
    o.push_str("| arch | op | official single (ns) | official multi (ns) | reader (ns) | floor (ns) | speedup vs single | speedup vs multi | reader / floor |\n");
    o.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for run in runs {
        match &run.report {
            Some(rep) => {
                for r in &rep.gets {
                    row(
                        &mut o,
                        &run.arch,
                        &[
                            r.label.clone(),
                            fmt_num(r.official_single),
                            fmt_num(r.official_multi),
                            fmt_num(r.reader),
                            fmt_num(r.floor),
                            fmt_factor(r.speedup_single()),
                            fmt_factor(r.speedup_multi()),
                            fmt_ratio(r.reader_over_floor()),
                        ],
                    );
                }
            }
            None => {
                for g in ids::GET_GROUPS {
                    unmeasured_row(&mut o, &run.arch, g.label, 8);
                }
            }
        }
    }
    o.push_str("\nReader rows: `store.get_i32(k)`, `store.get_string(k)`, `store.get_bytes(k)` (copies) and `store.view().get_bytes(k)` (zero-copy), each checking the meta file first. The official library has no zero-copy getter: its zero-copy row repeats its copying `getBytes`. Floor: a `HashMap` lookup with the reader's hasher and the same keys, returning the same owned or borrowed value.\n\n");

    o.push_str("**Reader threads** (`store.get_i32(k)` on one `Store` from 1 and from 2 threads at once; ns per read on every thread; the floor's `HashMap` lookup the same way shows how far the machine itself scales two threads that share nothing written):\n\n");
    o.push_str("| arch | 1 thread (ns) | 2 threads (ns) | reads/s of 2 threads over 1 | floor, 1 thread (ns) | floor, 2 threads (ns) | floor reads/s of 2 threads over 1 |\n|---|---:|---:|---:|---:|---:|---:|\n");
    for run in runs {
        match &run.report {
            Some(rep) => row(
                &mut o,
                &run.arch,
                &[
                    fmt_num(rep.threads.one),
                    fmt_num(rep.threads.two),
                    fmt_factor(rep.threads.scaling()),
                    fmt_num(rep.threads.floor_one),
                    fmt_num(rep.threads.floor_two),
                    fmt_factor(rep.threads.floor_scaling()),
                ],
            ),
            None => {
                let mut cells = vec![NOT_MEASURED.to_string()];
                cells.resize(6, "—".to_string());
                row(&mut o, &run.arch, &cells);
            }
        }
    }
    o.push('\n');

    let open_desc = fixture_desc(&measured, "open", "100,000 keys");
    let _ = writeln!(
        o,
        "**Open + parse** (store of {open_desc}, file in the page cache):\n"
    );
    o.push_str("| arch | op | official (ms) | reader (ms) | speedup |\n|---|---|---:|---:|---:|\n");
    for run in runs {
        match &run.report {
            Some(rep) => row(
                &mut o,
                &run.arch,
                &[
                    "open + first access".into(),
                    fmt_ms(rep.open.official),
                    fmt_ms(rep.open.reader),
                    fmt_factor(rep.open.speedup()),
                ],
            ),
            None => unmeasured_row(&mut o, &run.arch, "open + first access", 4),
        }
    }
    o.push('\n');

    o.push_str("**Scaling** (stores of 100-byte values written by the official library: `Store::open` + first access, the heap the open store keeps, and the partial reload after the official writer appends one value of k bytes):\n\n");
    o.push_str("| arch | keys | data | open (ms) | reader heap | heap / data |");
    for (a, _) in ids::RELOAD_APPENDS {
        let _ = write!(
            o,
            " reload k = {} (µs) |",
            a.to_uppercase().replace("KB", " KB").replace("MB", " MB")
        );
    }
    o.push_str("\n|---|---:|---:|---:|---:|---:|");
    for _ in ids::RELOAD_APPENDS {
        o.push_str("---:|");
    }
    o.push('\n');
    for run in runs {
        match &run.report {
            Some(rep) => {
                for r in &rep.scaling {
                    let mut cells = vec![
                        group_thousands(r.store.keys as u64),
                        r.size
                            .as_ref()
                            .map_or_else(|| "—".into(), |z| fmt_bytes(z.data_bytes as f64)),
                        fmt_ms(r.open),
                        r.size
                            .as_ref()
                            .map_or_else(|| "—".into(), |z| fmt_bytes(z.reader_heap_bytes as f64)),
                        fmt_ratio(r.size.as_ref().and_then(ScaleStore::heap_ratio)),
                    ];
                    cells.extend(r.by_append.iter().map(|v| fmt_us(*v)));
                    row(&mut o, &run.arch, &cells);
                }
            }
            None => {
                for st in ids::SCALE_STORES {
                    unmeasured_row(
                        &mut o,
                        &run.arch,
                        &group_thousands(st.keys as u64),
                        5 + ids::RELOAD_APPENDS.len(),
                    );
                }
            }
        }
    }
    o.push('\n');

    o.push_str("**Memory** (reader snapshot of the open + parse store):\n\n");
    o.push_str("| arch | actual data | reader heap | heap / data | peak heap during open | RSS growth, reader open | RSS growth, official open |\n");
    o.push_str("|---|---:|---:|---:|---:|---:|---:|\n");
    for run in runs {
        match run.report.as_ref().and_then(|r| r.memory.as_ref()) {
            Some(m) => row(
                &mut o,
                &run.arch,
                &[
                    fmt_bytes(m.data_bytes as f64),
                    fmt_bytes(m.reader_heap_bytes as f64),
                    fmt_ratio(m.heap_ratio()),
                    fmt_bytes(m.reader_peak_heap_bytes as f64),
                    fmt_bytes(m.reader_rss_delta_bytes as f64),
                    m.official_rss_delta_bytes
                        .map_or_else(|| "—".into(), |b| fmt_bytes(b as f64)),
                ],
            ),
            None => unmeasured_row(&mut o, &run.arch, "—", 6),
        }
    }
    o.push('\n');

    o.push_str("**Targets** (computed from this run):\n\n| arch | target | measured | bound | met |\n|---|---|---:|---:|:---:|\n");
    let blank = Report::empty(stat);
    for run in runs {
        let rep = run.report.as_ref().unwrap_or(&blank);
        for t in rep.targets() {
            let measured = match (&run.report, t.unit) {
                (None, _) => NOT_MEASURED.to_string(),
                (Some(_), "×") => fmt_factor(t.value),
                (Some(_), _) => fmt_ratio(t.value),
            };
            let bound = format!(
                "{} {}{}",
                if t.at_least { "≥" } else { "≤" },
                t.bound,
                t.unit
            );
            let met = match t.met() {
                Some(true) => "yes",
                Some(false) => "**no**",
                None => "—",
            };
            row(
                &mut o,
                &run.arch,
                &[t.name.clone(), measured, bound, met.to_string()],
            );
        }
    }
    let notes: Vec<String> = measured
        .iter()
        .filter_map(|r| Some((r.arch.as_str(), r.report.as_ref()?)))
        .flat_map(|(arch, rep)| {
            rep.fixtures.iter().flat_map(move |(bench, f)| {
                f.notes
                    .iter()
                    .map(move |n| format!("- {arch} {bench}: {n}"))
            })
        })
        .collect();
    if !notes.is_empty() {
        o.push_str("\nNotes:\n\n");
        for n in notes {
            o.push_str(&n);
            o.push('\n');
        }
    }
    o
}

fn fmt_ms(v: Option<f64>) -> String {
    match scaled(v, 1e6) {
        None => "—".into(),
        Some(x) if x < 10.0 => format!("{x:.2}"),
        Some(x) => format!("{x:.1}"),
    }
}

fn fmt_us(v: Option<f64>) -> String {
    match scaled(v, 1e3) {
        None => "—".into(),
        Some(x) if x < 10.0 => format!("{x:.2}"),
        Some(x) if x < 1000.0 => format!("{x:.1}"),
        Some(x) => group_thousands(x.round() as u64),
    }
}

/// Replaces what lies between [`BEGIN_MARKER`] and [`END_MARKER`] in `doc` with `content`
/// (framed by newlines); the markers and everything outside them are kept byte for byte.
pub fn replace_between(doc: &str, content: &str) -> Result<String, TableError> {
    let count = |m: &str| doc.matches(m).count();
    match (count(BEGIN_MARKER), count(END_MARKER)) {
        (1, 1) => {}
        (0, _) | (_, 0) => {
            return Err(TableError::Markers(format!(
                "the document needs both {BEGIN_MARKER} and {END_MARKER}"
            )))
        }
        _ => {
            return Err(TableError::Markers(
                "a marker appears more than once".into(),
            ))
        }
    }
    let b = doc.find(BEGIN_MARKER).unwrap_or(0) + BEGIN_MARKER.len();
    let e = doc.find(END_MARKER).unwrap_or(0);
    if e < b {
        return Err(TableError::Markers(format!(
            "{END_MARKER} comes before {BEGIN_MARKER}"
        )));
    }
    let mut out = String::with_capacity(doc.len() + content.len());
    out.push_str(&doc[..b]);
    out.push('\n');
    out.push_str(content.trim_end_matches('\n'));
    out.push('\n');
    out.push_str(&doc[e..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(utc_datetime(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_datetime(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(utc_datetime(1_709_210_096), "2024-02-29 12:34 UTC");
        assert_eq!(utc_datetime(1_798_761_599), "2026-12-31 23:59 UTC");
    }

    #[test]
    fn number_formats() {
        assert_eq!(fmt_num(Some(12.34)), "12.3");
        assert_eq!(fmt_num(Some(1234.6)), "1,235");
        assert_eq!(fmt_num(Some(1_234_567.0)), "1,234,567");
        assert_eq!(fmt_num(None), "—");
        assert_eq!(fmt_factor(Some(5.0)), "5.00×");
        assert_eq!(fmt_factor(Some(12.25)), "12.2×");
        assert_eq!(fmt_factor(Some(1234.4)), "1,234×");
        assert_eq!(fmt_ratio(Some(1.234)), "1.23");
        assert_eq!(fmt_bytes(64.0 * 1024.0 * 1024.0), "64.0 MiB");
        assert_eq!(fmt_bytes(1536.0), "1.5 KiB");
        assert_eq!(fmt_bytes(-2048.0), "-2.0 KiB");
        assert_eq!(fmt_us(Some(1500.0)), "1.50");
        assert_eq!(fmt_ms(Some(25_000_000.0)), "25.0");
    }

    #[test]
    fn missing_arches_are_added_in_order() {
        let run = |a: &str| ArchRun {
            arch: a.into(),
            machine: None,
            report: Some(Report::empty(Stat::Median)),
        };
        let runs = with_missing_arches(vec![run("arm64"), run("riscv64")]);
        let arches: Vec<&str> = runs.iter().map(|r| r.arch.as_str()).collect();
        assert_eq!(arches, ["amd64", "arm64", "riscv64"]);
        assert!(runs[0].report.is_none());
        assert!(runs[1].report.is_some());
    }
}
