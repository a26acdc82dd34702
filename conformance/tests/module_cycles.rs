//! No two modules import each other, in `conformance` or in `mmkv-reader` (data flows one
//! way; README "Layout"). A file's module path is its path under `src/` (`fault/suite.rs` is
//! `fault::suite`, `judge/mod.rs` is `judge`); a file imports another when it names a `crate::`
//! path into it (`use` or inline; comments, doc links and unit-test modules do not count). Any
//! mutual pair fails,
//! between files and between top-level folders (`judge` and `sides` are layers: when a file of
//! one imports the other, no file of the other imports back).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `fault/suite.rs` -> `fault::suite`; `judge/mod.rs` -> `judge`; `lib.rs` -> `` (the root).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts.join("::")
}

/// Every `crate::` path named in `text`, braces expanded (`crate::{a::b, c}` -> `a::b`, `c`).
fn crate_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().last();
        rest = &rest[i + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `mmkv_crate::`, not ours
        }
        expand("", rest, &mut out);
    }
    out
}

/// Reads one path (or brace group) at the start of `s`, with `prefix`.
fn expand(prefix: &str, s: &str, out: &mut Vec<String>) {
    let s = s.trim_start();
    if let Some(inner) = s.strip_prefix('{') {
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    expand(prefix, &inner[start..i], out);
                    return;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(prefix, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        return;
    }
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(s.len());
    let path = s[..end].trim_end_matches(':');
    let full = if prefix.is_empty() {
        path.to_string()
    } else {
        format!("{prefix}::{path}")
    };
    if s[end..].trim_start().starts_with('{') && s[..end].ends_with("::") {
        expand(&full, &s[end..], out);
    } else {
        out.push(full);
    }
}

/// Mutual pairs (sorted) of the crate whose sources are in `src`, between modules cut to their
/// first `depth` components (`usize::MAX`: whole module paths).
fn mutual_imports(src: &Path, depth: usize) -> BTreeSet<(String, String)> {
    let cut = |m: &str| m.split("::").take(depth).collect::<Vec<_>>().join("::");
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(src, f)).collect();
    let mut imports: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let from = module_of(src, f);
        let text = std::fs::read_to_string(f).expect("read source");
        // Comments (doc links included) name modules without importing them, and a file's
        // unit tests (its last item: clippy's `items_after_test_module`) may use test helpers
        // that import the file back.
        let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
        let code: String = text
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        for path in crate_paths(&code) {
            // The longest module that is a prefix of the path.
            let mut parts: Vec<&str> = path.split("::").collect();
            let to = loop {
                let candidate = parts.join("::");
                if modules.contains(&candidate) || parts.is_empty() {
                    break candidate;
                }
                parts.pop();
            };
            let (from, to) = (cut(&from), cut(&to));
            if !to.is_empty() && to != from {
                imports.entry(from).or_default().insert(to);
            }
        }
    }
    let mut out = BTreeSet::new();
    for (a, tos) in &imports {
        for b in tos {
            if a < b && imports.get(b).is_some_and(|t| t.contains(a)) {
                out.insert((a.clone(), b.clone()));
            }
        }
    }
    out
}

fn check(name: &str, src: &Path) {
    let found = mutual_imports(src, usize::MAX);
    assert!(
        !found.is_empty() || src.join("lib.rs").exists(),
        "{name}: no sources found in {}",
        src.display()
    );
    assert!(
        found.is_empty(),
        "{name}: modules that import each other: {found:?}"
    );
    let folders = mutual_imports(src, 1);
    assert!(
        folders.is_empty(),
        "{name}: top-level modules that import each other: {folders:?}"
    );
}

#[test]
fn no_two_modules_import_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    check("conformance", &root.join("src"));
    check("mmkv-reader", &root.join("../reader/src"));
}

#[test]
fn the_checker_sees_imports() {
    let paths = crate_paths("use crate::{a::b, c::{d, e::F}};\nlet x = crate::g::h(1);");
    assert_eq!(paths, ["a::b", "c::d", "c::e::F", "g::h"]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lib.rs"), "mod a; mod b;").unwrap();
    std::fs::write(dir.path().join("a.rs"), "use crate::b::X;").unwrap();
    std::fs::write(dir.path().join("b.rs"), "fn f() { crate::a::g() }").unwrap();
    let found = mutual_imports(dir.path(), usize::MAX);
    assert_eq!(
        found.into_iter().collect::<Vec<_>>(),
        [("a".to_string(), "b".to_string())]
    );
    // Folders: a/x.rs imports b::y, b/y.rs imports a::z; no file pair is mutual.
    std::fs::create_dir(dir.path().join("a")).unwrap();
    std::fs::create_dir(dir.path().join("b")).unwrap();
    std::fs::write(dir.path().join("a.rs"), "mod x; mod z;").unwrap();
    std::fs::write(dir.path().join("b.rs"), "mod y;").unwrap();
    std::fs::write(dir.path().join("a/x.rs"), "use crate::b::y::Y;").unwrap();
    std::fs::write(dir.path().join("b/y.rs"), "use crate::a::z::Z;").unwrap();
    std::fs::write(dir.path().join("a/z.rs"), "").unwrap();
    assert!(mutual_imports(dir.path(), usize::MAX).is_empty());
    assert_eq!(
        mutual_imports(dir.path(), 1)
            .into_iter()
            .collect::<Vec<_>>(),
        [("a".to_string(), "b".to_string())]
    );
}
