//! Every field of a Java object with its value, decoded when an object is
//! inspected (never during the analysis): the class dumps' field lists are
//! kept per class ([`JavaClasses`], a few entries per class, nothing per
//! object), and an instance's values are read from what the model holds
//! anyway: its primitive field bytes ([`super::Values`]), its labelled
//! references, its referent. Fields are listed as Eclipse MAT lists them:
//! the object's own class first, then its superclass's, and so on (the
//! order in which HPROF lays out instance data), each class's in the order
//! of its class dump (declaration order).

use super::{Label, Model, ObjectIdx, Strength, ValueKind};

/// A field's type as HPROF tags it.
pub mod field_type {
    /// A reference to an object.
    pub const OBJECT: u8 = 2;
    /// `boolean` (1 byte).
    pub const BOOLEAN: u8 = 4;
    /// `char` (2 bytes, UTF-16).
    pub const CHAR: u8 = 5;
    /// `float` (4 bytes).
    pub const FLOAT: u8 = 6;
    /// `double` (8 bytes).
    pub const DOUBLE: u8 = 7;
    /// `byte` (1 byte).
    pub const BYTE: u8 = 8;
    /// `short` (2 bytes).
    pub const SHORT: u8 = 9;
    /// `int` (4 bytes).
    pub const INT: u8 = 10;
    /// `long` (8 bytes).
    pub const LONG: u8 = 11;

    /// The Java name of the type (`ref` for an object reference).
    pub fn name(tag: u8) -> &'static str {
        match tag {
            OBJECT => "ref",
            BOOLEAN => "boolean",
            CHAR => "char",
            FLOAT => "float",
            DOUBLE => "double",
            BYTE => "byte",
            SHORT => "short",
            INT => "int",
            LONG => "long",
            _ => "?",
        }
    }

    /// Bytes of a primitive value (0 for a reference or an unknown tag).
    pub fn size(tag: u8) -> usize {
        match tag {
            BOOLEAN | BYTE => 1,
            CHAR | SHORT => 2,
            FLOAT | INT => 4,
            DOUBLE | LONG => 8,
            _ => 0,
        }
    }
}

/// An instance field a class declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDecl {
    /// The field's name (made printable at import).
    pub name: Box<str>,
    /// A [`field_type`] tag.
    pub tag: u8,
    /// Whether its bytes are among the instance's value bytes (primitive
    /// fields are, but for a `String`'s cached hash).
    pub kept: bool,
}

/// A static field with its value as dumped: a primitive's bytes as a
/// big-endian number, or the referenced object's id (0: null).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaticField {
    /// The field's name (made printable at import).
    pub name: Box<str>,
    /// A [`field_type`] tag.
    pub tag: u8,
    /// The value: a primitive's big-endian bytes, or an object id (0: null).
    pub raw: u64,
}

/// One class dump's fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JavaClass {
    /// The class object's id.
    pub id: u64,
    /// The superclass's class object id, 0 for none.
    pub super_id: u64,
    /// Its instance fields in declaration order (the superclass's not included).
    pub fields: Vec<FieldDecl>,
    /// Its static fields with their values.
    pub statics: Vec<StaticField>,
}

/// Every class dump's fields, by class object id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JavaClasses {
    classes: Vec<JavaClass>,
}

impl JavaClasses {
    /// The classes in any order; an id given twice keeps its first.
    pub fn new(mut classes: Vec<JavaClass>) -> JavaClasses {
        classes.sort_by_key(|c| c.id);
        classes.dedup_by_key(|c| c.id);
        JavaClasses { classes }
    }

    /// The classes, ordered by class object id.
    pub fn list(&self) -> &[JavaClass] {
        &self.classes
    }

    /// Every field name, to be made printable (see `import`).
    pub fn names_mut(&mut self) -> impl Iterator<Item = &mut Box<str>> {
        self.classes.iter_mut().flat_map(|c| {
            let f = c.fields.iter_mut().map(|f| &mut f.name);
            f.chain(c.statics.iter_mut().map(|s| &mut s.name))
        })
    }

    /// The class dump of class object `id`, if the dump has one.
    pub fn get(&self, id: u64) -> Option<&JavaClass> {
        let i = self.classes.partition_point(|c| c.id < id);
        self.classes.get(i).filter(|c| c.id == id)
    }
}

/// A field's value as shown.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldValue {
    /// A primitive, written as Java writes it (`1000`, `0.75`, `true`,
    /// `'a'`, `-3`).
    Primitive(String),
    /// A reference: the object, or `None` for null (or an object not in
    /// the dump).
    Ref(Option<ObjectIdx>),
    /// A `java.lang.ref.Reference`'s referent, with its kind and whether
    /// it retains (`--references all`).
    Referent(ObjectIdx, Strength, bool),
    /// Bytes the dump does not hold (a short instance record).
    Missing,
    /// Bytes heaptui does not keep (a `String`'s cached hash).
    NotKept,
}

/// One field with its value.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldView {
    /// The type's name ([`field_type::name`]).
    pub ty: &'static str,
    /// The field's name.
    pub name: String,
    /// The class that declares it.
    pub declared_by: Option<ObjectIdx>,
    /// Its value.
    pub value: FieldValue,
}

/// What an object holds beyond its references, for the inspector and
/// `report --object`.
#[derive(Debug, Clone, PartialEq)]
pub enum ObjectFields {
    /// A Java instance: every field, the own class's first.
    Instance(Vec<FieldView>),
    /// A Java class object: its static fields.
    Class(Vec<FieldView>),
    /// A primitive array: element type, length (`None` where the dump
    /// holds no contents), the first elements, and for `char[]` and
    /// `byte[]` the text they spell (escaped).
    PrimitiveArray {
        /// The element type's Java name (`char`, `int`, …).
        element: &'static str,
        /// How many elements, where the dump holds the contents.
        length: Option<u64>,
        /// The first elements, written as Java writes them.
        first: Vec<String>,
        /// For `char[]` and `byte[]`, the text the elements spell (escaped).
        text: Option<String>,
    },
    /// A value of another format (a V8 number or string): its text.
    Value(String),
}

/// Elements of a primitive array shown at most.
pub const FIRST_ELEMENTS: usize = 16;

/// Characters of an array's text shown at most.
const TEXT_CHARS: usize = 200;

impl Model {
    /// The fields of `object` with their values, where the dump describes
    /// them (Java instances, classes and primitive arrays); `None` for
    /// other objects and formats. Costs the object's fields, not the heap.
    pub fn fields(&self, object: ObjectIdx) -> Option<ObjectFields> {
        if self.format == super::Format::Heapsnapshot {
            return self.v8_value(object);
        }
        if let Some(v) = self.primitive_array(object) {
            return Some(v);
        }
        let classes = self.java_classes.as_ref()?;
        if let Some(class) = classes.get(self.ids.get(object.index())) {
            if self.type_name(object) == "java.lang.Class" {
                return Some(ObjectFields::Class(self.statics(object, class)));
            }
        }
        if self.type_name(object).ends_with("[]") {
            return None; // an object array: its elements are its references
        }
        let class_object = self.class_of(object)?;
        let class = classes.get(self.ids.get(class_object.index()))?;
        Some(ObjectFields::Instance(self.instance_fields(
            object,
            class_object,
            class,
        )))
    }

    /// A V8 number's value (a snapshot taken with numeric values links a
    /// number to a string of its value by an internal `value` edge), or
    /// an oddball's (`true`, `false`, `null`, `undefined`: the string its
    /// `to_string` edge refers to).
    fn v8_value(&self, object: ObjectIdx) -> Option<ObjectFields> {
        let values = self.values.as_ref()?;
        let refs = self.refs_of(object);
        let edge = |name: &str| {
            (0..refs.len().min(16))
                .find(|&i| matches!(self.ref_label(object, i), Some(Label::Name(n)) if n == name))
                .and_then(|i| values.text(refs.get(i), 40))
        };
        if self.type_name(object) == "(number)" {
            return Some(ObjectFields::Value(format!("number {}", edge("value")?)));
        }
        // An oddball names its string and its `typeof` (internal edges,
        // by name in some V8 versions, by position in others).
        let at = |i: usize| {
            let named = matches!(self.ref_label(object, i), Some(Label::Index(_)));
            named
                .then(|| refs.get_checked(i).and_then(|t| values.text(t, 40)))
                .flatten()
        };
        let first = (0..refs.len().min(4))
            .find(|&i| matches!(self.ref_label(object, i), Some(Label::Index(0))));
        let (text, kind) = match (edge("to_string"), edge("type_of")) {
            (Some(t), k) => (t, k),
            (None, _) => {
                let i = first?;
                (at(i)?, at(i + 1))
            }
        };
        match (text.as_str(), kind.as_deref()) {
            ("true" | "false", Some("boolean") | None) => {
                Some(ObjectFields::Value(format!("boolean {text}")))
            }
            ("null", Some("object") | None) | ("undefined", Some("undefined") | None) => {
                Some(ObjectFields::Value(text))
            }
            _ => None,
        }
    }

    /// The object the reference labelled `<class>` points at.
    fn class_of(&self, object: ObjectIdx) -> Option<ObjectIdx> {
        let refs = self.refs_of(object);
        (0..refs.len())
            .rev()
            .find(|&i| matches!(self.ref_label(object, i), Some(Label::Name("<class>"))))
            .map(|i| refs.get(i))
    }

    fn instance_fields(
        &self,
        object: ObjectIdx,
        class_object: ObjectIdx,
        class: &JavaClass,
    ) -> Vec<FieldView> {
        let classes = self.java_classes.as_ref().expect("checked");
        let bytes = self
            .values
            .as_ref()
            .and_then(|v| v.get(object))
            .filter(|(_, k)| *k == ValueKind::Bytes)
            .map_or(&[][..], |(b, _)| b);
        let refs = self.refs_of(object);
        let referent = self
            .referents
            .as_ref()
            .and_then(|r| r.of(object).map(|x| (x.referent, x.strength, r.strong)));
        let (mut at, mut next_ref) = (0usize, 0usize);
        let mut out = Vec::new();
        let mut cur = Some((class, Some(class_object)));
        let mut steps = 0;
        while let Some((c, declared_by)) = cur {
            steps += 1;
            if steps > classes.list().len() {
                break; // a superclass cycle
            }
            for f in &c.fields {
                let value = if f.tag == field_type::OBJECT {
                    let labelled = next_ref < refs.len()
                        && matches!(self.ref_label(object, next_ref), Some(Label::Name(n)) if *n == *f.name);
                    match referent.filter(|_| &*f.name == "referent") {
                        // Among the references only with `--references all`.
                        Some((r, strength, strong)) => {
                            next_ref += (strong && labelled) as usize;
                            FieldValue::Referent(r, strength, strong)
                        }
                        None if labelled => {
                            next_ref += 1;
                            FieldValue::Ref(Some(refs.get(next_ref - 1)))
                        }
                        None => FieldValue::Ref(None),
                    }
                } else if !f.kept {
                    FieldValue::NotKept // a String's cached hash
                } else {
                    let n = field_type::size(f.tag);
                    match bytes.get(at..at + n) {
                        Some(b) => {
                            at += n;
                            FieldValue::Primitive(primitive(f.tag, b))
                        }
                        None => FieldValue::Missing,
                    }
                };
                out.push(FieldView {
                    ty: field_type::name(f.tag),
                    name: f.name.to_string(),
                    declared_by,
                    value,
                });
            }
            cur = classes
                .get(c.super_id)
                .filter(|_| c.super_id != 0)
                .map(|s| (s, self.super_object(declared_by, s.id)));
        }
        out
    }

    /// The superclass object of `class_object` whose id is `id`, through
    /// its `<super>` reference.
    fn super_object(&self, class_object: Option<ObjectIdx>, id: u64) -> Option<ObjectIdx> {
        let c = class_object?;
        let refs = self.refs_of(c);
        (0..refs.len())
            .find(|&i| matches!(self.ref_label(c, i), Some(Label::Name("<super>"))))
            .map(|i| refs.get(i))
            .filter(|s| self.ids.get(s.index()) == id)
    }

    fn statics(&self, object: ObjectIdx, class: &JavaClass) -> Vec<FieldView> {
        let refs = self.refs_of(object);
        let mut next_ref = 0usize;
        class
            .statics
            .iter()
            .map(|f| {
                let value = if f.tag == field_type::OBJECT {
                    // Statics follow the class's fixed references, in
                    // order; a null one has no reference.
                    let found = (next_ref..refs.len()).find(|&i| {
                        matches!(self.ref_label(object, i), Some(Label::Name(n)) if *n == *f.name)
                    });
                    match found.filter(|_| f.raw != 0) {
                        Some(i) => {
                            next_ref = i + 1;
                            FieldValue::Ref(Some(refs.get(i)))
                        }
                        None => FieldValue::Ref(None),
                    }
                } else {
                    let n = field_type::size(f.tag);
                    let b = f.raw.to_be_bytes();
                    FieldValue::Primitive(primitive(f.tag, &b[8 - n.min(8)..]))
                };
                FieldView {
                    ty: field_type::name(f.tag),
                    name: f.name.to_string(),
                    declared_by: Some(object),
                    value,
                }
            })
            .collect()
    }

    /// A Java primitive array's length, first elements and text.
    fn primitive_array(&self, object: ObjectIdx) -> Option<ObjectFields> {
        if self.format != super::Format::Hprof {
            return None;
        }
        let tag = match self.type_name(object) {
            "boolean[]" => field_type::BOOLEAN,
            "char[]" => field_type::CHAR,
            "float[]" => field_type::FLOAT,
            "double[]" => field_type::DOUBLE,
            "byte[]" => field_type::BYTE,
            "short[]" => field_type::SHORT,
            "int[]" => field_type::INT,
            "long[]" => field_type::LONG,
            _ => return None,
        };
        let element = field_type::name(tag);
        let values = self.values.as_ref();
        let Some((bytes, kind)) = values.and_then(|v| v.get(object)) else {
            return Some(ObjectFields::PrimitiveArray {
                element,
                length: None,
                first: Vec::new(),
                text: None,
            });
        };
        let n = field_type::size(tag);
        // A compact string's UTF-16 `byte[]` is in the JVM's byte order.
        let little = kind == ValueKind::Utf16Le;
        let first = bytes
            .chunks_exact(n)
            .take(FIRST_ELEMENTS)
            .map(|b| {
                if little && tag == field_type::CHAR {
                    primitive(tag, &[b[1], b[0]])
                } else {
                    primitive(tag, b)
                }
            })
            .collect();
        let text = match tag {
            field_type::CHAR | field_type::BYTE => Some(
                values
                    .and_then(|v| v.text(object, TEXT_CHARS))
                    .unwrap_or_else(|| latin1(bytes, TEXT_CHARS)),
            ),
            _ => None,
        };
        Some(ObjectFields::PrimitiveArray {
            element,
            length: Some((bytes.len() / n) as u64),
            first,
            text,
        })
    }
}

/// A primitive's value from its big-endian bytes, as Java writes it.
pub fn primitive(tag: u8, b: &[u8]) -> String {
    let mut w = [0u8; 8];
    let n = b.len().min(8);
    w[8 - n..].copy_from_slice(&b[..n]);
    let v = u64::from_be_bytes(w);
    match tag {
        field_type::BOOLEAN => (v != 0).to_string(),
        field_type::BYTE => (v as u8 as i8).to_string(),
        field_type::SHORT => (v as u16 as i16).to_string(),
        field_type::INT => (v as u32 as i32).to_string(),
        field_type::LONG => (v as i64).to_string(),
        field_type::FLOAT => java_float(f32::from_bits(v as u32) as f64, true),
        field_type::DOUBLE => java_float(f64::from_bits(v), false),
        field_type::CHAR => {
            let c = char::from_u32(v as u32).unwrap_or('\u{fffd}');
            if c.is_control() || (0xd800..0xe000).contains(&(v as u32)) {
                format!("'\\u{:04x}'", v as u16)
            } else {
                format!("'{c}'")
            }
        }
        _ => format!("0x{v:x}"),
    }
}

/// A float or double as Java prints it: `0.75`, `1.0`, `NaN`, `Infinity`.
fn java_float(v: f64, single: bool) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else if single {
        let s = format!("{}", v as f32);
        if s.contains('.') || s.contains('e') {
            s
        } else {
            format!("{s}.0")
        }
    } else {
        let s = format!("{v}");
        if s.contains('.') || s.contains('e') {
            s
        } else {
            format!("{s}.0")
        }
    }
}

/// Bytes read as Latin-1 text, control characters and bytes past ASCII
/// escaped as `\xHH`, at most `max` characters (`…` when cut).
fn latin1(bytes: &[u8], max: usize) -> String {
    let mut out = String::new();
    for (i, &b) in bytes.iter().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        if (0x20..0x7f).contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primitives_as_java_writes_them() {
        assert_eq!(primitive(field_type::INT, &1000i32.to_be_bytes()), "1000");
        assert_eq!(primitive(field_type::INT, &(-5i32).to_be_bytes()), "-5");
        assert_eq!(primitive(field_type::LONG, &(-1i64).to_be_bytes()), "-1");
        assert_eq!(primitive(field_type::SHORT, &(-2i16).to_be_bytes()), "-2");
        assert_eq!(primitive(field_type::BYTE, &[0xff]), "-1");
        assert_eq!(primitive(field_type::BOOLEAN, &[1]), "true");
        assert_eq!(primitive(field_type::BOOLEAN, &[0]), "false");
        assert_eq!(primitive(field_type::CHAR, &[0, b'a']), "'a'");
        assert_eq!(primitive(field_type::CHAR, &[0, 0x1b]), "'\\u001b'");
        assert_eq!(primitive(field_type::CHAR, &[0xd8, 0x00]), "'\\ud800'");
        assert_eq!(primitive(field_type::FLOAT, &0.75f32.to_be_bytes()), "0.75");
        assert_eq!(primitive(field_type::FLOAT, &1f32.to_be_bytes()), "1.0");
        assert_eq!(primitive(field_type::FLOAT, &0.1f32.to_be_bytes()), "0.1");
        assert_eq!(primitive(field_type::DOUBLE, &2.5f64.to_be_bytes()), "2.5");
        assert_eq!(
            primitive(field_type::DOUBLE, &f64::NAN.to_be_bytes()),
            "NaN"
        );
        assert_eq!(
            primitive(field_type::DOUBLE, &f64::NEG_INFINITY.to_be_bytes()),
            "-Infinity"
        );
        assert_eq!(latin1(b"a\x1b\xe9b", 10), "a\\x1b\\xe9b");
        assert_eq!(latin1(b"abc", 2), "ab…");
    }
}
