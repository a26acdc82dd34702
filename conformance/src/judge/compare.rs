//! Comparison of the reader with the official getters of one version.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::error::Result;
use crate::judge::exceptions::{accepted, count_uses, Difference, Scope};
use crate::sides::official::OfficialStore;
use crate::sides::reads::read_payload;
use crate::sides::view::ReaderView;
use crate::vocab::kind::Features;
use crate::vocab::value::{show, Value, ValueType};

/// Which reader of a differential run a capture comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReaderSide {
    /// The `Store` opened at the start of the run and kept open.
    LongLived,
    /// A reader opened for this comparison.
    Fresh,
}

impl fmt::Display for ReaderSide {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ReaderSide::LongLived => "long-lived reader",
            ReaderSide::Fresh => "fresh reader",
        })
    }
}

/// What a [`Mismatch`] compared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compared {
    /// A getter of one type.
    Get(ValueType),
    /// The raw byte-string vector of a string-vector value.
    GetBytesVec,
    /// `containsKey`.
    Contains,
    /// The key set.
    Keys,
    /// The key count.
    Count,
    /// A key's raw payload (reader forms only).
    RawPayload,
    /// A key's expire time (reader forms only).
    ExpireAt,
    /// A key's expire time against the window of the `set` that wrote it.
    ExpireVsWriter,
    /// Opening a reader.
    Open(ReaderSide),
    /// The files after a `reKey` the library reported as done.
    FilesAfterRekey,
    /// The official key set before and after close/reopen.
    OfficialKeysAcrossReopen,
    /// The official key set before and after a `reKey` that rewrote the files.
    OfficialKeysAcrossRekey,
    /// The static `isFileValid` against the reader's verdict (a fresh reader opens the files).
    FileValid,
    /// The store after `removeStorage` reported it removed: the reader must find none.
    StoreRemoved,
    /// Two forms of one reader result (`of`) that disagree.
    ReaderForms {
        /// What both forms read.
        of: Box<Compared>,
        /// The form compared with the official library.
        first: &'static str,
        /// The form that differs from it.
        other: &'static str,
    },
}

impl Compared {
    /// True for the store-wide results a differing key changes (key set and count).
    pub fn is_key_set(&self) -> bool {
        matches!(self, Compared::Keys | Compared::Count)
    }
}

impl fmt::Display for Compared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Compared::Get(t) => write!(f, "get {t}"),
            Compared::GetBytesVec => f.write_str("get_bytes_vec"),
            Compared::Contains => f.write_str("contains"),
            Compared::Keys => f.write_str("keys"),
            Compared::Count => f.write_str("count"),
            Compared::RawPayload => f.write_str("raw payload"),
            Compared::ExpireAt => f.write_str("expire_at"),
            Compared::ExpireVsWriter => f.write_str("expire_at (vs the writer's set)"),
            Compared::Open(side) => write!(f, "open ({side})"),
            Compared::FilesAfterRekey => f.write_str("files after reKey"),
            Compared::OfficialKeysAcrossReopen => {
                f.write_str("official key set across close/reopen")
            }
            Compared::OfficialKeysAcrossRekey => f.write_str("official key set across reKey"),
            Compared::FileValid => f.write_str("isFileValid"),
            Compared::StoreRemoved => f.write_str("store after removeStorage"),
            Compared::ReaderForms { of, first, other } => {
                write!(f, "{of}: reader {first} vs reader {other}")
            }
        }
    }
}

/// One difference between the official library and the reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The key involved (`None` for store-wide properties).
    pub key: Option<Vec<u8>>,
    /// What was compared.
    pub what: Compared,
    /// The official result.
    pub official: String,
    /// The reader result.
    pub reader: String,
}

impl Mismatch {
    /// A difference of `what` about `key` (`None`: store-wide).
    pub fn new(
        key: Option<&[u8]>,
        what: Compared,
        official: impl Into<String>,
        reader: impl Into<String>,
    ) -> Mismatch {
        Mismatch {
            key: key.map(<[u8]>::to_vec),
            what,
            official: official.into(),
            reader: reader.into(),
        }
    }

    /// True when this difference concerns only `keys`: one of them, or the key set or count
    /// they change.
    pub fn only_about(&self, keys: &BTreeSet<Vec<u8>>) -> bool {
        match &self.key {
            Some(k) => keys.contains(k),
            None => self.what.is_key_set(),
        }
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.key {
            Some(k) => write!(f, "key {:?} ", String::from_utf8_lossy(k))?,
            None => f.write_str("store ")?,
        }
        write!(
            f,
            "{}: official {} | reader {}",
            self.what, self.official, self.reader
        )
    }
}

/// The value an old (pre-v1.2.13) scalar getter returns when it has nothing: the harness's
/// default argument. Those versions report presence with `containsKey`, so a failed decode
/// on a present key looks like "value = default".
fn is_default_scalar(v: &Value) -> bool {
    match v {
        Value::Bool(b) => !b,
        Value::I32(x) => *x == 0,
        Value::U32(x) => *x == 0,
        Value::I64(x) => *x == 0,
        Value::U64(x) => *x == 0,
        Value::F32(x) => x.to_bits() == 0,
        Value::F64(x) => x.to_bits() == 0,
        _ => false,
    }
}

/// Whether `official` and `reader` agree for one getter in `scope`.
///
/// Exact equality (floats by bits), except where a row of [`crate::judge::exceptions::TABLE`]
/// accepts the difference in this scope: before v1.2.13 the scalar getters cannot say "no
/// value" for a present key (`official = default` against `reader = none`), and `getBytes`
/// cannot tell an empty value from none (`official = empty` against `reader = none`).
pub fn agrees(
    scope: &Scope,
    ty: ValueType,
    official: &Option<Value>,
    reader: &Option<Value>,
) -> bool {
    if official == reader {
        return true;
    }
    let row = match (official, reader) {
        (Some(v), None) if ty.is_scalar() && is_default_scalar(v) => {
            accepted(Difference::DefaultForAbsentScalar, scope)
        }
        (Some(Value::Bytes(b)), None) if ty == ValueType::Bytes && b.is_empty() => {
            accepted(Difference::EmptyForAbsentBytes, scope)
        }
        _ => None,
    };
    row.inspect(|row| count_uses(row, 1)).is_some()
}

/// Everything the reader says about a set of keys, captured before the official getters run
/// (official getters delete expired keys as a side effect).
#[derive(Debug, Clone)]
pub struct ReaderReads {
    /// Per key: contains + one read per getter.
    pub per_key: Vec<(Vec<u8>, bool, Vec<Option<Value>>)>,
    /// The reader's expire time of every present key it listed (`None`: never expires).
    pub expire_at: BTreeMap<Vec<u8>, Option<u32>>,
    /// The reader's key set.
    pub keys: BTreeSet<Vec<u8>>,
    /// The reader's count.
    pub count: usize,
    /// Per key read with the string-vector getter: the reader's raw byte-string vector
    /// (`get_bytes_vec`), for readers that offer it.
    pub bytes_vec: BTreeMap<Vec<u8>, Option<Vec<Vec<u8>>>>,
    /// Reads on which the reader's own getter paths (snapshot, copy getter, view) disagreed.
    pub inconsistent: Vec<Mismatch>,
}

impl ReaderReads {
    /// Number of keys read.
    pub fn keys_read(&self) -> u64 {
        self.per_key.len() as u64
    }

    /// Number of (key, getter) reads.
    pub fn reads(&self) -> u64 {
        self.per_key.iter().map(|(_, _, r)| r.len() as u64).sum()
    }
}

/// One listing of [`ReaderView::listings`] by key: raw payload and expire time.
type ListingMap = BTreeMap<Vec<u8>, (Vec<u8>, Option<u32>)>;

/// The first of several named forms of one reader result; every other form that differs
/// from it is recorded in `out` as an inconsistency of the reader (`what`: first vs other).
fn agreeing<T: PartialEq>(
    key: Option<&[u8]>,
    what: Compared,
    paths: Vec<(&'static str, T)>,
    render: impl Fn(&T) -> String,
    out: &mut Vec<Mismatch>,
) -> Option<T> {
    let mut paths = paths.into_iter();
    let (first_name, first) = paths.next()?;
    for (name, other) in paths {
        if other != first {
            let what = Compared::ReaderForms {
                of: Box::new(what.clone()),
                first: first_name,
                other: name,
            };
            out.push(Mismatch::new(key, what, render(&first), render(&other)));
        }
    }
    Some(first)
}

/// Reads `keys` (and the reader's own keys) through `reader` with every getter in `getters`.
///
/// Every form the reader offers of each result (its [`ReaderView::read_paths`],
/// [`ReaderView::raw_values`], [`ReaderView::key_sets`], [`ReaderView::counts`],
/// [`ReaderView::contains_paths`], [`ReaderView::expire_paths`] and [`ReaderView::listings`]) must agree with the first, which
/// is the one compared with the official library; disagreements are recorded as
/// [`ReaderReads::inconsistent`].
pub fn capture_reader(
    reader: &dyn ReaderView,
    keys: &[Vec<u8>],
    getters: &[ValueType],
) -> ReaderReads {
    let mut inconsistent = Vec::new();
    let set_of = |(name, ks): (&'static str, Vec<Vec<u8>>)| (name, ks.into_iter().collect());
    let own: BTreeSet<Vec<u8>> = agreeing(
        None,
        Compared::Keys,
        reader.key_sets().into_iter().map(set_of).collect(),
        render_keys,
        &mut inconsistent,
    )
    .unwrap_or_default();
    let count = agreeing(
        None,
        Compared::Count,
        reader.counts(),
        usize::to_string,
        &mut inconsistent,
    )
    .unwrap_or_default();
    let listings: Vec<(&'static str, ListingMap)> = reader
        .listings()
        .into_iter()
        .map(|(name, items)| {
            let map: BTreeMap<_, _> = items.into_iter().map(|(k, p, t)| (k, (p, t))).collect();
            let listed: BTreeSet<Vec<u8>> = map.keys().cloned().collect();
            agreeing(
                None,
                Compared::Keys,
                vec![("keys", own.clone()), (name, listed)],
                render_keys,
                &mut inconsistent,
            );
            (name, map)
        })
        .collect();
    let mut all: Vec<Vec<u8>> = keys.to_vec();
    let listed: BTreeSet<&Vec<u8>> = keys.iter().collect();
    for k in &own {
        if !listed.contains(k) {
            all.push(k.clone());
        }
    }
    let mut bytes_vec = BTreeMap::new();
    let per_key = all
        .into_iter()
        .map(|k| {
            let contains = agreeing(
                Some(&k),
                Compared::Contains,
                reader.contains_paths(&k),
                bool::to_string,
                &mut inconsistent,
            )
            .unwrap_or(false);
            // Every raw payload form must hold the same bytes; the first, decoded with each
            // getter type, must read as the getters do (and so as the official getters).
            let mut raw_forms = reader.raw_values(&k);
            for (name, map) in &listings {
                raw_forms.push((name, map.get(&k).map(|(p, _)| p.clone())));
            }
            let raw_name = raw_forms.first().map(|(name, _)| *name);
            let raw = agreeing(
                Some(&k),
                Compared::RawPayload,
                raw_forms,
                |r| show(&r.clone().map(Value::Bytes)),
                &mut inconsistent,
            )
            .flatten();
            let reads = getters
                .iter()
                .map(|&t| {
                    let mut paths = reader.read_paths(&k, t);
                    if let Some(name) = raw_name {
                        paths.push((name, raw.as_deref().and_then(|p| read_payload(p, t))));
                    }
                    agreeing(Some(&k), Compared::Get(t), paths, show, &mut inconsistent).flatten()
                })
                .collect();
            if getters.contains(&ValueType::Strings) {
                if let Some(v) = reader.bytes_vec(&k) {
                    bytes_vec.insert(k.clone(), v);
                }
            }
            (k, contains, reads)
        })
        .collect();
    let expire_at = own
        .iter()
        .map(|k| {
            let mut paths = reader.expire_paths(k);
            for (name, map) in &listings {
                if let Some((_, Some(t))) = map.get(k) {
                    paths.push((name, Some(*t)));
                }
            }
            let t = agreeing(
                Some(k),
                Compared::ExpireAt,
                paths,
                |t| format!("{t:?}"),
                &mut inconsistent,
            )
            .flatten();
            (k.clone(), t.filter(|t| *t != 0))
        })
        .collect();
    ReaderReads {
        per_key,
        expire_at,
        keys: own,
        count,
        bytes_vec,
        inconsistent,
    }
}

/// Renders a key set for diffs.
pub fn render_keys(set: &BTreeSet<Vec<u8>>) -> String {
    format!(
        "{:?}",
        set.iter()
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .collect::<Vec<_>>()
    )
}

/// The keys the official instance reports as present: `allKeys(filterExpire)` where it
/// exists, each confirmed by `containsKey` (versions without the filter still list expired
/// entries, and `containsKey` filters and deletes them on every expiring version).
pub fn official_visible_keys(official: &mut dyn OfficialStore) -> Result<BTreeSet<Vec<u8>>> {
    let mut out = BTreeSet::new();
    for k in official.all_keys(true)? {
        if official.contains(&k)? {
            out.insert(k);
        }
    }
    Ok(out)
}

/// What the official instance answers for a list of keys: every getter of every key, its
/// `contains`, the string-vector form where asked, the visible key set and the count.
/// Asked once and compared with every capture of the same keys ([`judge_reads`]): the
/// official getters are as costly the second time (an encrypted store decrypts again).
#[derive(Debug)]
pub struct OfficialAnswers {
    /// Per key: one read per getter, `contains`, and `get_bytes_vec` when asked.
    per_key: BTreeMap<Vec<u8>, OfficialKey>,
    keys: BTreeSet<Vec<u8>>,
    count: usize,
}

/// One key's official answers.
#[derive(Debug)]
struct OfficialKey {
    /// One read per getter.
    reads: Vec<Option<Value>>,
    contains: bool,
    /// `get_bytes_vec`, when a capture holds the reader's string-vector form of the key.
    bytes_vec: Option<Option<Vec<Vec<u8>>>>,
}

/// Asks `official` everything [`judge_reads`] compares for the keys of `captures` (each key
/// once, in the order the captures list them).
pub fn ask_official<'c>(
    official: &mut dyn OfficialStore,
    features: &Features,
    captures: impl IntoIterator<Item = &'c ReaderReads>,
    getters: &[ValueType],
) -> Result<OfficialAnswers> {
    let mut per_key: BTreeMap<Vec<u8>, OfficialKey> = BTreeMap::new();
    for reads in captures {
        for (key, _, _) in &reads.per_key {
            let wants_vec =
                getters.contains(&ValueType::Strings) && reads.bytes_vec.contains_key(key);
            if let Some(asked) = per_key.get_mut(key) {
                if wants_vec && asked.bytes_vec.is_none() {
                    asked.bytes_vec = Some(official.get_bytes_vec(key)?);
                }
                continue;
            }
            let values = (getters.iter())
                .map(|&ty| official.get(key, ty))
                .collect::<Result<Vec<_>>>()?;
            let bytes_vec = match wants_vec {
                true => Some(official.get_bytes_vec(key)?),
                false => None,
            };
            let contains = official.contains(key)?;
            per_key.insert(
                key.clone(),
                OfficialKey {
                    reads: values,
                    contains,
                    bytes_vec,
                },
            );
        }
    }
    let keys = official_visible_keys(official)?;
    let count = if features.count_filter_expire {
        official.count(true)?
    } else if features.key_expire {
        // v1.3.0 counts expired entries that no getter has deleted yet.
        keys.len()
    } else {
        official.count(false)?
    };
    Ok(OfficialAnswers {
        per_key,
        keys,
        count,
    })
}

/// Compares captured reader reads with the official answers for the same keys (value and
/// presence for every getter of every key, `contains`, the key set and the count).
/// Mismatches between the reader's own getter paths are included.
pub fn judge_reads(
    official: &OfficialAnswers,
    scope: &Scope,
    reads: &ReaderReads,
    getters: &[ValueType],
) -> Vec<Mismatch> {
    let mut out = reads.inconsistent.clone();
    for (key, reader_contains, reader_reads) in &reads.per_key {
        let k = Some(key.as_slice());
        let OfficialKey {
            reads: official_reads,
            contains: official_contains,
            bytes_vec: official_vec,
        } = (official.per_key.get(key))
            .expect("the official answers were asked for this capture's keys");
        for ((&ty, official_read), reader_read) in
            getters.iter().zip(official_reads).zip(reader_reads)
        {
            if ty == ValueType::Strings && official_read == reader_read {
                if let (Some(reader_vec), Some(official_vec)) =
                    (reads.bytes_vec.get(key), official_vec)
                {
                    if official_vec != reader_vec {
                        let (o, r) = (format!("{official_vec:?}"), format!("{reader_vec:?}"));
                        out.push(Mismatch::new(k, Compared::GetBytesVec, o, r));
                    }
                }
            }
            if !agrees(scope, ty, official_read, reader_read) {
                let (o, r) = (show(official_read), show(reader_read));
                out.push(Mismatch::new(k, Compared::Get(ty), o, r));
            }
        }
        if official_contains != reader_contains {
            let (o, r) = (official_contains.to_string(), reader_contains.to_string());
            out.push(Mismatch::new(k, Compared::Contains, o, r));
        }
    }
    if official.keys != reads.keys {
        let (o, r) = (render_keys(&official.keys), render_keys(&reads.keys));
        out.push(Mismatch::new(None, Compared::Keys, o, r));
    }
    if official.count != reads.count {
        let (o, r) = (official.count.to_string(), reads.count.to_string());
        out.push(Mismatch::new(None, Compared::Count, o, r));
    }
    out
}

/// [`ask_official`] for the keys of one capture, then [`judge_reads`].
pub fn compare_with_official(
    official: &mut dyn OfficialStore,
    features: &Features,
    scope: &Scope,
    reads: &ReaderReads,
    getters: &[ValueType],
) -> Result<Vec<Mismatch>> {
    let answers = ask_official(official, features, [reads], getters)?;
    Ok(judge_reads(&answers, scope, reads, getters))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relaxation_only_without_has_value_flag() {
        let new = Scope::new("v1.2.13", false, false).unwrap();
        let old = Scope::new("v1.2.12", false, false).unwrap();
        let (i32_0, i32_3) = (Some(Value::I32(0)), Some(Value::I32(3)));
        let (f32_neg0, no_bytes) = (Some(Value::F32(-0.0)), Some(Value::Bytes(vec![])));
        let no_string = Some(Value::String(String::new()));
        use ValueType as T;
        let cases = [
            (&new, T::I32, &i32_0, &None, false),
            (&old, T::I32, &i32_0, &None, true),
            (&old, T::I32, &i32_3, &None, false),
            (&old, T::I32, &None, &i32_0, false),
            (&old, T::F32, &f32_neg0, &None, false),
            (&old, T::Bytes, &no_bytes, &None, true),
            (&new, T::Bytes, &no_bytes, &None, false),
            (&old, T::String, &no_string, &None, false),
        ];
        for (scope, ty, official, reader, expected) in cases {
            let got = agrees(scope, ty, official, reader);
            assert_eq!(got, expected, "{scope:?} {ty:?} {official:?} {reader:?}");
        }
    }
}
