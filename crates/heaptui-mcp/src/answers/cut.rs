//! `what_if`: what taking some objects and some fields out of the heap
//! would free (docs/analyses.md, "What a cut would free"), one cut made of
//! every object id and every `Type.field` of the call, as the report's
//! `--what-if` answers each field: the freed objects and bytes, and a page
//! of the freed objects by type, each type with an example id.

use std::collections::HashMap;

use serde_json::{json, Value};

use heaptui_core::analysis::{field_cut, what_if, Cut};
use heaptui_core::model::printable;
use heaptui_core::model::{ObjectIdx, TypeIdx};
use heaptui_core::progress::Progress;

use super::{object_ref, parse_id, quoted};
use crate::page::{window, Page, Refusal};
use crate::state::Loaded;

/// Object ids one cut may name.
pub const MAX_OBJECTS: usize = 1000;
/// `Type.field` specs one cut may name.
pub const MAX_FIELDS: usize = 20;

/// What a cut is made of, as the call gives it.
pub struct CutSpec<'a> {
    /// Object ids (hex), each taken out.
    pub objects: &'a [String],
    /// `Type.field` (a static: `Class.FIELD`), the reference of that name
    /// of every instance dropped.
    pub fields: &'a [String],
}

/// The cut `spec` names, with what each field spec resolved to; refused
/// when it names nothing, too much, or what is not in the dump.
fn resolve(l: &Loaded, spec: &CutSpec) -> Result<(Cut, Vec<Value>), Refusal> {
    let dump = l.analysis.dump();
    if spec.objects.is_empty() && spec.fields.is_empty() {
        return Err(Refusal::new(
            "an empty cut: give object ids (objects) and/or Type.field names (fields)",
        ));
    }
    if spec.objects.len() > MAX_OBJECTS || spec.fields.len() > MAX_FIELDS {
        return Err(Refusal::new(format!(
            "a cut names at most {MAX_OBJECTS} objects and {MAX_FIELDS} fields"
        )));
    }
    let mut cut = Cut::default();
    for id in spec.objects {
        cut.objects.push(parse_id(dump, id)?);
    }
    let mut fields = Vec::new();
    for f in spec.fields {
        let (type_name, field, c) = field_cut(dump, f).map_err(|e| {
            // The message repeats the call's text: escaped and short.
            let why: String = e.to_string().chars().take(400).collect();
            Refusal::new(format!(
                "what_if {}: {}",
                quoted(f),
                printable(why.as_bytes())
            ))
        })?;
        fields.push(json!({
            "type": type_name,
            "field": field,
            "references": c.edges.len(),
        }));
        cut.edges.extend(c.edges);
    }
    Ok((cut, fields))
}

/// What the cut `spec` would free, a page of its freed types; the walk
/// stops when `progress` is cancelled (the call was).
pub fn what_if_answer(
    l: &Loaded,
    spec: &CutSpec,
    progress: &Progress,
    offset: Option<u64>,
    limit: Option<u64>,
) -> Result<Value, Refusal> {
    let a = &l.analysis;
    let (cut, fields) = resolve(l, spec)?;
    let result =
        what_if(&a.graph, &a.dom, &cut, progress).map_err(|_| Refusal::new("cancelled"))?;
    let range = window(result.by_type.len(), offset, limit)?;
    let shown = &result.by_type[range.clone()];
    // One freed object of each type on the page.
    let dump = a.dump();
    let mut example: HashMap<TypeIdx, ObjectIdx> = shown
        .iter()
        .map(|t| (t.type_index, ObjectIdx(u32::MAX)))
        .collect();
    let mut missing = example.len();
    for &o in &result.freed {
        if missing == 0 {
            break;
        }
        if let Some(e) = example.get_mut(&dump.row_type(o)) {
            if e.0 == u32::MAX {
                *e = o;
                missing -= 1;
            }
        }
    }
    let rows = shown
        .iter()
        .map(|t| {
            let e = example[&t.type_index];
            json!({
                "type": &*dump.type_names[t.type_index.index()],
                "objects": t.objects,
                "bytes": t.bytes,
                "example": (e.0 != u32::MAX).then(|| dump.id_hex(e)),
            })
        })
        .collect();
    let objects: Vec<Value> = cut.objects.iter().map(|&o| object_ref(a, o)).collect();
    Ok(Page::new("by_type", rows, range.start, result.by_type.len())
        .with("removed", json!({"objects": objects, "fields": fields}))
        .with("freed_objects", result.objects)
        .with("freed_bytes", result.bytes)
        .with(
            "next",
            "object with an example's id shows a freed object and what retains it now; instances lists a type's objects",
        )
        .finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::state::tests::demo;

    #[test]
    fn an_object_cut_frees_what_it_dominates() {
        let l = demo();
        let a = &l.analysis;
        for &top in a.dom.largest_roots().iter().take(5) {
            let id = a.dump().id_hex(ObjectIdx(top));
            let objects = [id];
            let spec = CutSpec {
                objects: &objects,
                fields: &[],
            };
            let v = what_if_answer(&l, &spec, &Progress::new(), None, Some(200)).unwrap();
            assert_eq!(v["freed_bytes"], a.dom.retained_bytes(top as usize));
            assert_eq!(
                v["freed_objects"],
                a.dom.retained_objects(top as usize) as u64
            );
            let sum: u64 = v["by_type"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["bytes"].as_u64().unwrap())
                .sum();
            assert_eq!(v["freed_bytes"], sum);
        }
    }

    #[test]
    fn a_cut_without_field_names_or_objects_is_refused() {
        let l = demo();
        let fields = ["MyApp.Node.next".to_string()];
        let spec = CutSpec {
            objects: &[],
            fields: &fields,
        };
        let why = what_if_answer(&l, &spec, &Progress::new(), None, None).unwrap_err();
        assert!(why.0.contains("records no field names"), "{}", why.0);
        let empty = CutSpec {
            objects: &[],
            fields: &[],
        };
        assert!(what_if_answer(&l, &empty, &Progress::new(), None, None).is_err());
    }
}
