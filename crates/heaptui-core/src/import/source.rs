//! Read-only access to the dump file's bytes.
//!
//! Small files are copied into memory, large ones are memory-mapped. A mapped
//! file that another process truncates would raise SIGBUS on the next page we
//! touch; a handler turns that into a clear message and exit code 2 instead of
//! a crash, giving the terminal back first when the UI holds it (its saved
//! mode, see [`crate::mem::save_terminal_mode`]; the mechanics are in `mem::guard`). The file is only ever opened for
//! reading.
//!
//! Pipes and devices (`cat dump | heaptui report /dev/stdin`) have no length
//! and may never end (`/dev/zero`): their first 64 KiB are checked for
//! binary data before reading on, and what is read is capped.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use memmap2::Mmap;

use super::InputError;
use crate::mem::{guard, map};

/// Why a directory is refused where a dump was expected.
pub const IS_A_DIRECTORY: &str = "is a directory, not a heap dump file";

/// Files up to this size are read into memory: immune to truncation, and the
/// copy costs less than the mapping's page faults.
pub const COPY_LIMIT: u64 = 64 << 20;

/// The bytes of a dump file.
pub enum Source {
    /// Read into memory (small files, pipes, decompressed input).
    Owned(Vec<u8>),
    /// Mapped read-only (large regular files).
    Mapped(Mmap),
}

impl Source {
    /// Reads or maps the file at `path`, whichever is cheaper for its size.
    pub fn open(path: &Path) -> Result<Source, InputError> {
        let err = |reason: String| InputError::new(path, reason);
        let meta = std::fs::metadata(path).map_err(|e| err(io_reason(&e)))?;
        if meta.is_dir() {
            return Err(err(IS_A_DIRECTORY.into()));
        }
        let mut file = File::open(path).map_err(|e| err(io_reason(&e)))?;
        if !meta.is_file() {
            return read_stream(&mut file, stream_limit())
                .map(Source::Owned)
                .map_err(err);
        }
        let len = meta.len();
        if len == 0 {
            return Err(err("the file is empty".into()));
        }
        if len <= COPY_LIMIT {
            let mut bytes = Vec::with_capacity(len as usize);
            file.read_to_end(&mut bytes)
                .map_err(|e| err(io_reason(&e)))?;
            if bytes.is_empty() {
                return Err(err("the file is empty".into()));
            }
            return Ok(Source::Owned(bytes));
        }
        // If the file is truncated while mapped, the SIGBUS handler ends
        // the process with a clear message rather than letting it crash.
        guard::install_sigbus_handler();
        guard::remember_mapped_path(path);
        let map = map::map_file(&file).map_err(|e| err(io_reason(&e)))?;
        // Read front to back once: ask for aggressive read-ahead.
        let _ = map.advise(memmap2::Advice::Sequential);
        Ok(Source::Mapped(map))
    }

    /// The whole file.
    pub fn bytes(&self) -> &[u8] {
        match self {
            Source::Owned(v) => v,
            Source::Mapped(m) => m,
        }
    }

    /// Maps a range of the file in one call before it is read (advice: a
    /// kernel without it faults the pages in as they are touched).
    pub fn populate(&self, start: usize, len: usize) {
        if let Source::Mapped(m) = self {
            let page = 4096;
            let begin = start / page * page;
            let end = (start + len).div_ceil(page) * page;
            map::populate_pages(m, begin, end.min(m.len()) - begin);
        }
    }

    /// Tells the kernel we are done with a range of the file, so its pages
    /// leave our resident set (they are re-read from the file if touched).
    pub fn release(&self, start: usize, len: usize) {
        if let Source::Mapped(m) = self {
            // Only whole pages inside the range may be dropped.
            let page = 4096;
            let begin = start.div_ceil(page) * page;
            let end = (start + len) / page * page;
            if end > begin {
                map::release_pages(m, begin, end - begin);
            }
        }
    }
}

/// What a pipe or device must show in its first bytes before it is read
/// on: enough to tell text from binary.
const SNIFF: usize = 64 << 10;

/// The most read into memory from a pipe or device (they have no length to
/// check first, and may never end, as `/dev/zero` does): a quarter of the
/// machine's memory, at least 1 GiB.
fn stream_limit() -> u64 {
    let memory = map::physical_memory().unwrap_or(16 << 30);
    (memory / 4).max(1 << 30)
}

/// Reads a pipe or device: its first [`SNIFF`] bytes must not be binary
/// (unless they announce a native format, which is binary by design), and
/// no more than `limit` bytes are read. Errors are the reason, one line.
pub fn read_stream(reader: &mut impl Read, limit: u64) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    reader
        .by_ref()
        .take(SNIFF as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| io_reason(&e))?;
    if bytes.is_empty() {
        return Err("the file is empty".into());
    }
    let native =
        super::detect(&bytes) != crate::model::Format::Rpm || bytes.starts_with(b"\x1f\x8b");
    if !native && looks_binary(&bytes) {
        return Err(
            "binary data from a pipe or device, not a heap dump; nothing more was read".into(),
        );
    }
    reader
        .take(limit.saturating_sub(bytes.len() as u64).saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io_reason(&e))?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "a pipe or device longer than {} (the most read into memory from one: a quarter of this machine's memory); save the dump to a file and open that",
            humansize::format_size(limit, humansize::BINARY)
        ));
    }
    Ok(bytes)
}

/// NUL bytes or a high share of control bytes: not text.
fn looks_binary(head: &[u8]) -> bool {
    let control = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0b | 0x0c))
        .count();
    head.contains(&0) || control * 20 > head.len()
}

pub(super) fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => {
            if e.raw_os_error() == Some(libc::EISDIR) {
                IS_A_DIRECTORY.into()
            } else {
                e.to_string()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_of_text_is_read_whole() {
        let text = b"o 1 1 8\no 2 1 8 1\n".repeat(10_000);
        assert_eq!(read_stream(&mut &text[..], 1 << 20), Ok(text));
    }

    #[test]
    fn an_endless_stream_stops_at_the_limit() {
        let err = read_stream(&mut std::io::repeat(b'o'), 1 << 20).unwrap_err();
        assert!(err.contains("longer than 1 MiB"), "{err}");
        // Exactly the limit is fine.
        let text = vec![b'o'; 1 << 20];
        assert!(read_stream(&mut &text[..], 1 << 20).is_ok());
    }

    #[test]
    fn a_binary_stream_is_refused_after_its_first_bytes() {
        let mut zeros = std::io::repeat(0).take(1 << 30);
        let err = read_stream(&mut zeros, 1 << 40).unwrap_err();
        assert!(err.starts_with("binary data"), "{err}");
        // Only the sniffed bytes were read.
        assert_eq!(zeros.limit(), (1 << 30) - SNIFF as u64);
    }

    #[test]
    fn native_formats_are_binary_by_design() {
        let mut hprof = b"JAVA PROFILE 1.0.2\0".to_vec();
        hprof.extend([0u8; 100]);
        assert_eq!(read_stream(&mut &hprof[..], 1 << 20), Ok(hprof));
    }

    #[test]
    fn an_empty_stream_is_empty() {
        assert_eq!(
            read_stream(&mut &b""[..], 1 << 20),
            Err("the file is empty".to_string())
        );
    }
}
