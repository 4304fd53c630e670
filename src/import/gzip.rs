//! Gzip-compressed dumps of any format (SPEC §1.1: first bytes `1f 8b`),
//! decompressed on the fly: into memory when small, else streamed into an
//! anonymous temporary file (created in the system's temporary directory
//! and unlinked at once, so nothing is ever written next to the dump and
//! nothing is left behind) that is then memory-mapped like a dump file.
//!
//! Decompression bombs: the output is streamed, never held whole in memory
//! past [`MEMORY_LIMIT`], and decompression stops with a clear error before
//! it would fill the temporary directory's file system.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;

use flate2::read::MultiGzDecoder;

use super::source::Source;
use super::{ImportError, InputError};
use crate::progress::{Progress, Stage};

/// Output up to this size stays in memory.
pub const MEMORY_LIMIT: usize = 256 << 20;

/// Space left free on the temporary file system.
const DISK_MARGIN: u64 = 1 << 30;

/// Whether the bytes start like a gzip stream.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// The decompressed bytes, and whether the stream ended early (a truncated
/// file: what came before is kept, and the caller says so).
pub struct Inflated {
    pub source: Source,
    pub truncated: bool,
}

/// Counts the compressed bytes consumed, for progress and cancellation.
struct Counting<'a> {
    bytes: &'a [u8],
    pos: usize,
    progress: &'a Progress,
}

impl Read for Counting<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.progress.is_cancelled() {
            return Err(io::Error::new(io::ErrorKind::Interrupted, "cancelled"));
        }
        let n = buf.len().min(self.bytes.len() - self.pos);
        buf[..n].copy_from_slice(&self.bytes[self.pos..self.pos + n]);
        self.pos += n;
        self.progress.set_done(self.pos as u64);
        Ok(n)
    }
}

/// Where the output goes: memory first, a temporary file once it is big.
enum Sink {
    Memory(Vec<u8>),
    File { file: File, written: u64, free: u64 },
}

impl Sink {
    fn write(&mut self, path: &Path, data: &[u8]) -> Result<(), InputError> {
        if let Sink::Memory(v) = self {
            if v.len() + data.len() <= MEMORY_LIMIT {
                v.extend_from_slice(data);
                return Ok(());
            }
            let held = std::mem::take(v);
            *self = to_file(path, &held)?;
        }
        let Sink::File {
            file,
            written,
            free,
        } = self
        else {
            unreachable!("memory sinks returned above")
        };
        *written += data.len() as u64;
        if *written > *free {
            return Err(InputError::new(
                path,
                format!(
                    "gzip data decompresses to more than {} bytes, more than the temporary directory {} has free; decompress it to a disk with room first",
                    *written - data.len() as u64,
                    std::env::temp_dir().display()
                ),
            ));
        }
        file.write_all(data).map_err(|e| temp_error(path, &e))
    }
}

fn temp_error(path: &Path, e: &io::Error) -> InputError {
    InputError::new(
        path,
        format!(
            "cannot write the decompressed dump to the temporary directory {}: {e}",
            std::env::temp_dir().display()
        ),
    )
}

fn to_file(path: &Path, held: &[u8]) -> Result<Sink, InputError> {
    let mut file = tempfile::tempfile().map_err(|e| temp_error(path, &e))?;
    let free = crate::mem::map::free_disk_bytes(&file).saturating_sub(DISK_MARGIN);
    file.write_all(held).map_err(|e| temp_error(path, &e))?;
    Ok(Sink::File {
        file,
        written: held.len() as u64,
        free,
    })
}

/// Decompresses a whole gzip file (several members are read one after the other).
pub fn inflate(
    path: &Path,
    compressed: &[u8],
    progress: &Progress,
) -> Result<Inflated, ImportError> {
    progress.start(Stage::Parse, compressed.len() as u64);
    let mut decoder = MultiGzDecoder::new(Counting {
        bytes: compressed,
        pos: 0,
        progress,
    });
    let mut sink = Sink::Memory(Vec::new());
    let mut buf = vec![0u8; 1 << 20];
    let mut truncated = false;
    loop {
        match decoder.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => sink.write(path, &buf[..n])?,
            Err(e) if e.kind() == io::ErrorKind::Interrupted && progress.is_cancelled() => {
                return Err(ImportError::Cancelled)
            }
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                truncated = true;
                break;
            }
            Err(e) => {
                return Err(InputError::new(path, format!("corrupt gzip data: {e}")).into());
            }
        }
    }
    let source = match sink {
        Sink::Memory(v) => Source::Owned(v),
        Sink::File { file, .. } => {
            // Our own unlinked file: no other process can truncate it.
            let map = crate::mem::map::map_file(&file).map_err(|e| temp_error(path, &e))?;
            Source::Mapped(map)
        }
    };
    if source.bytes().is_empty() {
        let why = if truncated {
            "the gzip data ends before any of the dump"
        } else {
            "the gzip data holds an empty file"
        };
        return Err(InputError::new(path, why).into());
    }
    Ok(Inflated { source, truncated })
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::GzEncoder;

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn round_trip_in_memory_and_members_concatenated() {
        let mut two = gz(b"hello ");
        two.extend(gz(b"world"));
        let out = inflate(Path::new("x.gz"), &two, &Progress::new()).unwrap();
        assert_eq!(out.source.bytes(), b"hello world");
        assert!(!out.truncated);
    }

    #[test]
    fn truncated_stream_keeps_the_head_and_corrupt_data_is_an_error() {
        let data: Vec<u8> = (0..200_000u32).flat_map(|i| i.to_le_bytes()).collect();
        let z = gz(&data);
        let out = inflate(Path::new("x.gz"), &z[..z.len() / 2], &Progress::new()).unwrap();
        assert!(out.truncated);
        assert!(data.starts_with(out.source.bytes()));
        let mut bad = z.clone();
        bad[3] = 0xff; // reserved flag bits
        assert!(inflate(Path::new("x.gz"), &bad, &Progress::new()).is_err());
        assert!(inflate(Path::new("x.gz"), &gz(b""), &Progress::new()).is_err());
    }

    #[test]
    fn large_output_goes_to_an_anonymous_file() {
        let data = vec![7u8; MEMORY_LIMIT + 4096];
        let out = inflate(Path::new("x.gz"), &gz(&data), &Progress::new()).unwrap();
        assert!(matches!(out.source, Source::Mapped(_)));
        assert_eq!(out.source.bytes().len(), data.len());
        assert!(out.source.bytes().iter().all(|&b| b == 7));
    }
}
