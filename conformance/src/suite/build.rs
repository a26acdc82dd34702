//! `conformance suite build`: writes the suite's cases from the official libraries of every
//! built version: the golden corpora's stores (symlinked, not copied) and the stores of
//! [`scenarios`], each with what its writer's official library reads (both error strategies
//! for damaged stores, every version's answer where versions differ).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mmkv_sys::ErrorStrategy;

use crate::corpus::golden::{corpus_root, Manifest, TypedEntry};
use crate::error::{Error, Result};
use crate::sides::reads::OfficialOutcome;
use crate::sides::sys::{built_versions, SysLib};
use crate::suite::case::{
    case_dirs, manifest_entries, Answer, Case, Class, Entry, Era, Open, VersionAnswer, CASES_DIR,
    DATA_FILE, META_FILE,
};
use crate::suite::official::{describe, entries_of, run_jobs, Files, Job};
use crate::suite::scenarios::{self, Damage2, Written, DEFAULT_PAGE};
use crate::vocab::kind::{Features, StoreKind};
use crate::vocab::value::ValueType;
use crate::writer::child::ChildExe;

/// The scenarios whose stores are damaged, and how, on pages of `page` bytes.
fn damages(scenario: &str, page: u64) -> &'static [Damage2] {
    match (scenario, page == DEFAULT_PAGE) {
        ("remove_plain", true) => &Damage2::ALL,
        ("remove_aes128", true) => &[Damage2::TruncateData, Damage2::FlipData],
        ("grown_plain", true) => &Damage2::GROWN,
        ("grown_plain", false) => &Damage2::PAGED,
        ("zero-tail_plain", false) => &[Damage2::Truncate4k],
        _ => &[],
    }
}

/// A store to become a case once the official library has read it.
struct Candidate {
    /// `<writer>_<scenario>` (the class prefix comes later).
    base: String,
    writer: String,
    kind: StoreKind,
    what: String,
    corpus: Option<String>,
    files: Files,
    types: BTreeMap<Vec<u8>, ValueType>,
    damaged: bool,
    /// The writer's page size (the official reads run with it too).
    page: u64,
}

/// What `build` did.
#[derive(Debug, Default)]
pub struct BuildSummary {
    /// Cases written, by class and era.
    pub counts: BTreeMap<(Class, Era), usize>,
    /// Stores left out, with the reason.
    pub excluded: Vec<String>,
}

impl BuildSummary {
    /// Total cases.
    pub fn total(&self) -> usize {
        self.counts.values().sum()
    }
}

fn kind_of_manifest(s: &crate::corpus::golden::StoreManifest) -> Option<StoreKind> {
    StoreKind::ALL.into_iter().find(|k| {
        k.mode() == s.mode
            && k.crypt_key().map(crate::vocab::value::hex_bytes::encode) == s.crypt_key_hex
            && k.aes256() == s.aes256
            && k.key_expire() == s.key_expire
    })
}

fn corpus_candidates(root: &Path, tag: &str, out: &mut Vec<Candidate>) -> Result<()> {
    let dir = root.join(tag);
    if !dir.is_dir() {
        return Ok(());
    }
    let manifest = Manifest::load(&dir)?;
    for s in &manifest.stores {
        let Some(kind) = kind_of_manifest(s) else {
            continue;
        };
        let mut types = BTreeMap::new();
        for e in &s.entries {
            if let Ok(t) = e.value_type() {
                types.insert(e.key.as_bytes().to_vec(), t);
            }
        }
        out.push(Candidate {
            base: format!("{tag}_corpus-{}", s.id),
            writer: tag.to_string(),
            kind,
            what: format!(
                "golden corpus store {}/{} ({} live keys after sets, overwrites and removals)",
                tag, s.id, s.count
            ),
            corpus: Some(format!("corpus/{tag}/{}", s.id)),
            files: Files::read(&dir, &s.id, &format!("{}.crc", s.id))?,
            types,
            damaged: false,
            page: DEFAULT_PAGE,
        });
    }
    Ok(())
}

fn written_candidates(
    tag: &str,
    out: &mut Vec<Candidate>,
    excluded: &mut Vec<String>,
) -> Result<bool> {
    let lib = SysLib::load(tag)?;
    let features = crate::sides::official::OfficialLib::features(&lib);
    let mut expiring = false;
    for sc in scenarios::scenarios(&features) {
        let tmp = tempfile::tempdir().map_err(|e| Error::Other(format!("tempdir: {e}")))?;
        let Some(w) = scenarios::write(&lib, tmp.path(), &sc)? else {
            excluded.push(format!("{tag} {}: the version cannot do it", sc.id));
            continue;
        };
        expiring |= sc.expiring;
        push_written(tag, &sc, w, DEFAULT_PAGE, out)?;
    }
    Ok(expiring)
}

/// The candidates of one written scenario: its damaged copies, then the store itself; on
/// pages other than [`DEFAULT_PAGE`] the scenario part of their names starts with the page
/// ([`scenarios::page_part`]).
fn push_written(
    tag: &str,
    sc: &scenarios::Scenario,
    w: Written,
    page: u64,
    out: &mut Vec<Candidate>,
) -> Result<()> {
    let kind = sc.final_kind();
    let v24 = if Era::of(tag) == Era::V24 {
        " (v2.4 data header 0: the size is only in the meta file)"
    } else {
        ""
    };
    let (prefix, on_pages) = match scenarios::page_part(page) {
        Some(p) => (
            format!("{p}_"),
            format!(", written on {} KiB pages", page / 1024),
        ),
        None => (String::new(), String::new()),
    };
    for &d in damages(&sc.id, page) {
        if let Some(files) = d.apply(&w, page)? {
            out.push(Candidate {
                base: format!("{tag}_{prefix}{}_{}", d.id(), sc.id),
                writer: tag.to_string(),
                kind,
                what: format!("{}{on_pages}: {}{v24}", sc.what, d.what()),
                corpus: None,
                files,
                types: w.types.clone(),
                damaged: true,
                page,
            });
        }
    }
    out.push(Candidate {
        base: format!("{tag}_{prefix}{}", sc.id),
        writer: tag.to_string(),
        kind,
        what: format!("{}{on_pages}{v24}", sc.what),
        corpus: None,
        files: w.files,
        types: w.types,
        damaged: false,
        page,
    });
    Ok(())
}

/// What a `suite write-pages` child leaves in `<out>/<id>/` besides the store: the meta file
/// kept by [`scenarios::Op::KeepMeta`] ...
const KEPT_META: &str = "kept.crc";
/// ... and the types of the last accepted sets (`{"<key hex>": "<type name>"}`).
const TYPES_FILE: &str = "types.json";

/// The child side of [`page_candidates`] (`conformance suite write-pages`): writes every
/// [`scenarios::page_scenarios`] of `tag` into `out/<id>/` with the official library on pages
/// of `page` bytes (set before the library opens its first store), with the kept meta file and
/// the types of the last accepted sets. A scenario the version cannot do leaves no folder.
pub fn write_pages(tag: &str, page: u64, out: &Path) -> Result<()> {
    mmkv_sys::page_size::set_page_size(page).map_err(|e| Error::Other(e.to_string()))?;
    let lib = SysLib::load(tag)?;
    let features = crate::sides::official::OfficialLib::features(&lib);
    for sc in scenarios::page_scenarios(&features, page) {
        let tmp = tempfile::tempdir().map_err(|e| Error::Other(format!("tempdir: {e}")))?;
        let Some(w) = scenarios::write(&lib, tmp.path(), &sc)? else {
            continue;
        };
        let d = out.join(&sc.id);
        std::fs::create_dir_all(&d).map_err(|e| Error::io(&d, e))?;
        w.files.write(&d, DATA_FILE)?;
        if let Some(m) = &w.kept_meta {
            let p = d.join(KEPT_META);
            std::fs::write(&p, m).map_err(|e| Error::io(&p, e))?;
        }
        let types: BTreeMap<String, &str> = w
            .types
            .iter()
            .map(|(k, t)| (crate::vocab::value::hex_bytes::encode(k), t.name()))
            .collect();
        let p = d.join(TYPES_FILE);
        let text = serde_json::to_string(&types).map_err(|e| Error::Other(e.to_string()))?;
        std::fs::write(&p, text).map_err(|e| Error::io(&p, e))?;
    }
    Ok(())
}

/// The [`scenarios::page_scenarios`] of `tag` on pages of `page` bytes, written in a child
/// process (Core reads its page size once per process, and this one's is [`DEFAULT_PAGE`]).
fn page_candidates(
    exe: &ChildExe,
    tag: &str,
    page: u64,
    out: &mut Vec<Candidate>,
    excluded: &mut Vec<String>,
) -> Result<()> {
    let tmp = tempfile::tempdir().map_err(|e| Error::Other(format!("tempdir: {e}")))?;
    let page_arg = page.to_string();
    let dir = tmp.path().to_string_lossy().into_owned();
    let run = exe
        .clone()
        .with_page_size(page)
        .command(&[
            "suite",
            "write-pages",
            "--tag",
            tag,
            "--page-size",
            &page_arg,
            "--out",
            &dir,
        ])
        .output()
        .map_err(|e| Error::Other(format!("suite write-pages: {e}")))?;
    if !run.status.success() {
        return Err(Error::Other(format!(
            "suite write-pages {tag} {page}: {} {}",
            run.status,
            String::from_utf8_lossy(&run.stderr).trim()
        )));
    }
    let lib = SysLib::load(tag)?;
    let features = crate::sides::official::OfficialLib::features(&lib);
    for sc in scenarios::page_scenarios(&features, page) {
        let d = tmp.path().join(&sc.id);
        if !d.is_dir() {
            excluded.push(format!("{tag} {page} {}: the version cannot do it", sc.id));
            continue;
        }
        let files = Files::read(&d, DATA_FILE, META_FILE)?;
        let meta_len = files.meta.as_ref().map_or(0, |m| m.len() as u64);
        if meta_len != page {
            return Err(Error::Other(format!(
                "{tag} {}: the writer on {page}-byte pages left a .crc of {meta_len} bytes",
                sc.id
            )));
        }
        let kept_meta = match std::fs::read(d.join(KEPT_META)) {
            Ok(m) => Some(m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io(d.join(KEPT_META), e)),
        };
        let p = d.join(TYPES_FILE);
        let text = std::fs::read_to_string(&p).map_err(|e| Error::io(&p, e))?;
        let named: BTreeMap<String, String> = serde_json::from_str(&text)
            .map_err(|e| Error::Other(format!("{}: {e}", p.display())))?;
        let mut types = BTreeMap::new();
        for (k, t) in named {
            let key = crate::vocab::value::hex_bytes::decode(&k)
                .ok_or_else(|| Error::Other(format!("{}: key {k}", p.display())))?;
            let ty = t
                .parse()
                .map_err(|_| Error::Other(format!("{}: type {t}", p.display())))?;
            types.insert(key, ty);
        }
        let w = Written {
            files,
            kept_meta,
            types,
        };
        push_written(tag, &sc, w, page, out)?;
    }
    Ok(())
}

/// The reader's expire times of a store's live records, read on pages of `page` bytes (the
/// writer's, as its official reads; the official API has none).
fn expire_times(
    files: &Files,
    kind: StoreKind,
    recover: bool,
    page: u64,
) -> BTreeMap<Vec<u8>, u32> {
    let mut opts = mmkv_reader::Options::new().recover(recover).page_size(page);
    if let Some(k) = kind.crypt_key() {
        opts = opts.crypt_key(k).aes256(kind.aes256());
    }
    let Ok((snap, _)) =
        mmkv_reader::load_bytes(files.meta.as_deref().unwrap_or(&[]), &files.data, &opts)
    else {
        return BTreeMap::new();
    };
    snap.entries()
        .filter(|(_, _, e)| *e != 0)
        .map(|(k, _, e)| (k.to_vec(), e))
        .collect()
}

fn answer(
    c: &Candidate,
    o: &OfficialOutcome,
    recover: bool,
) -> std::result::Result<Vec<Entry>, String> {
    match o {
        OfficialOutcome::Read(r) => {
            let exp = expire_times(&c.files, c.kind, recover, c.page);
            Ok(entries_of(r, &|k| c.types.get(k).copied(), &|k| {
                exp.get(k).copied()
            }))
        }
        other => Err(describe(other)),
    }
}

fn same(a: &[Entry], b: &[Entry]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            (x.key_hex.as_str(), &x.payload_hex, &x.ty)
                == (y.key_hex.as_str(), &y.payload_hex, &y.ty)
        })
}

/// True when case `name` (`<class>_<base>`) or candidate `base` is one `only` selects: any
/// of its texts is part of the base (`None`: every case).
fn selected(only: Option<&[String]>, base: &str) -> bool {
    only.is_none_or(|texts| texts.iter().any(|t| base.contains(t.as_str())))
}

/// Builds the suite into `root/cases` with every built version: all of it (replacing the
/// folder), or with `only` the cases whose name after the class prefix contains one of its
/// texts (replacing those, keeping every other case).
///
/// The stores of [`scenarios::scenarios`] are written in this process on [`DEFAULT_PAGE`]
/// pages (chosen here, whatever the machine's); those of [`scenarios::page_scenarios`] by the
/// [`scenarios::PAGE_ANCHORS`] that are built, in a child per page size.
pub fn build(
    root: &Path,
    exe: &ChildExe,
    threads: usize,
    only: Option<&[String]>,
    progress: bool,
) -> Result<BuildSummary> {
    mmkv_sys::page_size::set_page_size(DEFAULT_PAGE).map_err(|e| Error::Other(e.to_string()))?;
    let tags: Vec<String> = built_versions().iter().map(|s| s.to_string()).collect();
    let newest = tags
        .last()
        .cloned()
        .ok_or_else(|| Error::Other("no built version".into()))?;
    let corpus = corpus_root();
    let mut summary = BuildSummary::default();
    let mut cands = Vec::new();
    let mut expiring = false;
    for tag in &tags {
        if progress {
            eprintln!("suite build: writing {tag}");
        }
        corpus_candidates(&corpus, tag, &mut cands)?;
        expiring |= written_candidates(tag, &mut cands, &mut summary.excluded)?;
        if scenarios::PAGE_ANCHORS.contains(&tag.as_str()) {
            for page in scenarios::OTHER_PAGES {
                page_candidates(exe, tag, page, &mut cands, &mut summary.excluded)?;
            }
        }
    }
    cands.retain(|c| selected(only, &c.base));
    if expiring {
        // Records written with a 1 s expiry: wait until they are in the past.
        std::thread::sleep(Duration::from_millis(2100));
    }
    let features = |t: &str| Features::from_tag(t).unwrap_or_default();
    let mut jobs = Vec::new();
    for c in &cands {
        jobs.push(Job {
            tag: c.writer.clone(),
            kind: c.kind,
            strategy: ErrorStrategy::Discard,
            files: &c.files,
            page_size: c.page,
        });
        if c.damaged {
            jobs.push(Job {
                tag: c.writer.clone(),
                kind: c.kind,
                strategy: ErrorStrategy::Recover,
                files: &c.files,
                page_size: c.page,
            });
        } else if c.writer != newest {
            jobs.push(Job {
                tag: newest.clone(),
                kind: c.kind,
                strategy: ErrorStrategy::Discard,
                files: &c.files,
                page_size: c.page,
            });
        }
    }
    if progress {
        eprintln!(
            "suite build: {} stores, {} official reads",
            cands.len(),
            jobs.len()
        );
    }
    let outcomes = run_jobs(exe, &jobs, threads)?;
    // One outcome per job, in the order the jobs were pushed (one or two per candidate).
    let mut outs = outcomes.iter();
    let none = OfficialOutcome::Failed("no outcome".into());
    let mut cases: Vec<(Case, &Candidate)> = Vec::new();
    let mut dependent = Vec::new();
    for c in &cands {
        let own = outs.next().unwrap_or(&none);
        let second = (c.damaged || c.writer != newest).then(|| outs.next().unwrap_or(&none));
        let own = match answer(c, own, false) {
            Ok(a) => a,
            Err(e) => {
                summary
                    .excluded
                    .push(format!("{}: the writer's official read {e}", c.base));
                continue;
            }
        };
        let mut case = Case {
            name: String::new(),
            class: Class::MustRead,
            writer: c.writer.clone(),
            kind: c.kind,
            what: c.what.clone(),
            open: Open::of(c.kind),
            corpus: c.corpus.clone(),
            expect: Answer {
                entries: own.clone(),
                ..Answer::default()
            },
            recover: None,
            answers: Vec::new(),
            page_size: c.page,
        };
        if c.damaged {
            let rec = match second.map(|o| answer(c, o, true)) {
                Some(Ok(a)) => a,
                Some(Err(e)) => {
                    summary
                        .excluded
                        .push(format!("{}: OnErrorRecover {e}", c.base));
                    continue;
                }
                None => Vec::new(),
            };
            if own.is_empty() {
                case.class = Class::MustNotRead;
            }
            case.recover = Some(Answer {
                entries: rec,
                ..Answer::default()
            });
        } else if let Some(o) = second {
            match answer(c, o, false) {
                Ok(n) if same(&n, &own) => {}
                Ok(n) => {
                    case.class = Class::VersionDependent;
                    case.expect = Answer {
                        entries: n,
                        ..Answer::default()
                    };
                    dependent.push(cases.len());
                }
                Err(e) => {
                    summary.excluded.push(format!("{}: {newest} {e}", c.base));
                    continue;
                }
            }
        }
        if case.class != Class::VersionDependent && !case.expect.complete() {
            summary.excluded.push(format!(
                "{}: the official default read lists a key whose typed getter returns nothing",
                c.base
            ));
            continue;
        }
        if let (Some(rel), Class::MustRead) = (&c.corpus, case.class) {
            let (tag_dir, id) = rel.rsplit_once('/').unwrap_or((rel.as_str(), ""));
            let manifest = format!("{tag_dir}/manifest.json");
            let listed = manifest_entries(&corpus.join("..").join(&manifest), id)?;
            if listed == case.expect.entries {
                case.expect = Answer {
                    entries: listed,
                    manifest: Some(manifest),
                    store: Some(id.to_string()),
                    same_as_expect: false,
                };
            } else {
                summary.excluded.push(format!(
                    "{}: the official answer differs from the corpus manifest",
                    c.base
                ));
                continue;
            }
        }
        cases.push((case, c));
    }
    // Version-dependent cases: every version that can open the kind.
    let mut jobs = Vec::new();
    let mut owners = Vec::new();
    for &i in &dependent {
        let (case, c) = &cases[i];
        for t in tags.iter().filter(|t| case.kind.supported_by(&features(t))) {
            jobs.push(Job {
                tag: t.clone(),
                kind: c.kind,
                strategy: ErrorStrategy::Discard,
                files: &c.files,
                page_size: c.page,
            });
            owners.push((i, t.clone()));
        }
    }
    let outcomes = run_jobs(exe, &jobs, threads)?;
    let mut answers: BTreeMap<usize, Vec<VersionAnswer>> = BTreeMap::new();
    for ((i, t), o) in owners.into_iter().zip(outcomes) {
        let c = cases[i].1;
        let Ok(entries) = answer(c, &o, false) else {
            continue;
        };
        let list = answers.entry(i).or_default();
        match list.iter_mut().find(|a| same(&a.entries, &entries)) {
            Some(a) => a.versions.push(t),
            None => list.push(VersionAnswer {
                versions: vec![t],
                entries,
            }),
        }
    }
    for (i, a) in answers {
        cases[i].0.answers = a;
    }
    let dir = root.join(CASES_DIR);
    if only.is_none() && dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    }
    if only.is_some() && dir.exists() {
        for d in case_dirs(root)? {
            let name = d.file_name().map(|n| n.to_string_lossy().into_owned());
            let base = name
                .as_deref()
                .and_then(|n| n.split_once('_'))
                .map(|(_, b)| b);
            if base.is_some_and(|b| selected(only, b)) {
                std::fs::remove_dir_all(&d).map_err(|e| Error::io(&d, e))?;
            }
        }
    }
    let mut names = BTreeMap::new();
    for (case, c) in &mut cases {
        case.name = format!("{}_{}", case.class.prefix(), c.base);
        if names.insert(case.name.clone(), ()).is_some() || dir.join(&case.name).exists() {
            return Err(Error::Other(format!("two cases named {}", case.name)));
        }
        let d = dir.join(&case.name);
        std::fs::create_dir_all(&d).map_err(|e| Error::io(&d, e))?;
        match &c.corpus {
            Some(rel) => {
                let target = PathBuf::from("../../..").join(rel);
                link(&target, &d.join(DATA_FILE))?;
                link(&target.with_extension_added("crc"), &d.join(META_FILE))?;
            }
            None => c.files.write(&d, DATA_FILE)?,
        }
        case.save(&d)?;
        *summary.counts.entry((case.class, case.era())).or_default() += 1;
    }
    Ok(summary)
}

trait AddExt {
    fn with_extension_added(&self, ext: &str) -> PathBuf;
}

impl AddExt for PathBuf {
    fn with_extension_added(&self, ext: &str) -> PathBuf {
        let mut s = self.clone().into_os_string();
        s.push(".");
        s.push(ext);
        PathBuf::from(s)
    }
}

fn link(target: &Path, at: &Path) -> Result<()> {
    std::os::unix::fs::symlink(target, at).map_err(|e| Error::io(at, e))
}

/// The current time (epoch seconds).
pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
