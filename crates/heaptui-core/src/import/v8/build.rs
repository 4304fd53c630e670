//! Names for the model: type names (a node's name for `object` and
//! `native` nodes, else `(<node type>)`), interned reference labels, and
//! string nodes' values. Strings are interned through tables indexed by
//! string index: marked in parallel, numbered in one short sequential pass
//! over the strings used, then applied in parallel.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use rayon::prelude::*;

use super::edge_labels::RawLabels;
use super::locations::{self, Defined};
use super::meta::{Meta, NodeClass};
use super::nodes::{Nodes, NO_STRING, UNKNOWN_KIND};
use super::strings::Pool;
use crate::model::{Csr, LabelCodes, Labels, Side, ValueKind, Values};

const UNUSED: u32 = u32::MAX;

/// Marks a located closure's slot while types are made (no string index
/// reaches it: see [`types`]).
const LOCATED: u32 = u32::MAX - 1;

/// Marks the string indices `used` yields in a table of `len` entries.
fn mark_used(len: usize, used: impl ParallelIterator<Item = u32>) -> Vec<u32> {
    let mut table = vec![UNUSED; len];
    let atomic = crate::mem::as_atomic(&mut table);
    used.for_each(|s| {
        // Stored only once: the same few names (`map`, `properties`) come
        // up everywhere, and every thread storing to their shared cache
        // line would keep moving it between cores.
        if let Some(slot) = atomic.get(s as usize) {
            if slot.load(Ordering::Relaxed) != 0 {
                slot.store(0, Ordering::Relaxed);
            }
        }
    });
    table
}

/// The type names, each object's type written over its name's string
/// index (`of_object`, so
/// the 4 bytes an object take no fresh pages: a first touch of memory is
/// the import's largest single cost).
/// A closure whose place is known (`defined`, sorted by object) is typed
/// by its function's name and place (`audit() server.js:42`, the line
/// 1-based), as DevTools shows and groups it.
pub fn types(
    of_object: &mut [u32],
    kinds: &[u8],
    meta: &Meta,
    pool: &Pool,
    defined: &[Defined],
) -> Vec<Box<str>> {
    let classes = &meta.node_classes;
    // A located closure's name is set aside and its slot marked, so that
    // only closures without a place make a type of their bare name.
    let defined = match pool.len() < LOCATED as usize {
        true => defined,
        false => &[],
    };
    let located: Vec<u32> = defined
        .iter()
        .map(|d| std::mem::replace(&mut of_object[d.object as usize], LOCATED))
        .collect();
    let named = |k: u8| k != UNKNOWN_KIND && classes[k as usize] == NodeClass::Named;
    let mut by_string = mark_used(
        pool.len(),
        kinds
            .par_iter()
            .zip(&*of_object)
            .filter(|&(&k, _)| named(k))
            .map(|(_, &s)| s),
    );
    let mut names = Interner::default();
    let used = used_kinds(kinds, of_object, classes);
    // Kinds past the 255 kept are [`UNKNOWN_KIND`] (see `nodes::read`):
    // a snapshot may declare more node types than `used` has slots.
    let by_kind: Vec<u32> = meta
        .node_types
        .iter()
        .take(UNKNOWN_KIND as usize)
        .enumerate()
        .map(|(k, t)| match used[k] {
            true => names.intern(&format!("({t})")),
            false => UNUSED,
        })
        .collect();
    let unknown_kind = match used[UNKNOWN_KIND as usize] {
        true => names.intern("(unknown node type)"),
        false => UNUSED,
    };
    let unknown_name = match used[257] {
        true => names.intern("(unknown name)"),
        false => UNUSED,
    };
    for (s, slot) in by_string.iter_mut().enumerate() {
        if *slot != UNUSED {
            *slot = names.intern(pool.get(s).unwrap_or(""));
        }
    }
    let function = |k: u8| k != UNKNOWN_KIND && classes[k as usize] == NodeClass::Function;
    let (by_function, anonymous) = function_types(kinds, of_object, classes, pool, &mut names);
    of_object.par_iter_mut().zip(kinds).for_each(|(s, &k)| {
        *s = match k {
            UNKNOWN_KIND => unknown_kind,
            k if named(k) => match by_string.get(*s as usize) {
                Some(&t) => t,
                None => unknown_name,
            },
            k if function(k) && *s == LOCATED => LOCATED,
            k if function(k) => match by_function.get(*s as usize) {
                Some(&t) => t,
                None => anonymous,
            },
            k => by_kind[k as usize],
        }
    });
    type_located(of_object, (defined, &located), pool, &mut names);
    names.names
}

/// Functions: a type per function name, as the pool's strings index them,
/// and the type of functions without a name (`UNUSED` when none).
fn function_types(
    kinds: &[u8],
    of_object: &[u32],
    classes: &[NodeClass],
    pool: &Pool,
    names: &mut Interner,
) -> (Vec<u32>, u32) {
    let function = |k: u8| k != UNKNOWN_KIND && classes[k as usize] == NodeClass::Function;
    let mut by_function = mark_used(
        pool.len(),
        kinds
            .par_iter()
            .zip(of_object)
            .filter(|&(&k, &s)| function(k) && s != LOCATED)
            .map(|(_, &s)| s),
    );
    for (s, slot) in by_function.iter_mut().enumerate() {
        if *slot != UNUSED {
            *slot = names.intern(&function_type(pool.get(s).unwrap_or("")));
        }
    }
    let mut anonymous = UNUSED;
    if kinds
        .par_iter()
        .zip(of_object)
        .any(|(&k, &s)| function(k) && s != LOCATED && by_function.get(s as usize).is_none())
    {
        anonymous = names.intern(&function_type(""));
    }
    (by_function, anonymous)
}

/// Types the closures whose place is known (`located`: their names, set
/// aside). Few closures have places next to the objects (one a function
/// defined, and the leaking ones repeat theirs): a type per distinct name,
/// script and line.
fn type_located(
    of_object: &mut [u32],
    (defined, located): (&[Defined], &[u32]),
    pool: &Pool,
    names: &mut Interner,
) {
    let mut placed: HashMap<(u32, u32, u32), u32> = HashMap::new();
    for (d, &name) in defined.iter().zip(located) {
        let t = *placed.entry((name, d.script, d.line)).or_insert_with(|| {
            let function = function_type(pool.get(name as usize).unwrap_or(""));
            let script = locations::short_name(pool.get(d.script as usize).unwrap_or(""));
            names.intern(&format!("{function} {script}:{}", d.line as u64 + 1))
        });
        of_object[d.object as usize] = t;
    }
}

/// Type names, each once, numbered in the order they first come.
#[derive(Default)]
struct Interner {
    names: Vec<Box<str>>,
    interned: HashMap<Box<str>, u32>,
}

impl Interner {
    fn intern(&mut self, name: &str) -> u32 {
        *self.interned.entry(name.into()).or_insert_with(|| {
            self.names.push(name.into());
            self.names.len() as u32 - 1
        })
    }
}

/// Which node kinds (slots 0..=255, [`UNKNOWN_KIND`] among them) and
/// placeholders (257: a named node without a name) some object has: only
/// those become types. A table per block of objects, not per object: a
/// `fold` that moves its 258-byte table through every step took 110 ms on
/// 20 M objects.
fn used_kinds(kinds: &[u8], of_object: &[u32], classes: &[NodeClass]) -> [bool; 258] {
    const BLOCK: usize = 1 << 16;
    let named = |k: u8| k != UNKNOWN_KIND && classes[k as usize] == NodeClass::Named;
    kinds
        .par_chunks(BLOCK)
        .zip(of_object.par_chunks(BLOCK))
        .map(|(kinds, names)| {
            let mut u = [false; 258];
            for (&k, &s) in kinds.iter().zip(names) {
                let slot = match k {
                    k if named(k) && s == NO_STRING => 257,
                    k if named(k) => continue,
                    // Functions are typed by name (in `types`).
                    k if k != UNKNOWN_KIND && classes[k as usize] == NodeClass::Function => {
                        continue
                    }
                    k => k as usize,
                };
                u[slot] = true;
            }
            u
        })
        .reduce(
            || [false; 258],
            |a, b| std::array::from_fn(|i| a[i] || b[i]),
        )
}

/// The type name of a function named `name`: `name()`, `(anonymous)()`
/// without a name.
pub fn function_type(name: &str) -> String {
    match name {
        "" => "(anonymous)()".to_string(),
        n => format!("{n}()"),
    }
}

/// Whether a node type's values are in the snapshot (see [`values`]).
#[derive(Clone, Copy)]
enum Opaque {
    Never,
    Always,
    UnlessNumeric,
}

/// Interns the raw string indices of `raw` (see `edges::Edges::labels`),
/// the labels of `refs`: a string index past the strings becomes no
/// label. Labels coded as they were read (`edge_labels`) are interned on
/// their dictionary and side table alone, then put in the model's
/// narrowest form.
pub fn labels(raw: RawLabels, pool: &Pool, refs: &Csr) -> Labels {
    let is_string = |l: u32| l != Labels::NONE && l < 1 << 31;
    match raw {
        RawLabels::Full(mut raw) => {
            let (names, by_string) = label_names(raw.par_iter().copied(), pool);
            raw.par_iter_mut().for_each(|l| {
                if is_string(*l) {
                    *l = by_string.get(*l as usize).copied().unwrap_or(Labels::NONE);
                }
            });
            Labels::new(names, raw.into_array())
        }
        RawLabels::Half { codes, dict, side } => {
            let pairs = side.pairs();
            let used = dict
                .par_iter()
                .copied()
                .chain(pairs.par_iter().skip(1).step_by(2).map(|&l| l as u32));
            let (names, by_string) = label_names(used, pool);
            let intern = |l: u32| match is_string(l) {
                true => by_string.get(l as usize).copied().unwrap_or(Labels::NONE),
                false => l,
            };
            let dict = dict.iter().map(|&l| intern(l)).collect();
            let pairs: Vec<u64> = pairs
                .chunks(2)
                .flat_map(|p| [p[0], intern(p[1] as u32) as u64])
                .collect();
            let side = Side::new(pairs.into(), codes.len());
            let mut labels = Labels::with_codes(names, LabelCodes::Half { codes, dict, side });
            labels.narrow_any(refs);
            labels
        }
    }
}

/// The label names of the string indices among `used` (each once, by
/// string index), and each string index's name, or `UNUSED`.
fn label_names(used: impl ParallelIterator<Item = u32>, pool: &Pool) -> (Vec<Box<str>>, Vec<u32>) {
    let is_string = |l: u32| l != Labels::NONE && l < 1 << 31;
    let mut by_string = mark_used(pool.len(), used.filter(|&l| is_string(l)));
    let mut names = Vec::new();
    for (s, slot) in by_string.iter_mut().enumerate() {
        if *slot != UNUSED {
            *slot = names.len() as u32;
            names.push(pool.get(s).unwrap_or("").into());
        }
    }
    (names, by_string)
}

/// String nodes' text, one arena (filled in parallel blocks of objects).
/// A sliced string's text is not in the snapshot (see
/// [`NodeClass::Sliced`]): its value is [`ValueKind::Unknown`]; a
/// concatenated string's is [`ValueKind::Joined`]. Nor are the values of
/// heap numbers (named `heap number`, unless the snapshot was taken with
/// numeric values: then the name is the number, and the value), big
/// integers and native objects (an array buffer's bytes, a C++ string):
/// unknown, so that no two of them are taken for copies.
pub fn values(nodes: &Nodes, meta: &Meta, pool: &Pool) -> Values {
    let opaque: Vec<Opaque> = meta
        .node_types
        .iter()
        .map(|t| match t.as_str() {
            "number" => Opaque::UnlessNumeric,
            "native" | "bigint" => Opaque::Always,
            _ => Opaque::Never,
        })
        .collect();
    let numeric = |o: usize| {
        let name = pool.bytes_of(nodes.names[o] as usize);
        !name.is_empty() && std::str::from_utf8(name).is_ok_and(|n| n.trim().parse::<f64>().is_ok())
    };
    let kind = |o: usize| match nodes.kinds[o] {
        UNKNOWN_KIND => ValueKind::None,
        k => match (meta.node_classes[k as usize], opaque.get(k as usize)) {
            (NodeClass::Text, _) if nodes.names[o] != NO_STRING => ValueKind::Utf8,
            (NodeClass::Sliced, _) => ValueKind::Unknown,
            (NodeClass::Joined, _) => ValueKind::Joined,
            (_, Some(Opaque::Always)) => ValueKind::Unknown,
            (_, Some(Opaque::UnlessNumeric)) => match numeric(o) {
                true => ValueKind::Utf8,
                false => ValueKind::Unknown,
            },
            _ => ValueKind::None,
        },
    };
    let kinds: Vec<ValueKind> = (0..nodes.kinds.len()).into_par_iter().map(kind).collect();
    let value = |o: usize| match kind(o) {
        ValueKind::Utf8 => pool.bytes_of(nodes.names[o] as usize),
        _ => &[],
    };
    Values::build(
        kinds,
        |o| value(o).len() as u64,
        |range, out| {
            let mut at = 0;
            for o in range {
                let v = value(o);
                out[at..at + v.len()].copy_from_slice(v);
                at += v.len();
            }
        },
    )
}
