//! Read-only file access: open without following into special files, positional reads into
//! owned memory, and the shared `flock` on the meta file.
//!
//! The data file is never memory-mapped: the official writer truncates it on `trim()` and
//! `clearAll()`, which would turn accesses to a mapping into SIGBUS. Every read here is a
//! `pread` into a `Vec` that the reader owns.

use std::fs::File;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

use rustix::fs::{flock, FlockOperation};

use crate::error::{Error, Result};

/// Which file of a store a path is (to pick the "missing" error).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Which {
    Meta,
    Data,
}

/// Opens `path` read-only. A missing file is [`Error::MetaMissing`] / [`Error::DataMissing`],
/// anything but a regular file is [`Error::NotAFile`]. `O_NONBLOCK` keeps a FIFO from
/// blocking the open; it has no effect on regular files.
pub(crate) fn open_regular(path: &Path, which: Which) -> Result<File> {
    let missing = |p: &Path| match which {
        Which::Meta => Error::MetaMissing {
            path: p.to_path_buf(),
        },
        Which::Data => Error::DataMissing {
            path: p.to_path_buf(),
        },
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                missing(path)
            } else if e.raw_os_error() == Some(rustix::io::Errno::ISDIR.raw_os_error()) {
                Error::NotAFile {
                    path: path.to_path_buf(),
                }
            } else {
                Error::io(path, &e)
            }
        })?;
    let md = file.metadata().map_err(|e| Error::io(path, &e))?;
    if !md.is_file() {
        return Err(Error::NotAFile {
            path: path.to_path_buf(),
        });
    }
    Ok(file)
}

/// Current length of an open file.
pub(crate) fn file_len(file: &File, path: &Path) -> Result<u64> {
    file.metadata()
        .map(|m| m.len())
        .map_err(|e| Error::io(path, &e))
}

thread_local! {
    static BYTES_READ: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Data bytes read by [`read_at`] on this thread so far (for reload statistics).
pub(crate) fn bytes_read_on_thread() -> u64 {
    BYTES_READ.with(|c| c.get())
}

/// Reads exactly `len` bytes at `offset` into a new buffer. A short read (the file shrank)
/// is [`Error::Truncated`]. Callers bound `len` by the file length first, so a corrupt size
/// field never causes a huge allocation.
pub(crate) fn read_at(file: &File, path: &Path, offset: u64, len: usize) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    advise_huge_pages(&mut buf);
    let mut done = 0usize;
    while done < len {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => {
                return Err(Error::Truncated {
                    expected: offset + len as u64,
                    got: offset + done as u64,
                })
            }
            Ok(n) => {
                done += n;
                BYTES_READ.with(|c| c.set(c.get() + n as u64));
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, &e)),
        }
    }
    Ok(buf)
}

/// Size of a transparent huge page on x86-64 and aarch64 (4 KiB base pages).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const HUGE_PAGE: usize = 2 << 20;

/// Asks the kernel to back the 2 MiB-aligned interior of a large, not yet touched buffer with
/// transparent huge pages (`MADV_HUGEPAGE`). With THP in `madvise` mode (a common default) a
/// 64 MiB region read otherwise takes 16,384 page faults, about half of a full load. Only the
/// paging policy changes; errors (THP disabled, old kernel) are ignored.
#[cfg(target_os = "linux")]
fn advise_huge_pages(buf: &mut [u8]) {
    if buf.len() < 2 * HUGE_PAGE {
        return;
    }
    let start = buf.as_mut_ptr() as usize;
    let first = (start + HUGE_PAGE - 1) & !(HUGE_PAGE - 1);
    let end = (start + buf.len()) & !(HUGE_PAGE - 1);
    if end > first {
        // SAFETY: [first, end) lies inside `buf`, which we borrow mutably, so the range is
        // mapped memory we own; MADV_HUGEPAGE only changes how future faults are served and
        // never alters the contents or the validity of the memory.
        let _ = unsafe {
            rustix::mm::madvise(
                first as *mut std::ffi::c_void,
                end - first,
                rustix::mm::Advice::LinuxHugepage,
            )
        };
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_buf: &mut [u8]) {}

/// Reads up to `max` bytes from the start of the file (fewer if the file is shorter).
pub(crate) fn read_prefix(file: &File, path: &Path, max: usize) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; max];
    let mut done = 0usize;
    while done < max {
        match file.read_at(&mut buf[done..], done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, &e)),
        }
    }
    buf.truncate(done);
    Ok(buf)
}

/// A shared `flock` held on the meta file, released on drop.
pub(crate) struct SharedLock<'a> {
    file: &'a File,
}

/// How long to keep retrying a shared `flock` that a writer's exclusive lock blocks: the
/// default of [`crate::Options::lock_timeout`].
pub(crate) const DEFAULT_LOCK_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(100);

impl<'a> SharedLock<'a> {
    /// Takes the shared lock without ever blocking indefinitely: non-blocking attempts with
    /// exponential backoff (1 ms doubling, at most 16 ms between attempts) until `timeout` has
    /// passed. `Ok(None)`: a writer still holds an exclusive lock (the official multi-process
    /// writer takes it while it writes; v2.2.0 and v2.2.1 hold it for as long as a store is
    /// open single-process).
    pub(crate) fn try_acquire(
        file: &'a File,
        path: &Path,
        timeout: std::time::Duration,
    ) -> Result<Option<SharedLock<'a>>> {
        let start = std::time::Instant::now();
        let mut wait = std::time::Duration::from_millis(1);
        loop {
            match flock(file, FlockOperation::NonBlockingLockShared) {
                Ok(()) => return Ok(Some(SharedLock { file })),
                Err(rustix::io::Errno::INTR) => continue,
                Err(rustix::io::Errno::WOULDBLOCK) => {
                    let spent = start.elapsed();
                    if spent >= timeout {
                        return Ok(None);
                    }
                    std::thread::sleep(wait.min(timeout - spent));
                    wait = (wait * 2).min(std::time::Duration::from_millis(16));
                }
                Err(e) => return Err(Error::io(path, &std::io::Error::from(e))),
            }
        }
    }
}

impl Drop for SharedLock<'_> {
    fn drop(&mut self) {
        let _ = flock(self.file, FlockOperation::Unlock);
    }
}

/// The data file as a [`crate::locate::ReadAt`] source (positional reads, current length).
pub(crate) struct DataFile<'a> {
    pub file: &'a File,
    pub path: &'a Path,
}

impl crate::locate::ReadAt for DataFile<'_> {
    fn len(&self) -> Result<u64> {
        file_len(self.file, self.path)
    }

    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        read_at(self.file, self.path, offset, len)
    }
}

/// The meta path of a store: `PATH.crc`.
pub(crate) fn meta_path(data: &Path) -> std::path::PathBuf {
    let mut s = data.as_os_str().to_owned();
    s.push(".crc");
    s.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(n: usize) -> Vec<u8> {
        (0..n)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect()
    }

    /// Large reads (huge-page advice on the buffer) return exactly the file's bytes, at any
    /// offset and for lengths around the advice threshold.
    #[test]
    fn large_reads_are_exact() {
        let data = pattern(9 * HUGE_PAGE + 4099);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, &data).unwrap();
        let f = File::open(&p).unwrap();
        for (off, len) in [
            (0usize, data.len()),
            (4, data.len() - 4),
            (7, 2 * HUGE_PAGE - 1),
            (13, 2 * HUGE_PAGE),
            (HUGE_PAGE + 1, 5 * HUGE_PAGE + 3),
        ] {
            let got = read_at(&f, &p, off as u64, len).unwrap();
            assert!(got == data[off..off + len], "offset {off} len {len}");
        }
        assert!(matches!(
            read_at(&f, &p, 1, data.len()),
            Err(Error::Truncated { .. })
        ));
    }

    /// The advice never changes memory contents, whatever the buffer's alignment.
    #[test]
    fn advice_keeps_contents() {
        let src = pattern(5 * HUGE_PAGE + 17);
        for skew in [0usize, 1, 4095, 4096] {
            let mut buf = src.clone();
            advise_huge_pages(&mut buf[skew..]);
            assert!(buf == src, "skew {skew}");
        }
    }
}
