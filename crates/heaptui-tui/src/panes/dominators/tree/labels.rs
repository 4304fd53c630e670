//! What a row of the tree says: its label cut to a width, the chart's
//! label, and the sizes it retains.

use super::*;
use crate::fmt::{count, row_preview, text_width, type_name};
use crate::theme::Theme;
use heaptui_core::graph::DominatorTree;
use heaptui_core::model::Model;
use heaptui_core::model::ObjectIdx;

impl Tree {
    /// Label of a row: `N × Type`, or `Type id` for one instance.
    pub fn label_of(&self, id: u32, dump: &Model, theme: &Theme) -> String {
        self.label_within(id, dump, theme, usize::MAX)
    }

    /// The label with its type name shortened to fit `width`.
    pub fn label_within(&self, id: u32, dump: &Model, theme: &Theme, width: usize) -> String {
        let short = |name: &str, extra: usize| type_name(name, width.saturating_sub(extra), theme);
        match &self.nodes[id as usize].item {
            Item::SuperRoot => "all roots".into(),
            Item::Group(g) => {
                let name = &dump.type_names[g.type_index.index()];
                if g.members.len() == 1 {
                    let o = ObjectIdx(g.members[0]);
                    let (id, text) = (dump.id_hex(o), class_row_preview(dump, o, width));
                    format!(
                        "{}{text} {id}",
                        short(name, id.len() + 1 + text_width(&text))
                    )
                } else {
                    let x = if theme.ascii { "x" } else { "×" };
                    let n = count(g.members.len() as u64);
                    // A group showing its instances says so (`x` toggles).
                    let mode = if self.nodes[id as usize].instances {
                        " (instances)"
                    } else {
                        ""
                    };
                    format!("{n} {x} {}{mode}", short(name, n.len() + 3 + mode.len()))
                }
            }
            Item::Instance(o) => {
                let o = ObjectIdx(*o);
                let (id, text) = (dump.id_hex(o), class_row_preview(dump, o, width));
                let name = short(dump.row_type_name(o), id.len() + 1 + text_width(&text));
                format!("{name}{text} {id}")
            }
            Item::More { remaining } => format!(
                "{} {} more (Enter)",
                theme.ellipsis(),
                count(*remaining as u64)
            ),
            Item::Vanished(p) => {
                let Some(c) = &self.compared else {
                    return "?".into();
                };
                let name = c.type_name(c.cmp.paths.type_id[*p as usize]);
                let old = c.cmp.paths.figures_of(*p).iter().map(|f| f.count).max();
                let old = old.unwrap_or(0);
                let x = if theme.ascii { "x" } else { "×" };
                let gone = "(gone) ";
                if old > 1 {
                    let n = count(old as u64);
                    format!("{gone}{n} {x} {}", short(name, gone.len() + n.len() + 3))
                } else {
                    format!("{gone}{}", short(name, gone.len()))
                }
            }
        }
    }

    /// A chart label: the type (with its count for groups), no id.
    pub fn chart_label(&self, id: u32, dump: &Model, theme: &Theme, width: usize) -> String {
        match &self.nodes[id as usize].item {
            Item::Group(g) if g.members.len() > 1 => self.label_within(id, dump, theme, width),
            Item::Group(g) => type_name(&dump.type_names[g.type_index.index()], width, theme),
            Item::Instance(o) => type_name(dump.row_type_name(ObjectIdx(*o)), width, theme),
            _ => self.label_within(id, dump, theme, width),
        }
    }

    /// (retained bytes, retained objects) of a row.
    pub fn sizes_of(&self, id: u32, dom: &DominatorTree) -> Option<(u64, u64)> {
        match &self.nodes[id as usize].item {
            Item::SuperRoot => Some((dom.reachable_bytes, dom.reachable_objects)),
            Item::Group(g) => Some((g.retained_bytes, g.retained_objects)),
            Item::Instance(o) => Some((
                dom.retained_bytes(*o as usize),
                dom.retained_objects(*o as usize) as u64,
            )),
            Item::More { .. } => None,
            Item::Vanished(_) => Some((0, 0)),
        }
    }
}

/// An object's text beside its row's name: none for a Java class object,
/// whose row (`class X`) names it already.
fn class_row_preview(dump: &Model, o: ObjectIdx, width: usize) -> String {
    match dump.has_row_type(o) {
        true => String::new(),
        false => row_preview(dump, o, width),
    }
}
