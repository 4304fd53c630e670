//! How `java.lang.String`s' arrays are read: a Java 9+ compact string keeps
//! its characters in a `byte[]` whose encoding its `coder` field names
//! (0 Latin-1, 1 UTF-16 in the VM's byte order, little-endian on the
//! platforms HotSpot and ART dump from); Java 8 and Android keep a `char[]`
//! (written big-endian by HPROF). Such a `byte[]` is marked as text so the
//! inspector can show it; other `byte[]`s stay plain bytes.
//!
//! The writing walk (`decode::Write`) notes each string's `value` target and
//! its coder as it goes, so no pass over the objects is needed afterwards.

use crate::model::ValueKind;

/// The text a compact string's array holds, by the string's `coder` (no
/// coder: a Java 8 string, or a field cut short, reads as Latin-1).
pub(super) fn kind(coder: Option<u8>) -> ValueKind {
    match coder.unwrap_or(0) {
        0 => ValueKind::Latin1,
        _ => ValueKind::Utf16Le,
    }
}

/// Marks the arrays that strings point at (`marks` in object order: the
/// first string of an array decides its kind) where they are `byte[]`s
/// still read as plain bytes.
pub(super) fn mark_string_arrays(
    marks: impl IntoIterator<Item = (u32, ValueKind)>,
    types: &[u32],
    byte_array: u32,
    kinds: &mut [ValueKind],
) {
    for (target, kind) in marks {
        // A string that marks nothing (see `decode::StringMark`).
        if kind == ValueKind::None {
            continue;
        }
        let t = target as usize;
        if types.get(t) == Some(&byte_array) && kinds.get(t) == Some(&ValueKind::Bytes) {
            kinds[t] = kind;
        }
    }
}
