//! A type's instances in a sort order, computed off the UI thread by the
//! worker's `Job::Instances`: the type → objects index ([`TypeObjects`],
//! built once per dump and handed back for the next request), then the
//! gather and the sort of one type's objects (O(k log k) for k instances),
//! with the column maxima the list's widths need. Imports the graph and the
//! model only.

use std::sync::Arc;

use heaptui_core::graph::DominatorTree;
use heaptui_core::model::Model;
use heaptui_core::model::{ObjectIdx, TypeIdx, TypeWord};

/// The objects of every type, grouped by type (compressed rows: the
/// objects of type `t` are `objects[starts[t]..starts[t + 1]]`, in dump
/// order). Built once per dump in two passes over the objects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TypeObjects {
    starts: Vec<u32>,
    objects: Vec<u32>,
}

impl TypeObjects {
    /// `types[o]` is the type of object `o`, below `type_count`.
    pub fn build<W: TypeWord>(types: &[W], type_count: usize) -> TypeObjects {
        let mut starts = vec![0u32; type_count + 1];
        for &t in types {
            starts[t.index() + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut next = starts.clone();
        let mut objects = vec![0u32; types.len()];
        for (o, &t) in types.iter().enumerate() {
            let slot = &mut next[t.index()];
            objects[*slot as usize] = o as u32;
            *slot += 1;
        }
        TypeObjects { starts, objects }
    }

    /// The objects of type `t`, in dump order.
    pub fn of(&self, t: TypeIdx) -> &[u32] {
        let t = t.index();
        match (self.starts.get(t), self.starts.get(t + 1)) {
            (Some(&a), Some(&b)) => &self.objects[a as usize..b as usize],
            _ => &[],
        }
    }
}

/// The column that orders a type's instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstanceKey {
    Object,
    Shallow,
    Retained,
}

/// A type's instances in one order, as the job delivers them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceRows {
    pub type_index: TypeIdx,
    pub key: InstanceKey,
    pub descending: bool,
    /// The index the rows came from (kept for the next request).
    pub index: Arc<TypeObjects>,
    /// The instances in the order asked for; ties in dump order.
    pub rows: Vec<ObjectIdx>,
    pub max_shallow: u64,
    pub max_retained: u64,
}

/// Retained bytes of an object; an unreachable one retains nothing.
pub fn retained(dom: Option<&DominatorTree>, o: u32) -> u64 {
    match dom {
        Some(d) if d.is_reachable(o) => d.retained_bytes(o as usize),
        _ => 0,
    }
}

/// The instances of `type_index` ordered by `key` (the index is built
/// first when `index` is `None`). O(objects) for the index, once; then
/// O(k log k).
pub fn instance_rows(
    type_index: TypeIdx,
    key: InstanceKey,
    descending: bool,
    index: Option<Arc<TypeObjects>>,
    dump: &Model,
    dom: &DominatorTree,
) -> InstanceRows {
    let index = index.unwrap_or_else(|| {
        let count = dump.type_names.len();
        Arc::new(heaptui_core::model::with_types!(&dump.types, |types| {
            TypeObjects::build(types, count)
        }))
    });
    let objects = index.of(type_index);
    let mut max_shallow = 0;
    let mut max_retained = 0;
    for &o in objects {
        max_shallow = max_shallow.max(dump.sizes.get(o as usize));
        max_retained = max_retained.max(retained(Some(dom), o));
    }
    // The objects come in dump order and the sort is stable: ties keep it.
    let mut rows = ObjectIdx::cast_slice(objects).to_vec();
    let value = |o: ObjectIdx| match key {
        InstanceKey::Object => o.raw() as u64,
        InstanceKey::Shallow => dump.sizes.get(o.index()),
        InstanceKey::Retained => retained(Some(dom), o.raw()),
    };
    if descending {
        rows.sort_by_cached_key(|&o| std::cmp::Reverse(value(o)));
    } else {
        rows.sort_by_cached_key(|&o| value(o));
    }
    InstanceRows {
        type_index,
        key,
        descending,
        index,
        rows,
        max_shallow,
        max_retained,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_objects_groups_objects_by_type_in_dump_order() {
        let types = [2u8, 0, 2, 1, 2, 0];
        let t = TypeObjects::build(&types, 4);
        assert_eq!(t.of(TypeIdx(0)), &[1, 5]);
        assert_eq!(t.of(TypeIdx(1)), &[3]);
        assert_eq!(t.of(TypeIdx(2)), &[0, 2, 4]);
        assert_eq!(t.of(TypeIdx(3)), &[] as &[u32]);
        assert_eq!(t.of(TypeIdx(9)), &[] as &[u32]);
    }
}
