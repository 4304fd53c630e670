//! `duplicates` and `duplicate_set`: the Duplicates pane's sets of equal
//! instances (docs/duplicates.md), by the bytes merging their copies would
//! save; then one set with its members and the sets that hold it.

use serde_json::{json, Value};

use heaptui_core::analysis::Analysis;
use heaptui_core::model::ObjectIdx;

use super::object_ref;
use crate::page::{window, Page, Refusal};
use crate::state::Loaded;

/// Member ids named in each set's row.
const EXAMPLES: usize = 3;

/// The row of set number `set`.
fn set_row(a: &Analysis, set: u32) -> Value {
    let dump = a.dump();
    let s = &a.duplicates.sets[set as usize];
    let examples: Vec<String> = a
        .duplicates
        .members(set)
        .iter()
        .take(EXAMPLES)
        .map(|&m| dump.id_hex(ObjectIdx(m)))
        .collect();
    json!({
        "set": set,
        "type": &*dump.type_names[s.type_index as usize],
        "instances": a.duplicates.members(set).len(),
        "instance_bytes": s.instance_bytes,
        "objects_per_copy": s.objects_per_copy,
        "additional_bytes": s.additional_bytes,
        "trivial": s.trivial(),
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
    let sets: Vec<u32> = match type_name {
        None => (0..a.duplicates.sets.len() as u32).collect(),
        Some(name) => {
            let t = super::parse_type(dump, name)?;
            let t = t.index() as u32;
            a.duplicates
                .numbered()
                .filter(|(_, s)| s.type_index == t)
                .map(|(i, _)| i)
                .collect()
        }
    };
    let range = window(sets.len(), offset, limit)?;
    let rows = sets[range.clone()].iter().map(|&i| set_row(a, i)).collect();
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
    let Some(set) = u32::try_from(set)
        .ok()
        .filter(|&i| (i as usize) < sets.len())
    else {
        return Err(Refusal::new(format!(
            "no duplicate set {set}: the sets are numbered 0 to {} (the duplicates tool lists them)",
            sets.len().saturating_sub(1)
        )));
    };
    let held_by: Vec<Value> = a
        .duplicates
        .held_by(set)
        .iter()
        .take(20)
        .map(|&h| json!({"set": h, "type": &*a.dump().type_names[sets[h as usize].type_index as usize]}))
        .collect();
    let members = a.duplicates.members(set);
    let range = window(members.len(), offset, limit)?;
    let rows = members[range.clone()]
        .iter()
        .map(|&m| object_ref(a, ObjectIdx(m)))
        .collect();
    Ok(Page::new("members", rows, range.start, members.len())
        .with("set", set_row(a, set))
        .with("held_by", held_by)
        .with("held_by_total", a.duplicates.held_by(set).len())
        .with(
            "next",
            "object with a member's id shows the copy and who retains it",
        )
        .finish())
}
