//! Writes seed inputs for every fuzz target into `fuzz/corpus/<target>/` from the golden
//! stores in `../corpus`, found through their manifests (plus synthetic stores that reach the partial-reload and fallback
//! paths). Run from anywhere: `cargo run --no-default-features --features tools --bin seed-corpus` in `fuzz/`
//! (or `fuzz/seed.sh`). Existing files are kept; seeds are named by their CRC-32.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use mmkv_corpus::{corpus_root, corpus_tags, meta_file_name, Manifest, StoreManifest};
use mmkv_reader::crypto::{decrypt_cfb, encrypt_cfb};
use mmkv_reader::meta::MetaInfo;
use mmkv_reader::records::{holder_len, records};
use mmkv_reader::CryptKey;
use mmkv_reader_fuzz::harness::{
    base_pair, base_records, encode_reload_input, push_record, region_of, store_region, synth_pair,
    Mode, SYNTH_IV,
};

struct Out {
    root: PathBuf,
    written: usize,
    seen: BTreeSet<(String, u32)>,
}

impl Out {
    fn put(&mut self, target: &str, bytes: &[u8]) {
        if target == "reload" {
            // the load target takes the same input format
            self.put_one("load", bytes);
        }
        self.put_one(target, bytes);
    }

    fn put_one(&mut self, target: &str, bytes: &[u8]) {
        let crc = crc32fast::hash(bytes);
        if !self.seen.insert((target.to_string(), crc)) {
            return;
        }
        let dir = self.root.join(target);
        std::fs::create_dir_all(&dir).expect("create corpus dir");
        std::fs::write(dir.join(format!("seed-{crc:08x}-{}", bytes.len())), bytes)
            .expect("write seed");
        self.written += 1;
    }
}

/// The fuzz mode whose key a corpus store was written with (`None`: another key, meta seeds
/// only).
fn mode_of(store: &StoreManifest) -> Option<Mode> {
    let key = match store.crypt_key().ok()? {
        Some(k) => Some(CryptKey::new(k, store.aes256)?),
        None => None,
    };
    Mode::ALL.into_iter().find(|m| m.key() == key)
}

fn main() {
    let fuzz_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, dir] = &args[..] {
        if flag == "--edges" {
            edges(Path::new(dir));
            return;
        }
    }
    let corpus = corpus_root();
    let mut out = Out {
        root: fuzz_dir.join("corpus"),
        written: 0,
        seen: BTreeSet::new(),
    };
    for tag in corpus_tags(&corpus).expect("golden corpus") {
        let tag = corpus.join(tag);
        let manifest = Manifest::load(&tag).expect("manifest");
        for store in &manifest.stores {
            let id = &store.id;
            let meta_bytes = std::fs::read(tag.join(meta_file_name(id))).expect("meta");
            let data = std::fs::read(tag.join(id)).expect("data");
            let meta_bytes = &meta_bytes[..meta_bytes.len().min(112)];
            out.put("meta", meta_bytes);
            let Ok(meta) = MetaInfo::parse(meta_bytes) else {
                continue;
            };
            if data.len() < 4 {
                continue;
            }
            let header = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
            let size = if meta.has_actual_size() {
                meta.actual_size
            } else {
                header
            } as usize;
            let Some(region) = data.get(4..4 + size) else {
                continue;
            };
            let Some(mode) = mode_of(store) else {
                continue;
            };
            // Golden regions are up to ~60 KB; seeds are cut into valid regions of at most
            // a few KB (records grouped in order) so the fuzzers stay fast.
            let key = mode.key();
            let iv = key.as_ref().map(|k| k.iv_for(&meta));
            let mut plain = region.to_vec();
            if let (Some(k), Some(iv)) = (&key, iv) {
                decrypt_cfb(k, &iv, &mut plain);
            }
            for chunk in chunks(&plain) {
                let mut stored = chunk.clone();
                if let (Some(k), Some(iv)) = (&key, iv) {
                    encrypt_cfb(k, &iv, &mut stored);
                }
                match (&key, iv) {
                    (Some(k), Some(iv)) => {
                        let mut v = iv.to_vec();
                        v.extend_from_slice(&stored);
                        let t = if k.is_aes256() {
                            "decrypt_aes256"
                        } else {
                            "decrypt_aes128"
                        };
                        out.put(t, &v);
                    }
                    _ => out.put("data_plain", &chunk),
                }
                let (m, d) = repair_pair(meta_bytes, &meta, &stored);
                out.put("reload", &encode_reload_input(mode, &m, &d));
            }
        }
    }
    synthetic(&mut out);
    eprintln!(
        "wrote {} seed files under {}",
        out.written,
        out.root.display()
    );
}

/// Synthetic pairs relative to the reload target's base store.
fn synthetic(out: &mut Out) {
    for mode in Mode::ALL {
        let base = base_records();
        let plain = region_of(&base);
        let (meta, data) = synth_pair(&store_region(mode, &plain), 1, SYNTH_IV, None);
        let trim = |d: &[u8], n: usize| d[..4 + n].to_vec();
        // Unchanged.
        out.put(
            "reload",
            &encode_reload_input(mode, &meta[..112], &trim(&data, plain.len())),
        );
        // Appended records, same sequence: partial reload.
        let mut grown = plain.clone();
        push_record(&mut grown, b"new", &[7]);
        push_record(&mut grown, b"str", &[]);
        push_record(&mut grown, b"int", &[0x80, 0x01]);
        let (m2, d2) = synth_pair(&store_region(mode, &grown), 1, SYNTH_IV, None);
        out.put(
            "reload",
            &encode_reload_input(mode, &m2[..112], &trim(&d2, grown.len())),
        );
        // Full write-back: new sequence, fewer records.
        let small = region_of(&base[..3]);
        let (m3, d3) = synth_pair(&store_region(mode, &small), 2, SYNTH_IV, None);
        out.put(
            "reload",
            &encode_reload_input(mode, &m3[..112], &trim(&d3, small.len())),
        );
        // Torn append: the meta claims a grown size whose crc does not match, but the
        // last-confirmed size/crc describe the base region.
        let stored = store_region(mode, &plain);
        let (mut m4, _) = synth_pair(&stored, 1, SYNTH_IV, None);
        let grown_stored = store_region(mode, &grown);
        m4[28..32].copy_from_slice(&(grown_stored.len() as u32).to_le_bytes());
        m4[0..4].copy_from_slice(&0xdead_beefu32.to_le_bytes());
        let mut d4 = (grown_stored.len() as u32).to_le_bytes().to_vec();
        d4.extend_from_slice(&grown_stored);
        out.put("reload", &encode_reload_input(mode, &m4[..112], &d4));
        if mode == Mode::Plain {
            out.put("data_plain", &grown);
            out.put("meta", &m2[..112]);
        }
    }
}

/// Largest seed region (a record bigger than this gets a region of its own).
const CHUNK: usize = 1000;

/// Splits a plaintext region into valid regions (4-byte holder + consecutive records) of at
/// most [`CHUNK`] bytes; the empty region is kept as is.
fn chunks(plain: &[u8]) -> Vec<Vec<u8>> {
    if plain.is_empty() {
        return vec![Vec::new()];
    }
    let Ok(h) = holder_len(plain) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut cur = plain[..h].to_vec();
    let mut n = 0;
    let offsets: Vec<usize> = records(plain)
        .map_while(Result::ok)
        .map(|r| r.offset)
        .chain(std::iter::once(plain.len()))
        .collect();
    for w in offsets.windows(2) {
        let rec = &plain[w[0]..w[1]];
        if n > 0 && cur.len() + rec.len() > CHUNK {
            out.push(std::mem::replace(&mut cur, plain[..h].to_vec()));
            n = 0;
        }
        cur.extend_from_slice(rec);
        n += 1;
    }
    if n > 0 || out.is_empty() {
        out.push(cur);
    }
    out
}

/// A golden meta (first 112 bytes) fixed up for a new stored region: crc, actual size and
/// last-confirmed size/crc (where the version has them), and a data file with the size in
/// its header.
fn repair_pair(meta_bytes: &[u8], meta: &MetaInfo, stored: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let crc = crc32fast::hash(stored);
    let size = stored.len() as u32;
    let mut m = meta_bytes.to_vec();
    m[0..4].copy_from_slice(&crc.to_le_bytes());
    if meta.has_actual_size() {
        m[28..32].copy_from_slice(&size.to_le_bytes());
        m[32..36].copy_from_slice(&size.to_le_bytes());
        m[36..40].copy_from_slice(&crc.to_le_bytes());
    }
    let mut d = size.to_le_bytes().to_vec();
    d.extend_from_slice(stored);
    (m, d)
}

/// Hand-made edge inputs (`seed-corpus --edges DIR` writes `DIR/<target>/edge-<name>`); the
/// regression test `reader/tests/fuzz_regressions.rs` replays them with the crash inputs.
fn edges(root: &Path) {
    let put = |target: &str, name: &str, bytes: &[u8]| {
        let dir = root.join(target);
        std::fs::create_dir_all(&dir).expect("create dir");
        std::fs::write(dir.join(format!("edge-{name}")), bytes).expect("write edge input");
    };
    let mut v4 = vec![0u8; 112];
    v4[4] = 4;
    v4[104..112].fill(0xff);
    put("meta", "empty", b"");
    put("meta", "eleven-bytes", &[1; 11]);
    put("meta", "v4-cut-at-104", &v4[..104]);
    put("meta", "v4-all-flags", &v4);
    let mut v9 = vec![0u8; 104];
    v9[4] = 9;
    put("meta", "specious-v9", &v9);

    put("data_plain", "empty", b"");
    put("data_plain", "malformed-holder", &[0xff; 11]);
    put(
        "data_plain",
        "negative-key-len",
        &[0, 0xff, 0xff, 0xff, 0xff, 0x0f],
    );
    put(
        "data_plain",
        "huge-key-len",
        &[0, 0xff, 0xff, 0xff, 0xff, 0x07, b'k'],
    );
    put(
        "data_plain",
        "huge-value-len",
        &[0, 1, b'k', 0xfe, 0xff, 0xff, 0xff, 0x07, 1],
    );
    put("data_plain", "empty-keys", &[0, 0, 0, 0, 1, b'k', 1, 1]);
    let mut r = region_of(&base_records());
    r.truncate(r.len() - 1);
    put("data_plain", "cut-last-value", &r);

    put("decrypt_aes128", "iv-only", &[7; 16]);
    put("decrypt_aes256", "iv-plus-one", &[7; 17]);
    let mut ct = SYNTH_IV.to_vec();
    ct.extend(store_region(Mode::Aes128, &region_of(&base_records())));
    put("decrypt_aes128", "base-store", &ct);
    let mut ct = SYNTH_IV.to_vec();
    ct.extend(store_region(Mode::Aes256, &region_of(&base_records())));
    put("decrypt_aes256", "base-store", &ct);

    let mut o = Out {
        root: root.join("tmp-synthetic"),
        written: 0,
        seen: BTreeSet::new(),
    };
    synthetic(&mut o);
    // The synthetic reload pairs (append, write-back, torn append with last-confirmed
    // fallback, unchanged) in all three modes, under stable names.
    let mut files: Vec<PathBuf> = std::fs::read_dir(o.root.join("reload"))
        .expect("synthetic reload seeds")
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    for (i, f) in files.iter().enumerate() {
        put(
            "reload",
            &format!("synthetic-{i:02}"),
            &std::fs::read(f).expect("read"),
        );
    }
    let _ = std::fs::remove_dir_all(&o.root);
    put("reload", "empty-input", b"");
    put(
        "reload",
        "short-meta",
        &encode_reload_input(Mode::Plain, &[4, 0, 0, 0, 4], &[0; 8]),
    );
    let (m, d) = base_pair(Mode::Aes256);
    put(
        "reload",
        "base-aes256-cut-data",
        &encode_reload_input(Mode::Aes256, &m[..112], &d[..20]),
    );
}
