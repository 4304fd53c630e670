//! A set's detail: its members, then the instance graph of one member.

use super::super::ListState;
use crate::fmt::{bytes, count};
use crate::theme::Theme;
use heaptui_core::graph::duplicates::Duplicates;
use heaptui_core::graph::HeapGraph;
use heaptui_core::model::{ObjectIdx, ROW_PREVIEW_CHARS};

/// One line of a duplicate set's detail.
#[derive(Debug, Clone)]
pub struct DetailLine {
    /// The line's text (escaped).
    pub text: String,
    /// The object the line names (Enter inspects it), if any.
    pub object: Option<u32>,
}

/// A duplicate set's detail: its figures and members, as lines.
#[derive(Debug, Clone)]
pub struct DupDetail {
    /// The set, a position in `Duplicates::sets`.
    pub(crate) set: u32,
    /// The lines.
    pub(crate) lines: Vec<DetailLine>,
    /// The selected line and the scroll.
    pub(crate) list: ListState,
    /// Opened with Enter on the list's row: Backspace closes it, back to
    /// the list. A detail reached by a jump (`H`, the Overview, the
    /// inspector) goes back through the history instead.
    pub(crate) from_list: bool,
}

/// Objects listed in a member's instance graph at most.
const GRAPH_LIMIT: usize = 300;

/// Members, then the instance graph of the first member: a depth-first
/// walk of its references, each object listed once (later visits marked).
pub fn detail(graph: &HeapGraph, d: &Duplicates, set: u32, theme: &Theme) -> DupDetail {
    let dump = &graph.dump;
    let s = &d.sets[set as usize];
    let mut lines = vec![DetailLine {
        text: format!(
            "Set #{} {} {} x {}, {} each, {} per copy, {} additional",
            set,
            theme.sep(),
            count(d.members(set).len() as u64),
            dump.type_names[s.type_index as usize],
            bytes(s.instance_bytes),
            crate::fmt::counted(s.objects_per_copy, "object", "objects"),
            bytes(s.additional_bytes)
        ),
        object: None,
    }];
    if let Some(h) = s.holding_set() {
        lines.push(DetailLine {
            text: format!("held by {} set #{h} (H jumps there)", theme.arrow()),
            object: None,
        });
    }
    lines.push(DetailLine {
        text: "Members (Enter inspects):".into(),
        object: None,
    });
    for &m in d.members(set) {
        lines.push(DetailLine {
            text: format!(
                "  {} {}{}",
                dump.id_hex(ObjectIdx(m)),
                dump.type_name(ObjectIdx(m)),
                dump.quoted_preview(ObjectIdx(m), ROW_PREVIEW_CHARS)
            ),
            object: Some(m),
        });
    }
    let Some(&first) = d.members(set).first() else {
        return DupDetail {
            set,
            lines,
            list: ListState::default(),
            from_list: false,
        };
    };
    instance_graph(&mut lines, graph, first, theme);
    // Start on the first member: the lines above it are headings.
    let first = lines.iter().position(|l| l.object.is_some()).unwrap_or(0);
    DupDetail {
        set,
        lines,
        list: ListState {
            selected: first,
            offset: 0,
        },
        from_list: false,
    }
}

/// The instance graph of `first`: a depth-first walk of its references,
/// each object listed once (later visits marked), at most [`GRAPH_LIMIT`].
fn instance_graph(lines: &mut Vec<DetailLine>, graph: &HeapGraph, first: u32, theme: &Theme) {
    let dump = &graph.dump;
    lines.push(DetailLine {
        text: format!("Instance graph of {}:", dump.id_hex(ObjectIdx(first))),
        object: None,
    });
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![(first, 0usize)];
    let mut listed = 0;
    while let Some((o, depth)) = stack.pop() {
        if listed == GRAPH_LIMIT {
            lines.push(DetailLine {
                text: format!("  {} (first {GRAPH_LIMIT} objects shown)", theme.ellipsis()),
                object: None,
            });
            break;
        }
        listed += 1;
        let again = !seen.insert(o);
        lines.push(DetailLine {
            text: format!(
                "  {}{}{} {} {}{}",
                "  ".repeat(depth),
                dump.type_name(ObjectIdx(o)),
                dump.quoted_preview(ObjectIdx(o), ROW_PREVIEW_CHARS),
                dump.id_hex(ObjectIdx(o)),
                bytes(dump.sizes.get(o as usize)),
                if again { " (again)" } else { "" }
            ),
            object: Some(o),
        });
        if !again {
            for r in graph.refs_raw(o).iter().rev() {
                stack.push((r, depth + 1));
            }
        }
    }
}
