//! The object inspector: one object's identity, sizes, root records,
//! duplicate set, references, retainers, domination path and shortest
//! retention path. Every object line is a jump target.

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use super::dominators::reveal;
use super::duplicates::show_set;
use super::{Ctx, Intent, ListState, Pane};
use crate::fmt::{bytes, count, fit, text_width, type_name};
use crate::keys::Cmd;
use crate::msg::Msg;
use crate::theme::Theme;
use crate::worker::Job;
use heaptui_core::analysis::domination_path;
use heaptui_core::graph::duplicates::Duplicates;
use heaptui_core::graph::{DominatorTree, HeapGraph};
use heaptui_core::model::ObjectIdx;
use heaptui_core::model::{
    root_flags, root_kind, FieldValue, FieldView, Label, Model, ObjectFields,
};

/// References or retainers listed at most.
const LIST_LIMIT: usize = 200;
/// Until the worker indexed the labels by target (right after the
/// analysis; then a label is a binary search, `Model::index_labels`), the
/// references of a retainer searched for the label of its reference to the
/// inspected object (an array of a million elements stays cheap).
const LABEL_SCAN: usize = 100_000;
/// Characters of a string value shown beside a reference.
const PREVIEW_CHARS: usize = 40;

/// What an inspector line leads to (Enter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// An object: inspect it.
    Object(ObjectIdx),
    /// A duplicate set: select it in the Duplicates pane.
    Set(u32),
}

/// One line of the inspector.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The line's text (escaped).
    pub text: String,
    /// Where Enter leads from it, if anywhere.
    pub target: Option<Target>,
    /// Whether it is a section heading.
    pub heading: bool,
    /// Drawn after an object line's type name: a string value's preview.
    pub after: String,
    /// A reference line's position in `Model::refs.targets` (what `w`
    /// cuts).
    pub edge: Option<u64>,
}

/// The object inspector: an object's fields, references, retainers, dominators and duplicate set, as lines.
#[derive(Debug, Clone)]
pub struct Inspector {
    object: ObjectIdx,
    entries: Vec<Entry>,
    list: ListState,
    /// How many of the first entries are the answer to `w` (or its
    /// placeholder).
    what_if_len: usize,
}

impl Inspector {
    /// The lines that inspect `object` (the dominators and duplicates where they are known yet).
    pub fn build(
        object: ObjectIdx,
        graph: &HeapGraph,
        dom: Option<&DominatorTree>,
        dups: Option<&Duplicates>,
        theme: &Theme,
    ) -> Inspector {
        let dump = &graph.dump;
        let mut e: Vec<Entry> = Vec::new();
        summary_entries(&mut e, dump, object, dom);
        if let Some(fields) = dump.fields(object) {
            field_entries(&mut e, dump, object, fields, theme);
        }
        root_entries(&mut e, graph, object);
        duplicate_entries(&mut e, dups, object, theme);
        reference_entries(&mut e, graph, object, theme);
        retainer_entries(&mut e, graph, object, theme);
        if let Some(dom) = dom {
            domination_entries(&mut e, dump, dom, object, theme);
            head(&mut e, "Shortest retention path (from a root)".into());
            info(&mut e, "searching…".into());
        }
        let first = e.iter().position(|x| x.target.is_some()).unwrap_or(0);
        Inspector {
            object,
            entries: e,
            list: ListState {
                selected: first,
                offset: 0,
            },
            what_if_len: 0,
        }
    }

    /// Fills in the shortest retention path (computed as a job: on a big
    /// heap the search can take a while), each step named by the field it
    /// goes through where the format records one.
    pub fn set_retention_path(&mut self, path: Option<Vec<ObjectIdx>>, dump: &Model) {
        // The root it starts from, by its thread and frame where it lies
        // in one (the first such record of the rooted object).
        let place = path
            .as_ref()
            .and_then(|p| p.first())
            .and_then(|&o| dump.root_place_of(o));
        let Some(at) = self
            .entries
            .iter()
            .position(|e| e.heading && e.text.starts_with("Shortest retention path"))
        else {
            return;
        };
        self.entries.truncate(at + 1);
        match path {
            Some(p) => {
                for (i, &o) in p.iter().enumerate() {
                    let prefix = match (i, &place) {
                        (0, Some(place)) => format!("root ({place}) "),
                        (0, None) => "root ".to_string(),
                        _ => {
                            let label = dump.label_between(p[i - 1], o, LABEL_SCAN);
                            format!("  {}", labelled(label, " → "))
                        }
                    };
                    self.entries
                        .push(object_entry(dump, o, format!("  {prefix}")));
                }
            }
            None => self.entries.push(Entry {
                text: "  no root reaches it".into(),
                target: None,
                heading: false,
                after: String::new(),
                edge: None,
            }),
        }
    }

    /// Puts `block` (the answer to `w`, or its placeholder) at the top in
    /// place of the last one; the selection stays on its line, or, with
    /// `select`, goes to the block's first jump.
    pub fn set_what_if(&mut self, block: Vec<Entry>, select: bool) {
        let old = self.what_if_len;
        let selected = self.list.selected;
        let first = block.iter().position(|x| x.target.is_some());
        self.what_if_len = block.len();
        self.entries.splice(..old, block);
        self.list.selected = match (select, first) {
            (true, Some(f)) => f,
            _ if selected < old => self.what_if_len.min(self.entries.len().saturating_sub(1)),
            _ => selected - old + self.what_if_len,
        };
        if select {
            self.list.offset = 0;
        }
    }

    /// The inspected object.
    pub fn object(&self) -> ObjectIdx {
        self.object
    }

    /// Its lines.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The selected line and the scroll.
    pub fn list(&self) -> &ListState {
        &self.list
    }

    /// Where the selected line leads, if anywhere.
    pub fn target(&self) -> Option<Target> {
        self.entries.get(self.list.selected).and_then(|e| e.target)
    }
}

/// A heading line.
fn head(e: &mut Vec<Entry>, s: String) {
    e.push(Entry {
        text: s,
        target: None,
        heading: true,
        after: String::new(),
        edge: None,
    })
}

/// An indented line that is no jump target.
fn info(e: &mut Vec<Entry>, s: String) {
    e.push(Entry {
        text: format!("  {s}"),
        target: None,
        heading: false,
        after: String::new(),
        edge: None,
    })
}

/// An object line; it keeps only its prefix: the type name is fitted to
/// the width when drawn.
fn obj(dump: &Model, o: ObjectIdx, prefix: &str) -> Entry {
    object_entry(dump, o, format!("  {prefix}"))
}

/// "… n more" after a list cut at [`LIST_LIMIT`].
fn more(e: &mut Vec<Entry>, n: usize, theme: &Theme) {
    info(e, format!("{} {} more", theme.ellipsis(), count(n as u64)));
}

/// The object's heading, sizes and string value.
fn summary_entries(
    e: &mut Vec<Entry>,
    dump: &Model,
    object: ObjectIdx,
    dom: Option<&DominatorTree>,
) {
    head(
        e,
        format!("Object {} {}", dump.id_hex(object), dump.type_name(object)),
    );
    info(e, format!("shallow {}", bytes(dump.size_of(object))));
    if let Some(text) = dump.text_preview(object, 200) {
        info(e, format!("value \"{text}\""));
    }
    let Some(dom) = dom else {
        return;
    };
    if dom.is_reachable(object.raw()) {
        info(
            e,
            format!(
                "retained {} in {}",
                bytes(dom.retained_bytes(object.index())),
                crate::fmt::counted(
                    dom.retained_objects(object.index()) as u64,
                    "object",
                    "objects"
                )
            ),
        );
    } else {
        info(
            e,
            "unreachable: no strong root reaches it (garbage, weakly held, or held only by references)".into(),
        );
    }
}

/// The root records of the object, with their thread and frame.
fn root_entries(e: &mut Vec<Entry>, graph: &HeapGraph, object: ObjectIdx) {
    let dump = &graph.dump;
    head(e, "Root records".into());
    let mut any = false;
    for i in graph.root_indices_of(object) {
        any = true;
        let r = &dump.roots[i];
        let container = r
            .container_type
            .map(|t| format!(" of {}", dump.name_of_type(t)))
            .unwrap_or_default();
        // A root in a thread names it, and its stack frame.
        let place = match (dump.root_places.thread(i), dump.root_places.frame(i)) {
            (Some(t), Some(f)) => format!(" in thread {}, {f}", t.name),
            (Some(t), None) => format!(" in thread {}", t.name),
            _ => String::new(),
        };
        info(
            e,
            format!(
                "{} [{}]{container}{place}, line {}",
                root_kind::name(r.kind),
                root_flags::describe(r.flags),
                r.line
            ),
        );
    }
    if !any {
        info(e, "none".into());
    }
}

/// The duplicate set the object is in (a jump target).
fn duplicate_entries(
    e: &mut Vec<Entry>,
    dups: Option<&Duplicates>,
    object: ObjectIdx,
    theme: &Theme,
) {
    head(e, "Duplicate set".into());
    match dups.and_then(|d| d.set_of(object.raw()).map(|s| (d, s))) {
        Some((d, s)) => {
            let set = &d.sets[s as usize];
            e.push(Entry {
                text: format!(
                    "  {} set #{s}: {} copies, {} additional",
                    theme.arrow(),
                    count(d.members(s).len() as u64),
                    bytes(set.additional_bytes)
                ),
                target: Some(Target::Set(s)),
                heading: false,
                after: String::new(),
                edge: None,
            });
        }
        None => info(
            e,
            if dups.is_some() {
                "none".into()
            } else {
                "still detecting".into()
            },
        ),
    }
}

/// What the object refers to, by field; a Java reference object's
/// referent is listed (marked with its kind) whether or not it is among
/// the references.
fn reference_entries(e: &mut Vec<Entry>, graph: &HeapGraph, object: ObjectIdx, theme: &Theme) {
    let dump = &graph.dump;
    let refs = graph.refs(object);
    let referent = dump.referents.as_ref().and_then(|r| r.of(object));
    let weak_referent = referent.filter(|_| !dump.referents.as_ref().is_some_and(|r| r.strong));
    let listed = refs.len() + weak_referent.is_some() as usize;
    head(e, format!("References ({})", count(listed as u64)));
    for (i, r) in refs.iter().take(LIST_LIMIT).enumerate() {
        let label = dump.ref_label(object, i);
        let text = match referent {
            Some(w) if w.referent == r && label == Some(Label::Name("referent")) => {
                format!(
                    "{} [{}, retains] → ",
                    Label::Name("referent"),
                    w.strength.key()
                )
            }
            _ => labelled(label, " → "),
        };
        let mut line = obj(dump, r, &text);
        line.edge = Some(dump.refs.offset(object.index()) + i as u64);
        e.push(line);
    }
    if let Some(w) = weak_referent {
        let text = format!("{} [{}] → ", Label::Name("referent"), w.strength.key());
        e.push(obj(dump, w.referent, &text));
    }
    if refs.len() > LIST_LIMIT {
        more(e, refs.len() - LIST_LIMIT, theme);
    }
}

/// What refers to the object; the reference objects whose referent it is
/// come first where referents are not references (with `--references all`
/// they are retainers).
fn retainer_entries(e: &mut Vec<Entry>, graph: &HeapGraph, object: ObjectIdx, theme: &Theme) {
    let dump = &graph.dump;
    // Counted from their encoded bytes (in time proportional to their
    // number, without decoding), then the first LIST_LIMIT decoded.
    let rets = graph.retainers_raw(object.raw()).count();
    let holders: Vec<_> = match &dump.referents {
        Some(r) if !r.strong => r.holding(object).take(LIST_LIMIT).collect(),
        _ => Vec::new(),
    };
    head(
        e,
        format!("Retainers ({})", count((rets + holders.len()) as u64)),
    );
    for w in &holders {
        let text = format!("{} [{}] in ", Label::Name("referent"), w.strength.key());
        e.push(obj(dump, w.reference, &text));
    }
    for r in graph.retainers_of(object).take(LIST_LIMIT) {
        let label = dump.label_between(r, object, LABEL_SCAN);
        let held = dump.referents.as_ref().and_then(|x| x.of(r));
        let text = match held {
            Some(w) if w.referent == object && label == Some(Label::Name("referent")) => {
                format!(
                    "{} [{}, retains] in ",
                    Label::Name("referent"),
                    w.strength.key()
                )
            }
            _ => labelled(label, " in "),
        };
        e.push(obj(dump, r, &text));
    }
    if rets > LIST_LIMIT {
        more(e, rets - LIST_LIMIT, theme);
    }
}

/// The object's dominators up to a root; a long chain (a linked list)
/// shows its two ends.
fn domination_entries(
    e: &mut Vec<Entry>,
    dump: &Model,
    dom: &DominatorTree,
    object: ObjectIdx,
    theme: &Theme,
) {
    head(e, "Domination path (nearest dominator first)".into());
    let path = domination_path(dom, object);
    let shown = path.len().saturating_sub(1);
    for (i, (&o, &below)) in path.iter().skip(1).zip(&path).enumerate() {
        if shown > LIST_LIMIT && i == LIST_LIMIT / 2 {
            more(e, shown - LIST_LIMIT, theme);
        }
        if shown <= LIST_LIMIT || i < LIST_LIMIT / 2 || i >= shown - LIST_LIMIT / 2 {
            // A dominator often refers to what it dominates directly:
            // name the field.
            let label = dump.label_between(o, below, LABEL_SCAN);
            e.push(obj(dump, o, &labelled(label, " in ")));
        }
    }
    if path.len() <= 1 {
        info(
            e,
            if path.is_empty() {
                "not in the dominator tree".into()
            } else {
                "held directly by GC roots".into()
            },
        );
    }
}

impl Pane for Inspector {
    /// A what-if on this object says where its answer will stand.
    fn requested(&mut self, job: &Job) {
        if let Job::WhatIf { anchor, label, .. } = job {
            if *anchor == self.object {
                self.set_what_if(super::what_if::pending(label), false);
            }
        }
    }

    fn receive(&mut self, msg: Msg, ctx: &Ctx) -> Result<Vec<Intent>, Msg> {
        let msg = match msg {
            Msg::WhatIf {
                anchor,
                label,
                result,
                largest,
            } => {
                if self.object == anchor {
                    let theme = ctx.theme;
                    let block = super::what_if::answer(&label, &result, &largest, theme);
                    self.set_what_if(block, true);
                }
                return Ok(Vec::new());
            }
            msg => msg,
        };
        let Msg::RetentionPath { object, path } = msg else {
            return Err(msg);
        };
        if self.object == object {
            if let Some(g) = ctx.loading.graph() {
                self.set_retention_path(path, &g.dump);
            }
        }
        Ok(Vec::new())
    }

    fn key(&mut self, cmd: Cmd, ctx: &Ctx) -> Vec<Intent> {
        match cmd {
            Cmd::Open => match self.target() {
                Some(Target::Object(o)) => vec![Intent::Inspect(o)],
                Some(Target::Set(s)) => vec![Intent::Jump(show_set(s, true))],
                None => vec![Intent::status("not a jump target")],
            },
            Cmd::OpenInDominators => vec![Intent::Jump(reveal(self.object))],
            Cmd::WhatIf => {
                let Some(g) = ctx.loading.graph() else {
                    return Vec::new();
                };
                let selected = self.entries.get(self.list.selected);
                let (label, cut) = super::what_if::cut_of(&g.dump, self.object, selected);
                vec![Intent::Request {
                    job: Job::WhatIf {
                        anchor: self.object,
                        label: label.clone(),
                        cut,
                        owner: None,
                    },
                    label: format!("what if {label} were gone"),
                }]
            }
            _ => Vec::new(),
        }
    }

    fn step(&mut self, delta: isize, ctx: &Ctx) -> Vec<Intent> {
        let n = self.entries.len();
        self.list.step(delta, n, ctx.rows() + 1);
        Vec::new()
    }

    fn selected_object(&self, _ctx: &Ctx) -> Option<ObjectIdx> {
        match self.target() {
            Some(Target::Object(o)) => Some(o),
            _ => Some(self.object),
        }
    }

    fn fit(&mut self, ctx: &Ctx) {
        self.list.scroll(self.entries.len(), ctx.rows() + 1);
    }

    fn click_geometry(&self) -> Option<(usize, usize, u16)> {
        Some((self.list.selected, self.list.offset.saturating_sub(1), 2))
    }

    fn draw(&self, ctx: &Ctx, area: Rect, f: &mut Frame) {
        let theme = ctx.theme;
        let ins = self;
        let block = Block::bordered()
            .border_set(theme.border())
            .title(Line::styled(
                " Inspector (Enter jumps, o: in dominator tree, Backspace: back) ",
                theme.header(),
            ));
        let inner = block.inner(area);
        f.render_widget(block, area);
        let w = inner.width as usize;
        let lines: Vec<Line> = ins
            .entries
            .iter()
            .enumerate()
            .skip(ins.list.offset)
            .take(inner.height as usize)
            .map(|(i, en)| {
                let sel = i == ins.list.selected;
                let body = match (en.target, ctx.loading.graph()) {
                    (Some(Target::Object(o)), Some(g)) => {
                        let d = &g.dump;
                        // A preview takes at most half the room left, so
                        // the type name keeps its place: an escaped binary
                        // value is four columns per byte.
                        let half = w.saturating_sub(1 + text_width(&en.text)) / 2;
                        let after = if text_width(&en.after) > half {
                            fit(&en.after, half, theme)
                        } else {
                            en.after.clone()
                        };
                        let tail = format!("{} {} ({})", after, d.id_hex(o), bytes(d.size_of(o)));
                        let room = w.saturating_sub(1 + text_width(&en.text) + text_width(&tail));
                        format!(
                            "{}{}{tail}",
                            en.text,
                            type_name(d.type_name(o), room, theme)
                        )
                    }
                    _ => en.text.clone(),
                };
                let text = fit(&format!("{}{body}", if sel { ">" } else { " " }), w, theme);
                Line::styled(
                    text,
                    if sel {
                        theme.selected()
                    } else if en.heading {
                        theme.header()
                    } else {
                        Default::default()
                    },
                )
            })
            .collect();
        f.render_widget(Paragraph::new(lines), inner);
    }
}

/// An object line: `prefix` then (when drawn) the type name, the string
/// value's preview if it holds one, the id and the size.
fn object_entry(dump: &Model, o: ObjectIdx, text: String) -> Entry {
    Entry {
        text,
        target: Some(Target::Object(o)),
        heading: false,
        after: dump.quoted_preview(o, PREVIEW_CHARS),
        edge: None,
    }
}

/// The object's fields with their values (Java instances and classes),
/// or a primitive array's length, first elements and text: each field a
/// line, a reference a jump target.
fn field_entries(
    e: &mut Vec<Entry>,
    dump: &Model,
    object: ObjectIdx,
    fields: ObjectFields,
    theme: &Theme,
) {
    match fields {
        ObjectFields::Instance(f) => {
            field_list(e, dump, object, "Fields, own class first", &f, theme)
        }
        ObjectFields::Class(f) => field_list(e, dump, object, "Static fields", &f, theme),
        ObjectFields::PrimitiveArray {
            element,
            length,
            first,
            text,
        } => {
            e.push(text_entry("Elements".into(), true));
            let Some(n) = length else {
                e.push(text_entry(
                    "  not in the dump (no contents dumped)".into(),
                    false,
                ));
                return;
            };
            e.push(text_entry(format!("  {element}[{}]", count(n)), false));
            if !first.is_empty() {
                let more = if (first.len() as u64) < n {
                    format!(", {}", theme.ellipsis())
                } else {
                    String::new()
                };
                e.push(text_entry(
                    format!("  {{{}{more}}}", first.join(", ")),
                    false,
                ));
            }
            if let Some(t) = text {
                e.push(text_entry(format!("  as text \"{t}\""), false));
            }
        }
        ObjectFields::Value(v) => {
            e.push(text_entry("Value".into(), true));
            e.push(text_entry(format!("  {v}"), false));
        }
    }
}

/// A line of text, not a jump target.
pub(crate) fn text_entry(text: String, heading: bool) -> Entry {
    Entry {
        text,
        target: None,
        heading,
        after: String::new(),
        edge: None,
    }
}

/// A heading `title (n)` and the first [`LIST_LIMIT`] fields of `object`.
fn field_list(
    e: &mut Vec<Entry>,
    dump: &Model,
    object: ObjectIdx,
    title: &str,
    fields: &[FieldView],
    theme: &Theme,
) {
    e.push(text_entry(
        format!("{title} ({})", count(fields.len() as u64)),
        true,
    ));
    e.extend((fields.iter().take(LIST_LIMIT)).map(|f| field_entry(dump, object, f)));
    if fields.len() > LIST_LIMIT {
        let more = count((fields.len() - LIST_LIMIT) as u64);
        e.push(text_entry(
            format!("  {} {more} more", theme.ellipsis()),
            false,
        ));
    }
}

/// One field of `object`: its value, or a jump to the object it refers to
/// (a reference the what-if can cut).
fn field_entry(dump: &Model, object: ObjectIdx, f: &FieldView) -> Entry {
    let name = &f.name;
    let text = match &f.value {
        FieldValue::Primitive(v) => format!("  {} {name} = {v}", f.ty),
        FieldValue::Ref(None) => format!("  {} {name} = null", f.ty),
        FieldValue::Ref(Some(o)) => {
            let mut line = object_entry(dump, *o, format!("  {} {name} → ", f.ty));
            line.edge = super::what_if::field_edge(dump, object, name, *o);
            return line;
        }
        FieldValue::Referent(o, strength, strong) => {
            let retains = if *strong { ", retains" } else { "" };
            let prefix = format!("  {} {name} [{}{retains}] → ", f.ty, strength.key());
            return object_entry(dump, *o, prefix);
        }
        FieldValue::Missing => format!("  {} {name} = ? (not in the dump)", f.ty),
        FieldValue::NotKept => format!("  {} {name} = ? (a cache, not kept)", f.ty),
    };
    text_entry(text, false)
}

/// `.field<sep>` or `[3]<sep>`; empty without a label.
fn labelled(label: Option<Label<'_>>, sep: &str) -> String {
    label.map(|l| format!("{l}{sep}")).unwrap_or_default()
}
