//! `duplicate_owners`: duplicate waste charged to the types that hold the
//! extra copies (docs/duplicates.md, "Who holds the copies"), as the
//! report's `duplicate_owners` key, by wasted bytes; each owner names its
//! sets (numbers the `duplicate_set` tool takes) and its top instance (an
//! id the `object` tool takes).

use serde_json::{json, Value};

use heaptui_core::analysis::{duplicate_owners, Owner, Owners};
use heaptui_core::analysis::{Analysis, Glob};
use heaptui_core::graph::duplicates::DuplicateMode;

use super::{check_pattern, object_ref};
use crate::page::{window, Page, Refusal};
use crate::state::Loaded;

/// Sets named in each owner's row (the rest counted).
const SETS_SHOWN: usize = 10;
/// Exclude patterns one call may give.
const MAX_PATTERNS: usize = 32;

fn owner_row(a: &Analysis, o: &Owner) -> Value {
    let dump = a.dump();
    let names = &dump.type_names;
    let path: Vec<&str> = o.path.iter().map(|t| &*names[t.index()]).collect();
    let sets: Vec<Value> = o
        .sets
        .iter()
        .take(SETS_SHOWN)
        .map(|s| {
            let set = &a.duplicates.sets[s.set as usize];
            json!({
                "set": s.set,
                "type": &*names[set.type_index as usize],
                "copies": s.copies,
                "bytes": s.bytes(&a.duplicates),
            })
        })
        .collect();
    json!({
        "path": path,
        "path_text": Owners::path_text(dump, o),
        "anchored": o.anchored,
        "bytes": o.bytes,
        "copies": o.copies,
        "instances": o.instances,
        "top_instance": o.top_instance.map(|t| object_ref(a, t)),
        "sets": sets,
        "sets_total": o.sets.len(),
    })
}

/// A page of the owners of duplicate waste; `exclude` replaces the
/// format's default exclude patterns (an empty list: none), as the
/// report's `--owner-skip`.
pub fn owners(
    l: &Loaded,
    exclude: Option<&[String]>,
    offset: Option<u64>,
    limit: Option<u64>,
) -> Result<Value, Refusal> {
    let a = &l.analysis;
    if matches!(a.duplicates.mode, None | Some(DuplicateMode::None)) {
        return Err(Refusal::new(
            "duplicate detection was off for this dump (--duplicates none): there are no duplicate owners",
        ));
    }
    let computed;
    let owners = match exclude {
        None => l.default_owners(),
        Some(patterns) => {
            if patterns.len() > MAX_PATTERNS {
                return Err(Refusal::new(format!(
                    "at most {MAX_PATTERNS} exclude patterns"
                )));
            }
            let mut globs = Vec::new();
            for p in patterns.iter().filter(|p| !p.is_empty()) {
                check_pattern(p)?;
                globs.push(Glob::new(p));
            }
            computed = duplicate_owners(a.dump(), &a.dom, &a.duplicates, &globs);
            &computed
        }
    };
    let range = window(owners.owners.len(), offset, limit)?;
    let rows = owners.owners[range.clone()]
        .iter()
        .map(|o| owner_row(a, o))
        .collect();
    Ok(Page::new("owners", rows, range.start, owners.owners.len())
        .with("exclude", owners.exclude.clone())
        .with("bytes", owners.bytes)
        .with(
            "next",
            "duplicate_set with a set number lists its copies; object with top_instance's id shows the owner object; exclude replaces the patterns the owners are cut at ([] cuts at none)",
        )
        .finish())
}
