//! The fault suite: seeded writer runs killed at random points, damaged copies of what they
//! left, and for every resulting state the official library (each error strategy, in a child
//! process) against the reader.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use mmkv_sys::ErrorStrategy;

use crate::error::{Error, Result};
use crate::exceptions::Scope;
use crate::fault::damage::Damage;
use crate::fault::official::{spawn_reads, strategy_name, OfficialOutcome};
use crate::fault::reads::Reads;
use crate::fault::verdict::{
    judge, Exception, ReaderOutcome, Verdict, LAZY_DECRYPT_MIN_LEN, LAZY_DECRYPT_SINCE,
    SPECIOUS_V6_VERSIONS,
};
use crate::kind::{Features, StoreKind};
use crate::official::OfficialLib;
use crate::sys::SysLib;
use crate::vocab::{SplitMix, STORE_ID};
use crate::writer::child::ChildExe;
use crate::writer::{run_killed, Kill, Plan, WriterSpec};

/// What to run.
#[derive(Debug, Clone)]
pub struct SuiteConfig {
    /// The child processes' program (`conformance faults`: writer and official reads).
    pub exe: ChildExe,
    /// Official versions to run (built tags).
    pub tags: Vec<String>,
    /// Number of damaged states to judge (spread over tags and store kinds).
    pub states: usize,
    /// Seed of everything (workloads, kill points, damage).
    pub seed: u64,
    /// Ops per writer run.
    pub ops: usize,
    /// States derived from each writer run (the run's own state included).
    pub per_base: usize,
    /// Where states that disagree (or crash the official library) are saved.
    pub save: Option<PathBuf>,
    /// The `Store` path under test ([`read_reader`]; tests inject broken ones). The dump path
    /// is always [`read_dump`].
    pub reader: ReaderFn,
}

/// A reader under test: reads the store in a folder as `kind` with the getters of `features`
/// and the given error strategy.
pub type ReaderFn = fn(&Path, StoreKind, &Features, ErrorStrategy) -> ReaderOutcome;

/// Which reader path is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReaderPath {
    /// `mmkv_reader::Store::open` (`Options::recover` for `OnErrorRecover`).
    Store,
    /// What `mmkv dump` shows (`mmkv_inspect::analysis::Analysis::open`, `--recover`).
    Dump,
}

impl ReaderPath {
    /// Name in reports.
    pub fn name(self) -> &'static str {
        match self {
            ReaderPath::Store => "store",
            ReaderPath::Dump => "dump",
        }
    }
}

impl SuiteConfig {
    /// Defaults: every built tag, `states` states, seed 1, 120 ops, 6 states per writer run,
    /// failures saved under `<failures root>/faults` (see [`crate::run::failures_root`]).
    pub fn new(exe: ChildExe, states: usize) -> SuiteConfig {
        SuiteConfig {
            exe,
            tags: mmkv_sys::built_versions()
                .iter()
                .map(|s| s.to_string())
                .collect(),
            states,
            seed: 1,
            ops: 120,
            per_base: 6,
            save: Some(crate::run::failures_root().join("faults")),
            reader: read_reader,
        }
    }
}

/// One judged state.
#[derive(Debug, Clone)]
pub struct StateRecord {
    /// Index in the run.
    pub index: usize,
    /// Official version that wrote it and reads it back.
    pub tag: String,
    /// Store configuration.
    pub kind: StoreKind,
    /// Seed of the writer run.
    pub writer_seed: u64,
    /// How the writer died.
    pub kill: Kill,
    /// Damage applied afterwards.
    pub damage: Damage,
    /// What the reader (`Store`, default strategy) did (`Ok(n keys)` or its error).
    pub reader: std::result::Result<usize, String>,
    /// Verdict per official strategy and reader path.
    pub verdicts: Vec<(ErrorStrategy, ReaderPath, Verdict)>,
    /// Where the state was saved (disagreements and upstream findings).
    pub saved: Option<PathBuf>,
}

impl StateRecord {
    /// One line: index, tag, kind, kill, damage, verdicts.
    pub fn line(&self) -> String {
        let v: Vec<String> = self
            .verdicts
            .iter()
            .map(|(s, p, v)| format!("{}/{}={v}", strategy_name(*s), p.name()))
            .collect();
        format!(
            "#{} {} {} seed {} kill {} damage [{}] reader {} | {}",
            self.index,
            self.tag,
            self.kind,
            self.writer_seed,
            self.kill.arg(),
            self.damage,
            match &self.reader {
                Ok(n) => format!("{n} keys"),
                Err(e) => format!("error ({e})"),
            },
            v.join(" ")
        )
    }

    /// True when some verdict is an unexplained difference.
    pub fn disagrees(&self) -> bool {
        self.verdicts
            .iter()
            .any(|(_, _, v)| matches!(v, Verdict::Disagree(_)))
    }
}

/// The result of a suite run.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// Every judged state.
    pub records: Vec<StateRecord>,
    /// Writer runs performed.
    pub writer_runs: usize,
    /// Writer runs that ended by SIGKILL.
    pub killed_runs: usize,
}

impl Summary {
    /// Number of judged states.
    pub fn states(&self) -> usize {
        self.records.len()
    }

    /// States with an unexplained difference.
    pub fn disagreements(&self) -> Vec<&StateRecord> {
        self.records.iter().filter(|r| r.disagrees()).collect()
    }

    /// States where the official library crashed, hung or failed.
    pub fn upstream(&self) -> Vec<&StateRecord> {
        self.records
            .iter()
            .filter(|r| {
                r.verdicts
                    .iter()
                    .any(|(_, _, v)| matches!(v, Verdict::Upstream(_)))
            })
            .collect()
    }

    /// Verdict label -> count, per strategy and reader path (`discard/store agree` ...).
    pub fn counts(&self) -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for r in &self.records {
            for (s, p, v) in &r.verdicts {
                let k = format!("{}/{} {}", strategy_name(*s), p.name(), v.label());
                *m.entry(k).or_insert(0) += 1;
            }
        }
        m
    }
}

fn copy_store(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).map_err(|e| Error::io(to, e))?;
    for name in [STORE_ID.to_string(), format!("{STORE_ID}.crc")] {
        let src = from.join(&name);
        if src.exists() {
            std::fs::copy(&src, to.join(&name)).map_err(|e| Error::io(&src, e))?;
        }
    }
    Ok(())
}

/// Extends the files of store `id` in `dir` as the official library does when it opens them
/// (see [`Exception::ZeroFill`]): a missing or short file grows with zeros to the next page.
pub fn zero_fill_like_official(dir: &Path, id: &str) -> Result<()> {
    let page = rustix::param::page_size() as u64;
    for name in [id.to_string(), format!("{id}.crc")] {
        let p = dir.join(name);
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&p)
            .map_err(|e| Error::io(&p, e))?;
        let len = f.metadata().map_err(|e| Error::io(&p, e))?.len();
        if len == 0 || len % page != 0 {
            f.set_len((len / page + 1) * page)
                .map_err(|e| Error::io(&p, e))?;
        }
    }
    Ok(())
}

/// The reader on the store in `dir`: `Store::open` (with `Options::recover` for
/// `OnErrorRecover`) and every getter of every key.
pub fn read_reader(
    dir: &Path,
    kind: StoreKind,
    features: &Features,
    strategy: ErrorStrategy,
) -> ReaderOutcome {
    open_store(dir, kind, strategy)
        .map(|s| Reads::of_snapshot(&s.snapshot(), features))
        .map_err(|e| e.to_string())
}

/// `Store::open` on the store in `dir` as `kind`, with `Options::recover` for
/// `OnErrorRecover`.
fn open_store(
    dir: &Path,
    kind: StoreKind,
    strategy: ErrorStrategy,
) -> mmkv_reader::Result<mmkv_reader::Store> {
    let mut opts = mmkv_reader::Options::new()
        .aes256(kind.aes256())
        .recover(strategy == ErrorStrategy::Recover);
    if let Some(key) = kind.crypt_key() {
        opts = opts.crypt_key(key);
    }
    mmkv_reader::Store::open(dir.join(STORE_ID), opts)
}

/// What `mmkv dump` (with `--recover` for `OnErrorRecover`) shows of the store in `dir`: its
/// live records, decoded with every getter; its refusal (discarded, unreadable) as an error.
pub fn read_dump(
    dir: &Path,
    kind: StoreKind,
    features: &Features,
    strategy: ErrorStrategy,
) -> ReaderOutcome {
    let crypt = mmkv_inspect::analysis::CryptOpts {
        key: kind.crypt_key().map(|k| k.to_vec()),
        aes256: kind.aes256(),
        recover: strategy == ErrorStrategy::Recover,
    };
    let now = mmkv_inspect::util::now_secs();
    let a = mmkv_inspect::analysis::Analysis::open(&dir.join(STORE_ID), &crypt, now)
        .map_err(|e| e.to_string())?;
    let live = a.live();
    Ok(Reads::of_payloads(
        live.iter()
            .map(|r| (r.key.as_slice(), r.payload.as_slice())),
        features,
    ))
}

/// Judges one (state, strategy, reader path), trying the exceptions on a difference:
/// `reader` is what `reader_fn` read from the state in `dir`.
#[allow(clippy::too_many_arguments)]
pub fn classify(
    reader_fn: ReaderFn,
    features: &Features,
    scope: &Scope,
    dir: &Path,
    kind: StoreKind,
    strategy: ErrorStrategy,
    official: &OfficialOutcome,
    reader: &ReaderOutcome,
    scratch: &Path,
) -> Result<Verdict> {
    let v = judge(scope, official, reader);
    if !matches!(v, Verdict::Disagree(_)) {
        return Ok(v);
    }
    let ok = |v: &Verdict| matches!(v, Verdict::Agree | Verdict::RefusedDiscarded);
    let filled = scratch.join("zero-filled");
    let _ = std::fs::remove_dir_all(&filled);
    copy_store(dir, &filled)?;
    zero_fill_like_official(&filled, STORE_ID)?;
    let zr = reader_fn(&filled, kind, features, strategy);
    if ok(&judge(scope, official, &zr)) {
        return Ok(Verdict::Exception(Exception::ZeroFill));
    }
    if SPECIOUS_V6_VERSIONS.contains(&scope.version) && meta_version(dir) == Some(6) {
        let rewritten = scratch.join("specious-meta");
        let _ = std::fs::remove_dir_all(&rewritten);
        copy_store(dir, &rewritten)?;
        rewrite_specious_meta(&rewritten)?;
        let sr = reader_fn(&rewritten, kind, features, strategy);
        if ok(&judge(scope, official, &sr)) {
            return Ok(Verdict::Exception(Exception::SpeciousMetaV6));
        }
    }
    if let (Ok(r), OfficialOutcome::Read(o)) = (reader, official) {
        let lazy = overlong_lazy_keys(dir, kind, strategy);
        if scope.version >= LAZY_DECRYPT_SINCE && !lazy.is_empty() {
            let blank = |reads: &Reads| {
                let mut reads = reads.clone();
                for (k, row) in reads.keys.iter_mut() {
                    if lazy.contains(k) {
                        row.iter_mut().for_each(|v| *v = None);
                    }
                }
                reads
            };
            let o = OfficialOutcome::Read(blank(o));
            if ok(&judge(scope, &o, &Ok(blank(r)))) {
                return Ok(Verdict::Exception(Exception::CryptOverlongLength));
            }
        }
    }
    // On the files as they are, or zero-filled when `Store` refuses a short meta file.
    for (r, d) in [(reader, dir), (&zr, filled.as_path())] {
        let (Ok(r), OfficialOutcome::Read(o)) = (r, official) else {
            continue;
        };
        if let Some(differing) = crypt_loader_misjudged(scope, d, kind, strategy, o, r) {
            let without = |reads: &Reads| {
                let mut reads = reads.clone();
                reads.keys.retain(|k, _| !differing.contains(k));
                reads
            };
            let o = OfficialOutcome::Read(without(o));
            if ok(&judge(scope, &o, &Ok(without(r)))) {
                return Ok(Verdict::Exception(Exception::CryptLoaderInline));
            }
        }
    }
    // `Store` refuses a short meta file that the official library reads zero-filled: the
    // empty-payload keys are then judged on the zero-filled files (both differences at once).
    let empty = empty_payload_keys(&[dir, &filled], kind, strategy);
    if !empty.is_empty() {
        for r in [reader, &zr].into_iter().flatten() {
            let mut without = r.clone();
            without.keys.retain(|k, _| !empty.contains(k));
            if ok(&judge(scope, official, &Ok(without))) {
                return Ok(Verdict::Exception(Exception::EmptyPayloadKey));
            }
        }
    }
    Ok(v)
}

fn meta_path(dir: &Path) -> PathBuf {
    mmkv_reader::meta_path(&dir.join(STORE_ID))
}

/// The raw version field of the store's meta file.
fn meta_version(dir: &Path) -> Option<u32> {
    let meta = std::fs::read(meta_path(dir)).ok()?;
    let v = meta.get(mmkv_reader::meta::OFF_VERSION..mmkv_reader::meta::OFF_VERSION + 4)?;
    Some(u32::from_le_bytes([v[0], v[1], v[2], v[3]]))
}

/// Rewrites the meta file as v1.3.0-v2.3.0 do on open when its version is "specious"
/// ([`Exception::SpeciousMetaV6`]): version 3, flags 0.
fn rewrite_specious_meta(dir: &Path) -> Result<()> {
    use mmkv_reader::meta::{OFF_FLAGS, OFF_VERSION, VERSION_ACTUAL_SIZE};
    let p = meta_path(dir);
    let mut meta = std::fs::read(&p).map_err(|e| Error::io(&p, e))?;
    if let Some(v) = meta.get_mut(OFF_VERSION..OFF_VERSION + 4) {
        v.copy_from_slice(&VERSION_ACTUAL_SIZE.to_le_bytes());
    }
    if let Some(f) = meta.get_mut(OFF_FLAGS..OFF_FLAGS + 8) {
        f.fill(0);
    }
    std::fs::write(&p, meta).map_err(|e| Error::io(&p, e))
}

/// Bytes of the shortest varint encoding of `n`.
fn varint_width(n: usize) -> usize {
    let bits = usize::BITS - n.leading_zeros();
    (bits.max(1) as usize).div_ceil(7)
}

/// The decrypted region of the encrypted store in `dir` as the reader locates it with
/// `strategy` (`None` for a plaintext kind or when it cannot be read).
fn located_region(dir: &Path, kind: StoreKind, strategy: ErrorStrategy) -> Option<Vec<u8>> {
    located_region_at(&dir.join(STORE_ID), kind, strategy)
}

/// The decrypted data region of the encrypted store at `path` (a `kind` store) as the reader
/// locates it with `strategy`: the official rules, or the recovering ones (`None` for a
/// plaintext kind or when it cannot be read).
pub fn located_region_at(path: &Path, kind: StoreKind, strategy: ErrorStrategy) -> Option<Vec<u8>> {
    let key = kind.crypt_key()?;
    let rules = match strategy {
        ErrorStrategy::Discard => mmkv_reader::locate::Rules::official(),
        ErrorStrategy::Recover => mmkv_reader::locate::Rules::recover(),
    };
    let opts = mmkv_reader::raw::RawOptions {
        key: mmkv_reader::CryptKey::new(key, kind.aes256()),
        rules,
        ..mmkv_reader::raw::RawOptions::default()
    };
    let raw = mmkv_reader::raw::read_store(path, &opts).ok()?;
    Some(raw.region().to_vec())
}

/// The keys in which the official and the reader's key sets differ, when the exceptions
/// table lists the v1.2.0-v1.2.2 encrypted loader bug for `scope` and each such key's last
/// record in the located region (records up to the first that does not parse) is one that
/// loader misjudges ([`Exception::CryptLoaderInline`]); `None` otherwise.
fn crypt_loader_misjudged(
    scope: &Scope,
    dir: &Path,
    kind: StoreKind,
    strategy: ErrorStrategy,
    official: &Reads,
    reader: &Reads,
) -> Option<BTreeSet<Vec<u8>>> {
    let keys = |r: &Reads| r.keys.keys().cloned().collect::<BTreeSet<Vec<u8>>>();
    let region = located_region(dir, kind, strategy)?;
    crate::exceptions::crypt_loader_misjudged(scope, &region, &keys(official), &keys(reader))
}

/// Keys of an encrypted store whose live record has a value of at least
/// [`LAZY_DECRYPT_MIN_LEN`] bytes behind a non-minimal key-length or value-length varint
/// ([`Exception::CryptOverlongLength`]), in the region the reader locates with `strategy`
/// (records up to the first that does not parse, as a recovered region is read).
fn overlong_lazy_keys(dir: &Path, kind: StoreKind, strategy: ErrorStrategy) -> Vec<Vec<u8>> {
    let Some(region) = located_region(dir, kind, strategy) else {
        return Vec::new();
    };
    let region = region.as_slice();
    let at = |s: &[u8]| s.as_ptr() as usize - region.as_ptr() as usize;
    let mut live: BTreeMap<Vec<u8>, bool> = BTreeMap::new();
    for rec in mmkv_reader::records::records(region).map_while(|r| r.ok()) {
        let key_at = at(rec.key);
        let key_end = key_at + rec.key.len();
        let value_at = if rec.value.is_empty() {
            key_end + 1
        } else {
            at(rec.value)
        };
        let overlong = key_at - rec.offset > varint_width(rec.key.len())
            || value_at - key_end > varint_width(rec.value.len());
        live.insert(
            rec.key.to_vec(),
            overlong && rec.value.len() >= LAZY_DECRYPT_MIN_LEN,
        );
    }
    live.into_iter()
        .filter(|(_, o)| *o)
        .map(|(k, _)| k)
        .collect()
}

/// Keys of an expiring store whose live value is only the expire suffix (empty payload), as
/// the reader reads it with `strategy` (a recovered region has its own records).
/// The first of `dirs` that `Store` opens is read (the state, then its zero-filled copy).
fn empty_payload_keys(dirs: &[&Path], kind: StoreKind, strategy: ErrorStrategy) -> Vec<Vec<u8>> {
    let Some(store) = dirs.iter().find_map(|d| open_store(d, kind, strategy).ok()) else {
        return Vec::new();
    };
    let snap = store.snapshot();
    if !snap.key_expire() {
        return Vec::new();
    }
    snap.iter()
        .filter(|(_, v)| v.is_empty())
        .map(|(k, _)| k.to_vec())
        .collect()
}

fn region_len(dir: &Path) -> (u64, u64) {
    let data = std::fs::read(dir.join(STORE_ID)).unwrap_or_default();
    let meta = std::fs::read(mmkv_reader::meta_path(&dir.join(STORE_ID))).unwrap_or_default();
    let header = data
        .get(..4)
        .map(|h| u32::from_le_bytes([h[0], h[1], h[2], h[3]]))
        .unwrap_or(0);
    let version = meta
        .get(4..8)
        .map(|h| u32::from_le_bytes([h[0], h[1], h[2], h[3]]))
        .unwrap_or(0);
    let meta_size = meta
        .get(28..32)
        .map(|h| u32::from_le_bytes([h[0], h[1], h[2], h[3]]))
        .unwrap_or(0);
    let size = if version >= 3 { meta_size } else { header };
    (data.len() as u64, u64::from(size))
}

/// Verdicts per strategy and reader path on the store in `dir`, as official `tag` (which
/// has the `OnErrorRecover` handler when `can_recover`) reads it: the official reads run in
/// one child process on copies made under `scratch`; the reader paths are `reader`
/// (`Store`) and [`read_dump`].
#[allow(clippy::too_many_arguments)]
pub fn judge_state(
    exe: &ChildExe,
    tag: &str,
    can_recover: bool,
    features: &Features,
    kind: StoreKind,
    reader: ReaderFn,
    dir: &Path,
    scratch: &Path,
) -> Result<Vec<(ErrorStrategy, ReaderPath, Verdict)>> {
    let scope = Scope::of_kind(tag, kind)
        .ok_or_else(|| Error::Other(format!("{tag}: not a vMAJOR.MINOR.PATCH tag")))?;
    let mut strategies = vec![ErrorStrategy::Discard];
    if can_recover {
        strategies.push(ErrorStrategy::Recover);
    }
    let mut dirs = Vec::new();
    for s in &strategies {
        let d = scratch.join(format!("official-{}", strategy_name(*s)));
        let _ = std::fs::remove_dir_all(&d);
        copy_store(dir, &d)?;
        dirs.push(d);
    }
    let runs: Vec<(ErrorStrategy, &Path)> = strategies
        .iter()
        .copied()
        .zip(dirs.iter().map(|d| d.as_path()))
        .collect();
    let outcomes = spawn_reads(exe, tag, kind, &runs)?;
    for d in &dirs {
        let _ = std::fs::remove_dir_all(d);
    }
    let judged: Vec<(ErrorStrategy, OfficialOutcome)> =
        strategies.into_iter().zip(outcomes).collect();
    judge_outcomes(features, &scope, kind, reader, dir, &judged, scratch)
}

/// Verdicts per strategy and reader path (`reader` as `Store`, and [`read_dump`]) on the
/// store in `dir`, given what the official library did with each strategy.
pub fn judge_outcomes(
    features: &Features,
    scope: &Scope,
    kind: StoreKind,
    reader: ReaderFn,
    dir: &Path,
    official: &[(ErrorStrategy, OfficialOutcome)],
    scratch: &Path,
) -> Result<Vec<(ErrorStrategy, ReaderPath, Verdict)>> {
    let mut verdicts = Vec::new();
    let paths: [(ReaderPath, ReaderFn); 2] =
        [(ReaderPath::Store, reader), (ReaderPath::Dump, read_dump)];
    for (s, o) in official {
        for (path, f) in paths {
            let r = f(dir, kind, features, *s);
            let v = classify(f, features, scope, dir, kind, *s, o, &r, scratch)?;
            verdicts.push((*s, path, v));
        }
    }
    Ok(verdicts)
}

/// Runs the suite; `progress` is called after every judged state.
pub fn run_suite(cfg: &SuiteConfig, mut progress: impl FnMut(&StateRecord)) -> Result<Summary> {
    // (tag, recover supported, features, kind), interleaved so that consecutive writer runs
    // go to different versions: every version is reached within the first runs.
    let mut per_tag = Vec::new();
    for tag in &cfg.tags {
        let lib = SysLib::load(tag)?;
        let features = lib.features();
        let kinds: Vec<StoreKind> = StoreKind::ALL
            .into_iter()
            .filter(|k| k.supported_by(&features))
            .collect();
        per_tag.push((
            tag.clone(),
            lib.official().capabilities().error_strategy,
            features,
            kinds,
        ));
    }
    let rounds = per_tag.iter().map(|t| t.3.len()).max().unwrap_or(0);
    let mut libs = Vec::new();
    for round in 0..rounds {
        for (tag, rec, features, kinds) in &per_tag {
            libs.push((tag.clone(), *rec, *features, kinds[round % kinds.len()]));
        }
    }
    if libs.is_empty() {
        return Err(Error::Other(
            "fault suite: no official version built".into(),
        ));
    }
    let work = tempfile::Builder::new()
        .prefix("mmkv-faults")
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let mut rng = SplitMix::new(cfg.seed);
    let mut summary = Summary::default();
    let mut base_no = 0usize;
    while summary.records.len() < cfg.states {
        let (tag, can_recover, features, kind) = libs[base_no % libs.len()].clone();
        base_no += 1;
        let writer_seed = rng.next_u64();
        let kill = match rng.below(10) {
            0..=2 => Kill::Never,
            3..=5 => Kill::BeforeOp(rng.below(cfg.ops as u64) as usize),
            _ => Kill::During(rng.below(cfg.ops as u64) as usize, rng.below(3000)),
        };
        let base = work.path().join(format!("base-{base_no}"));
        std::fs::create_dir_all(&base).map_err(|e| Error::io(&base, e))?;
        let spec = WriterSpec {
            seed: writer_seed,
            kind,
            kill,
            ..WriterSpec::new(Plan::Faults, cfg.ops, 0)
        };
        let killed = run_killed(&cfg.exe, &tag, &base, &spec)?;
        summary.writer_runs += 1;
        summary.killed_runs += usize::from(killed);
        let (data_len, region) = region_len(&base);
        for j in 0..cfg.per_base {
            if summary.records.len() >= cfg.states {
                break;
            }
            let damage = if j == 0 && killed {
                Damage::default()
            } else {
                Damage::choose(&mut rng, data_len, region)
            };
            let index = summary.records.len();
            let sdir = work.path().join(format!("state-{index}"));
            copy_store(&base, &sdir)?;
            damage.apply(&sdir, STORE_ID)?;
            let reader = (cfg.reader)(&sdir, kind, &features, ErrorStrategy::Discard);
            let verdicts = judge_state(
                &cfg.exe,
                &tag,
                can_recover,
                &features,
                kind,
                cfg.reader,
                &sdir,
                work.path(),
            )?;
            let mut rec = StateRecord {
                index,
                tag: tag.clone(),
                kind,
                writer_seed,
                kill,
                damage,
                reader: reader.as_ref().map(|r| r.len()).map_err(|e| e.clone()),
                verdicts,
                saved: None,
            };
            let interesting = rec.disagrees()
                || rec
                    .verdicts
                    .iter()
                    .any(|(_, _, v)| matches!(v, Verdict::Upstream(_)));
            if let (true, Some(root)) = (interesting, &cfg.save) {
                let to = root.join(format!("{}-{}-{index}", tag, kind));
                let _ = std::fs::remove_dir_all(&to);
                copy_store(&base, &to.join("before-damage"))?;
                copy_store(&sdir, &to.join("state"))?;
                let text = format!("{}\n", rec.line());
                std::fs::write(to.join("verdict.txt"), text).map_err(|e| Error::io(&to, e))?;
                rec.saved = Some(to);
            }
            let _ = std::fs::remove_dir_all(&sdir);
            progress(&rec);
            summary.records.push(rec);
        }
        let _ = std::fs::remove_dir_all(&base);
    }
    Ok(summary)
}
