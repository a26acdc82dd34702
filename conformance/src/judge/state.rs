//! Judging one damaged state of the fault suite: the official outcome against the reader's.
//! A difference is accepted only as a row of [`crate::judge::exceptions::TABLE`] whose
//! recogniser ([`crate::judge::recognise`]) explains it; anything else is a disagreement,
//! which fails the suite.

use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;

use mmkv_sys::ErrorStrategy;

use crate::error::Result;
use crate::judge::compare::agrees;
use crate::judge::exceptions::{accepted, count_uses, Difference, Scope, TABLE};
use crate::judge::recognise::{
    copy_store, crypt_loader_misjudged_in, empty_payload_keys, meta_version, overlong_lazy_keys,
    rewrite_specious_meta, short_expire_value_keys, zero_fill_like_official,
};
use crate::sides::reads::{read_dump, OfficialOutcome, ReaderFn, ReaderOutcome, ReaderPath, Reads};
use crate::vocab::kind::{Features, StoreKind};
use crate::vocab::value::show;
use crate::vocab::STORE_ID;

/// Verdicts of one state per strategy and reader path.
pub type Verdicts = Vec<(ErrorStrategy, ReaderPath, Verdict)>;

/// Some verdict is an unexplained difference.
pub fn disagrees(verdicts: &[(ErrorStrategy, ReaderPath, Verdict)]) -> bool {
    verdicts
        .iter()
        .any(|(_, _, v)| matches!(v, Verdict::Disagree(_)))
}

/// Some verdict is an upstream finding (the official library crashed, hung or failed).
pub fn upstream(verdicts: &[(ErrorStrategy, ReaderPath, Verdict)]) -> bool {
    verdicts
        .iter()
        .any(|(_, _, v)| matches!(v, Verdict::Upstream(_)))
}

/// The verdict on one (state, strategy).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Same keys, and every getter agrees on every key.
    Agree,
    /// The reader refused the store (typed error) where the official library discarded it
    /// (opened it empty): both expose no key.
    RefusedDiscarded,
    /// A difference from the exceptions table (a fault-suite row, recognised by its check).
    Exception(Difference),
    /// Differences of several rows in one state, recognised together (in table order).
    Exceptions(Vec<Difference>),
    /// The official library crashed, hung or failed: an upstream finding, not a reader failure.
    Upstream(String),
    /// An unexplained difference: fails the suite (details).
    Disagree(String),
}

impl Verdict {
    /// Short label for summaries.
    pub fn label(&self) -> String {
        match self {
            Verdict::Agree => "agree".into(),
            Verdict::RefusedDiscarded => "refused=discarded".into(),
            Verdict::Exception(e) => format!("exception:{}", e.code()),
            Verdict::Exceptions(es) => {
                let codes: Vec<&str> = es.iter().map(|e| e.code()).collect();
                format!("exception:{}", codes.join("+"))
            }
            Verdict::Upstream(_) => "upstream-finding".into(),
            Verdict::Disagree(_) => "DISAGREE".into(),
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Upstream(s) | Verdict::Disagree(s) => write!(f, "{}: {s}", self.label()),
            _ => f.write_str(&self.label()),
        }
    }
}

/// The differences between two read sets, at most `max` lines (empty when they agree).
pub fn diff_reads(scope: &Scope, official: &Reads, reader: &Reads, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    let lossy = |k: &[u8]| String::from_utf8_lossy(k).into_owned();
    for k in official
        .keys
        .keys()
        .filter(|k| !reader.keys.contains_key(*k))
    {
        out.push(format!("key {:?}: official has it, reader not", lossy(k)));
    }
    for k in reader
        .keys
        .keys()
        .filter(|k| !official.keys.contains_key(*k))
    {
        out.push(format!("key {:?}: reader has it, official not", lossy(k)));
    }
    for (k, o) in &official.keys {
        let Some(r) = reader.keys.get(k) else {
            continue;
        };
        for (i, ty) in official.getters.iter().enumerate() {
            let ri = reader.getters.iter().position(|t| t == ty);
            let rv = ri.and_then(|i| r.get(i)).cloned().flatten();
            let ov = o.get(i).cloned().flatten();
            if !agrees(scope, *ty, &ov, &rv) {
                out.push(format!(
                    "key {:?} get {ty}: official {} | reader {}",
                    lossy(k),
                    show(&ov),
                    show(&rv)
                ));
            }
        }
    }
    out.truncate(max);
    out
}

/// Judges one state without exceptions: agree, refused = discarded, upstream, or a
/// difference (returned as `Disagree` for the caller to try the exceptions on).
pub fn judge(scope: &Scope, official: &OfficialOutcome, reader: &ReaderOutcome) -> Verdict {
    match (official, reader) {
        (OfficialOutcome::Crashed(s), _) => Verdict::Upstream(format!("official crashed: {s}")),
        (OfficialOutcome::Hung, _) => Verdict::Upstream("official hung".into()),
        (OfficialOutcome::Failed(s), _) => Verdict::Upstream(format!("official failed: {s}")),
        (OfficialOutcome::Read(o), Err(e)) => {
            if o.is_empty() {
                Verdict::RefusedDiscarded
            } else {
                Verdict::Disagree(format!(
                    "reader refused ({e}), official read {} keys",
                    o.len()
                ))
            }
        }
        (OfficialOutcome::Read(o), Ok(r)) => {
            let d = diff_reads(scope, o, r, 6);
            if d.is_empty() {
                Verdict::Agree
            } else {
                Verdict::Disagree(format!(
                    "official {} keys, reader {} keys: {}",
                    o.len(),
                    r.len(),
                    d.join("; ")
                ))
            }
        }
    }
}

/// Judges one (state, strategy, reader path), trying the exceptions on a difference:
/// `reader` is what `reader_fn` read from the state in `dir`, written and read on pages of
/// `page` bytes.
#[allow(clippy::too_many_arguments)]
pub fn classify(
    reader_fn: ReaderFn,
    features: &Features,
    scope: &Scope,
    dir: &Path,
    kind: StoreKind,
    strategy: ErrorStrategy,
    page: u64,
    official: &OfficialOutcome,
    reader: &ReaderOutcome,
    scratch: &Path,
) -> Result<Verdict> {
    let v = judge(scope, official, reader);
    if !matches!(v, Verdict::Disagree(_)) {
        return Ok(v);
    }
    let ok = |v: &Verdict| matches!(v, Verdict::Agree | Verdict::RefusedDiscarded);
    let filled = scratch.join("zero-filled");
    let _ = std::fs::remove_dir_all(&filled);
    copy_store(dir, &filled)?;
    zero_fill_like_official(&filled, STORE_ID, page)?;
    let zr = reader_fn(&filled, kind, features, strategy, page);
    if accepted(Difference::ZeroFill, scope).is_some() && ok(&judge(scope, official, &zr)) {
        return Ok(Verdict::Exception(Difference::ZeroFill));
    }
    if accepted(Difference::SpeciousMetaV6, scope).is_some() && meta_version(dir) == Some(6) {
        let rewritten = scratch.join("specious-meta");
        let _ = std::fs::remove_dir_all(&rewritten);
        copy_store(dir, &rewritten)?;
        rewrite_specious_meta(&rewritten)?;
        let sr = reader_fn(&rewritten, kind, features, strategy, page);
        if ok(&judge(scope, official, &sr)) {
            return Ok(Verdict::Exception(Difference::SpeciousMetaV6));
        }
    }
    if let (Ok(r), OfficialOutcome::Read(o)) = (reader, official) {
        let lazy = match accepted(Difference::CryptOverlongLength, scope) {
            Some(_) => overlong_lazy_keys(dir, kind, strategy, page),
            None => Vec::new(),
        };
        if !lazy.is_empty() {
            let (mut o, mut r) = (o.clone(), r.clone());
            blank_values(&mut o, &lazy);
            blank_values(&mut r, &lazy);
            if ok(&judge(scope, &OfficialOutcome::Read(o), &Ok(r))) {
                return Ok(Verdict::Exception(Difference::CryptOverlongLength));
            }
        }
    }
    // On the files as they are, or zero-filled when `Store` refuses a short meta file.
    for (r, d) in [(reader, dir), (&zr, filled.as_path())] {
        let (Ok(r), OfficialOutcome::Read(o)) = (r, official) else {
            continue;
        };
        if let Some(differing) = crypt_loader_misjudged_in(scope, d, kind, strategy, page, o, r) {
            let without = |reads: &Reads| {
                let mut reads = reads.clone();
                drop_keys(&mut reads, |k| differing.contains(k));
                reads
            };
            let o = OfficialOutcome::Read(without(o));
            if ok(&judge(scope, &o, &Ok(without(r)))) {
                return Ok(Verdict::Exception(
                    Difference::OfficialMisloadsInlineRecords,
                ));
            }
        }
    }
    // `Store` refuses a short meta file that the official library reads zero-filled: the
    // empty-payload keys are then judged on the zero-filled files (both differences at once).
    let empty = empty_payload_keys(&[dir, &filled], kind, strategy, page);
    if accepted(Difference::EmptyPayloadKey, scope).is_some() && !empty.is_empty() {
        for r in [reader, &zr].into_iter().flatten() {
            let mut without = r.clone();
            drop_keys(&mut without, |k| empty.contains(k));
            if ok(&judge(scope, official, &Ok(without))) {
                return Ok(Verdict::Exception(Difference::EmptyPayloadKey));
            }
        }
    }
    // A short value's key the official library dropped while the reader keeps it.
    if let (Ok(r), OfficialOutcome::Read(o)) = (reader, official) {
        if accepted(Difference::ShortExpireValue, scope).is_some() {
            let short = short_expire_value_keys(dir, kind, strategy, page);
            if !short.is_empty() {
                let mut without = r.clone();
                drop_unlisted(&mut without, o, &short);
                if ok(&judge(scope, official, &Ok(without))) {
                    return Ok(Verdict::Exception(Difference::ShortExpireValue));
                }
            }
        }
    }
    // Several rows in one state: a flipped expire flag can leave short values and a value
    // that is only the expire suffix at once; a missing meta file read zero-filled can show
    // an overlong key. Every row's adjustment together, on the files as they are or (when
    // `Store` refuses a short meta file) zero-filled.
    let zero_fill = accepted(Difference::ZeroFill, scope).is_some();
    for (r, d, filled) in [(reader, dir, false), (&zr, filled.as_path(), true)] {
        let (Ok(r), OfficialOutcome::Read(o)) = (r, official) else {
            continue;
        };
        if filled && !zero_fill {
            continue;
        }
        let (mut r, mut o) = (r.clone(), o.clone());
        let mut rows = Vec::new();
        if filled {
            rows.push(Difference::ZeroFill);
        }
        if accepted(Difference::EmptyPayloadKey, scope).is_some() {
            let empty = empty_payload_keys(&[d], kind, strategy, page);
            if drop_keys(&mut r, |k| empty.contains(k)) {
                rows.push(Difference::EmptyPayloadKey);
            }
        }
        if accepted(Difference::ShortExpireValue, scope).is_some() {
            let short = short_expire_value_keys(d, kind, strategy, page);
            if drop_unlisted(&mut r, &o, &short) {
                rows.push(Difference::ShortExpireValue);
            }
        }
        if accepted(Difference::CryptOverlongLength, scope).is_some() {
            let lazy = overlong_lazy_keys(d, kind, strategy, page);
            // Both sides, as the row's own check above blanks them.
            let in_reader = blank_values(&mut r, &lazy);
            if blank_values(&mut o, &lazy) | in_reader {
                rows.push(Difference::CryptOverlongLength);
            }
        }
        if rows.len() >= 2 && ok(&judge(scope, &OfficialOutcome::Read(o), &Ok(r))) {
            rows.sort_by_key(|d| TABLE.iter().position(|e| e.difference == *d));
            return Ok(Verdict::Exceptions(rows));
        }
    }
    Ok(v)
}

/// Forgets every getter's value of `keys` in `reads` (the row reads no value there); true when
/// `reads` holds one of them.
fn blank_values(reads: &mut Reads, keys: &[Vec<u8>]) -> bool {
    let mut any = false;
    for (k, row) in reads.keys.iter_mut() {
        if keys.contains(k) {
            row.iter_mut().for_each(|v| *v = None);
            any = true;
        }
    }
    any
}

/// Removes from `reads` every key `drop` selects; true when any was removed.
fn drop_keys(reads: &mut Reads, drop: impl Fn(&Vec<u8>) -> bool) -> bool {
    let before = reads.keys.len();
    reads.keys.retain(|k, _| !drop(k));
    reads.keys.len() < before
}

/// Removes from `reader` the `keys` that `official` does not list (a short value's key the
/// official library dropped); true when any was removed.
fn drop_unlisted(reader: &mut Reads, official: &Reads, keys: &BTreeSet<Vec<u8>>) -> bool {
    drop_keys(reader, |k| {
        keys.contains(k) && !official.keys.contains_key(k)
    })
}

/// Verdicts per strategy and reader path (`reader` as `Store`, and [`read_dump`]) on the
/// store in `dir`, given what the official library did with each strategy on pages of `page`
/// bytes (both reader paths read at that page size).
#[allow(clippy::too_many_arguments)]
pub fn judge_outcomes(
    features: &Features,
    scope: &Scope,
    kind: StoreKind,
    page: u64,
    reader: ReaderFn,
    dir: &Path,
    official: &[(ErrorStrategy, OfficialOutcome)],
    scratch: &Path,
) -> Result<Verdicts> {
    let mut verdicts = Vec::new();
    let paths: [(ReaderPath, ReaderFn); 2] =
        [(ReaderPath::Store, reader), (ReaderPath::Dump, read_dump)];
    for (s, o) in official {
        for (path, f) in paths {
            let r = f(dir, kind, features, *s, page);
            let v = classify(f, features, scope, dir, kind, *s, page, o, &r, scratch)?;
            let rows = match &v {
                Verdict::Exception(d) => vec![*d],
                Verdict::Exceptions(ds) => ds.clone(),
                _ => Vec::new(),
            };
            for row in rows.iter().filter_map(|d| accepted(*d, scope)) {
                count_uses(row, 1);
            }
            verdicts.push((*s, path, v));
        }
    }
    Ok(verdicts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::value::{Value, ValueType};

    fn reads(pairs: &[(&str, i32)]) -> Reads {
        Reads {
            getters: vec![ValueType::I32],
            keys: pairs
                .iter()
                .map(|(k, v)| (k.as_bytes().to_vec(), vec![Some(Value::I32(*v))]))
                .collect(),
        }
    }

    #[test]
    fn judge_separates_agreement_refusal_and_difference() {
        let f = Scope::new("v2.0.0", false, false).unwrap();
        let a = reads(&[("a", 1), ("b", 2)]);
        let off = OfficialOutcome::Read(a.clone());
        assert_eq!(judge(&f, &off, &Ok(a.clone())), Verdict::Agree);
        assert!(matches!(
            judge(&f, &off, &Ok(reads(&[("a", 1)]))),
            Verdict::Disagree(_)
        ));
        assert!(matches!(
            judge(&f, &off, &Ok(reads(&[("a", 1), ("b", 3)]))),
            Verdict::Disagree(_)
        ));
        assert!(matches!(
            judge(&f, &off, &Err("crc".into())),
            Verdict::Disagree(_)
        ));
        let empty = OfficialOutcome::Read(reads(&[]));
        assert_eq!(
            judge(&f, &empty, &Err("crc".into())),
            Verdict::RefusedDiscarded
        );
        assert!(matches!(judge(&f, &empty, &Ok(a)), Verdict::Disagree(_)));
        assert!(matches!(
            judge(&f, &OfficialOutcome::Hung, &Err(String::new())),
            Verdict::Upstream(_)
        ));
    }
}
