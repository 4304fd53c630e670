//! What native formats carry beyond the graph (SPEC §1.1): a label per
//! reference (field name, array index, V8 property name) and value bytes per
//! object (primitive fields, primitive array contents, string contents).
//! Both are compact: labels are interned u32 ids in an array parallel to the
//! references' targets; values live in one shared byte arena with an
//! offsets array, never an allocation per object.

use super::ObjectIdx;

/// A reference's label as stored: an interned name, an array index, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label<'a> {
    /// A field or property name (`table`, `next`, `__proto__`).
    Name(&'a str),
    /// An element index of an array (`[3]`).
    Index(u32),
}

impl std::fmt::Display for Label<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Label::Name(n) => write!(f, ".{n}"),
            Label::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// Per-reference labels, parallel to `Model::refs.targets`.
///
/// Each entry is a u32: [`Labels::NONE`] for no label, an index into
/// `names` below 2^31, or an array index with the top bit set. Array indices
/// up to 2^31 − 1 are kept as numbers; larger ones (never seen in a real
/// array) are stored as no label.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Labels {
    /// Interned label names.
    pub names: Vec<Box<str>>,
    /// One entry per reference, in the order of `refs.targets`.
    pub of_ref: Vec<u32>,
    /// Each object's reference positions ordered by (target, position),
    /// built once on demand (`Model::index_labels`).
    pub(super) by_target: TargetOrder,
}

/// Reference positions (into `refs.targets`), each object's own ordered by
/// (target, position): where `from` refers to `to` is a binary search in
/// `from`'s row. Derived data: it takes no part in equality.
#[derive(Clone, Default)]
pub(super) struct TargetOrder(pub(super) std::sync::OnceLock<Box<[u32]>>);

impl PartialEq for TargetOrder {
    fn eq(&self, _: &TargetOrder) -> bool {
        true
    }
}

impl Eq for TargetOrder {}

impl std::fmt::Debug for TargetOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let built = self.0.get().is_some();
        write!(f, "TargetOrder {{ built: {built} }}")
    }
}

impl Labels {
    pub const NONE: u32 = u32::MAX;
    const INDEX: u32 = 1 << 31;

    /// Labels of the references (`of_ref`, parallel to `refs.targets`)
    /// naming into `names`.
    pub fn new(names: Vec<Box<str>>, of_ref: Vec<u32>) -> Labels {
        Labels {
            names,
            of_ref,
            by_target: TargetOrder::default(),
        }
    }

    /// The stored form of an array index.
    pub fn index(i: u64) -> u32 {
        if i < (Self::INDEX - 1) as u64 {
            Self::INDEX | i as u32
        } else {
            Self::NONE
        }
    }

    /// The label of the reference at position `edge` of the targets array.
    pub fn get(&self, edge: usize) -> Option<Label<'_>> {
        let raw = *self.of_ref.get(edge)?;
        if raw == Self::NONE {
            None
        } else if raw & Self::INDEX != 0 {
            Some(Label::Index(raw & !Self::INDEX))
        } else {
            self.names.get(raw as usize).map(|n| Label::Name(n))
        }
    }
}

/// How an object's value bytes are read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, bytemuck::Zeroable)]
#[repr(u8)]
pub enum ValueKind {
    /// No value.
    #[default]
    None = 0,
    /// Text in UTF-8 (V8 strings, gcdump strings).
    Utf8 = 1,
    /// Text in UTF-16, little-endian (Java `char[]` of a `String`).
    Utf16Le = 2,
    /// Text in UTF-16, big-endian (HPROF writes arrays big-endian).
    Utf16Be = 3,
    /// Text in Latin-1 (a compact Java 9+ `String`'s `byte[]`).
    Latin1 = 4,
    /// Primitive field bytes or primitive array contents, compared as bytes.
    Bytes = 5,
}

/// Per-object value bytes in one arena.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Values {
    /// `objects + 1` offsets into `bytes`; object `o`'s value is
    /// `bytes[offsets[o]..offsets[o + 1]]`.
    pub offsets: Vec<u64>,
    pub bytes: Vec<u8>,
    /// One per object.
    pub kinds: Vec<ValueKind>,
}

impl Values {
    /// The object's value bytes and how to read them; `None` when it has none.
    pub fn get(&self, object: ObjectIdx) -> Option<(&[u8], ValueKind)> {
        let o = object.index();
        let kind = *self.kinds.get(o)?;
        if kind == ValueKind::None {
            return None;
        }
        let start = *self.offsets.get(o)? as usize;
        let end = *self.offsets.get(o + 1)? as usize;
        Some((self.bytes.get(start..end)?, kind))
    }

    /// The value as text, at most `max_chars` characters (`…` when cut),
    /// control characters shown as `\xHH`; `None` for objects without a
    /// textual value.
    pub fn text(&self, object: ObjectIdx, max_chars: usize) -> Option<String> {
        let (bytes, kind) = self.get(object)?;
        Some(match kind {
            // Only the first `max_chars + 1` characters are needed, and
            // they lie within 4 bytes each.
            ValueKind::Utf8 => {
                let head = &bytes[..bytes.len().min(max_chars.saturating_mul(4) + 4)];
                cut(String::from_utf8_lossy(head).chars(), max_chars)
            }
            ValueKind::Latin1 => cut(bytes.iter().map(|&b| b as char), max_chars),
            ValueKind::Utf16Le | ValueKind::Utf16Be => {
                let be = kind == ValueKind::Utf16Be;
                let units = bytes.chunks_exact(2).map(move |p| {
                    if be {
                        u16::from_be_bytes([p[0], p[1]])
                    } else {
                        u16::from_le_bytes([p[0], p[1]])
                    }
                });
                let chars = char::decode_utf16(units).map(|c| c.unwrap_or('\u{fffd}'));
                cut(chars, max_chars)
            }
            ValueKind::None | ValueKind::Bytes => return None,
        })
    }
}

/// The first `max` characters, `…` when there were more; control
/// characters written visibly as `\xHH` (a string from a dump may hold
/// escape sequences or line breaks: see `model::text`).
fn cut(chars: impl Iterator<Item = char>, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in chars.enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_round_trip_names_and_indices() {
        let l = Labels::new(
            vec!["next".into()],
            vec![0, Labels::index(7), Labels::NONE, Labels::index(u64::MAX)],
        );
        assert_eq!(l.get(0), Some(Label::Name("next")));
        assert_eq!(l.get(1), Some(Label::Index(7)));
        assert_eq!(l.get(2), None);
        assert_eq!(l.get(3), None);
        assert_eq!(l.get(4), None);
        assert_eq!(l.get(0).unwrap().to_string(), ".next");
        assert_eq!(l.get(1).unwrap().to_string(), "[7]");
    }

    #[test]
    fn values_read_every_text_kind_and_cut() {
        let mut v = Values::default();
        let parts: [(&[u8], ValueKind); 5] = [
            (b"hello", ValueKind::Utf8),
            (&[0, b'h', 0, b'i'], ValueKind::Utf16Be),
            (&[b'h', 0, b'i', 0], ValueKind::Utf16Le),
            (&[0xe9], ValueKind::Latin1),
            (&[1, 2, 3], ValueKind::Bytes),
        ];
        v.offsets.push(0);
        for (b, k) in parts {
            v.bytes.extend_from_slice(b);
            v.offsets.push(v.bytes.len() as u64);
            v.kinds.push(k);
        }
        assert_eq!(v.text(ObjectIdx(0), 10).as_deref(), Some("hello"));
        assert_eq!(v.text(ObjectIdx(0), 2).as_deref(), Some("he…"));
        let e = Values {
            offsets: vec![0, 6],
            bytes: b"a\x1b[2Jb".to_vec(),
            kinds: vec![ValueKind::Utf8],
        };
        assert_eq!(e.text(ObjectIdx(0), 10).as_deref(), Some("a\\x1b[2Jb"));
        assert_eq!(v.text(ObjectIdx(1), 10).as_deref(), Some("hi"));
        assert_eq!(v.text(ObjectIdx(2), 10).as_deref(), Some("hi"));
        assert_eq!(v.text(ObjectIdx(3), 10).as_deref(), Some("é"));
        assert_eq!(v.text(ObjectIdx(4), 10), None);
        assert_eq!(
            v.get(ObjectIdx(4)),
            Some((&[1u8, 2, 3][..], ValueKind::Bytes))
        );
        assert_eq!(v.get(ObjectIdx(5)), None);
    }
}
