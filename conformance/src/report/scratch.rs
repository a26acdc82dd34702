//! Where the report's temporary stores go: a RAM-backed file system (`/dev/shm`) when there is
//! one, else the system's temporary directory; `CONFORMANCE_TMPDIR` chooses.
//!
//! A cell's wall time on a disk is mostly waiting for the official library's `msync`/`fsync`
//! (measured: one cell of 64 expiring workloads, 9.4 s in `/tmp` on disk, 2.5 s in `/dev/shm`,
//! the same 0.7 s of CPU). On tmpfs those calls return at once; the bytes written and read are
//! the same, and nothing the harness judges depends on durability across a machine crash (the
//! fault suite kills processes, whose writes the page cache keeps on any file system), so the
//! verdicts keep their meaning.

use std::path::{Path, PathBuf};

/// The variable that names the directory (an empty value: the system's temporary directory).
pub const VAR: &str = "CONFORMANCE_TMPDIR";

/// The RAM-backed file system tried first.
const SHM: &str = "/dev/shm";

/// The directory for temporary stores: `CONFORMANCE_TMPDIR` if set (empty: the system's), else
/// `/dev/shm` when a directory can be created there, else the system's temporary directory.
pub fn root() -> PathBuf {
    match std::env::var_os(VAR) {
        Some(v) if v.is_empty() => std::env::temp_dir(),
        Some(v) => PathBuf::from(v),
        None if writable(Path::new(SHM)) => PathBuf::from(SHM),
        None => std::env::temp_dir(),
    }
}

fn writable(dir: &Path) -> bool {
    dir.is_dir()
        && tempfile::Builder::new()
            .prefix("conformance-probe-")
            .tempdir_in(dir)
            .is_ok()
}

/// Makes [`root`] this process's temporary directory (`TMPDIR`), so every temporary directory
/// of this process and of its children (cells, live writers, the fault suite's runs) is there.
/// Call before starting threads.
pub fn use_for_process() -> PathBuf {
    let root = root();
    std::env::set_var("TMPDIR", &root);
    root
}
