//! The threads and stack frames that roots lie in: HPROF's Java frame and
//! JNI local roots carry their thread's serial number and their frame's
//! depth in that thread's stack trace; a thread object root ties a serial
//! to the `java.lang.Thread` and to its STACK TRACE, whose STACK FRAME
//! records name method, source file and line. The thread's name is its
//! `name` field's characters. Everything is kept per root record (a few
//! thousand), nothing per object.

use std::collections::HashMap;

use super::classes::{pretty_class_name, string_text};
use super::scan::{Frame, RawRoot, Records, NO_SERIAL};
use crate::model::{Label, Model, ObjectIdx, RootPlaces, RootThread};

/// Thread names longer than this are cut (the name is the dump's).
const MAX_NAME: usize = 200;

/// A frame as `java.lang.StackTraceElement` prints it:
/// `Leaky.main(Leaky.java:12)`, `(Native Method)`, `(Unknown Source)`.
pub(super) fn frame_text(bytes: &[u8], records: &Records, f: &Frame) -> String {
    let class = records
        .class_serials
        .get(&f.class)
        .and_then(|&n| string_text(bytes, records, n))
        .map(|n| pretty_class_name(&n))
        .unwrap_or_else(|| "<unknown class>".into());
    let method = string_text(bytes, records, f.method).unwrap_or_else(|| "<unknown>".into());
    let source = string_text(bytes, records, f.source).filter(|s| !s.is_empty());
    let place = match (f.line, source) {
        (-3, _) => "Native Method".to_string(),
        (-2, Some(s)) => format!("{s}, compiled"),
        (l, Some(s)) if l > 0 => format!("{s}:{l}"),
        (_, Some(s)) => s,
        (_, None) => "Unknown Source".into(),
    };
    format!("{class}.{method}({place})")
}

/// The characters of a thread object's `name` string.
fn thread_name(m: &Model, thread: ObjectIdx) -> Option<String> {
    let refs = m.refs_of(thread);
    let i = (0..refs.len())
        .find(|&i| matches!(m.ref_label(thread, i), Some(Label::Name(l)) if l == "name"))?;
    m.text_preview(refs.get(i), MAX_NAME)
}

/// Per root of `m` (whose records `raw_kept` are, in the same order), the
/// thread and frame it lies in.
pub(super) fn places(
    bytes: &[u8],
    records: &Records,
    raw_kept: &[RawRoot],
    m: &Model,
) -> RootPlaces {
    let mut out = RootPlaces::default();
    if !raw_kept.iter().any(|r| r.thread != NO_SERIAL) {
        return out;
    }
    // Thread serial → (its object, its stack trace serial).
    let mut thread_roots: HashMap<u32, (ObjectIdx, u32)> = HashMap::new();
    for (r, root) in raw_kept.iter().zip(&m.roots) {
        if r.tag == 0x08 && r.thread != NO_SERIAL {
            thread_roots
                .entry(r.thread)
                .or_insert((root.object, r.frame));
        }
    }
    // Where no thread object root gives the trace, the trace that names
    // the thread does.
    let mut trace_of_thread: HashMap<u32, u32> = HashMap::new();
    for (&serial, (thread, _)) in &records.traces {
        let e = trace_of_thread.entry(*thread).or_insert(serial);
        *e = (*e).min(serial);
    }
    let mut threads: HashMap<u32, u32> = HashMap::new();
    let mut frames: HashMap<u64, u32> = HashMap::new();
    out.of_root = raw_kept
        .iter()
        .map(|r| {
            if r.thread == NO_SERIAL {
                return (RootPlaces::NONE, RootPlaces::NONE);
            }
            let known = thread_roots.get(&r.thread).copied();
            let t = *threads.entry(r.thread).or_insert_with(|| {
                let object = known.map(|k| k.0);
                let name = object
                    .and_then(|o| thread_name(m, o))
                    .unwrap_or_else(|| format!("thread {}", r.thread));
                out.threads.push(RootThread {
                    name: name.into(),
                    object,
                });
                (out.threads.len() - 1) as u32
            });
            let f = match r.tag {
                0x02 | 0x03 if r.frame != NO_SERIAL => known
                    .map(|k| k.1)
                    .filter(|&s| records.traces.contains_key(&s))
                    .or_else(|| trace_of_thread.get(&r.thread).copied())
                    .and_then(|s| records.traces.get(&s))
                    .and_then(|(_, ids)| ids.get(r.frame as usize))
                    .and_then(|&id| {
                        let frame = records.frames.get(&id)?;
                        Some(*frames.entry(id).or_insert_with(|| {
                            out.frames.push(frame_text(bytes, records, frame).into());
                            (out.frames.len() - 1) as u32
                        }))
                    })
                    .unwrap_or(RootPlaces::NONE),
                _ => RootPlaces::NONE,
            };
            (t, f)
        })
        .collect();
    out
}
