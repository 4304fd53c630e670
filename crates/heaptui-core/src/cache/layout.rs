//! The cache file's layout: a header, the sections, then a table of the
//! sections and a trailer. Each section is an array of little-endian
//! numbers (or bytes) starting on an 8-byte boundary. It is written as it
//! is produced; reopening maps the file and, once a section's checksum
//! holds, uses it where it lies ([`crate::mem::Array`]): the big arrays are
//! neither copied nor zeroed. (Bytes in memory, as the fuzz target gives,
//! and big-endian machines are read into vectors instead.) A file over the
//! memory budget has each section's pages dropped from the resident set
//! once its checksum holds ([`Reader::release_checked`]): they stay in the
//! page cache, and what the checks and views read later comes back a page
//! at a time.
//!
//! ```text
//! header   magic "HEAPTUIC" | version u32 | key length u32 | key bytes | pad to 8
//! sections bytes of each array, each padded to 8
//! table    per section: tag u32 | width u32 | offset u64 | length u64 | crc32 u32 | pad u32
//! trailer  table offset u64 | section count u32 | magic "HTC\0"
//! ```
//!
//! Nothing read back is trusted: the reader checks the magic, the version,
//! the key, every section's bounds and checksum; the codec then
//! bounds-checks every index it decodes.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;

use memmap2::Mmap;
use rayon::prelude::*;
use std::sync::Arc;

use crate::mem::Array;

pub const MAGIC: &[u8; 8] = b"HEAPTUIC";
const TRAILER_MAGIC: &[u8; 4] = b"HTC\0";
/// Bumped whenever the layout or the meaning of a section changes.
pub const VERSION: u32 = 11;

const ALIGN: u64 = 8;
const ENTRY: usize = 32;
const TRAILER: usize = 16;
/// Checksums and reads run in pieces of this many bytes, in parallel.
const PIECE: usize = 8 << 20;

/// Why a cache file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corrupt(pub String);

impl std::fmt::Display for Corrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

pub fn corrupt<T>(why: impl Into<String>) -> Result<T, Corrupt> {
    Err(Corrupt(why.into()))
}

/// Numbers a section may hold.
pub trait Element: bytemuck::Pod + Send + Sync + Default {
    const WIDTH: u32;
    fn swap(self) -> Self;
}

impl Element for u8 {
    const WIDTH: u32 = 1;
    fn swap(self) -> Self {
        self
    }
}

impl Element for u16 {
    const WIDTH: u32 = 2;
    fn swap(self) -> Self {
        self.swap_bytes()
    }
}

impl Element for u32 {
    const WIDTH: u32 = 4;
    fn swap(self) -> Self {
        self.swap_bytes()
    }
}

/// Dense indices are written as the u32 they wrap (the same bytes).
impl Element for crate::model::ObjectIdx {
    const WIDTH: u32 = 4;
    fn swap(self) -> Self {
        Self(self.0.swap_bytes())
    }
}

impl Element for crate::model::TypeIdx {
    const WIDTH: u32 = 4;
    fn swap(self) -> Self {
        Self(self.0.swap_bytes())
    }
}

impl Element for u64 {
    const WIDTH: u32 = 8;
    fn swap(self) -> Self {
        self.swap_bytes()
    }
}

struct Entry {
    tag: u32,
    width: u32,
    offset: u64,
    len: u64,
    crc: u32,
}

/// Free disk bytes to keep beyond a section about to be written: a cache
/// file never fills the disk (a heap of 300 million objects takes about
/// 20 GB); the write stops with a message instead.
pub const DISK_RESERVE: u64 = 256 << 20;

/// Writes a cache file section by section as the arrays are handed over.
pub struct Writer<W: Write> {
    out: BufWriter<W>,
    pos: u64,
    table: Vec<Entry>,
    /// The bytes free on the file's disk, asked before each section.
    free: Option<Box<dyn Fn() -> u64 + Send>>,
}

impl<W: Write> Writer<W> {
    pub fn new(out: W, key: &[u8]) -> io::Result<Writer<W>> {
        let mut w = Writer {
            out: BufWriter::with_capacity(1 << 20, out),
            pos: 0,
            table: Vec::new(),
            free: None,
        };
        w.put(MAGIC)?;
        w.put(&VERSION.to_le_bytes())?;
        w.put(&(key.len() as u32).to_le_bytes())?;
        w.put(key)?;
        w.pad()?;
        Ok(w)
    }

    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)?;
        self.pos += bytes.len() as u64;
        Ok(())
    }

    fn pad(&mut self) -> io::Result<()> {
        let n = (self.pos.div_ceil(ALIGN) * ALIGN - self.pos) as usize;
        self.put(&[0u8; 8][..n])
    }

    /// Before each section, `free` is asked the bytes free on the disk the
    /// file goes to; a section that would leave less than [`DISK_RESERVE`]
    /// is not written, and the write fails saying so.
    pub fn check_free_disk(&mut self, free: impl Fn() -> u64 + Send + 'static) {
        self.free = Some(Box::new(free));
    }

    /// Appends one array as section `tag`.
    pub fn array<T: Element>(&mut self, tag: u32, values: &[T]) -> io::Result<()> {
        if self.table.iter().any(|e| e.tag == tag) {
            return Err(io::Error::other(format!(
                "cache section {tag} written twice"
            )));
        }
        if let Some(free) = &self.free {
            let need = std::mem::size_of_val(values) as u64 + DISK_RESERVE;
            let free = free();
            if free < need {
                let size = |b: u64| humansize::format_size(b, humansize::BINARY);
                return Err(io::Error::other(format!(
                    "its disk has {} free, less than the next {} of the file and {} to spare",
                    size(free),
                    size(need - DISK_RESERVE),
                    size(DISK_RESERVE)
                )));
            }
        }
        let offset = self.pos;
        let crc = if cfg!(target_endian = "little") {
            let bytes: &[u8] = bytemuck::cast_slice(values);
            self.put(bytes)?;
            checksum(bytes)
        } else {
            let mut crc = crc32fast::Hasher::new();
            for block in values.chunks(1 << 14) {
                let swapped: Vec<T> = block.iter().map(|v| v.swap()).collect();
                let bytes: &[u8] = bytemuck::cast_slice(&swapped);
                crc.update(bytes);
                self.put(bytes)?;
            }
            crc.finalize()
        };
        self.table.push(Entry {
            tag,
            width: T::WIDTH,
            offset,
            len: values.len() as u64,
            crc,
        });
        // A spilled array's pages, read for this section, leave the
        // resident set again (`mem::spill`).
        crate::mem::spill::release_all();
        self.pad()
    }

    /// Writes the table and the trailer; the file is complete.
    pub fn finish(mut self) -> io::Result<W> {
        let table_offset = self.pos;
        let count = self.table.len() as u32;
        for e in std::mem::take(&mut self.table) {
            self.put(&e.tag.to_le_bytes())?;
            self.put(&e.width.to_le_bytes())?;
            self.put(&e.offset.to_le_bytes())?;
            self.put(&e.len.to_le_bytes())?;
            self.put(&e.crc.to_le_bytes())?;
            self.put(&0u32.to_le_bytes())?;
        }
        self.put(&table_offset.to_le_bytes())?;
        self.put(&count.to_le_bytes())?;
        self.put(TRAILER_MAGIC)?;
        self.out.into_inner().map_err(|e| e.into_error())
    }
}

/// CRC-32 of a section, computed in parallel pieces and combined.
fn checksum(bytes: &[u8]) -> u32 {
    let parts: Vec<(u32, u64)> = bytes
        .par_chunks(PIECE)
        .map(|p| (crc32fast::hash(p), p.len() as u64))
        .collect();
    let mut crc = crc32fast::Hasher::new();
    for (c, len) in parts {
        crc.combine(&crc32fast::Hasher::new_with_initial_len(c, len));
    }
    crc.finalize()
}

/// Reads positioned bytes of a cache file (a file, a map of one, or bytes
/// in tests).
pub trait Input: Sync {
    fn len(&self) -> u64;
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// The whole file as a map, where sections can be used in place.
    fn map(&self) -> Option<&Arc<Mmap>> {
        None
    }
}

/// A mapped cache file: sections are checked and then used where they lie.
pub struct Mapped(pub Arc<Mmap>);

impl Input for Mapped {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.0[..].read_at(buf, offset)
    }
    fn map(&self) -> Option<&Arc<Mmap>> {
        Some(&self.0)
    }
}

impl Input for File {
    fn len(&self) -> u64 {
        self.metadata().map(|m| m.len()).unwrap_or(0)
    }
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.read_exact_at(buf, offset)
    }
}

impl Input for [u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let start = usize::try_from(offset).map_err(|_| io::ErrorKind::UnexpectedEof)?;
        let src = start
            .checked_add(buf.len())
            .and_then(|end| self.get(start..end))
            .ok_or(io::ErrorKind::UnexpectedEof)?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

impl Input for Vec<u8> {
    fn len(&self) -> u64 {
        self.as_slice().len() as u64
    }
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.as_slice().read_at(buf, offset)
    }
}

/// A cache file whose header, key and table were checked; sections are
/// checked (bounds, width, checksum) as they are read.
pub struct Reader<'a, I: Input + ?Sized> {
    input: &'a I,
    table: Vec<Entry>,
    /// Whether a mapped section's pages leave the resident set once its
    /// checksum is checked (the file is over the memory budget).
    release: bool,
}

fn read_vec(input: &(impl Input + ?Sized), offset: u64, len: usize) -> Result<Vec<u8>, Corrupt> {
    let mut buf = vec![0u8; len];
    input
        .read_at(&mut buf, offset)
        .or_else(|e| corrupt(format!("cannot read: {e}")))?;
    Ok(buf)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

impl<'a, I: Input + ?Sized> Reader<'a, I> {
    /// Checks the header, that the file was written for `key`, and that
    /// every section lies inside the file.
    pub fn open(input: &'a I, key: &[u8]) -> Result<Reader<'a, I>, Corrupt> {
        let size = input.len();
        let header = 16 + key.len() as u64;
        if size < header + TRAILER as u64 {
            return corrupt("truncated");
        }
        let head = read_vec(input, 0, header as usize)?;
        if &head[..8] != MAGIC {
            return corrupt("not a heaptui cache file");
        }
        let version = u32_at(&head, 8);
        if version != VERSION {
            return corrupt(format!(
                "written by cache version {version}, this is {VERSION}"
            ));
        }
        if u32_at(&head, 12) as usize != key.len() || &head[16..] != key {
            return corrupt("written for another dump or another build");
        }
        let trailer = read_vec(input, size - TRAILER as u64, TRAILER)?;
        if &trailer[12..] != TRAILER_MAGIC {
            return corrupt("truncated (no trailer)");
        }
        let table_offset = u64_at(&trailer, 0);
        let count = u32_at(&trailer, 8) as u64;
        if table_offset.checked_add(count * ENTRY as u64) != Some(size - TRAILER as u64) {
            return corrupt("the section table does not end at the trailer");
        }
        let raw = read_vec(input, table_offset, count as usize * ENTRY)?;
        let mut table = Vec::with_capacity(count as usize);
        for e in raw.chunks_exact(ENTRY) {
            let entry = Entry {
                tag: u32_at(e, 0),
                width: u32_at(e, 4),
                offset: u64_at(e, 8),
                len: u64_at(e, 16),
                crc: u32_at(e, 24),
            };
            let end = entry
                .len
                .checked_mul(entry.width as u64)
                .and_then(|b| entry.offset.checked_add(b));
            if !matches!(entry.width, 1 | 2 | 4 | 8) || end.is_none_or(|e| e > table_offset) {
                return corrupt(format!("section {} lies outside the file", entry.tag));
            }
            table.push(entry);
        }
        Ok(Reader {
            input,
            table,
            release: false,
        })
    }

    /// Drops each mapped section's pages from the resident set once its
    /// checksum is checked: they stay in the page cache, and the checks
    /// and views that read the section later fault in only what they touch.
    pub fn release_checked(&mut self) {
        self.release = true;
    }

    pub fn has(&self, tag: u32) -> bool {
        self.table.iter().any(|e| e.tag == tag)
    }

    /// Section `tag` as an array, checked against its checksum: in place
    /// when the file is mapped (and little-endian like the file), else
    /// read into a vector.
    /// The width in bytes of section `tag`'s elements, where it exists
    /// (the sections that may be written in either of two widths).
    pub fn width(&self, tag: u32) -> Option<u32> {
        self.table.iter().find(|e| e.tag == tag).map(|e| e.width)
    }

    pub fn array<T: Element>(&self, tag: u32) -> Result<Array<T>, Corrupt> {
        let Some(e) = self.table.iter().find(|e| e.tag == tag) else {
            return corrupt(format!("section {tag} missing"));
        };
        if e.width != T::WIDTH {
            return corrupt(format!("section {tag}: width {} not {}", e.width, T::WIDTH));
        }
        let len = usize::try_from(e.len).or_else(|_| corrupt("section too long"))?;
        if let (Some(map), true) = (self.input.map(), cfg!(target_endian = "little")) {
            let offset = usize::try_from(e.offset).or_else(|_| corrupt("section too far"))?;
            let Some(a) = Array::<T>::mapped(map, offset, len) else {
                return corrupt(format!("section {tag} lies outside the file"));
            };
            let bytes: &[u8] = bytemuck::cast_slice(&a[..]);
            if checksum(bytes) != e.crc {
                return corrupt(format!("section {tag}: checksum mismatch"));
            }
            if self.release {
                crate::mem::map::release_pages(map, offset, bytes.len());
            }
            return Ok(a);
        }
        let mut out = vec![T::default(); len];
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut out);
        let crcs: Vec<io::Result<(u32, u64)>> = bytes
            .par_chunks_mut(PIECE)
            .enumerate()
            .map(|(i, piece)| {
                self.input.read_at(piece, e.offset + (i * PIECE) as u64)?;
                Ok((crc32fast::hash(piece), piece.len() as u64))
            })
            .collect();
        let mut crc = crc32fast::Hasher::new();
        for part in crcs {
            let (c, n) = part.or_else(|err| corrupt(format!("section {tag}: {err}")))?;
            crc.combine(&crc32fast::Hasher::new_with_initial_len(c, n));
        }
        if crc.finalize() != e.crc {
            return corrupt(format!("section {tag}: checksum mismatch"));
        }
        if cfg!(target_endian = "big") {
            out.par_iter_mut().for_each(|v| *v = v.swap());
        }
        Ok(out.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut w = Writer::new(Vec::new(), b"key").unwrap();
        w.array(1, &[1u32, 2, 3]).unwrap();
        w.array(2, &[u64::MAX, 0]).unwrap();
        w.array(3, b"hello").unwrap();
        w.finish().unwrap()
    }

    /// A section that would leave the disk with less than the reserve is
    /// not written: the write fails with the figures.
    #[test]
    fn a_section_the_disk_has_no_room_for_is_refused() {
        let mut w = Writer::new(Vec::new(), b"key").unwrap();
        w.check_free_disk(|| DISK_RESERVE + 12);
        w.array(1, &[1u32, 2, 3]).unwrap();
        let e = w.array(2, &[1u32, 2, 3, 4]).unwrap_err();
        assert!(
            e.to_string().starts_with("its disk has 256.00 MiB free"),
            "{e}"
        );
        assert!(e.to_string().contains("the next 16 B of the file"), "{e}");
    }

    #[test]
    fn sections_round_trip() {
        let file = sample();
        let r = Reader::open(&file[..], b"key").unwrap();
        assert_eq!(r.array::<u32>(1).unwrap(), [1, 2, 3]);
        assert_eq!(r.array::<u64>(2).unwrap(), [u64::MAX, 0]);
        assert_eq!(&r.array::<u8>(3).unwrap()[..], b"hello");
        assert!(r.array::<u64>(1).is_err(), "a width mismatch is caught");
        assert!(r.array::<u32>(9).is_err(), "a missing section is caught");
    }

    #[test]
    fn another_key_a_flipped_byte_or_a_cut_are_refused() {
        let file = sample();
        assert!(Reader::open(&file[..], b"other").is_err());
        for i in 0..file.len() {
            let mut bad = file.clone();
            bad[i] ^= 0x40;
            // What is read is right or refused, never wrong (padding bytes
            // are covered by nothing and change nothing).
            if let Ok(r) = Reader::open(&bad[..], b"key") {
                if let Ok(v) = r.array::<u32>(1) {
                    assert_eq!(v, [1, 2, 3], "byte {i}");
                }
                if let Ok(v) = r.array::<u8>(3) {
                    assert_eq!(&v[..], b"hello", "byte {i}");
                }
            }
            assert!(Reader::open(&file[..i], b"key").is_err(), "cut at {i}");
        }
    }
}
