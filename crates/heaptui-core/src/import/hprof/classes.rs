//! CLASS_DUMP sub-records and what is derived from them before objects are
//! decoded: per class its type name, its instance field layout (own fields
//! first, then the superclass's, as HPROF lays out instance data), MAT's
//! shallow sizes, and which classes each class loader defined.

use std::collections::HashMap;

use super::reader::{align8, BasicType, Reader};
use super::scan::Records;
use super::SizeModel;
use crate::model::{FieldDecl, IdIndex, JavaClass, JavaClasses, StaticField, Strength};

/// One CLASS_DUMP, as read.
#[derive(Debug, Default)]
pub(super) struct ClassDump {
    pub id: u64,
    pub super_id: u64,
    pub loader: u64,
    pub signers: u64,
    pub protection_domain: u64,
    /// Static fields: (name string id, type, value: the referenced id, or
    /// a primitive's bytes as a big-endian number).
    pub statics: Vec<(u64, BasicType, u64)>,
    /// Instance fields declared by this class: (name string id, type).
    pub fields: Vec<(u64, BasicType)>,
}

/// Reads a CLASS_DUMP body (after its tag). `Err(None)`: truncated;
/// `Err(Some(why))`: corrupt. The counts are u16, so no allocation here
/// grows past 65535 entries.
pub(super) fn parse_class_dump(r: &mut Reader) -> Result<ClassDump, Option<String>> {
    let mut c = ClassDump {
        id: r.id().ok_or(None)?,
        ..ClassDump::default()
    };
    r.u4().ok_or(None)?;
    c.super_id = r.id().ok_or(None)?;
    c.loader = r.id().ok_or(None)?;
    c.signers = r.id().ok_or(None)?;
    c.protection_domain = r.id().ok_or(None)?;
    r.skip(2 * r.id_size() + 4).ok_or(None)?;
    let id_size = r.id_size();
    let ty = |r: &mut Reader| -> Result<BasicType, Option<String>> {
        let t = r.u1().ok_or(None)?;
        BasicType::from_tag(t).ok_or_else(|| {
            Some(format!(
                "class dump of {:x} has a field of unknown type 0x{t:02x}",
                c.id
            ))
        })
    };
    for _ in 0..r.u2().ok_or(None)? {
        r.u2().ok_or(None)?;
        let t = ty(r)?;
        r.skip(t.file_size(id_size)).ok_or(None)?;
    }
    for _ in 0..r.u2().ok_or(None)? {
        let name = r.id().ok_or(None)?;
        let t = ty(r)?;
        let value = if t == BasicType::Object {
            r.id().ok_or(None)?
        } else {
            let b = r.take(t.file_size(id_size)).ok_or(None)?;
            b.iter().fold(0u64, |v, &x| v << 8 | x as u64)
        };
        c.statics.push((name, t, value));
    }
    for _ in 0..r.u2().ok_or(None)? {
        let name = r.id().ok_or(None)?;
        c.fields.push((name, ty(r)?));
    }
    Ok(c)
}

/// One step of decoding an instance's field bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    /// An object reference with this label.
    Ref(u32),
    /// Primitive bytes that are part of the value.
    Keep(u32),
    /// Primitive bytes that are not (a `String`'s cached hash).
    Skip(u32),
    /// The `referent` of a `java.lang.ref.Reference` (see
    /// [`Layout::referent`]), with its label.
    Referent(u32),
}

/// How instances of a class are decoded and sized.
#[derive(Debug, Default)]
pub(super) struct Layout {
    /// The class's own fields; those of its superclasses follow in the
    /// layout of class `then`, and so on (a layout is not copied into
    /// every subclass: a chain of n classes would take n² ops).
    pub ops: Vec<Op>,
    /// The nearest superclass with fields, whose ops come next.
    pub then: Option<u32>,
    /// Field bytes an instance dump should hold (ids at the file's size).
    pub data_bytes: usize,
    /// MAT's shallow size of an instance.
    pub shallow: u64,
    /// The heap bytes of the fields, inherited ones included.
    field_bytes: u64,
    /// The instance fields, inherited ones included: bytes of primitives
    /// and how many references (for `layout`'s models).
    pub prim_bytes: u64,
    pub refs: u64,
    /// False when the superclass chain is broken (a missing class or a
    /// cycle): instances are then decoded as far as the known fields go.
    pub complete: bool,
    /// How a reference object holds its referent, where the class is a
    /// `java.lang.ref.Reference` subclass (its `referent` field is then an
    /// [`Op::Referent`]).
    pub referent: Option<Strength>,
}

/// Interned strings: type names and reference labels.
#[derive(Default)]
pub(super) struct Interner {
    pub names: Vec<Box<str>>,
    by_name: HashMap<Box<str>, u32>,
}

impl Interner {
    pub fn intern(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.by_name.get(name) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(name.into());
        self.by_name.insert(name.into(), i);
        i
    }
}

/// Labels every dump has, interned first (their indices are fixed).
pub(super) mod label {
    pub const CLASS: u32 = 0;
    pub const SUPER: u32 = 1;
    pub const LOADER: u32 = 2;
    pub const SIGNERS: u32 = 3;
    pub const PROTECTION_DOMAIN: u32 = 4;
    pub const LOADED_CLASS: u32 = 5;
    pub const FIXED: [&str; 6] = [
        "<class>",
        "<super>",
        "<classloader>",
        "<signers>",
        "<protection_domain>",
        "<loaded class>",
    ];
}

/// What the object decoder needs to mark a string's array as text.
#[derive(Debug, Clone, Copy)]
pub(super) struct StringLayout {
    /// The type of `java.lang.String` instances.
    pub ty: u32,
    /// The label of its `value` field.
    pub value: u32,
    /// Where `coder` sits in an instance's value bytes (Java 9+ compact
    /// strings; `None` before Java 9).
    pub coder_at: Option<usize>,
}

/// Everything the object decoder needs to know about classes.
pub(super) struct Classes {
    /// Class object ids, in the order of their dumps.
    pub ids: Vec<u64>,
    pub index: IdIndex,
    pub layouts: Vec<Layout>,
    /// Each class's superclass, by class index (`None` at the top or where
    /// the superclass was not dumped).
    pub supers: Vec<Option<u32>>,
    /// The type (an index into `types`) of a class's instances, and of
    /// object arrays whose array class it is.
    pub type_of: Vec<u32>,
    pub types: Interner,
    pub labels: Interner,
    /// Per static field of each class, its label (parallel to `statics`).
    pub static_labels: Vec<Vec<u32>>,
    /// Loader id → the classes it defined, in dump order.
    pub loaders: HashMap<u64, Vec<u64>>,
    /// How `java.lang.String`s point at their characters (see `strings`).
    pub string: Option<StringLayout>,
    /// Classes named by no LOAD_CLASS record.
    pub unnamed: Vec<u64>,
    /// The type of class objects (`java.lang.Class`).
    pub class_type: u32,
    /// The type of each primitive array, by [`BasicType::prim_index`].
    pub prim_types: [u32; 8],
    /// Every class's fields, for the inspector.
    pub java: JavaClasses,
}

impl Classes {
    /// The class index of a class object id.
    #[inline]
    pub fn get(&self, id: u64) -> Option<u32> {
        self.index.get(self.ids.as_slice(), id)
    }
}

/// The text of a STRING record, lossily decoded.
pub(super) fn string_text(bytes: &[u8], records: &Records, id: u64) -> Option<String> {
    let &(s, e) = records.strings.get(&id)?;
    Some(String::from_utf8_lossy(&bytes[s..e]).into_owned())
}

/// A JVM class name as Java writes it: `java/util/HashMap$Node` →
/// `java.util.HashMap$Node`, `[Ljava/lang/Object;` → `java.lang.Object[]`,
/// `[[I` → `int[][]`. Names that are already in Java form pass unchanged.
pub(super) fn pretty_class_name(name: &str) -> String {
    let dims = name.bytes().take_while(|&b| b == b'[').count();
    if dims == 0 {
        return name.replace('/', ".");
    }
    let rest = &name[dims..];
    let element = match rest.as_bytes() {
        [b'L', .., b';'] => rest[1..rest.len() - 1].replace('/', "."),
        [b'Z'] => "boolean".into(),
        [b'C'] => "char".into(),
        [b'F'] => "float".into(),
        [b'D'] => "double".into(),
        [b'B'] => "byte".into(),
        [b'S'] => "short".into(),
        [b'I'] => "int".into(),
        [b'J'] => "long".into(),
        _ => return name.replace('/', "."),
    };
    let mut out = element;
    for _ in 0..dims {
        out.push_str("[]");
    }
    out
}

/// Builds the class table from the class dumps found by the scan.
pub(super) fn build(
    bytes: &[u8],
    records: &Records,
    dumps: Vec<ClassDump>,
    sizes: &SizeModel,
) -> Classes {
    let ids: Vec<u64> = dumps.iter().map(|d| d.id).collect();
    let index = IdIndex::build(&ids);
    let mut types = Interner::default();
    let mut labels = Interner::default();
    for l in label::FIXED {
        labels.intern(l);
    }
    let (type_of, class_names, unnamed) = class_types(bytes, records, &dumps, &mut types);
    let (static_labels, own) = field_labels(bytes, records, &dumps, &mut labels);
    let string_class = class_names.iter().position(|n| n == "java.lang.String");
    let hash_labels = ["hash", "hashIsZero"].map(|n| labels.intern(n));
    let coder_label = labels.intern("coder");
    let value_label = labels.intern("value");
    let referent_label = labels.intern("referent");
    let reference_class = class_names
        .iter()
        .position(|n| n == "java.lang.ref.Reference");
    let mut string = None;
    let (up, order) = supers_first(&dumps, &ids, &index);
    let mut layouts: Vec<Layout> = (0..dumps.len()).map(|_| Layout::default()).collect();
    let referent = reference_class.map(|r| (r, referent_label));
    for c in order {
        let cached = if Some(c) == string_class {
            &hash_labels[..]
        } else {
            &[]
        };
        let chain = (&dumps[..], &up[..], &layouts[..]);
        let (mut layout, coder) = layout(c, chain, &own, cached, coder_label, referent, sizes);
        layout.referent = match reference_kind(&class_names[c]) {
            Some(kind) => Some(kind),
            None => up[c].and_then(|s| layouts[s].referent),
        }
        .filter(|_| reference_class.is_some());
        if Some(c) == string_class {
            string = Some(StringLayout {
                ty: type_of[c],
                value: value_label,
                coder_at: coder,
            });
        }
        layouts[c] = layout;
    }
    let supers = up.iter().map(|s| s.map(|s| s as u32)).collect();
    let class_type = types.intern("java.lang.Class");
    let prim_types = BasicType::PRIMITIVES.map(|t| types.intern(t.array_name()));
    // A String's cached hash fields are not kept as its values.
    let cached = |c: usize, lbl: u32| Some(c) == string_class && hash_labels.contains(&lbl);
    let java = java_classes(bytes, records, &dumps, &own, cached);
    let mut loaders: HashMap<u64, Vec<u64>> = HashMap::new();
    for d in dumps.iter().filter(|d| d.loader != 0) {
        loaders.entry(d.loader).or_default().push(d.id);
    }
    Classes {
        ids,
        index,
        layouts,
        supers,
        type_of,
        types,
        labels,
        static_labels,
        loaders,
        string,
        unnamed,
        class_type,
        prim_types,
        java,
    }
}

/// Per class, the labels of its static fields, and its own instance
/// fields' labels and types (the statics of every class interned first).
#[allow(clippy::type_complexity)]
fn field_labels(
    bytes: &[u8],
    records: &Records,
    dumps: &[ClassDump],
    labels: &mut Interner,
) -> (Vec<Vec<u32>>, Vec<Vec<(u32, BasicType)>>) {
    let mut field_label = |id: u64| {
        let text = string_text(bytes, records, id).unwrap_or_else(|| format!("<field 0x{id:x}>"));
        labels.intern(&text)
    };
    let static_labels: Vec<Vec<u32>> = dumps
        .iter()
        .map(|d| d.statics.iter().map(|s| field_label(s.0)).collect())
        .collect();
    let own: Vec<Vec<(u32, BasicType)>> = dumps
        .iter()
        .map(|d| d.fields.iter().map(|f| (field_label(f.0), f.1)).collect())
        .collect();
    (static_labels, own)
}

/// Each class's type (its name interned in `types`), its name, and the
/// ids of the classes that no LOAD_CLASS record names.
fn class_types(
    bytes: &[u8],
    records: &Records,
    dumps: &[ClassDump],
    types: &mut Interner,
) -> (Vec<u32>, Vec<String>, Vec<u64>) {
    let names: HashMap<u64, u64> = records.loaded.iter().copied().collect();
    let mut unnamed = Vec::new();
    let mut class_names = Vec::with_capacity(dumps.len());
    let type_of: Vec<u32> = dumps
        .iter()
        .map(|d| {
            let name = names
                .get(&d.id)
                .and_then(|&n| string_text(bytes, records, n))
                .map(|n| pretty_class_name(&n));
            let name = name.unwrap_or_else(|| {
                unnamed.push(d.id);
                format!("<unknown type 0x{:x}>", d.id)
            });
            let t = types.intern(&name);
            class_names.push(name);
            t
        })
        .collect();
    (type_of, class_names, unnamed)
}

/// The classes' declarations as the inspector shows them; `cached(class,
/// label)` says which instance fields are not kept as values.
fn java_classes(
    bytes: &[u8],
    records: &Records,
    dumps: &[ClassDump],
    own: &[Vec<(u32, BasicType)>],
    cached: impl Fn(usize, u32) -> bool,
) -> JavaClasses {
    let text =
        |id: u64| string_text(bytes, records, id).unwrap_or_else(|| format!("<field 0x{id:x}>"));
    JavaClasses::new(
        dumps
            .iter()
            .enumerate()
            .map(|(c, d)| JavaClass {
                id: d.id,
                super_id: d.super_id,
                fields: d
                    .fields
                    .iter()
                    .zip(&own[c])
                    .map(|(&(name, t), &(lbl, _))| FieldDecl {
                        name: text(name).into(),
                        tag: t.tag(),
                        kept: t != BasicType::Object && !cached(c, lbl),
                    })
                    .collect(),
                statics: d
                    .statics
                    .iter()
                    .map(|&(name, t, raw)| StaticField {
                        name: text(name).into(),
                        tag: t.tag(),
                        raw,
                    })
                    .collect(),
            })
            .collect(),
    )
}

/// Each class's superclass by class index (`None` at the top, where the
/// superclass was not dumped, and where the chain closes a cycle), and an
/// order of the classes in which each comes after its superclass. Each
/// class is visited once.
fn supers_first(
    dumps: &[ClassDump],
    ids: &[u64],
    index: &IdIndex,
) -> (Vec<Option<usize>>, Vec<usize>) {
    let mut up: Vec<Option<usize>> = dumps
        .iter()
        .map(|d| match d.super_id {
            0 => None,
            s => index.get(ids, s).map(|s| s as usize),
        })
        .collect();
    const NEW: u8 = 0;
    const ON_PATH: u8 = 1;
    const DONE: u8 = 2;
    let mut state = vec![NEW; dumps.len()];
    let mut order = Vec::with_capacity(dumps.len());
    let mut path = Vec::new();
    crate::work::add(dumps.len() as u64);
    for c in 0..dumps.len() {
        let mut k = Some(c);
        while let Some(at) = k.filter(|&k| state[k] == NEW) {
            state[at] = ON_PATH;
            path.push(at);
            k = up[at];
        }
        if let Some(k) = k.filter(|&k| state[k] == ON_PATH) {
            // `path` ends in a cycle through `k`: the class whose
            // superclass is `k` closes it.
            up[*path.last().unwrap_or(&k)] = None;
        }
        while let Some(k) = path.pop() {
            state[k] = DONE;
            order.push(k);
        }
    }
    (up, order)
}

/// The field layout of class `c`: its own fields, then (through
/// [`Layout::then`]) its superclass's, and so on; `chain` holds the
/// dumps, each class's superclass from [`supers_first`] and the layouts of
/// the superclasses, already made. `skip` lists labels whose bytes are left
/// out of the value: a class given some (`java.lang.String`) has its whole
/// chain copied into its ops. The offset of field `coder` in the value
/// bytes comes back. `referent`: the class `java.lang.ref.Reference` and
/// the label of its `referent` field (that field becomes an
/// [`Op::Referent`], which its subclasses' layouts continue into).
fn layout(
    c: usize,
    (dumps, up, done): (&[ClassDump], &[Option<usize>], &[Layout]),
    own: &[Vec<(u32, BasicType)>],
    skip: &[u32],
    coder_label: u32,
    referent: Option<(usize, u32)>,
    sizes: &SizeModel,
) -> (Layout, Option<usize>) {
    let id_size = sizes.id_size;
    let mut out = Layout {
        complete: true,
        ..Layout::default()
    };
    let mut field_bytes = 0u64;
    let mut value_at = 0usize;
    let mut coder = None;
    let mut cur = Some(c);
    let mut steps = 0u64;
    while let Some(k) = cur {
        steps += 1 + own[k].len() as u64;
        // A broken chain: a superclass not dumped, or a cycle.
        out.complete &= dumps[k].super_id == 0 || up[k].is_some();
        for &(lbl, t) in &own[k] {
            out.data_bytes += t.file_size(id_size);
            field_bytes += t.heap_size(sizes.ref_size);
            match t {
                BasicType::Object => out.refs += 1,
                _ => out.prim_bytes += t.file_size(1) as u64,
            }
            let n = t.file_size(id_size) as u32;
            let op = match t {
                BasicType::Object if referent == Some((k, lbl)) => Op::Referent(lbl),
                BasicType::Object => Op::Ref(lbl),
                _ if skip.contains(&lbl) => Op::Skip(n),
                _ => {
                    if lbl == coder_label && t == BasicType::Byte {
                        coder = Some(value_at);
                    }
                    value_at += n as usize;
                    Op::Keep(n)
                }
            };
            push_op(&mut out.ops, op);
        }
        cur = match (skip.is_empty(), up[k]) {
            (true, Some(s)) => {
                let sup = &done[s];
                out.data_bytes += sup.data_bytes;
                field_bytes += sup.field_bytes;
                out.prim_bytes += sup.prim_bytes;
                out.refs += sup.refs;
                out.complete &= sup.complete;
                out.then = match sup.ops.is_empty() {
                    true => sup.then,
                    false => Some(s as u32),
                };
                None
            }
            (_, s) => s,
        };
    }
    crate::work::add(steps);
    out.field_bytes = field_bytes;
    out.shallow = align8(sizes.header + field_bytes);
    (out, coder)
}

/// How instances of a class named `name` of `java.lang.ref` hold their
/// referent (`Reference` itself: weakly); other classes take their
/// superclass's (see `build`), `None` when the chain never reaches
/// `java.lang.ref.Reference`.
fn reference_kind(name: &str) -> Option<Strength> {
    match name {
        "java.lang.ref.SoftReference" => Some(Strength::Soft),
        "java.lang.ref.WeakReference" => Some(Strength::Weak),
        "java.lang.ref.FinalReference" | "java.lang.ref.FinalizerReference" => {
            Some(Strength::Final)
        }
        "java.lang.ref.PhantomReference" => Some(Strength::Phantom),
        "java.lang.ref.Reference" => Some(Strength::Weak),
        _ => None,
    }
}

/// Appends an op, merging runs of primitive bytes.
fn push_op(ops: &mut Vec<Op>, op: Op) {
    match (ops.last_mut(), op) {
        (Some(Op::Keep(a)), Op::Keep(b)) | (Some(Op::Skip(a)), Op::Skip(b)) => *a += b,
        _ => ops.push(op),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_names_in_java_form() {
        assert_eq!(
            pretty_class_name("java/util/HashMap$Node"),
            "java.util.HashMap$Node"
        );
        assert_eq!(
            pretty_class_name("[Ljava/lang/Object;"),
            "java.lang.Object[]"
        );
        assert_eq!(pretty_class_name("[[I"), "int[][]");
        assert_eq!(pretty_class_name("[Z"), "boolean[]");
        assert_eq!(
            pretty_class_name("java.lang.String[]"),
            "java.lang.String[]"
        );
        assert_eq!(pretty_class_name("[X"), "[X");
        assert_eq!(pretty_class_name("["), "[");
    }

    #[test]
    fn runs_of_primitives_merge() {
        let mut ops = Vec::new();
        for op in [
            Op::Keep(4),
            Op::Keep(1),
            Op::Ref(3),
            Op::Skip(4),
            Op::Skip(1),
            Op::Keep(2),
        ] {
            push_op(&mut ops, op);
        }
        assert_eq!(ops, vec![Op::Keep(5), Op::Ref(3), Op::Skip(5), Op::Keep(2)]);
    }
}
