//! Object sizes as the JVM that wrote the dump laid its objects out, worked
//! out from the dump itself (docs/hprof-layout.md).
//!
//! HotSpot writes an object's address as its id, and dumps the objects of
//! each heap region in address order: where nothing lies between two
//! objects dumped one after the other, the distance between their ids is
//! the first one's size. The first walk over the objects ([`Evidence`])
//! counts, per class, how often each distance follows one of its instances,
//! and per array kind, each (length, distance) pair. [`Sizing::infer`] then
//! finds the layout these distances fit best (object header, reference
//! size, array bases, alignment) and sizes every class:
//!
//! - by its own evidence: the most common distance after its instances,
//!   where it is the field model's size or seen at least twice (a gap, a
//!   class object or a dead object between two objects only lengthens a
//!   distance, and rarely twice by the same amount);
//! - else by the field model under the layout found, plus what the nearest
//!   ancestor with evidence showed beyond its own model (fields the VM
//!   injects, `@Contended` padding).
//!
//! Where the ids are not addresses in order (Android ART's dumps, a dump
//! written by a tool), no layout fits and the identifier size's model is
//! kept. `--compressed-refs` and `--model-sizes` force a model.

use std::collections::HashMap;

use super::classes::Classes;
use super::reader::BasicType;
use super::SizeModel;

/// Distances past this are not taken as an instance's size.
const MAX_INSTANCE: u64 = 1 << 20;

/// The array kinds: the primitive ones by [`BasicType::prim_index`], then
/// object arrays.
const OBJECT_ARRAYS: usize = 8;
const ARRAY_KINDS: usize = 9;

/// What an object dumped next to another is, for its distance.
#[derive(Debug, Clone, Copy)]
pub(super) enum Shape {
    /// An instance of the class with this index.
    Instance(u32),
    /// An array: its kind (see [`OBJECT_ARRAYS`]) and length.
    Array(u8, u32),
    /// Anything whose size says nothing (a class dump: class objects are
    /// not dumped where they lie; an instance of an undumped class).
    Other,
}

/// The distances between consecutive objects, gathered by one chunk's
/// first walk and merged.
#[derive(Debug, Default)]
pub(super) struct Evidence {
    /// All ids or'ed together: their alignment.
    id_bits: u64,
    objects: u64,
    /// (class, distance) → how often. Distances are at most
    /// [`MAX_INSTANCE`]: the key is `class << 32 | distance`. std's
    /// randomly keyed hash: a dump's ids cannot be crafted to collide.
    instances: HashMap<u64, u32>,
    /// (array kind << 32 | length, distance) → how often.
    arrays: HashMap<(u64, u64), u32>,
    prev: Option<(u64, Shape)>,
}

impl Evidence {
    /// The next object in file order.
    #[inline]
    pub fn add(&mut self, id: u64, shape: Shape) {
        self.id_bits |= id;
        self.objects += 1;
        if let Some((pid, ps)) = self.prev {
            if id > pid {
                let d = id - pid;
                match ps {
                    Shape::Instance(c) if d <= MAX_INSTANCE => {
                        *self.instances.entry((c as u64) << 32 | d).or_default() += 1;
                    }
                    Shape::Array(k, n) => {
                        *self
                            .arrays
                            .entry(((k as u64) << 32 | n as u64, d))
                            .or_default() += 1
                    }
                    _ => {}
                }
            }
        }
        self.prev = Some((id, shape));
    }

    /// Adds another chunk's evidence (the distance across the two chunks'
    /// border is not known, and not needed).
    pub fn merge(&mut self, o: Evidence) {
        self.id_bits |= o.id_bits;
        self.objects += o.objects;
        for (k, v) in o.instances {
            *self.instances.entry(k).or_default() += v;
        }
        for (k, v) in o.arrays {
            *self.arrays.entry(k).or_default() += v;
        }
    }
}

/// The array kind of a primitive element type.
pub(super) fn prim_kind(t: BasicType) -> u8 {
    t.prim_index() as u8
}

/// The array kind of object arrays.
pub(super) const OBJECT_ARRAY_KIND: u8 = OBJECT_ARRAYS as u8;

/// The layout found in a dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Found {
    pub header: u64,
    pub ref_size: u64,
    pub align: u64,
    /// Classes with instances sized by their own evidence, and by the
    /// model.
    pub by_evidence: u32,
    pub by_model: u32,
}

impl Found {
    /// "compressed oops, 12-byte headers, 8-byte alignment".
    pub fn describe(&self, id_size: usize) -> String {
        let refs = match (self.ref_size, id_size) {
            (4, 8) => "compressed oops",
            (4, _) => "4-byte references",
            _ => "8-byte references",
        };
        format!(
            "{refs}, {}-byte headers, {}-byte alignment",
            self.header, self.align
        )
    }
}

/// How every object of the dump is sized.
#[derive(Debug, Clone)]
pub(super) struct Sizing {
    /// Per class index, the size of an instance.
    instance: Vec<u64>,
    /// Per array kind: the offset of element 0 and the element size.
    arrays: [(u64, u64); ARRAY_KINDS],
    header: u64,
    pub ref_size: u64,
    align: u64,
    /// A class object's size before its static fields.
    class_base: u64,
    /// The layout found, when sizes come from the dump's evidence.
    pub found: Option<Found>,
}

fn align_up(n: u64, a: u64) -> u64 {
    n.saturating_add(a - 1) / a * a
}

impl Sizing {
    /// The field model (MAT's): sizes from the class dumps alone.
    pub fn model(sizes: &SizeModel, classes: &Classes) -> Sizing {
        let mut arrays = [(sizes.array_header, 0); ARRAY_KINDS];
        for t in BasicType::PRIMITIVES {
            arrays[t.prim_index()].1 = t.file_size(1) as u64;
        }
        arrays[OBJECT_ARRAYS].1 = sizes.ref_size;
        Sizing {
            instance: classes.layouts.iter().map(|l| l.shallow).collect(),
            arrays,
            header: sizes.header,
            ref_size: sizes.ref_size,
            align: 8,
            class_base: sizes.header,
            found: None,
        }
    }

    #[inline]
    pub fn instance(&self, class: u32) -> u64 {
        self.instance[class as usize]
    }

    /// An instance of a class the dump never defines, with `n` field bytes.
    #[inline]
    pub fn undefined_instance(&self, n: u64) -> u64 {
        align_up(self.header + n, self.align)
    }

    #[inline]
    pub fn array(&self, kind: u8, len: u64) -> u64 {
        let (base, e) = self.arrays[kind as usize];
        align_up(base.saturating_add(len.saturating_mul(e)), self.align)
    }

    /// A class object with static fields of `prims` primitive bytes and
    /// `refs` references, `synthetic` of which the VM added to the dump
    /// (`<resolved_references>`): the model counts them, as MAT does; a
    /// layout found in the dump does not, as the JVM's class object does
    /// not hold them.
    #[inline]
    pub fn class_object(&self, prims: u64, refs: u64, synthetic: u64) -> u64 {
        let refs = match self.found {
            Some(_) => refs.saturating_sub(synthetic),
            None => refs,
        };
        align_up(self.class_base + prims + refs * self.ref_size, self.align)
    }

    /// Sizes from the dump's evidence where it has some; the model's
    /// otherwise.
    pub fn infer(
        evidence: &Evidence,
        classes: &Classes,
        model: &SizeModel,
        class_class: Option<u32>,
    ) -> Sizing {
        let fallback = Sizing::model(model, classes);
        match infer(evidence, classes, model.id_size, class_class) {
            Some(s) => s,
            None => fallback,
        }
    }
}

/// Per class, its observed distances: (distance, count), most common first.
fn observations(e: &Evidence, classes: usize) -> Vec<Vec<(u64, u32)>> {
    let mut out: Vec<Vec<(u64, u32)>> = vec![Vec::new(); classes];
    for (&key, &n) in &e.instances {
        let (c, d) = (key >> 32, key & 0xffff_ffff);
        if let Some(v) = out.get_mut(c as usize) {
            v.push((d, n));
        }
    }
    for v in &mut out {
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    }
    out
}

/// Fields HotSpot adds to some classes of `java.base` that no class dump
/// lists (`javaClasses.hpp`, the `*_INJECTED_FIELDS`): (class, bytes of
/// primitives with `w` the size of a pointer, references).
fn injected(name: &str, w: u64) -> (u64, u64) {
    match name {
        // klass, array_klass, oop_size, static_oop_field_count;
        // protection_domain, signers, source_file.
        "java.lang.Class" => (2 * w + 8, 3),
        "java.lang.ClassLoader" | "java.lang.Module" | "java.lang.invoke.MemberName" => (w, 0),
        "java.lang.invoke.ResolvedMethodName" => (w, 1),
        "java.lang.invoke.MethodHandleNatives$CallSiteContext" => (2 * w, 0),
        "java.lang.StackFrameInfo" => (2, 0),
        "java.lang.InternalError" => (1, 0),
        _ => (0, 0),
    }
}

/// The classes, every superclass before its subclasses; in a superclass
/// cycle (a damaged dump) the class met first goes first. O(classes).
fn supers_first(supers: &[Option<u32>]) -> Vec<usize> {
    let n = supers.len();
    let mut placed = vec![false; n];
    let mut on_chain = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut chain = Vec::new();
    for c in 0..n {
        let mut cur = Some(c);
        while let Some(k) = cur.filter(|&k| k < n && !placed[k] && !on_chain[k]) {
            on_chain[k] = true;
            chain.push(k);
            cur = supers[k].map(|s| s as usize);
        }
        for &k in chain.iter().rev() {
            placed[k] = true;
            on_chain[k] = false;
            order.push(k);
        }
        chain.clear();
    }
    order
}

/// Per class, the fields HotSpot injects into it and its superclasses.
fn injected_per_class(classes: &Classes, order: &[usize], w: u64) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = classes
        .type_of
        .iter()
        .map(|&t| injected(&classes.types.names[t as usize], w))
        .collect();
    let mut done = vec![false; out.len()];
    for &c in order {
        if let Some(s) = classes.supers[c].map(|s| s as usize).filter(|&s| done[s]) {
            out[c].0 += out[s].0;
            out[c].1 += out[s].1;
        }
        done[c] = true;
    }
    out
}

/// The unaligned field model of class `c`: header plus its fields, those
/// HotSpot injects included.
fn unaligned(classes: &Classes, inj: &[(u64, u64)], c: usize, header: u64, ref_size: u64) -> u64 {
    let l = &classes.layouts[c];
    header + l.prim_bytes + inj[c].0 + (l.refs + inj[c].1) * ref_size
}

/// A candidate array layout for kind `k`: how many observations fit.
fn array_fit(obs: &[(u32, u64, u32)], base: u64, e: u64, align: u64) -> u64 {
    obs.iter()
        .filter(|&&(n, d, _)| align_up(base + n as u64 * e, align) == d)
        .map(|o| o.2 as u64)
        .sum()
}

const BASES: [u64; 7] = [8, 12, 16, 20, 24, 28, 32];

/// The element size of array kind `k`.
fn element_size(k: usize, ref_size: u64) -> u64 {
    if k == OBJECT_ARRAYS {
        ref_size
    } else {
        BasicType::PRIMITIVES[k].file_size(1) as u64
    }
}

/// The base of an array kind the evidence does not pin down: after the
/// header and the 4-byte length, aligned to the element size (HotSpot
/// since JDK 22, ART) or to 8 bytes (HotSpot before).
fn default_base(header: u64, e: u64, word_aligned: bool) -> u64 {
    if word_aligned {
        align_up(header + 4, 8)
    } else {
        align_up(header + 4, e.max(4))
    }
}

fn infer(
    e: &Evidence,
    classes: &Classes,
    id_size: usize,
    class_class: Option<u32>,
) -> Option<Sizing> {
    if e.objects < 16 || e.id_bits == 0 {
        return None;
    }
    // The ids' alignment bounds the objects'; a small heap's ids may all
    // be multiples of 16 by chance, so each power of two up to it is tried.
    let max_align = 1u64 << e.id_bits.trailing_zeros().min(63);
    if !(8..=256).contains(&max_align) {
        return None;
    }
    let n = classes.layouts.len();
    let order = supers_first(&classes.supers);
    let cx = Observed {
        classes,
        inj: injected_per_class(classes, &order, id_size as u64),
        obs: observations(e, n),
        arrays: arrays_by_kind(e),
    };
    let (header, ref_size, align) = cx.best_layout(id_size as u64, max_align)?;
    let arr = cx.array_bases(header, ref_size, align);
    let (size, by_evidence, by_model) = cx.instance_sizes(&order, header, ref_size, align);
    // Class objects: a `java.lang.Class` instance (HotSpot dumps the
    // primitive types' mirrors as instances), then the statics.
    let class_base = class_class.map_or(header, |c| size[c as usize]);
    Some(Sizing {
        instance: size,
        arrays: arr,
        header,
        ref_size,
        align,
        class_base,
        found: Some(Found {
            header,
            ref_size,
            align,
            by_evidence,
            by_model,
        }),
    })
}

/// The arrays' observations per kind: (length, distance, times).
fn arrays_by_kind(e: &Evidence) -> Vec<Vec<(u32, u64, u32)>> {
    let mut arrays: Vec<Vec<(u32, u64, u32)>> = vec![Vec::new(); ARRAY_KINDS];
    for (&(key, d), &c) in &e.arrays {
        if let Some(v) = arrays.get_mut((key >> 32) as usize) {
            v.push((key as u32, d, c));
        }
    }
    arrays
}

/// What the layout is inferred from.
struct Observed<'a> {
    classes: &'a Classes,
    /// Per class, the fields the VM injects: (bytes, references).
    inj: Vec<(u64, u64)>,
    /// Per class, the distances after its instances: (distance, times).
    obs: Vec<Vec<(u64, u32)>>,
    /// Per array kind, (length, distance, times).
    arrays: Vec<Vec<(u32, u64, u32)>>,
}

impl Observed<'_> {
    /// The (header, reference size, alignment) that explains most
    /// distances, if it explains enough of them. Each candidate layout
    /// scores the distances after arrays that fit it (arrays have no
    /// padding and no injected fields: they decide), then those after
    /// instances that are their class's model size.
    fn best_layout(&self, id_size: u64, max_align: u64) -> Option<(u64, u64, u64)> {
        let (obs, arrays) = (&self.obs, &self.arrays);
        let observed: u64 = obs.iter().flatten().map(|o| o.1 as u64).sum::<u64>()
            + arrays.iter().flatten().map(|o| o.2 as u64).sum::<u64>();
        let mut best: Option<((u64, u64), u64, u64, u64)> = None;
        let aligns = std::iter::successors(Some(8u64), |a| (*a < max_align).then_some(a * 2));
        let candidates = aligns.flat_map(|a| {
            [4u64, 8]
                .into_iter()
                .flat_map(move |r| [8u64, 12, 16].map(move |h| (a, r, h)))
        });
        for (align, ref_size, header) in candidates {
            if ref_size > id_size {
                continue;
            }
            let (mut fits, mut short) = (0u64, 0u64);
            for (c, o) in obs.iter().enumerate() {
                let u = unaligned(self.classes, &self.inj, c, header, ref_size);
                let model = align_up(u, align);
                for &(d, k) in o {
                    if d == model {
                        fits += k as u64;
                    } else if d < model {
                        short += k as u64;
                    }
                }
            }
            // Arrays of every kind, with their elements where this header
            // puts them (after the length, aligned to 8 or to the element).
            let array_fits = (0..ARRAY_KINDS)
                .map(|k| {
                    let e = element_size(k, ref_size);
                    [true, false]
                        .map(|word| array_fit(&arrays[k], default_base(header, e, word), e, align))
                        .into_iter()
                        .max()
                        .unwrap_or(0)
                })
                .sum::<u64>();
            // Distances shorter than the model would make the objects
            // overlap: these ids are not addresses under this layout.
            if short * 50 > observed.max(1) {
                continue;
            }
            let score = (array_fits, fits);
            if best.is_none_or(|b| score > b.0) {
                best = Some((score, header, ref_size, align));
            }
        }
        let ((array_fits, fits), header, ref_size, align) = best?;
        let score = array_fits + fits;
        // Most objects of a compacted heap lie next to another: a layout
        // that explains a small part of the distances is chance.
        if score * 3 < observed || score < 8 {
            return None;
        }
        Some((header, ref_size, align))
    }

    /// Arrays: per kind, (the base that fits most of its observations,
    /// the element size).
    fn array_bases(&self, header: u64, ref_size: u64, align: u64) -> [(u64, u64); ARRAY_KINDS] {
        let mut arr = [(0u64, 0u64); ARRAY_KINDS];
        let mut pinned: [Option<Vec<u64>>; ARRAY_KINDS] = Default::default();
        let mut word_votes = (0i64, 0i64);
        for k in 0..ARRAY_KINDS {
            let e = element_size(k, ref_size);
            arr[k].1 = e;
            let fits: Vec<(u64, u64)> = BASES
                .iter()
                .map(|&b| (array_fit(&self.arrays[k], b, e, align), b))
                .collect();
            let top = fits.iter().map(|f| f.0).max().unwrap_or(0);
            if top == 0 {
                continue;
            }
            let mut bases: Vec<u64> = fits.iter().filter(|f| f.0 == top).map(|f| f.1).collect();
            let (word, elem) = (
                default_base(header, e, true),
                default_base(header, e, false),
            );
            // One observation could be an array followed by a gap: it pins
            // a base only where it is the rule's.
            if top < 2 {
                bases.retain(|&b| b == word || b == elem);
                if bases.is_empty() {
                    continue;
                }
            }
            word_votes.0 += bases.contains(&word) as i64;
            word_votes.1 += bases.contains(&elem) as i64;
            pinned[k] = Some(bases);
        }
        let word_aligned = word_votes.0 > word_votes.1 || (word_votes == (0, 0) && header >= 12);
        for k in 0..ARRAY_KINDS {
            let want = default_base(header, arr[k].1, word_aligned);
            arr[k].0 = match &pinned[k] {
                Some(b) if b.contains(&want) => want,
                Some(b) => b[0],
                None => want,
            };
        }
        arr
    }

    /// Instances, superclasses first: each class's own evidence, else its
    /// model plus what its nearest ancestor with evidence showed beyond its
    /// own model. Returns the sizes, and how many classes with
    /// observations were sized by them and by the model.
    fn instance_sizes(
        &self,
        order: &[usize],
        header: u64,
        ref_size: u64,
        align: u64,
    ) -> (Vec<u64>, u32, u32) {
        let n = self.classes.layouts.len();
        let mut size = vec![0u64; n];
        // Where a class's size is more than its model (padding, fields the
        // VM injects that the table above misses), its subclasses' fields
        // follow it: (its size, its unaligned model).
        let mut after: Vec<Option<(u64, u64)>> = vec![None; n];
        let mut done = vec![false; n];
        let (mut by_evidence, mut by_model) = (0u32, 0u32);
        for &k in order {
            let inherited = self.classes.supers[k]
                .map(|s| s as usize)
                .filter(|&s| done[s])
                .and_then(|s| after[s]);
            let u = unaligned(self.classes, &self.inj, k, header, ref_size);
            let model = align_up(u, align);
            let predicted = match inherited {
                Some((s, su)) => align_up(s + u.saturating_sub(su), align),
                None => model,
            };
            let seen = self.obs[k].first().copied();
            let (s, evidenced) = match seen {
                Some((d, _)) if d == model || d == predicted => (d, true),
                Some((d, times)) if times >= 2 && d > model => (d, true),
                _ => (predicted, false),
            };
            size[k] = s;
            after[k] = if s > model { Some((s, u)) } else { inherited };
            done[k] = true;
            if !self.obs[k].is_empty() {
                if evidenced {
                    by_evidence += 1;
                } else {
                    by_model += 1;
                }
            }
        }
        (size, by_evidence, by_model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn superclasses_come_first_and_cycles_end() {
        // 0 → 2 → 1 (top); 3 → 4 → 3 (a cycle); 5 names a class past the end.
        let supers = [Some(2), None, Some(1), Some(4), Some(3), Some(99)];
        let order = supers_first(&supers);
        let at = |c: usize| order.iter().position(|&k| k == c).unwrap();
        assert_eq!(order.len(), 6);
        assert!(at(1) < at(2) && at(2) < at(0));
        assert!(at(4) < at(3), "{order:?}");
        // A long chain costs one step per class.
        let n = 100_000;
        let chain: Vec<Option<u32>> = (0..n)
            .map(|c| (c + 1 < n).then_some(c as u32 + 1))
            .collect();
        let order = supers_first(&chain);
        assert_eq!(order[0], n as usize - 1);
        assert_eq!(order[n as usize - 1], 0);
    }

    #[test]
    fn evidence_counts_distances_to_the_next_object() {
        let mut e = Evidence::default();
        e.add(0x1000, Shape::Instance(3));
        e.add(0x1010, Shape::Instance(3));
        e.add(0x1020, Shape::Array(OBJECT_ARRAY_KIND, 2));
        e.add(0x1038, Shape::Other);
        e.add(0x1100, Shape::Instance(3));
        // The last object and the one after a class dump's place say nothing.
        assert_eq!(e.instances.get(&(3 << 32 | 0x10)), Some(&2));
        assert_eq!(e.instances.len(), 1);
        assert_eq!(e.arrays.get(&((8 << 32) | 2, 0x18)), Some(&1));
        assert_eq!(e.objects, 5);
        let mut f = Evidence::default();
        f.add(0x2000, Shape::Instance(3));
        f.add(0x2010, Shape::Instance(1));
        e.merge(f);
        assert_eq!(e.instances.get(&(3 << 32 | 0x10)), Some(&3));
        assert_eq!(e.id_bits.trailing_zeros(), 3);
    }
}
