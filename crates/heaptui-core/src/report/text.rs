//! The text report: what a person reads in a terminal or a CI log. Aligned
//! columns, human sizes.

use std::io::{self, Write};

use super::ReportOptions;
use crate::analysis::roots::HeldByReferences;
use crate::analysis::summary::Summary;
use crate::analysis::{immediate_dominators, objects_of_types, Analysis, Glob, Timings};
use crate::graph::duplicates::DuplicateMode;
use crate::graph::{NOT_REACHABLE, SUPER_ROOT};
use crate::model::text::printable;
use crate::model::{root_flags, root_kind, Diagnostics, ObjectIdx, ROW_PREVIEW_CHARS};
use crate::text::{count, counted, percent, size};

/// Rows of the short sections (types, duplicates) in the text report,
/// unless `--top` says otherwise.
const SHORT: usize = 20;
/// Diagnostic messages listed without `--top`.
const MESSAGES: usize = 10;

/// The detail that names how an HPROF's objects were sized (its own line).
const LAYOUT: &str = "object layout";

/// The longest detail value the `Format:` line shows.
const MAX_DETAIL_CHARS: usize = 60;

/// Writes the text report of `a`, one section after another.
pub fn write_text(out: &mut impl Write, a: &Analysis, opts: &ReportOptions) -> io::Result<()> {
    let _busy = crate::mem::busy();
    write_file(out, a)?;
    write_figures(out, &a.summary)?;
    write_diagnostics(out, &a.dump().diagnostics, opts)?;
    if let Some(c) = opts.comparison.as_deref() {
        super::compare_text::write_comparison_text(out, c, opts)?;
    }
    super::compare_text::write_suspects_text(out, a, opts)?;
    // Each section's pages of a mapped cache file over the memory budget
    // leave the resident set before the next (`mem::checkpoint`).
    crate::mem::checkpoint("report: suspects");
    write_top_dominators(out, a, opts)?;
    write_types(out, a, opts)?;
    crate::mem::checkpoint("report: dominators, types");
    if let Some((pattern, skip)) = &opts.immediate_dominators {
        write_immediate_dominators(out, a, pattern, skip.as_ref())?;
    }
    super::paths::write_paths_text(out, a, opts)?;
    for w in &opts.what_if {
        write_what_if(out, a, w, opts)?;
    }
    write_duplicates(out, a, opts)?;
    crate::mem::checkpoint("report: duplicates");
    write_owners(out, a, opts)?;
    crate::mem::checkpoint("report: owners");
    if opts.objects {
        write_objects(out, a)?;
    }
    write_timings(out, a.timings)?;
    writeln!(out, "Memory: {}", a.memory.describe())
}

/// The file, its format and details, an HPROF's layout, a text dump's
/// AppDomains.
fn write_file(out: &mut impl Write, a: &Analysis) -> io::Result<()> {
    let dump = a.dump();
    writeln!(
        out,
        "heaptui report: {} ({})",
        crate::model::text::printable_path(&dump.path),
        size(dump.file_bytes)
    )?;
    // No lists: a V8 header's field and type lists (hundreds of
    // characters) stay in the overview and the JSON report.
    let details: Vec<String> = dump
        .details
        .iter()
        .filter(|(k, v)| k != LAYOUT && !v.contains(", ") && v.chars().count() <= MAX_DETAIL_CHARS)
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    match details.is_empty() {
        true => writeln!(out, "Format:      {}", dump.format.describe())?,
        false => writeln!(
            out,
            "Format:      {} ({})",
            dump.format.describe(),
            details.join(", ")
        )?,
    }
    // HPROF: how the objects were sized, on a line of its own.
    if let Some((_, layout)) = dump.details.iter().find(|(k, _)| k == LAYOUT) {
        writeln!(out, "Layout:      {layout}")?;
    }
    if dump.format == crate::model::Format::Rpm {
        let domains = a.summary.app_domains.iter();
        let domains = crate::text::app_domains(domains.map(|d| (d.display_name(), d.objects)));
        writeln!(out, "AppDomains:  {domains}")?;
    }
    Ok(())
}

/// Objects, roots by kind, reachability, what references hold.
fn write_figures(out: &mut impl Write, s: &Summary) -> io::Result<()> {
    writeln!(
        out,
        "Objects:     {} ({}), {} references, {} types",
        count(s.objects),
        size(s.total_bytes),
        count(s.references),
        count(s.types)
    )?;
    writeln!(
        out,
        "Roots:       {} records ({} strong, {} weak) on {} objects ({} strongly rooted)",
        count(s.root_records),
        count(s.strong_root_records),
        count(s.root_records - s.strong_root_records),
        count(s.rooted_objects),
        count(s.strongly_rooted_objects)
    )?;
    for k in &s.roots_by_kind {
        writeln!(
            out,
            "             {:>8}  {} [{}]",
            count(k.records),
            root_kind::name(k.kind),
            root_flags::describe(k.flags)
        )?;
    }
    writeln!(
        out,
        "Reachable:   {} objects, {} ({})",
        count(s.reachable_objects),
        size(s.reachable_bytes),
        percent(s.reachable_bytes, s.total_bytes)
    )?;
    writeln!(
        out,
        "Unreachable: {} objects, {} (garbage or only weakly held; excluded from dominators and duplicates)",
        count(s.unreachable_objects),
        size(s.unreachable_bytes)
    )?;
    match &s.held_by_references {
        Some(h) => write_held_by_references(out, h),
        None => Ok(()),
    }
}

fn write_held_by_references(out: &mut impl Write, h: &HeldByReferences) -> io::Result<()> {
    if h.strong {
        return writeln!(
            out,
            "References:  referents of {} reference objects retain (--references all)",
            count(h.referents)
        );
    }
    let kinds: Vec<String> = crate::model::Strength::ALL
        .iter()
        .zip(&h.by_strength)
        .map(|(k, &(o, b))| format!("{} {} objects, {}", k.key(), count(o), size(b)))
        .collect();
    writeln!(
        out,
        "Held only by references: {} objects, {} (part of unreachable; {})",
        count(h.objects()),
        size(h.bytes()),
        kinds.join("; ")
    )
}

fn write_diagnostics(
    out: &mut impl Write,
    d: &Diagnostics,
    opts: &ReportOptions,
) -> io::Result<()> {
    writeln!(out)?;
    if d.total() == 0 {
        return writeln!(out, "Diagnostics: none, every line was used");
    }
    writeln!(
        out,
        "Diagnostics: {} skipped lines, {} dangling references, {} objects of undefined types, {} repeated objects, {} roots of missing objects",
        count(d.skipped_lines),
        count(d.dangling_references),
        count(d.undefined_types),
        count(d.duplicate_objects),
        count(d.missing_root_objects)
    )?;
    if d.clamped_roots > 0 {
        writeln!(
            out,
            "             {} roots whose kind or flags did not fit in 32 bits (kept, cut to fit)",
            count(d.clamped_roots)
        )?;
    }
    // A few messages by default: one bad region of a dump can fill
    // the kept 100 with lines alike, and the analysis comes after them.
    let listed = opts.rows_n(d.messages.len(), MESSAGES);
    for m in &d.messages[..listed] {
        writeln!(out, "  {m}")?;
    }
    let total = d.total();
    if total > listed as u64 {
        let more = if listed < d.messages.len() {
            format!(" ({} with --top 0)", count(d.messages.len() as u64))
        } else {
            String::new()
        };
        writeln!(
            out,
            "  … {} more not listed{more}",
            count(total - listed as u64)
        )?;
    }
    Ok(())
}

fn write_top_dominators(
    out: &mut impl Write,
    a: &Analysis,
    opts: &ReportOptions,
) -> io::Result<()> {
    let (dump, dom) = (a.dump(), &a.dom);
    let all = dom.children(dom.super_root()).count();
    let shown = opts.top_n(all);
    let top = dom.largest_children(dom.super_root(), shown);
    writeln!(out)?;
    writeln!(
        out,
        "Top dominators ({} of {}, by retained bytes)",
        shown,
        count(all as u64)
    )?;
    writeln!(
        out,
        "  {:>12} {:>12} {:>7} {:>10}  {:<16} Type",
        "Retained", "Objects", "%", "Shallow", "Id"
    )?;
    for &o in &top {
        writeln!(
            out,
            "  {:>12} {:>12} {:>7} {:>10}  {:<16} {}{}",
            size(dom.retained_bytes(o as usize)),
            count(dom.retained_objects(o as usize) as u64),
            percent(dom.retained_bytes(o as usize), dom.reachable_bytes),
            size(dump.sizes.get(o as usize)),
            dump.id_hex(ObjectIdx(o)),
            dump.type_name(ObjectIdx(o)),
            dump.quoted_preview(ObjectIdx(o), ROW_PREVIEW_CHARS)
        )?;
    }
    Ok(())
}

fn write_types(out: &mut impl Write, a: &Analysis, opts: &ReportOptions) -> io::Result<()> {
    writeln!(out)?;
    let shown = opts.rows_n(a.types.len(), SHORT);
    writeln!(
        out,
        "Types ({} of {}, by shallow bytes)",
        shown,
        count(a.types.len() as u64)
    )?;
    writeln!(
        out,
        "  {:>12} {:>12} {:>14}  Type",
        "Count", "Shallow", "Min retained"
    )?;
    for t in &a.types[..shown] {
        writeln!(
            out,
            "  {:>12} {:>12} {:>14}  {}",
            count(t.count),
            size(t.shallow_bytes),
            size(t.min_retained_bytes),
            a.dump().type_names[t.type_index.index()]
        )?;
    }
    Ok(())
}

fn write_immediate_dominators(
    out: &mut impl Write,
    a: &Analysis,
    pattern: &Glob,
    skip: Option<&Glob>,
) -> io::Result<()> {
    let dump = a.dump();
    let set = objects_of_types(dump, pattern);
    let rows = immediate_dominators(dump, &a.dom, &set, skip);
    writeln!(out)?;
    writeln!(
        out,
        "Immediate dominators of {} objects of `{}`{}",
        count(set.len() as u64),
        pattern.as_str(),
        skip.map(|s| format!(", skipping `{}`", s.as_str()))
            .unwrap_or_default()
    )?;
    writeln!(
        out,
        "  {:>10} {:>12} {:>12} {:>14}  Dominator type",
        "Dominators", "Dominated", "Shallow", "Dom. retained"
    )?;
    for r in rows {
        writeln!(
            out,
            "  {:>10} {:>12} {:>12} {:>14}  {}",
            count(r.dominators.len() as u64),
            count(r.dominated_objects),
            size(r.dominated_shallow_bytes),
            size(r.dominators_retained_bytes),
            r.type_index
                .map(|t| dump.type_names[t.index()].to_string())
                .unwrap_or_else(|| "<GC roots>".into())
        )?;
    }
    Ok(())
}

/// `--what-if`: what the cut frees, by type (20 rows unless `--top`).
fn write_what_if(
    out: &mut impl Write,
    a: &Analysis,
    w: &super::FieldWhatIf,
    opts: &ReportOptions,
) -> io::Result<()> {
    let r = &w.result;
    writeln!(out)?;
    writeln!(
        out,
        "What if every {}.{} were gone ({}): {} objects, {} no longer reachable",
        printable(w.type_name.as_bytes()),
        printable(w.field.as_bytes()),
        counted(w.references, "reference", "references"),
        count(r.objects),
        size(r.bytes)
    )?;
    if r.by_type.is_empty() {
        return Ok(());
    }
    writeln!(out, "  {:>12} {:>12}  Type", "Objects", "Bytes")?;
    let shown = opts.rows_n(r.by_type.len(), 20);
    for t in &r.by_type[..shown] {
        writeln!(
            out,
            "  {:>12} {:>12}  {}",
            count(t.objects),
            size(t.bytes),
            a.dump().type_names[t.type_index.index()]
        )?;
    }
    if shown < r.by_type.len() {
        writeln!(
            out,
            "  … {} more types",
            count((r.by_type.len() - shown) as u64)
        )?;
    }
    Ok(())
}

fn write_duplicates(out: &mut impl Write, a: &Analysis, opts: &ReportOptions) -> io::Result<()> {
    let dups = &a.duplicates;
    writeln!(out)?;
    let mode = match dups.mode {
        None | Some(DuplicateMode::None) => {
            return writeln!(out, "Duplicates: not detected (--duplicates none)");
        }
        Some(mode) => mode,
    };
    let totals = dups.all_totals();
    writeln!(
        out,
        "Duplicates ({} mode; {}): {} sets, {} in extra instances (all but one member of each set)",
        mode.name(),
        if dups.has_values() {
            "equal type, size, values and fields"
        } else {
            "equal type, size and reference shape: the dump has no field values"
        },
        count(totals.sets),
        size(totals.bytes)
    )?;
    if totals.unverified_sets > 0 {
        writeln!(
            out,
            "  not counted above: {} unverified sets, {} in extra instances (lone objects of one type and size; without values their equality cannot be verified)",
            count(totals.unverified_sets),
            size(totals.unverified_bytes)
        )?;
    }
    write_duplicate_sets(out, a, opts)?;
    for p in &dups.possible {
        writeln!(
            out,
            "  possible duplicates: {} instances of {} not fully compared (work budget); raise --duplicate-budget",
            count(p.instances.len() as u64),
            a.dump().type_names[p.type_index as usize]
        )?;
    }
    Ok(())
}

/// The duplicate sets' table: the verified sets lead, the unverified ones
/// follow them.
fn write_duplicate_sets(
    out: &mut impl Write,
    a: &Analysis,
    opts: &ReportOptions,
) -> io::Result<()> {
    let (dump, dups) = (a.dump(), &a.duplicates);
    if !dups.sets.is_empty() {
        writeln!(
            out,
            "  {:>5} {:>12} {:>10} {:>8} {:>12}  {:<7} {:<12} Type",
            "Set", "Additional", "Instances", "Per copy", "Inst. size", "Kind", "Held by"
        )?;
    }
    let mut shown: Vec<_> = dups
        .numbered()
        .filter(|(_, s)| !dups.is_unverified(s))
        .collect();
    shown.extend(dups.numbered().filter(|(_, s)| dups.is_unverified(s)));
    let listed = opts.rows_n(shown.len(), SHORT);
    for (i, s) in shown.into_iter().take(listed) {
        writeln!(
            out,
            "  {:>5} {:>12} {:>10} {:>8} {:>12}  {:<7} {:<12} {}{}",
            format!("#{i}"),
            size(s.additional_bytes),
            count(dups.members(i).len() as u64),
            count(s.objects_per_copy),
            size(s.instance_bytes),
            if dups.is_unverified(s) {
                "unverif"
            } else if s.trivial() {
                "trivial"
            } else {
                "full"
            },
            s.holding_set()
                .map(|h| format!("→ #{h}"))
                .unwrap_or_else(|| "-".into()),
            dump.type_names[s.type_index as usize],
            // Every member of a set holds the same text.
            dups.members(i)
                .first()
                .map(|&m| dump.quoted_preview(ObjectIdx(m), ROW_PREVIEW_CHARS))
                .unwrap_or_default()
        )?;
    }
    if dups.sets.len() > listed {
        writeln!(
            out,
            "  … {} more sets (--top 0 lists them all)",
            count((dups.sets.len() - listed) as u64)
        )?;
    }
    Ok(())
}

/// Duplicate waste by owner (docs/duplicates.md): the owners by wasted
/// bytes, each with its largest sets.
fn write_owners(out: &mut impl Write, a: &Analysis, opts: &ReportOptions) -> io::Result<()> {
    if matches!(a.duplicates.mode, None | Some(DuplicateMode::None)) {
        return Ok(());
    }
    let owners = opts.owners(a);
    let dump = a.dump();
    writeln!(out)?;
    writeln!(
        out,
        "Duplicate owners ({} owners of {} in extra instances; each extra copy charged to its immediate dominator's type path, cut at the first type not matching {})",
        count(owners.owners.len() as u64),
        size(owners.bytes),
        if owners.exclude.is_empty() {
            "-".to_string()
        } else {
            owners.exclude.join(", ")
        }
    )?;
    if owners.owners.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "  {:>12} {:>6} {:>10} {:>9}  Owner (type path down to the copies' dominator; sets)",
        "Wasted", "Sets", "Copies", "Instances"
    )?;
    let listed = opts.rows_n(owners.owners.len(), SHORT);
    for o in &owners.owners[..listed] {
        let sets: Vec<String> = o
            .sets
            .iter()
            .take(5)
            .map(|s| format!("#{}", s.set))
            .collect();
        writeln!(
            out,
            "  {:>12} {:>6} {:>10} {:>9}  {}{}; {}{}",
            size(o.bytes),
            count(o.sets.len() as u64),
            count(o.copies),
            count(o.instances),
            crate::analysis::owners::Owners::path_text(dump, o),
            if o.anchored || o.path.is_empty() {
                ""
            } else {
                " (held by roots)"
            },
            sets.join(" "),
            if o.sets.len() > sets.len() {
                " …"
            } else {
                ""
            }
        )?;
    }
    if owners.owners.len() > listed {
        writeln!(
            out,
            "  … {} more owners (--top 0 lists them all)",
            count((owners.owners.len() - listed) as u64)
        )?;
    }
    Ok(())
}

/// `--objects` promises every object in text mode too (file order).
fn write_objects(out: &mut impl Write, a: &Analysis) -> io::Result<()> {
    let (dump, dom) = (a.dump(), &a.dom);
    writeln!(out)?;
    writeln!(
        out,
        "Objects ({}, in file order; idom `<roots>`: held directly by GC roots)",
        count(dump.objects() as u64)
    )?;
    writeln!(
        out,
        "  {:<16} {:>10} {:>12} {:>10}  {:<16} Type",
        "Id", "Shallow", "Retained", "Objects", "Idom"
    )?;
    for o in 0..dump.objects() as u32 {
        let idom = match dom.idom.get(o as usize) {
            NOT_REACHABLE => "unreachable".to_string(),
            SUPER_ROOT => "<roots>".to_string(),
            d => dump.id_hex(ObjectIdx(d)),
        };
        writeln!(
            out,
            "  {:<16} {:>10} {:>12} {:>10}  {:<16} {}",
            dump.id_hex(ObjectIdx(o)),
            size(dump.sizes.get(o as usize)),
            size(dom.retained_bytes(o as usize)),
            count(dom.retained_objects(o as usize) as u64),
            idom,
            dump.type_name(ObjectIdx(o))
        )?;
    }
    Ok(())
}

fn write_timings(out: &mut impl Write, t: Timings) -> io::Result<()> {
    writeln!(out)?;
    if t.cached {
        writeln!(
            out,
            "Timings: read from the reopen cache in {} ms (--no-cache analyses the dump again)",
            t.parse_ms
        )
    } else {
        writeln!(
            out,
            "Timings: parse {} ms, graph {} ms, dominators {} ms, duplicates {} ms",
            t.parse_ms, t.graph_ms, t.dominators_ms, t.duplicates_ms
        )
    }
}
