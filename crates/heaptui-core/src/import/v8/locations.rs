//! The `locations` array → where each closure was defined: its script's
//! name and its line. A record is `snapshot.meta.location_fields` numbers
//! (V8 writes `object_index, script_id, line, column`, the line 0-based);
//! `object_index` is the node's offset in the nodes array. The script's
//! name is found through the closure's references as V8 lays them out:
//! closure → `shared` (its SharedFunctionInfo) → `script_or_debug_info`
//! (or `script`) → the Script, whose `name` string (else its own node
//! name) is the file's path or URL.

use rayon::prelude::*;

use super::meta::{LocationFields, Meta, NodeClass};
use super::nodes::{Nodes, NO_STRING, UNKNOWN_KIND};
use super::numbers::{Extent, Scan, ScanError};
use super::strings::Pool;
use crate::import::source::Source;
use crate::progress::Progress;

/// Where a closure was defined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Defined {
    pub object: u32,
    /// The script name's string index.
    pub script: u32,
    /// 0-based, as in the snapshot.
    pub line: u32,
}

/// The records of the `locations` array within `array` whose object is a
/// closure, as `(object, line)`, in file order.
pub fn read(
    bytes: &[u8],
    array: super::layout::NumberArray,
    (lf, meta, nodes): (LocationFields, &Meta, &Nodes),
    chunk_size: usize,
    source: &Source,
    progress: &Progress,
) -> Result<Vec<(u32, u32)>, ScanError> {
    let node_fields = meta.node_fields.len() as u64;
    let is_closure = |o: u64| {
        let k = nodes.kinds.get(o as usize).copied().unwrap_or(UNKNOWN_KIND);
        k != UNKNOWN_KIND && meta.node_classes[k as usize] == NodeClass::Function
    };
    let scan = Scan {
        bytes,
        extent: Extent::Known(array),
        fields: lf.fields,
        chunk_size,
        source,
        progress,
    };
    let mut all = Vec::new();
    scan.run(
        |c, part: &mut Vec<(u32, u32)>| {
            part.clear();
            for _ in 0..c.records {
                let rec = c.record()?;
                let (at, line) = (rec[lf.object], rec[lf.line]);
                // Node 0 is the synthetic root, not an object.
                if at == 0 || !at.is_multiple_of(node_fields) || line >= u32::MAX as u64 {
                    continue;
                }
                let object = at / node_fields - 1;
                if is_closure(object) {
                    part.push((object as u32, line as u32));
                }
            }
            Ok(())
        },
        |part| all.append(part),
    )?;
    Ok(all)
}

/// Each located closure's script (closures whose script is not found, or
/// has no name, are left out), one per closure (the first record).
pub fn resolve(
    mut located: Vec<(u32, u32)>,
    nodes: &Nodes,
    edges: &super::edges::Edges,
    meta: &Meta,
    pool: &Pool,
) -> Vec<Defined> {
    located.sort_by_key(|&(o, _)| o);
    located.dedup_by_key(|&mut (o, _)| o);
    let out = |o: u32| {
        let offsets = &edges.offsets;
        let (s, e) = match (o as usize) < offsets.len().saturating_sub(1) {
            true => (
                offsets.get(o as usize) as usize,
                offsets.get(o as usize + 1) as usize,
            ),
            false => (0, 0),
        };
        let (s, e) = (s.min(edges.targets.len()), e.min(edges.targets.len()));
        let row = edges.raw_labels.row(s, s..e.max(s));
        edges.targets[s..e.max(s)].iter().zip(row.iter())
    };
    let is_string = |l: u32| l != crate::model::Labels::NONE && l < 1 << 31;
    let follow = |o: u32, names: &[&[u8]]| {
        out(o)
            .find(|&(_, l)| is_string(l) && names.contains(&pool.bytes_of(l as usize)))
            .map(|(&t, _)| t)
    };
    let is_text = |o: u32| match nodes.kinds.get(o as usize) {
        Some(&k) if k != UNKNOWN_KIND => meta.node_classes[k as usize] == NodeClass::Text,
        _ => false,
    };
    let name_of = |o: u32| nodes.names.get(o as usize).copied().unwrap_or(NO_STRING);
    let named = |s: u32| s != NO_STRING && !pool.bytes_of(s as usize).is_empty();
    located
        .par_iter()
        .filter_map(|&(object, line)| {
            // Spilled arrays read at random: kept within the budget.
            crate::mem::pace();
            let shared = follow(object, &[b"shared"])?;
            let script = follow(shared, &[b"script_or_debug_info", b"script"])?;
            let name = follow(script, &[b"name"])
                .filter(|&n| is_text(n))
                .map(name_of)
                .filter(|&s| named(s))
                .unwrap_or_else(|| name_of(script));
            named(name).then_some(Defined {
                object,
                script: name,
                line,
            })
        })
        .collect()
}

/// How DevTools names a script: the last part of its path or URL.
pub fn short_name(script: &str) -> &str {
    let trimmed = script.trim_end_matches(['/', '\\']);
    match trimmed.rfind(['/', '\\']) {
        Some(i) => &trimmed[i + 1..],
        None => trimmed,
    }
}

#[cfg(test)]
mod tests {
    use super::short_name;

    #[test]
    fn a_script_is_named_by_the_last_part_of_its_path() {
        assert_eq!(short_name("/srv/app/server.js"), "server.js");
        assert_eq!(short_name("file:///C:/app/lib/audit.mjs"), "audit.mjs");
        assert_eq!(short_name("C:\\app\\main.js"), "main.js");
        assert_eq!(short_name("node:internal/timers"), "timers");
        assert_eq!(short_name("server.js"), "server.js");
        assert_eq!(short_name("https://example.com/app/"), "app");
    }
}
