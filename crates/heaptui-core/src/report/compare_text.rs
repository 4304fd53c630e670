//! The text report's comparison (docs/analyses.md) and leak-suspects (docs/analyses.md)
//! sections, and the sizes `--fail-if-grows` accepts.

use std::io::{self, Write};

use super::ReportOptions;
use crate::analysis::compare::{Comparison, DuplicateComparison, OwnerComparison, TypeComparison};
use crate::analysis::suspects::{suspects, Suspect, SuspectKind};
use crate::analysis::Analysis;
use crate::model::{ObjectIdx, ROW_PREVIEW_CHARS};
use crate::text::{count, percent, size};

/// Rows of each comparison table in the text report (unless `--top` asks
/// for fewer).
const ROWS: usize = 20;

/// A signed byte difference: `+1.5 MiB`, `-512 B`, `0 B`.
pub fn signed_size(delta: i128) -> String {
    let magnitude = size(delta.unsigned_abs().min(u64::MAX as u128) as u64);
    match delta {
        d if d > 0 => format!("+{magnitude}"),
        d if d < 0 => format!("-{magnitude}"),
        _ => magnitude,
    }
}

/// A signed count difference with thousands separators.
fn signed_count(delta: i128) -> String {
    let magnitude = count(delta.unsigned_abs().min(u64::MAX as u128) as u64);
    match delta {
        d if d > 0 => format!("+{magnitude}"),
        d if d < 0 => format!("-{magnitude}"),
        _ => magnitude,
    }
}

/// Parses a size: a number with an optional unit, `B`, decimal `kB`/`KB`,
/// `MB`, `GB`, `TB` (powers of 1000) or binary `KiB`, `MiB`, `GiB`, `TiB`
/// (powers of 1024); `K`, `M`, `G`, `T` alone are binary. Case-insensitive
/// apart from that; blanks between number and unit allowed.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let s = text.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (number, unit) = (&s[..split], s[split..].trim());
    let bad = || format!("`{text}` is not a size (examples: 10MB, 512KiB, 1000)");
    if number.is_empty() || number.matches('.').count() > 1 {
        return Err(bad());
    }
    let factor: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        _ => return Err(bad()),
    };
    if let Ok(n) = number.parse::<u64>() {
        return n.checked_mul(factor).ok_or_else(bad);
    }
    let x: f64 = number.parse().map_err(|_| bad())?;
    let v = x * factor as f64;
    if !v.is_finite() || v >= u64::MAX as f64 {
        return Err(bad());
    }
    Ok(v.round() as u64)
}

/// The comparison section: growing paths first, then types, duplicates,
/// roots.
pub fn write_comparison_text(
    out: &mut impl Write,
    c: &Comparison,
    opts: &ReportOptions,
) -> io::Result<()> {
    let k = c.snapshots();
    let rows_shown = |len: usize| {
        len.min(if opts.top == 0 {
            ROWS
        } else {
            opts.top.min(ROWS)
        })
    };
    writeln!(out)?;
    writeln!(out, "Comparison of {k} snapshots, oldest first (matched by type names and type paths; object ids are not identities across dumps):")?;
    for (i, f) in c.files.iter().enumerate() {
        writeln!(
            out,
            "  {}. {} ({} reachable)",
            i + 1,
            crate::model::text::printable_path(f),
            size(c.reachable_bytes[i])
        )?;
    }
    write_paths(out, c, &rows_shown)?;
    let differs = |v: &[u64]| v.windows(2).any(|w| w[0] != w[1]);
    let types: Vec<&TypeComparison> = c
        .types
        .iter()
        .filter(|t| {
            differs(&t.count) || differs(&t.shallow_bytes) || differs(&t.min_retained_bytes)
        })
        .collect();
    let dups: Vec<&DuplicateComparison> = c
        .duplicates
        .iter()
        .filter(|d| differs(&d.instances) || differs(&d.additional_bytes))
        .collect();
    write_types(out, c, &types[..rows_shown(types.len())], types.len())?;
    write_duplicates_and_roots(out, c, &dups[..rows_shown(dups.len())], dups.len())?;
    let owners: Vec<&OwnerComparison> = c
        .owners
        .iter()
        .filter(|o| differs(&o.bytes) || differs(&o.copies))
        .collect();
    write_owners(out, &owners[..rows_shown(owners.len())], owners.len())
}

/// The dominator paths that changed, by Δ retained; `rows_shown` says how
/// many of a list's rows to write.
fn write_paths(
    out: &mut impl Write,
    c: &Comparison,
    rows_shown: &impl Fn(usize) -> usize,
) -> io::Result<()> {
    let k = c.snapshots();
    let paths = c.changed_paths();
    let steady = paths.iter().filter(|&&r| c.paths.grows_steadily(r)).count();
    let shown = rows_shown(paths.len());
    writeln!(out)?;
    writeln!(
        out,
        "Dominator paths that changed ({shown} of {}, by Δ retained, newest − oldest; {} grow in every snapshot)",
        count(paths.len() as u64),
        count(steady as u64)
    )?;
    if shown > 0 {
        writeln!(
            out,
            "  {:>12} {:>10} {:>12}  {:<6} Type path",
            "Δ Retained", "Δ Count", "Retained", "Steady"
        )?;
    }
    for &r in &paths[..shown] {
        let f = c.paths.figures_of(r);
        let (old, new) = (f[0], f[k - 1]);
        writeln!(
            out,
            "  {:>12} {:>10} {:>12}  {:<6} {}",
            signed_size(c.paths.growth(r)),
            signed_count(new.count as i128 - old.count as i128),
            size(new.retained_bytes),
            if c.paths.grows_steadily(r) {
                "yes"
            } else {
                "-"
            },
            c.path_names(r).join(" / ")
        )?;
    }
    Ok(())
}

/// Duplicate owners whose waste changed (docs/duplicates.md).
fn write_owners(
    out: &mut impl Write,
    shown: &[&OwnerComparison],
    changed: usize,
) -> io::Result<()> {
    if changed == 0 {
        return Ok(());
    }
    let join = |v: &[u64], f: &dyn Fn(u64) -> String| {
        v.iter().map(|&x| f(x)).collect::<Vec<_>>().join(" → ")
    };
    writeln!(out)?;
    writeln!(
        out,
        "Duplicate owners that changed ({} of {}, by Δ wasted bytes; matched by type path)",
        shown.len(),
        count(changed as u64)
    )?;
    writeln!(
        out,
        "  {:>12}  {:<24} {:<24} Owner",
        "Δ Wasted", "Copies", "Wasted"
    )?;
    for o in shown {
        writeln!(
            out,
            "  {:>12}  {:<24} {:<24} {}",
            signed_size(o.growth()),
            join(&o.copies, &|x| count(x)),
            join(&o.bytes, &size),
            if o.path.is_empty() {
                "<GC roots>".to_string()
            } else {
                o.path.join(" / ")
            }
        )?;
    }
    Ok(())
}

fn write_types(
    out: &mut impl Write,
    c: &Comparison,
    shown: &[&TypeComparison],
    changed: usize,
) -> io::Result<()> {
    let k = c.snapshots();
    writeln!(out)?;
    writeln!(
        out,
        "Types that changed ({} of {}, by Δ shallow bytes){}",
        shown.len(),
        count(changed as u64),
        if c.has_stable_ids() {
            "; new/deleted by stable V8 node ids"
        } else {
            ""
        }
    )?;
    writeln!(
        out,
        "  {:>12} {:>10} {:>12} {:>10} {:>14}  Type",
        "Δ Shallow", "Δ Count", "Shallow", "Count", "Δ Min retained"
    )?;
    for t in shown {
        let mark = if t.appears() {
            " (new type)"
        } else if t.vanishes() {
            " (gone)"
        } else {
            ""
        };
        let nd = t
            .new_deleted
            .map(|(n, d)| format!(" [+{} new, -{} deleted]", count(n), count(d)))
            .unwrap_or_default();
        writeln!(
            out,
            "  {:>12} {:>10} {:>12} {:>10} {:>14}  {}{mark}{nd}",
            signed_size(t.shallow_growth()),
            signed_count(t.count[k - 1] as i128 - t.count[0] as i128),
            size(t.shallow_bytes[k - 1]),
            count(t.count[k - 1]),
            signed_size(t.min_retained_bytes[k - 1] as i128 - t.min_retained_bytes[0] as i128),
            c.type_names[t.type_id as usize]
        )?;
    }
    Ok(())
}

fn write_duplicates_and_roots(
    out: &mut impl Write,
    c: &Comparison,
    shown: &[&DuplicateComparison],
    changed: usize,
) -> io::Result<()> {
    let k = c.snapshots();
    let join = |v: &[u64], f: &dyn Fn(u64) -> String| {
        v.iter().map(|&x| f(x)).collect::<Vec<_>>().join(" → ")
    };
    if changed > 0 {
        writeln!(out)?;
        writeln!(
            out,
            "Duplicate sets that changed ({} of {}, by Δ additional bytes; matched by type, instance size and objects per copy)",
            shown.len(),
            count(changed as u64)
        )?;
        writeln!(
            out,
            "  {:>12}  {:<24} {:<24} Type",
            "Δ Additional", "Instances", "Additional"
        )?;
        for d in shown {
            writeln!(
                out,
                "  {:>12}  {:<24} {:<24} {} ({} B, {} per copy)",
                signed_size(d.additional_bytes[k - 1] as i128 - d.additional_bytes[0] as i128),
                join(&d.instances, &|x| count(x)),
                join(&d.additional_bytes, &size),
                c.type_names[d.type_id as usize],
                d.instance_bytes,
                d.objects_per_copy
            )?;
        }
    }
    writeln!(out)?;
    writeln!(
        out,
        "Roots by kind and flags (records; retained bytes), oldest → newest"
    )?;
    for r in &c.roots {
        let records: Vec<u64> = r.figures.iter().map(|f| f.records).collect();
        let bytes: Vec<u64> = r.figures.iter().map(|f| f.retained_bytes).collect();
        writeln!(
            out,
            "  {:<28} {:<24} {}",
            format!(
                "{} [{}]",
                crate::model::root_kind::name(r.kind),
                crate::model::root_flags::describe(r.flags)
            ),
            join(&records, &|x| count(x)),
            join(&bytes, &size)
        )?;
    }
    Ok(())
}

/// The "Leak suspects" section (every report).
pub fn write_suspects_text(
    out: &mut impl Write,
    a: &Analysis,
    opts: &ReportOptions,
) -> io::Result<()> {
    let all = suspects(a, opts.comparison.as_deref());
    writeln!(out)?;
    if all.is_empty() {
        writeln!(out, "Leak suspects: none (no top-level dominator or type retains 10% of the reachable bytes{})", if opts.comparison.is_some() { ", no dominator path grows in every snapshot" } else { "" })?;
        return Ok(());
    }
    writeln!(out, "Leak suspects ({})", all.len())?;
    for (i, s) in all.iter().enumerate() {
        writeln!(out, "  {}. {}", i + 1, suspect_what(a, s, opts))?;
        write_suspect_detail(out, a, s)?;
    }
    Ok(())
}

/// What a suspect is, in one phrase.
fn suspect_what(a: &Analysis, s: &Suspect, opts: &ReportOptions) -> String {
    let (dump, dom) = (a.dump(), &a.dom);
    let ty = &dump.type_names[s.type_index.index()];
    match s.kind {
        SuspectKind::Object => {
            let o = s.object.unwrap_or(ObjectIdx(s.accumulation_point));
            format!(
                "one {ty}{} ({}) retains {} ({} of the reachable bytes)",
                dump.row_quoted_preview(o, ROW_PREVIEW_CHARS),
                dump.id_hex(o),
                size(s.retained_bytes),
                percent(s.retained_bytes, dom.reachable_bytes)
            )
        }
        SuspectKind::Type => format!(
            "{} top-level instances of {ty} together retain {} ({})",
            count(s.instances),
            size(s.retained_bytes),
            percent(s.retained_bytes, dom.reachable_bytes)
        ),
        SuspectKind::Growth => {
            let g = s.growth.as_ref();
            let names = g
                .zip(opts.comparison.as_deref())
                .map(|(g, c)| c.path_names(g.path).join(" / "))
                .unwrap_or_default();
            let steps = g
                .map(|g| {
                    g.retained_bytes
                        .iter()
                        .map(|&b| size(b))
                        .collect::<Vec<_>>()
                        .join(" → ")
                })
                .unwrap_or_default();
            format!(
                "grows in every snapshot: {names} ({steps}; {} instances now)",
                count(s.instances)
            )
        }
    }
}

/// A suspect's accumulation point, what it retains and its retention path.
fn write_suspect_detail(out: &mut impl Write, a: &Analysis, s: &Suspect) -> io::Result<()> {
    let (dump, dom) = (a.dump(), &a.dom);
    let point = s.accumulation_point;
    let path: Vec<&str> = s
        .point_path(dom)
        .iter()
        .map(|&o| dump.row_type_name(o))
        .collect();
    writeln!(
        out,
        "     accumulation point: {} {}{} retains {}, at {}",
        dump.id_hex(ObjectIdx(point)),
        dump.type_name(ObjectIdx(point)),
        dump.quoted_preview(ObjectIdx(point), ROW_PREVIEW_CHARS),
        size(dom.retained_bytes(point as usize)),
        path.join(" / ")
    )?;
    if !s.top_types.is_empty() {
        let tops: Vec<String> = s
            .top_types
            .iter()
            .map(|&(t, b)| format!("{} {}", dump.type_names[t.index()], size(b)))
            .collect();
        writeln!(out, "     retained below it: {}", tops.join(", "))?;
    }
    if !s.retention_path.is_empty() {
        let steps: Vec<String> = s
            .retention_path
            .iter()
            .map(|&o| dump.object_label(o, ROW_PREVIEW_CHARS))
            .collect();
        let place = dump
            .root_place_of(s.retention_path[0])
            .map_or(String::new(), |p| format!(" ({p})"));
        writeln!(
            out,
            "     retention path: root{place} → {}",
            steps.join(" → ")
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1000"), Ok(1000));
        assert_eq!(parse_size("10MB"), Ok(10_000_000));
        assert_eq!(parse_size("10mb"), Ok(10_000_000));
        assert_eq!(parse_size("512KiB"), Ok(512 * 1024));
        assert_eq!(parse_size("1.5 GiB"), Ok(3 << 29));
        assert_eq!(parse_size("2k"), Ok(2048));
        assert_eq!(parse_size("0"), Ok(0));
        for bad in [
            "",
            "MB",
            "-1",
            "10 parsecs",
            "1.2.3",
            "99999999999999999999TB",
        ] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn signed() {
        assert_eq!(signed_size(0), "0 B");
        assert_eq!(signed_size(-512), "-512 B");
        assert_eq!(signed_size(2048), "+2 KiB");
    }
}
