//! `report --json`: the contract of docs/json.md, streamed (the `objects` array of
//! a 10-million-object heap is never built in memory).

use std::io::{self, Write};

use serde::{Serialize, Serializer};

use super::ReportOptions;
use crate::analysis::{immediate_dominators, objects_of_types, Analysis, Glob};
use crate::graph::{NOT_REACHABLE, SUPER_ROOT};
use crate::model::{Ids, ObjectIdx};

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
    #[serde(skip_serializing_if = "Option::is_none")]
    held_by_references: Option<HeldByReferences>,
}

/// Objects and bytes.
#[derive(Serialize)]
struct Part {
    objects: u64,
    bytes: u64,
}

/// `summary.held_by_references` (HPROF only).
#[derive(Serialize)]
struct HeldByReferences {
    referents_retain: bool,
    reference_objects: u64,
    objects: u64,
    bytes: u64,
    soft: Part,
    weak: Part,
    finalizer: Part,
    phantom: Part,
}

impl From<&crate::analysis::roots::HeldByReferences> for HeldByReferences {
    fn from(h: &crate::analysis::roots::HeldByReferences) -> Self {
        let part = |i: usize| Part {
            objects: h.by_strength[i].0,
            bytes: h.by_strength[i].1,
        };
        HeldByReferences {
            referents_retain: h.strong,
            reference_objects: h.referents,
            objects: h.objects(),
            bytes: h.bytes(),
            soft: part(0),
            weak: part(1),
            finalizer: part(2),
            phantom: part(3),
        }
    }
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

/// An object id as JSON writes it, lowercase hex without leading zeros
/// (what `format!("{:x}")` gives), formatted on the stack: the duplicate
/// sets of a 10-million-object heap list millions of members, and a
/// `String` each made writing them the slowest part of the report.
#[derive(Clone, Copy)]
pub(super) struct Hex(pub(super) u64);

impl Hex {
    /// The digits, in the first `len` bytes of the array.
    fn digits(self) -> ([u8; 16], usize) {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let len = (64 - (self.0 | 1).leading_zeros()).div_ceil(4) as usize;
        let mut buf = [0u8; 16];
        for (i, b) in buf[..len].iter_mut().enumerate() {
            *b = DIGITS[(self.0 >> (4 * (len - 1 - i))) as usize & 15];
        }
        (buf, len)
    }
}

impl Serialize for Hex {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (buf, len) = self.digits();
        // Hex digits are ASCII.
        s.serialize_str(std::str::from_utf8(&buf[..len]).unwrap_or_default())
    }
}

/// The ids of a list of objects, as a JSON array of [`Hex`] strings.
struct HexIds<'a> {
    objects: &'a [u32],
    ids: &'a Ids,
}

impl Serialize for HexIds<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.objects.iter().map(|&o| Hex(self.ids.get(o as usize))))
    }
}

#[derive(Serialize)]
struct Dominator<'a> {
    id: Hex,
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
    members: HexIds<'a>,
}

#[derive(Serialize)]
struct PossibleRow<'a> {
    #[serde(rename = "type")]
    type_name: &'a str,
    instances: u64,
}

#[derive(Serialize)]
struct ObjectRow<'a> {
    id: Hex,
    #[serde(rename = "type")]
    type_name: &'a str,
    shallow_bytes: u64,
    reachable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    idom: Option<Option<Hex>>,
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
struct WhatIfRow<'a> {
    #[serde(rename = "type")]
    type_name: &'a str,
    field: &'a str,
    references: u64,
    freed_objects: u64,
    freed_bytes: u64,
    by_type: Vec<FreedTypeRow<'a>>,
}

#[derive(Serialize)]
struct FreedTypeRow<'a> {
    #[serde(rename = "type")]
    type_name: &'a str,
    objects: u64,
    bytes: u64,
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

/// About how many bytes one window of the duplicates array holds rendered,
/// whatever the thread count: the window's pieces are rendered at once.
const WINDOW_BYTES: usize = 8 << 20;

/// The fewest bytes a piece is cut at, however many threads share a
/// window.
const MIN_PIECE_BYTES: usize = 64 << 10;

/// What a member id takes rendered at most: 16 hex digits, the quotes and
/// a comma.
const MEMBER_BYTES: usize = 19;

/// Pieces a window holds: a few per thread, for the threads' balance.
fn pieces_per_window() -> usize {
    4 * rayon::current_num_threads()
}

/// About how many bytes one piece holds rendered: a window's
/// [`WINDOW_BYTES`] shared by its pieces, so that what a window holds
/// does not grow with the thread count.
fn piece_bytes() -> usize {
    (WINDOW_BYTES / pieces_per_window()).max(MIN_PIECE_BYTES)
}

/// About what set `s`'s row takes rendered without its members: the
/// field names and numbers (about 130 and 40 bytes), its type's name
/// and its holders.
fn row_bytes(held_by: &[u32], type_name: &str) -> usize {
    176 + type_name.len() + 11 * held_by.len()
}

/// A place in the duplicates array as a stream of items: item `k` of set
/// `i` is its row's fields up to the members' `[` (k = 0), its member
/// `k - 1` (1 ≤ k ≤ members), or the row's closing `]}` (k = members + 1).
type Place = (usize, usize);

/// Where the pieces start and end: places (each piece from one to the
/// next, in order, none empty) such that a piece holds about
/// `piece_bytes` rendered, a row's fields costing `row_bytes` and each
/// member [`MEMBER_BYTES`]: no piece is over that unless it is one item
/// alone (a row's fields, or a member where `piece_bytes` is under
/// [`MEMBER_BYTES`]). A set with more members than that is cut across pieces,
/// so a piece's bytes do not grow with a set's size (the 10.1 M text heap
/// has sets of 825,182 members, 9 MB rendered), and rows are counted at
/// their size (the 406 MB HPROF's 502,108 sets are pairs, whose fields
/// are most of their bytes).
fn piece_cuts(
    sets: usize,
    row_bytes: impl Fn(usize) -> usize,
    members: impl Fn(usize) -> usize,
    piece_bytes: usize,
) -> Vec<Place> {
    let mut cuts = vec![(0, 0)];
    // The bytes in the piece being filled.
    let mut filled = 0;
    for i in 0..sets {
        let row = row_bytes(i);
        if filled > 0 && filled + row > piece_bytes {
            cuts.push((i, 0));
            filled = 0;
        }
        filled += row;
        let n = members(i);
        let mut k = 1;
        while k <= n {
            let room = piece_bytes.saturating_sub(filled) / MEMBER_BYTES;
            if room == 0 && filled > 0 {
                cuts.push((i, k));
                filled = 0;
                continue;
            }
            let take = room.max(1).min(n + 1 - k);
            k += take;
            filled += take * MEMBER_BYTES;
        }
    }
    if cuts.last() != Some(&(sets, 0)) {
        cuts.push((sets, 0));
    }
    cuts
}

/// The rows of the `duplicates` array, of the first `count` sets (set `i`
/// numbered `i`, its position). A 10-million-object heap's sets list
/// millions of members, whose ids lie scattered in memory: the rows are
/// rendered into pieces of about `piece_bytes` ([`piece_cuts`], a large
/// set's members across several pieces) in parallel, a window of
/// [`pieces_per_window`] at a time, and written in order, so the output
/// is the same bytes as one sequential pass and no more than one window's
/// pieces are held at once.
fn write_duplicate_rows(
    out: &mut impl Write,
    a: &Analysis,
    count: usize,
    piece_bytes: usize,
) -> io::Result<()> {
    use rayon::prelude::*;
    let dump = a.dump();
    let d = &a.duplicates;
    let type_name = |i: usize| -> &str { &dump.type_names[d.sets[i].type_index as usize] };
    // Items `from..to` of set `i` (see [`Place`]).
    let items = |buf: &mut Vec<u8>, i: usize, from: usize, to: usize| -> io::Result<()> {
        let s = &d.sets[i];
        let members = d.members(i as u32);
        let n = members.len();
        if from == 0 {
            if i > 0 {
                buf.push(b',');
            }
            buf.push(b'\n');
            json(
                buf,
                &DuplicateRow {
                    set: i as u32,
                    type_name: type_name(i),
                    instances: n as u64,
                    instance_bytes: s.instance_bytes,
                    objects_per_copy: s.objects_per_copy,
                    additional_bytes: s.additional_bytes,
                    trivial: s.trivial(),
                    unverified: d.is_unverified(s),
                    held_by: d.held_by(i as u32),
                    holding_set: s.holding_set(),
                    members: HexIds {
                        objects: &[],
                        ids: &dump.ids,
                    },
                },
            )?;
            // The row without its members' closing `]}`, which comes last.
            buf.truncate(buf.len() - 2);
        }
        let first = from.max(1) - 1;
        let last = to.min(n + 1) - 1;
        for (k, &m) in members.iter().enumerate().take(last).skip(first) {
            if k > 0 {
                buf.push(b',');
            }
            json(buf, &Hex(dump.ids.get(m as usize)))?;
        }
        if to == n + 2 {
            buf.extend_from_slice(b"]}");
        }
        Ok(())
    };
    // The items from one place to the next.
    let piece = |(from, to): (Place, Place)| -> io::Result<Vec<u8>> {
        let mut buf = Vec::new();
        let (mut i, mut k) = from;
        while (i, k) < to {
            let end = if i == to.0 {
                to.1
            } else {
                d.members(i as u32).len() + 2
            };
            items(&mut buf, i, k, end)?;
            (i, k) = (i + 1, 0);
        }
        Ok(buf)
    };
    let cuts = piece_cuts(
        count,
        |i| row_bytes(d.held_by(i as u32), type_name(i)),
        |i| d.members(i as u32).len(),
        piece_bytes,
    );
    let pieces: Vec<(Place, Place)> = cuts.windows(2).map(|w| (w[0], w[1])).collect();
    for window in pieces.chunks(pieces_per_window()) {
        let rendered: Vec<io::Result<Vec<u8>>> = window.par_iter().map(|&p| piece(p)).collect();
        for buf in rendered {
            out.write_all(&buf?)?;
        }
    }
    Ok(())
}

/// `items` as the elements of a JSON array: `,` between them, each after
/// a newline when `newlines`.
pub(super) fn write_array<T: Serialize>(
    out: &mut impl Write,
    items: impl IntoIterator<Item = T>,
    newlines: bool,
) -> io::Result<()> {
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        if newlines {
            out.write_all(b"\n")?;
        }
        json(out, &item)?;
    }
    Ok(())
}

/// Writes the JSON report of `a` (docs/json.md, the contract), each section
/// in a `tracing` span of target `heaptui::profile` (see `crate::log`).
pub fn write_json(out: &mut impl Write, a: &Analysis, opts: &ReportOptions) -> io::Result<()> {
    let _span = tracing::debug_span!(target: "heaptui::profile", "json").entered();
    let _busy = crate::mem::busy();
    write_file(out, a)?;
    write_summary(out, &a.summary)?;
    write_diagnostics(out, &a.dump().diagnostics)?;
    write_dominators(out, a, opts)?;
    write_types(out, a, opts)?;
    // Each section's pages of a mapped cache file over the memory budget
    // leave the resident set before the next (`mem::checkpoint`).
    crate::mem::checkpoint("report: dominators, types");
    write_duplicates(out, a, opts)?;
    crate::mem::checkpoint("report: duplicates");
    write_owners(out, a, opts)?;
    crate::mem::checkpoint("report: owners");
    if let Some((pattern, skip)) = &opts.immediate_dominators {
        write_immediate_dominators(out, a, pattern, skip.as_ref())?;
    }
    super::paths::write_paths_json(out, a, opts)?;
    if !opts.what_if.is_empty() {
        write_what_if(out, a, opts)?;
    }
    if opts.objects {
        write_objects(out, a)?;
    }
    {
        let _span =
            tracing::debug_span!(target: "heaptui::profile", "suspects, comparison").entered();
        super::compare_json::write_json_extras(out, a, opts)?;
    }
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

/// The object opening the report: `file`, `format`, `details`.
fn write_file(out: &mut impl Write, a: &Analysis) -> io::Result<()> {
    let dump = a.dump();
    out.write_all(b"{\"file\":")?;
    json(out, &dump.path.display().to_string())?;
    out.write_all(b",\"format\":")?;
    json(out, &dump.format.key())?;
    if !dump.details.is_empty() {
        // The native formats' details, as the overview shows them (HPROF:
        // its version, identifier size, the object layout found).
        let details: serde_json::Map<String, serde_json::Value> = dump
            .details
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
            .collect();
        out.write_all(b",\n\"details\":")?;
        json(out, &details)?;
    }
    Ok(())
}

fn write_summary(out: &mut impl Write, s: &crate::analysis::summary::Summary) -> io::Result<()> {
    out.write_all(b",\n\"summary\":")?;
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
            held_by_references: s.held_by_references.as_ref().map(Into::into),
        },
    )
}

fn write_diagnostics(out: &mut impl Write, d: &crate::model::Diagnostics) -> io::Result<()> {
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
    )
}

fn write_dominators(out: &mut impl Write, a: &Analysis, opts: &ReportOptions) -> io::Result<()> {
    let (dump, dom) = (a.dump(), &a.dom);
    out.write_all(b",\n\"dominators\":[")?;
    let root = dom.super_root();
    let top = dom.largest_children(root, opts.top_n(dom.children(root).count()));
    let rows = top.iter().map(|&o| Dominator {
        id: Hex(dump.ids.get(o as usize)),
        type_name: dump.type_name(ObjectIdx(o)),
        shallow_bytes: dump.sizes.get(o as usize),
        retained_bytes: dom.retained_bytes(o as usize),
        retained_objects: dom.retained_objects(o as usize) as u64,
    });
    write_array(out, rows, true)?;
    out.write_all(b"]")
}

fn write_types(out: &mut impl Write, a: &Analysis, opts: &ReportOptions) -> io::Result<()> {
    let dump = a.dump();
    out.write_all(b",\n\"types\":[")?;
    let types = &a.types[..opts.rows_n(a.types.len(), usize::MAX)];
    let rows = types.iter().map(|t| TypeRow {
        name: &dump.type_names[t.type_index.index()],
        count: t.count,
        shallow_bytes: t.shallow_bytes,
        min_retained_bytes: t.min_retained_bytes,
    });
    write_array(out, rows, true)?;
    out.write_all(b"]")
}

/// `duplicates` and `possible_duplicates`.
fn write_duplicates(out: &mut impl Write, a: &Analysis, opts: &ReportOptions) -> io::Result<()> {
    let _span = tracing::debug_span!(target: "heaptui::profile", "duplicates").entered();
    out.write_all(b",\n\"duplicates\":[")?;
    let sets = a.duplicates.sets.len();
    write_duplicate_rows(out, a, opts.rows_n(sets, usize::MAX), piece_bytes())?;
    out.write_all(b"]")?;
    if a.duplicates.possible.is_empty() {
        return Ok(());
    }
    out.write_all(b",\n\"possible_duplicates\":[")?;
    let rows = a.duplicates.possible.iter().map(|p| PossibleRow {
        type_name: &a.dump().type_names[p.type_index as usize],
        instances: p.instances.len() as u64,
    });
    write_array(out, rows, false)?;
    out.write_all(b"]")
}

/// `duplicate_owners.owners[]`.
#[derive(Serialize)]
struct OwnerRow<'a> {
    path: Vec<&'a str>,
    anchored: bool,
    bytes: u64,
    copies: u64,
    instances: u64,
    top_instance: Option<Hex>,
    sets: OwnerSets<'a>,
}

/// An owner's sets, written as they are read: the owner of most sets
/// holds hundreds of thousands (24 bytes each as rows).
struct OwnerSets<'a> {
    sets: &'a [crate::analysis::OwnerSet],
    dups: &'a crate::graph::duplicates::Duplicates,
}

impl Serialize for OwnerSets<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.sets.iter().map(|o| OwnerSetRow {
            set: o.set,
            copies: o.copies.into(),
            bytes: o.bytes(self.dups),
        }))
    }
}

/// `duplicate_owners.owners[].sets[]`.
#[derive(Serialize)]
struct OwnerSetRow {
    set: u32,
    copies: u64,
    bytes: u64,
}

/// `duplicate_owners` (absent with `--duplicates none`).
fn write_owners(out: &mut impl Write, a: &Analysis, opts: &ReportOptions) -> io::Result<()> {
    if matches!(
        a.duplicates.mode,
        None | Some(crate::graph::duplicates::DuplicateMode::None)
    ) {
        return Ok(());
    }
    let owners = opts.owners(a);
    let dump = a.dump();
    out.write_all(b",\n\"duplicate_owners\":{\"exclude\":")?;
    json(out, &owners.exclude)?;
    out.write_all(b",\"bytes\":")?;
    json(out, &owners.bytes)?;
    out.write_all(b",\"owners\":[")?;
    let shown = &owners.owners[..opts.rows_n(owners.owners.len(), usize::MAX)];
    let rows = shown.iter().map(|o| OwnerRow {
        path: o
            .path
            .iter()
            .map(|t| &*dump.type_names[t.index()])
            .collect(),
        anchored: o.anchored,
        bytes: o.bytes,
        copies: o.copies,
        instances: o.instances,
        top_instance: o.top_instance.map(|t| Hex(dump.ids.get(t.index()))),
        sets: OwnerSets {
            sets: &o.sets,
            dups: &a.duplicates,
        },
    });
    write_array(out, rows, true)?;
    out.write_all(b"]}")
}

fn write_immediate_dominators(
    out: &mut impl Write,
    a: &Analysis,
    pattern: &Glob,
    skip: Option<&Glob>,
) -> io::Result<()> {
    let dump = a.dump();
    let set = objects_of_types(dump, pattern);
    out.write_all(b",\n\"immediate_dominators\":[")?;
    let rows = immediate_dominators(dump, &a.dom, &set, skip);
    let rows = rows.iter().map(|r| ImmediateDominatorRow {
        type_name: r.type_index.map(|t| &*dump.type_names[t.index()]),
        dominators: r.dominators.len() as u64,
        dominated_objects: r.dominated_objects,
        dominated_shallow_bytes: r.dominated_shallow_bytes,
        dominators_retained_bytes: r.dominators_retained_bytes,
    });
    write_array(out, rows, true)?;
    out.write_all(b"]")
}

/// `--what-if`: one entry per cut, its freed types (all, or `--top`).
fn write_what_if(out: &mut impl Write, a: &Analysis, opts: &ReportOptions) -> io::Result<()> {
    let names = &a.dump().type_names;
    out.write_all(b",\n\"what_if\":[")?;
    let rows = opts.what_if.iter().map(|w| {
        let r = &w.result;
        let shown = opts.rows_n(r.by_type.len(), r.by_type.len());
        WhatIfRow {
            type_name: &w.type_name,
            field: &w.field,
            references: w.references,
            freed_objects: r.objects,
            freed_bytes: r.bytes,
            by_type: r.by_type[..shown]
                .iter()
                .map(|t| FreedTypeRow {
                    type_name: &names[t.type_index.index()],
                    objects: t.objects,
                    bytes: t.bytes,
                })
                .collect(),
        }
    });
    write_array(out, rows, true)?;
    out.write_all(b"]")
}

/// `--objects`: every object, streamed in file order.
fn write_objects(out: &mut impl Write, a: &Analysis) -> io::Result<()> {
    let (dump, dom) = (a.dump(), &a.dom);
    let hex = |o: u32| Hex(dump.ids.get(o as usize));
    out.write_all(b",\n\"objects\":[")?;
    let rows = (0..dump.objects() as u32).map(|o| {
        let idom = dom.idom.get(o as usize);
        ObjectRow {
            id: hex(o),
            type_name: dump.type_name(ObjectIdx(o)),
            shallow_bytes: dump.sizes.get(o as usize),
            reachable: idom != NOT_REACHABLE,
            idom: match idom {
                NOT_REACHABLE => None,
                SUPER_ROOT => Some(None),
                d => Some(Some(hex(d))),
            },
            retained_bytes: dom.retained_bytes(o as usize),
            retained_objects: dom.retained_objects(o as usize) as u64,
        }
    });
    write_array(out, rows, true)?;
    out.write_all(b"]")
}

#[cfg(test)]
mod tests {
    use super::{piece_cuts, write_duplicate_rows, Hex, Place, MEMBER_BYTES};
    use crate::analysis::Analysis;
    use crate::graph::duplicates::DuplicateOptions;

    #[test]
    fn duplicate_rows_are_the_same_bytes_in_pieces_of_any_size() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/demo.dump.txt");
        let bytes = std::fs::read(path).unwrap();
        let a =
            Analysis::from_bytes("demo.dump.txt", &bytes, &DuplicateOptions::default()).unwrap();
        let sets = a.duplicates.sets.len();
        assert!(sets > 3, "the fixture has several duplicate sets");
        let written = |piece_bytes| {
            let mut out = Vec::new();
            write_duplicate_rows(&mut out, &a, sets, piece_bytes).unwrap();
            out
        };
        let whole = written(usize::MAX);
        for piece_bytes in [1, 2, 19, 40, 64, 200, 250, 1000] {
            assert_eq!(written(piece_bytes), whole, "pieces of {piece_bytes} bytes");
        }
        let rows: serde_json::Value =
            serde_json::from_slice(&[b"[", &whole[..], b"]"].concat()).unwrap();
        assert_eq!(rows.as_array().unwrap().len(), sets);
    }

    /// The pieces' cuts from random set sizes and row sizes: they go
    /// forward from the start to the end, and no piece holds more than
    /// `piece_bytes` (a row's fields its own bytes, each member
    /// [`MEMBER_BYTES`]) but one item alone, however large a set;
    /// and a piece ends only where the next item would not fit.
    #[test]
    fn pieces_cut_large_sets_and_hold_at_most_their_bytes() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for _ in 0..500 {
            let sizes: Vec<usize> = (0..next(12))
                .map(|_| match next(4) {
                    0 => next(200) as usize + 50,
                    _ => next(6) as usize,
                })
                .collect();
            let rows: Vec<usize> = sizes.iter().map(|_| next(300) as usize + 1).collect();
            let piece_bytes = next(600) as usize + 1;
            let cuts = piece_cuts(sizes.len(), |i| rows[i], |i| sizes[i], piece_bytes);
            assert_eq!(cuts[0], (0, 0));
            assert_eq!(*cuts.last().unwrap(), (sizes.len(), 0));
            assert!(cuts.windows(2).all(|w| w[0] < w[1]), "{cuts:?}");
            // The items from the start to a place, and their bytes.
            let items: Vec<(Place, usize)> = sizes
                .iter()
                .enumerate()
                .flat_map(|(i, &n)| {
                    let row = rows[i];
                    (0..n + 2).map(move |k| {
                        let bytes = match k {
                            0 => row,
                            k if k <= n => MEMBER_BYTES,
                            _ => 0,
                        };
                        ((i, k), bytes)
                    })
                })
                .collect();
            // The items of some bytes in a piece, and its bytes.
            let bytes = |from: Place, to: Place| -> (usize, usize) {
                let inside = items
                    .iter()
                    .filter(|(p, b)| from <= *p && *p < to && *b > 0);
                (inside.clone().count(), inside.map(|(_, b)| b).sum())
            };
            for w in cuts.windows(2) {
                let (count, held) = bytes(w[0], w[1]);
                assert!(held <= piece_bytes || count == 1, "{held} bytes in {w:?}");
                if let Some(&(_, b)) = items.iter().find(|(p, _)| *p == w[1]) {
                    assert!(held + b > piece_bytes, "{w:?} ends early");
                }
            }
        }
    }

    #[test]
    fn hex_ids_are_written_as_format_writes_them() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut values = vec![0, 1, 0xf, 0x10, 0xff, 0x100, u64::MAX, 1 << 63];
        for _ in 0..1000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(x >> (x % 64));
        }
        for v in values {
            let json = serde_json::to_string(&Hex(v)).unwrap();
            assert_eq!(json, format!("\"{v:x}\""));
        }
    }
}
