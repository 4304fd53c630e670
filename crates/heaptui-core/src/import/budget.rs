//! The import against the memory budget: an importer's own peak comes
//! before the model exists, so before the analysis can estimate its peak
//! (`analysis::memory`). The file's size gives a first, conservative
//! estimate: when that is over the budget, the importer builds its big
//! arrays and scratch in spill files (`mem::spill`) from the start, and
//! hands the spill on with the model for the stages after it.

use std::sync::Arc;

use crate::mem::spill::Spill;
use crate::model::Format;
use crate::progress::Progress;

/// Bytes of file an object takes at least where a sample finds none
/// (fewer than any dump met so far: the estimate errs on the heavy side;
/// the generated text heaps take 55 an object).
const FALLBACK_FILE_BYTES_PER_OBJECT: u64 = 32;

/// An object line is never shorter than `o 1 1 1` and its newline.
const MIN_FILE_BYTES_PER_OBJECT: u64 = 8;

/// The sample: this many windows of [`WINDOW`] bytes, spread evenly over
/// the file (the whole file where it is not bigger than the windows).
const WINDOWS: u64 = 64;
const WINDOW: u64 = 64 << 10;

/// Bytes an object takes at the analysis's peak in memory, about the
/// measured peaks (docs/performance.md, "Memory at the peak").
const PEAK_BYTES_PER_OBJECT: u64 = 100;

/// What the estimate adds for everything not proportional to the heap.
const BASE_BYTES: u64 = 64 << 20;

/// The objects a dump holds, estimated from a sample of its bytes, erring
/// on the heavy side (a tenth more than the sample's density: the spill
/// asks the disk for room for the estimate, so a wider margin would refuse
/// disks that take the heap); `None`
/// where the format's importer does not spill its own arrays (only the
/// text importer does so far).
pub fn estimate_objects(format: Format, data: &[u8]) -> Option<u64> {
    if format != Format::Rpm {
        return None;
    }
    let bytes = data.len() as u64;
    let (sampled, objects) = sample_object_lines(data);
    let per = if objects == 0 {
        FALLBACK_FILE_BYTES_PER_OBJECT
    } else {
        // bytes an object, less an eleventh: a tenth more objects.
        (sampled * 10 / (objects * 11)).max(MIN_FILE_BYTES_PER_OBJECT)
    };
    Some(bytes / per)
}

/// The bytes looked at and the object lines (`o` and a blank at a line's
/// start) that start in them, over [`WINDOWS`] windows spread over `data`:
/// a fixed amount of reading whatever the file's size. Every byte of a
/// window counts, lines or not, so a stretch without lines (a very long
/// line, or a sparse file's hole) lowers the density as it should, rather
/// than being left out of the sample.
fn sample_object_lines(data: &[u8]) -> (u64, u64) {
    let len = data.len() as u64;
    let windows = if len <= WINDOWS * WINDOW { 1 } else { WINDOWS };
    let width = if windows == 1 { len } else { WINDOW };
    let is_object =
        |at: usize| data.get(at) == Some(&b'o') && matches!(data.get(at + 1), Some(b' ' | b'\t'));
    let (mut sampled, mut objects) = (0, 0);
    for w in 0..windows {
        let start = (len / windows * w) as usize;
        let end = (start as u64 + width).min(len) as usize;
        sampled += (end - start) as u64;
        if (start == 0 || data[start - 1] == b'\n') && is_object(start) {
            objects += 1;
        }
        // A line starting at `end` belongs to the next window.
        objects += data[start..end]
            .iter()
            .enumerate()
            .filter(|&(i, &b)| b == b'\n' && start + i + 1 < end && is_object(start + i + 1))
            .count() as u64;
    }
    (sampled, objects)
}

/// The analysis's peak estimated from a dump's bytes (`data`) in
/// `format`; `None` where the format's importer does not spill.
pub fn estimate_from_dump(format: Format, data: &[u8]) -> Option<u64> {
    let objects = estimate_objects(format, data)?;
    Some(peak_of(objects))
}

/// The spill the import of `data` in `format` builds its arrays in: one
/// when the estimate is over the process's budget and the spill directory
/// takes it (a note says so either way), else none. The HPROF and V8
/// importers plan their own once they know the objects ([`plan_counted`]).
pub fn plan(format: Format, data: &[u8], progress: &Progress) -> Option<Arc<Spill>> {
    let estimate = estimate_from_dump(format, data)?;
    plan_for(estimate, data.len() as u64, progress)
}

/// The fewest bytes of an HPROF file an object takes: a primitive array's
/// sub-record with 4-byte identifiers and no elements (tag, id, serial,
/// length, element type).
const MIN_HPROF_BYTES_PER_OBJECT: u64 = 14;

/// Whether an HPROF file of `file_bytes` may hold a heap whose peak is
/// over the budget: the most objects it can hold at [`PEAK_BYTES_PER_OBJECT`]
/// each. Where it may, its importer gives the file's pages back as it
/// scans them, before the count ([`plan_counted`]) decides.
pub fn hprof_may_spill(file_bytes: u64) -> bool {
    let most = file_bytes / MIN_HPROF_BYTES_PER_OBJECT;
    !crate::mem::budget::get().fits(peak_of(most))
}

/// The analysis's peak for a heap of `objects` objects.
fn peak_of(objects: u64) -> u64 {
    objects.saturating_mul(PEAK_BYTES_PER_OBJECT) + BASE_BYTES
}

/// [`plan`] for an importer that counted the heap's objects (the HPROF
/// importer, after the scan of its sub-records' headers; the V8 importer,
/// from the node count its header declares) in a file of `file_bytes`.
pub fn plan_counted(objects: u64, file_bytes: u64, progress: &Progress) -> Option<Arc<Spill>> {
    plan_for(peak_of(objects), file_bytes, progress)
}

/// The spill for a dump of `bytes` whose analysis may peak at `estimate`.
fn plan_for(estimate: u64, bytes: u64, progress: &Progress) -> Option<Arc<Spill>> {
    let budget = crate::mem::budget::get();
    if budget.fits(estimate) {
        return None;
    }
    let size = |b: u64| humansize::format_size(b, humansize::BINARY);
    let over = format!(
        "a {} dump may need about {} at its peak, more than the memory budget {}",
        size(bytes),
        size(estimate),
        budget.describe()
    );
    let phrases = (
        "the import spills to",
        "and the import cannot spill to",
        "it goes on in memory",
    );
    open_spill(&over, estimate, progress, phrases)
}

/// Opens the spill for a heap whose estimated peak (`estimate`, described
/// by `over`) is over the process's budget, in the spill directory, and
/// says so: `over`, then `spills` and the directory where it opened; else
/// `cannot`, the directory and why, then `instead`. Where it opened, the
/// progress line shows it and the watcher keeps spilled pages within the
/// budget.
pub(crate) fn open_spill(
    over: &str,
    estimate: u64,
    progress: &Progress,
    (spills, cannot, instead): (&str, &str, &str),
) -> Option<Arc<Spill>> {
    let dir = crate::mem::spill::dir();
    let shown = crate::model::text::printable_path(&dir);
    match Spill::open(&dir, estimate) {
        Ok(s) => {
            progress.note(format!("{over}: {spills} {shown}"));
            progress.set_spilling();
            crate::mem::watch::keep_within(crate::mem::budget::get().bytes);
            Some(Arc::new(s))
        }
        Err(why) => {
            progress.note(format!("{over}, {cannot} {shown} ({why}): {instead}"));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A text heap of `objects` object lines, each with `refs` references,
    /// after a few type lines.
    fn text_heap(objects: u64, refs: usize) -> Vec<u8> {
        let mut t = b"t 1 System.Object\nt 2 System.String\n".to_vec();
        for i in 0..objects {
            t.extend_from_slice(format!("o {:x} 1 18", 0x7f00_0000_0000u64 + i * 24).as_bytes());
            for r in 0..refs {
                t.extend_from_slice(
                    format!(" {:x}", 0x7f00_0000_0000u64 + r as u64 * 24).as_bytes(),
                );
            }
            t.push(b'\n');
        }
        t.extend_from_slice(b"r 1 7f0000000000 0\n");
        t
    }

    #[test]
    fn the_objects_are_counted_from_a_sample_on_the_heavy_side() {
        // Small: the whole file is read; a tenth more than it holds.
        let small = text_heap(1000, 2);
        let n = estimate_objects(Format::Rpm, &small).unwrap();
        assert!((1000..=1150).contains(&n), "{n}");
        // Bigger than the windows: sampled, still a tenth more or so.
        let big = text_heap(200_000, 3);
        assert!(big.len() as u64 > WINDOWS * WINDOW);
        let n = estimate_objects(Format::Rpm, &big).unwrap();
        assert!((200_000..=230_000).contains(&n), "{n}");
        assert_eq!(estimate_objects(Format::Hprof, &big), None);
    }

    #[test]
    fn a_hole_counts_as_bytes_without_objects() {
        // A few lines, then a sparse file's hole (zeros): not a heap of
        // objects 22 bytes apart.
        let mut data = b"t 1 T\no 1 1 8\nr 1 1 0\n".to_vec();
        data.resize(64 << 20, 0);
        let n = estimate_objects(Format::Rpm, &data).unwrap();
        assert!(n < 1000, "{n}");
        // Lines far longer than a window: one object a line at most.
        let mut long = Vec::new();
        for i in 0..64u64 {
            long.extend_from_slice(format!("o {i:x} 1 8").as_bytes());
            long.extend(std::iter::repeat_n(b' ', 300 << 10));
            long.push(b'\n');
        }
        let n = estimate_objects(Format::Rpm, &long).unwrap();
        assert!(n < 1000, "{n}");
    }

    #[test]
    fn a_sample_without_objects_falls_back_to_the_floor() {
        assert_eq!(estimate_objects(Format::Rpm, b""), Some(0));
        let no_lines = vec![b'x'; 10 << 20];
        let n = estimate_objects(Format::Rpm, &no_lines).unwrap();
        assert_eq!(n, (10 << 20) / FALLBACK_FILE_BYTES_PER_OBJECT);
        // Lines shorter than any object line cannot make the count explode.
        let tiny = b"o 1\n".repeat(1 << 20);
        let n = estimate_objects(Format::Rpm, &tiny).unwrap();
        assert_eq!(n, tiny.len() as u64 / MIN_FILE_BYTES_PER_OBJECT);
    }

    #[test]
    fn the_text_estimate_errs_on_the_heavy_side() {
        let heap = text_heap(200_000, 3);
        let e = estimate_from_dump(Format::Rpm, &heap).unwrap();
        assert!(e >= 200_000 * PEAK_BYTES_PER_OBJECT + BASE_BYTES, "{e}");
        assert_eq!(estimate_from_dump(Format::Rpm, b""), Some(BASE_BYTES));
        assert_eq!(estimate_from_dump(Format::Hprof, &heap), None);
    }
}
