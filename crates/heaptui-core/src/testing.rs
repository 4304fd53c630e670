//! Knobs for heaptui's own tests, benchmarks and fuzz targets, behind the
//! non-default `testing` feature (the workspace's dev-dependencies and
//! `fuzz/` turn it on), so none of it ships in the `heaptui` binary:
//! importers with a chosen chunk size (so a test can check that chunk
//! boundaries change nothing), the duplicate detector's thresholds (whose
//! results must be the same for every value), the dominator tree's
//! set-aside (`with_parents_aside`, `with_preorder_aside`), the gzip bound and the cache
//! decoder's entry over bytes in memory, and what the duplicate owners'
//! walks cost and how many copies a pass of their owner objects holds. One method is a knob of the same kind where it belongs:
//! `IdIndex::probes` (what look-ups cost).
//!
//! What a test needs of the library's real surface it takes from there,
//! not from here.

use std::path::Path;

use crate::analysis::Analysis;
use crate::cache::Corrupt;
use crate::import::InputError;
use crate::model::Model;

/// How many dominators [`crate::analysis::duplicate_owners`]'s walks
/// resolved (each at most once: what the walks cost).
pub fn owner_walk_steps(
    dump: &Model,
    dom: &crate::graph::DominatorTree,
    dups: &crate::graph::duplicates::Duplicates,
    exclude: &[crate::analysis::Glob],
) -> u64 {
    crate::analysis::owners::owners_and_steps(dump, dom, dups, exclude, None).1
}

/// [`crate::analysis::duplicate_owners`] with its owner objects counted in
/// passes of at most `per_pass` copies (an owner with more alone in its
/// pass): whatever the bound, the same owners.
pub fn owners_in_passes(
    dump: &Model,
    dom: &crate::graph::DominatorTree,
    dups: &crate::graph::duplicates::Duplicates,
    exclude: &[crate::analysis::Glob],
    per_pass: u64,
) -> crate::analysis::Owners {
    crate::analysis::owners::owners_and_steps(dump, dom, dups, exclude, Some(per_pass)).0
}

/// How near its stop a dominator where the duplicate owners' walks join
/// goes unmemoised (see `analysis::owners`): a walk that starts within
/// this many steps of its stop resolves those dominators again, however
/// many walks did before.
pub const OWNER_WALK_NEAR_STOP: usize = crate::analysis::owners::NEAR_STOP;

/// Parses .NET CF text dump bytes held in memory (the text importer
/// alone, without format detection).
pub fn parse_text(path: &Path, bytes: &[u8]) -> Result<Model, InputError> {
    crate::import::netcf_text::parse_bytes(path, bytes)
}

/// [`parse_text`] with a chosen chunk size.
pub fn parse_text_with_chunk(
    path: &Path,
    bytes: &[u8],
    chunk_size: usize,
) -> Result<Model, InputError> {
    crate::import::netcf_text::parse_bytes_with_chunk(path, bytes, chunk_size)
}

/// Imports V8 heap snapshot bytes held in memory with a chosen chunk size.
pub fn import_v8_with_chunk(path: &Path, bytes: &[u8], chunk: usize) -> Result<Model, InputError> {
    crate::import::v8::import_bytes_with_chunk(path, bytes, chunk)
}

/// [`import_v8_with_chunk`] building the importer's arrays in `spill`'s
/// files, whatever the memory budget (the model keeps the spill).
pub fn import_v8_spilled(
    path: &Path,
    bytes: &[u8],
    chunk: usize,
    spill: std::sync::Arc<crate::mem::spill::Spill>,
) -> Result<Model, InputError> {
    crate::import::v8::import_bytes_spilled(path, bytes, chunk, spill)
}

/// Imports .NET gcdump bytes held in memory, its arrays in `spill`'s
/// files whatever the memory budget (the model keeps the spill).
pub fn import_gcdump_spilled(
    path: &Path,
    bytes: &[u8],
    spill: std::sync::Arc<crate::mem::spill::Spill>,
) -> Result<Model, InputError> {
    crate::import::gcdump::import_bytes_spilled(path, bytes, spill)
}

/// Sets how large a reach walk of the duplicate detector grows before it
/// makes a hub. Results are the same for every value.
pub fn set_hub_threshold(objects: usize) {
    crate::graph::duplicates::set_hub_threshold(objects);
}

/// Sets how many candidate holders a duplicate set may have before its
/// held checks are done in order; 0 does every set in order. Results are
/// the same for every value.
pub fn set_many_candidates(sets: usize) {
    crate::graph::duplicates::set_many_candidates(sets);
}

/// The most bytes the importer inflates `compressed` gzip bytes to.
pub fn max_inflated(compressed: u64) -> u64 {
    crate::import::gzip::max_inflated(compressed)
}

/// Reads a whole cache file held in memory, written for the key `fuzz`
/// (the fuzz target's entry: every check of a real load runs).
pub fn decode_cache_bytes(bytes: &[u8]) -> Result<Analysis, Corrupt> {
    crate::cache::decode_bytes(bytes)
}

/// Runs `f` on `dom` with its idom and preorder numbers set aside, then
/// makes them again (what the report's pipeline does around the
/// duplicates' candidates and verification); beside `f`'s result, the
/// lengths of idom and the preorder numbers as held meanwhile.
pub fn with_parents_aside<R>(
    dom: &mut crate::graph::DominatorTree,
    f: impl FnOnce(crate::graph::ParentsAside<'_>) -> R,
) -> (R, (usize, usize)) {
    dom.with_parents_aside(|t| (f(t), t.parents_held()))
}

/// Runs `f` on `dom` with its preorder set aside, then makes it again
/// (what the report's pipeline does around the held duplicates).
pub fn with_preorder_aside<R>(
    dom: &mut crate::graph::DominatorTree,
    f: impl FnOnce(&crate::graph::DominatorTree) -> R,
) -> R {
    dom.with_preorder_aside(f)
}
