//! `summary`: the overview pane's figures, as `report --json` has them
//! in `file`, `format`, `details`, `summary` and `diagnostics`.

use serde_json::{json, Map, Value};

use crate::state::Loaded;

/// Diagnostic messages an answer quotes.
const MESSAGES: usize = 10;

/// The summary of the analysed dump (and the snapshots compared with it).
pub fn summary(l: &Loaded, redact: bool) -> Value {
    let a = &l.analysis;
    let dump = a.dump();
    let s = &a.summary;
    let details: Map<String, Value> = dump
        .details
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    let d = &dump.diagnostics;
    let mut diagnostics = json!({
        "skipped_lines": d.skipped_lines,
        "dangling_references": d.dangling_references,
        "undefined_types": d.undefined_types,
        "duplicate_objects": d.duplicate_objects,
        "missing_root_objects": d.missing_root_objects,
        "clamped_roots": d.clamped_roots,
        "messages_total": d.messages.len(),
    });
    if !redact {
        // Messages quote the dump's text: data, escaped at import.
        diagnostics["messages"] = d.messages.iter().take(MESSAGES).cloned().collect();
    }
    let held = s.held_by_references.as_ref().map(|h| {
        json!({"referents_retain": h.strong, "reference_objects": h.referents,
               "objects": h.objects(), "bytes": h.bytes()})
    });
    let mut out = json!({
        "file": dump.path.display().to_string(),
        "format": dump.format.key(),
        "details": details,
        "totals": {
            "objects": s.objects,
            "references": s.references,
            "types": s.types,
            "root_records": s.root_records,
            "total_bytes": s.total_bytes,
            "file_bytes": s.file_bytes,
        },
        "reachability": {
            "reachable_objects": s.reachable_objects,
            "reachable_bytes": s.reachable_bytes,
            "unreachable_objects": s.unreachable_objects,
            "unreachable_bytes": s.unreachable_bytes,
            "weakly_held_objects": s.weakly_held_objects,
            "weakly_held_bytes": s.weakly_held_bytes,
            "held_by_references": held,
        },
        "duplicates": {
            "sets": a.duplicates.sets.len(),
            "additional_bytes": a.duplicates.total_additional_bytes(),
        },
        "diagnostics": diagnostics,
        "next": "dominators (who retains the memory), types (filter with the / syntax), duplicates, suspects, object (by id)",
    });
    if let Some(c) = &l.comparison {
        let files: Vec<String> = c.files.iter().map(|f| f.display().to_string()).collect();
        out["snapshots"] = json!({
            "files_oldest_first": files,
            "reachable_bytes": c.reachable_bytes,
            "next": "comparison (growing type paths, steady growth first)",
        });
    }
    out
}
