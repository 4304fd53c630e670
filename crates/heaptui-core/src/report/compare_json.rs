//! The `comparison` and `suspects` keys of `report --json` (docs/json.md).

use std::io::{self, Write};

use serde::Serialize;

use super::json::{json, write_array};
use super::ReportOptions;
use crate::analysis::compare::{Comparison, DuplicateComparison};
use crate::analysis::suspects::{suspects, Suspect};
use crate::analysis::Analysis;
use crate::model::{Format, ObjectIdx};

#[derive(Serialize)]
struct TypeRow<'a> {
    name: &'a str,
    count: &'a [u64],
    shallow_bytes: &'a [u64],
    min_retained_bytes: &'a [u64],
    #[serde(skip_serializing_if = "Option::is_none")]
    new: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    deleted: Option<u64>,
}

#[derive(Serialize)]
struct PathRow<'a> {
    path: Vec<&'a str>,
    count: Vec<u64>,
    retained_bytes: Vec<u64>,
    retained_objects: Vec<u64>,
    grows_steadily: bool,
}

#[derive(Serialize)]
struct DuplicateRow<'a> {
    #[serde(rename = "type")]
    type_name: &'a str,
    instance_bytes: u64,
    objects_per_copy: u64,
    instances: &'a [u64],
    additional_bytes: &'a [u64],
}

#[derive(Serialize)]
struct Point<'a> {
    id: String,
    #[serde(rename = "type")]
    type_name: &'a str,
    retained_bytes: u64,
    path: Vec<&'a str>,
}

#[derive(Serialize)]
struct NamedBytes<'a> {
    name: &'a str,
    retained_bytes: u64,
}

#[derive(Serialize)]
struct PathStep<'a> {
    id: String,
    #[serde(rename = "type")]
    type_name: &'a str,
}

#[derive(Serialize)]
struct GrowthRow<'a> {
    path: Vec<&'a str>,
    count: &'a [u64],
    retained_bytes: &'a [u64],
}

#[derive(Serialize)]
struct SuspectRow<'a> {
    kind: &'static str,
    #[serde(rename = "type")]
    type_name: &'a str,
    id: Option<String>,
    retained_bytes: u64,
    instances: u64,
    accumulation_point: Point<'a>,
    top_types: Vec<NamedBytes<'a>>,
    retention_path: Vec<PathStep<'a>>,
    /// Where the retention path's root lies: `thread main, frame
    /// Leaky.main:12` (HPROF roots in a thread only).
    #[serde(skip_serializing_if = "Option::is_none")]
    retention_root: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    growth: Option<GrowthRow<'a>>,
}

/// `comparison.duplicate_owners[]`.
#[derive(Serialize)]
struct OwnerGrowthRow<'a> {
    path: &'a [String],
    bytes: &'a [u64],
    copies: &'a [u64],
}

/// Writes `,"comparison":{…}` (with a comparison) and `,"suspects":[…]`.
pub fn write_json_extras(
    out: &mut impl Write,
    a: &Analysis,
    opts: &ReportOptions,
) -> io::Result<()> {
    let c = opts.comparison.as_deref();
    if let Some(c) = c {
        out.write_all(b",\n\"comparison\":")?;
        write_comparison(out, c, opts.top)?;
    }
    out.write_all(b",\n\"suspects\":[")?;
    let all = suspects(a, c);
    write_array(out, all.iter().map(|s| suspect_row(a, c, s)), true)?;
    out.write_all(b"]")
}

/// The `comparison` object; `top` limits `paths` (0 = all).
pub fn write_comparison(out: &mut impl Write, c: &Comparison, top: usize) -> io::Result<()> {
    out.write_all(b"{\"files\":")?;
    let files: Vec<String> = c.files.iter().map(|f| f.display().to_string()).collect();
    json(out, &files)?;
    out.write_all(b",\n\"types\":[")?;
    write_array(out, type_rows(c), true)?;
    out.write_all(b"],\n\"paths\":[")?;
    let rows = c.changed_paths();
    let shown = if top == 0 {
        rows.len()
    } else {
        top.min(rows.len())
    };
    write_array(out, rows[..shown].iter().map(|&r| path_row(c, r)), true)?;
    out.write_all(b"],\n\"duplicates\":[")?;
    write_array(out, c.duplicates.iter().map(|d| duplicate_row(c, d)), true)?;
    out.write_all(b"],\n\"duplicate_owners\":[")?;
    let differs = |v: &[u64]| v.windows(2).any(|w| w[0] != w[1]);
    let owners = c
        .owners
        .iter()
        .filter(|o| differs(&o.bytes) || differs(&o.copies))
        .map(|o| OwnerGrowthRow {
            path: &o.path,
            bytes: &o.bytes,
            copies: &o.copies,
        });
    write_array(out, owners, true)?;
    out.write_all(b"]}")
}

/// The `types` rows; `new` and `deleted` need stable ids: V8 snapshots
/// only (docs/analyses.md).
fn type_rows(c: &Comparison) -> impl Iterator<Item = TypeRow<'_>> {
    let stable = c.has_stable_ids() && c.formats.iter().all(|&f| f == Format::Heapsnapshot);
    c.types.iter().map(move |t| {
        let nd = t.new_deleted.filter(|_| stable);
        TypeRow {
            name: &c.type_names[t.type_id as usize],
            count: &t.count,
            shallow_bytes: &t.shallow_bytes,
            min_retained_bytes: &t.min_retained_bytes,
            new: nd.map(|x| x.0),
            deleted: nd.map(|x| x.1),
        }
    })
}

/// One set's row of the comparison's `duplicates`.
fn duplicate_row<'a>(c: &'a Comparison, d: &'a DuplicateComparison) -> DuplicateRow<'a> {
    DuplicateRow {
        type_name: &c.type_names[d.type_id as usize],
        instance_bytes: d.instance_bytes,
        objects_per_copy: d.objects_per_copy,
        instances: &d.instances,
        additional_bytes: &d.additional_bytes,
    }
}

/// Path row `r` of the comparison's `paths`.
fn path_row(c: &Comparison, r: u32) -> PathRow<'_> {
    let f = c.paths.figures_of(r);
    PathRow {
        path: c.path_names(r),
        count: f.iter().map(|x| x.count as u64).collect(),
        retained_bytes: f.iter().map(|x| x.retained_bytes).collect(),
        retained_objects: f.iter().map(|x| x.retained_objects as u64).collect(),
        grows_steadily: c.paths.grows_steadily(r),
    }
}

/// One leak suspect as `report --json` writes it in `suspects`
/// (docs/json.md): for callers that answer with a value (the MCP server).
pub fn suspect_value(a: &Analysis, c: Option<&Comparison>, s: &Suspect) -> serde_json::Value {
    serde_json::to_value(suspect_row(a, c, s)).unwrap_or(serde_json::Value::Null)
}

fn suspect_row<'a>(a: &'a Analysis, c: Option<&'a Comparison>, s: &'a Suspect) -> SuspectRow<'a> {
    let dump = a.dump();
    let dom = &a.dom;
    let point = s.accumulation_point;
    SuspectRow {
        kind: s.kind.key(),
        type_name: &dump.type_names[s.type_index.index()],
        id: s.object.map(|o| dump.id_hex(o)),
        retained_bytes: s.retained_bytes,
        instances: s.instances,
        accumulation_point: Point {
            id: dump.id_hex(ObjectIdx(point)),
            type_name: dump.type_name(ObjectIdx(point)),
            retained_bytes: dom.retained_bytes(point as usize),
            path: s
                .point_path(dom)
                .iter()
                .map(|&o| dump.row_type_name(o))
                .collect(),
        },
        top_types: s
            .top_types
            .iter()
            .map(|&(t, b)| NamedBytes {
                name: &dump.type_names[t.index()],
                retained_bytes: b,
            })
            .collect(),
        retention_path: s
            .retention_path
            .iter()
            .map(|&o| PathStep {
                id: dump.id_hex(o),
                type_name: dump.type_name(o),
            })
            .collect(),
        retention_root: s
            .retention_path
            .first()
            .and_then(|&o| dump.root_place_of(o)),
        growth: s.growth.as_ref().zip(c).map(|(g, c)| GrowthRow {
            path: c.path_names(g.path),
            count: &g.count,
            retained_bytes: &g.retained_bytes,
        }),
    }
}
