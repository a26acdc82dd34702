//! Text-preserving edits of `versions.yaml`: add an entry or replace one entry's `source`
//! while leaving every other byte (comments, layout, other entries) as it was.
//!
//! The edit is textual, then checked semantically: the new text must parse, hold the
//! requested source for the tag, and have every other entry and top-level key unchanged.

use std::collections::BTreeMap;
use std::path::Path;

use serde_norway::Value;

use crate::error::Error;
use crate::tags::Tag;
use crate::versions::{FeatureSet, GitSource, NpmSource, Source, VersionsFile, VersionsFileExt};

/// What [`upsert_entry`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditAction {
    /// A new entry was inserted; its features were copied from this tag's entry (if any).
    Added {
        /// The entry whose `features` were copied.
        features_from: Option<Tag>,
    },
    /// The entry existed; its `source` was replaced.
    SourceReplaced,
    /// The entry already had exactly this source; the text is unchanged.
    Unchanged,
}

/// The edited text and what changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edited {
    /// The whole new file text.
    pub text: String,
    /// What was done.
    pub action: EditAction,
}

/// Adds an entry for `tag` with `source`, or replaces the `source` of its existing entry.
///
/// A new entry goes right after the entry of the nearest lower tag (before the first entry
/// when there is none), copies that entry's `features` (marked with a comment asking for a
/// review), and uses the file's indentation and blank-line style.
pub fn upsert_entry(text: &str, tag: Tag, source: &Source) -> Result<Edited, Error> {
    let origin = Path::new("versions.yaml");
    let parsed = VersionsFile::parse(text, origin)?;
    if let Some(entry) = parsed.entry(tag) {
        if entry.source == *source {
            return Ok(Edited {
                text: text.to_string(),
                action: EditAction::Unchanged,
            });
        }
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let layout = scan_layout(&lines)?;
    let (new_text, action) = match layout.entries.iter().find(|e| e.tag == Some(tag)) {
        Some(entry) => (
            replace_source(&lines, entry, source)?,
            EditAction::SourceReplaced,
        ),
        None => {
            let lower = layout
                .entries
                .iter()
                .filter(|e| e.tag.is_some_and(|t| t < tag))
                .max_by_key(|e| e.tag);
            let features_from = lower.and_then(|e| e.tag);
            let features = features_from
                .and_then(|t| parsed.entry(t))
                .map(|e| e.features)
                .unwrap_or_default();
            let text = insert_entry(
                &lines,
                &layout,
                lower,
                tag,
                &features,
                features_from,
                source,
            )?;
            (text, EditAction::Added { features_from })
        }
    };
    verify_edit(text, &new_text, tag, source)?;
    Ok(Edited {
        text: new_text,
        action,
    })
}

#[derive(Debug)]
struct EntryLayout {
    /// Line index of `- tag: ...`.
    start: usize,
    /// One past the entry's last non-blank, non-comment line.
    content_end: usize,
    /// Column of the entry's keys.
    key_col: usize,
    /// Whether the entry is a one-line flow mapping (`- {tag: ...}`).
    flow: bool,
    tag: Option<Tag>,
}

#[derive(Debug)]
struct Layout {
    dash_indent: usize,
    entries: Vec<EntryLayout>,
    /// Whether entries are separated by blank lines.
    blank_separated: bool,
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_trivia(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// If `line` starts a list item at `dash_indent` (or any indent when `None`), returns
/// (dash indent, key column, rest after the dash).
fn list_item(line: &str) -> Option<(usize, usize, &str)> {
    let indent = indent_of(line);
    let rest = &line[indent..];
    let after = rest.strip_prefix('-')?;
    if !(after.starts_with(' ') || after.starts_with('\t')) {
        return None;
    }
    let body = after.trim_start();
    let key_col = line.len() - body.len();
    Some((indent, key_col, body))
}

fn tag_of_item(body: &str) -> (Option<Tag>, bool) {
    let body = body.trim_end();
    if let Some(flow) = body.strip_prefix('{') {
        let tag = flow.split(',').find_map(|kv| {
            let (k, v) = kv.split_once(':')?;
            (k.trim() == "tag")
                .then(|| Tag::parse(unquote(v.trim().trim_end_matches('}').trim())))?
        });
        return (tag, true);
    }
    let Some(value) = body.strip_prefix("tag:") else {
        return (None, false);
    };
    let value = value.split(" #").next().unwrap_or("").trim();
    (Tag::parse(unquote(value)), false)
}

fn unquote(s: &str) -> &str {
    let s = s.trim();
    for q in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(q).and_then(|x| x.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

fn scan_layout(lines: &[&str]) -> Result<Layout, Error> {
    let first = lines
        .iter()
        .position(|l| list_item(l).is_some_and(|(_, _, body)| tag_of_item(body).0.is_some()))
        .ok_or_else(|| Error::Edit("no `- tag: vX.Y.Z` entry found".into()))?;
    let dash_indent = indent_of(lines[first]);
    let mut entries: Vec<EntryLayout> = Vec::new();
    let mut i = first;
    while i < lines.len() {
        let line = lines[i];
        if let Some((indent, key_col, body)) = list_item(line) {
            if indent == dash_indent {
                let (tag, flow) = tag_of_item(body);
                entries.push(EntryLayout {
                    start: i,
                    content_end: i + 1,
                    key_col,
                    flow,
                    tag,
                });
                i += 1;
                continue;
            }
        }
        if is_trivia(line) {
            i += 1;
            continue;
        }
        let Some(current) = entries.last_mut() else {
            break;
        };
        if indent_of(line) > dash_indent {
            current.content_end = i + 1;
            i += 1;
        } else {
            break;
        }
    }
    let blank_separated = entries.len() >= 2
        && lines[entries[0].content_end..entries[1].start]
            .iter()
            .any(|l| l.trim().is_empty());
    Ok(Layout {
        dash_indent,
        entries,
        blank_separated,
    })
}

/// A YAML scalar for a flow mapping: plain when unambiguous, double-quoted otherwise.
fn scalar(s: &str) -> String {
    let plain_chars = s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'));
    let starts_ok = s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric());
    let resolves_to_string = matches!(
        serde_norway::from_str::<Value>(s),
        Ok(Value::String(ref v)) if v == s
    );
    if plain_chars && starts_ok && resolves_to_string {
        s.to_string()
    } else {
        serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
    }
}

fn render_source(pad: &str, source: &Source) -> String {
    if source.is_none() {
        return format!("{pad}source: none\n");
    }
    let mut out = format!("{pad}source:\n");
    if let Some(GitSource {
        url,
        tag,
        core_tree,
    }) = &source.git
    {
        out.push_str(&format!(
            "{pad}  git: {{url: {}, tag: {tag}, core_tree: {}}}\n",
            serde_json::to_string(url).unwrap_or_else(|_| format!("{url:?}")),
            scalar(core_tree)
        ));
    }
    if let Some(NpmSource {
        package,
        version,
        integrity,
        path,
        core_tree,
    }) = &source.npm
    {
        let tree = core_tree
            .as_deref()
            .map(|t| format!(", core_tree: {}", scalar(t)))
            .unwrap_or_default();
        out.push_str(&format!(
            "{pad}  npm: {{package: {}, version: {}, integrity: {}, path: {}{tree}}}\n",
            scalar(package),
            scalar(version),
            serde_json::to_string(integrity).unwrap_or_else(|_| format!("{integrity:?}")),
            scalar(path)
        ));
    }
    out
}

fn replace_source(lines: &[&str], entry: &EntryLayout, source: &Source) -> Result<String, Error> {
    if entry.flow {
        return Err(Error::Edit(format!(
            "the entry at line {} is a one-line flow mapping; write it in block style first",
            entry.start + 1
        )));
    }
    let key_col = entry.key_col;
    let is_source_key = |idx: usize| {
        let line = lines[idx];
        let at_key = if idx == entry.start {
            // `- source:` would be the first key; the entry begins with `tag:` though.
            false
        } else {
            indent_of(line) == key_col
        };
        at_key && line.trim_start().starts_with("source:")
    };
    let s = (entry.start..entry.content_end)
        .find(|&i| is_source_key(i))
        .ok_or_else(|| {
            Error::Edit(format!(
                "entry at line {} has no `source:` key",
                entry.start + 1
            ))
        })?;
    let mut last = s;
    for (j, line) in lines.iter().enumerate().take(entry.content_end).skip(s + 1) {
        if is_trivia(line) {
            continue;
        }
        if indent_of(line) > key_col {
            last = j;
        } else {
            break;
        }
    }
    let pad = " ".repeat(key_col);
    let mut out = String::new();
    lines[..s].iter().for_each(|l| out.push_str(l));
    out.push_str(&render_source(&pad, source));
    lines[last + 1..].iter().for_each(|l| out.push_str(l));
    Ok(out)
}

fn insert_entry(
    lines: &[&str],
    layout: &Layout,
    lower: Option<&EntryLayout>,
    tag: Tag,
    features: &FeatureSet,
    features_from: Option<Tag>,
    source: &Source,
) -> Result<String, Error> {
    let first = layout
        .entries
        .first()
        .ok_or_else(|| Error::Edit("no entries".into()))?;
    let key_col = if first.flow {
        layout.dash_indent + 2
    } else {
        first.key_col
    };
    let dash_pad = " ".repeat(layout.dash_indent);
    let gap = " ".repeat(key_col.saturating_sub(layout.dash_indent + 1).max(1));
    let pad = " ".repeat(key_col);
    let mut block = String::new();
    block.push_str(&format!("{dash_pad}-{gap}tag: {tag}\n"));
    if let Some(from) = features_from {
        block.push_str(&format!(
            "{pad}# features copied from {from} by add-version: review them against the {tag} sources\n"
        ));
    }
    let list: Vec<&str> = features.iter().map(|f| f.name()).collect();
    block.push_str(&format!("{pad}features: [{}]\n", list.join(", ")));
    block.push_str(&render_source(&pad, source));

    let (at, blank_before, blank_after) = match lower {
        Some(e) => (e.content_end, layout.blank_separated, false),
        None => (first.start, false, layout.blank_separated),
    };
    let mut out = String::new();
    lines[..at].iter().for_each(|l| out.push_str(l));
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if blank_before {
        out.push('\n');
    }
    out.push_str(&block);
    if blank_after {
        out.push('\n');
    }
    lines[at..].iter().for_each(|l| out.push_str(l));
    Ok(out)
}

fn entries_by_tag(doc: &Value) -> Result<BTreeMap<String, Value>, Error> {
    let seq = doc
        .get("versions")
        .and_then(Value::as_sequence)
        .ok_or_else(|| Error::Edit("no `versions:` list".into()))?;
    let mut map = BTreeMap::new();
    for item in seq {
        let tag = item
            .get("tag")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::Edit("an entry has no tag".into()))?;
        map.insert(tag.to_string(), item.clone());
    }
    Ok(map)
}

/// Checks that `new` differs from `old` only in the entry of `tag`, whose source is now
/// `source` (and whose other keys are unchanged when it existed before).
pub fn verify_edit(old: &str, new: &str, tag: Tag, source: &Source) -> Result<(), Error> {
    let parsed = VersionsFile::parse(new, Path::new("versions.yaml (edited)"))?;
    let entry = parsed
        .entry(tag)
        .ok_or_else(|| Error::Edit(format!("edited text has no entry for {tag}")))?;
    if entry.source != *source {
        return Err(Error::Edit(format!(
            "edited entry for {tag} has source {:?}, wanted {source:?}",
            entry.source
        )));
    }
    let parse = |t: &str| {
        serde_norway::from_str::<Value>(t).map_err(|e| Error::Edit(format!("re-parse failed: {e}")))
    };
    let (old_doc, new_doc) = (parse(old)?, parse(new)?);
    let (Some(old_map), Some(new_map)) = (old_doc.as_mapping(), new_doc.as_mapping()) else {
        return Err(Error::Edit("top level is not a mapping".into()));
    };
    if old_map.len() != new_map.len() {
        return Err(Error::Edit("top-level keys changed".into()));
    }
    for (k, v) in old_map {
        if k.as_str() != Some("versions") && new_map.get(k) != Some(v) {
            return Err(Error::Edit(format!("top-level key {k:?} changed")));
        }
    }
    let (mut old_entries, mut new_entries) = (entries_by_tag(&old_doc)?, entries_by_tag(&new_doc)?);
    let key = tag.to_string();
    let old_entry = old_entries.remove(&key);
    let new_entry = new_entries.remove(&key);
    if old_entries != new_entries {
        return Err(Error::Edit(format!("entries other than {tag} changed")));
    }
    if let (Some(Value::Mapping(mut o)), Some(Value::Mapping(mut n))) = (old_entry, new_entry) {
        o.remove("source");
        n.remove("source");
        if o != n {
            return Err(Error::Edit(format!(
                "keys other than source of {tag} changed"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Tag {
        Tag::parse(s).unwrap()
    }

    fn npm(package: &str, version: &str) -> Source {
        Source {
            git: None,
            npm: Some(NpmSource {
                package: package.into(),
                version: version.into(),
                integrity: "sha512-ABC+/=".into(),
                path: "package/MMKV/Core".into(),
                core_tree: None,
            }),
        }
    }

    fn none() -> Source {
        Source::default()
    }

    const BASE: &str = "\
# header comment
versions:
  # the 2.x line
  - tag: v2.0.0
    features: [key_expire, typed_vectors]
    source: none   # no registry source yet
    note: \"kept\"
  - tag: v2.1.0
    features: [key_expire, typed_vectors, aes256]
    source:
      npm: {package: p, version: 1.0.0, integrity: \"sha512-OLD\", path: package/MMKV/Core}
    build: {cxxflags: [\"-include\", \"cstring\"]}
  # trailing comment about the list
";

    #[test]
    fn replaces_source_none_in_place() {
        let out = upsert_entry(BASE, t("v2.0.0"), &npm("react-native-mmkv", "3.1.0")).unwrap();
        assert_eq!(out.action, EditAction::SourceReplaced);
        let expected = BASE.replace(
            "    source: none   # no registry source yet\n",
            "    source:\n      npm: {package: react-native-mmkv, version: 3.1.0, integrity: \"sha512-ABC+/=\", path: package/MMKV/Core}\n",
        );
        assert_eq!(out.text, expected);
    }

    #[test]
    fn replaces_block_source_and_keeps_following_keys() {
        let out = upsert_entry(BASE, t("v2.1.0"), &none()).unwrap();
        assert_eq!(out.action, EditAction::SourceReplaced);
        let expected = BASE.replace(
            "    source:\n      npm: {package: p, version: 1.0.0, integrity: \"sha512-OLD\", path: package/MMKV/Core}\n",
            "    source: none\n",
        );
        assert_eq!(out.text, expected);
        assert!(out.text.contains("    build: {cxxflags"));
    }

    #[test]
    fn same_source_is_unchanged() {
        let out = upsert_entry(BASE, t("v2.0.0"), &none()).unwrap();
        assert_eq!(out.action, EditAction::Unchanged);
        assert_eq!(out.text, BASE);
    }

    #[test]
    fn appends_newest_after_last_entry_copying_features() {
        let out = upsert_entry(BASE, t("v2.4.3"), &npm("q", "2.0.0")).unwrap();
        assert_eq!(
            out.action,
            EditAction::Added {
                features_from: Some(t("v2.1.0"))
            }
        );
        let block = "  - tag: v2.4.3\n    # features copied from v2.1.0 by add-version: review them against the v2.4.3 sources\n    features: [key_expire, typed_vectors, aes256]\n    source:\n      npm: {package: q, version: 2.0.0, integrity: \"sha512-ABC+/=\", path: package/MMKV/Core}\n";
        let expected = BASE.replace(
            "  # trailing comment about the list\n",
            &format!("{block}  # trailing comment about the list\n"),
        );
        assert_eq!(out.text, expected);
    }

    #[test]
    fn inserts_gap_and_oldest_in_order() {
        let mid = upsert_entry(BASE, t("v2.0.5"), &none()).unwrap();
        let i_200 = mid.text.find("- tag: v2.0.0").unwrap();
        let i_205 = mid.text.find("- tag: v2.0.5").unwrap();
        let i_210 = mid.text.find("- tag: v2.1.0").unwrap();
        assert!(i_200 < i_205 && i_205 < i_210);
        assert!(mid.text.contains("note: \"kept\"\n  - tag: v2.0.5\n"));

        let old = upsert_entry(BASE, t("v1.0.0"), &none()).unwrap();
        assert_eq!(
            old.action,
            EditAction::Added {
                features_from: None
            }
        );
        assert!(old.text.contains(
            "  # the 2.x line\n  - tag: v1.0.0\n    features: []\n    source: none\n  - tag: v2.0.0\n"
        ));
    }

    #[test]
    fn follows_file_style() {
        // Dash at column 0, blank lines between entries, no final newline, a later top-level key.
        let text = "versions:\n- tag: v1.0.0\n  source: none\n\n- tag: v1.1.0\n  features: [aes256]\n  source: none\nother: 1";
        let out = upsert_entry(text, t("v1.2.0"), &none()).unwrap();
        assert_eq!(
            out.text,
            "versions:\n- tag: v1.0.0\n  source: none\n\n- tag: v1.1.0\n  features: [aes256]\n  source: none\n\n- tag: v1.2.0\n  # features copied from v1.1.0 by add-version: review them against the v1.2.0 sources\n  features: [aes256]\n  source: none\nother: 1"
        );
        let no_newline = "versions:\n  - tag: v1.0.0\n    source: none";
        let out = upsert_entry(no_newline, t("v1.0.1"), &none()).unwrap();
        assert!(out.text.ends_with("    source: none\n  - tag: v1.0.1\n    # features copied from v1.0.0 by add-version: review them against the v1.0.1 sources\n    features: []\n    source: none\n"));
    }

    #[test]
    fn quotes_what_needs_quoting() {
        let out = upsert_entry(BASE, t("v2.2.0"), &npm("@scope/mmkv", "1.0.0")).unwrap();
        assert!(out
            .text
            .contains("npm: {package: \"@scope/mmkv\", version: 1.0.0,"));
        assert_eq!(scalar("1.0"), "\"1.0\"");
        assert_eq!(scalar("true"), "\"true\"");
        assert_eq!(scalar("3.1.0"), "3.1.0");
        assert_eq!(scalar("a: b"), "\"a: b\"");
    }

    #[test]
    fn refuses_flow_entries_and_checks_the_result() {
        let flow = "versions:\n  - {tag: v1.0.0, source: none}\n";
        assert!(upsert_entry(flow, t("v1.0.0"), &npm("p", "1.0.0")).is_err());
        // Adding next to a flow entry works (block style).
        let added = upsert_entry(flow, t("v1.0.1"), &none()).unwrap();
        assert!(added.text.ends_with("  - tag: v1.0.1\n    # features copied from v1.0.0 by add-version: review them against the v1.0.1 sources\n    features: []\n    source: none\n"));

        // verify_edit notices collateral changes.
        let tampered = BASE
            .replace(
                "features: [key_expire, typed_vectors, aes256]",
                "features: [key_expire]",
            )
            .replace(
                "source: none   # no registry source yet",
                "source:\n      npm: {package: p, version: 9.9.9, integrity: \"x\", path: y}",
            );
        let src = Source {
            git: None,
            npm: Some(NpmSource {
                package: "p".into(),
                version: "9.9.9".into(),
                integrity: "x".into(),
                path: "y".into(),
                core_tree: None,
            }),
        };
        let err = verify_edit(BASE, &tampered, t("v2.0.0"), &src).unwrap_err();
        assert!(err.to_string().contains("other than v2.0.0"), "{err}");
        let wrong = verify_edit(BASE, BASE, t("v2.0.0"), &src).unwrap_err();
        assert!(wrong.to_string().contains("source"), "{wrong}");
        assert!(upsert_entry("nothing: here\n", t("v1.0.0"), &none()).is_err());
    }
}
