//! How `java.lang.String`s' arrays are read: a Java 9+ compact string keeps
//! its characters in a `byte[]` whose encoding its `coder` field names
//! (0 Latin-1, 1 UTF-16 in the VM's byte order, little-endian on the
//! platforms HotSpot and ART dump from); Java 8 and Android keep a `char[]`
//! (written big-endian by HPROF). Such a `byte[]` is marked as text so the
//! inspector can show it; other `byte[]`s stay plain bytes.

use super::classes::Classes;
use crate::model::{Labels, ObjectIdx, ValueKind, Values};
use rayon::prelude::*;

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
    // In parallel, the marks in object order (the first string of an
    // array decides its kind, as a sequential walk would).
    let marks: Vec<(u32, ValueKind)> = types
        .par_iter()
        .enumerate()
        .filter(|&(_, &t)| t as usize == string_type)
        .filter_map(|(o, _)| {
            let (start, end) = (refs.offsets[o] as usize, refs.offsets[o + 1] as usize);
            let e = (start..end).find(|&e| labels.of_ref[e] as usize == value_label)?;
            let target = refs.targets[e];
            if types[target as usize] as usize != byte_array {
                return None;
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
            Some((target, kind))
        })
        .collect();
    for (target, kind) in marks {
        if values.kinds[target as usize] == ValueKind::Bytes {
            values.kinds[target as usize] = kind;
        }
    }
}
