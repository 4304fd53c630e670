//! How `java.lang.String`s' arrays are read: a Java 9+ compact string keeps
//! its characters in a `byte[]` whose encoding its `coder` field names
//! (0 Latin-1, 1 UTF-16 in the VM's byte order, little-endian on the
//! platforms HotSpot and ART dump from); Java 8 and Android keep a `char[]`
//! (written big-endian by HPROF). Such a `byte[]` is marked as text so the
//! inspector can show it; other `byte[]`s stay plain bytes.

use super::classes::Classes;
use crate::model::{Labels, ObjectIdx, ValueKind, Values};

pub(super) fn mark_string_arrays(
    type_names: &[Box<str>],
    types: &[u32],
    refs: &crate::model::Csr,
    labels: &Labels,
    values: &mut Values,
    classes: &Classes,
) {
    let Some(string_type) = type_names.iter().position(|n| &**n == "java.lang.String") else {
        return;
    };
    let Some(byte_array) = type_names.iter().position(|n| &**n == "byte[]") else {
        return;
    };
    let Some(value_label) = labels.names.iter().position(|n| &**n == "value") else {
        return;
    };
    let coder_at = classes.string.and_then(|(_, c)| c);
    let mut marks: Vec<(u32, ValueKind)> = Vec::new();
    for (o, &t) in types.iter().enumerate() {
        if t as usize != string_type {
            continue;
        }
        let (start, end) = (refs.offsets[o] as usize, refs.offsets[o + 1] as usize);
        let Some(e) = (start..end).find(|&e| labels.of_ref[e] as usize == value_label) else {
            continue;
        };
        let target = refs.targets[e];
        if types[target as usize] as usize != byte_array {
            continue;
        }
        let coder = coder_at
            .and_then(|c| {
                values
                    .get(ObjectIdx::from_usize(o))
                    .and_then(|(b, _)| b.get(c).copied())
            })
            .unwrap_or(0);
        let kind = if coder == 0 {
            ValueKind::Latin1
        } else {
            ValueKind::Utf16Le
        };
        marks.push((target, kind));
    }
    for (target, kind) in marks {
        if values.kinds[target as usize] == ValueKind::Bytes {
            values.kinds[target as usize] = kind;
        }
    }
}
