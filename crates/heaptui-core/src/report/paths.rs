//! `--paths TYPE_PATTERN`: the merged paths to the roots of the objects of
//! the matching types (docs/analyses.md), in the text report and the JSON
//! contract (docs/json.md's `merged_paths`). The tree is written depth
//! first, a node's children most objects first, so a parent always comes
//! before its children; `--top N` keeps the first N nodes.

use std::io::{self, Write};

use serde::Serialize;

use super::json::{write_array, Hex};
use super::{count, size, PathsQuery, ReportOptions};
use crate::analysis::merged_paths::{merged_paths, path_ids, MergedPaths, PathFigures, Step};
use crate::analysis::{objects_of_types, Analysis, Glob};
use crate::progress::Progress;

/// Text lines of the tree without `--top`.
const TEXT_ROWS: usize = 50;
/// Deeper nodes are not indented further (their depth is printed).
const MAX_INDENT: u32 = 20;

/// The merged paths of the objects of types matching `pattern` (a
/// baseline's too, for the comparison).
pub fn paths_of_types(a: &Analysis, pattern: &Glob, skip: Option<&Glob>) -> (usize, MergedPaths) {
    let set = objects_of_types(a.dump(), pattern);
    let exclude: Vec<Glob> = skip.into_iter().cloned().collect();
    // Nothing cancels the report's progress.
    let m = merged_paths(&a.graph, &a.dom, &set, &exclude, &Progress::new())
        .expect("an uncancelled progress");
    (set.len(), m)
}

/// `--paths` answered: the query and the merged paths of the objects of
/// its types, computed once by the caller (the text and JSON writers only
/// write it).
#[derive(Debug, Clone)]
pub struct PathsAnswer {
    /// The patterns and the baselines' figures.
    pub query: PathsQuery,
    /// Objects of the matching types.
    pub objects: u64,
    /// Their merged paths to the roots.
    pub paths: MergedPaths,
}

impl PathsAnswer {
    /// The merged paths of `query`'s types in `a`.
    pub fn of(a: &Analysis, query: PathsQuery) -> PathsAnswer {
        let (objects, paths) = paths_of_types(a, &query.pattern, query.skip.as_ref());
        PathsAnswer {
            query,
            objects: objects as u64,
            paths,
        }
    }
}

/// The text section, when `--paths` was given.
pub(super) fn write_paths_text(
    out: &mut impl Write,
    a: &Analysis,
    opts: &ReportOptions,
) -> io::Result<()> {
    let Some(p) = opts.paths.as_deref() else {
        return Ok(());
    };
    let (m, q, dump) = (&p.paths, &p.query, a.dump());
    writeln!(out)?;
    writeln!(
        out,
        "Merged paths to the roots of {} objects of `{}` ({} not strongly reachable){}",
        count(p.objects),
        q.pattern.as_str(),
        count(m.unreachable),
        q.skip
            .as_ref()
            .map(|s| format!(", skipping `{}`", s.as_str()))
            .unwrap_or_default()
    )?;
    let growth = Growth::new(m, a, &q.baselines);
    growth.write_most(out, m, a)?;
    writeln!(
        out,
        "  {:>10} {:>12}{}  Path from the roots (an object on it)",
        "Objects",
        "Retained",
        growth.header()
    )?;
    let order = m.depth_first();
    let shown = opts.rows_n(order.len(), TEXT_ROWS);
    for &i in &order[1..shown.max(1)] {
        let n = &m.nodes[i as usize];
        let level = n.depth - 1;
        let indent = "  ".repeat(level.min(MAX_INDENT) as usize);
        let deep = if level > MAX_INDENT {
            format!("[{}] ", n.depth)
        } else {
            String::new()
        };
        let example = n
            .object
            .map(|o| format!("  ({})", dump.id_hex(o)))
            .unwrap_or_default();
        writeln!(
            out,
            "  {:>10} {:>12}{}  {indent}{deep}{}{example}",
            count(n.count),
            size(n.retained_bytes),
            growth.cell(i, n.count),
            n.step.name(dump)
        )?;
    }
    if shown < order.len() {
        writeln!(
            out,
            "  … {} more nodes (--top 0 shows all)",
            count((order.len() - shown) as u64)
        )?;
    }
    Ok(())
}

#[derive(Serialize)]
struct NodeRow<'a> {
    parent: Option<u32>,
    depth: u32,
    kind: &'static str,
    name: &'a str,
    objects: u64,
    ending: u64,
    retained_bytes: u64,
    id: Option<Hex>,
    #[serde(skip_serializing_if = "Option::is_none")]
    objects_by_snapshot: Option<Vec<u64>>,
}

#[derive(Serialize)]
struct Header {
    pattern: String,
    skip: Option<String>,
    objects: u64,
    unreachable: u64,
}

/// The JSON key, when `--paths` was given.
pub(super) fn write_paths_json(
    out: &mut impl Write,
    a: &Analysis,
    opts: &ReportOptions,
) -> io::Result<()> {
    let Some(p) = opts.paths.as_deref() else {
        return Ok(());
    };
    let (m, q, dump) = (&p.paths, &p.query, a.dump());
    let header = Header {
        pattern: q.pattern.as_str(),
        skip: q.skip.as_ref().map(|s| s.as_str()),
        objects: p.objects,
        unreachable: m.unreachable,
    };
    let header = serde_json::to_string(&header).map_err(io::Error::other)?;
    // The header's object, opened again to add the nodes.
    write!(
        out,
        ",\n\"merged_paths\":{},\"nodes\":[",
        &header[..header.len() - 1]
    )?;
    let order = m.depth_first();
    let shown = opts.rows_n(order.len(), order.len());
    // Nodes are numbered by their place in this list.
    let mut place = vec![0u32; m.nodes.len()];
    for (k, &i) in order[..shown].iter().enumerate() {
        place[i as usize] = k as u32;
    }
    let names: Vec<String> = order[..shown]
        .iter()
        .map(|&i| m.nodes[i as usize].step.name(dump))
        .collect();
    let growth = Growth::new(m, a, &q.baselines);
    let rows = order[..shown].iter().zip(&names).map(|(&i, name)| {
        let n = &m.nodes[i as usize];
        NodeRow {
            parent: (i != 0).then(|| place[n.parent as usize]),
            depth: n.depth,
            kind: match n.step {
                Step::All => "all",
                Step::Root(_) => "root",
                Step::Type(_) => "type",
            },
            name,
            objects: n.count,
            ending: n.ending,
            retained_bytes: n.retained_bytes,
            id: n.object.map(|o| Hex(dump.ids.get(o.index()))),
            objects_by_snapshot: growth.by_snapshot(i, n.count),
        }
    });
    write_array(out, rows, true)?;
    out.write_all(b"]}")
}

/// The comparison with older snapshots' merged paths, where there are some.
struct Growth<'a> {
    baselines: &'a [PathFigures],
    /// Per node, its path's identity across snapshots.
    ids: Vec<u64>,
}

impl<'a> Growth<'a> {
    fn new(m: &MergedPaths, a: &Analysis, baselines: &'a [PathFigures]) -> Growth<'a> {
        let ids = if baselines.is_empty() {
            Vec::new()
        } else {
            path_ids(m, a.dump())
        };
        Growth { baselines, ids }
    }

    /// Newest minus oldest objects through node `i` (0 in a snapshot
    /// without the path).
    fn delta(&self, i: u32, objects: u64) -> Option<i128> {
        let oldest = self.baselines.first()?;
        Some(objects as i128 - oldest.objects(self.ids[i as usize]) as i128)
    }

    fn header(&self) -> String {
        match self.baselines.is_empty() {
            true => String::new(),
            false => format!(" {:>12}", "Δ objects"),
        }
    }

    fn cell(&self, i: u32, objects: u64) -> String {
        match self.delta(i, objects) {
            Some(d) => format!(" {:>12}", signed_count(d)),
            None => String::new(),
        }
    }

    /// Objects through node `i` per snapshot, oldest first.
    fn by_snapshot(&self, i: u32, objects: u64) -> Option<Vec<u64>> {
        if self.baselines.is_empty() {
            return None;
        }
        let id = self.ids[i as usize];
        let mut v: Vec<u64> = self.baselines.iter().map(|b| b.objects(id)).collect();
        v.push(objects);
        Some(v)
    }

    /// The line naming the path whose count grew most (the deepest of
    /// equals: where the growth is held).
    fn write_most(&self, out: &mut impl Write, m: &MergedPaths, a: &Analysis) -> io::Result<()> {
        if self.baselines.is_empty() {
            return Ok(());
        }
        let best = (1..m.nodes.len() as u32)
            .filter_map(|i| Some((self.delta(i, m.nodes[i as usize].count)?, i)))
            .max_by_key(|&(d, i)| (d, m.nodes[i as usize].depth, std::cmp::Reverse(i)));
        match best {
            Some((d, i)) if d > 0 => {
                let names: Vec<String> =
                    m.path_of(i).into_iter().map(|s| s.name(a.dump())).collect();
                writeln!(
                    out,
                    "  Grew most since the oldest snapshot: {} objects through {}",
                    signed_count(d),
                    names.join(" / ")
                )
            }
            _ => writeln!(out, "  No path grew since the oldest snapshot"),
        }
    }
}

/// `+1,234`, `-5`, `0`.
fn signed_count(d: i128) -> String {
    let c = count(d.unsigned_abs() as u64);
    match d {
        d if d > 0 => format!("+{c}"),
        d if d < 0 => format!("-{c}"),
        _ => c,
    }
}
