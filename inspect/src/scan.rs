//! `mmkv scan DIR`: find every store below a directory and summarise each. Never writes anything.
//!
//! A store is a file with a sibling `NAME.crc`, a file named like MMKV's default instance
//! (`mmkv.default`, listed even without its meta so the missing file shows up as its error), or a
//! `NAME.crc` without its data file (listed with that error). Symbolic links are not followed.

use std::collections::BTreeSet;
use std::fs;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use crate::analysis::{Analysis, CryptOpts};
use crate::error::{Error, Result};

/// File names MMKV gives its default instances.
pub const DEFAULT_NAMES: &[&str] = &["mmkv.default"];

/// One row of the scan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScanRow {
    /// The data file.
    pub path: String,
    /// Live entries (null when the store could not be read).
    pub entries: Option<usize>,
    /// Superseded records.
    pub superseded: Option<usize>,
    /// Removed records (deletion markers and the values they removed).
    pub removed: Option<usize>,
    /// Expired records.
    pub expired: Option<usize>,
    /// `yes` (the region does not parse as plaintext), `no` (it parses, with printable UTF-8 keys),
    /// `unknown` (no records to judge by, or keys that are not text).
    pub encrypted: &'static str,
    /// Meta version.
    pub meta_version: Option<u32>,
    /// The stored region's CRC-32 matches the meta.
    pub crc_ok: Option<bool>,
    /// Length of the data region (actual size).
    pub data_size: Option<usize>,
    /// Length of the data file.
    pub file_size: Option<usize>,
    /// The page size the store was read with (null when none could be chosen).
    pub page_size: Option<u64>,
    /// Why that page size: `inferred` (from the `.crc` length), `host_not_inferred`, `host` or
    /// `given` (`--page-size`).
    pub page_size_source: Option<&'static str>,
    /// Why the store could not be read (null when it could).
    pub error: Option<String>,
}

/// A directory that could not be listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WalkError {
    /// The directory.
    pub path: String,
    /// The error.
    pub error: String,
}

/// `mmkv scan --json`.
#[derive(Debug, Clone, Serialize)]
pub struct ScanJson {
    /// The directory walked.
    pub root: String,
    /// One row per store, sorted by path.
    pub stores: Vec<ScanRow>,
    /// Directories that could not be listed.
    pub walk_errors: Vec<WalkError>,
}

/// Finds every store below `dir` (sorted paths of data files) and the directories that could not
/// be listed. Fails only when `dir` itself cannot be listed.
pub fn find_stores(dir: &Path) -> Result<(Vec<PathBuf>, Vec<WalkError>)> {
    let meta = fs::metadata(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(Error::BadArgument(format!(
            "{}: not a directory",
            dir.display()
        )));
    }
    fs::read_dir(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut stores = BTreeSet::new();
    let mut errors = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = match fs::read_dir(&d) {
            Ok(e) => e,
            Err(e) => {
                errors.push(WalkError {
                    path: d.display().to_string(),
                    error: e.to_string(),
                });
                continue;
            }
        };
        let mut files = BTreeSet::new();
        for entry in entries.flatten() {
            let Ok(ft) = entry.file_type() else { continue };
            if ft.is_dir() {
                stack.push(entry.path());
            } else if ft.is_file() {
                files.insert(entry.file_name());
            }
        }
        for name in &files {
            let Some(text) = name.to_str() else {
                // Non-UTF-8 names: a store only if its `.crc` sibling exists.
                let crc = mmkv_reader::meta_path(Path::new(name));
                if files.contains(crc.as_os_str()) {
                    stores.insert(d.join(name));
                }
                continue;
            };
            if let Some(base) = text.strip_suffix(".crc") {
                if !base.is_empty() {
                    // `X.crc` always names a store `X` (listed with an error if `X` is missing).
                    stores.insert(d.join(base));
                }
            } else if DEFAULT_NAMES.contains(&text) {
                stores.insert(d.join(name));
            }
        }
    }
    Ok((stores.into_iter().collect(), errors))
}

fn printable_text(key: &[u8]) -> bool {
    std::str::from_utf8(key).is_ok_and(|s| s.chars().all(|c| !c.is_control()))
}

/// Summarises one store. Never fails: problems go into `error`.
pub fn scan_store(path: &Path, crypt: &CryptOpts, now: u32) -> ScanRow {
    let mut row = ScanRow {
        path: path.display().to_string(),
        entries: None,
        superseded: None,
        removed: None,
        expired: None,
        encrypted: "unknown",
        meta_version: None,
        crc_ok: None,
        data_size: None,
        file_size: None,
        page_size: None,
        page_size_source: None,
        error: None,
    };
    if !path.is_file() {
        row.error = Some(format!("data file {} not found", path.display()));
        return row;
    }
    match crypt.page_size(path) {
        Ok(page) => {
            row.page_size = Some(page.size);
            row.page_size_source = Some(page.source.as_str());
        }
        Err(e) => {
            row.error = Some(e.to_string());
            return row;
        }
    }
    let plain = CryptOpts {
        key: None,
        aes256: false,
        ..crypt.clone()
    };
    match crate::analysis::read(path, &plain) {
        Ok(raw) => {
            row.meta_version = Some(raw.meta.version);
            row.crc_ok = Some(raw.crc_ok);
            row.data_size = Some(raw.actual_size);
            row.file_size = Some(raw.file.len());
            if let Some(msg) = crate::analysis::discard_message(&raw) {
                row.error = Some(msg);
                return row;
            }
        }
        Err(e) => {
            row.error = Some(e.to_string());
            return row;
        }
    }
    let result = match Analysis::open(path, &plain, now) {
        Ok(a) => {
            row.encrypted = if a.records.is_empty() {
                "unknown"
            } else if a.records.iter().all(|r| printable_text(&r.key)) {
                "no"
            } else {
                "unknown"
            };
            Ok(a)
        }
        Err(e @ Error::Unparsable { .. }) => {
            row.encrypted = "no";
            Err(Some(e.to_string()))
        }
        Err(Error::LooksEncrypted { .. }) => {
            row.encrypted = "yes";
            if crypt.key.is_some() {
                Analysis::open(path, crypt, now).map_err(|e| Some(e.to_string()))
            } else {
                Err(None)
            }
        }
        Err(e) => Err(Some(e.to_string())),
    };
    match result {
        Ok(a) => {
            let c = a.counts();
            row.entries = Some(c.live);
            row.superseded = Some(c.superseded);
            row.removed = Some(c.removed);
            row.expired = Some(c.expired);
        }
        Err(e) => row.error = e,
    }
    row
}

/// Scans `dir`, with a progress bar on stderr when stderr is a terminal.
pub fn scan(dir: &Path, crypt: &CryptOpts, now: u32) -> Result<ScanJson> {
    let (paths, walk_errors) = find_stores(dir)?;
    let bar = if std::io::stderr().is_terminal() {
        let b =
            ProgressBar::with_draw_target(Some(paths.len() as u64), ProgressDrawTarget::stderr());
        if let Ok(style) =
            ProgressStyle::with_template("{spinner} [{bar:40}] {pos}/{len} stores  {wide_msg}")
        {
            b.set_style(style.progress_chars("=> "));
        }
        b
    } else {
        ProgressBar::hidden()
    };
    let mut stores = Vec::with_capacity(paths.len());
    for p in &paths {
        bar.set_message(p.display().to_string());
        stores.push(scan_store(p, crypt, now));
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(ScanJson {
        root: dir.display().to_string(),
        stores,
        walk_errors,
    })
}

/// The one-line stderr note of a scan: the page sizes its stores were read with, and why.
pub fn page_note(s: &ScanJson) -> String {
    let mut counts = std::collections::BTreeMap::<(u64, &str), usize>::new();
    for r in &s.stores {
        if let (Some(size), Some(source)) = (r.page_size, r.page_size_source) {
            *counts.entry((size, source)).or_default() += 1;
        }
    }
    let parts: Vec<String> = counts
        .iter()
        .map(|((size, source), n)| format!("{n} at {size} ({})", source_words(source)))
        .collect();
    if parts.is_empty() {
        "page sizes: no store read".to_string()
    } else {
        format!("page sizes: {}", parts.join(", "))
    }
}

/// What a page-size source word means, for [`page_note`].
fn source_words(source: &str) -> &'static str {
    match source {
        "inferred" => "inferred from the .crc length",
        "host_not_inferred" => "this machine's page: .crc not one 4, 16 or 64 KiB page",
        "given" => "given",
        _ => "this machine's page",
    }
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map_or_else(|| "-".into(), ToString::to_string)
}

/// The readable table of a scan.
pub fn scan_table(s: &ScanJson) -> String {
    let mut out = String::new();
    let rows: Vec<[String; 10]> = s
        .stores
        .iter()
        .map(|r| {
            [
                r.path.clone(),
                opt(&r.entries),
                opt(&r.superseded),
                opt(&r.removed),
                r.encrypted.to_string(),
                opt(&r.meta_version),
                r.crc_ok
                    .map_or("-", |ok| if ok { "ok" } else { "MISMATCH" })
                    .to_string(),
                opt(&r.data_size),
                opt(&r.page_size),
                r.error.clone().unwrap_or_default(),
            ]
        })
        .collect();
    crate::output::table(
        &mut out,
        &[
            "PATH",
            "ENTRIES",
            "SUPERSEDED",
            "REMOVED",
            "ENCRYPTED",
            "META",
            "CRC",
            "SIZE",
            "PAGE",
            "ERROR",
        ],
        &rows,
    );
    let errors = s.stores.iter().filter(|r| r.error.is_some()).count();
    out.push_str(&format!(
        "{} stores, {} unreadable, {} encrypted without a usable key\n",
        s.stores.len(),
        errors,
        s.stores
            .iter()
            .filter(|r| r.encrypted == "yes" && r.entries.is_none())
            .count()
    ));
    for w in &s.walk_errors {
        out.push_str(&format!("cannot list {}: {}\n", w.path, w.error));
    }
    out
}
