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

/// Bytes of file an object takes at least, per format, as the estimate
/// counts them: fewer than any dump met so far, so that the estimate errs
/// on the heavy side (the generated text heaps take 55 an object).
fn file_bytes_per_object(format: Format) -> Option<u64> {
    match format {
        Format::Rpm => Some(32),
        // Only the text importer spills its own arrays so far.
        Format::Hprof | Format::Heapsnapshot | Format::Gcdump => None,
    }
}

/// Bytes an object takes at the analysis's peak in memory, about the
/// measured peaks (docs/performance.md, "Memory at the peak").
const PEAK_BYTES_PER_OBJECT: u64 = 100;

/// What the estimate adds for everything not proportional to the heap.
const BASE_BYTES: u64 = 64 << 20;

/// The analysis's peak estimated from a dump file of `bytes` bytes in
/// `format`; `None` where the format's importer does not spill.
pub fn estimate_from_file(format: Format, bytes: u64) -> Option<u64> {
    let per = file_bytes_per_object(format)?;
    Some((bytes / per).saturating_mul(PEAK_BYTES_PER_OBJECT) + BASE_BYTES)
}

/// The spill the import of `bytes` bytes in `format` builds its arrays in:
/// one when the estimate is over the process's budget and the spill
/// directory takes it (a note says so either way), else none.
pub fn plan(format: Format, bytes: u64, progress: &Progress) -> Option<Arc<Spill>> {
    let estimate = estimate_from_file(format, bytes)?;
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

    #[test]
    fn the_text_estimate_errs_on_the_heavy_side() {
        // The 10.1 M text heap: 552 MB of text, a measured peak of 983 MiB.
        let e = estimate_from_file(Format::Rpm, 552_014_770).unwrap();
        assert!(e > 983 << 20, "{e}");
        assert_eq!(estimate_from_file(Format::Rpm, 0), Some(BASE_BYTES));
        assert_eq!(estimate_from_file(Format::Hprof, 1 << 30), None);
    }
}
