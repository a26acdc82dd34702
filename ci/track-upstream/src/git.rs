//! Reading upstream tags with `git ls-remote`.

use std::collections::BTreeSet;
use std::process::Command;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::tags::{parse_tag_list, Tag};

/// The upstream repository (the one every `versions.yaml` git source names).
pub use mmkv_versions::UPSTREAM_GIT_URL as UPSTREAM_URL;

/// Runs `git ls-remote --tags URL` (no credential prompts, killed after `timeout`) and
/// returns the release tags it lists.
pub fn ls_remote_tags(url: &str, timeout: Duration) -> Result<BTreeSet<Tag>> {
    let fail = |message: String| Error::Command {
        command: format!("git ls-remote --tags {url}"),
        message,
    };
    let out = mmkv_versions::command::run(
        Command::new("git")
            .args(["ls-remote", "--tags", url])
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_ASKPASS", "true"),
        Some(timeout),
    )
    .map_err(fail)?;
    let tags = parse_tag_list(&String::from_utf8_lossy(&out));
    if tags.is_empty() {
        return Err(fail("it listed no vX.Y.Z release tag".into()));
    }
    Ok(tags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreachable_remote_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no-such-repo");
        let err = ls_remote_tags(&missing.to_string_lossy(), Duration::from_secs(30)).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("git ls-remote --tags"), "{msg}");
    }

    #[test]
    fn lists_tags_of_a_local_repository() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let ok = Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
                .output()
                .unwrap()
                .status
                .success();
            assert!(ok, "git {args:?}");
        };
        git(&["init", "-q"]);
        git(&["commit", "-q", "--allow-empty", "-m", "x"]);
        git(&["tag", "v2.4.1"]);
        git(&["tag", "-a", "v2.4.2", "-m", "annotated"]);
        git(&["tag", "v2.5.0-beta"]);
        let tags = ls_remote_tags(&dir.path().to_string_lossy(), Duration::from_secs(30)).unwrap();
        let names: Vec<String> = tags.iter().map(Tag::to_string).collect();
        assert_eq!(names, vec!["v2.4.1", "v2.4.2"]);
    }
}
