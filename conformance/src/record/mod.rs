//! Recording a golden corpus with an official version: the store set of `corpus/README.md`
//! (ids, keys, configurations) written by a seeded workload, then read back through the
//! official getters; the manifest is written only when every read-back agrees with the model
//! of what was set.

/// The page corpora (stores of 16 and 64 KiB writers) and their recording.
pub mod pages;

use std::collections::BTreeMap;
use std::path::Path;

use crate::corpus::golden::{Entry, Manifest, StoreManifest, TypedEntry};
use crate::differential::workload::{FAR_EXPIRE, SHORT_EXPIRE, VERY_FAR_EXPIRE};
use crate::error::{Error, Result};
use crate::sides::official::{OfficialLib, OfficialStore};
use crate::vocab::clock::{now_secs, sleep_until_secs};
use crate::vocab::kind::{Features, StoreKind};
use crate::vocab::value::{hex_bytes, Value, ValueType};
use crate::vocab::SplitMix;
use crate::writer::value::seeded;

/// Recorder parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordSpec {
    /// Workload seed.
    pub seed: u64,
    /// Keys per store.
    pub keys: usize,
}

impl Default for RecordSpec {
    fn default() -> RecordSpec {
        RecordSpec {
            seed: 42,
            keys: 120,
        }
    }
}

/// One store of the corpus set: id, configuration, and what the workload does to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CorpusStore {
    /// The id (file name).
    pub id: &'static str,
    /// The configuration.
    pub kind: StoreKind,
    /// What happens after the rounds of sets.
    pub finish: Finish,
}

/// The end of a store's workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// Nothing: the rounds of sets and removals stay.
    Keep,
    /// Opened, nothing written.
    Empty,
    /// `clearAll()` after the rounds.
    Clear,
    /// 90% of the keys removed, then `trim()`.
    Trim,
}

/// The corpus store set for a version with `features` (as in `corpus/README.md`).
pub fn corpus_stores(features: &Features) -> Vec<CorpusStore> {
    let s = |id, kind, finish| CorpusStore { id, kind, finish };
    let mut out = vec![
        s("plain", StoreKind::Plain, Finish::Keep),
        s("multi", StoreKind::Multi, Finish::Keep),
        s("aes128", StoreKind::Aes128, Finish::Keep),
        s("aes128-short-key", StoreKind::Aes128ShortKey, Finish::Keep),
        s("aes128-long-key", StoreKind::Aes128LongKey, Finish::Keep),
        s("aes256", StoreKind::Aes256, Finish::Keep),
        s("aes256-short-key", StoreKind::Aes256ShortKey, Finish::Keep),
        s("expire", StoreKind::Expire, Finish::Keep),
        s("expire-aes128", StoreKind::ExpireAes128, Finish::Keep),
        s("expire-aes256", StoreKind::ExpireAes256, Finish::Keep),
        s("empty", StoreKind::Plain, Finish::Empty),
        s("cleared", StoreKind::Plain, Finish::Clear),
        s("trimmed", StoreKind::Plain, Finish::Trim),
    ];
    out.retain(|c| c.kind.supported_by(features));
    out
}

/// Key `i` of the recorder: ASCII, CJK, emoji and 100-300-byte keys.
pub fn record_key(i: usize) -> String {
    match i % 12 {
        5 => format!("键{i}"),
        7 => format!("🔑{i}"),
        11 => format!("long{i}-{}", "x".repeat(100 + (i * 37) % 190)),
        _ => format!("k{i}"),
    }
}

/// A random value of a type the version supports (empty strings/bytes, 4 KB values, integer
/// extremes, +-0.0, infinities and subnormals included: [`seeded`]).
pub fn random_value(rng: &mut SplitMix, features: &Features) -> Value {
    let types: Vec<ValueType> = features.getters();
    let ty = types[rng.below(types.len() as u64) as usize];
    let size = if rng.below(8) == 0 { 4096 } else { 120 };
    seeded(rng, ty, size)
}

/// The model of one store while recording: key -> (value, expire_at).
type Model = BTreeMap<String, (Value, Option<u32>)>;

/// Sets `value` with `expire`; for expiring stores re-does the set until it happened within
/// one second, so that the expire time is known exactly.
fn set_timed(
    store: &mut dyn OfficialStore,
    key: &str,
    value: &Value,
    expire: Option<u32>,
    key_expire: bool,
) -> Result<Option<Option<u32>>> {
    loop {
        let before = now_secs();
        let ok = store.set(key.as_bytes(), value, expire)?;
        let after = now_secs();
        if !ok {
            return Ok(None);
        }
        if !key_expire {
            return Ok(Some(None));
        }
        if before == after {
            let at = match expire {
                Some(d) if d != 0 => Some((before + u64::from(d)).min(u64::from(u32::MAX)) as u32),
                _ => None,
            };
            return Ok(Some(at));
        }
    }
}

fn record_store(
    lib: &dyn OfficialLib,
    out: &Path,
    spec: &RecordSpec,
    cs: &CorpusStore,
    index: usize,
) -> Result<(StoreManifest, Model, Vec<String>, u64)> {
    let features = lib.features();
    let kind = cs.kind;
    let mut rng = SplitMix::new(spec.seed.wrapping_mul(1000).wrapping_add(index as u64));
    let mut store = lib.open(out, cs.id, kind)?;
    if kind.key_expire() {
        store.enable_key_expire(0)?;
    }
    let mut model = Model::new();
    let mut rejected = 0usize;
    let mut last_short = 0u64;
    let touched: Vec<String> = if cs.finish == Finish::Empty {
        Vec::new()
    } else {
        (0..spec.keys).map(record_key).collect()
    };
    for round in 0..4 {
        for key in &touched {
            let r = rng.below(100);
            if round >= 2 && r < 12 {
                store.remove(key.as_bytes())?;
                model.remove(key);
                continue;
            }
            if r >= 70 && round > 0 {
                continue;
            }
            let value = random_value(&mut rng, &features);
            let expire = if kind.key_expire() {
                match rng.below(4) {
                    0 => None,
                    1 => Some(SHORT_EXPIRE),
                    2 => Some(FAR_EXPIRE),
                    _ => Some(VERY_FAR_EXPIRE),
                }
            } else {
                None
            };
            match set_timed(store.as_mut(), key, &value, expire, kind.key_expire())? {
                None => rejected += 1,
                Some(at) => {
                    if expire == Some(SHORT_EXPIRE) {
                        last_short = now_secs();
                    }
                    model.insert(key.clone(), (value, at));
                }
            }
        }
    }
    match cs.finish {
        Finish::Keep | Finish::Empty => {}
        Finish::Clear => {
            store.clear_all()?;
            model.clear();
        }
        Finish::Trim => {
            for (i, key) in touched.iter().enumerate() {
                if i % 10 != 0 {
                    store.remove(key.as_bytes())?;
                    model.remove(key);
                }
            }
            store.trim()?;
        }
    }
    store.sync()?;
    store.close()?;
    let manifest = StoreManifest {
        id: cs.id.to_string(),
        mode: kind.mode(),
        crypt_key_hex: kind.crypt_key().map(hex_bytes::encode),
        aes256: kind.aes256(),
        key_expire: kind.key_expire(),
        count: 0,
        rejected_sets: rejected,
        entries: Vec::new(),
        absent: Vec::new(),
    };
    Ok((manifest, model, touched, last_short))
}

/// Reads every touched key back through the official getters; fills entries/absent/count.
fn read_back(
    lib: &dyn OfficialLib,
    out: &Path,
    cs: &CorpusStore,
    manifest: &mut StoreManifest,
    model: &Model,
    touched: &[String],
) -> Result<()> {
    let now = now_secs();
    let mut store = lib.open(out, cs.id, cs.kind)?;
    if cs.kind.key_expire() {
        store.enable_key_expire(0)?;
    }
    let mut disagreements = Vec::new();
    for key in touched {
        let live = model
            .get(key)
            .filter(|(_, at)| at.is_none_or(|t| u64::from(t) > now));
        match live {
            Some((value, at)) => {
                let got = store.get(key.as_bytes(), value.value_type())?;
                if got.as_ref() != Some(value) {
                    disagreements.push(format!(
                        "{key:?}: set {value}, official getter returned {}",
                        crate::vocab::value::show(&got)
                    ));
                }
                manifest.entries.push(Entry::from_value(key, value, *at));
            }
            None => {
                if store.contains(key.as_bytes())? {
                    disagreements.push(format!(
                        "{key:?}: removed/expired but containsKey() is true"
                    ));
                }
                manifest.absent.push(key.clone());
            }
        }
    }
    let count = if lib.features().count_filter_expire || !cs.kind.key_expire() {
        store.count(true)?
    } else {
        // v1.3.0: count() includes expired entries; containsKey() filters them.
        let mut n = 0;
        for k in store.all_keys(false)? {
            if store.contains(&k)? {
                n += 1;
            }
        }
        n
    };
    store.close()?;
    if count != manifest.entries.len() {
        disagreements.push(format!(
            "count(): official {count}, model {}",
            manifest.entries.len()
        ));
    }
    if !disagreements.is_empty() {
        return Err(Error::Official {
            tag: lib.tag().to_string(),
            message: format!(
                "store {}: read-back disagrees with the workload: {}",
                cs.id,
                disagreements.join("; ")
            ),
        });
    }
    manifest.entries.sort_by(|a, b| a.key.cmp(&b.key));
    manifest.absent.sort();
    manifest.count = manifest.entries.len();
    Ok(())
}

/// Records the corpus store set for `lib` into `out` (created if needed) and writes
/// `out/manifest.json`. Returns the manifest.
pub fn record_corpus(
    lib: &dyn OfficialLib,
    mmkv_version: &str,
    out: &Path,
    spec: &RecordSpec,
) -> Result<Manifest> {
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
    let features = lib.features();
    let stores = corpus_stores(&features);
    let mut recorded = Vec::new();
    let mut last_short = 0;
    for (i, cs) in stores.iter().enumerate() {
        let (manifest, model, touched, short) = record_store(lib, out, spec, cs, i)?;
        last_short = last_short.max(short);
        recorded.push((cs, manifest, model, touched));
    }
    if last_short > 0 {
        sleep_until_secs(last_short + u64::from(SHORT_EXPIRE));
    }
    let mut manifests = Vec::new();
    for (cs, mut manifest, model, touched) in recorded {
        read_back(lib, out, cs, &mut manifest, &model, &touched)?;
        manifests.push(manifest);
    }
    let manifest = Manifest {
        mmkv_version: mmkv_version.to_string(),
        seed: spec.seed,
        page_size: None,
        stores: manifests,
    };
    let path = out.join("manifest.json");
    std::fs::write(&path, manifest.to_json_text()).map_err(|e| Error::io(&path, e))?;
    Ok(manifest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::kind::ModeKind;

    #[test]
    fn store_set_follows_features() {
        let old = Features::from_tag("v1.2.12").unwrap();
        let ids: Vec<_> = corpus_stores(&old).iter().map(|c| c.id).collect();
        assert_eq!(
            ids,
            [
                "plain",
                "multi",
                "aes128",
                "aes128-short-key",
                "aes128-long-key",
                "empty",
                "cleared",
                "trimmed"
            ]
        );
        let new = Features::from_tag("v2.4.2").unwrap();
        assert_eq!(corpus_stores(&new).len(), 13);
        assert!(corpus_stores(&new)
            .iter()
            .all(|c| c.kind.mode() == ModeKind::Single || c.id == "multi"));
    }

    #[test]
    fn keys_cover_long_and_non_ascii() {
        let keys: Vec<_> = (0..120).map(record_key).collect();
        assert!(keys.iter().any(|k| k.len() >= 100 && k.len() <= 300));
        assert!(keys.iter().any(|k| !k.is_ascii()));
        let unique: std::collections::BTreeSet<_> = keys.iter().collect();
        assert_eq!(unique.len(), keys.len());
    }

    #[test]
    fn random_values_respect_features() {
        let mut rng = SplitMix::new(1);
        let old = Features::from_tag("v1.2.12").unwrap();
        for _ in 0..500 {
            let v = random_value(&mut rng, &old);
            assert!(!v.value_type().is_typed_vector());
            if let Value::F64(x) = v {
                assert!(!x.is_nan());
            }
        }
    }
}
