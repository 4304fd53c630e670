//! `dominators` and `dominator_group`: the dominator tree as the
//! Dominators pane shows it, children grouped by type (`N × Type`, a Java
//! class object by its class), groups by retained bytes; then the members
//! of one group, largest first.

use serde_json::{json, Value};

use heaptui_core::analysis::domination_path;
use heaptui_core::analysis::{group_children_unsorted, largest_members};
use heaptui_core::analysis::{Analysis, Group};
use heaptui_core::model::ObjectIdx;

use super::{object_ref, parse_id, parse_type};
use crate::page::{window, Page, Refusal};
use crate::state::Loaded;

/// Members named in each group's row.
const LARGEST: usize = 3;

/// The node whose children are asked for: an object, or the tree's top.
fn parent_of(a: &Analysis, parent: Option<&str>) -> Result<u32, Refusal> {
    let Some(id) = parent else {
        return Ok(a.dom.super_root());
    };
    let o = parse_id(a.dump(), id)?;
    if !a.dom.is_reachable(o.raw()) {
        return Err(Refusal::new(format!(
            "object {} is unreachable (no strong root reaches it): it has no place in the dominator tree",
            a.dump().id_hex(o)
        )));
    }
    Ok(o.raw())
}

/// The head naming the parent: `top` or the object and its type path
/// (row types, root-most first).
fn parent_head(a: &Analysis, parent: u32) -> Value {
    if parent == a.dom.super_root() {
        return json!("the top of the tree (objects only GC roots retain)");
    }
    let dump = a.dump();
    let mut path = domination_path(&a.dom, ObjectIdx(parent));
    path.reverse();
    let mut head = object_ref(a, ObjectIdx(parent));
    head["type_path"] = path.iter().map(|&o| dump.row_type_name(o)).collect();
    head
}

fn group_row(a: &Analysis, g: &Group) -> Value {
    let dump = a.dump();
    let largest: Vec<Value> = largest_members(&a.dom, &g.members, LARGEST)
        .into_iter()
        .map(|m| object_ref(a, ObjectIdx(m)))
        .collect();
    json!({
        "type": dump.name_of_type(g.type_index),
        "count": g.members.len(),
        "retained_bytes": g.retained_bytes,
        "retained_objects": g.retained_objects,
        "largest": largest,
    })
}

/// A page of the groups of `parent`'s children (the top of the tree when
/// `None`).
pub fn dominators(
    l: &Loaded,
    parent: Option<&str>,
    offset: Option<u64>,
    limit: Option<u64>,
) -> Result<Value, Refusal> {
    let a = &l.analysis;
    let p = parent_of(a, parent)?;
    let groups = group_children_unsorted(a.dump(), &a.dom, &[p]);
    let range = window(groups.len(), offset, limit)?;
    let rows = groups[range.clone()]
        .iter()
        .map(|g| group_row(a, g))
        .collect();
    Ok(Page::new("groups", rows, range.start, groups.len())
        .with("parent", parent_head(a, p))
        .with(
            "next",
            "dominators with parent = a member's id opens it; dominator_group with the group's type lists every member",
        )
        .finish())
}

/// A page of the members of one group of `parent`'s children, largest
/// retained first.
pub fn group(
    l: &Loaded,
    parent: Option<&str>,
    type_name: &str,
    offset: Option<u64>,
    limit: Option<u64>,
) -> Result<Value, Refusal> {
    let a = &l.analysis;
    let p = parent_of(a, parent)?;
    let t = parse_type(a.dump(), type_name)?;
    let groups = group_children_unsorted(a.dump(), &a.dom, &[p]);
    let Some(g) = groups.iter().find(|g| g.type_index == t) else {
        return Err(Refusal::new(
            "no group of that type among the node's children; the dominators tool lists its groups",
        ));
    };
    let range = window(g.members.len(), offset, limit)?;
    let top = largest_members(&a.dom, &g.members, range.end);
    let rows = top[range.clone()]
        .iter()
        .map(|&m| object_ref(a, ObjectIdx(m)))
        .collect();
    Ok(Page::new("members", rows, range.start, g.members.len())
        .with("parent", parent_head(a, p))
        .with("group", group_row(a, g))
        .with("next", "object with a member's id shows it in full")
        .finish())
}
