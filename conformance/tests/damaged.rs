//! Damaged stores against the official loader: corpus stores written by the official library
//! of each built version are damaged (stale `.crc` size, size past the end of the file, flipped
//! bytes, truncated data file, short / empty / missing `.crc`, with and without valid
//! last-confirmed info), then opened by that version with `OnErrorDiscard` (the default) and
//! `OnErrorRecover`, and by the reader: `Store` (with `Options::recover` for the latter) and
//! `mmkv_reader::load_bytes` (the full load path from bytes that `mmkv dump` shares).
//! Every getter of every key must agree. The one accepted difference: where the official
//! default discards the content (opens empty), the reader reports a typed error; and `Store`
//! refuses a meta file shorter than its version needs (documented), which `load_bytes` reads
//! zero-filled as the official library does. And, for encrypted stores of v1.2.0-v1.2.2, the
//! keys the official loader misjudges (`recognise::crypt_loader_misjudged`, a row of the
//! exceptions table), judged from the region the reader read.

use std::path::Path;
use std::sync::Arc;

use conformance::judge::compare::{capture_reader, compare_with_official, official_visible_keys};
use conformance::judge::exceptions::{accepted, Difference, Scope};
use conformance::judge::recognise::crypt_loader_misjudged;
use conformance::judge::recognise::located_region_at;
use conformance::sides::official::OfficialLib;
use conformance::sides::reader::read_snapshot;
use conformance::sides::sys::{built_versions, SysLib};
use conformance::vocab::pool::{default_jobs, run_ordered};
use conformance::{ReaderView, StoreKind, Value, ValueType};
use mmkv_reader::{load_bytes, Options, Snapshot, Store};
use mmkv_sys::versions::Tag;
use mmkv_sys::ErrorStrategy;

/// A reader snapshot as a [`ReaderView`].
struct SnapView(Snapshot);

impl ReaderView for SnapView {
    fn read(&self, key: &[u8], ty: ValueType) -> Option<Value> {
        read_snapshot(&self.0, key, ty)
    }
    fn contains(&self, key: &[u8]) -> bool {
        self.0.contains(key)
    }
    fn keys(&self) -> Vec<Vec<u8>> {
        self.0.keys().map(<[u8]>::to_vec).collect()
    }
    fn count(&self) -> usize {
        self.0.len()
    }
    fn expire_at(&self, key: &[u8]) -> Option<u32> {
        self.0.expire_at(key)
    }
}

type Files = (Option<Vec<u8>>, Vec<u8>);

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
}

fn put(b: &mut [u8], o: usize, v: u32) {
    b[o..o + 4].copy_from_slice(&v.to_le_bytes());
}

/// A damage: (meta, data) of a good store to the damaged files.
type Damage = fn(Vec<u8>, Vec<u8>) -> Files;

/// The damage that makes a version-6 meta (exception `specious-meta-v6` of the fault suite).
const SPECIOUS_META_V6: &str = "meta version 4 -> 6 (one flipped bit)";

/// What the reader must read to agree with `tag` on `files` damaged by `name`: the files
/// themselves, except that v1.3.0-v2.3.0 rewrite a version-6 meta to version 3 without flags
/// on open (the reader follows v2.4.0+, which keep the flags).
fn as_official_sees(tag: &str, name: &str, files: &Files) -> Files {
    let old = Scope::new(tag, false, false)
        .is_some_and(|s| accepted(Difference::SpeciousMetaV6, &s).is_some());
    match &files.0 {
        Some(m) if old && name == SPECIOUS_META_V6 && u32_at(m, 4) == 6 => {
            let mut m = m.clone();
            put(&mut m, 4, 3);
            m[104..112].fill(0);
            (Some(m), files.1.clone())
        }
        _ => files.clone(),
    }
}

/// The damage cases, by name.
fn cases() -> Vec<(&'static str, Damage)> {
    fn no_last(mut m: Vec<u8>) -> Vec<u8> {
        let v = u32_at(&m, 36) ^ 1;
        put(&mut m, 36, v);
        m
    }
    fn actual(m: &[u8], d: &[u8]) -> usize {
        if u32_at(m, 4) >= 3 {
            u32_at(m, 28) as usize
        } else {
            u32_at(d, 0) as usize
        }
    }
    fn flip(m: Vec<u8>, mut d: Vec<u8>, from_end: usize) -> Files {
        let a = actual(&m, &d);
        let at = 4 + a.saturating_sub(from_end).max(1);
        if at < d.len() {
            d[at] ^= 0xff;
        }
        (Some(m), d)
    }
    vec![
        ("stale meta size", |mut m, d| {
            let last = u32_at(&m, 32);
            put(&mut m, 28, last);
            (Some(m), d)
        }),
        ("size past end of file", |mut m, d| {
            put(&mut m, 28, d.len() as u32 + 1000);
            (Some(m), d)
        }),
        ("size past end, no last-confirmed", |mut m, d| {
            put(&mut m, 28, d.len() as u32 + 1000);
            (Some(no_last(m)), d)
        }),
        ("flipped byte late", |m, d| flip(m, d, 200)),
        ("flipped byte late, no last-confirmed", |m, d| {
            flip(no_last(m), d, 200)
        }),
        ("flipped byte early, no last-confirmed", |m, d| {
            let a = actual(&m, &d);
            flip(no_last(m), d, a.saturating_sub(30))
        }),
        ("data truncated mid-region", |m, mut d| {
            let a = actual(&m, &d);
            d.truncate(4 + a / 2);
            (Some(m), d)
        }),
        (
            "data truncated mid-region, no last-confirmed",
            |m, mut d| {
                let a = actual(&m, &d);
                d.truncate(4 + a / 2);
                (Some(no_last(m)), d)
            },
        ),
        // one flipped bit of a version-4 meta: v1.3.0-v2.3.0 read version 6 as version 3
        // without flags, v2.4.0+ (and the reader) keep the flags (see SPECIOUS_META_V6)
        (SPECIOUS_META_V6, |mut m, d| {
            if u32_at(&m, 4) == 4 {
                put(&mut m, 4, 6);
            }
            (Some(m), d)
        }),
        ("meta short (20 bytes)", |m, d| (Some(m[..20].to_vec()), d)),
        ("meta empty", |_, d| (Some(Vec::new()), d)),
        ("meta missing", |_, d| (None, d)),
    ]
}

fn kind_of(id: &str) -> StoreKind {
    *StoreKind::ALL.iter().find(|k| k.id() == id).unwrap()
}

fn write(dir: &Path, id: &str, files: &Files) {
    if let Some(m) = &files.0 {
        std::fs::write(dir.join(format!("{id}.crc")), m).unwrap();
    }
    std::fs::write(dir.join(id), &files.1).unwrap();
}

/// The decrypted data region the reader locates in `files` with `strategy` (`None` for a
/// plaintext kind, which the encrypted loader row that reads it never covers, or when it
/// cannot be read).
fn located_region(id: &str, files: &Files, strategy: ErrorStrategy) -> Option<Vec<u8>> {
    kind_of(id).crypt_key()?;
    let dir = tempfile::tempdir().ok()?;
    write(dir.path(), id, files);
    located_region_at(
        &dir.path().join(id),
        kind_of(id),
        strategy,
        mmkv_sys::page_size(),
    )
}

/// Compares one reader result with the official library opened on its own copy; `region` is
/// the decrypted region the reader read (for the v1.2.0-v1.2.2 loader row).
fn check(
    lib: &SysLib,
    id: &str,
    files: &Files,
    reader: Result<Snapshot, mmkv_reader::Error>,
    region: Option<&[u8]>,
    what: &str,
    failures: &mut Vec<String>,
) -> bool {
    let kind = kind_of(id);
    let features = lib.features();
    let getters = features.getters();
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), id, files);
    let mut official = lib.open(dir.path(), id, kind).unwrap();
    let result = match reader {
        Ok(snap) => {
            let view = SnapView(snap);
            let reads = capture_reader(&view, &[], &getters);
            let scope = Scope::of_kind(lib.tag(), kind).unwrap();
            let mut mismatches =
                compare_with_official(official.as_mut(), &features, &scope, &reads, &getters)
                    .unwrap();
            if !mismatches.is_empty() {
                let official_keys = official_visible_keys(official.as_mut()).unwrap();
                let misjudged = region.and_then(|region| {
                    crypt_loader_misjudged(&scope, region, &official_keys, &reads.keys)
                });
                if let Some(keys) = misjudged {
                    // Only those keys (and the key set and count they change) may differ.
                    mismatches.retain(|m| !m.only_about(&keys));
                }
            }
            if let Some(m) = mismatches.first() {
                failures.push(format!(
                    "{what}: {} mismatch(es), first: {m}",
                    mismatches.len()
                ));
            }
            mismatches.is_empty()
        }
        Err(e) => {
            let keys = official.all_keys(false).unwrap();
            if !keys.is_empty() {
                failures.push(format!(
                    "{what}: reader error {e}, official reads {} keys",
                    keys.len()
                ));
            }
            keys.is_empty()
        }
    };
    official.close().unwrap();
    result
}

/// The damaged states of one version: (states compared, states that agree, failures).
fn damaged_for(tag: &str, corpus: &Path) -> (usize, usize, Vec<String>) {
    let mut failures = Vec::new();
    let (mut states, mut agreed) = (0usize, 0usize);
    let lib = SysLib::load(tag).unwrap();
    // v2.4.x dropped registerErrorHandler; the shim then cannot ask for OnErrorRecover.
    let strategies: &[ErrorStrategy] = if lib.official().capabilities().error_strategy {
        &[ErrorStrategy::Discard, ErrorStrategy::Recover]
    } else {
        eprintln!("damaged: {tag} cannot be asked for OnErrorRecover; default strategy only");
        &[ErrorStrategy::Discard]
    };
    // The version's own stores, and from v2.3.0 on also stores written by v2.3.0 (the last
    // tag writing the size into the data header too: the header fallback's case).
    let mut sources = vec![(tag.to_string(), "plain"), (tag.to_string(), "aes128")];
    sources.push((tag.to_string(), "expire"));
    if Tag::parse(tag) > Tag::parse("v2.3.0") {
        sources.push(("v2.3.0".to_string(), "plain"));
        sources.push(("v2.3.0".to_string(), "aes128"));
    }
    for (from, id) in sources {
        let src = corpus.join(&from).join(id);
        if !src.is_file() || (id == "expire" && !lib.features().key_expire) {
            continue;
        }
        let meta = std::fs::read(src.with_file_name(format!("{id}.crc"))).unwrap();
        let data = std::fs::read(&src).unwrap();
        let kind = kind_of(id);
        for (name, damage) in cases() {
            let files = damage(meta.clone(), data.clone());
            let seen = as_official_sees(tag, name, &files);
            for strategy in strategies.iter().copied() {
                lib.official().set_error_strategy(strategy).unwrap();
                // both sides at the official library's page size in this process
                let mut opts = Options::new()
                    .page_size(mmkv_sys::page_size())
                    .recover(strategy == ErrorStrategy::Recover)
                    .clock(Arc::new(mmkv_reader::SystemClock));
                if let Some(k) = kind.crypt_key() {
                    opts = opts.crypt_key(k).aes256(kind.aes256());
                }
                let what = format!("{tag} reading {from}/{id}, {name} ({strategy:?})");
                // the full load path from bytes (shared with `mmkv dump`)
                let from_bytes =
                    load_bytes(seen.0.as_deref().unwrap_or(&[]), &seen.1, &opts).map(|(s, _)| s);
                let region = located_region(id, &seen, strategy);
                states += 1;
                agreed += check(
                    &lib,
                    id,
                    &files,
                    from_bytes,
                    region.as_deref(),
                    &what,
                    &mut failures,
                ) as usize;
                // Store, where it opens the store at all
                let dir = tempfile::tempdir().unwrap();
                write(dir.path(), id, &seen);
                match Store::open(dir.path().join(id), opts.clone()) {
                    Err(
                        mmkv_reader::Error::MetaMissing { .. }
                        | mmkv_reader::Error::MetaTooShort { .. },
                    ) if files.0.as_ref().is_none_or(|m| m.len() < 112) => {}
                    r => {
                        states += 1;
                        let snap = r.map(|s| s.snapshot());
                        agreed += check(
                            &lib,
                            id,
                            &files,
                            snap,
                            region.as_deref(),
                            &format!("Store {what}"),
                            &mut failures,
                        ) as usize;
                    }
                }
            }
        }
    }
    lib.official()
        .set_error_strategy(ErrorStrategy::Discard)
        .unwrap();
    (states, agreed, failures)
}

#[test]
fn damaged_stores_read_like_the_official_loader() {
    let tags = built_versions();
    if tags.is_empty() {
        eprintln!("damaged: no official version built (MMKV_VERSIONS=none); nothing to compare");
        return;
    }
    let corpus = conformance::corpus::golden::corpus_root();
    // One version per worker (each version is its own library; one thread uses it at a time).
    let per_tag = run_ordered(tags.to_vec(), default_jobs(), |tag| {
        damaged_for(tag, &corpus)
    });
    let (mut states, mut agreed, mut failures) = (0, 0, Vec::new());
    for (s, a, f) in per_tag {
        states += s;
        agreed += a;
        failures.extend(f);
    }
    eprintln!("damaged: {states} damaged states compared, {agreed} agree");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(states > 0);
}
