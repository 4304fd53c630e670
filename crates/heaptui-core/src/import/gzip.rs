//! Gzip-compressed dumps of any format (docs/formats.md: first bytes `1f 8b`),
//! decompressed on the fly: into memory when small, else streamed into an
//! anonymous temporary file (created in the system's temporary directory
//! and unlinked at once, so nothing is ever written next to the dump and
//! nothing is left behind) that is then memory-mapped like a dump file.
//!
//! Decompression bombs: the output is bounded by [`max_inflated`] (at most
//! [`MAX_RATIO`] times the compressed size, or [`FLOOR`]; real dumps expand
//! 3 to 20 times, bombs hundreds to a thousand), streamed, never held whole
//! in memory past [`MEMORY_LIMIT`], and decompression stops with a clear
//! error before it would fill the temporary directory's file system. The
//! first [`CHECK_BYTES`] decompressed are checked as a dump's head before
//! more is written: a gzip of something else stops there.
//!
//! Bytes after the last member that are not a member are ignored with a
//! warning, as `gzip -d` does (zeros, padding some tools add, silently).

use std::fs::File;
use std::io::{self, BufRead, Read, Write};
use std::path::Path;

use flate2::bufread::GzDecoder;

use super::source::Source;
use super::CHECK_BYTES;
use super::{ImportError, InputError};
use crate::progress::{Progress, Stage};

/// Output up to this size stays in memory.
pub const MEMORY_LIMIT: usize = 256 << 20;

/// Space left free on the temporary file system.
const DISK_MARGIN: u64 = 1 << 30;

/// The most a gzip file may expand, as a multiple of its size.
pub const MAX_RATIO: u64 = 64;

/// Any gzip file may expand to this, whatever its size.
pub const FLOOR: u64 = 64 << 20;

/// The most `compressed` bytes of gzip may decompress to.
pub fn max_inflated(compressed: u64) -> u64 {
    compressed.saturating_mul(MAX_RATIO).max(FLOOR)
}

/// Whether the bytes start like a gzip stream.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// The decompressed bytes, and whether the stream ended early (a truncated
/// file: what came before is kept, and the caller says so).
pub struct Inflated {
    /// The decompressed bytes.
    pub source: Source,
    /// Whether the stream ended before its end marker.
    pub truncated: bool,
    /// Bytes after the last member that are not one (not zeros): ignored.
    pub trailing: u64,
}

/// Counts the compressed bytes consumed, for progress and cancellation.
struct Counting<'a> {
    bytes: &'a [u8],
    pos: usize,
    progress: &'a Progress,
}

impl Read for Counting<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = io::Read::read(&mut self.fill_buf()?, buf)?;
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Counting<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.progress.is_cancelled() {
            // Not `Interrupted`: readers retry that kind (flate2's header
            // parser does, forever), so a cancel would never be seen.
            return Err(io::Error::other("cancelled"));
        }
        // In steps, so that cancelling is seen.
        let end = self.bytes.len().min(self.pos + (1 << 16));
        Ok(&self.bytes[self.pos..end])
    }
    fn consume(&mut self, n: usize) {
        self.pos += n;
        self.progress.set_done(self.pos as u64);
    }
}

/// Where the output goes: memory first, a temporary file once it is big.
enum Sink {
    Memory(Vec<u8>),
    File { file: File, written: u64, free: u64 },
}

impl Sink {
    fn len(&self) -> u64 {
        match self {
            Sink::Memory(v) => v.len() as u64,
            Sink::File { written, .. } => *written,
        }
    }

    fn write(&mut self, path: &Path, data: &[u8], max: u64, check: bool) -> Result<(), InputError> {
        if self.len() + data.len() as u64 > max {
            return Err(InputError::new(
                path,
                format!(
                    "gzip data decompressing to more than {max} bytes ({MAX_RATIO} times its size, or {} MiB): a decompression bomb, or a dump heaptui does not read gzipped; decompress it first",
                    FLOOR >> 20
                ),
            ));
        }
        if let Sink::Memory(v) = self {
            if check && v.len() < CHECK_BYTES && v.len() + data.len() >= CHECK_BYTES {
                // The head of the dump, checked before more is written.
                let mut head = std::mem::take(v);
                head.extend_from_slice(data);
                if is_gzip(&head) {
                    return Err(InputError::new(
                        path,
                        "gzip inside gzip; decompress it once first",
                    ));
                }
                super::check_head(path, &head[..CHECK_BYTES])?;
                *v = head;
                return Ok(());
            }

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

/// Decompresses a whole gzip file (several members are read one after the
/// other), to at most [`max_inflated`] bytes.
pub fn inflate(
    path: &Path,
    compressed: &[u8],
    progress: &Progress,
) -> Result<Inflated, ImportError> {
    let max = max_inflated(compressed.len() as u64);
    inflate_within(path, compressed, progress, (max, true))
}

/// [`inflate`] to at most `max` bytes, the head checked as a dump's where
/// `check`.
fn inflate_within(
    path: &Path,
    compressed: &[u8],
    progress: &Progress,
    (max, check): (u64, bool),
) -> Result<Inflated, ImportError> {
    progress.start(Stage::Parse, compressed.len() as u64);
    let mut sink = Sink::Memory(Vec::new());
    // Small enough that the head is checked before much is read.
    let mut buf = vec![0u8; 256 << 10];
    let (mut truncated, mut trailing, mut pos) = (false, 0, 0);
    // One member at a time: a decoder reads no byte past its member.
    while pos < compressed.len() && !truncated {
        let rest = &compressed[pos..];
        if pos > 0 && !is_gzip(rest) {
            if rest.iter().any(|&b| b != 0) {
                trailing = rest.len() as u64;
            }
            break;
        }
        let mut decoder = GzDecoder::new(Counting {
            bytes: compressed,
            pos,
            progress,
        });
        let before = sink.len();
        loop {
            match decoder.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => sink.write(path, &buf[..n], max, check)?,
                Err(_) if progress.is_cancelled() => return Err(ImportError::Cancelled),
                // What follows a member and only looks like one is
                // trailing bytes.
                Err(_) if pos > 0 && sink.len() == before => {
                    trailing = rest.len() as u64;
                    return finish(path, sink, truncated, trailing);
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
        let end = decoder.into_inner().pos;
        if end == pos {
            break; // cannot happen: a member has a header
        }
        pos = end;
    }
    finish(path, sink, truncated, trailing)
}

fn finish(
    path: &Path,
    sink: Sink,
    truncated: bool,
    trailing: u64,
) -> Result<Inflated, ImportError> {
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
    Ok(Inflated {
        source,
        truncated,
        trailing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::GzEncoder;

    /// Inflated without the bound or the check of the head (the data is
    /// no dump).
    fn inflate(path: &Path, z: &[u8], progress: &Progress) -> Result<Inflated, ImportError> {
        inflate_within(path, z, progress, (u64::MAX, false))
    }

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// A cancel seen while the header is read ends the inflation: flate2's
    /// header parser retries an `Interrupted` read, which once made a
    /// cancelled analysis of a gzipped dump spin forever.
    #[test]
    fn a_cancel_ends_it_even_in_the_header() {
        let z = gz(&vec![b'x'; 1 << 20]);
        for cancel_at_start in [true, false] {
            let (tx, rx) = std::sync::mpsc::channel();
            let z = z.clone();
            std::thread::spawn(move || {
                let progress = Progress::new();
                if cancel_at_start {
                    progress.cancel();
                }
                let out = inflate(Path::new("x.gz"), &z, &progress);
                let _ = tx.send(out.map(|i| i.source.bytes().len()));
            });
            let out = rx
                .recv_timeout(std::time::Duration::from_secs(20))
                .expect("inflate returns");
            match (cancel_at_start, out) {
                (true, Err(ImportError::Cancelled)) => {}
                (false, Ok(n)) => assert_eq!(n, 1 << 20),
                (c, other) => panic!("cancelled {c}: {:?}", other.map(|_| ())),
            }
        }
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

    /// A bomb: 80 MiB of text dump roots (each a root record of one
    /// object) from a few hundred KB, past 64 MiB and 64 times its size.
    /// Refused once the bound is reached, not after writing it all.
    #[test]
    fn a_bomb_is_refused_at_the_bound() {
        let mut dump = b"t 1 Foo\no 10 1 20\n".to_vec();
        while dump.len() < 80 << 20 {
            dump.extend_from_slice(b"r 10 1 0\n");
        }
        let z = gz(&dump);
        assert!((z.len() as u64) * MAX_RATIO < FLOOR, "{}", z.len());
        let Err(ImportError::Input(e)) = super::inflate(Path::new("x.gz"), &z, &Progress::new())
        else {
            panic!("inflated");
        };
        assert!(e.to_string().contains("decompression bomb"), "{e}");
        // The bound follows the size past the floor: 64 MiB of zeros are
        // refused where only 1 MiB may come out.
        let z = gz(&vec![b'o'; 64 << 20]);
        let e = inflate_within(Path::new("x.gz"), &z, &Progress::new(), (1 << 20, false)).err();
        assert!(matches!(e, Some(ImportError::Input(_))));
        // Real dumps expand 3 to 20 times: 20 times passes.
        assert!(max_inflated(100 << 20) >= 20 * (100 << 20));
    }

    /// A gzip of something else than a dump stops after its first bytes
    /// (a gzip of zeros used to be written whole to the temporary
    /// directory before "binary data").
    #[test]
    fn a_gzip_of_binary_data_stops_at_its_head() {
        let mut x = 1u64;
        let data: Vec<u8> = (0..8 << 20)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                (x >> 56) as u8
            })
            .collect();
        let z = gz(&data);
        let progress = Progress::new();
        let Err(ImportError::Input(e)) = super::inflate(Path::new("x.gz"), &z, &progress) else {
            panic!("inflated");
        };
        assert!(e.to_string().contains("binary data"), "{e}");
        let read = progress.fraction();
        assert!(read < 0.25, "{read} of the file read");
    }

    /// Bytes after the last member: ignored with a warning, as `gzip -d`
    /// does (zeros silently), where they used to reject the file.
    #[test]
    fn trailing_bytes_after_a_member_are_ignored_and_said() {
        let mut z = gz(b"hello ");
        z.extend(gz(b"world"));
        let mut garbage = z.clone();
        garbage.extend(b"not gzip at all");
        let out = inflate(Path::new("x.gz"), &garbage, &Progress::new()).unwrap();
        assert_eq!(out.source.bytes(), b"hello world");
        assert_eq!(out.trailing, 15);
        let mut looks_like_one = z.clone();
        looks_like_one.extend([0x1f, 0x8b, 0x08, 0xff, 1, 2, 3]);
        let out = inflate(Path::new("x.gz"), &looks_like_one, &Progress::new()).unwrap();
        assert_eq!((out.source.bytes(), out.trailing), (&b"hello world"[..], 7));
        let mut zeros = z.clone();
        zeros.extend([0u8; 512]);
        let out = inflate(Path::new("x.gz"), &zeros, &Progress::new()).unwrap();
        assert_eq!((out.source.bytes(), out.trailing), (&b"hello world"[..], 0));
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
