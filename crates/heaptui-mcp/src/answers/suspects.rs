//! `suspects`: the Leaks pane's suspects, each with the point where its
//! memory accumulates, the types piled up below it and a shortest path
//! from a root, as `report --json` writes them in `suspects`.

use serde_json::Value;

use heaptui_core::report::suspect_value;

use crate::page::{window, Page, Refusal};
use crate::state::Loaded;

/// A page of the leak suspects (growth suspects first in a comparison).
/// Under `redact` without the retention path's root place (a thread's
/// name is a string of the dump).
pub fn suspects(
    l: &Loaded,
    redact: bool,
    offset: Option<u64>,
    limit: Option<u64>,
) -> Result<Value, Refusal> {
    let all = l.suspects();
    let range = window(all.len(), offset, limit)?;
    let rows = all[range.clone()]
        .iter()
        .map(|s| {
            let mut v = suspect_value(&l.analysis, l.comparison.as_ref(), s);
            if let (true, Value::Object(m)) = (redact, &mut v) {
                m.remove("retention_root");
            }
            v
        })
        .collect();
    Ok(Page::new("suspects", rows, range.start, all.len())
        .with(
            "next",
            "object with accumulation_point.id shows it; dominators with parent = that id lists what piles up there",
        )
        .finish())
}
