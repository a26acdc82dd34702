//! Shared helpers of the integration tests: running the binary, reading corpus manifests,
//! building stores by hand.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The compiled `mmkv` binary.
pub fn mmkv() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mmkv"))
}

/// Runs `mmkv ARGS`.
pub fn run(args: &[&str]) -> Output {
    mmkv().args(args).output().expect("run mmkv")
}

/// Runs `mmkv ARGS`, asserts success, parses stdout as JSON.
pub fn run_json(args: &[&str]) -> Value {
    let out = run(args);
    assert!(
        out.status.success(),
        "mmkv {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "mmkv {args:?}: bad JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Runs `mmkv ARGS`, asserts exit status 1, returns stderr.
pub fn run_fail(args: &[&str]) -> String {
    let out = run(args);
    assert_eq!(
        out.status.code(),
        Some(1),
        "mmkv {args:?} should fail with 1; stdout {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(out.stdout.is_empty(), "nothing on stdout on failure");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The corpus directory.
pub fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus")
}

/// Every tag directory of the corpus, sorted.
pub fn tags() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(corpus())
        .expect("corpus dir")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join("manifest.json").is_file())
        .collect();
    v.sort();
    v
}

/// A tag's manifest.
pub fn manifest(tag: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(tag.join("manifest.json")).unwrap()).unwrap()
}

/// The crypt arguments of a manifest store.
pub fn crypt_args(store: &Value) -> Vec<String> {
    let mut a = Vec::new();
    if let Some(k) = store["crypt_key_hex"].as_str() {
        a.push("--crypt-key-hex".to_string());
        a.push(k.to_string());
        if store["aes256"].as_bool() == Some(true) {
            a.push("--aes256".to_string());
        }
    }
    a
}

/// Lowercase hex.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Parses lowercase hex.
pub fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// Protobuf varint.
pub fn varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// A varint padded to `width` bytes (continuation bits on zero groups), as MMKV's fixed-width
/// item-size holder writes it.
pub fn padded_varint(v: u32, width: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut v = u64::from(v);
    for i in 0..width {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        out.push(if i + 1 < width { b | 0x80 } else { b });
    }
    out
}

/// Length-delimited bytes.
pub fn delimited(out: &mut Vec<u8>, b: &[u8]) {
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// A hand-built store: records appended in order after a holder.
pub struct Builder {
    /// Item-size holder bytes.
    pub holder: Vec<u8>,
    /// Record bytes.
    pub records: Vec<u8>,
    /// Key expiration on (values get a 4-byte suffix).
    pub key_expire: bool,
}

impl Builder {
    /// A store with a holder of `width` bytes.
    pub fn new(width: usize) -> Builder {
        Builder {
            holder: padded_varint(0, width),
            records: Vec::new(),
            key_expire: false,
        }
    }

    /// Appends `key = payload` (expire time `expire` when key expiration is on).
    pub fn set(&mut self, key: &str, payload: &[u8], expire: u32) -> &mut Builder {
        delimited(&mut self.records, key.as_bytes());
        let mut v = payload.to_vec();
        if self.key_expire {
            v.extend_from_slice(&expire.to_le_bytes());
        }
        delimited(&mut self.records, &v);
        self
    }

    /// Appends a deletion marker for `key`.
    pub fn remove(&mut self, key: &str) -> &mut Builder {
        delimited(&mut self.records, key.as_bytes());
        self.records.push(0);
        self
    }

    /// The data region.
    pub fn region(&self) -> Vec<u8> {
        let mut r = self.holder.clone();
        r.extend_from_slice(&self.records);
        r
    }

    /// Writes `dir/name` and `dir/name.crc` (meta `version`, 4 KiB data file unless the content
    /// needs more, `tail` written right after the region). Returns the data path.
    pub fn write(&self, dir: &Path, name: &str, version: u32, tail: &[u8]) -> PathBuf {
        let region = self.region();
        write_store(dir, name, &region, version, self.key_expire, tail, None)
    }
}

/// Writes a store whose (stored) region is `region`. `iv` goes into the meta (version >= 2).
pub fn write_store(
    dir: &Path,
    name: &str,
    region: &[u8],
    version: u32,
    key_expire: bool,
    tail: &[u8],
    iv: Option<[u8; 16]>,
) -> PathBuf {
    let mut data = Vec::new();
    data.extend_from_slice(&(region.len() as u32).to_le_bytes());
    data.extend_from_slice(region);
    data.extend_from_slice(tail);
    let size = data.len().div_ceil(4096).max(1) * 4096;
    data.resize(size, 0);
    let mut meta = vec![0u8; 4096];
    meta[0..4].copy_from_slice(&crc32fast::hash(region).to_le_bytes());
    meta[4..8].copy_from_slice(&version.to_le_bytes());
    meta[8..12].copy_from_slice(&1u32.to_le_bytes());
    if let Some(iv) = iv {
        meta[12..28].copy_from_slice(&iv);
    }
    if version >= 3 {
        meta[28..32].copy_from_slice(&(region.len() as u32).to_le_bytes());
        meta[32..36].copy_from_slice(&(region.len() as u32).to_le_bytes());
        meta[36..40].copy_from_slice(&crc32fast::hash(region).to_le_bytes());
    }
    if version >= 4 && key_expire {
        meta[104..112].copy_from_slice(&1u64.to_le_bytes());
    }
    let path = dir.join(name);
    std::fs::write(&path, &data).unwrap();
    std::fs::write(dir.join(format!("{name}.crc")), &meta).unwrap();
    path
}
