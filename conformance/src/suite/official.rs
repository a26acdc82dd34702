//! The official answers of the suite: copies of a case's files reopened by one official
//! version with one error strategy, in child processes (`conformance faults read`: a crash
//! or a hang of the library on a damaged store cannot take `build` or `verify` down), and the
//! conversion of what it read into [`Answer`] entries.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::Path;

use mmkv_sys::ErrorStrategy;

use crate::corpus::golden::{Entry as ManifestEntry, TypedEntry};
use crate::error::{Error, Result};
use crate::fault::official::spawn_reads;
use crate::sides::reads::{OfficialOutcome, Reads};
use crate::suite::case::Entry;
use crate::vocab::kind::StoreKind;
use crate::vocab::names::STORE_ID;
use crate::vocab::pool::run_in_order;
use crate::vocab::value::{hex_bytes, ValueType};
use crate::writer::child::ChildExe;

/// Stores one child reads (one version loaded once for all of them).
const PER_CHILD: usize = 24;

/// The files of one store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Files {
    /// The data file.
    pub data: Vec<u8>,
    /// The meta file (`None`: missing).
    pub meta: Option<Vec<u8>>,
}

impl Files {
    /// Reads `dir/<id>` and `dir/<id>.crc` (following symlinks).
    pub fn read(dir: &Path, data: &str, meta: &str) -> Result<Files> {
        let d = dir.join(data);
        let m = dir.join(meta);
        Ok(Files {
            data: std::fs::read(&d).map_err(|e| Error::io(&d, e))?,
            meta: match std::fs::read(&m) {
                Ok(b) => Some(b),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(Error::io(&m, e)),
            },
        })
    }

    /// Writes them as store `id` in `dir`.
    pub fn write(&self, dir: &Path, id: &str) -> Result<()> {
        let d = dir.join(id);
        std::fs::write(&d, &self.data).map_err(|e| Error::io(&d, e))?;
        if let Some(m) = &self.meta {
            let p = mmkv_reader::meta_path(&d);
            std::fs::write(&p, m).map_err(|e| Error::io(&p, e))?;
        }
        Ok(())
    }
}

/// One official read: `tag` opens copies of `files` as `kind` with `strategy`.
#[derive(Debug, Clone)]
pub struct Job<'a> {
    /// The official version.
    pub tag: String,
    /// How it opens the store.
    pub kind: StoreKind,
    /// The error strategy.
    pub strategy: ErrorStrategy,
    /// The store.
    pub files: &'a Files,
    /// The page size of the official library (its child gets it, see
    /// [`ChildExe::with_page_size`]).
    pub page_size: u64,
}

/// Runs every job (grouped by version, kind and page size, [`PER_CHILD`] per child, `threads` children at
/// a time, on the shared pool) and returns one outcome per job, in order; the first error in
/// the groups' order ends the run.
pub fn run_jobs(exe: &ChildExe, jobs: &[Job<'_>], threads: usize) -> Result<Vec<OfficialOutcome>> {
    let mut groups: BTreeMap<(String, StoreKind, u64), Vec<usize>> = BTreeMap::new();
    for (i, j) in jobs.iter().enumerate() {
        groups
            .entry((j.tag.clone(), j.kind, j.page_size))
            .or_default()
            .push(i);
    }
    let mut work: Vec<(String, StoreKind, u64, Vec<usize>)> = Vec::new();
    for ((tag, kind, page), idx) in groups {
        for chunk in idx.chunks(PER_CHILD) {
            work.push((tag.clone(), kind, page, chunk.to_vec()));
        }
    }
    let mut results: Vec<Option<OfficialOutcome>> = vec![None; jobs.len()];
    run_in_order(
        work,
        threads,
        |(tag, kind, page, idx)| {
            let exe = exe.clone().with_page_size(page);
            run_group(&exe, &tag, kind, &idx, jobs).map(|out| (idx, out))
        },
        |done: Result<_>| {
            let (idx, out) = done?;
            for (i, o) in idx.into_iter().zip(out) {
                results[i] = Some(o);
            }
            Ok::<_, Error>(ControlFlow::Continue(()))
        },
    )?;
    Ok(results
        .into_iter()
        .map(|o| o.unwrap_or(OfficialOutcome::Failed("not run".into())))
        .collect())
}

/// One child for jobs `idx` (all of `tag` and `kind`): discard runs first, then recover runs,
/// as the child reads them.
fn run_group(
    exe: &ChildExe,
    tag: &str,
    kind: StoreKind,
    idx: &[usize],
    jobs: &[Job<'_>],
) -> Result<Vec<OfficialOutcome>> {
    let tmp = tempfile::tempdir().map_err(|e| Error::Other(format!("tempdir: {e}")))?;
    let mut order: Vec<usize> = idx.to_vec();
    order.sort_by_key(|&i| matches!(jobs[i].strategy, ErrorStrategy::Recover));
    let mut dirs = Vec::new();
    for (n, &i) in order.iter().enumerate() {
        let d = tmp.path().join(n.to_string());
        std::fs::create_dir(&d).map_err(|e| Error::io(&d, e))?;
        jobs[i].files.write(&d, STORE_ID)?;
        dirs.push(d);
    }
    let runs: Vec<(ErrorStrategy, &Path)> = order
        .iter()
        .zip(&dirs)
        .map(|(&i, d)| (jobs[i].strategy, d.as_path()))
        .collect();
    let outcomes = spawn_reads(exe, tag, kind, &runs)?;
    let mut by_job: BTreeMap<usize, OfficialOutcome> = order.into_iter().zip(outcomes).collect();
    Ok(idx
        .iter()
        .map(|i| {
            by_job
                .remove(i)
                .unwrap_or(OfficialOutcome::Failed("no outcome".into()))
        })
        .collect())
}

/// The entries of an official read: every key it lists, its value read with the writer's type
/// from `types` and encoded back into the payload the writer stored; `expire_at` from
/// `expire` (the official API does not expose it). A key whose type is unknown, or whose typed
/// getter returns nothing, has no payload, type or value.
pub fn entries_of(
    reads: &Reads,
    types: &dyn Fn(&[u8]) -> Option<ValueType>,
    expire: &dyn Fn(&[u8]) -> Option<u32>,
) -> Vec<Entry> {
    let mut out = Vec::new();
    for (key, row) in &reads.keys {
        let typed = types(key).and_then(|ty| {
            let at = reads.getters.iter().position(|&t| t == ty)?;
            let v = row[at].as_ref()?;
            Some((
                ty,
                v.payload()?,
                ManifestEntry::from_value("", v, None).value,
            ))
        });
        let (ty, payload, value) = match typed {
            Some((t, p, v)) => (
                Some(t.name().to_string()),
                Some(hex_bytes::encode(&p)),
                Some(v),
            ),
            None => (None, None, None),
        };
        out.push(Entry {
            key_hex: hex_bytes::encode(key),
            payload_hex: payload,
            ty,
            value,
            expire_at: expire(key),
        });
    }
    out
}

/// Differences between an expected entry list and an official read of the same store (the
/// official side re-encoded with the expected types; expire times are not compared: the
/// official API does not expose them).
pub fn differences(expected: &[Entry], reads: &Reads) -> Vec<String> {
    let types: BTreeMap<Vec<u8>, ValueType> = expected
        .iter()
        .filter_map(|e| {
            Some((
                hex_bytes::decode(&e.key_hex)?,
                e.ty.as_deref()?.parse().ok()?,
            ))
        })
        .collect();
    let got: BTreeMap<String, Entry> = entries_of(reads, &|k| types.get(k).copied(), &|_| None)
        .into_iter()
        .map(|e| (e.key_hex.clone(), e))
        .collect();
    let want: BTreeMap<&str, &Entry> = expected.iter().map(|e| (e.key_hex.as_str(), e)).collect();
    let mut out = Vec::new();
    for k in got.keys() {
        if !want.contains_key(k.as_str()) {
            out.push(format!("official lists key {k}, not expected"));
        }
    }
    for (k, w) in &want {
        match got.get(*k) {
            None => out.push(format!("key {k} expected, official does not list it")),
            Some(g)
                if (g.payload_hex.as_ref(), g.ty.as_ref(), g.value.as_ref())
                    != (w.payload_hex.as_ref(), w.ty.as_ref(), w.value.as_ref()) =>
            {
                out.push(format!(
                    "key {k}: expected {:?} {:?} ({:?}), official {:?} ({:?})",
                    w.ty, w.value, w.payload_hex, g.value, g.payload_hex
                ))
            }
            Some(_) => {}
        }
    }
    out
}

/// A one-line description of an outcome that is not a read.
pub fn describe(o: &OfficialOutcome) -> String {
    match o {
        OfficialOutcome::Read(r) => format!("read {} keys", r.len()),
        OfficialOutcome::Failed(m) => format!("failed: {m}"),
        OfficialOutcome::Crashed(m) => format!("crashed: {m}"),
        OfficialOutcome::Hung => "hung".to_string(),
    }
}
