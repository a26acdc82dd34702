//! Differential fuzzing against the official library (as zlib-rs does against zlib): a
//! mutated store (`[mode][meta len: u16 LE][meta][data]`, the `reload` input format, seeded
//! from the golden corpora) is written to files, read by the reader, then opened by the
//! official library of one version in this process, with the default strategy (discard) and
//! with `OnErrorRecover`. The judgement is the fault suite's
//! (`conformance::judge::state::classify`): agreement, "reader refused = official discarded",
//! or an entry of the exceptions table; anything else panics (libFuzzer saves the input).
//! A crash or hang inside the official library also stops on the input: those artifacts are
//! triaged as upstream findings (replay them with `replay differential FILE`, which runs the
//! official side in a child process).

use std::path::{Path, PathBuf};

use conformance::fault::official::{read_official, OfficialOutcome};
use conformance::fault::reads::{read_reader, ReaderPath};
use conformance::judge::exceptions::Scope;
use conformance::judge::state::{judge_outcomes, Verdict};
use conformance::sides::sys::SysLib;
use conformance::vocab::STORE_ID;
use conformance::StoreKind;
use mmkv_sys::ErrorStrategy;

use crate::harness::{decode_reload_input, Mode};

/// The official version of the differential target: `$MMKV_DIFF_TAG`, else the newest entry of
/// versions.yaml when built, else the newest built version.
pub fn official_tag() -> Option<String> {
    if let Ok(t) = std::env::var("MMKV_DIFF_TAG") {
        return Some(t);
    }
    let built = mmkv_sys::built_versions();
    let newest = newest_tag();
    if built.contains(&newest.as_str()) {
        return Some(newest);
    }
    built.last().map(|s| s.to_string())
}

/// The newest tag of versions.yaml (as compiled into mmkv-sys).
fn newest_tag() -> String {
    mmkv_sys::versions::embedded()
        .versions
        .iter()
        .map(|e| e.tag)
        .max()
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// The store kind of an input mode (same keys as the golden corpora).
pub fn kind_of(mode: Mode) -> StoreKind {
    match mode {
        Mode::Plain => StoreKind::Plain,
        Mode::Aes128 => StoreKind::Aes128,
        Mode::Aes256 => StoreKind::Aes256,
    }
}

/// What one input gave.
#[derive(Debug, Clone)]
pub struct DiffResult {
    /// Verdict per strategy and reader path (`Store`, `mmkv dump`).
    pub verdicts: Vec<(ErrorStrategy, ReaderPath, Verdict)>,
    /// Keys `Store` read with the default strategy (`None`: it refused).
    pub reader_keys: Option<usize>,
}

/// The differential harness: one official version, a scratch folder (in `/dev/shm` when
/// available).
pub struct DiffHarness {
    lib: SysLib,
    dir: PathBuf,
    n: u64,
}

fn write_pair(dir: &Path, meta: &[u8], data: &[u8]) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("scratch dir");
    std::fs::write(dir.join(STORE_ID), data).expect("write data");
    std::fs::write(dir.join(format!("{STORE_ID}.crc")), meta).expect("write meta");
}

impl DiffHarness {
    /// Loads the official version ([`official_tag`]); with `$MMKV_DIFF_LIB`, that shim library
    /// (e.g. one built by the workspace, so the fuzz build needs no C++ build:
    /// `MMKV_VERSIONS=none`), under the tag `$MMKV_DIFF_TAG` (default: versions.yaml's newest).
    pub fn new() -> DiffHarness {
        let lib = match std::env::var_os("MMKV_DIFF_LIB") {
            Some(path) => {
                let tag = std::env::var("MMKV_DIFF_TAG").unwrap_or_else(|_| newest_tag());
                let official = mmkv_sys::Official::load_from_path(&tag, Path::new(&path))
                    .expect("load MMKV_DIFF_LIB");
                SysLib::new(official)
            }
            None => {
                let tag = official_tag().expect("no official version built into mmkv-sys");
                SysLib::load(&tag).expect("load official library")
            }
        };
        let base = if Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!("mmkv-diff-fuzz-{}", std::process::id()));
        DiffHarness { lib, dir, n: 0 }
    }

    /// The official version's tag.
    pub fn tag(&self) -> String {
        conformance::sides::official::OfficialLib::tag(&self.lib).to_string()
    }

    /// Judges one input; never panics on a disagreement (see [`DiffHarness::run`]).
    pub fn judge(&mut self, input: &[u8]) -> DiffResult {
        let (mode, meta, data) = decode_reload_input(input);
        let kind = kind_of(mode);
        let features = conformance::sides::official::OfficialLib::features(&self.lib);
        let tag = self.tag();
        let scope = Scope::of_kind(&tag, kind)
            .unwrap_or_else(|| panic!("{tag}: not a vMAJOR.MINOR.PATCH tag"));
        self.n += 1;
        let state = self.dir.join("state");
        write_pair(&state, meta, data);
        let reader = read_reader(&state, kind, &features, ErrorStrategy::Discard);
        let mut strategies = vec![ErrorStrategy::Discard];
        if self.lib.official().capabilities().error_strategy {
            strategies.push(ErrorStrategy::Recover);
        }
        let mut outcomes = Vec::new();
        for (i, s) in strategies.iter().enumerate() {
            // A fresh folder per open: the official instance cache is keyed by (folder, id).
            let d = self.dir.join(format!("official-{}-{i}", self.n));
            write_pair(&d, meta, data);
            let o = match read_official(&self.lib, &d, kind, *s) {
                Ok(r) => OfficialOutcome::Read(r),
                Err(e) => OfficialOutcome::Failed(e.to_string()),
            };
            let _ = std::fs::remove_dir_all(&d);
            outcomes.push(o);
        }
        let judged: Vec<(ErrorStrategy, OfficialOutcome)> =
            strategies.into_iter().zip(outcomes).collect();
        let verdicts = judge_outcomes(
            &features,
            &scope,
            kind,
            read_reader,
            &state,
            &judged,
            &self.dir,
        )
        .unwrap_or_else(|e| {
            vec![(
                ErrorStrategy::Discard,
                ReaderPath::Store,
                Verdict::Disagree(format!("harness error: {e}")),
            )]
        });
        DiffResult {
            verdicts,
            reader_keys: reader.as_ref().ok().map(|r| r.len()),
        }
    }

    /// Judges one input and panics on an unexplained difference.
    pub fn run(&mut self, input: &[u8]) {
        let r = self.judge(input);
        for (s, p, v) in &r.verdicts {
            if let Verdict::Disagree(d) = v {
                panic!(
                    "official {} {:?} disagrees with the reader ({}): {d}",
                    self.tag(),
                    s,
                    p.name()
                );
            }
        }
    }
}

impl Default for DiffHarness {
    fn default() -> Self {
        DiffHarness::new()
    }
}

impl Drop for DiffHarness {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
