//! `duplicates` and `duplicate_set`: the Duplicates pane's sets of equal
//! instances (docs/duplicates.md), by the bytes merging their copies would
//! save; then one set with its members and the sets that hold it.

use serde_json::{json, Value};

use heaptui_core::analysis::Analysis;
use heaptui_core::graph::duplicates::DuplicateSet;
use heaptui_core::model::ObjectIdx;

use super::object_ref;
use crate::page::{window, Page, Refusal};
use crate::state::Loaded;

/// Member ids named in each set's row.
const EXAMPLES: usize = 3;

fn set_row(a: &Analysis, s: &DuplicateSet) -> Value {
    let dump = a.dump();
    let examples: Vec<String> = s
        .members(&a.duplicates)
        .iter()
        .take(EXAMPLES)
        .map(|&m| dump.id_hex(ObjectIdx(m)))
        .collect();
    json!({
        "set": s.id,
        "type": &*dump.type_names[s.type_index as usize],
        "instances": s.members(&a.duplicates).len(),
        "instance_bytes": s.instance_bytes,
        "objects_per_copy": s.objects_per_copy,
        "additional_bytes": s.additional_bytes,
        "trivial": s.trivial,
        "unverified": a.duplicates.is_unverified(s),
        "holding_set": s.holding_set(),
        "member_examples": examples,
    })
}

/// A page of the duplicate sets, by additional bytes; `type_name` keeps
/// the sets of that exact type only.
pub fn duplicates(
    l: &Loaded,
    type_name: Option<&str>,
    offset: Option<u64>,
    limit: Option<u64>,
) -> Result<Value, Refusal> {
    let a = &l.analysis;
    let dump = a.dump();
    let sets: Vec<&DuplicateSet> = match type_name {
        None => a.duplicates.sets.iter().collect(),
        Some(name) => {
            let t = super::parse_type(dump, name)?;
            let t = t.index() as u32;
            a.duplicates
                .sets
                .iter()
                .filter(|s| s.type_index == t)
                .collect()
        }
    };
    let range = window(sets.len(), offset, limit)?;
    let rows = sets[range.clone()].iter().map(|s| set_row(a, s)).collect();
    let mode = a.duplicates.mode.map_or("off", |m| m.name());
    Ok(Page::new("sets", rows, range.start, sets.len())
        .with("detection", mode)
        .with("possible_duplicate_types", a.duplicates.possible.len())
        .with(
            "next",
            "duplicate_set with a set number lists its members and the sets holding it directly; holding_set is the outermost set whose copies hold this one's",
        )
        .finish())
}

/// Set number `set`: its figures, the sets that hold it directly (its
/// `held_by`), a page of its members.
pub fn duplicate_set(
    l: &Loaded,
    set: u64,
    offset: Option<u64>,
    limit: Option<u64>,
) -> Result<Value, Refusal> {
    let a = &l.analysis;
    let sets = &a.duplicates.sets;
    let Some(s) = usize::try_from(set).ok().and_then(|i| sets.get(i)) else {
        return Err(Refusal::new(format!(
            "no duplicate set {set}: the sets are numbered 0 to {} (the duplicates tool lists them)",
            sets.len().saturating_sub(1)
        )));
    };
    let held_by: Vec<Value> = s
        .held_by(&a.duplicates)
        .iter()
        .take(20)
        .map(|&h| json!({"set": h, "type": &*a.dump().type_names[sets[h as usize].type_index as usize]}))
        .collect();
    let members = s.members(&a.duplicates);
    let range = window(members.len(), offset, limit)?;
    let rows = members[range.clone()]
        .iter()
        .map(|&m| object_ref(a, ObjectIdx(m)))
        .collect();
    Ok(Page::new("members", rows, range.start, members.len())
        .with("set", set_row(a, s))
        .with("held_by", held_by)
        .with("held_by_total", s.held_by(&a.duplicates).len())
        .with(
            "next",
            "object with a member's id shows the copy and who retains it",
        )
        .finish())
}
