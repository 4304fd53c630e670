//! `report --object ID`: one object as the inspector shows it (sizes,
//! every field with its value, a primitive array's elements, a class's
//! static fields, its references), as text or JSON (docs/json.md).

use std::io::{self, Write};

use serde::Serialize;

use super::json::json;
use super::ReportOptions;
use crate::analysis::Analysis;
use crate::model::{FieldValue, FieldView, Model, ObjectFields, ObjectIdx, ROW_PREVIEW_CHARS};
use crate::text::{count, counted, size};

/// References listed unless `--top` says otherwise.
const REFERENCES: usize = 200;

#[derive(Serialize)]
struct ObjectRef {
    id: String,
    #[serde(rename = "type")]
    ty: String,
}

#[derive(Serialize)]
struct Field {
    name: String,
    #[serde(rename = "type")]
    ty: &'static str,
    /// A primitive's value as Java writes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<String>,
    /// A reference's object, `null` for null.
    #[serde(skip_serializing_if = "Option::is_none")]
    object: Option<Option<ObjectRef>>,
    /// A referent's kind (soft, weak, finalizer, phantom).
    #[serde(skip_serializing_if = "Option::is_none")]
    referent: Option<&'static str>,
    /// With `referent`: whether it retains (`--references all`).
    #[serde(skip_serializing_if = "Option::is_none")]
    retains: Option<bool>,
    /// Why the value is not shown: `"not in the dump"`, `"not kept"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    missing: Option<&'static str>,
}

#[derive(Serialize)]
struct Elements {
    #[serde(rename = "type")]
    ty: &'static str,
    length: Option<u64>,
    first: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
}

#[derive(Serialize)]
struct Reference {
    label: Option<String>,
    id: String,
    #[serde(rename = "type")]
    ty: String,
}

#[derive(Serialize)]
struct Object {
    id: String,
    #[serde(rename = "type")]
    ty: String,
    shallow_bytes: u64,
    reachable: bool,
    retained_bytes: u64,
    retained_objects: u64,
    text: Option<String>,
    /// A V8 number's or oddball's value (`number 3.14`, `boolean true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fields: Option<Vec<Field>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    statics: Option<Vec<Field>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    elements: Option<Elements>,
    references: Vec<Reference>,
    references_total: u64,
}

#[derive(Serialize)]
struct Report {
    file: String,
    format: &'static str,
    object: Object,
}

fn object_ref(dump: &Model, o: ObjectIdx) -> ObjectRef {
    ObjectRef {
        id: dump.id_hex(o),
        ty: dump.type_name(o).to_string(),
    }
}

fn field(dump: &Model, f: &FieldView) -> Field {
    let mut out = Field {
        name: f.name.clone(),
        ty: f.ty,
        value: None,
        object: None,
        referent: None,
        retains: None,
        missing: None,
    };
    match &f.value {
        FieldValue::Primitive(v) => out.value = Some(v.clone()),
        FieldValue::Missing => out.missing = Some("not in the dump"),
        FieldValue::NotKept => out.missing = Some("not kept"),
        FieldValue::Ref(o) => out.object = Some(o.map(|o| object_ref(dump, o))),
        FieldValue::Referent(o, strength, strong) => {
            out.object = Some(Some(object_ref(dump, *o)));
            out.referent = Some(strength.key());
            out.retains = Some(*strong);
        }
    }
    out
}

fn object(a: &Analysis, o: ObjectIdx, opts: &ReportOptions) -> Object {
    let dump = a.dump();
    let reachable = a.dom.is_reachable(o.raw());
    let refs = dump.refs_of(o);
    let shown = opts.rows_n(refs.len(), REFERENCES);
    let mut out = Object {
        id: dump.id_hex(o),
        ty: dump.type_name(o).to_string(),
        shallow_bytes: dump.size_of(o),
        reachable,
        retained_bytes: if reachable {
            a.dom.retained_bytes(o.index())
        } else {
            0
        },
        retained_objects: if reachable {
            a.dom.retained_objects(o.index()) as u64
        } else {
            0
        },
        text: dump.text_preview(o, 1000),
        value: None,
        fields: None,
        statics: None,
        elements: None,
        references: refs
            .slice(0..shown)
            .iter()
            .enumerate()
            .map(|(i, t)| Reference {
                label: dump.ref_label(o, i).map(|l| l.to_string()),
                id: dump.id_hex(t),
                ty: dump.type_name(t).to_string(),
            })
            .collect(),
        references_total: refs.len() as u64,
    };
    match dump.fields(o) {
        Some(ObjectFields::Instance(f)) => {
            out.fields = Some(f.iter().map(|f| field(dump, f)).collect())
        }
        Some(ObjectFields::Class(f)) => {
            out.statics = Some(f.iter().map(|f| field(dump, f)).collect())
        }
        Some(ObjectFields::PrimitiveArray {
            element,
            length,
            first,
            text,
        }) => {
            out.elements = Some(Elements {
                ty: element,
                length,
                first,
                text,
            })
        }
        Some(ObjectFields::Value(v)) => out.value = Some(v),
        None => {}
    }
    out
}

/// One object as `report --object ID --json` writes its `object` key
/// (docs/json.md), with at most `references` of its references: for
/// callers that answer with a value rather than a stream (the MCP server).
pub fn object_value(a: &Analysis, o: ObjectIdx, references: usize) -> serde_json::Value {
    let opts = ReportOptions {
        rows: Some(references.max(1)),
        ..ReportOptions::default()
    };
    serde_json::to_value(object(a, o, &opts)).unwrap_or(serde_json::Value::Null)
}

/// `report --object ID --json`.
pub fn write_object_json(
    out: &mut impl Write,
    a: &Analysis,
    o: ObjectIdx,
    opts: &ReportOptions,
) -> io::Result<()> {
    let dump = a.dump();
    json(
        out,
        &Report {
            file: dump.path.display().to_string(),
            format: dump.format.key(),
            object: object(a, o, opts),
        },
    )?;
    writeln!(out)
}

/// `report --object ID`: the object as the inspector shows it.
pub fn write_object_text(
    out: &mut impl Write,
    a: &Analysis,
    o: ObjectIdx,
    opts: &ReportOptions,
) -> io::Result<()> {
    let dump = a.dump();
    let v = object(a, o, opts);
    write_object_head(out, &v)?;
    if let Some(value) = &v.value {
        writeln!(out, "Value\n  {value}")?;
    }
    if let Some(f) = &v.fields {
        write_fields(out, dump, "Fields, own class first", f)?;
    }
    if let Some(f) = &v.statics {
        write_fields(out, dump, "Static fields", f)?;
    }
    if let Some(e) = &v.elements {
        write_elements(out, e)?;
    }
    writeln!(out, "References ({})", count(v.references_total))?;
    for r in &v.references {
        let l = r
            .label
            .as_deref()
            .map(|l| format!("{l} → "))
            .unwrap_or_default();
        writeln!(out, "  {l}{}", label(dump, &r.id, &r.ty))?;
    }
    if v.references_total > v.references.len() as u64 {
        writeln!(
            out,
            "  … {} more (--top 0 lists all)",
            count(v.references_total - v.references.len() as u64)
        )?;
    }
    Ok(())
}

/// An object named in the text: its type, the text it holds, its id.
fn label(dump: &Model, id: &str, ty: &str) -> String {
    let t = dump.index_of(u64::from_str_radix(id, 16).unwrap_or(0));
    let preview = t.map_or(String::new(), |t| dump.quoted_preview(t, ROW_PREVIEW_CHARS));
    format!("{ty}{preview} {id}")
}

/// The object's id, type, sizes and text.
fn write_object_head(out: &mut impl Write, v: &Object) -> io::Result<()> {
    writeln!(out, "Object {} {}", v.id, v.ty)?;
    writeln!(out, "  shallow {}", size(v.shallow_bytes))?;
    if v.reachable {
        writeln!(
            out,
            "  retained {} in {}",
            size(v.retained_bytes),
            counted(v.retained_objects, "object", "objects")
        )?;
    } else {
        writeln!(
            out,
            "  unreachable: no strong root reaches it (garbage, weakly held, or held only by references)"
        )?;
    }
    if let Some(t) = &v.text {
        writeln!(out, "  value \"{t}\"")?;
    }
    Ok(())
}

fn write_fields(
    out: &mut impl Write,
    dump: &Model,
    title: &str,
    fields: &[Field],
) -> io::Result<()> {
    writeln!(out, "{title} ({})", count(fields.len() as u64))?;
    for f in fields {
        let name = &f.name;
        match (&f.value, &f.object) {
            (Some(v), _) => writeln!(out, "  {} {name} = {v}", f.ty)?,
            (None, Some(Some(r))) => {
                let kind = match (f.referent, f.retains) {
                    (Some(k), Some(true)) => format!(" [{k}, retains]"),
                    (Some(k), _) => format!(" [{k}]"),
                    _ => String::new(),
                };
                writeln!(
                    out,
                    "  {} {name}{kind} → {}",
                    f.ty,
                    label(dump, &r.id, &r.ty)
                )?
            }
            (None, Some(None)) => writeln!(out, "  {} {name} = null", f.ty)?,
            (None, None) => writeln!(
                out,
                "  {} {name} = ? ({})",
                f.ty,
                f.missing.unwrap_or("not in the dump")
            )?,
        }
    }
    Ok(())
}

fn write_elements(out: &mut impl Write, e: &Elements) -> io::Result<()> {
    writeln!(out, "Elements")?;
    let Some(n) = e.length else {
        return writeln!(out, "  not in the dump (no contents dumped)");
    };
    writeln!(out, "  {}[{}]", e.ty, count(n))?;
    if !e.first.is_empty() {
        let more = if (e.first.len() as u64) < n {
            ", …"
        } else {
            ""
        };
        writeln!(out, "  {{{}{more}}}", e.first.join(", "))?;
    }
    if let Some(t) = &e.text {
        writeln!(out, "  as text \"{t}\"")?;
    }
    Ok(())
}
