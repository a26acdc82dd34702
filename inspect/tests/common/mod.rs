//! Shared helpers of the integration tests: running the binary, reading corpus manifests,
//! building stores by hand.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub use mmkv_corpus::{Manifest, StoreManifest};
use mmkv_reader::test_support;

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

/// Runs `mmkv dump --history --carve --json EXTRA... PATH` (the history with the stale
/// records carved after the region), asserts success, parses stdout as JSON.
pub fn carve_json(path: impl AsRef<Path>, extra: &[&str]) -> Value {
    let path = path.as_ref().to_str().expect("UTF-8 store path");
    let mut args = vec!["dump", "--history", "--carve", "--json"];
    args.extend_from_slice(extra);
    args.push(path);
    run_json(&args)
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
    mmkv_corpus::corpus_root()
}

/// Every tag directory of the corpus, in version order.
pub fn tags() -> Vec<PathBuf> {
    let root = corpus();
    mmkv_corpus::corpus_tags(&root)
        .expect("corpus dir")
        .into_iter()
        .map(|t| root.join(t))
        .collect()
}

/// A tag's manifest.
pub fn manifest(tag: &Path) -> Manifest {
    Manifest::load(tag).unwrap()
}

/// The crypt arguments of a manifest store.
pub fn crypt_args(store: &StoreManifest) -> Vec<String> {
    let mut a = Vec::new();
    if let Some(k) = &store.crypt_key_hex {
        a.push("--crypt-key-hex".to_string());
        a.push(k.clone());
        if store.aes256 {
            a.push("--aes256".to_string());
        }
    }
    a
}

/// Lowercase hex.
pub fn hex(b: &[u8]) -> String {
    mmkv_corpus::hex::encode(b)
}

/// Parses lowercase hex.
pub fn unhex(s: &str) -> Vec<u8> {
    mmkv_corpus::hex::decode(s).unwrap()
}

/// Protobuf varint.
pub fn varint(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&test_support::varint_bytes(v));
}

#[allow(unused_imports)]
pub use mmkv_reader::test_support::padded_varint;

/// Length-delimited bytes.
pub fn delimited(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&test_support::length_prefixed(b));
}

/// A hand-built store: records appended in order after a holder (keys as text; the fields
/// are [`test_support::StoreBuilder`]'s).
pub struct Builder(pub test_support::StoreBuilder);

impl std::ops::Deref for Builder {
    type Target = test_support::StoreBuilder;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Builder {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl Builder {
    /// A store with a holder of `width` bytes.
    pub fn new(width: usize) -> Builder {
        Builder(test_support::StoreBuilder::new(width))
    }

    /// Appends `key = payload` (expire time `expire` when key expiration is on).
    pub fn set(&mut self, key: &str, payload: &[u8], expire: u32) -> &mut Builder {
        self.0.set(key.as_bytes(), payload, expire);
        self
    }

    /// Appends a deletion marker for `key`.
    pub fn remove(&mut self, key: &str) -> &mut Builder {
        self.0.remove(key.as_bytes());
        self
    }

    /// The data region.
    pub fn region(&self) -> Vec<u8> {
        self.0.region()
    }

    /// Writes `dir/name` and `dir/name.crc` (meta `version`, 4 KiB data file unless the content
    /// needs more, `tail` written right after the region). Returns the data path.
    pub fn write(&self, dir: &Path, name: &str, version: u32, tail: &[u8]) -> PathBuf {
        let region = self.region();
        write_store(dir, name, &region, version, self.0.key_expire, tail, None)
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
    let mut spec = test_support::MetaSpec {
        version,
        iv: iv.unwrap_or_default(),
        version_fields_only: true,
        ..test_support::MetaSpec::default()
    };
    if key_expire {
        spec = spec.key_expire();
    }
    let path = dir.join(name);
    test_support::write_store(&path, region, tail, &spec).unwrap();
    path
}
