//! Judging one damaged state: the official outcome against the reader's, and the table of
//! known, explained differences ([`EXCEPTIONS`]). Anything else is a disagreement, which
//! fails the suite.

use std::fmt;

use crate::compare::agrees;
use crate::exceptions::Scope;
use crate::fault::official::OfficialOutcome;
use crate::fault::reads::Reads;
use crate::value::show;

/// A known difference between the official library and the reader on damaged files, with
/// the reason it is accepted. Each is recognised by a precise check (see
/// [`crate::fault::suite`]), never by "anything that differs".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Exception {
    /// The official library maps both files page by page and, on open, extends a missing or
    /// short file with zeros to a whole page (`MemoryFile::reloadFromFile` → `truncate`), so
    /// a missing or truncated meta file reads as zero-filled fields. `mmkv dump` (the region
    /// locator's `parse_meta`) does the same; `Store` refuses such a meta file
    /// (`MetaMissing` / `MetaTooShort`): it keeps the meta file memory-mapped for its
    /// check-on-read and needs every field there. Recognised when the reader, given the same
    /// files zero-extended the way the official library extends them, reads exactly what the
    /// official library read.
    ZeroFill,
    /// With key expiration on, a record whose value is exactly the 4-byte expire suffix (an
    /// empty payload, which the official writer never produces: it refuses empty values)
    /// is listed by the official `allKeys()` and counted by `count()`, but its `containsKey()`
    /// is false and every getter reports no value; the harness counts a key as visible when
    /// `allKeys` lists it and `containsKey` keeps it, while the reader lists it (its getters
    /// also report no value). Recognised when the reader, without its empty-payload keys of
    /// an expiring store, reads exactly what the official library read (on the files
    /// zero-filled as in [`Exception::ZeroFill`] when `Store` refuses a short meta file).
    EmptyPayloadKey,
    /// A meta file of version 6 (never written by an official writer, which writes at most
    /// version 4; here from a flipped bit of a version-4 meta). v1.3.0-v2.3.0 call versions of
    /// 6 and more "specious" (`MMKVVersionHolder = MMKVVersionNext + 1` with `MMKVVersionNext = 5`)
    /// and read them as version 3 with no flags (no key expiration); v2.4.0 added
    /// `MMKVVersionPreserved = 5`, so from v2.4.0 the limit is 7 and a version-6 meta keeps its
    /// flags. The reader, which does not know the writer's version, follows the newest loader
    /// (`mmkv_reader::meta::VERSION_HOLDER`). Recognised for official v1.3.0-v2.3.0 only, when
    /// the meta's version is 6 and the reader, given the meta rewritten as those versions
    /// rewrite it (version 3, flags 0), reads exactly what the official library read.
    SpeciousMetaV6,
    /// Encrypted store, a record whose value is longer than 256 bytes (the official library
    /// keeps such values encrypted in the file and decrypts them on each read, from a saved
    /// AES-CFB state) and whose key-length or value-length varint is longer than needed
    /// (`e1 83 00` for 481): `CodedInputDataCrypt::readData` rolls the state back by the
    /// *minimal* widths of the two varints (`pbRawVarint32Size`), not by the bytes it read,
    /// so its state is off by the extra bytes and the value decrypts to garbage. The reader
    /// decrypts the region as one stream and reads the stored value. No official writer writes
    /// a non-minimal varint. Recognised for official v1.2.0+ (lazy decryption; v1.1.x has no
    /// `CodedInputDataCrypt`) when those keys are exactly the ones that differ, and only in
    /// their values: without their getter results both sides agree.
    CryptOverlongLength,
    /// Encrypted store, official v1.2.0-v1.2.2: the loader keeps a record when the holder's
    /// `valueSize` is non-zero, a field that overlaps value bytes 2..6 of a value held inline
    /// (up to 27 bytes), so it lists keys whose last record is a deletion and drops keys whose
    /// small value has no non-zero byte there (the row `OfficialMisloadsInlineRecords` of
    /// [`crate::exceptions::TABLE`], which gives the versions). Recognised when every key in
    /// which the two sides differ is one that loader misjudges given its last record in the
    /// region the reader locates ([`crate::exceptions::crypt_loader_v1_2_0_explains`]), and
    /// without those keys both sides agree.
    CryptLoaderInline,
}

/// Every exception, for the README table and the summary.
pub const EXCEPTIONS: [Exception; 5] = [
    Exception::ZeroFill,
    Exception::EmptyPayloadKey,
    Exception::SpeciousMetaV6,
    Exception::CryptOverlongLength,
    Exception::CryptLoaderInline,
];

/// The official versions that decrypt large values lazily from a saved AES state
/// ([`Exception::CryptOverlongLength`]).
pub const LAZY_DECRYPT_SINCE: (u32, u32, u32) = (1, 2, 0);

/// Values longer than this stay encrypted in the file (`MediumBufferSize()`, v1.2.0+).
pub const LAZY_DECRYPT_MIN_LEN: usize = 257;

/// The official versions that read a version-6 meta as version 3 without flags
/// ([`Exception::SpeciousMetaV6`]): v1.3.0 up to, not including, v2.4.0.
pub const SPECIOUS_V6_VERSIONS: std::ops::Range<(u32, u32, u32)> = (1, 3, 0)..(2, 4, 0);

impl Exception {
    /// Short code used in reports.
    pub fn code(self) -> &'static str {
        match self {
            Exception::ZeroFill => "zero-fill",
            Exception::EmptyPayloadKey => "empty-payload-key",
            Exception::SpeciousMetaV6 => "specious-meta-v6",
            Exception::CryptOverlongLength => "crypt-overlong-length",
            Exception::CryptLoaderInline => "crypt-loader-inline",
        }
    }

    /// Why the difference is accepted (one line).
    pub fn why(self) -> &'static str {
        match self {
            Exception::ZeroFill => {
                "official (and mmkv dump) read a missing/short meta file as zero-filled; Store refuses it (MetaMissing/MetaTooShort)"
            }
            Exception::EmptyPayloadKey => {
                "expiring store, value = only the expire suffix: official allKeys lists the key but containsKey is false; the reader lists it"
            }
            Exception::SpeciousMetaV6 => {
                "meta version 6 (no official writer writes it): v1.3.0-v2.3.0 read it as version 3 without flags, v2.4.0+ and the reader keep its flags"
            }
            Exception::CryptOverlongLength => {
                "encrypted store, value > 256 bytes behind a non-minimal length varint: official v1.2.0+ rewind their AES state by the minimal varint width and decrypt the value wrong; the reader reads the stored value"
            }
            Exception::CryptLoaderInline => {
                "encrypted store, official v1.2.0-v1.2.2: the loader tests the inline holder's valueSize (value bytes 2..6) instead of the value size, listing keys whose last record is a deletion and dropping small values with zero bytes there; the reader follows the records"
            }
        }
    }
}

/// The verdict on one (state, strategy).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Same keys, and every getter agrees on every key.
    Agree,
    /// The reader refused the store (typed error) where the official library discarded it
    /// (opened it empty): both expose no key.
    RefusedDiscarded,
    /// A difference from the exceptions table.
    Exception(Exception),
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

/// The reader's side of a state: its reads, or the typed error it refused the store with.
pub type ReaderOutcome = std::result::Result<Reads, String>;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{Value, ValueType};

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
