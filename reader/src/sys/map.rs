//! Read-only memory mappings read with volatile loads (the meta file, shared with writer
//! processes), and the huge-page advice for large read buffers.

use std::fs::File;

use memmap2::Mmap;

/// A read-only mapping of a file that is at least `MIN` bytes long. It is never handed out as
/// a slice: other processes write the file, so it is only read through volatile copies
/// ([`Mapped::copy_prefix`]) and aligned volatile `u32` loads ([`Mapped::u32_at`]).
///
/// If another process truncates the file while it is mapped, the next read of the mapping
/// gets `SIGBUS` on Unix (the official writer never shrinks the meta file; Windows refuses to
/// truncate a mapped file).
pub(crate) struct Mapped<const MIN: usize> {
    map: Mmap,
}

impl<const MIN: usize> Mapped<MIN> {
    /// Maps `file` read-only. `Ok(Err(len))`: the mapping is shorter than `MIN` bytes.
    pub(crate) fn new(file: &File) -> std::io::Result<Result<Mapped<MIN>, usize>> {
        // SAFETY: the mapping is read-only and only read through the volatile reads below,
        // never as a slice (see the type's docs for a foreign truncation).
        let map = unsafe { Mmap::map(file) }?;
        if map.len() < MIN {
            return Ok(Err(map.len()));
        }
        Ok(Ok(Mapped { map }))
    }

    /// Copies the first `max` bytes (fewer if the mapping is shorter), byte by byte with
    /// volatile reads: a concurrent writer cannot tear the parse of the copy.
    pub(crate) fn copy_prefix(&self, max: usize) -> Vec<u8> {
        let n = self.map.len().min(max);
        let p = self.map.as_ptr();
        (0..n)
            // SAFETY: i < n <= the mapping's length.
            .map(|i| unsafe { std::ptr::read_volatile(p.add(i)) })
            .collect()
    }

    /// The little-endian `u32` at byte `OFF`, one aligned volatile load (not four byte
    /// loads). `OFF` must be a multiple of 4 with `OFF + 4 <= MIN` (checked at compile time).
    #[inline]
    pub(crate) fn u32_at<const OFF: usize>(&self) -> u32 {
        const { assert!(OFF.is_multiple_of(4) && OFF + 4 <= MIN) };
        // SAFETY: `new` checked that the mapping holds at least MIN bytes and OFF + 4 <= MIN;
        // a mapping starts on a page boundary and OFF is a multiple of 4, so the load is
        // aligned; volatile because other processes write the file.
        u32::from_le(unsafe { std::ptr::read_volatile(self.map.as_ptr().add(OFF).cast::<u32>()) })
    }
}

/// Size of a transparent huge page on x86-64 and aarch64 (4 KiB base pages).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) const HUGE_PAGE: usize = 2 << 20;

/// Asks the kernel to back the 2 MiB-aligned interior of a large, not yet touched buffer with
/// transparent huge pages (`MADV_HUGEPAGE`). With THP in `madvise` mode (a common default) a
/// 64 MiB region read otherwise takes 16,384 page faults, about half of a full load. Only the
/// paging policy changes; errors (THP disabled, old kernel) are ignored.
#[cfg(target_os = "linux")]
pub(crate) fn advise_huge_pages(buf: &mut [u8]) {
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

/// No huge-page advice off Linux.
#[cfg(not(target_os = "linux"))]
pub(crate) fn advise_huge_pages(_buf: &mut [u8]) {}
