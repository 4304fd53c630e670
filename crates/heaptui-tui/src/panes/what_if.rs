//! What a cut would free, in the inspector (`w`): the cut the selection
//! names (a reference line: that reference; else the inspected object; a
//! Dominators group row: all its objects), and the answer's lines: the
//! objects and bytes no longer reachable, then the freed objects by type,
//! each line leading (Enter) to the freed object of that type that
//! retains most. The walk itself runs as a job (`worker::Job::WhatIf`).

use super::inspector::{text_entry as line, Entry};
use crate::fmt::{bytes, count};
use crate::theme::Theme;
use heaptui_core::analysis::{Cut, WhatIf};
use heaptui_core::model::{Label, Model, ObjectIdx};

/// Type rows shown at most.
const TYPE_ROWS: usize = 30;

/// The cut the inspector's selected line names, and its words: a
/// reference line cuts that reference, any other line the inspected
/// object.
pub fn cut_of(dump: &Model, object: ObjectIdx, selected: Option<&Entry>) -> (String, Cut) {
    let name = |o: ObjectIdx| format!("{} {}", dump.type_name(o), dump.id_hex(o));
    match selected.and_then(|e| e.edge) {
        Some(edge) => {
            let field = selected.map_or("", |e| e.text.trim());
            let field = field.strip_suffix('→').unwrap_or(field).trim_end();
            // A Java field line names its type first (`ref table`).
            let field = field.split(" [").next().unwrap_or(field);
            let field = field.rsplit(' ').next().unwrap_or(field);
            let to = ObjectIdx(dump.refs.targets.get(edge as usize));
            let label = match field {
                "" => format!("the reference to {}", dump.id_hex(to)),
                f => format!("the reference {f} → {}", dump.id_hex(to)),
            };
            let cut = Cut {
                objects: Vec::new(),
                edges: vec![edge],
            };
            (label, cut)
        }
        None => {
            let cut = Cut {
                objects: vec![object],
                edges: Vec::new(),
            };
            (name(object), cut)
        }
    }
}

/// References of an object searched for a field's (a class's statics, an
/// instance's fields: a few; a bound all the same).
const FIELD_SCAN: usize = 10_000;

/// The position of `object`'s reference named `name` to `to`, so that a
/// Java field line is a reference `w` can cut.
pub fn field_edge(dump: &Model, object: ObjectIdx, name: &str, to: ObjectIdx) -> Option<u64> {
    let start = dump.refs.offset(object.index());
    let refs = dump.refs_of(object);
    (0..refs.len().min(FIELD_SCAN))
        .find(|&k| refs.get(k) == to && dump.ref_label(object, k) == Some(Label::Name(name)))
        .map(|k| start + k as u64)
}

/// The words of a Dominators group row's cut.
pub fn group_label(dump: &Model, members: &[u32]) -> String {
    match members {
        [one] => format!(
            "{} {}",
            dump.type_name(ObjectIdx(*one)),
            dump.id_hex(ObjectIdx(*one))
        ),
        _ => format!(
            "{} × {}",
            count(members.len() as u64),
            members
                .first()
                .map(|&o| dump.row_type_name(ObjectIdx(o)))
                .unwrap_or_default()
        ),
    }
}

/// The lines while the job runs.
pub fn pending(label: &str) -> Vec<Entry> {
    vec![
        line(format!("What if {label} were gone"), true),
        line("  computing… (in the background)".into(), false),
    ]
}

/// The answer's lines: totals, then the freed objects by type (each a jump
/// to `largest[i]`, the row's freed object that retains most).
pub fn answer(label: &str, w: &WhatIf, largest: &[ObjectIdx], theme: &Theme) -> Vec<Entry> {
    let mut e = vec![line(format!("What if {label} were gone"), true)];
    if w.objects == 0 {
        e.push(line(
            "  nothing would be freed: other references hold it".into(),
            false,
        ));
        return e;
    }
    e.push(line(
        format!(
            "  {} objects, {} no longer reachable (Enter: a type's largest)",
            count(w.objects),
            bytes(w.bytes)
        ),
        false,
    ));
    for (t, &o) in w.by_type.iter().zip(largest).take(TYPE_ROWS) {
        let mut entry = line(
            format!("  {:>9} {:>10}  ", count(t.objects), bytes(t.bytes)),
            false,
        );
        entry.target = Some(super::inspector::Target::Object(o));
        e.push(entry);
    }
    if w.by_type.len() > TYPE_ROWS {
        let more = (w.by_type.len() - TYPE_ROWS) as u64;
        e.push(line(
            format!("  {} {} more types", theme.ellipsis(), count(more)),
            false,
        ));
    }
    e.push(line(String::new(), false));
    e
}
