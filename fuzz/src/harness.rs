//! The code paths the fuzz targets drive, shared with the regression test
//! `reader/tests/fuzz_regressions.rs` (which includes this file with `#[path]`), so a saved
//! crashing input replays through exactly the same checks.
//!
//! Dependencies: `std`, `mmkv_reader` (with its `test-support` store builder) and `crc32fast` only.
//!
//! Every function panics (which libFuzzer reports as a crash) when the reader panics or
//! violates one of the invariants checked here; typed errors from the reader are expected.

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mmkv_reader::crypto::{decrypt_cfb, encrypt_cfb, CfbDecryptor};
use mmkv_reader::decode::{self, ValueType};
use mmkv_reader::meta::MetaInfo;
use mmkv_reader::records::{holder_len, records, split_expire};
use mmkv_reader::test_support::{data_bytes, length_prefixed, MetaSpec, StoreBuilder};
use mmkv_reader::{CryptKey, Error, FixedClock, Options, ReloadKind, Snapshot, Store};

/// Key of the AES-128 golden stores (`aes128`, `expire-aes128`).
pub const AES128_KEY: &[u8] = b"mmkv-conformance";
/// Key of the AES-256 golden stores (`aes256`, `expire-aes256`).
pub const AES256_KEY: &[u8] = b"0123456789abcdef0123456789ABCDEF";
/// The clock the store-level checks freeze "now" at (epoch seconds).
pub const NOW: u32 = 1_700_000_000;
/// Size the official library gives a fresh meta file (one page).
pub const META_FILE_LEN: usize = mmkv_reader::test_support::PAGE;

/// Encryption mode of a store in the reload target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// No encryption.
    Plain,
    /// AES-128 with [`AES128_KEY`].
    Aes128,
    /// AES-256 with [`AES256_KEY`].
    Aes256,
}

impl Mode {
    /// All modes.
    pub const ALL: [Mode; 3] = [Mode::Plain, Mode::Aes128, Mode::Aes256];

    /// The mode a selector byte picks.
    pub fn from_byte(b: u8) -> Mode {
        Mode::ALL[(b % 3) as usize]
    }

    /// The selector byte of this mode.
    pub fn byte(self) -> u8 {
        match self {
            Mode::Plain => 0,
            Mode::Aes128 => 1,
            Mode::Aes256 => 2,
        }
    }

    /// The crypt key (`None`: plaintext).
    pub fn key(self) -> Option<CryptKey> {
        match self {
            Mode::Plain => None,
            Mode::Aes128 => CryptKey::aes128(AES128_KEY),
            Mode::Aes256 => CryptKey::aes256(AES256_KEY),
        }
    }

    /// Store options for this mode (frozen clock).
    pub fn options(self) -> Options {
        let o = Options::new().clock(Arc::new(FixedClock(NOW)));
        match self {
            Mode::Plain => o,
            Mode::Aes128 => o.crypt_key(AES128_KEY),
            Mode::Aes256 => o.crypt_key(AES256_KEY).aes256(true),
        }
    }
}

fn within(outer: &[u8], inner: &[u8]) -> bool {
    let o = outer.as_ptr() as usize;
    let i = inner.as_ptr() as usize;
    i >= o && i + inner.len() <= o + outer.len()
}

// ---------------------------------------------------------------------------------------------
// meta target
// ---------------------------------------------------------------------------------------------

fn le32(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

/// `MetaInfo::parse` on arbitrary bytes: never panics; a success reports exactly the stored
/// fields its version has; a failure is `MetaTooShort` on input shorter than a full meta.
pub fn check_meta(data: &[u8]) {
    match MetaInfo::parse(data) {
        Ok(m) => {
            assert!(data.len() >= 12, "parsed a {}-byte meta", data.len());
            assert_eq!(m.crc_digest, le32(data, 0));
            assert_eq!(m.version, le32(data, 4));
            assert_eq!(m.sequence, le32(data, 8));
            let ev = m.effective_version();
            assert!(
                ev < mmkv_reader::meta::VERSION_HOLDER,
                "effective version {ev}"
            );
            if m.has_iv() {
                assert_eq!(&m.iv[..], &data[12..28]);
            } else {
                assert_eq!(m.iv, [0u8; 16]);
            }
            if m.has_actual_size() {
                assert!(m.has_iv());
                assert_eq!(m.actual_size, le32(data, 28));
                assert_eq!(m.last_confirmed_size, le32(data, 32));
                assert_eq!(m.last_confirmed_crc, le32(data, 36));
            } else {
                assert_eq!(
                    (m.actual_size, m.last_confirmed_size, m.last_confirmed_crc),
                    (0, 0, 0)
                );
            }
            if m.key_expire() {
                assert!(ev >= 4 && m.flags & 1 == 1);
            }
            if ev < 4 {
                assert_eq!(m.flags, 0);
            }
            // Parsing a longer buffer with the same prefix gives the same result.
            let mut longer = data.to_vec();
            longer.resize(data.len().max(112) + 16, 0xA5);
            assert_eq!(MetaInfo::parse(&longer).ok(), Some(m));
        }
        Err(Error::MetaTooShort { len, needed }) => {
            assert_eq!(len, data.len());
            assert!(len < needed && needed <= 112, "len {len} needed {needed}");
        }
        Err(e) => panic!("unexpected meta error {e:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// data targets
// ---------------------------------------------------------------------------------------------

/// Every getter of `decode` on one payload, with the invariants that tie them together.
pub fn check_payload(p: &[u8]) {
    let u32v = decode::as_u32(p);
    assert_eq!(decode::as_i32(p), u32v.map(|v| v as i32));
    assert_eq!(decode::as_bool(p), u32v.map(|v| v != 0));
    let u64v = decode::as_u64(p);
    assert_eq!(decode::as_i64(p), u64v.map(|v| v as i64));
    assert_eq!(decode::as_f32(p).is_some(), p.len() >= 4);
    assert_eq!(decode::as_f64(p).is_some(), p.len() >= 8);
    let bytes = decode::as_bytes(p);
    if let Some(b) = bytes {
        assert!(within(p, b));
    }
    let s = decode::as_str(p);
    if let Some(s) = s {
        assert_eq!(Some(s.as_bytes()), bytes);
    }
    assert_eq!(decode::as_string(p).as_deref(), s);
    let bv = decode::as_bytes_vec(p);
    if let Some(v) = &bv {
        assert!(v.iter().all(|b| within(p, b)));
    }
    if let Some(sv) = decode::as_string_vec(p) {
        let bv = bv.as_ref().expect("string vec without bytes vec");
        assert_eq!(sv.len(), bv.len());
        assert!(sv.iter().zip(bv).all(|(s, b)| s.as_bytes() == *b));
    }
    let vu32 = decode::as_vec_u32(p);
    assert_eq!(
        decode::as_vec_i32(p),
        vu32.as_ref()
            .map(|v| v.iter().map(|&x| x as i32).collect::<Vec<_>>())
    );
    assert_eq!(
        decode::as_vec_bool(p),
        vu32.as_ref()
            .map(|v| v.iter().map(|&x| x != 0).collect::<Vec<_>>())
    );
    let vu64 = decode::as_vec_u64(p);
    assert_eq!(
        decode::as_vec_i64(p),
        vu64.as_ref()
            .map(|v| v.iter().map(|&x| x as i64).collect::<Vec<_>>())
    );
    if let Some(v) = decode::as_vec_f32(p) {
        assert!(v.len() * 4 < p.len());
    }
    if let Some(v) = decode::as_vec_f64(p) {
        assert!(v.len() * 8 < p.len());
    }
    if p.is_empty() {
        assert!(u32v.is_none() && u64v.is_none() && bytes.is_none() && bv.is_none());
    }
}

/// Parses a (plaintext) region: records + every getter on every value, raw and with the
/// expire suffix split off. Returns the number of records parsed and the error, if any.
pub fn check_region(region: &[u8]) -> (usize, Option<Error>) {
    if let Ok(h) = holder_len(region) {
        assert!((1..=10).contains(&h) && h <= region.len());
    }
    let mut it = records(region);
    let mut n = 0usize;
    let mut last_off = None;
    let mut err = None;
    for r in it.by_ref() {
        match r {
            Ok(rec) => {
                assert!(err.is_none(), "record after an error");
                assert!(!rec.key.is_empty());
                assert!(within(region, rec.key) && within(region, rec.value));
                assert!(rec.offset < region.len());
                if let Some(o) = last_off {
                    assert!(rec.offset > o);
                }
                last_off = Some(rec.offset);
                check_payload(rec.value);
                if let Some((payload, _t)) = split_expire(rec.value) {
                    // The payload of an expiring store: the getters on it were just checked
                    // on the whole value (any byte string); a few are run on the split part.
                    assert_eq!(payload.len() + 4, rec.value.len());
                    let _ = (decode::as_u64(payload), decode::as_bytes(payload));
                    let _ = decode::as_vec_f64(payload);
                } else {
                    assert!(rec.value.len() < 4);
                }
                n += 1;
            }
            Err(e) => {
                let e = Error::from(e);
                assert!(e.is_parse_error(), "non-parse error {e:?}");
                assert!(err.is_none(), "second error");
                err = Some(e);
            }
        }
    }
    assert!(it.next().is_none());
    assert!(it.position() <= region.len());
    if err.is_none() && !region.is_empty() {
        assert_eq!(it.position(), region.len());
    }
    (n, err)
}

/// The decrypt+parse targets: `data` = 16-byte IV followed by ciphertext of a whole region.
/// Decrypts with the golden key, parses, and checks that resuming the CFB stream at an
/// input-derived offset agrees with the one-shot decryption and that re-encrypting gives the
/// ciphertext back.
pub fn check_decrypt(data: &[u8], aes256: bool) {
    if data.len() < 16 {
        return;
    }
    let key = &if aes256 {
        CryptKey::aes256(AES256_KEY)
    } else {
        CryptKey::aes128(AES128_KEY)
    }
    .expect("non-empty key");
    let mut iv = [0u8; 16];
    iv.copy_from_slice(&data[..16]);
    let ct = &data[16..];
    let mut plain = ct.to_vec();
    decrypt_cfb(key, &iv, &mut plain);
    check_region(&plain);
    // Resume at an offset derived from the input.
    if !ct.is_empty() {
        let off = (crc32fast::hash(ct) as usize) % (ct.len() + 1);
        let mut d =
            CfbDecryptor::resume(key, &iv, off, &ct[..off]).expect("resume with the whole prefix");
        let mut rest = ct[off..].to_vec();
        d.decrypt(&mut rest);
        assert_eq!(rest, plain[off..], "resume at {off} disagrees");
    }
    let mut again = plain;
    encrypt_cfb(key, &iv, &mut again);
    assert_eq!(again, ct);
}

// ---------------------------------------------------------------------------------------------
// store-level model
// ---------------------------------------------------------------------------------------------

/// (payload, expire time) of each live key.
pub type Entries = BTreeMap<Vec<u8>, (Vec<u8>, u32)>;

/// What a store whose (decrypted) region is `region` must show: last record wins, an empty
/// value deletes, expired keys (at [`NOW`]) are absent. `Err` when the region does not parse.
pub fn model_entries(region: &[u8], key_expire: bool) -> Result<Entries, Error> {
    let mut raw: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    if !region.is_empty() {
        for r in records(region) {
            let r = r?;
            if r.value.is_empty() {
                raw.remove(r.key);
            } else {
                raw.insert(r.key.to_vec(), r.value.to_vec());
            }
        }
    }
    let mut out = Entries::new();
    for (k, v) in raw {
        let (p, t) = if key_expire {
            split_expire(&v).map_or((&v[..], 0), |(p, t)| (p, t))
        } else {
            (&v[..], 0)
        };
        if key_expire && t != 0 && t <= NOW {
            continue;
        }
        out.insert(k, (p.to_vec(), t));
    }
    Ok(out)
}

/// How many keys of a snapshot [`snapshot_entries`] runs every typed getter on (the getters
/// themselves are fuzzed by the data targets; this checks the snapshot's wrappers).
const FULL_GETTER_KEYS: usize = 4;

/// Everything a snapshot shows, through its accessors, with cross-checks between them.
pub fn snapshot_entries(s: &Snapshot) -> Entries {
    let mut out = Entries::new();
    for (k, p, t) in s.entries() {
        assert!(
            out.insert(k.to_vec(), (p.to_vec(), t)).is_none(),
            "key twice"
        );
    }
    assert_eq!(s.len(), out.len());
    assert_eq!(s.is_empty(), out.is_empty());
    assert_eq!(s.keys().count(), out.len());
    assert_eq!(s.iter().count(), out.len());
    for (i, (k, (p, t))) in out.iter().enumerate() {
        assert!(s.contains(k));
        assert_eq!(s.raw_value(k), Some(&p[..]));
        assert_eq!(s.expire_at(k), Some(*t));
        if i >= FULL_GETTER_KEYS {
            continue;
        }
        // Every getter of the value table (the named getters are generated from the same rows
        // and call the same decoders). Debug text: equal values, NaN included, print the same.
        for ty in ValueType::ALL {
            assert_eq!(
                format!("{:?}", s.get_value(k, ty)),
                format!("{:?}", decode::decode(ty, p)),
                "{ty}"
            );
        }
        assert_eq!(s.get_string(k), decode::as_string(p));
        assert_eq!(s.get_bytes_vec(k), decode::as_bytes_vec(p));
    }
    out
}

/// What a successfully loaded snapshot must hold given the data file it was loaded from:
/// the region `data[4 .. 4 + region_len]` of the file as the official library maps it
/// (rounded up to whole pages, zero-filled), decrypted with the store's key and IV.
pub fn expected_from_file(s: &Snapshot, data: &[u8], mode: Mode) -> Entries {
    let len = s.region_len();
    let mut mapped = data.to_vec();
    let mapped_len = mmkv_reader::locate::Rules::official().mapped_size(data.len() as u64);
    mapped.resize(mapped_len as usize, 0);
    let region = mapped
        .get(4..4 + len)
        .expect("snapshot region lies inside the mapped data file");
    let mut region = region.to_vec();
    if let Some(k) = mode.key() {
        decrypt_cfb(&k, &k.iv_for(s.meta()), &mut region);
    }
    model_entries(&region, s.meta().key_expire()).expect("a loaded region parses")
}

// ---------------------------------------------------------------------------------------------
// synthesizing stores
// ---------------------------------------------------------------------------------------------

pub use mmkv_reader::test_support::push_record;

/// A plaintext region: a 4-byte item-size holder then the records.
pub fn region_of(recs: &[(&[u8], Vec<u8>)]) -> Vec<u8> {
    let mut b = StoreBuilder::new(4);
    for (k, v) in recs {
        b.raw(k, v);
    }
    b.region()
}

/// The records of the base store the reload target starts from.
pub fn base_records() -> Vec<(&'static [u8], Vec<u8>)> {
    let lp = length_prefixed;
    vec![
        (b"int", vec![42]),
        (b"neg", vec![0xff, 0xff, 0xff, 0xff, 0x0f]),
        (b"str", lp(b"hello, mmkv")),
        (b"bytes", lp(&[0, 1, 2, 3, 255])),
        (b"f64", 1.5f64.to_le_bytes().to_vec()),
        (b"strs", {
            let mut items = lp(b"a");
            items.extend(lp(b"bc"));
            lp(&items)
        }),
        (b"gone", vec![1]),
        (b"gone", vec![]),
        (b"int", vec![43]),
    ]
}

/// Meta (one page) and data file (header + region, padded to a page) of a synthetic store
/// with meta version 4. `stored` is the region as stored (already encrypted if it must be).
pub fn synth_pair(
    stored: &[u8],
    sequence: u32,
    iv: [u8; 16],
    last: Option<(u32, u32)>,
) -> (Vec<u8>, Vec<u8>) {
    let spec = MetaSpec {
        version: 4,
        sequence,
        iv,
        last_confirmed: last,
        ..MetaSpec::default()
    };
    (spec.bytes(stored), data_bytes(stored, &[]))
}

/// The IV synthetic stores use.
pub const SYNTH_IV: [u8; 16] = *b"fuzz-iv-16-bytes";

/// Encrypts a plaintext region for `mode` with [`SYNTH_IV`].
pub fn store_region(mode: Mode, plain: &[u8]) -> Vec<u8> {
    let mut r = plain.to_vec();
    if let Some(k) = mode.key() {
        encrypt_cfb(&k, &SYNTH_IV, &mut r);
    }
    r
}

/// The base store of the reload target for `mode`: (meta, data).
pub fn base_pair(mode: Mode) -> (Vec<u8>, Vec<u8>) {
    let plain = region_of(&base_records());
    synth_pair(&store_region(mode, &plain), 1, SYNTH_IV, None)
}

/// Encodes a reload-target input: `[mode][meta len: u16 LE][meta][data]`.
pub fn encode_reload_input(mode: Mode, meta: &[u8], data: &[u8]) -> Vec<u8> {
    let mlen = meta.len().min(u16::MAX as usize);
    let mut v = vec![mode.byte()];
    v.extend_from_slice(&(mlen as u16).to_le_bytes());
    v.extend_from_slice(&meta[..mlen]);
    v.extend_from_slice(data);
    v
}

/// Splits a reload-target input (see [`encode_reload_input`]); short inputs give empty parts.
pub fn decode_reload_input(input: &[u8]) -> (Mode, &[u8], &[u8]) {
    let mode = Mode::from_byte(input.first().copied().unwrap_or(0));
    let mlen = match input.get(1..3) {
        Some(b) => u16::from_le_bytes([b[0], b[1]]) as usize,
        None => 0,
    };
    let rest = input.get(3..).unwrap_or(&[]);
    let mlen = mlen.min(rest.len());
    (mode, &rest[..mlen], &rest[mlen..])
}

// ---------------------------------------------------------------------------------------------
// reload target
// ---------------------------------------------------------------------------------------------

/// Drives `Store` on real files: a valid store is opened, both files are overwritten with the
/// mutated pair, and the store refreshes. On failure the previous snapshot must still answer
/// exactly as before; on success the new snapshot must match the model of the file it read.
/// The mutated pair is also opened fresh (exact meta length, so short meta files are covered).
pub struct ReloadHarness {
    dir: PathBuf,
    bases: Vec<Base>,
}

struct Base {
    meta: Vec<u8>,
    data: Vec<u8>,
    /// The region as stored (ciphertext when encrypted).
    stored: Vec<u8>,
    model: Entries,
}

impl ReloadHarness {
    /// Uses `dir` (created if missing) for its two stores.
    pub fn new(dir: &Path) -> ReloadHarness {
        std::fs::create_dir_all(dir).expect("create harness dir");
        let bases = Mode::ALL
            .iter()
            .map(|&m| {
                let (meta, data) = base_pair(m);
                let plain = region_of(&base_records());
                Base {
                    meta,
                    data,
                    stored: store_region(m, &plain),
                    model: model_entries(&plain, false).expect("base parses"),
                }
            })
            .collect();
        ReloadHarness {
            dir: dir.to_path_buf(),
            bases,
        }
    }

    /// A directory for a process-wide harness: in `/dev/shm` when it exists. (libFuzzer exits
    /// without dropping statics, so directories of processes that are gone are removed here.)
    pub fn default_dir() -> PathBuf {
        const PREFIX: &str = "mmkv-reader-fuzz-";
        let shm = Path::new("/dev/shm");
        let root = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        if let Ok(rd) = std::fs::read_dir(&root) {
            for e in rd.flatten() {
                let name = e.file_name();
                let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
                    continue;
                };
                if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        root.join(format!("{PREFIX}{}", std::process::id()))
    }

    /// Runs one input (see [`encode_reload_input`]).
    pub fn run(&self, input: &[u8]) {
        let (mode, meta, data) = decode_reload_input(input);
        let base = &self.bases[mode.byte() as usize];
        let (base_meta, base_data, base_model) = (&base.meta, &base.data, &base.model);

        // 1. Reload of an open store.
        let path = self.dir.join("live");
        let mpath = self.dir.join("live.crc");
        std::fs::write(&path, base_data).expect("write data");
        std::fs::write(&mpath, base_meta).expect("write meta");
        let store = Store::open(&path, mode.options()).expect("base store opens");
        let before = store.snapshot();
        assert_eq!(&snapshot_entries(&before), base_model);
        // Overwrite in place. The data file may shrink (the reader never maps it); the meta
        // file is never made shorter than the mapped page (see fuzz/README.md).
        std::fs::write(&path, data).expect("overwrite data");
        {
            let mut f = OpenOptions::new()
                .write(true)
                .open(&mpath)
                .expect("open meta");
            f.write_all(meta).expect("overwrite meta");
            if meta.len() < META_FILE_LEN {
                f.write_all(&vec![0u8; META_FILE_LEN - meta.len()])
                    .expect("pad meta");
            }
        }
        let mut reloaded_full = false;
        match store.refresh() {
            Ok(changed) => {
                let now = store.snapshot();
                assert!(store.last_reload_error().is_none());
                let got = snapshot_entries(&now);
                if changed {
                    assert_eq!(now.generation(), before.generation() + 1);
                    match store.last_reload_kind() {
                        Some(ReloadKind::Full) => {
                            reloaded_full = true;
                            assert_eq!(got, expected_from_file(&now, data, mode))
                        }
                        Some(ReloadKind::Partial) => {
                            // The base region as loaded, then the appended bytes of the file.
                            let mut stored = base.stored.clone();
                            let added = data
                                .get(4 + stored.len()..4 + now.region_len())
                                .expect("appended bytes lie inside the data file");
                            stored.extend_from_slice(added);
                            if let Some(k) = mode.key() {
                                decrypt_cfb(&k, &k.iv_for(now.meta()), &mut stored);
                            }
                            let want = model_entries(&stored, now.meta().key_expire())
                                .expect("a partially loaded region parses");
                            assert_eq!(got, want);
                        }
                        None => panic!("changed without a reload kind"),
                    }
                } else {
                    assert_eq!(now.generation(), before.generation());
                    assert_eq!(&got, base_model);
                }
            }
            Err(e) => {
                assert_eq!(store.last_reload_error(), Some(e.clone()));
                // The previous snapshot keeps serving, through every read path.
                let now = store.snapshot();
                assert_eq!(now.generation(), before.generation());
                assert_eq!(&snapshot_entries(&now), base_model);
                for (k, (p, _)) in base_model {
                    assert_eq!(store.raw_value(k).as_deref(), Some(&p[..]));
                    assert_eq!(store.get_i32(k), decode::as_i32(p));
                    assert_eq!(store.get_bytes(k).as_deref(), decode::as_bytes(p));
                }
                assert_eq!(store.len(), base_model.len());
                assert_eq!(&snapshot_entries(&before), base_model);
            }
        }
        drop(store);

        // 2. A fresh open of the mutated pair, meta at its exact length: where the reload
        // above did not already load it from scratch (a meta shorter than a full one reads
        // differently unpadded; an unchanged check-on-read triple skips the reload).
        if meta.len() >= 112 && reloaded_full {
            return;
        }
        let fpath = self.dir.join("fresh");
        std::fs::write(&fpath, data).expect("write data");
        std::fs::write(self.dir.join("fresh.crc"), meta).expect("write meta");
        if let Ok(s) = Store::open(&fpath, mode.options()) {
            let snap = s.snapshot();
            assert_eq!(
                snapshot_entries(&snap),
                expected_from_file(&snap, data, mode)
            );
        }
    }
}

impl Drop for ReloadHarness {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

// ---------------------------------------------------------------------------------------------
// load target: the full load path from bytes
// ---------------------------------------------------------------------------------------------

/// The full load path from bytes (`mmkv_reader::load_bytes`, the same path `Store::open` and
/// `mmkv dump` take) on an input in the reload target's format, with both strategies:
/// never panics; the locator's decision is self-consistent (the region is the data as the
/// official library maps it, CRC flags match, the strategy only matters when no region passes
/// its check); a successful load holds exactly the model of that region (decrypted, greedily
/// cut when recovered); a failed one is a discard or a region that does not parse.
pub fn check_load(input: &[u8]) {
    use mmkv_reader::locate::{greedy_len, locate, parse_meta, Rules, Source};
    let (mode, meta, data) = decode_reload_input(input);
    let info = parse_meta(meta);
    let official = locate(&info, data, Rules::official()).expect("slices never fail");
    let recover = locate(&info, data, Rules::recover()).expect("slices never fail");
    for found in [&official, &recover] {
        let l = &found.location;
        assert_eq!(l.size, found.region.len() as u64);
        assert_eq!(l.file_len, data.len() as u64);
        assert!(l.mapped_size >= l.file_len && l.mapped_size % 4096 == 0);
        assert!(l.size + 4 <= l.mapped_size || l.source == Source::Discarded);
        assert_eq!(
            l.crc_ok,
            !matches!(l.source, Source::Recovered | Source::Discarded)
        );
        if l.source != Source::Discarded {
            let mut mapped = data.to_vec();
            mapped.resize(l.mapped_size as usize, 0);
            assert!(found.region[..] == mapped[4..4 + l.size as usize]);
            assert_eq!(l.crc, crc32fast::hash(&found.region));
        }
        assert_eq!(
            l.problem.is_none(),
            l.source != Source::Discarded && l.is_primary()
        );
    }
    assert_ne!(recover.location.source, Source::Discarded);
    if official.location.source != Source::Discarded {
        assert_eq!(official, recover, "the strategy only matters on failure");
    }
    for (found, recover_on) in [(&official, false), (&recover, true)] {
        let opts = mode.options().recover(recover_on);
        let result = mmkv_reader::load_bytes(meta, data, &opts);
        let mut region = found.region.clone();
        if let Some(k) = mode.key() {
            decrypt_cfb(&k, &k.iv_for(&info), &mut region);
        }
        if found.location.greedy() {
            region.truncate(greedy_len(&region));
        }
        match result {
            Ok((snap, loc)) => {
                assert_eq!(loc, found.location);
                assert_ne!(loc.source, Source::Discarded);
                let want = model_entries(&region, info.key_expire()).expect("loaded region parses");
                assert_eq!(snapshot_entries(&snap), want);
            }
            Err(e) => {
                let parse_failed = model_entries(&region, info.key_expire()).is_err();
                assert!(
                    found.location.source == Source::Discarded || parse_failed,
                    "load failed with {e:?} on a region that parses"
                );
            }
        }
    }
}
