//! The memory account (docs/performance.md, "Memory at the peak"): after
//! each stage, the bytes of every large array alive and the process's
//! resident set and peak, logged (target `heaptui::memory`) when
//! `HEAPTUI_LOG` is on. Reads the arrays' lengths only: no cost per object,
//! and nothing at all with the log off.

use crate::graph::{Csr, DominatorTree};
use crate::model::Model;

/// The large arrays of `model`, `retainers` and `dom` that exist, as
/// (name, bytes).
pub fn arrays(
    model: &Model,
    retainers: Option<&Csr>,
    dom: Option<&DominatorTree>,
) -> Vec<(&'static str, usize)> {
    let mut v = vec![
        ("ids", model.ids.bytes()),
        ("types", std::mem::size_of_val(&*model.types)),
        ("sizes", model.sizes.bytes()),
        ("refs.offsets", model.refs.offsets().bytes()),
        ("refs.targets", std::mem::size_of_val(&*model.refs.targets)),
    ];
    if let Some(l) = &model.labels {
        v.push(("labels", l.of_ref.len() * 4));
    }
    if let Some(values) = &model.values {
        v.push(("values.offsets", values.offsets_bytes()));
        v.push(("values.kinds", values.kinds.len()));
        v.push(("values.bytes", values.bytes.len()));
    }
    if let Some(r) = retainers {
        v.push(("retainers.offsets", r.offsets().bytes()));
        v.push(("retainers.targets", std::mem::size_of_val(&*r.targets)));
    }
    if let Some(d) = dom {
        v.push(("dom.idom", std::mem::size_of_val(&*d.idom)));
        v.push(("dom.retained_bytes", d.retained_bytes.bytes()));
        v.push((
            "dom.retained_objects",
            std::mem::size_of_val(&*d.retained_objects),
        ));
        v.push(("dom.children.offsets", d.children.offsets().bytes()));
        v.push((
            "dom.children.targets",
            std::mem::size_of_val(&*d.children.targets),
        ));
        v.push(("dom.preorder", std::mem::size_of_val(&*d.preorder)));
    }
    v
}

/// Logs, after `stage`, the arrays alive (bytes and bytes per object) and
/// the resident set with its peak so far.
pub fn checkpoint(
    stage: &str,
    model: &Model,
    retainers: Option<&Csr>,
    dom: Option<&DominatorTree>,
) {
    if !tracing::enabled!(target: "heaptui::memory", tracing::Level::DEBUG) {
        return;
    }
    let n = model.objects().max(1) as f64;
    let list = arrays(model, retainers, dom);
    let total: usize = list.iter().map(|&(_, b)| b).sum();
    let parts: Vec<String> = list
        .iter()
        .map(|&(name, b)| format!("{name} {:.1}", b as f64 / n))
        .collect();
    tracing::debug!(target: "heaptui::memory",
        "{stage}: arrays {} MiB, {:.1} B/object ({})",
        total >> 20, total as f64 / n, parts.join(", "));
    crate::mem::checkpoint(stage);
}
