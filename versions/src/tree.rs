//! The git tree hash of a directory on disk, computed without git: what `git rev-parse
//! <commit>:Core` prints for a commit whose `Core/` holds exactly these files (regular files
//! as 100644, executable ones as 100755, symbolic links as 120000; empty directories are not
//! stored by git and do not count). Sources are pinned by this hash in `versions.yaml`.

use sha1::{Digest, Sha1};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn object_id(kind: &str, body: &[u8]) -> [u8; 20] {
    let mut h = Sha1::new();
    h.update(format!("{kind} {}\0", body.len()).as_bytes());
    h.update(body);
    h.finalize().into()
}

/// One tree entry: (sort key, mode, name, object id); git orders a subtree `x` as `x/`.
type TreeEntry = (Vec<u8>, &'static str, Vec<u8>, [u8; 20]);

/// The tree id of `dir` (`None` for a directory git would not store: no files below it).
fn tree_id(dir: &Path) -> io::Result<Option<[u8; 20]>> {
    let mut entries: Vec<TreeEntry> = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().as_bytes().to_vec();
        let path = entry.path();
        let meta = std::fs::symlink_metadata(&path)?;
        let (mode, id) = if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&path)?;
            ("120000", object_id("blob", target.as_os_str().as_bytes()))
        } else if meta.is_dir() {
            match tree_id(&path)? {
                Some(id) => ("40000", id),
                None => continue,
            }
        } else {
            let data = std::fs::read(&path)?;
            let exec = meta.permissions().mode() & 0o111 != 0;
            (
                if exec { "100755" } else { "100644" },
                object_id("blob", &data),
            )
        };
        let mut key = name.clone();
        if mode == "40000" {
            key.push(b'/');
        }
        entries.push((key, mode, name, id));
    }
    if entries.is_empty() {
        return Ok(None);
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut body = Vec::new();
    for (_, mode, name, id) in &entries {
        body.extend_from_slice(mode.as_bytes());
        body.push(b' ');
        body.extend_from_slice(name);
        body.push(0);
        body.extend_from_slice(id);
    }
    Ok(Some(object_id("tree", &body)))
}

/// The git tree hash (40 lowercase hex digits) of `dir` and everything below it.
pub fn tree_hash(dir: &Path) -> io::Result<String> {
    let id = tree_id(dir)?.unwrap_or_else(|| object_id("tree", b""));
    Ok(id.iter().map(|b| format!("{b:02x}")).collect())
}

/// True for a well-formed tree hash (40 lowercase hex digits).
pub fn is_tree_hash(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// Compares with git itself (skipped where git is missing).
    #[test]
    fn matches_git_write_tree() {
        let tmp = std::env::temp_dir().join(format!("mmkv-versions-tree-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let core = tmp.join("Core");
        std::fs::create_dir_all(core.join("aes/openssl")).unwrap();
        std::fs::create_dir_all(core.join("empty")).unwrap();
        std::fs::write(core.join("MMKV.h"), b"// h\n").unwrap();
        std::fs::write(core.join("aes.h"), b"x").unwrap();
        std::fs::write(core.join("aes/openssl/a.S"), b"asm\n").unwrap();
        std::fs::write(core.join("run.sh"), b"#!/bin/sh\n").unwrap();
        std::fs::set_permissions(core.join("run.sh"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        let ours = tree_hash(&core).unwrap();
        assert!(is_tree_hash(&ours));
        let git = |args: &[&str]| {
            Command::new("git")
                .args(args)
                .current_dir(&tmp)
                .env("GIT_DIR", tmp.join(".git"))
                .env("GIT_WORK_TREE", &tmp)
                .output()
        };
        if git(&["init", "-q"]).is_err() {
            eprintln!("git not found: comparison skipped");
            return;
        }
        git(&["add", "-A", "Core"]).unwrap();
        let tree = git(&["write-tree"]).unwrap();
        let tree = String::from_utf8(tree.stdout).unwrap();
        let core_tree = git(&["rev-parse", &format!("{}:Core", tree.trim())]).unwrap();
        assert_eq!(String::from_utf8(core_tree.stdout).unwrap().trim(), ours);
        // One changed byte changes the hash.
        std::fs::write(core.join("aes.h"), b"y").unwrap();
        assert_ne!(tree_hash(&core).unwrap(), ours);
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
