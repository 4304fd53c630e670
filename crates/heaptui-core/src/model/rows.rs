//! The type a dominator-tree row groups an object by (docs/analyses.md,
//! "Rows and type paths"): its type, but for a Java class object (an
//! HPROF class dump, of type `java.lang.Class`) the class it describes,
//! named `class OrderService`. A class's static fields are what it retains,
//! so the class that holds a leak is a row of its own, one Enter away, and
//! a type path reads `class OrderService / java.util.HashMap / …`. Type
//! statistics keep `java.lang.Class` (per-type counts match the JVM's
//! class histogram).
//!
//! The HPROF importer adds a type name `class X` for every class it dumps
//! (no object has that type); the class object's value is its class's
//! name, which finds the row's type. The table is made once, at the first
//! look-up (the graph's construction asks for it), from what the model
//! holds, so a model read back from the reopen cache has it too. Other
//! formats have no class objects in the heap: their rows are their types.

use std::sync::OnceLock;

use rayon::prelude::*;

use super::{FastMap, Format, Model, ObjectIdx, TypeIdx, ValueKind};

/// The prefix of a class object's row type.
pub const CLASS_ROW_PREFIX: &str = "class ";

/// Class objects' row types, made at the first look-up.
#[derive(Debug, Default)]
pub struct RowTypes(OnceLock<Table>);

#[derive(Debug, Default)]
pub struct Table {
    /// The type of class objects, where the dump has any.
    class_type: Option<TypeIdx>,
    /// `(class object, its row type)`, by object.
    rows: Vec<(ObjectIdx, TypeIdx)>,
}

impl Table {
    /// The row type of `object`, whose type is `ty`. O(1) for every object
    /// but a class object (a binary search over the classes).
    #[inline]
    pub fn of(&self, object: ObjectIdx, ty: TypeIdx) -> TypeIdx {
        if Some(ty) != self.class_type {
            return ty;
        }
        match self.rows.binary_search_by_key(&object, |r| r.0) {
            Ok(i) => self.rows[i].1,
            Err(_) => ty,
        }
    }

    /// The class objects' row types (`class X`), one per class object.
    pub fn class_rows(&self) -> impl Iterator<Item = TypeIdx> + '_ {
        self.rows.iter().map(|r| r.1)
    }

    /// How many class objects have a row type of their own.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    fn build(m: &Model) -> Table {
        let none = Table::default();
        if m.format != Format::Hprof {
            return none;
        }
        let Some(values) = &m.values else {
            return none;
        };
        let Some(class_type) = m.type_names.iter().position(|n| &**n == "java.lang.Class") else {
            return none;
        };
        let class_type = TypeIdx::from_usize(class_type);
        let by_name: FastMap<&str, TypeIdx> = m
            .type_names
            .iter()
            .enumerate()
            .filter(|(_, n)| n.starts_with(CLASS_ROW_PREFIX))
            .map(|(i, n)| (&**n, TypeIdx::from_usize(i)))
            .collect();
        if by_name.is_empty() {
            return none;
        }
        let types = m.types.to_vec();
        let rows: Vec<(ObjectIdx, TypeIdx)> = types
            .par_iter()
            .enumerate()
            .filter(|&(_, &t)| t == class_type)
            .filter_map(|(o, _)| {
                let o = ObjectIdx::from_usize(o);
                let (bytes, kind) = values.get(o)?;
                if kind != ValueKind::Utf8 {
                    return None;
                }
                let name = format!("{CLASS_ROW_PREFIX}{}", String::from_utf8_lossy(bytes));
                by_name.get(name.as_str()).map(|&t| (o, t))
            })
            .collect();
        Table {
            class_type: Some(class_type),
            rows,
        }
    }
}

impl Model {
    /// The class objects' row types (made at the first call: one pass
    /// over the objects' types).
    pub fn row_types(&self) -> &Table {
        self.row_types.0.get_or_init(|| Table::build(self))
    }

    /// The type `object`'s dominator-tree row and type paths group it by:
    /// its type, but `class X` for the class object of a Java class `X`.
    #[inline]
    pub fn row_type(&self, object: ObjectIdx) -> TypeIdx {
        self.row_types().of(object, self.type_of(object))
    }

    /// The name of [`Model::row_type`].
    pub fn row_type_name(&self, object: ObjectIdx) -> &str {
        self.name_of_type(self.row_type(object))
    }

    /// Whether `object` is grouped by a type other than its own (a Java
    /// class object, whose row names its class: no preview of its name
    /// beside it).
    pub fn has_row_type(&self, object: ObjectIdx) -> bool {
        self.row_type(object) != self.type_of(object)
    }

    /// [`Model::quoted_preview`] for a row named by [`Model::row_type`]:
    /// nothing for a class object (its row type names it already).
    pub fn row_quoted_preview(&self, object: ObjectIdx, max_chars: usize) -> String {
        match self.has_row_type(object) {
            true => String::new(),
            false => self.quoted_preview(object, max_chars),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Values;

    /// Objects: a class object of `A`, an instance of `A`, a class object
    /// whose name has no `class` type, and a class object without a value.
    fn model(format: Format) -> Model {
        let names = ["java.lang.Class", "A", "class A", "class B"];
        let values = Values::from_parts([
            (&b"A"[..], ValueKind::Utf8),
            (&b""[..], ValueKind::None),
            (&b"C"[..], ValueKind::Utf8),
            (&b""[..], ValueKind::None),
        ]);
        Model {
            format,
            type_names: names.into_iter().map(Into::into).collect(),
            ids: vec![1, 2, 3, 4].into(),
            types: vec![TypeIdx(0), TypeIdx(1), TypeIdx(0), TypeIdx(0)].into(),
            values: Some(values),
            ..Default::default()
        }
    }

    #[test]
    fn a_class_object_is_grouped_by_its_class() {
        let m = model(Format::Hprof);
        let t = |o: u32| m.row_type_name(ObjectIdx(o));
        assert_eq!(t(0), "class A");
        assert_eq!(t(1), "A", "an instance keeps its type");
        assert_eq!(t(2), "java.lang.Class", "no `class C` type: its own type");
        assert_eq!(t(3), "java.lang.Class", "no name: its own type");
        assert!(m.has_row_type(ObjectIdx(0)));
        assert!(!m.has_row_type(ObjectIdx(1)));
        assert_eq!(m.row_types().len(), 1);
        assert_eq!(m.type_name(ObjectIdx(0)), "java.lang.Class");
    }

    #[test]
    fn other_formats_keep_their_types() {
        for f in [Format::Rpm, Format::Heapsnapshot, Format::Gcdump] {
            let m = model(f);
            assert_eq!(m.row_type_name(ObjectIdx(0)), "java.lang.Class");
            assert!(m.row_types().is_empty());
        }
    }
}
