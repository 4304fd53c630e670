//! The RPM text importer (docs/formats.md), a parallel parser. The file is cut into
//! chunks at line boundaries and each chunk is parsed on its own (rayon);
//! section boundaries, line numbers and object indices are then stitched
//! together in file order, so results and messages are exactly those of a
//! sequential parse.
//!
//! This file owns the entry points, the checks on the whole input (empty,
//! UTF-16, binary, sizes past u64) and the cutting into chunks. Then:
//! - [`lines`]: one chunk's lines → records ([`lines::Chunk`]), tokens, hex,
//!   skip reasons; [`swar`]: its fast path for well-formed `o` lines;
//! - [`sections`]: AppDomain sections and per-section type tables;
//! - [`resolve`]: the id index, repeated ids, references resolved per chunk
//!   in parallel;
//! - [`build`]: the stages run in order over a shared context, undefined
//!   types, offsets, roots, diagnostics → [`Model`].

mod build;
mod column;
mod lines;
mod resolve;
mod sections;
mod swar;

use std::path::Path;

use rayon::prelude::*;

use super::source::Source;
use super::{ImportError, InputError};
use crate::mem::spill::Spill;
use crate::model::Model;
use crate::progress::{Cancelled, Progress, Stage};
use build::assemble;
use lines::{parse_chunk, Chunk};

/// Target size of one parse chunk.
const CHUNK: usize = 8 << 20;

/// No object can be larger than a 48-bit address space. Bigger sizes are
/// corrupt lines (skipped); the bound also keeps every sum of sizes in u64
/// for all realistic object counts (see the total check in `check_usable`).
pub const MAX_OBJECT_BYTES: u64 = 1 << 48;

/// Parses a text dump whose bytes are open (see `import::import_file`).
/// Where `spill` is given (the file is over the memory budget), the
/// chunks' records, the ids and the model's arrays are built in spill
/// files.
pub fn import(
    path: &Path,
    source: &Source,
    progress: &Progress,
    spill: Option<&Spill>,
) -> Result<Model, ImportError> {
    parse_source(path, source, progress, CHUNK, spill)
}

/// Parses dump text held in memory (tests).
#[cfg(any(test, feature = "testing"))]
pub(crate) fn parse_bytes(path: &Path, bytes: &[u8]) -> Result<Model, InputError> {
    parse_bytes_with_chunk(path, bytes, CHUNK)
}

/// [`parse_bytes`] with a chosen chunk size, so tests can check that chunk
/// boundaries change nothing (results, counts, message line numbers).
#[cfg(any(test, feature = "testing"))]
pub(crate) fn parse_bytes_with_chunk(
    path: &Path,
    bytes: &[u8],
    chunk_size: usize,
) -> Result<Model, InputError> {
    let chunk_size = chunk_size.max(1);
    match parse_source(
        path,
        &Source::Owned(bytes.to_vec()),
        &Progress::new(),
        chunk_size,
        None,
    ) {
        Ok(d) => Ok(d),
        Err(ImportError::Input(e)) => Err(e),
        Err(ImportError::Cancelled) => unreachable!("nobody can cancel this progress"),
    }
}

fn parse_source(
    path: &Path,
    source: &Source,
    progress: &Progress,
    chunk_size: usize,
    spill: Option<&Spill>,
) -> Result<Model, ImportError> {
    let bytes = source.bytes();
    check_text(path, bytes)?;
    check_first_lines(path, bytes)?;
    // Reading the chunks is the first half of the stage, stitching them
    // together (ids, references, roots) the second.
    let len = bytes.len() as u64;
    progress.start(Stage::Parse, 2 * len);
    let _span = tracing::debug_span!(target: "heaptui::profile", "parse").entered();

    let mut ranges = chunk_ranges(bytes, chunk_size);
    // A UTF-8 byte order mark (an editor's re-save) is not part of line 1:
    // left in, it would make the first record, usually `a`, unparsable.
    if bytes.starts_with(b"\xef\xbb\xbf") {
        ranges[0].0 = ranges[0].1.min(3);
    }
    let chunks_span = tracing::debug_span!(target: "heaptui::profile", "chunks").entered();
    let chunks: Vec<Chunk> = ranges
        .par_iter()
        .map(|&(start, end)| {
            progress.check()?;
            let mut chunk = parse_chunk(&bytes[start..end]);
            if let Some(s) = spill {
                chunk.spill(s);
            }
            source.release(start, end - start);
            progress.advance((end - start) as u64);
            Ok(chunk)
        })
        .collect::<Result<_, Cancelled>>()?;

    chunks_span.exit();
    crate::mem::checkpoint("import: chunks");
    progress.set_done(len);
    let lines: u64 = chunks.iter().map(|c| c.lines as u64).sum();
    let mut dump = assemble(path, bytes.len() as u64, chunks, progress, spill)?;
    if ended_early(bytes) {
        // The cut line's own message (the last, where kept) moves first,
        // saying that the file ended early.
        let d = &mut dump.diagnostics;
        let at = format!("line {lines}: ");
        let why = match d.messages.last().filter(|m| m.starts_with(&at)) {
            Some(_) => d.messages.pop().unwrap_or_default(),
            None => format!("{at}skipped"),
        };
        let why = why.strip_prefix(&at).unwrap_or(&why);
        d.messages.insert(
            0,
            format!("{at}the file ended early: its last line stops in the middle of a record (a cut file): {why}"),
        );
        d.messages.truncate(crate::model::MAX_MESSAGES);
    }
    check_usable(path, &dump)?;
    Ok(dump)
}

/// Whether the file ended early: its last line has no line end and is not
/// a whole record, so the file was cut in the middle of one (the line is
/// counted as skipped already). A last line without a line end that is a
/// whole record is accepted: the format does not need a final newline, and
/// a cut there cannot be told apart.
fn ended_early(bytes: &[u8]) -> bool {
    if bytes.last().is_none_or(|&b| b == b'\n') {
        return false;
    }
    let start = memchr::memrchr(b'\n', bytes).map_or(0, |i| i + 1);
    let last = &bytes[start..];
    let last = match start {
        0 => last.strip_prefix(b"\xef\xbb\xbf").unwrap_or(last),
        _ => last,
    };
    parse_chunk(last).skipped > 0
}

/// Whether the first bytes of a text dump larger than `head` hold any
/// record heaptui reads (an object, type, root or AppDomain line), so a
/// file that is not a dump at all (a README, a log) is refused before the
/// terminal is taken over. Only complete lines are parsed; a head without
/// a line end (one very long first line) is given the benefit of the doubt.
/// Errors are the reason, one line.
pub fn check_head(path: &Path, head: &[u8]) -> Result<(), InputError> {
    check_text(path, head)?;
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    let Some(end) = memchr::memrchr(b'\n', head) else {
        return Ok(());
    };
    let chunk = parse_chunk(&head[..=end]);
    if !(chunk.ids.is_empty()
        && chunk.types.is_empty()
        && chunk.roots.is_empty()
        && chunk.events.is_empty())
    {
        return Ok(());
    }
    Err(InputError::new(
        path,
        crate::import::not_a_dump(
            &format!("no record of any in its first {} lines", chunk.lines),
            head,
        ),
    ))
}

/// Refuses text whose first lines (up to 64 KiB) hold something but no
/// record heaptui reads: not a dump of any format (a script, a log).
fn check_first_lines(path: &Path, bytes: &[u8]) -> Result<(), InputError> {
    let body = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let head = &body[..body.len().min(64 << 10)];
    let head = match memchr::memrchr(b'\n', head) {
        Some(end) => &head[..=end],
        // One line: decided when it is the whole file.
        None if head.len() == body.len() => head,
        None => return Ok(()),
    };
    let chunk = parse_chunk(head);
    let records = !(chunk.ids.is_empty()
        && chunk.types.is_empty()
        && chunk.roots.is_empty()
        && chunk.events.is_empty());
    if records || chunk.messages.is_empty() {
        return Ok(());
    }
    Err(InputError::new(
        path,
        crate::import::not_a_dump(
            &format!("no record of any in its first {} lines", chunk.lines),
            body,
        ),
    ))
}

/// Refuses input that is not text of our format at all: empty, UTF-16,
/// binary.
fn check_text(path: &Path, bytes: &[u8]) -> Result<(), InputError> {
    if bytes.is_empty() {
        return Err(InputError::new(path, "the file is empty"));
    }
    let head = &bytes[..bytes.len().min(64 << 10)];
    if head.starts_with(b"\xff\xfe") || head.starts_with(b"\xfe\xff") {
        return Err(InputError::new(
            path,
            "UTF-16 text (byte order mark FF FE or FE FF); convert it to UTF-8 or ASCII first",
        ));
    }
    if looks_binary(head) {
        return Err(InputError::new(
            path,
            crate::import::not_a_dump("binary data of no known format", bytes),
        ));
    }
    Ok(())
}

/// Refuses a parse without objects, or whose sizes add up past u64.
fn check_usable(path: &Path, dump: &Model) -> Result<(), InputError> {
    if dump.ids.is_empty() {
        let reason = if dump.diagnostics.skipped_lines > 0 {
            format!(
                "no object records (`o …`) found; {} lines could not be parsed, first: {}",
                dump.diagnostics.skipped_lines,
                dump.diagnostics
                    .messages
                    .first()
                    .map(String::as_str)
                    .unwrap_or("")
            )
        } else {
            "no object records (`o …`) found".to_string()
        };
        return Err(InputError::new(path, reason));
    }
    // Retained sizes, type totals and the like are sums of distinct objects'
    // sizes, so a total that fits in u64 keeps them all from overflowing.
    let total: u128 = dump.sizes.total_wide();
    if total > u64::MAX as u128 {
        return Err(InputError::new(
            path,
            "object sizes add up to more than 2^64 bytes; not a heap dump",
        ));
    }
    Ok(())
}

/// NUL bytes or a high share of control bytes mean this is not our format.
fn looks_binary(head: &[u8]) -> bool {
    if head.contains(&0) {
        return true;
    }
    let control = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0b | 0x0c))
        .count();
    control * 20 > head.len()
}

/// Cuts `bytes` into ranges of about `target` bytes, each ending after a
/// newline (the last one at the end of the file).
fn chunk_ranges(bytes: &[u8], target: usize) -> Vec<(usize, usize)> {
    let mut ranges = Vec::with_capacity(bytes.len() / target + 1);
    let mut start = 0;
    while start < bytes.len() {
        let probe = (start + target).min(bytes.len());
        let end = match memchr::memchr(b'\n', &bytes[probe..]) {
            Some(i) => probe + i + 1,
            None => bytes.len(),
        };
        ranges.push((start, end));
        start = end;
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_end_at_newlines_and_cover_everything() {
        let text = b"o 1 1 1\no 2 1 1\no 3 1 1\nlast";
        for target in 1..text.len() + 2 {
            let r = chunk_ranges(text, target);
            assert_eq!(r.first().unwrap().0, 0);
            assert_eq!(r.last().unwrap().1, text.len());
            for w in r.windows(2) {
                assert_eq!(w[0].1, w[1].0);
                assert_eq!(text[w[0].1 - 1], b'\n');
            }
        }
    }
}
