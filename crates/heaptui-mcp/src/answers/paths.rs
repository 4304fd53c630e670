//! `merged_paths`: why a set of objects is alive (docs/analyses.md,
//! "Merged paths to the roots"), the objects of the types a pattern
//! matches (as the report's `--paths`) or a list of ids; the merged tree
//! of their shortest paths from the GC roots, depth first (a node's
//! children most objects first), paged, each node with its place in the
//! whole order, its parent's place, and an object on it.

use serde_json::{json, Value};

use heaptui_core::analysis::{merged_paths, MergedPaths, Step};
use heaptui_core::analysis::{objects_of_types, Glob};
use heaptui_core::model::{Model, ObjectIdx};
use heaptui_core::progress::Progress;

use super::{check_pattern, parse_id, quoted};
use crate::page::{window, Page, Refusal};
use crate::state::Loaded;

/// Object ids one call may name.
pub const MAX_OBJECTS: usize = 1000;

/// Which objects' paths: the instances of the types a glob matches, or
/// ids.
pub enum Targets<'a> {
    /// A glob over type names (`*Listener`, `java.util.HashMap`).
    Pattern(&'a str),
    /// Object ids (hex).
    Objects(&'a [String]),
}

/// The merged paths of `targets`, leaving out the objects of types `skip`
/// matches; a page of the nodes depth first. The search stops when
/// `progress` is cancelled.
pub fn paths(
    l: &Loaded,
    targets: Targets,
    skip: Option<&str>,
    progress: &Progress,
    offset: Option<u64>,
    limit: Option<u64>,
) -> Result<Value, Refusal> {
    let a = &l.analysis;
    let dump = a.dump();
    let (set, asked) = target_objects(dump, targets)?;
    let exclude: Vec<Glob> = match skip {
        Some(s) => {
            check_pattern(s)?;
            vec![Glob::new(s)]
        }
        None => Vec::new(),
    };
    let m = merged_paths(&a.graph, &a.dom, &set, &exclude, progress)
        .map_err(|_| Refusal::new("cancelled"))?;
    let order = m.depth_first();
    let mut place = vec![0u32; m.nodes.len()];
    for (k, &i) in order.iter().enumerate() {
        place[i as usize] = k as u32;
    }
    let range = window(order.len(), offset, limit)?;
    let rows = order[range.clone()]
        .iter()
        .map(|&i| node_row(dump, &m, &place, i))
        .collect();
    Ok(Page::new("nodes", rows, range.start, order.len())
        .with("asked", asked)
        .with("skip", skip)
        .with("targets", m.targets)
        .with("unreachable", m.unreachable)
        .with(
            "next",
            "nodes are depth first: parent is the place of the node a node extends; object with a node's id shows an object on that path (object_list retention_path its own path)",
        )
        .finish())
}

/// The objects `targets` names, and how they were asked for.
fn target_objects(dump: &Model, targets: Targets) -> Result<(Vec<ObjectIdx>, Value), Refusal> {
    match targets {
        Targets::Pattern(p) => {
            check_pattern(p)?;
            let set = objects_of_types(dump, &Glob::new(p));
            if set.is_empty() {
                return Err(Refusal::new(format!(
                    "no object's type matches {}; patterns are globs over exact type names (* any run, ? one character), as the types tool names them",
                    quoted(p)
                )));
            }
            Ok((set, json!({"type_pattern": p})))
        }
        Targets::Objects(ids) => {
            if ids.is_empty() || ids.len() > MAX_OBJECTS {
                return Err(Refusal::new(format!("give 1 to {MAX_OBJECTS} object ids")));
            }
            let set = ids
                .iter()
                .map(|id| parse_id(dump, id))
                .collect::<Result<Vec<_>, _>>()?;
            Ok((set, json!({"objects": ids.len()})))
        }
    }
}

/// Node `i` of `m` as a row: `place` gives each node's place depth first.
fn node_row(dump: &Model, m: &MergedPaths, place: &[u32], i: u32) -> Value {
    let n = &m.nodes[i as usize];
    json!({
        "node": place[i as usize],
        "parent": (i != 0).then(|| place[n.parent as usize]),
        "depth": n.depth,
        "kind": match n.step {
            Step::All => "all",
            Step::Root(_) => "root",
            Step::Type(_) => "type",
        },
        "name": n.step.name(dump),
        "objects": n.count,
        "ending": n.ending,
        "retained_bytes": n.retained_bytes,
        "id": n.object.map(|o| dump.id_hex(o)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::state::tests::demo;

    #[test]
    fn a_cancelled_call_stops_its_search() {
        let l = demo();
        let progress = Progress::new();
        let all = paths(&l, Targets::Pattern("*"), None, &progress, None, None).unwrap();
        assert_eq!(all["nodes"][0]["kind"], "all");
        assert!(all["targets"].as_u64().unwrap() > 0);
        progress.cancel();
        let cancelled = paths(&l, Targets::Pattern("*"), None, &progress, None, None);
        assert_eq!(cancelled, Err(Refusal::new("cancelled")));
    }

    #[test]
    fn the_nodes_name_their_parents_places() {
        let l = demo();
        let v = paths(
            &l,
            Targets::Pattern("*"),
            None,
            &Progress::new(),
            None,
            Some(200),
        )
        .unwrap();
        let nodes = v["nodes"].as_array().unwrap();
        for (k, n) in nodes.iter().enumerate().skip(1) {
            let parent = n["parent"].as_u64().unwrap() as usize;
            assert!(parent < k, "a parent comes first");
            assert_eq!(nodes[parent]["depth"].as_u64().unwrap() + 1, n["depth"]);
            assert!(nodes[parent]["objects"].as_u64() >= n["objects"].as_u64());
        }
    }
}
