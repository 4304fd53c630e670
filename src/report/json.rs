//! `report --json`: the contract of SPEC §4, streamed (the `objects` array of
//! a 10-million-object heap is never built in memory).

use std::io::{self, Write};

use serde::Serialize;

use super::ReportOptions;
use crate::analysis::{immediate_dominators, objects_of_types, Analysis};
use crate::graph::{NOT_REACHABLE, SUPER_ROOT};
use crate::model::ObjectIdx;

#[derive(Serialize)]
struct Summary<'a> {
    objects: u64,
    references: u64,
    types: u64,
    roots: u64,
    app_domains: Vec<&'a str>,
    total_bytes: u64,
    reachable_objects: u64,
    reachable_bytes: u64,
    unreachable_objects: u64,
    unreachable_bytes: u64,
}

#[derive(Serialize)]
struct Diagnostics<'a> {
    skipped_lines: u64,
    dangling_references: u64,
    undefined_types: u64,
    duplicate_objects: u64,
    missing_root_objects: u64,
    clamped_roots: u64,
    messages: &'a [String],
}

#[derive(Serialize)]
struct Dominator<'a> {
    id: String,
    #[serde(rename = "type")]
    type_name: &'a str,
    shallow_bytes: u64,
    retained_bytes: u64,
    retained_objects: u64,
}

#[derive(Serialize)]
struct TypeRow<'a> {
    name: &'a str,
    count: u64,
    shallow_bytes: u64,
    min_retained_bytes: u64,
}

#[derive(Serialize)]
struct DuplicateRow<'a> {
    set: u32,
    #[serde(rename = "type")]
    type_name: &'a str,
    instances: u64,
    instance_bytes: u64,
    objects_per_copy: u64,
    additional_bytes: u64,
    trivial: bool,
    unverified: bool,
    held_by: &'a [u32],
    holding_set: Option<u32>,
    members: Vec<String>,
}

#[derive(Serialize)]
struct PossibleRow<'a> {
    #[serde(rename = "type")]
    type_name: &'a str,
    instances: u64,
}

#[derive(Serialize)]
struct ObjectRow<'a> {
    id: String,
    #[serde(rename = "type")]
    type_name: &'a str,
    shallow_bytes: u64,
    reachable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    idom: Option<Option<String>>,
    retained_bytes: u64,
    retained_objects: u64,
}

#[derive(Serialize)]
struct ImmediateDominatorRow<'a> {
    #[serde(rename = "type")]
    type_name: Option<&'a str>,
    dominators: u64,
    dominated_objects: u64,
    dominated_shallow_bytes: u64,
    dominators_retained_bytes: u64,
}

#[derive(Serialize)]
struct Timings {
    parse: u64,
    graph: u64,
    dominators: u64,
    duplicates: u64,
}

pub(super) fn json<T: Serialize>(out: &mut impl Write, value: &T) -> io::Result<()> {
    // `io::Error::from` hands an I/O error back with its kind (a closed pipe
    // stays `BrokenPipe`, which `main` treats as success); `io::Error::other`
    // would hide it behind `Other`.
    serde_json::to_writer(&mut *out, value).map_err(io::Error::from)
}

pub fn write_json(out: &mut impl Write, a: &Analysis, opts: &ReportOptions) -> io::Result<()> {
    let dump = a.dump();
    let dom = &a.dom;
    let hex = |o: u32| format!("{:x}", dump.ids[o as usize]);

    out.write_all(b"{\"file\":")?;
    json(out, &dump.path.display().to_string())?;
    out.write_all(b",\"format\":")?;
    json(out, &dump.format.key())?;
    out.write_all(b",\n\"summary\":")?;
    let s = &a.summary;
    json(
        out,
        &Summary {
            objects: s.objects,
            references: s.references,
            types: s.types,
            roots: s.root_records,
            app_domains: s
                .app_domains
                .iter()
                .filter(|d| !d.name.is_empty())
                .map(|d| d.name.as_str())
                .collect(),
            total_bytes: s.total_bytes,
            reachable_objects: s.reachable_objects,
            reachable_bytes: s.reachable_bytes,
            unreachable_objects: s.unreachable_objects,
            unreachable_bytes: s.unreachable_bytes,
        },
    )?;
    let d = &dump.diagnostics;
    out.write_all(b",\n\"diagnostics\":")?;
    json(
        out,
        &Diagnostics {
            skipped_lines: d.skipped_lines,
            dangling_references: d.dangling_references,
            undefined_types: d.undefined_types,
            duplicate_objects: d.duplicate_objects,
            missing_root_objects: d.missing_root_objects,
            clamped_roots: d.clamped_roots,
            messages: &d.messages,
        },
    )?;

    out.write_all(b",\n\"dominators\":[")?;
    let top = dom.children_of(dom.super_root());
    for (i, &o) in top[..opts.top_n(top.len())].iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        out.write_all(b"\n")?;
        json(
            out,
            &Dominator {
                id: hex(o),
                type_name: dump.type_name(ObjectIdx(o)),
                shallow_bytes: dump.sizes[o as usize],
                retained_bytes: dom.retained_bytes[o as usize],
                retained_objects: dom.retained_objects[o as usize] as u64,
            },
        )?;
    }

    out.write_all(b"],\n\"types\":[")?;
    let types = &a.types[..opts.rows_n(a.types.len(), usize::MAX)];
    for (i, t) in types.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        out.write_all(b"\n")?;
        json(
            out,
            &TypeRow {
                name: &dump.type_names[t.type_index.index()],
                count: t.count,
                shallow_bytes: t.shallow_bytes,
                min_retained_bytes: t.min_retained_bytes,
            },
        )?;
    }

    out.write_all(b"],\n\"duplicates\":[")?;
    let sets = &a.duplicates.sets;
    for (i, s) in sets[..opts.rows_n(sets.len(), usize::MAX)]
        .iter()
        .enumerate()
    {
        if i > 0 {
            out.write_all(b",")?;
        }
        out.write_all(b"\n")?;
        json(
            out,
            &DuplicateRow {
                set: s.id,
                type_name: &dump.type_names[s.type_index as usize],
                instances: s.members.len() as u64,
                instance_bytes: s.instance_bytes,
                objects_per_copy: s.objects_per_copy,
                additional_bytes: s.additional_bytes,
                trivial: s.trivial,
                unverified: a.duplicates.is_unverified(s),
                held_by: &s.held_by,
                holding_set: s.holding_set,
                members: s.members.iter().map(|&m| hex(m)).collect(),
            },
        )?;
    }
    out.write_all(b"]")?;
    if !a.duplicates.possible.is_empty() {
        out.write_all(b",\n\"possible_duplicates\":[")?;
        for (i, p) in a.duplicates.possible.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            json(
                out,
                &PossibleRow {
                    type_name: &dump.type_names[p.type_index as usize],
                    instances: p.instances.len() as u64,
                },
            )?;
        }
        out.write_all(b"]")?;
    }

    if let Some((pattern, skip)) = &opts.immediate_dominators {
        let set = objects_of_types(dump, pattern);
        out.write_all(b",\n\"immediate_dominators\":[")?;
        for (i, r) in immediate_dominators(dump, dom, &set, skip.as_ref())
            .iter()
            .enumerate()
        {
            if i > 0 {
                out.write_all(b",")?;
            }
            out.write_all(b"\n")?;
            json(
                out,
                &ImmediateDominatorRow {
                    type_name: r.type_index.map(|t| &*dump.type_names[t.index()]),
                    dominators: r.dominators.len() as u64,
                    dominated_objects: r.dominated_objects,
                    dominated_shallow_bytes: r.dominated_shallow_bytes,
                    dominators_retained_bytes: r.dominators_retained_bytes,
                },
            )?;
        }
        out.write_all(b"]")?;
    }

    if opts.objects {
        out.write_all(b",\n\"objects\":[")?;
        for o in 0..dump.objects() as u32 {
            if o > 0 {
                out.write_all(b",")?;
            }
            out.write_all(b"\n")?;
            let idom = dom.idom[o as usize];
            json(
                out,
                &ObjectRow {
                    id: hex(o),
                    type_name: dump.type_name(ObjectIdx(o)),
                    shallow_bytes: dump.sizes[o as usize],
                    reachable: idom != NOT_REACHABLE,
                    idom: match idom {
                        NOT_REACHABLE => None,
                        SUPER_ROOT => Some(None),
                        d => Some(Some(hex(d))),
                    },
                    retained_bytes: dom.retained_bytes[o as usize],
                    retained_objects: dom.retained_objects[o as usize] as u64,
                },
            )?;
        }
        out.write_all(b"]")?;
    }

    super::compare_json::write_json_extras(out, a, opts)?;

    let t = a.timings;
    out.write_all(b",\n\"timings_ms\":")?;
    json(
        out,
        &Timings {
            parse: t.parse_ms,
            graph: t.graph_ms,
            dominators: t.dominators_ms,
            duplicates: t.duplicates_ms,
        },
    )?;
    out.write_all(b"}\n")
}
