//! Read-only file access, the only place the reader touches the operating system: open without
//! following into special files, positional reads into owned memory, the shared lock on the meta
//! file, and the read-only mapping of the meta file ([`MetaMap`]). Portable (Unix and Windows);
//! the unsafe parts (the mapping, its volatile reads, the huge-page advice on Linux) are safe
//! calls into [`crate::sys::map`].
//!
//! The data file is never memory-mapped: the official writer truncates it on `trim()` and
//! `clearAll()`, which would turn accesses to a mapping into SIGBUS. Every read here is a
//! positional read (`pread` on Unix, `ReadFile` at an offset on Windows) into a `Vec` that the
//! reader owns.
//!
//! The lock is std's [`File::try_lock_shared`]: `flock(LOCK_SH | LOCK_NB)` on Linux and the
//! BSDs/macOS (what the official library takes on the same file), `LockFileEx` shared and
//! fail-immediately over the whole file on Windows (the official Windows library locks byte 0 of
//! the meta file with `LockFileEx`, which that range covers).

use std::fs::File;
use std::path::Path;

use crate::error::{Error, Result};
use crate::meta::{OFF_ACTUAL_SIZE, OFF_CRC, OFF_SEQUENCE};
use crate::sys::map::{advise_huge_pages, Mapped};

#[cfg(not(any(unix, windows)))]
compile_error!("mmkv-reader reads files on Unix and Windows only (positional reads, file locks)");

/// Which file of a store a path is (to pick the "missing" error).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Which {
    Meta,
    Data,
}

/// Opens `path` read-only. A missing file is [`Error::MetaMissing`] / [`Error::DataMissing`],
/// anything but a regular file is [`Error::NotAFile`]. On Unix `O_NONBLOCK` keeps a FIFO from
/// blocking the open; it has no effect on regular files. On Windows the file is shared for
/// reading, writing and deletion (std's default), so a writer is never kept out.
pub(crate) fn open_regular(path: &Path, which: Which) -> Result<File> {
    let missing = |p: &Path| match which {
        Which::Meta => Error::MetaMissing {
            path: p.to_path_buf(),
        },
        Which::Data => Error::DataMissing {
            path: p.to_path_buf(),
        },
    };
    let not_a_file = || Error::NotAFile {
        path: path.to_path_buf(),
    };
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let file = opts.open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            missing(path)
        } else if e.kind() == std::io::ErrorKind::IsADirectory
            // Windows refuses to open a directory as a file (access denied).
            || std::fs::metadata(path).is_ok_and(|m| !m.is_file())
        {
            not_a_file()
        } else {
            Error::io(path, &e)
        }
    })?;
    let md = file.metadata().map_err(|e| Error::io(path, &e))?;
    if !md.is_file() {
        return Err(not_a_file());
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

/// One positional read: up to `buf.len()` bytes at `offset`, the file position untouched on Unix
/// (`pread`); on Windows `ReadFile` at that offset (it moves the position, which no reader
/// here uses). `Ok(0)` at or past the end of the file.
fn read_some_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        std::os::windows::fs::FileExt::seek_read(file, buf, offset)
    }
}

/// Reads exactly `len` bytes at `offset` into a new buffer. A short read (the file shrank)
/// is [`Error::Truncated`]. Callers bound `len` by the file length first, so a corrupt size
/// field never causes a huge allocation.
pub(crate) fn read_at(file: &File, path: &Path, offset: u64, len: usize) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    read_at_into(file, path, offset, len, &mut buf)?;
    Ok(buf)
}

/// [`read_at`] into `buf`: its content is replaced by the `len` bytes, its allocation reused
/// when it is large enough (a reused buffer's pages are already mapped: no page faults).
pub(crate) fn read_at_into(
    file: &File,
    path: &Path,
    offset: u64,
    len: usize,
    buf: &mut Vec<u8>,
) -> Result<()> {
    if buf.capacity() < len {
        *buf = vec![0u8; len];
        advise_huge_pages(buf);
    } else {
        // Only bytes past the current length are zeroed; all are overwritten below.
        buf.resize(len, 0);
    }
    fill(file, path, buf, offset, offset + len as u64, |_| {})
}

/// Reads below this size are done by the calling thread alone.
const PARALLEL_MIN: usize = 8 << 20;
/// Bytes read at a time by [`read_at_crc`]: each piece is CRC-checked while it is still in
/// the cache.
const PIECE: usize = 1 << 20;

/// [`read_at`] and the CRC-32 of the bytes read. Each piece's CRC is computed right after it
/// is read (one pass over memory instead of two); a large read is split in two halves read
/// by two threads (the copy from the page cache, the page faults of the new buffer and the CRC
/// run in parallel) and their CRCs combined.
pub(crate) fn read_at_crc(
    file: &File,
    path: &Path,
    offset: u64,
    len: usize,
) -> Result<(Vec<u8>, u32)> {
    let mut buf = vec![0u8; len];
    advise_huge_pages(&mut buf);
    let end = offset + len as u64;
    let crc_fill = |part: &mut [u8], at: u64| -> Result<crc32fast::Hasher> {
        let mut h = crc32fast::Hasher::new();
        fill(file, path, part, at, end, |piece| h.update(piece))?;
        Ok(h)
    };
    let two =
        len >= PARALLEL_MIN && std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
    // `None`: one thread (small read, one core, or no second thread could be started).
    let parallel = two.then(|| {
        let mid = len / 2;
        let (first, second) = buf.split_at_mut(mid);
        std::thread::scope(|s| {
            let other = std::thread::Builder::new()
                .spawn_scoped(s, || {
                    let r = crc_fill(second, offset + mid as u64);
                    (r, bytes_read_on_thread())
                })
                .ok()?;
            let a = crc_fill(first, offset);
            let (b, other_bytes) = other
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            // The other thread's bytes count as read by this one (reload statistics).
            BYTES_READ.with(|c| c.set(c.get() + other_bytes));
            Some(a.and_then(|mut h| {
                h.combine(&b?);
                Ok(h.finalize())
            }))
        })
    });
    let crc = match parallel.flatten() {
        Some(crc) => crc?,
        None => crc_fill(&mut buf, offset)?.finalize(),
    };
    Ok((buf, crc))
}

/// Fills `buf` from `offset` (`end`: the end of the whole read, for the error), handing each
/// piece of at most [`PIECE`] bytes to `piece` once it is complete.
fn fill(
    file: &File,
    path: &Path,
    buf: &mut [u8],
    offset: u64,
    end: u64,
    mut piece: impl FnMut(&[u8]),
) -> Result<()> {
    let mut at = offset;
    for part in buf.chunks_mut(PIECE) {
        let mut done = 0usize;
        while done < part.len() {
            match read_some_at(file, &mut part[done..], at + done as u64) {
                Ok(0) => {
                    return Err(Error::Truncated {
                        expected: end,
                        got: at + done as u64,
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
        piece(part);
        at += part.len() as u64;
    }
    Ok(())
}

/// Reads up to `max` bytes from the start of the file (fewer if the file is shorter).
pub(crate) fn read_prefix(file: &File, path: &Path, max: usize) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; max];
    let mut done = 0usize;
    while done < max {
        match read_some_at(file, &mut buf[done..], done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, &e)),
        }
    }
    buf.truncate(done);
    Ok(buf)
}

/// A shared lock held on the meta file, released on drop.
pub(crate) struct SharedLock<'a> {
    file: &'a File,
}

/// How long to keep retrying a shared lock that a writer's exclusive lock blocks: the
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
            match file.try_lock_shared() {
                Ok(()) => return Ok(Some(SharedLock { file })),
                Err(std::fs::TryLockError::Error(e))
                    if e.kind() == std::io::ErrorKind::Interrupted =>
                {
                    continue
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    let spent = start.elapsed();
                    if spent >= timeout {
                        return Ok(None);
                    }
                    std::thread::sleep(wait.min(timeout - spent));
                    wait = (wait * 2).min(std::time::Duration::from_millis(16));
                }
                // A platform without file locks in std (none of the supported ones): read
                // optimistically, as when a writer holds the lock.
                Err(std::fs::TryLockError::Error(e))
                    if e.kind() == std::io::ErrorKind::Unsupported =>
                {
                    return Ok(None)
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(path, &e)),
            }
        }
    }
}

impl Drop for SharedLock<'_> {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

/// Meta bytes a [`MetaMap`] always holds: through the actual size (the check-on-read triple).
pub(crate) const MAPPED_META_MIN: usize = OFF_ACTUAL_SIZE + 4;

/// The meta file mapped read-only, for the syscall-free check-on-read. At least
/// [`MAPPED_META_MIN`] bytes long (see [`Mapped`] for a foreign truncation).
pub(crate) struct MetaMap {
    map: Mapped<MAPPED_META_MIN>,
}

impl MetaMap {
    /// Maps `file` (the meta file at `path`); shorter than [`MAPPED_META_MIN`] is
    /// [`Error::MetaTooShort`] (`needed` the meta structure's size).
    pub(crate) fn new(file: &File, path: &Path) -> Result<MetaMap> {
        let too_short = |len: usize| Error::MetaTooShort {
            len,
            needed: crate::meta::META_SIZE,
        };
        let len = file_len(file, path)?;
        if len < MAPPED_META_MIN as u64 {
            return Err(too_short(len as usize));
        }
        match Mapped::new(file) {
            Ok(Ok(map)) => Ok(MetaMap { map }),
            Ok(Err(len)) => Err(too_short(len)),
            Err(e) => Err(Error::io(path, &e)),
        }
    }

    /// Copies the first `max` bytes (fewer if the mapping is shorter): the mapping is shared
    /// with writer processes, so a copy is what gets parsed.
    pub(crate) fn copy_prefix(&self, max: usize) -> Vec<u8> {
        self.map.copy_prefix(max)
    }

    /// The check-on-read triple (CRC, actual size, sequence) as three aligned volatile `u32`
    /// loads.
    #[inline]
    pub(crate) fn triple(&self) -> (u32, u32, u32) {
        (
            self.map.u32_at::<OFF_CRC>(),
            self.map.u32_at::<OFF_ACTUAL_SIZE>(),
            self.map.u32_at::<OFF_SEQUENCE>(),
        )
    }
}

/// The meta file of the store whose data file is `data`: `data` with `.crc` appended
/// (`mmkv.default` → `mmkv.default.crc`), as the official library names it.
pub fn meta_path(data: &Path) -> std::path::PathBuf {
    let mut s = data.as_os_str().to_owned();
    s.push(".crc");
    s.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::map::HUGE_PAGE;

    fn pattern(n: usize) -> Vec<u8> {
        (0..n)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect()
    }

    /// A file of `pattern(9 huge pages + 4099 bytes)`: (its directory, path, handle, bytes).
    fn large_file() -> (tempfile::TempDir, std::path::PathBuf, File, Vec<u8>) {
        let data = pattern(9 * HUGE_PAGE + 4099);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, &data).unwrap();
        let f = File::open(&p).unwrap();
        (dir, p, f, data)
    }

    /// Large reads (huge-page advice on the buffer) return exactly the file's bytes, at any
    /// offset and for lengths around the advice threshold.
    #[test]
    fn large_reads_are_exact() {
        let (_dir, p, f, data) = large_file();
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

    #[test]
    fn crc_reads_match_plain_reads_on_one_and_two_threads() {
        // 9 huge pages + 4099 bytes: above PARALLEL_MIN (two threads) and not a multiple of
        // PIECE; the small reads take the one-thread path.
        let (_dir, p, f, data) = large_file();
        assert!(data.len() >= PARALLEL_MIN + PIECE);
        for (off, len) in [
            (0usize, data.len()),
            (4, data.len() - 4),
            (3, PARALLEL_MIN),
            (5, PARALLEL_MIN - 1),
            (1, PIECE + 1),
            (0, 0),
        ] {
            let before = bytes_read_on_thread();
            let (got, crc) = read_at_crc(&f, &p, off as u64, len).unwrap();
            assert!(got == data[off..off + len], "offset {off} len {len}");
            assert_eq!(
                crc,
                crc32fast::hash(&data[off..off + len]),
                "offset {off} len {len}"
            );
            // Both threads' bytes are counted on the calling thread.
            assert_eq!(bytes_read_on_thread() - before, len as u64);
        }
        for (off, len) in [(1usize, data.len()), (PIECE, data.len() - PIECE + 1)] {
            assert!(matches!(
                read_at_crc(&f, &p, off as u64, len),
                Err(Error::Truncated { expected, .. }) if expected == (off + len) as u64
            ));
        }
    }

    /// The shared lock: taken at once when free, shared with other readers, refused after the
    /// timeout (with backoff, not at once) while another handle holds it exclusively, taken
    /// again once that handle lets go. Another handle of the same process conflicts like
    /// another process (`flock` locks belong to the open file, `LockFileEx` locks to the
    /// handle), so this runs on every platform.
    #[test]
    fn shared_lock_backs_off_and_yields_to_an_exclusive_holder() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.crc");
        std::fs::write(&p, [0u8; 64]).unwrap();
        let f = File::open(&p).unwrap();
        let other_reader = File::open(&p).unwrap();
        other_reader.lock_shared().unwrap();
        let timeout = std::time::Duration::from_millis(40);
        let lock = SharedLock::try_acquire(&f, &p, timeout).unwrap();
        assert!(lock.is_some(), "a reader's shared lock must not block");
        drop(lock);
        other_reader.unlock().unwrap();

        let writer = File::open(&p).unwrap();
        writer.lock().unwrap();
        let t = std::time::Instant::now();
        assert!(SharedLock::try_acquire(&f, &p, timeout).unwrap().is_none());
        let spent = t.elapsed();
        assert!(spent >= timeout, "gave up after {spent:?}");
        assert!(spent < std::time::Duration::from_secs(5), "{spent:?}");
        // The reader released nothing it did not hold: the writer still has the file.
        assert!(matches!(
            f.try_lock_shared(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        writer.unlock().unwrap();
        let lock = SharedLock::try_acquire(&f, &p, timeout).unwrap();
        assert!(lock.is_some());
        // Held: an exclusive attempt from elsewhere fails until it is dropped.
        assert!(matches!(
            writer.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(lock);
        writer.try_lock().unwrap();
    }

    /// A directory is [`Error::NotAFile`] on every platform (Unix opens it and then refuses it;
    /// Windows refuses the open).
    #[test]
    fn directories_are_not_files() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            open_regular(dir.path(), Which::Data),
            Err(Error::NotAFile { .. })
        ));
        assert!(matches!(
            open_regular(&dir.path().join("missing"), Which::Meta),
            Err(Error::MetaMissing { .. })
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
