//! What a cut would free (docs/analyses.md, "What a cut would free"): take
//! some references (edges) or some objects out of the heap, recompute what
//! the strong roots reach, and list what they reached before but no longer
//! do, grouped by row type. Exact, and local where it can be: every object
//! a cut frees is dominated by the nearest common dominator of the cut's
//! targets, and everything that dominator reaches after the cut is reached
//! from it inside its dominator subtree, so only that subtree is walked
//! (the whole reachable heap when the common dominator is the super-root).
//! The sets are bitmaps; the walk polls `progress` for a cancel.

use std::collections::HashMap;

use fixedbitset::FixedBitSet;

use crate::graph::{DominatorTree, HeapGraph, NOT_NUMBERED, NOT_REACHABLE, SUPER_ROOT};
use crate::model::{Label, Model, ObjectIdx, TypeIdx, CLASS_ROW_PREFIX};
use crate::progress::{Cancelled, Progress, Stage};

/// What is taken out of the heap.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cut {
    /// Objects taken out (each is freed itself, if a strong root reaches it).
    pub objects: Vec<ObjectIdx>,
    /// References dropped: positions in `Model::refs.targets` (the objects
    /// they point at stay, and are freed only if nothing else holds them).
    pub edges: Vec<u64>,
}

impl Cut {
    /// Whether the cut takes nothing out.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty() && self.edges.is_empty()
    }
}

/// The freed objects of one row type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FreedType {
    /// The row type ([`Model::row_type`]).
    pub type_index: TypeIdx,
    /// Objects of the type that would be freed.
    pub objects: u64,
    /// Their shallow bytes.
    pub bytes: u64,
}

/// What a cut would free.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WhatIf {
    /// Objects reachable now that would no longer be (a cut object
    /// included).
    pub objects: u64,
    /// Their shallow bytes.
    pub bytes: u64,
    /// The freed objects by row type, most bytes first (then most objects,
    /// then type index).
    pub by_type: Vec<FreedType>,
    /// The freed objects, ascending.
    pub freed: Vec<ObjectIdx>,
}

/// What `cut` would free (module doc). Positions past the references and
/// objects past the heap are ignored; so are cut references from objects no
/// strong root reaches (dropping them changes nothing).
pub fn what_if(
    graph: &HeapGraph,
    dom: &DominatorTree,
    cut: &Cut,
    progress: &Progress,
) -> Result<WhatIf, Cancelled> {
    let _span = tracing::debug_span!(target: "heaptui::profile", "what_if").entered();
    let n = graph.objects();
    let refs = &graph.dump.refs;
    let mut blocked = FixedBitSet::with_capacity(n);
    let mut dropped = FixedBitSet::with_capacity(refs.edges());
    let mut targets: Vec<u32> = Vec::new();
    for &o in &cut.objects {
        if o.index() < n {
            blocked.insert(o.index());
            if dom.is_reachable(o.raw()) {
                targets.push(o.raw());
            }
        }
    }
    for &e in &cut.edges {
        let Some(from) = source_of(graph, e) else {
            continue;
        };
        dropped.insert(e as usize);
        if dom.is_reachable(from.raw()) {
            targets.push(refs.targets.get(e as usize));
        }
    }
    if targets.is_empty() {
        return Ok(WhatIf::default());
    }
    let top = walk_top(dom, &targets);
    let region = Region::of(graph, dom, top);
    tracing::debug!(target: "heaptui::profile", region = region.len(), whole = top == SUPER_ROOT);
    progress.start(Stage::Done, region.len().max(1) as u64);
    let reached = region.walk(graph, &blocked, &dropped, progress)?;
    progress.set_done(region.len() as u64);
    Ok(freed(&graph.dump, &region, &reached))
}

/// The object whose `edge`-th reference (position in `refs.targets`) it is;
/// `None` past the references.
pub fn source_of(graph: &HeapGraph, edge: u64) -> Option<ObjectIdx> {
    let refs = &graph.dump.refs;
    if edge >= refs.edges() as u64 {
        return None;
    }
    // The last object whose references start at or before `edge` (a
    // binary search: the offsets ascend).
    let (mut i, mut hi) = (0usize, graph.objects());
    while i < hi {
        let mid = i + (hi - i) / 2;
        if refs.offset(mid) <= edge {
            i = mid + 1;
        } else {
            hi = mid;
        }
    }
    Some(ObjectIdx::from_usize(i.checked_sub(1)?))
}

/// Where the walk starts: the nearest common dominator of `targets` that is
/// none of them (it keeps every way it is reached), or the super-root. The
/// walks up the dominator tree are bounded; past the bound, the super-root
/// (exact still, only slower).
fn walk_top(dom: &DominatorTree, targets: &[u32]) -> u32 {
    const BUDGET: usize = 1 << 22;
    let mut steps = 0usize;
    let mut chain = vec![targets[0]];
    while let Some(&x) = chain.last() {
        let up = dom.idom.get(x as usize);
        if up == SUPER_ROOT || up == NOT_REACHABLE || steps > BUDGET {
            break;
        }
        chain.push(up);
        steps += 1;
    }
    if steps > BUDGET {
        return SUPER_ROOT;
    }
    let at: HashMap<u32, usize> = chain.iter().enumerate().map(|(i, &x)| (x, i)).collect();
    let mut lowest = 0usize;
    for &t in &targets[1..] {
        let mut x = t;
        loop {
            if let Some(&i) = at.get(&x) {
                lowest = lowest.max(i);
                break;
            }
            steps += 1;
            x = dom.idom.get(x as usize);
            if x == SUPER_ROOT || x == NOT_REACHABLE || steps > BUDGET {
                return SUPER_ROOT;
            }
        }
    }
    // A target that is the common dominator may be freed itself: start
    // above it. Every other target is strictly below, so its dominator is
    // none of them.
    let top = chain[lowest];
    if targets.contains(&top) {
        match dom.idom.get(top as usize) {
            NOT_REACHABLE => SUPER_ROOT,
            up => up,
        }
    } else {
        top
    }
}

/// The objects a walk may reach and may free: the dominator subtree of the
/// top (its objects listed, and a bitmap), or every reachable object
/// (`objects` and `inside` then `None`).
struct Region<'a> {
    top: u32,
    dom: &'a DominatorTree,
    objects: Option<Vec<u32>>,
    inside: Option<FixedBitSet>,
}

impl<'a> Region<'a> {
    fn of(graph: &HeapGraph, dom: &'a DominatorTree, top: u32) -> Region<'a> {
        if top == SUPER_ROOT {
            return Region {
                top,
                dom,
                objects: None,
                inside: None,
            };
        }
        let mut inside = FixedBitSet::with_capacity(graph.objects());
        // The subtree: the objects numbered in the top's range.
        let objects = match dom.preorder_number.get(top as usize) {
            NOT_NUMBERED => vec![top],
            first => {
                let first = first as usize;
                let end = first + dom.retained_objects(top as usize) as usize;
                dom.at_preorder.range(first..end).collect()
            }
        };
        for &x in &objects {
            inside.insert(x as usize);
        }
        Region {
            top,
            dom,
            objects: Some(objects),
            inside: Some(inside),
        }
    }

    fn len(&self) -> usize {
        match &self.objects {
            Some(objects) => objects.len(),
            None => self.dom.reachable_objects as usize,
        }
    }

    /// Its objects not in `reached`, ascending.
    fn not_in(&self, reached: &FixedBitSet) -> Vec<ObjectIdx> {
        let mut out: Vec<ObjectIdx> = match &self.objects {
            Some(objects) => objects
                .iter()
                .filter(|&&o| !reached.contains(o as usize))
                .map(|&o| ObjectIdx(o))
                .collect(),
            None => (0..self.dom.idom.len() as u32)
                .filter(|&o| self.dom.is_reachable(o) && !reached.contains(o as usize))
                .map(ObjectIdx)
                .collect(),
        };
        out.sort_unstable();
        out
    }

    /// What the walk reaches from the top (or the strong roots) inside the
    /// region, entering no blocked object and following no dropped
    /// reference.
    fn walk(
        &self,
        graph: &HeapGraph,
        blocked: &FixedBitSet,
        dropped: &FixedBitSet,
        progress: &Progress,
    ) -> Result<FixedBitSet, Cancelled> {
        let refs = &graph.dump.refs;
        let mut seen = blocked.clone();
        let mut stack: Vec<u32> = Vec::new();
        let starts: &[u32] = if self.top == SUPER_ROOT {
            graph.strong_roots_raw()
        } else {
            std::slice::from_ref(&self.top)
        };
        for &r in starts {
            if !seen.put(r as usize) {
                stack.push(r);
            }
        }
        let mut visited = 0u64;
        while let Some(v) = stack.pop() {
            visited += 1;
            if visited.is_multiple_of(1 << 16) {
                progress.set_done(visited);
                progress.check()?;
            }
            let start = refs.offset(v as usize) as usize;
            for (k, w) in refs.neighbors(v).iter().enumerate() {
                if dropped.contains(start + k)
                    || self
                        .inside
                        .as_ref()
                        .is_some_and(|s| !s.contains(w as usize))
                {
                    continue;
                }
                if !seen.put(w as usize) {
                    stack.push(w);
                }
            }
        }
        seen.difference_with(blocked);
        Ok(seen)
    }
}

/// The region's objects the walk did not reach, counted by row type.
fn freed(dump: &Model, region: &Region, reached: &FixedBitSet) -> WhatIf {
    let freed = region.not_in(reached);
    // One row per type (row types are type names too), kept where used.
    let mut rows: Vec<FreedType> = (0..dump.type_names.len())
        .map(|t| FreedType {
            type_index: TypeIdx::from_usize(t),
            objects: 0,
            bytes: 0,
        })
        .collect();
    let mut bytes = 0u64;
    for &o in &freed {
        let size = dump.size_of(o);
        bytes += size;
        let row = &mut rows[dump.row_type(o).index()];
        row.objects += 1;
        row.bytes += size;
    }
    let mut by_type: Vec<FreedType> = rows.into_iter().filter(|r| r.objects > 0).collect();
    by_type.sort_by(|a, b| {
        (b.bytes, b.objects, a.type_index).cmp(&(a.bytes, a.objects, b.type_index))
    });
    WhatIf {
        objects: freed.len() as u64,
        bytes,
        by_type,
        freed,
    }
}

/// Why a `Type.field` cut cannot be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldCutError {
    /// The dump's format records no field names (text dumps, gcdump).
    NoFieldNames,
    /// No type of that name, nor of any prefix of it before a dot.
    NoType(String),
    /// The type exists, but no instance has a reference by that name; the
    /// names its instances' references do have (at most 20).
    NoField {
        /// The type's name.
        type_name: String,
        /// The field asked for.
        field: String,
        /// Reference names seen on the type's instances.
        known: Vec<String>,
    },
}

impl std::fmt::Display for FieldCutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FieldCutError::NoFieldNames => write!(
                f,
                "this dump's format records no field names (only HPROF and V8 snapshots do)"
            ),
            FieldCutError::NoType(s) => write!(
                f,
                "no type named '{s}' (without its last '.field'); write Type.field with the type's full name"
            ),
            FieldCutError::NoField {
                type_name,
                field,
                known,
            } => {
                write!(f, "no instance of {type_name} has a reference named '{field}'")?;
                if known.is_empty() {
                    write!(f, " (its instances hold no named references)")
                } else {
                    write!(f, "; its references are named: {}", known.join(", "))
                }
            }
        }
    }
}

impl std::error::Error for FieldCutError {}

/// The cut of `spec` = `Type.field`: the reference named `field` of every
/// instance of the type named `Type` (exactly; not its subtypes), and of
/// its Java class object (a static field, `Leaky.LEAK`). The type is the
/// longest prefix before a dot that names a type (or a Java class), so type
/// names with dots (`java.util.HashMap.table`) work. Returns the type's
/// name, the field and the cut.
pub fn field_cut(dump: &Model, spec: &str) -> Result<(String, String, Cut), FieldCutError> {
    let labels = dump.labels.as_ref().ok_or(FieldCutError::NoFieldNames)?;
    let (ty, class_ty, field) = split_type_field(dump, spec)?;
    // A Java class's statics are its class object's references.
    let of_type = |o: ObjectIdx| {
        Some(dump.type_of(o)) == ty || class_ty.is_some_and(|c| dump.row_type(o) == c)
    };
    let mut edges = Vec::new();
    let mut known: Vec<String> = Vec::new();
    for o in dump.object_indices().filter(|&o| of_type(o)) {
        let start = dump.refs.offset(o.index());
        for k in 0..dump.refs_of(o).len() {
            let e = start + k as u64;
            match labels.get(start as usize, e as usize) {
                Some(Label::Name(name)) if name == field => edges.push(e),
                Some(Label::Name(name)) if known.len() < 20 && !known.iter().any(|k| k == name) => {
                    known.push(name.to_string())
                }
                _ => {}
            }
        }
    }
    let type_name = spec[..spec.len() - field.len() - 1].to_string();
    if edges.is_empty() {
        return Err(FieldCutError::NoField {
            type_name,
            field: field.to_string(),
            known,
        });
    }
    let cut = Cut {
        objects: Vec::new(),
        edges,
    };
    Ok((type_name, field.to_string(), cut))
}

/// `Type.field` split at the last dot before which the spec names a type
/// or a Java class (`class Type`): the type, the class's row type, the
/// field.
type Split<'s> = (Option<TypeIdx>, Option<TypeIdx>, &'s str);

fn split_type_field<'s>(dump: &Model, spec: &'s str) -> Result<Split<'s>, FieldCutError> {
    let names: HashMap<&str, usize> = dump
        .type_names
        .iter()
        .enumerate()
        .map(|(i, n)| (&**n, i))
        .collect();
    for (dot, _) in spec.rmatch_indices('.') {
        let (ty, field) = (&spec[..dot], &spec[dot + 1..]);
        if field.is_empty() {
            continue;
        }
        let of = |name: &str| names.get(name).map(|&i| TypeIdx::from_usize(i));
        let (plain, class) = (of(ty), of(&format!("{CLASS_ROW_PREFIX}{ty}")));
        if plain.is_some() || class.is_some() {
            return Ok((plain, class, field));
        }
    }
    let ty = spec.rsplit_once('.').map_or(spec, |(t, _)| t);
    Err(FieldCutError::NoType(ty.to_string()))
}
