//! Where criterion keeps its results.

use std::path::{Path, PathBuf};

/// The workspace root (the parent of this crate's manifest directory).
pub fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// Criterion's output directory, resolved like criterion does: `$CRITERION_HOME`, else
/// `$CARGO_TARGET_DIR/criterion`, else `<workspace>/target/criterion`.
pub fn criterion_dir() -> PathBuf {
    resolve_criterion_dir(
        std::env::var_os("CRITERION_HOME").map(PathBuf::from),
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from),
        &workspace_root(),
    )
}

/// [`criterion_dir`] from explicit inputs (the two variables and the workspace root).
pub fn resolve_criterion_dir(
    criterion_home: Option<PathBuf>,
    target_dir: Option<PathBuf>,
    workspace: &Path,
) -> PathBuf {
    let nonempty = |p: &PathBuf| !p.as_os_str().is_empty();
    if let Some(home) = criterion_home.filter(nonempty) {
        return home;
    }
    let target = target_dir
        .filter(nonempty)
        .map(|t| {
            if t.is_relative() {
                workspace.join(t)
            } else {
                t
            }
        })
        .unwrap_or_else(|| workspace.join("target"));
    target.join("criterion")
}

/// Writes `value` as pretty JSON to `<criterion dir>/<name>` (creating the directory).
pub fn write_json<T: serde::Serialize>(name: &str, value: &T) -> std::io::Result<PathBuf> {
    let dir = criterion_dir();
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(name);
    let text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    std::fs::write(&path, text + "\n")?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn criterion_dir_precedence() {
        let ws = Path::new("/ws");
        assert_eq!(
            resolve_criterion_dir(None, None, ws),
            PathBuf::from("/ws/target/criterion")
        );
        assert_eq!(
            resolve_criterion_dir(None, Some("/t".into()), ws),
            PathBuf::from("/t/criterion")
        );
        assert_eq!(
            resolve_criterion_dir(None, Some("rel".into()), ws),
            PathBuf::from("/ws/rel/criterion")
        );
        assert_eq!(
            resolve_criterion_dir(Some("/h".into()), Some("/t".into()), ws),
            PathBuf::from("/h")
        );
        assert_eq!(
            resolve_criterion_dir(Some("".into()), None, ws),
            PathBuf::from("/ws/target/criterion")
        );
    }
}
