//! `object` and `object_list`: one object as the inspector shows it (what
//! `report --object ID --json` writes: sizes, fields and values, a
//! primitive array's elements, references), with its retainers, its
//! domination path, a shortest retention path from a root (field names on
//! each step) and the duplicate set it belongs to; then any of those lists
//! page by page.

use std::ops::Range;

use serde::Deserialize;
use serde_json::{json, Value};

use heaptui_core::analysis::{domination_path, shortest_retention_path, Analysis};
use heaptui_core::model::ObjectIdx;
use heaptui_core::report::object_value;

use super::{more, object_ref, parse_id, redact_object};
use crate::page::{window, Page, Refusal};
use crate::state::Loaded;

/// Rows of each list the `object` answer shows; `object_list` pages on.
const SHOWN: usize = 20;
/// Fields shown by `object` (an instance has a few; a class many statics).
const FIELDS: usize = 60;
/// Reference slots scanned for the field name of one path step while the
/// long rows' label index is being built (right after the analysis); once
/// it exists a long row is searched, whatever its length.
const LABEL_SCAN: usize = 1 << 16;

/// The lists of an object that `object_list` pages through.
#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ObjectList {
    /// Instance fields (own class first) with their values.
    Fields,
    /// A class object's static fields.
    Statics,
    /// The objects it references, in field order, with the field's name.
    References,
    /// The objects referencing it.
    Retainers,
    /// Its dominators, from the top of the tree down to the object.
    DominationPath,
    /// A shortest reference path from a GC root down to the object.
    RetentionPath,
}

impl ObjectList {
    fn key(self) -> &'static str {
        match self {
            ObjectList::Fields => "fields",
            ObjectList::Statics => "statics",
            ObjectList::References => "references",
            ObjectList::Retainers => "retainers",
            ObjectList::DominationPath => "domination_path",
            ObjectList::RetentionPath => "retention_path",
        }
    }
}

/// Picks the rows of a list to show from its length.
type Pick<'p> = &'p dyn Fn(usize) -> Result<Range<usize>, Refusal>;

/// The rows `pick` chooses of one list of object `o`, and the list's
/// length; only the rows shown are built (an array's million references
/// cost a page).
fn list(
    a: &Analysis,
    o: ObjectIdx,
    which: ObjectList,
    redact: bool,
    pick: Pick,
) -> Result<(Vec<Value>, Range<usize>, usize), Refusal> {
    let dump = a.dump();
    let objects = |all: &[ObjectIdx], row: &dyn Fn(usize, ObjectIdx) -> Value| {
        let range = pick(all.len())?;
        let rows = range.clone().map(|i| row(i, all[i])).collect();
        Ok((rows, range, all.len()))
    };
    match which {
        ObjectList::Fields | ObjectList::Statics => {
            let mut v = object_value(a, o, 1);
            if redact {
                redact_object(&mut v);
            }
            let all = match v.get_mut(which.key()).map(Value::take) {
                Some(Value::Array(rows)) => rows,
                _ => Vec::new(),
            };
            let range = pick(all.len())?;
            let total = all.len();
            let rows = all
                .into_iter()
                .skip(range.start)
                .take(range.len())
                .collect();
            Ok((rows, range, total))
        }
        ObjectList::References => objects(&dump.refs_of(o).to_vec(), &|i, t| {
            let mut r = object_ref(a, t);
            r["field"] = json!(dump.ref_label(o, i).map(|l| l.to_string()));
            r
        }),
        ObjectList::Retainers => objects(&a.graph.retainers_of(o).collect::<Vec<_>>(), &|_, r| {
            let mut v = object_ref(a, r);
            v["field"] = json!(dump.label_between(r, o, LABEL_SCAN).map(|l| l.to_string()));
            v
        }),
        ObjectList::DominationPath => {
            let mut path = domination_path(&a.dom, o);
            path.reverse();
            objects(&path, &|_, d| object_ref(a, d))
        }
        ObjectList::RetentionPath => {
            let path = shortest_retention_path(&a.graph, &a.dom, o).unwrap_or_default();
            objects(&path, &|i, step| {
                let mut v = object_ref(a, step);
                if i > 0 {
                    let label = dump.label_between(path[i - 1], step, LABEL_SCAN);
                    v["field"] = json!(label.map(|l| l.to_string()));
                } else if let Some(place) = dump.root_place_of(step).filter(|_| !redact) {
                    // A thread's name is a string of the dump: not redacted.
                    v["root"] = json!(place);
                }
                v
            })
        }
    }
}

/// The duplicate set holding `o`, if any.
fn duplicate_set(a: &Analysis, o: ObjectIdx) -> Value {
    let Some(id) = a.duplicates.set_of(o.raw()) else {
        return Value::Null;
    };
    let s = &a.duplicates.sets[id as usize];
    json!({
        "set": id,
        "instances": a.duplicates.members(id).len(),
        "additional_bytes": s.additional_bytes,
        "holding_set": s.holding_set(),
        "next": "duplicate_set with this set number lists its members and what holds it",
    })
}

/// Object `id` in full, each long list cut to its first rows.
pub fn object(l: &Loaded, id: &str, redact: bool) -> Result<Value, Refusal> {
    let a = &l.analysis;
    let o = parse_id(a.dump(), id)?;
    let mut v = object_value(a, o, SHOWN);
    if redact {
        redact_object(&mut v);
    }
    let mut cut = Vec::new();
    for (key, n) in [("fields", FIELDS), ("statics", FIELDS)] {
        if let Some(Value::Array(rows)) = v.get_mut(key) {
            cut.extend(more(
                n.min(rows.len()),
                rows.len(),
                key,
                "page with object_list",
            ));
            rows.truncate(n);
        }
    }
    let refs = a.dump().refs_of(o).len();
    cut.extend(more(
        SHOWN.min(refs),
        refs,
        "references",
        "page with object_list",
    ));
    let mut out = json!({ "object": v });
    for which in [
        ObjectList::Retainers,
        ObjectList::DominationPath,
        ObjectList::RetentionPath,
    ] {
        // Paths keep the steps nearest the object, other lists their start.
        let tail = !matches!(which, ObjectList::Retainers);
        let pick = |n: usize| {
            Ok(if tail {
                n.saturating_sub(SHOWN)..n
            } else {
                0..n.min(SHOWN)
            })
        };
        let (rows, range, total) = list(a, o, which, redact, &pick)?;
        cut.extend(more(
            range.len(),
            total,
            which.key(),
            "page with object_list",
        ));
        out[which.key()] = Value::Array(rows);
    }
    out["duplicate_set"] = duplicate_set(a, o);
    if !cut.is_empty() {
        out["cut"] = json!(cut);
    }
    out["next"] = json!(
        "dominators with parent = this id lists what it retains; object_list pages its lists"
    );
    Ok(out)
}

/// A page of one list of object `id`.
pub fn object_list(
    l: &Loaded,
    id: &str,
    which: ObjectList,
    redact: bool,
    offset: Option<u64>,
    limit: Option<u64>,
) -> Result<Value, Refusal> {
    let a = &l.analysis;
    let o = parse_id(a.dump(), id)?;
    let pick = |n: usize| window(n, offset, limit);
    let (page, range, total) = list(a, o, which, redact, &pick)?;
    Ok(Page::new(which.key(), page, range.start, total)
        .with("object", object_ref(a, o))
        .finish())
}
