//! The facts every view shows first, computed once: totals, reachability,
//! roots by kind and flags. The text report, the JSON report and the
//! Overview pane all render this one value.

use super::roots::{held_by_references, HeldByReferences};
use super::TypeStats;
use crate::graph::{DominatorTree, HeapGraph};
use crate::model::{Format, ObjectIdx, Root};

/// Root records of one (kind, flags) pair, by count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootTally {
    /// A [`crate::model::root_kind`] value.
    pub kind: u32,
    /// [`crate::model::root_flags`] bits.
    pub flags: u32,
    /// Root records of the pair.
    pub records: u64,
}

/// An AppDomain section and how many objects it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainTally {
    /// Empty for the implicit section outside any `a … c` pair.
    pub name: String,
    /// Objects in the section.
    pub objects: u64,
}

impl DomainTally {
    /// The name to show: the AppDomain's, or `(outside any AppDomain)` for the implicit section.
    pub fn display_name(&self) -> &str {
        if self.name.is_empty() {
            "(outside any AppDomain)"
        } else {
            &self.name
        }
    }
}

/// The overview of one analysed dump: sizes, reachability, roots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Which importer read the dump.
    pub format: Format,
    /// The dump file's size in bytes, as stored (compressed where gzipped).
    pub file_bytes: u64,
    /// AppDomain sections in file order (the implicit one only when it
    /// holds objects).
    pub app_domains: Vec<DomainTally>,
    /// Objects in the dump.
    pub objects: u64,
    /// References between objects (the graph's edges, dangling ones dropped).
    pub references: u64,
    /// Types with at least one instance (the rows of the Types pane).
    pub types: u64,
    /// Shallow bytes of every object.
    pub total_bytes: u64,
    /// Objects the strong roots reach.
    pub reachable_objects: u64,
    /// Their shallow bytes.
    pub reachable_bytes: u64,
    /// Objects no strong root reaches.
    pub unreachable_objects: u64,
    /// Their shallow bytes.
    pub unreachable_bytes: u64,
    /// Unreachable objects a weak root still reaches, and their bytes.
    pub weakly_held_objects: u64,
    /// Shallow bytes of those weakly held objects.
    pub weakly_held_bytes: u64,
    /// Java heaps: unreachable objects that the referents of soft, weak,
    /// final or phantom references still reach (part of the unreachable
    /// ones), per kind; `None` for formats without reference objects.
    pub held_by_references: Option<HeldByReferences>,
    /// Root records (of objects in the dump).
    pub root_records: u64,
    /// Root records that are strong (not weak).
    pub strong_root_records: u64,
    /// Distinct objects with a root record, and with a strong one.
    pub rooted_objects: u64,
    /// Distinct objects with a strong root record.
    pub strongly_rooted_objects: u64,
    /// Root records by (kind, flags), ascending.
    pub roots_by_kind: Vec<RootTally>,
}

impl Summary {
    /// Computes the summary; `weakly_held` is (objects, bytes) of the unreachable objects weak roots reach.
    pub fn new(
        graph: &HeapGraph,
        dom: &DominatorTree,
        types: &[TypeStats],
        (weakly_held_objects, weakly_held_bytes): (u64, u64),
    ) -> Summary {
        let dump = &graph.dump;
        let total_bytes = dump.total_bytes();
        let roots = &dump.roots;
        let strong = roots.iter().filter(|r| r.is_strong()).count() as u64;
        Summary {
            format: dump.format,
            file_bytes: dump.file_bytes,
            app_domains: dump
                .app_domains
                .iter()
                .filter(|d| !d.is_implicit() || d.objects > 0)
                .map(|d| DomainTally {
                    name: d.name.clone(),
                    objects: d.objects,
                })
                .collect(),
            objects: dump.objects() as u64,
            references: dump.refs.edges() as u64,
            types: types.len() as u64,
            total_bytes,
            reachable_objects: dom.reachable_objects,
            reachable_bytes: dom.reachable_bytes,
            unreachable_objects: (dump.objects() as u64).saturating_sub(dom.reachable_objects),
            unreachable_bytes: total_bytes.saturating_sub(dom.reachable_bytes),
            weakly_held_objects,
            weakly_held_bytes,
            held_by_references: held_by_references(graph, dom),
            root_records: roots.len() as u64,
            strong_root_records: strong,
            rooted_objects: distinct_objects(roots),
            strongly_rooted_objects: graph.strong_roots.len() as u64,
            roots_by_kind: tally(roots),
        }
    }
}

fn distinct_objects(roots: &[Root]) -> u64 {
    let mut rooted: Vec<ObjectIdx> = roots.iter().map(|r| r.object).collect();
    rooted.sort_unstable();
    rooted.dedup();
    rooted.len() as u64
}

fn tally(roots: &[Root]) -> Vec<RootTally> {
    let mut keys: Vec<(u32, u32)> = roots.iter().map(|r| (r.kind, r.flags)).collect();
    keys.sort_unstable();
    keys.chunk_by(|a, b| a == b)
        .map(|run| RootTally {
            kind: run[0].0,
            flags: run[0].1,
            records: run.len() as u64,
        })
        .collect()
}
