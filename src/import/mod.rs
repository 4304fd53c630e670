//! Importers: bytes of a dump file → [`Model`]. One submodule per format
//! (`rpm` for the text format today), format detection by content (SPEC
//! §1.1, never by file name), and the read-only file access they share.
//!
//! May import `model`, `progress` and `mem`; never `graph` or anything above.

pub mod gcdump;
pub mod hprof;
pub mod rpm;
pub mod source;
pub mod v8;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::model::{Format, Model};
use crate::progress::{Cancelled, Progress};
use source::Source;

/// Input that cannot be used at all: one line naming the file and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    pub path: PathBuf,
    pub reason: String,
}

impl InputError {
    pub fn new(path: &Path, reason: impl Into<String>) -> Self {
        InputError {
            path: path.to_path_buf(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason)
    }
}

impl std::error::Error for InputError {}

/// Why importing stopped without a model.
#[derive(Debug)]
pub enum ImportError {
    Input(InputError),
    Cancelled,
}

impl From<Cancelled> for ImportError {
    fn from(_: Cancelled) -> Self {
        ImportError::Cancelled
    }
}

impl From<InputError> for ImportError {
    fn from(e: InputError) -> Self {
        ImportError::Input(e)
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportError::Input(e) => e.fmt(f),
            ImportError::Cancelled => f.write_str("cancelled"),
        }
    }
}

impl std::error::Error for ImportError {}

/// The format a file's first bytes announce (SPEC §1.1); anything that no
/// native format claims is read as RPM text.
pub fn detect(head: &[u8]) -> Format {
    let trimmed = {
        let start = head
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(head.len());
        &head[start..]
    };
    // PerfView writes the signature as a string: its length (20, a
    // little-endian i32) comes first.
    if head.starts_with(b"!FastSerialization.1")
        || head.starts_with(b"\x14\0\0\0!FastSerialization.1")
    {
        Format::Gcdump
    } else if head.starts_with(b"JAVA PROFILE 1.0.") {
        Format::Hprof
    } else if trimmed.starts_with(b"{")
        && trimmed[1..].trim_ascii_start().starts_with(b"\"snapshot\"")
    {
        Format::Heapsnapshot
    } else {
        Format::Rpm
    }
}

/// Opens a dump file read-only and imports it with the importer of its
/// format.
pub fn import_file(path: &Path, progress: &Progress) -> Result<Model, ImportError> {
    let source = Source::open(path)?;
    import_source(path, &source, progress)
}

/// Imports dump bytes held in memory (tests, the built-in demo heap).
pub fn import_bytes(path: &Path, bytes: &[u8]) -> Result<Model, InputError> {
    match import_source(path, &Source::Owned(bytes.to_vec()), &Progress::new()) {
        Ok(m) => Ok(m),
        Err(ImportError::Input(e)) => Err(e),
        Err(ImportError::Cancelled) => unreachable!("nobody can cancel this progress"),
    }
}

fn import_source(path: &Path, source: &Source, progress: &Progress) -> Result<Model, ImportError> {
    let bytes = source.bytes();
    let head = &bytes[..bytes.len().min(64)];
    match detect(head) {
        Format::Rpm => rpm::import(path, source, progress),
        Format::Hprof => hprof::import(path, source, progress),
        Format::Heapsnapshot => v8::import(path, source, progress),
        Format::Gcdump => gcdump::import(path, source, progress),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_told_by_their_first_bytes() {
        assert_eq!(detect(b"!FastSerialization.1\0"), Format::Gcdump);
        assert_eq!(
            detect(b"\x14\0\0\0!FastSerialization.1\x04"),
            Format::Gcdump
        );
        assert_eq!(detect(b"JAVA PROFILE 1.0.2\0"), Format::Hprof);
        assert_eq!(detect(b"{\"snapshot\":{\"meta\""), Format::Heapsnapshot);
        assert_eq!(detect(b"  \n{ \"snapshot\" :"), Format::Heapsnapshot);
        assert_eq!(detect(b"{\"other\":1}"), Format::Rpm);
        assert_eq!(detect(b"a 1 app.exe\n"), Format::Rpm);
        assert_eq!(detect(b""), Format::Rpm);
    }
}
