//! Encryption and wrong-key detection, "never a silent empty result", bad input: a message naming
//! the problem on stderr, exit status 1, files untouched.

mod common;

use std::path::{Path, PathBuf};

use common::*;

/// Contents and modification times of a store's two files.
fn snapshot(path: &Path) -> Vec<(PathBuf, Vec<u8>, std::time::SystemTime)> {
    let mut crc = path.as_os_str().to_owned();
    crc.push(".crc");
    [path.to_path_buf(), PathBuf::from(crc)]
        .into_iter()
        .filter(|p| p.exists())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            let mtime = std::fs::metadata(&p).unwrap().modified().unwrap();
            (p, bytes, mtime)
        })
        .collect()
}

/// Runs a failing command and checks the store's files are unchanged.
fn fails_untouched(path: &Path, args: &[&str]) -> String {
    let before = snapshot(path);
    let err = run_fail(args);
    assert_eq!(before, snapshot(path), "files changed by {args:?}");
    err
}

fn corpus_store(tag: &str, id: &str) -> PathBuf {
    corpus().join(tag).join(id)
}

const AES256_KEY_HEX: &str = "3031323334353637383961626364656630313233343536373839414243444546";

#[test]
fn encrypted_store_without_key_looks_encrypted() {
    for tag in ["v1.1.0", "v1.2.16", "v2.0.0", "v2.4.2"] {
        for id in ["aes128", "aes128-short-key", "aes128-long-key"] {
            let p = corpus_store(tag, id);
            let err = fails_untouched(&p, &["dump", "--json", p.to_str().unwrap()]);
            assert!(err.contains("looks encrypted"), "{tag}/{id}: {err}");
            assert!(err.contains("--crypt-key"), "{tag}/{id}: {err}");
            assert!(err.contains(id), "the message names the file: {err}");
            let err = fails_untouched(&p, &["dump", "--history", p.to_str().unwrap()]);
            assert!(err.contains("looks encrypted"), "{err}");
        }
    }
}

#[test]
fn wrong_key_is_an_error_not_garbage() {
    let p = corpus_store("v2.4.2", "aes128");
    let s = p.to_str().unwrap();
    for key in ["not-the-key", "mmkv-conformancX", "short"] {
        let err = fails_untouched(&p, &["dump", "--crypt-key", key, s]);
        assert!(err.contains("does not decrypt"), "{key}: {err}");
    }
    let err = fails_untouched(&p, &["dump", "--crypt-key-hex", "ff00ff00", s]);
    assert!(err.contains("does not decrypt"), "{err}");
    // The right key works, as text and as hex.
    let a = run_json(&["dump", "--json", "--crypt-key", "mmkv-conformance", s]);
    let b = run_json(&[
        "dump",
        "--json",
        "--crypt-key-hex",
        &hex(b"mmkv-conformance"),
        s,
    ]);
    assert_eq!(a, b);
    assert!(!a["entries"].as_array().unwrap().is_empty());
    // A key on a plaintext store: an error that says the store is not encrypted.
    let plain = corpus_store("v2.4.2", "plain");
    let err = fails_untouched(
        &plain,
        &[
            "dump",
            "--crypt-key",
            "mmkv-conformance",
            plain.to_str().unwrap(),
        ],
    );
    assert!(err.contains("not encrypted"), "{err}");
}

#[test]
fn aes256_flag_missing_or_wrong() {
    for tag in ["v2.3.0", "v2.4.2"] {
        for id in ["aes256", "expire-aes256"] {
            let p = corpus_store(tag, id);
            let s = p.to_str().unwrap();
            let err = fails_untouched(&p, &["dump", "--crypt-key-hex", AES256_KEY_HEX, s]);
            assert!(err.contains("does not decrypt"), "{tag}/{id}: {err}");
            assert!(err.contains("pass --aes256"), "{tag}/{id}: {err}");
            let ok = run_json(&[
                "dump",
                "--json",
                "--crypt-key-hex",
                AES256_KEY_HEX,
                "--aes256",
                s,
            ]);
            assert!(!ok["entries"].as_array().unwrap().is_empty());
        }
        // --aes256 on an AES-128 store.
        let p = corpus_store(tag, "aes128");
        let err = fails_untouched(
            &p,
            &[
                "dump",
                "--crypt-key",
                "mmkv-conformance",
                "--aes256",
                p.to_str().unwrap(),
            ],
        );
        assert!(err.contains("drop --aes256"), "{err}");
    }
}

#[test]
fn random_iv_in_a_plaintext_store_is_not_evidence() {
    // clearAll() leaves a random IV in plaintext stores: such stores dump fine without a key.
    for tag in ["v1.1.0", "v1.2.16", "v2.3.0"] {
        let p = corpus_store(tag, "cleared");
        let meta = std::fs::read(format!("{}.crc", p.display())).unwrap();
        assert!(
            meta[12..28].iter().any(|&b| b != 0),
            "{tag}: IV should be random"
        );
        let d = run_json(&["dump", "--json", p.to_str().unwrap()]);
        assert_eq!(d["entries"].as_array().unwrap().len(), 0);
    }
    // A hand-built plaintext store with data and a random IV.
    let dir = tempfile::tempdir().unwrap();
    let mut b = Builder::new(4);
    b.set("k", &[0x05], 0);
    let region = b.region();
    let p = write_store(dir.path(), "iv", &region, 4, false, &[], Some([0x5a; 16]));
    let d = run_json(&["dump", "--json", p.to_str().unwrap()]);
    assert_eq!(d["entries"][0]["value_hex"], "05");
}

#[test]
fn zero_records_with_a_nonempty_region_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    // A holder followed by zero bytes: empty keys only (what a zero-filled region parses as).
    let mut region = padded_varint(0, 4);
    region.extend_from_slice(&[0u8; 200]);
    let p = write_store(dir.path(), "zeros", &region, 4, false, &[], None);
    let err = fails_untouched(&p, &["dump", p.to_str().unwrap()]);
    assert!(err.contains("holds no record"), "{err}");
    let err = fails_untouched(&p, &["dump", "--history", "--json", p.to_str().unwrap()]);
    assert!(err.contains("holds no record"), "{err}");
    // A region that is only a holder is a legitimately empty store.
    let region = padded_varint(0, 4);
    let p = write_store(dir.path(), "holder-only", &region, 4, false, &[], None);
    let d = run_json(&["dump", "--json", p.to_str().unwrap()]);
    assert_eq!(d["entries"].as_array().unwrap().len(), 0);
}

#[test]
fn bad_input_names_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = Builder::new(4);
    b.set("k", &[1], 0);
    let good = b.write(dir.path(), "good", 4, &[]);
    let gs = good.to_str().unwrap();

    // Missing meta.
    std::fs::copy(&good, dir.path().join("nometa")).unwrap();
    let p = dir.path().join("nometa");
    let err = fails_untouched(&p, &["dump", p.to_str().unwrap()]);
    assert!(err.contains("nometa.crc"), "{err}");

    // Missing data file.
    let p = dir.path().join("nothing");
    let err = run_fail(&["dump", p.to_str().unwrap()]);
    assert!(err.contains("nothing"), "{err}");

    // Short meta.
    let p = dir.path().join("shortmeta");
    std::fs::copy(&good, &p).unwrap();
    std::fs::write(dir.path().join("shortmeta.crc"), [0u8; 6]).unwrap();
    let err = fails_untouched(&p, &["dump", p.to_str().unwrap()]);
    assert!(err.contains("meta") && err.contains("short"), "{err}");

    // Actual size beyond the file.
    let p = dir.path().join("toobig");
    std::fs::copy(&good, &p).unwrap();
    let mut meta = std::fs::read(format!("{gs}.crc")).unwrap();
    meta[28..32].copy_from_slice(&1_000_000u32.to_le_bytes());
    std::fs::write(dir.path().join("toobig.crc"), &meta).unwrap();
    // The data-file header still holds the right size: the official loader's "downgrade &
    // upgrade" fallback reads it, and the output says so.
    let d = run_json(&["dump", "--json", p.to_str().unwrap()]);
    assert_eq!(d["meta"]["region"]["source"], "header");
    assert!(d["meta"]["region"]["problem"]
        .as_str()
        .unwrap()
        .contains("1000000"));
    assert_eq!(d["entries"].as_array().unwrap().len(), 1);
    // The last-confirmed size/crc fallback reads it too.
    let mut data = std::fs::read(&p).unwrap();
    data[..4].copy_from_slice(&[0; 4]);
    std::fs::write(&p, &data).unwrap();
    let d = run_json(&["dump", "--json", p.to_str().unwrap()]);
    assert_eq!(d["meta"]["region"]["source"], "last_confirmed");
    // With a zero header (as v2.4.0+ write it) and no valid last-confirmed info nothing
    // passes: discarded, named.
    meta[36] ^= 1;
    std::fs::write(dir.path().join("toobig.crc"), &meta).unwrap();
    let err = fails_untouched(&p, &["dump", p.to_str().unwrap()]);
    assert!(err.contains("1000000") && err.contains("discards"), "{err}");

    // A truncated record: "looks encrypted" without a key (the region does not parse), with the
    // position where parsing stopped.
    let p = dir.path().join("trunc");
    let mut region = b.region();
    region.extend_from_slice(&[0x05, b'a']);
    write_store(dir.path(), "trunc", &region, 4, false, &[], None);
    let err = fails_untouched(&p, &["dump", p.to_str().unwrap()]);
    assert!(err.contains("region offset"), "{err}");

    // A directory.
    let err = run_fail(&["dump", dir.path().to_str().unwrap()]);
    assert!(!err.is_empty());

    // Bad hex key, --aes256 without a key, empty key.
    let err = run_fail(&["dump", "--crypt-key-hex", "xyz", gs]);
    assert!(err.contains("--crypt-key-hex"), "{err}");
    let err = run_fail(&["dump", "--aes256", gs]);
    assert!(err.contains("--aes256"), "{err}");
    let err = run_fail(&["dump", "--crypt-key", "", gs]);
    assert!(err.contains("empty"), "{err}");
    // Both key forms.
    let out = run(&["dump", "--crypt-key", "a", "--crypt-key-hex", "61", gs]);
    assert_eq!(out.status.code(), Some(1));

    // A CRC mismatch: the official default discards the content (an error naming it, never a
    // silent empty dump); --recover reads what OnErrorRecover reads, flagged.
    let p = dir.path().join("badcrc");
    std::fs::copy(&good, &p).unwrap();
    let mut meta = std::fs::read(format!("{gs}.crc")).unwrap();
    meta[0] ^= 0xff;
    meta[36] ^= 1; // and no valid last-confirmed crc to fall back to
    std::fs::write(dir.path().join("badcrc.crc"), &meta).unwrap();
    let err = fails_untouched(&p, &["dump", p.to_str().unwrap()]);
    assert!(
        err.contains("discards") && err.contains("--recover"),
        "{err}"
    );
    let d = run_json(&["dump", "--json", "--recover", p.to_str().unwrap()]);
    assert_eq!(d["meta"]["crc_ok"], false);
    assert_eq!(d["meta"]["region"]["source"], "recovered");
    assert_eq!(d["entries"].as_array().unwrap().len(), 1);
    let out = run(&["dump", "--recover", p.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("MISMATCH") && text.contains("RECOVERED"),
        "{text}"
    );
}
