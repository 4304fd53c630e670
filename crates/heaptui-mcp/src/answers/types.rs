//! `types` and `instances`: the Types pane's statistics, narrowed with the
//! filter syntax of its `/` line, and the instances of one type.

use serde::Deserialize;
use serde_json::{json, Value};

use heaptui_core::analysis::TypeStats;
use heaptui_core::analysis::{base_name, TextScope, TypeFilter};
use heaptui_core::model::ObjectIdx;

use super::{object_ref, parse_type};
use crate::page::{window, Page, Refusal};
use crate::state::Loaded;

/// How the type rows are ordered.
#[derive(Debug, Clone, Copy, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TypeOrder {
    /// Shallow bytes, largest first (the default).
    #[default]
    Shallow,
    /// Instances, most first.
    Count,
    /// Bytes the type's instances retain at least, largest first.
    Retained,
    /// Type name, A to Z.
    Name,
}

/// How instances are ordered.
#[derive(Debug, Clone, Copy, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InstanceOrder {
    /// Retained bytes, largest first (the default).
    #[default]
    Retained,
    /// Shallow bytes, largest first.
    Shallow,
    /// Object id, ascending (the dump's order of ids).
    Id,
}

/// Whether `name` passes the filter: its structural tokens, and each plain
/// word as a case-insensitive part of the name (the TUI ranks those words
/// fuzzily; an answer needs a yes or no).
fn passes(f: &TypeFilter, words: &[String], name: &str) -> bool {
    if !f.accepts(name) {
        return false;
    }
    let text = match f.scope {
        TextScope::FullName => name.to_lowercase(),
        TextScope::BaseName => base_name(name).to_lowercase(),
    };
    words.iter().all(|w| text.contains(w.as_str()))
}

/// A page of the type statistics that pass `filter`, in `order`.
pub fn types(
    l: &Loaded,
    filter: Option<&str>,
    order: TypeOrder,
    offset: Option<u64>,
    limit: Option<u64>,
) -> Result<Value, Refusal> {
    let a = &l.analysis;
    let dump = a.dump();
    let f = TypeFilter::parse(filter.unwrap_or(""));
    let words: Vec<String> = f.fuzzy.split_whitespace().map(str::to_lowercase).collect();
    let name = |t: &TypeStats| &*dump.type_names[t.type_index.index()];
    let mut rows: Vec<&TypeStats> = a
        .types
        .iter()
        .filter(|t| passes(&f, &words, name(t)))
        .collect();
    match order {
        TypeOrder::Shallow => {} // the analysis's own order
        TypeOrder::Count => rows.sort_by_key(|t| std::cmp::Reverse(t.count)),
        TypeOrder::Retained => rows.sort_by_key(|t| std::cmp::Reverse(t.min_retained_bytes)),
        TypeOrder::Name => rows.sort_by(|x, y| name(x).cmp(name(y))),
    }
    let range = window(rows.len(), offset, limit)?;
    let page = rows[range.clone()]
        .iter()
        .map(|t| {
            json!({
                "name": name(t),
                "count": t.count,
                "reachable_count": t.reachable_count,
                "shallow_bytes": t.shallow_bytes,
                "min_retained_bytes": t.min_retained_bytes,
            })
        })
        .collect();
    let mut out = Page::new("types", page, range.start, rows.len()).with(
        "next",
        "instances with a type's exact name lists its objects; the filter takes the / syntax (docs/mcp.md)",
    );
    if !f.unknown.is_empty() {
        out = out.with("ignored_tokens", f.unknown.clone());
    }
    Ok(out.finish())
}

/// A page of the instances of the type named exactly `type_name`.
pub fn instances(
    l: &Loaded,
    type_name: &str,
    order: InstanceOrder,
    offset: Option<u64>,
    limit: Option<u64>,
) -> Result<Value, Refusal> {
    let a = &l.analysis;
    let dump = a.dump();
    let t = parse_type(dump, type_name)?;
    let mut objects: Vec<ObjectIdx> = l.instances_of(t).to_vec();
    let retained = |o: &ObjectIdx| match a.dom.is_reachable(o.raw()) {
        true => a.dom.retained_bytes(o.index()),
        false => 0,
    };
    let total = objects.len();
    let range = window(total, offset, limit)?;
    // Only the rows up to the page's end are sorted (a type may have
    // millions of instances): each key ends with a unique part, so the
    // order is total and the pages agree.
    let key = |o: &ObjectIdx| match order {
        InstanceOrder::Retained => (std::cmp::Reverse(retained(o)), dump.ids.get(o.index())),
        InstanceOrder::Shallow => (std::cmp::Reverse(dump.size_of(*o)), dump.ids.get(o.index())),
        InstanceOrder::Id => (std::cmp::Reverse(0), dump.ids.get(o.index())),
    };
    if range.end < total {
        objects.select_nth_unstable_by_key(range.end, key);
        objects.truncate(range.end);
    }
    objects.sort_unstable_by_key(key);
    let rows = objects[range.clone()]
        .iter()
        .map(|&o| object_ref(a, o))
        .collect();
    Ok(Page::new("instances", rows, range.start, total)
        .with("type", type_name)
        .with("next", "object with an instance's id shows it in full")
        .finish())
}
