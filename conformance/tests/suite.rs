//! The portable suite (`suite/`): its shape (at least 1,500 cases, every corpus tag, every class,
//! under 30 MB) and `conformance suite verify` failing when one expected value is changed.

use std::path::{Path, PathBuf};
use std::process::Command;

use conformance::sides::sys::built_versions;
use conformance::suite::case::{load_all, suite_root, Case, Class, CASE_FILE};
use mmkv_sys::versions::Tag;

fn copy_case(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        // fs::copy follows the corpus symlinks
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

fn verify(root: &Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args(["suite", "verify", "--suite"])
        .arg(root)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn size_of(dir: &Path) -> u64 {
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let md = std::fs::symlink_metadata(e.path()).unwrap();
        if md.is_dir() {
            n += size_of(&e.path());
        } else if md.is_file() {
            n += md.len();
        }
    }
    n
}

#[test]
fn the_suite_covers_every_tag_and_class_in_under_30_mb() {
    let cases = load_all(&suite_root()).unwrap();
    assert!(cases.len() >= 1500, "{} cases", cases.len());
    for class in Class::ALL {
        assert!(
            cases.iter().any(|(_, c)| c.class == class),
            "no {class:?} case"
        );
    }
    // Every corpus tag up to the newest one the suite was built with: a version added later
    // (`track-upstream add-version`) has its corpus but no cases until `conformance suite build`
    // runs again (docs/maintainers.md). A tag missing below that horizon fails.
    let horizon = cases
        .iter()
        .filter(|(_, c)| c.corpus.is_none())
        .filter_map(|(_, c)| Tag::parse(&c.writer))
        .max()
        .expect("no written case");
    let corpus = mmkv_corpus::corpus_tags(&mmkv_corpus::corpus_root()).unwrap();
    for tag in corpus
        .iter()
        .filter(|t| Tag::parse(t).is_some_and(|t| t <= horizon))
    {
        assert!(
            cases
                .iter()
                .any(|(_, c)| &c.writer == tag && c.corpus.is_none()),
            "no written case of {tag}"
        );
        assert!(
            cases
                .iter()
                .any(|(_, c)| &c.writer == tag && c.corpus.is_some()),
            "no corpus case of {tag}"
        );
    }
    let bytes = size_of(&suite_root());
    assert!(bytes < 30 << 20, "suite/ is {bytes} bytes");
    for (dir, c) in &cases {
        assert_eq!(dir.file_name().unwrap().to_str(), Some(c.name.as_str()));
        assert!(c.name.starts_with(&format!("{}_", c.class.prefix())));
    }
}

/// A few cases whose writer is built: a must-read one with entries, a must-not-read one with
/// a non-empty recover answer.
fn pick() -> Option<(PathBuf, Case, PathBuf, Case)> {
    let built = built_versions();
    let cases = load_all(&suite_root()).unwrap();
    let ok = |c: &Case| built.contains(&c.writer.as_str());
    let y = cases
        .iter()
        .find(|(_, c)| ok(c) && c.class == Class::MustRead && c.expect.entries.len() > 3)?;
    let n = cases.iter().find(|(_, c)| {
        ok(c)
            && c.class == Class::MustNotRead
            && c.recover.as_ref().is_some_and(|r| !r.entries.is_empty())
    })?;
    Some((y.0.clone(), y.1.clone(), n.0.clone(), n.1.clone()))
}

#[test]
fn verify_fails_when_one_expected_value_is_changed() {
    let (ydir, y, ndir, n) = pick().expect("a built version with y_ and n_ cases");
    let tmp = tempfile::tempdir().unwrap();
    let cases = tmp.path().join("cases");
    copy_case(&ydir, &cases.join(&y.name));
    copy_case(&ndir, &cases.join(&n.name));
    let (ok, text) = verify(tmp.path());
    assert!(ok, "{text}");
    assert!(text.contains("2 cases checked"), "{text}");

    // One payload byte of one entry of the must-read case.
    let mut changed = y.clone();
    let p = changed.expect.entries[2].payload_hex.as_mut().unwrap();
    let last = p.pop().unwrap();
    p.push(if last == '0' { '1' } else { '0' });
    changed.save(&cases.join(&y.name)).unwrap();
    let (ok, text) = verify(tmp.path());
    assert!(!ok, "verify passed with a changed payload: {text}");
    assert!(text.contains(&y.name) && text.contains("DIFFERS"), "{text}");
    y.save(&cases.join(&y.name)).unwrap();

    // The recover answer of the must-not-read case loses one entry.
    let mut changed = n.clone();
    changed.recover.as_mut().unwrap().entries.pop();
    changed.save(&cases.join(&n.name)).unwrap();
    let (ok, text) = verify(tmp.path());
    assert!(!ok, "verify passed with a changed recover answer: {text}");
    assert!(text.contains(&n.name), "{text}");

    // Nothing to check is no pass.
    std::fs::remove_dir_all(&cases).unwrap();
    std::fs::create_dir_all(&cases).unwrap();
    let (ok, _) = verify(tmp.path());
    assert!(!ok);
    assert!(!cases.join(CASE_FILE).exists());
}

#[test]
fn verify_reads_at_the_case_s_page_size() {
    // A store of a 16 KiB writer cut to 4096 bytes inside zeros: the official library reads it
    // on 16 KiB pages and finds its region too long for the file on 4 KiB pages.
    let built = built_versions();
    let cases = load_all(&suite_root()).unwrap();
    let page_case =
        |(_, c): &&(PathBuf, Case)| c.page_size == 16384 && c.name.contains("_truncated-4k_");
    assert!(
        cases.iter().any(|c| page_case(&c)),
        "the suite has p16k truncated-4k cases"
    );
    // Their writers are era anchors (v1.2.16, v1.3.17, v2.4.2); a run that builds none of them
    // (a CI shard, add-version's run with its own anchors) cannot read them officially.
    let Some((dir, case)) = cases
        .iter()
        .find(|c| page_case(c) && built.contains(&c.1.writer.as_str()))
        .cloned()
    else {
        eprintln!("no writer of a p16k truncated-4k case is built: verify at 16 KiB not checked");
        return;
    };
    assert_eq!(case.class, Class::MustRead);
    assert!(!case.expect.entries.is_empty());
    let tmp = tempfile::tempdir().unwrap();
    let at = tmp.path().join("cases").join(&case.name);
    copy_case(&dir, &at);
    let (ok, text) = verify(tmp.path());
    assert!(ok, "{text}");

    let mut changed = case.clone();
    changed.page_size = 4096;
    changed.save(&at).unwrap();
    let text = std::fs::read_to_string(at.join(CASE_FILE)).unwrap();
    assert!(
        !text.contains("page_size"),
        "4096 is written as no page_size"
    );
    let (ok, text) = verify(tmp.path());
    assert!(
        !ok,
        "verify passed the 16 KiB answer on 4 KiB pages: {text}"
    );
    // the official read on 4 KiB pages differs, and the name's p16k part no longer fits
    let read = format!("DIFFERS: {} ({}, ", case.name, case.writer);
    assert!(text.contains(&read), "{text}");
    assert!(
        text.contains("page part and page_size 4096 disagree"),
        "{text}"
    );
}
