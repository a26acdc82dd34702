//! The stores `suite build` writes with each official version (besides the golden corpora):
//! small histories (removal, overwrite with another type, `clearAll`, `trim`, `reKey`),
//! every encryption key shape, byte keys, expiring records, and damaged copies of them
//! (the fault suite's [`Damage`] mutations, a stale meta file, a missing or short one).

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};
use crate::fault::damage::{Damage, Mutation, Which};
use crate::judge::process_hold::hold_process;
use crate::sides::official::OfficialLib;
use crate::suite::official::Files;
use crate::vocab::kind::{Features, StoreKind};
use crate::vocab::names::STORE_ID;
use crate::vocab::value::{Value, ValueType};

/// One write operation of a scenario.
#[derive(Debug, Clone)]
pub enum Op {
    /// `set(key, value[, expire seconds])`.
    Set(Vec<u8>, Value, Option<u32>),
    /// `removeValueForKey`.
    Remove(Vec<u8>),
    /// `clearAll()`.
    ClearAll,
    /// `trim()`.
    Trim,
    /// `reKey` to the key (and AES flavour) of a kind.
    Rekey(StoreKind),
    /// `sync()`, then keep a copy of the meta file (for [`Damage2::StaleMeta`]).
    KeepMeta,
}

/// A store history.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Short name (part of the case name).
    pub id: String,
    /// What it tests (one line).
    pub what: String,
    /// The kind it is opened with first.
    pub kind: StoreKind,
    /// Its operations.
    pub ops: Vec<Op>,
    /// It contains records that expire one second after they are written.
    pub expiring: bool,
}

impl Scenario {
    /// The kind the store has after its operations (a `reKey` changes it).
    pub fn final_kind(&self) -> StoreKind {
        self.ops
            .iter()
            .rev()
            .find_map(|o| match o {
                Op::Rekey(k) => Some(*k),
                _ => None,
            })
            .unwrap_or(self.kind)
    }
}

/// What a scenario left behind.
#[derive(Debug, Clone)]
pub struct Written {
    /// The files.
    pub files: Files,
    /// The meta file kept by [`Op::KeepMeta`].
    pub kept_meta: Option<Vec<u8>>,
    /// The type of the last accepted `set` of every key.
    pub types: BTreeMap<Vec<u8>, ValueType>,
}

fn key(i: usize) -> Vec<u8> {
    format!("k{i}").into_bytes()
}

/// A value of the `i`-th type this version has, varied by `n`.
fn value(features: &Features, i: usize, n: usize) -> Value {
    let types = features.getters();
    let ty = types[i % types.len()];
    let samples = mmkv_reader::test_support::sample_values(ty);
    Value::from(samples[n % samples.len()].clone())
}

fn sets(features: &Features, range: std::ops::Range<usize>, salt: usize) -> Vec<Op> {
    range
        .map(|i| Op::Set(key(i), value(features, i + salt, i / 3 + salt), None))
        .collect()
}

/// The scenarios a version can write.
pub fn scenarios(features: &Features) -> Vec<Scenario> {
    let f = features;
    let mut out = Vec::new();
    let mut add = |id: &str, what: &str, kind: StoreKind, ops: Vec<Op>, expiring: bool| {
        if kind.supported_by(f) {
            out.push(Scenario {
                id: id.to_string(),
                what: what.to_string(),
                kind,
                ops,
                expiring,
            });
        }
    };
    let removal = |f: &Features| {
        let mut ops = sets(f, 0..24, 0);
        ops.extend((0..24).step_by(3).map(|i| Op::Remove(key(i))));
        ops.push(Op::KeepMeta);
        ops.extend(sets(f, 24..30, 1));
        ops.push(Op::Remove(key(25)));
        ops
    };
    for kind in StoreKind::ALL.into_iter().filter(|k| !k.key_expire()) {
        add(
            &format!("remove_{kind}"),
            &format!("{kind}: 30 keys of every type, 9 removed (removed keys must not be listed)"),
            kind,
            removal(f),
            false,
        );
    }
    for kind in [StoreKind::Plain, StoreKind::Aes128] {
        let (what, ops) = grown(f, kind, DEFAULT_PAGE);
        add(&format!("grown_{kind}"), &what, kind, ops, false);
    }
    let mut ops = sets(f, 0..12, 0);
    ops.extend((0..12).map(|i| Op::Set(key(i), value(f, i + 5, i), None)));
    add(
        "overwrite-type_plain",
        "plain: 12 keys each overwritten with a value of another type (the last one counts)",
        StoreKind::Plain,
        ops,
        false,
    );
    let mut ops = sets(f, 0..10, 0);
    ops.push(Op::ClearAll);
    add(
        "clearall_plain",
        "plain: 10 keys, then clearAll(): an empty store whose file held records",
        StoreKind::Plain,
        ops.clone(),
        false,
    );
    ops.extend(sets(f, 20..25, 2));
    add(
        "clearall-then-set_plain",
        "plain: 10 keys, clearAll(), 5 new keys (only the new ones are live)",
        StoreKind::Plain,
        ops,
        false,
    );
    let mut ops: Vec<Op> = (0..40)
        .map(|i| Op::Set(key(i), Value::String("x".repeat(150 + i)), None))
        .collect();
    ops.extend((0..40).filter(|i| i % 10 != 0).map(|i| Op::Remove(key(i))));
    ops.push(Op::Trim);
    ops.extend(sets(f, 50..53, 0));
    add(
        "trim_plain",
        "plain: 40 long strings, 36 removed, trim(), 3 more keys",
        StoreKind::Plain,
        ops.clone(),
        false,
    );
    add(
        "trim_aes128",
        "aes128: 40 long strings, 36 removed, trim(), 3 more keys",
        StoreKind::Aes128,
        ops,
        false,
    );
    let rekey = |from: StoreKind, to: StoreKind| {
        let mut ops = sets(f, 0..16, 0);
        ops.push(Op::Remove(key(4)));
        ops.push(Op::Rekey(to));
        ops.extend(sets(f, 16..20, 3));
        ops.push(Op::Remove(key(17)));
        (from, ops)
    };
    for (id, what, (from, ops)) in [
        (
            "rekey-encrypt",
            "written plain, reKey to AES-128 key `mmkv-conformance`, more writes",
            rekey(StoreKind::Plain, StoreKind::Aes128),
        ),
        (
            "rekey-decrypt",
            "written with AES-128, reKey to no key (decrypted), more writes",
            rekey(StoreKind::Aes128, StoreKind::Plain),
        ),
        (
            "rekey-change",
            "AES-128 key `mmkv-conformance` changed by reKey to `short`, more writes",
            rekey(StoreKind::Aes128, StoreKind::Aes128ShortKey),
        ),
        (
            "rekey-aes256",
            "AES-128 store reKeyed to an AES-256 key, more writes",
            rekey(StoreKind::Aes128, StoreKind::Aes256),
        ),
    ] {
        if StoreKind::Aes256.supported_by(f) || id != "rekey-aes256" {
            add(id, what, from, ops, false);
        }
    }
    let byte_keys: Vec<Vec<u8>> = vec![
        b"a\0b".to_vec(),
        b"\0".to_vec(),
        vec![0xff, 0xfe, 0x00, 0x80],
        vec![0xc3, 0x28],
        "键-ключ-🔑".as_bytes().to_vec(),
        vec![b'L'; 300],
        b"tail\0".to_vec(),
    ];
    let mut ops: Vec<Op> = byte_keys
        .iter()
        .enumerate()
        .map(|(i, k)| Op::Set(k.clone(), value(f, i, i), None))
        .collect();
    ops.push(Op::Remove(byte_keys[1].clone()));
    ops.push(Op::Set(byte_keys[0].clone(), Value::I64(-7), None));
    for kind in [StoreKind::Plain, StoreKind::Aes128] {
        add(
            &format!("byte-keys_{kind}"),
            &format!("{kind}: keys with NUL bytes, not UTF-8, CJK/emoji, 300 bytes; one removed"),
            kind,
            ops.clone(),
            false,
        );
    }
    let mut ops = Vec::new();
    for i in 0..16 {
        let expire = (i % 2 == 0).then_some(1);
        ops.push(Op::Set(key(i), value(f, i, i), expire));
    }
    ops.push(Op::Set(key(1), Value::I32(7), Some(1)));
    ops.push(Op::Set(key(2), Value::I32(8), None));
    ops.push(Op::Remove(key(3)));
    for kind in [
        StoreKind::Expire,
        StoreKind::ExpireAes128,
        StoreKind::ExpireAes256,
    ] {
        add(
            &format!("expired_{kind}"),
            &format!(
                "{kind}: 8 records expired (1 s, in the past at any date), 8 never expiring; \
                 expired records are still in the file"
            ),
            kind,
            ops.clone(),
            true,
        );
    }
    let mut ops = vec![
        Op::Set(b"zero".to_vec(), Value::F64(0.0), None),
        Op::Set(b"small".to_vec(), Value::I32(3), None),
        Op::Set(b"gone".to_vec(), Value::Bool(true), None),
        Op::Set(b"long".to_vec(), Value::String("y".repeat(40)), None),
    ];
    ops.push(Op::Remove(b"gone".to_vec()));
    ops.push(Op::Set(b"zero32".to_vec(), Value::F32(0.0), None));
    add(
        "inline-records_aes128",
        "aes128: a double 0.0, small values and a removal (the v1.2.0-v1.2.2 encrypted loader \
         drops or keeps such inline records)",
        StoreKind::Aes128,
        ops,
        false,
    );
    out
}

/// The page size of the writers of [`scenarios`] (that of every case without a `page_size`).
pub const DEFAULT_PAGE: u64 = crate::suite::case::DEFAULT_PAGE_SIZE;

/// The page sizes other than [`DEFAULT_PAGE`] that [`PAGE_ANCHORS`] also write
/// [`page_scenarios`] with: those of iOS, Apple Silicon and Android 15+ devices (16 KiB) and of
/// some arm64 Linux kernels (64 KiB).
pub const OTHER_PAGES: [u64; 2] = [16384, 65536];

/// The writers of [`page_scenarios`]: one release of each loader generation (v1.2: the
/// last-confirmed meta fields; v1.3: expiring keys; v2.4: data header 0).
pub const PAGE_ANCHORS: [&str; 3] = ["v1.2.16", "v1.3.17", "v2.4.2"];

/// The part of a case's scenario that names its writer's page size: `p16k` for 16384 bytes
/// (`None` for [`DEFAULT_PAGE`], whose cases have none).
pub fn page_part(page: u64) -> Option<String> {
    (page != DEFAULT_PAGE).then(|| format!("p{}k", page / 1024))
}

/// `grown_<kind>` for a writer on pages of `page` bytes: strings of 95 bytes, 60 per 4 KiB of
/// page, so the file passes one page and expands with a full write-back, which records the
/// last-confirmed size and CRC in the meta (v1.2+); 6 sets and a removal after it make the
/// actual size larger.
fn grown(f: &Features, kind: StoreKind, page: u64) -> (String, Vec<Op>) {
    let n = (60 * page / DEFAULT_PAGE) as usize;
    let mut ops: Vec<Op> = (0..n)
        .map(|i| {
            Op::Set(
                key(i),
                Value::String(format!("{i}-{}", "g".repeat(90))),
                None,
            )
        })
        .collect();
    ops.push(Op::KeepMeta);
    ops.extend(sets(f, n..n + 6, 0));
    ops.push(Op::Remove(key(3)));
    let what = format!(
        "{kind}: {n} strings of 95 bytes (the file expands: a full write-back), then 6 sets \
         and a removal"
    );
    (what, ops)
}

/// The scenarios written on pages of `page` bytes (besides [`DEFAULT_PAGE`]): the plain
/// removal and overwrite histories (one page, of that size), and `grown_plain` scaled to pass
/// that page. Their ids are those of [`scenarios`]; case names add [`page_part`].
pub fn page_scenarios(features: &Features, page: u64) -> Vec<Scenario> {
    let mut out: Vec<Scenario> = scenarios(features)
        .into_iter()
        .filter(|s| ["remove_plain", "overwrite-type_plain"].contains(&s.id.as_str()))
        .collect();
    let (what, ops) = grown(features, StoreKind::Plain, page);
    out.push(Scenario {
        id: "grown_plain".into(),
        what,
        kind: StoreKind::Plain,
        ops,
        expiring: false,
    });
    let mut ops = sets(features, 0..8, 0);
    ops.push(Op::Set(
        ZERO_TAIL_KEY.to_vec(),
        Value::Bytes(vec![0; ZERO_TAIL_LEN]),
        None,
    ));
    out.push(Scenario {
        id: "zero-tail_plain".into(),
        what: format!(
            "plain: 8 keys, then a bytes value of {ZERO_TAIL_LEN} zero bytes (the region ends \
             in zeros, past 4 KiB and within one page)"
        ),
        kind: StoreKind::Plain,
        ops,
        expiring: false,
    });
    out
}

/// The last key of `zero-tail_plain`, and the length of its all-zero value: the region ends
/// between 4 and 16 KiB.
const ZERO_TAIL_KEY: &[u8] = b"zeros";
const ZERO_TAIL_LEN: usize = 6000;

/// Runs a scenario with an official version in `dir` (store [`STORE_ID`]); `Ok(None)` when the
/// version cannot do one of its operations (a `reKey` it lacks or refuses).
pub fn write(lib: &dyn OfficialLib, dir: &Path, sc: &Scenario) -> Result<Option<Written>> {
    let _hold = hold_process([lib.tag()], sc.kind);
    let mut store = lib.open(dir, STORE_ID, sc.kind)?;
    if sc.kind.key_expire() && !store.enable_key_expire(0)? {
        return Err(Error::Official {
            tag: lib.tag().to_string(),
            message: "enableAutoKeyExpire refused".into(),
        });
    }
    let mut types = BTreeMap::new();
    let mut kept_meta = None;
    for op in &sc.ops {
        match op {
            Op::Set(k, v, e) => {
                if store.set(k, v, *e)? {
                    types.insert(k.clone(), v.value_type());
                }
            }
            Op::Remove(k) => store.remove(k)?,
            Op::ClearAll => store.clear_all()?,
            Op::Trim => store.trim()?,
            Op::Rekey(to) => {
                if store.rekey(to.crypt_key(), to.aes256())? != Some(true) {
                    store.close()?;
                    return Ok(None);
                }
            }
            Op::KeepMeta => {
                store.sync()?;
                let p = mmkv_reader::meta_path(&dir.join(STORE_ID));
                kept_meta = Some(std::fs::read(&p).map_err(|e| Error::io(&p, e))?);
            }
        }
    }
    store.sync()?;
    store.close()?;
    let files = Files::read(dir, STORE_ID, &format!("{STORE_ID}.crc"))?;
    Ok(Some(Written {
        files,
        kept_meta,
        types,
    }))
}

/// A damage applied to a written store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Damage2 {
    /// The data file cut in the middle of its records.
    TruncateData,
    /// The data file cut to its first page (of the writer's page size): the records go on
    /// past it.
    TruncatePage,
    /// The data file of a writer on pages larger than 4 KiB cut to 4096 bytes, where only zero
    /// bytes follow up to the region's end: the writer's page maps them back (the CRC passes),
    /// a 4 KiB page does not (the region does not fit).
    Truncate4k,
    /// One bit flipped in the middle of the records.
    FlipData,
    /// The meta file from an earlier `sync` (its size and CRC describe a shorter prefix).
    StaleMeta,
    /// The meta's CRC field flipped (a version with a last-confirmed size may fall back to it).
    FlipMetaCrc,
    /// The meta's actual-size field flipped.
    FlipMetaSize,
    /// The meta file cut to 20 bytes.
    ShortMeta,
    /// No meta file.
    MissingMeta,
}

impl Damage2 {
    /// The damages applied to a grown store (its last-confirmed meta fields are set).
    pub const GROWN: [Damage2; 2] = [Damage2::StaleMeta, Damage2::FlipMetaCrc];

    /// The damages applied to a grown store written on pages other than 4 KiB: cut at the
    /// writer's page boundary, and in the middle of its records (a cut the writer's page
    /// rounds up again, where a smaller page would not).
    pub const PAGED: [Damage2; 2] = [Damage2::TruncatePage, Damage2::TruncateData];

    /// All damages.
    pub const ALL: [Damage2; 7] = [
        Damage2::TruncateData,
        Damage2::FlipData,
        Damage2::StaleMeta,
        Damage2::FlipMetaCrc,
        Damage2::FlipMetaSize,
        Damage2::ShortMeta,
        Damage2::MissingMeta,
    ];

    /// Short name.
    pub fn id(self) -> &'static str {
        match self {
            Damage2::TruncateData => "truncated-data",
            Damage2::TruncatePage => "truncated-page",
            Damage2::Truncate4k => "truncated-4k",
            Damage2::FlipData => "flipped-data",
            Damage2::StaleMeta => "stale-meta",
            Damage2::FlipMetaCrc => "flipped-meta-crc",
            Damage2::FlipMetaSize => "flipped-meta-size",
            Damage2::ShortMeta => "short-meta",
            Damage2::MissingMeta => "missing-meta",
        }
    }

    /// One line.
    pub fn what(self) -> &'static str {
        match self {
            Damage2::TruncateData => "data file truncated in the middle of its records",
            Damage2::TruncatePage => {
                "data file cut at its first page boundary (of the writer's page), records past it"
            }
            Damage2::Truncate4k => {
                "data file cut to 4096 bytes, inside the zero bytes that end its region"
            }
            Damage2::FlipData => "one bit flipped in the middle of the records",
            Damage2::StaleMeta => "meta file from an earlier sync (stale size and CRC)",
            Damage2::FlipMetaCrc => {
                "meta CRC field flipped (last-confirmed fallback where the version has it)"
            }
            Damage2::FlipMetaSize => "meta actual-size field flipped",
            Damage2::ShortMeta => "meta file cut to 20 bytes",
            Damage2::MissingMeta => "meta file missing",
        }
    }

    /// The damaged files of a store written on pages of `page` bytes, or `None` when the
    /// damage does not apply (no kept meta, or no record past the first page).
    pub fn apply(self, w: &Written, page: u64) -> Result<Option<Files>> {
        let size = actual_size(&w.files);
        let mutation = match self {
            Damage2::TruncateData => Mutation::Truncate(Which::Data, 4 + size / 2),
            Damage2::TruncatePage if 4 + size <= page => return Ok(None),
            Damage2::TruncatePage => Mutation::Truncate(Which::Data, page),
            Damage2::Truncate4k => {
                let (cut, end) = (DEFAULT_PAGE as usize, 4 + size as usize);
                let zeros = w
                    .files
                    .data
                    .get(cut..end)
                    .is_some_and(|t| t.iter().all(|&b| b == 0));
                if page <= DEFAULT_PAGE || !zeros {
                    return Ok(None);
                }
                Mutation::Truncate(Which::Data, DEFAULT_PAGE)
            }
            Damage2::FlipData => Mutation::Flip(Which::Data, 4 + size / 2, 3),
            Damage2::FlipMetaCrc => Mutation::Flip(Which::Meta, 1, 2),
            // bit 4 of the size's second byte: +/- 4096
            Damage2::FlipMetaSize => Mutation::Flip(Which::Meta, 29, 4),
            Damage2::ShortMeta => Mutation::Truncate(Which::Meta, 20),
            Damage2::MissingMeta => Mutation::Remove(Which::Meta),
            Damage2::StaleMeta => {
                return Ok(w.kept_meta.as_ref().map(|m| Files {
                    data: w.files.data.clone(),
                    meta: Some(m.clone()),
                }));
            }
        };
        let tmp = tempfile::tempdir().map_err(|e| Error::Other(format!("tempdir: {e}")))?;
        w.files.write(tmp.path(), STORE_ID)?;
        Damage(vec![mutation]).apply(tmp.path(), STORE_ID)?;
        Files::read(tmp.path(), STORE_ID, &format!("{STORE_ID}.crc")).map(Some)
    }
}

/// The actual size as the meta file (or, before meta version 3, the data header) records it.
fn actual_size(files: &Files) -> u64 {
    let meta = mmkv_reader::locate::parse_meta(files.meta.as_deref().unwrap_or(&[]));
    let header = files
        .data
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .unwrap_or(0);
    u64::from(if meta.has_actual_size() && meta.actual_size > 0 {
        meta.actual_size
    } else {
        header
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_parts_name_the_page_in_kib() {
        assert_eq!(page_part(DEFAULT_PAGE), None);
        assert_eq!(page_part(16384).as_deref(), Some("p16k"));
        assert_eq!(page_part(65536).as_deref(), Some("p64k"));
    }

    #[test]
    fn grown_stores_pass_their_page() {
        let f = Features::from_tag("v2.4.2").unwrap();
        for page in [DEFAULT_PAGE, 16384, 65536] {
            let sc = if page == DEFAULT_PAGE {
                scenarios(&f)
            } else {
                page_scenarios(&f, page)
            };
            let grown = sc.iter().find(|s| s.id == "grown_plain").unwrap();
            let bytes: usize = grown
                .ops
                .iter()
                .map(|o| match o {
                    Op::Set(k, Value::String(v), _) => k.len() + v.len(),
                    _ => 0,
                })
                .sum();
            assert!(bytes as u64 > page, "{page}: {bytes} bytes of strings");
        }
        assert_eq!(
            grown(&f, StoreKind::Plain, DEFAULT_PAGE).1.len(),
            60 + 1 + 6 + 1,
            "the 4 KiB grown store keeps its 60 strings"
        );
    }
}
