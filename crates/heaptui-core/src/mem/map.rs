//! Files as memory: read-only maps, and what the file system has room for.
//! The callers keep the policy (when to map, what a truncated file means);
//! this is only the unsafe mechanics, each with its reason.

use std::fs::File;
use std::io;

use memmap2::Mmap;

/// Maps a file read-only.
///
/// The caller must make truncation by another process harmless: either
/// the file is its own (an unlinked temporary) or a SIGBUS handler ends the
/// process with a message (`import::source`).
pub fn map_file(file: &File) -> io::Result<Mmap> {
    // SAFETY: a read-only, private mapping; the one way it can fail under
    // us, truncation, raises SIGBUS, which the callers handle (above).
    unsafe { Mmap::map(file) }
}

/// Maps a file shared and writable: writes go to the file (through the
/// page cache).
///
/// Only for the process's own unlinked spill files, whose space is
/// reserved before: nobody else can truncate them.
pub fn map_file_mut(file: &File) -> io::Result<memmap2::MmapMut> {
    // SAFETY: a shared mapping of a file only this process holds (unlinked
    // when made), at its full length; nothing can truncate it under us.
    unsafe { memmap2::MmapMut::map_mut(file) }
}

/// Bytes available to an unprivileged writer on the file system holding
/// `file`; `u64::MAX` when that cannot be asked.
pub fn free_disk_bytes(file: &File) -> u64 {
    use std::os::fd::AsRawFd;
    let mut s = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: fstatvfs fills `s` when it returns 0, and only then is it read.
    unsafe {
        if libc::fstatvfs(file.as_raw_fd(), s.as_mut_ptr()) != 0 {
            return u64::MAX;
        }
        let s = s.assume_init();
        // The fields' widths differ between platforms.
        #[allow(clippy::unnecessary_cast)]
        (s.f_bavail as u64).saturating_mul(s.f_frsize as u64)
    }
}

/// Tells the kernel we are done with `len` bytes of a file map from
/// `start` (whole pages), so they leave our resident set; touching them
/// again reads them back from the file.
pub fn release_pages(map: &Mmap, start: usize, len: usize) {
    // SAFETY: the mapping is read-only and file-backed; dropping its pages
    // only makes later reads fault them in again.
    let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, len) };
}

/// Maps `len` bytes of a file map from `start` (whole pages) in one call,
/// before they are read: cheaper than a fault every few pages. Advice
/// only: where the kernel lacks it, reads fault the pages in as before.
pub fn populate_pages(map: &Mmap, start: usize, len: usize) {
    let _ = map.advise_range(memmap2::Advice::PopulateRead, start, len);
}

/// The machine's physical memory, where the system says.
pub fn physical_memory() -> Option<u64> {
    // SAFETY: sysconf only reads system configuration.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    (pages > 0 && page > 0).then(|| pages as u64 * page as u64)
}
