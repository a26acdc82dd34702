//! Recording the official writer's page-level effects: the one writer's power-loss plan
//! ([`crate::writer::Plan::Powerloss`]: the fault suite's seeded ops with `sync()` after about
//! one op in 16) run with `--steps` by the official library in a child process. After the
//! open and after every official call the writer waits while the parent copies both files as
//! `read()` returns them (the page cache holds what the mapping wrote); the parent derives,
//! per call, the pages that changed and the sync points. A page is the writer's page size
//! (the official library's `--page-size`; 4 KiB by default): the unit the kernel of a device
//! with that page size writes back.
//!
//! Where the official library makes a file durable (upstream `MMKV.cpp` / `MMKV_IO.cpp`):
//! `sync(MMKV_SYNC)` msyncs both files; a full write-back (expansion, trim, overflow) ends
//! with `sync(MMKV_SYNC)` and increases the meta's sequence; `clearAll` (and enabling key
//! expiration on a new file) increases the sequence and msyncs only the meta file. A file that
//! shrinks (`trim`, `clearAll`) is cut after that sync: the cut stays pending until the next.

use std::path::Path;

use crate::differential::workload::Op;
use crate::error::{Error, Result};
use crate::vocab::kind::{Features, StoreKind};
use crate::vocab::{actual_size, le32, STORE_ID};
use crate::writer::child::ChildExe;
use crate::writer::{run_steps, start, Call, Plan, WriterSpec};

/// Page size of the model when the writer's is not chosen (the official library maps files in
/// whole pages of its page size; see [`Recording::page`]).
pub const PAGE: usize = 4096;

/// Sector size of the model (torn pages are cut at these boundaries).
pub const SECTOR: usize = 512;

/// The writer of a recording: the power-loss plan of `ops` ops with `seed`, stepped.
pub fn spec(kind: StoreKind, seed: u64, ops: usize) -> WriterSpec {
    WriterSpec {
        seed,
        kind,
        steps: true,
        ..WriterSpec::new(Plan::Powerloss, ops, 0)
    }
}

/// Short label of an op (`set k3`, `remove k1`, `clearAll`, `trim`).
pub fn label(op: &Op) -> String {
    let k = |k: &[u8]| {
        String::from_utf8_lossy(k)
            .chars()
            .take(12)
            .collect::<String>()
    };
    match op {
        Op::Set { key, .. } => format!("set {}", k(&key.0)),
        Op::Remove { key } => format!("remove {}", k(&key.0)),
        Op::ClearAll => "clearAll".into(),
        Op::Trim => "trim".into(),
        other => format!("{other:?}"),
    }
}

/// Why a file is durable after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncKind {
    /// The store as opened (and key expiration enabled): the start of the run.
    Open,
    /// `sync(MMKV_SYNC)`.
    Explicit,
    /// A full write-back (`sync(MMKV_SYNC)` of both files).
    WriteBack,
    /// `clearAll` / a new file's meta update: the meta file alone is msynced.
    MetaOnly,
}

/// Both files after one official call.
#[derive(Debug, Clone)]
pub struct Step {
    /// The call (`open` for step 0).
    pub label: String,
    /// The data file's bytes.
    pub data: Vec<u8>,
    /// The meta (`.crc`) file's bytes.
    pub meta: Vec<u8>,
    /// The data file is durable after this step (and why).
    pub data_sync: Option<SyncKind>,
    /// The meta file is durable after this step (and why).
    pub meta_sync: Option<SyncKind>,
}

impl Step {
    /// The bytes of file `f` (0 data, 1 meta).
    pub fn file(&self, f: usize) -> &[u8] {
        if f == 0 {
            &self.data
        } else {
            &self.meta
        }
    }

    /// Whether file `f` is durable after this step.
    pub fn synced(&self, f: usize) -> bool {
        if f == 0 {
            self.data_sync.is_some()
        } else {
            self.meta_sync.is_some()
        }
    }
}

/// A recorded run: every step's files and sync points.
#[derive(Debug, Clone)]
pub struct Recording {
    /// The official version that wrote it.
    pub tag: String,
    /// Store configuration.
    pub kind: StoreKind,
    /// Seed of the plan.
    pub seed: u64,
    /// The writer's page size (bytes): the unit pages are written back in.
    pub page: usize,
    /// Step 0 (the open) then one step per call.
    pub steps: Vec<Step>,
}

/// The meta's sequence field.
fn sequence(meta: &[u8]) -> u32 {
    le32(meta, mmkv_reader::meta::OFF_SEQUENCE)
}

/// Derives the sync points of raw steps `(label, explicit sync, data, meta)`.
pub fn classify_steps(raw: Vec<(String, bool, Vec<u8>, Vec<u8>)>) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::with_capacity(raw.len());
    for (i, (label, explicit, data, meta)) in raw.into_iter().enumerate() {
        let (data_sync, meta_sync) = if i == 0 {
            (Some(SyncKind::Open), Some(SyncKind::Open))
        } else if explicit {
            (Some(SyncKind::Explicit), Some(SyncKind::Explicit))
        } else if sequence(&meta) != sequence(&steps[i - 1].meta) {
            if actual_size(&data, &meta) == 0 {
                (None, Some(SyncKind::MetaOnly))
            } else {
                (Some(SyncKind::WriteBack), Some(SyncKind::WriteBack))
            }
        } else {
            (None, None)
        };
        steps.push(Step {
            label,
            data,
            meta,
            data_sync,
            meta_sync,
        });
    }
    steps
}

/// Records the power-loss plan of (`seed`, `ops`) run by official `tag` (whose features are
/// `features`) with `kind` in a stepped writer child, using `work` as scratch space.
pub fn record(
    exe: &ChildExe,
    tag: &str,
    features: &Features,
    kind: StoreKind,
    seed: u64,
    ops: usize,
    work: &Path,
) -> Result<Recording> {
    let dir = work.join("store");
    let _ = std::fs::remove_dir_all(work);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let spec = spec(kind, seed, ops);
    let plan = spec.ops(features);
    let data = dir.join(STORE_ID);
    let meta = mmkv_reader::meta_path(&data);
    let mut raw = Vec::with_capacity(plan.len() + plan.len() / 8 + 1);
    let child = start(exe, tag, &dir, &spec)?;
    let done = run_steps(child, |call| {
        let (label, explicit) = match call {
            Call::Open => ("open".to_string(), true),
            Call::Op(i) => {
                let op = plan
                    .get(i)
                    .ok_or_else(|| Error::Other(format!("op {i} is past the plan")))?;
                (label(op), false)
            }
            Call::Sync => ("sync".to_string(), true),
        };
        let read = |p: &Path| std::fs::read(p).map_err(|e| Error::io(p, e));
        raw.push((label, explicit, read(&data)?, read(&meta)?));
        Ok(())
    })?;
    if done.ops != plan.len() as u64 {
        return Err(Error::Other(format!(
            "power-loss recorder {tag} {kind} seed {seed}: {} ops done, the plan has {}",
            done.ops,
            plan.len()
        )));
    }
    let _ = std::fs::remove_dir_all(work);
    Ok(Recording {
        tag: tag.to_string(),
        kind,
        seed,
        page: writer_page(exe),
        steps: classify_steps(raw),
    })
}

/// The page size the writer children of `exe` run with: the one it passes them, else the one
/// they inherit (this process's official page size).
pub fn writer_page(exe: &ChildExe) -> usize {
    let size = exe.official_page_size();
    usize::try_from(size).unwrap_or(PAGE)
}

/// Page `p` (of `page` bytes) of `bytes`, zero-filled past its end (what a file extended by
/// `ftruncate` reads).
pub fn page_of(bytes: &[u8], p: usize, page: usize) -> Vec<u8> {
    let mut out = vec![0u8; page];
    let at = p * page;
    if at < bytes.len() {
        let n = (bytes.len() - at).min(page);
        out[..n].copy_from_slice(&bytes[at..at + n]);
    }
    out
}

/// The pages (of `page` bytes) in which `a` and `b` differ (each zero-filled to the longer
/// length).
pub fn changed_pages(a: &[u8], b: &[u8], page: usize) -> Vec<usize> {
    let pages = a.len().max(b.len()).div_ceil(page);
    (0..pages)
        .filter(|&p| page_of(a, p, page) != page_of(b, p, page))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_pages_zero_fill_the_shorter_file() {
        let a = vec![0u8; 3 * PAGE];
        let mut b = a.clone();
        b[PAGE + 7] = 1;
        assert_eq!(changed_pages(&a, &b, PAGE), vec![1]);
        assert_eq!(changed_pages(&a, &b, 4 * PAGE), vec![0], "one 16 KiB page");
        // growing with zeros changes no page; with data it changes the new page
        assert!(changed_pages(&a, &vec![0u8; 5 * PAGE], PAGE).is_empty());
        let mut c = vec![0u8; 4 * PAGE];
        c[3 * PAGE] = 9;
        assert_eq!(changed_pages(&a, &c, PAGE), vec![3]);
        assert_eq!(page_of(&c, 3, PAGE)[0], 9);
        assert_eq!(page_of(&c, 9, PAGE), [0u8; PAGE]);
    }

    #[test]
    fn sync_points_follow_the_sequence_and_explicit_syncs() {
        let meta = |seq: u32, size: u32| {
            let mut m = vec![0u8; 112];
            m[4..8].copy_from_slice(&3u32.to_le_bytes());
            m[8..12].copy_from_slice(&seq.to_le_bytes());
            m[28..32].copy_from_slice(&size.to_le_bytes());
            m
        };
        let raw = vec![
            ("open".to_string(), true, vec![0; 8], meta(1, 0)),
            ("set a".to_string(), false, vec![1; 8], meta(1, 4)),
            ("set b".to_string(), false, vec![2; 8], meta(2, 8)),
            ("clearAll".to_string(), false, vec![0; 8], meta(3, 0)),
            ("sync".to_string(), true, vec![0; 8], meta(3, 0)),
        ];
        let s = classify_steps(raw);
        assert_eq!(s[0].data_sync, Some(SyncKind::Open));
        assert_eq!((s[1].data_sync, s[1].meta_sync), (None, None));
        assert_eq!(s[2].data_sync, Some(SyncKind::WriteBack));
        assert_eq!(
            (s[3].data_sync, s[3].meta_sync),
            (None, Some(SyncKind::MetaOnly))
        );
        assert_eq!(s[4].data_sync, Some(SyncKind::Explicit));
    }
}
