//! Shared by the targets: the whole pipeline on whatever the importer made
//! of the input, with a size cap so one run stays fast.

use heaptui_core::graph::duplicates::DuplicateOptions;

/// Imports `bytes` (detected by content), then graph, dominators and full
/// duplicate detection with a small work budget. Errors are fine; panics,
/// hangs and out-of-bounds reads are what the fuzzer looks for.
pub fn pipeline(bytes: &[u8]) {
    if bytes.len() > 1 << 20 {
        return;
    }
    let Ok(model) = heaptui_core::import::import_bytes(std::path::Path::new("fuzz"), bytes) else {
        return;
    };
    let options = DuplicateOptions {
        budget_per_type: Some(10_000),
        ..DuplicateOptions::default()
    };
    let _ = heaptui_core::analysis::Analysis::from_dump(model, &options, &Default::default());
}
