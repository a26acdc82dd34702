//! Reading a run: criterion's estimates named in [`crate::ids`], the memory, fixture and
//! machine JSON files the benches write, into a [`Report`] of what was measured.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::TableError;
use crate::ids;
use crate::memory::{FixtureInfo, MemoryReport, ScaleStore};

/// Which of criterion's point estimates to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stat {
    /// The median of the sample times (robust on a shared machine).
    #[default]
    Median,
    /// The mean of the sample times.
    Mean,
}

impl Stat {
    /// The key in `estimates.json`.
    pub fn key(self) -> &'static str {
        match self {
            Stat::Median => "median",
            Stat::Mean => "mean",
        }
    }
}

impl std::str::FromStr for Stat {
    type Err = String;
    fn from_str(s: &str) -> Result<Stat, String> {
        match s {
            "median" => Ok(Stat::Median),
            "mean" => Ok(Stat::Mean),
            other => Err(format!("unknown statistic {other:?} (median or mean)")),
        }
    }
}

/// The point estimate (nanoseconds) of `stat` in a criterion `estimates.json` text.
pub fn parse_estimate(text: &str, stat: Stat) -> Result<f64, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let pe = v
        .get(stat.key())
        .and_then(|s| s.get("point_estimate"))
        .ok_or_else(|| format!("no {}.point_estimate", stat.key()))?;
    let x = pe
        .as_f64()
        .ok_or_else(|| format!("{}.point_estimate is not a number", stat.key()))?;
    if x.is_finite() && x >= 0.0 {
        Ok(x)
    } else {
        Err(format!("{}.point_estimate is {x}", stat.key()))
    }
}

/// The estimate of `group/function` in criterion directory `dir`: `Ok(None)` when that
/// benchmark has no saved estimate, an error when the file exists but cannot be parsed.
pub fn estimate(
    dir: &Path,
    group: &str,
    function: &str,
    stat: Stat,
) -> Result<Option<f64>, TableError> {
    let path = dir
        .join(group)
        .join(function)
        .join("new")
        .join("estimates.json");
    let Some(text) = read_if_present(&path)? else {
        return Ok(None);
    };
    parse_estimate(&text, stat)
        .map(Some)
        .map_err(|message| TableError::Format { path, message })
}

/// The text of `path`, `None` when the file does not exist (that benchmark did not run).
fn read_if_present(path: &Path) -> Result<Option<String>, TableError> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(TableError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: PathBuf) -> Result<Option<T>, TableError> {
    let Some(text) = read_if_present(&path)? else {
        return Ok(None);
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| TableError::Format {
            path,
            message: e.to_string(),
        })
}

fn ratio(num: Option<f64>, den: Option<f64>) -> Option<f64> {
    match (num, den) {
        (Some(n), Some(d)) if d > 0.0 => Some(n / d),
        _ => None,
    }
}

/// One read operation: nanoseconds per call of each implementation.
#[derive(Debug, Clone, PartialEq)]
pub struct GetRow {
    /// Criterion group name.
    pub group: String,
    /// Row label.
    pub label: String,
    /// Official library, single-process mode.
    pub official_single: Option<f64>,
    /// Official library, MULTI_PROCESS mode.
    pub official_multi: Option<f64>,
    /// mmkv-reader.
    pub reader: Option<f64>,
    /// Bare `HashMap` lookup.
    pub floor: Option<f64>,
}

impl GetRow {
    /// How many times faster the reader is than the official single-process getter.
    pub fn speedup_single(&self) -> Option<f64> {
        ratio(self.official_single, self.reader)
    }
    /// How many times faster the reader is than the official MULTI_PROCESS getter.
    pub fn speedup_multi(&self) -> Option<f64> {
        ratio(self.official_multi, self.reader)
    }
    /// Reader time over floor time (1.0 = as fast as a bare hash map).
    pub fn reader_over_floor(&self) -> Option<f64> {
        ratio(self.reader, self.floor)
    }
}

/// Open + parse of the large store (nanoseconds).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct OpenRow {
    /// Official open + first access.
    pub official: Option<f64>,
    /// `Store::open`.
    pub reader: Option<f64>,
}

impl OpenRow {
    /// How many times faster the reader opens.
    pub fn speedup(&self) -> Option<f64> {
        ratio(self.official, self.reader)
    }
}

/// One scaling store: open time, heap, and reload cost for each appended size (nanoseconds).
#[derive(Debug, Clone, PartialEq)]
pub struct ScaleRow {
    /// The store (see [`ids::ReloadStore`]).
    pub store: ids::ReloadStore,
    /// `Store::open` + first access.
    pub open: Option<f64>,
    /// Size and heap of the open store, if the bench recorded them.
    pub size: Option<ScaleStore>,
    /// One reload estimate per entry of [`ids::RELOAD_APPENDS`].
    pub by_append: Vec<Option<f64>>,
}

/// `Store::get_i32` on one store from 1 and 2 threads, and the floor's lookup the same way
/// (nanoseconds per read on every thread).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ThreadsRow {
    /// One reader thread.
    pub one: Option<f64>,
    /// Two reader threads at once.
    pub two: Option<f64>,
    /// The floor `HashMap`, one thread.
    pub floor_one: Option<f64>,
    /// The floor `HashMap`, two threads at once: how far this machine scales a read-only
    /// lookup that shares nothing written.
    pub floor_two: Option<f64>,
}

impl ThreadsRow {
    /// Reads per second of 2 threads over those of 1 (2.0 = perfect scaling).
    pub fn scaling(&self) -> Option<f64> {
        ratio(self.one, self.two).map(|r| 2.0 * r)
    }

    /// [`ThreadsRow::scaling`] of the floor (the machine's own limit).
    pub fn floor_scaling(&self) -> Option<f64> {
        ratio(self.floor_one, self.floor_two).map(|r| 2.0 * r)
    }
}

/// Everything the table shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The statistic used.
    pub stat: Stat,
    /// Read rows, in [`ids::GET_GROUPS`] order.
    pub gets: Vec<GetRow>,
    /// The open row.
    pub open: OpenRow,
    /// The reader-threads row.
    pub threads: ThreadsRow,
    /// Scaling rows, in [`ids::SCALE_STORES`] order.
    pub scaling: Vec<ScaleRow>,
    /// The memory figures, if the open bench wrote them.
    pub memory: Option<MemoryReport>,
    /// Fixture descriptions by bench name (`gets`, `open`, `scaling`).
    pub fixtures: BTreeMap<String, FixtureInfo>,
    /// The machine of the run, if the `gets` bench recorded it.
    pub machine: Option<Machine>,
}

impl Report {
    /// A report with nothing measured.
    pub fn empty(stat: Stat) -> Report {
        Report {
            stat,
            gets: Vec::new(),
            open: OpenRow::default(),
            threads: ThreadsRow::default(),
            scaling: Vec::new(),
            memory: None,
            fixtures: BTreeMap::new(),
            machine: None,
        }
    }

    /// The read row of a group.
    pub fn get(&self, group: &str) -> Option<&GetRow> {
        self.gets.iter().find(|r| r.group == group)
    }

    /// Number of estimates found (0 means the directory holds no run of these benches).
    pub fn estimates_found(&self) -> usize {
        let gets: usize = self
            .gets
            .iter()
            .map(|r| {
                [r.official_single, r.official_multi, r.reader, r.floor]
                    .iter()
                    .filter(|x| x.is_some())
                    .count()
            })
            .sum();
        let open = [self.open.official, self.open.reader]
            .iter()
            .filter(|x| x.is_some())
            .count();
        let reload: usize = self
            .scaling
            .iter()
            .map(|r| {
                r.by_append.iter().filter(|x| x.is_some()).count() + usize::from(r.open.is_some())
            })
            .sum();
        let threads = [
            self.threads.one,
            self.threads.two,
            self.threads.floor_one,
            self.threads.floor_two,
        ]
        .iter()
        .filter(|x| x.is_some())
        .count();
        gets + open + reload + threads
    }
}

/// Reads every estimate and side file the table needs from criterion directory `dir`.
pub fn collect(dir: &Path, stat: Stat) -> Result<Report, TableError> {
    let mut gets = Vec::new();
    for g in ids::GET_GROUPS {
        let e = |f: &str| estimate(dir, g.group, f, stat);
        gets.push(GetRow {
            group: g.group.into(),
            label: g.label.into(),
            official_single: e(ids::OFFICIAL_SINGLE)?,
            official_multi: e(ids::OFFICIAL_MULTI)?,
            reader: e(ids::READER)?,
            floor: e(ids::FLOOR)?,
        });
    }
    let open = OpenRow {
        official: estimate(dir, ids::OPEN_GROUP, ids::OPEN_OFFICIAL, stat)?,
        reader: estimate(dir, ids::OPEN_GROUP, ids::OPEN_READER, stat)?,
    };
    let sizes: Vec<ScaleStore> = read_json(dir.join(ids::SCALING_FILE))?.unwrap_or_default();
    let mut scaling = Vec::new();
    for st in ids::SCALE_STORES {
        let mut by_append = Vec::new();
        for (a, _) in ids::RELOAD_APPENDS {
            by_append.push(estimate(
                dir,
                ids::RELOAD_GROUP,
                &ids::reload_function(st.name, a),
                stat,
            )?);
        }
        scaling.push(ScaleRow {
            store: st,
            open: estimate(dir, ids::SCALE_OPEN_GROUP, st.name, stat)?,
            size: sizes.iter().find(|z| z.name == st.name).cloned(),
            by_append,
        });
    }
    let threads = ThreadsRow {
        one: estimate(dir, ids::THREADS_GROUP, ids::THREADS_ONE, stat)?,
        two: estimate(dir, ids::THREADS_GROUP, ids::THREADS_TWO, stat)?,
        floor_one: estimate(dir, ids::THREADS_GROUP, ids::THREADS_FLOOR_ONE, stat)?,
        floor_two: estimate(dir, ids::THREADS_GROUP, ids::THREADS_FLOOR_TWO, stat)?,
    };
    let memory = read_json(dir.join(ids::MEMORY_FILE))?;
    let mut fixtures = BTreeMap::new();
    for bench in ["gets", "open", "scaling"] {
        if let Some(f) = read_json::<FixtureInfo>(dir.join(ids::fixture_file(bench)))? {
            fixtures.insert(bench.to_string(), f);
        }
    }
    let machine = read_json(dir.join(ids::MACHINE_FILE))?;
    Ok(Report {
        stat,
        gets,
        open,
        threads,
        scaling,
        memory,
        fixtures,
        machine,
    })
}

/// The machine a run was made on.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Machine {
    /// CPU model name.
    pub cpu: String,
    /// Logical cores.
    pub cores: usize,
    /// Architecture as CI names it (`amd64`, `arm64`, else Rust's name).
    pub arch: String,
    /// The 1, 5 and 15 minute load averages when recorded (`/proc/loadavg`).
    pub load: Option<String>,
}

/// CI's name of a Rust target architecture.
pub fn arch_name(rust_arch: &str) -> &str {
    match rust_arch {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}

impl Machine {
    /// From a `/proc/cpuinfo` text (first `model name`; cores = `processor` entries, else
    /// `fallback_cores`), this build's architecture, no load average.
    pub fn from_cpuinfo(cpuinfo: &str, fallback_cores: usize) -> Machine {
        let field = |l: &str, name: &str| -> Option<String> {
            let (k, v) = l.split_once(':')?;
            (k.trim() == name).then(|| v.trim().to_string())
        };
        let cpu = cpuinfo
            .lines()
            .find_map(|l| {
                field(l, "model name")
                    .or_else(|| field(l, "CPU part").map(|p| format!("CPU part {p}")))
            })
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "unknown CPU".to_string());
        let n = cpuinfo
            .lines()
            .filter(|l| field(l, "processor").is_some())
            .count();
        Machine {
            cpu,
            cores: if n > 0 { n } else { fallback_cores },
            arch: arch_name(std::env::consts::ARCH).to_string(),
            load: None,
        }
    }

    /// This machine (`/proc/cpuinfo`, else the available parallelism) and its load now.
    pub fn current() -> Machine {
        let fallback = std::thread::available_parallelism().map_or(1, |n| n.get());
        let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let mut m = Machine::from_cpuinfo(&text, fallback);
        m.load = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .filter(|l| !l.is_empty());
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_parsing() {
        let t = r#"{"mean":{"point_estimate":12.5},"median":{"point_estimate":11.0}}"#;
        assert_eq!(parse_estimate(t, Stat::Mean), Ok(12.5));
        assert_eq!(parse_estimate(t, Stat::Median), Ok(11.0));
        assert!(parse_estimate(r#"{"mean":{}}"#, Stat::Mean).is_err());
        assert!(parse_estimate(r#"{"mean":{"point_estimate":"x"}}"#, Stat::Mean).is_err());
        assert!(parse_estimate(r#"{"mean":{"point_estimate":-1}}"#, Stat::Mean).is_err());
        assert!(parse_estimate("not json", Stat::Mean).is_err());
        assert_eq!("mean".parse::<Stat>(), Ok(Stat::Mean));
        assert!("avg".parse::<Stat>().is_err());
    }

    #[test]
    fn machine_from_cpuinfo() {
        let here = arch_name(std::env::consts::ARCH).to_string();
        let t = "processor\t: 0\nmodel name\t: Test CPU 3000\nprocessor\t: 1\nmodel name\t: Test CPU 3000\n";
        assert_eq!(
            Machine::from_cpuinfo(t, 7),
            Machine {
                cpu: "Test CPU 3000".into(),
                cores: 2,
                arch: here.clone(),
                load: None,
            }
        );
        assert_eq!(
            Machine::from_cpuinfo("", 7),
            Machine {
                cpu: "unknown CPU".into(),
                cores: 7,
                arch: here.clone(),
                load: None,
            }
        );
        // arm64 cpuinfo has no model name, only the part number
        let arm = "processor\t: 0\nCPU part\t: 0xd0c\n";
        assert_eq!(Machine::from_cpuinfo(arm, 1).cpu, "CPU part 0xd0c");
        assert_eq!(arch_name("x86_64"), "amd64");
        assert_eq!(arch_name("aarch64"), "arm64");
        assert_eq!(arch_name("riscv64"), "riscv64");
    }
}
