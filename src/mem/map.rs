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
