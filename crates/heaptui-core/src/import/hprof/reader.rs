//! Bounds-checked big-endian reads over the mapped file, and the HPROF basic
//! types. Every read returns `None` past the end instead of panicking, so a
//! truncated or corrupt record becomes a diagnostic, never an out-of-bounds
//! access.

/// A cursor over a slice of the file; `base` is the slice's offset in the
/// file, so positions in messages are file offsets.
#[derive(Clone, Copy)]
pub(super) struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    id_size: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8], pos: usize, id_size: usize) -> Self {
        Reader {
            bytes,
            pos,
            id_size,
        }
    }

    #[inline]
    pub fn pos(&self) -> usize {
        self.pos
    }

    #[inline]
    pub fn id_size(&self) -> usize {
        self.id_size
    }

    #[inline]
    pub fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    /// The next `n` bytes, consumed.
    #[inline]
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.bytes.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    #[inline]
    pub fn skip(&mut self, n: usize) -> Option<()> {
        self.take(n).map(|_| ())
    }

    #[inline]
    pub fn u1(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    #[inline]
    pub fn u2(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }

    #[inline]
    pub fn u4(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// An identifier (4 or 8 bytes), widened to u64.
    #[inline]
    pub fn id(&mut self) -> Option<u64> {
        self.take(self.id_size).map(be_id)
    }
}

/// A big-endian identifier of 4 or 8 bytes.
#[inline]
pub(super) fn be_id(b: &[u8]) -> u64 {
    if b.len() == 4 {
        u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as u64
    } else {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[..8]);
        u64::from_be_bytes(w)
    }
}

/// HPROF basic types (the `u1` type tags of fields and arrays).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BasicType {
    Object,
    Boolean,
    Char,
    Float,
    Double,
    Byte,
    Short,
    Int,
    Long,
}

impl BasicType {
    /// The HPROF tag (the inverse of [`BasicType::from_tag`]).
    pub fn tag(self) -> u8 {
        match self {
            BasicType::Object => 2,
            BasicType::Boolean => 4,
            BasicType::Char => 5,
            BasicType::Float => 6,
            BasicType::Double => 7,
            BasicType::Byte => 8,
            BasicType::Short => 9,
            BasicType::Int => 10,
            BasicType::Long => 11,
        }
    }

    pub fn from_tag(tag: u8) -> Option<BasicType> {
        Some(match tag {
            2 => BasicType::Object,
            4 => BasicType::Boolean,
            5 => BasicType::Char,
            6 => BasicType::Float,
            7 => BasicType::Double,
            8 => BasicType::Byte,
            9 => BasicType::Short,
            10 => BasicType::Int,
            11 => BasicType::Long,
            _ => return None,
        })
    }

    /// Bytes in the file: an object reference takes the identifier size.
    #[inline]
    pub fn file_size(self, id_size: usize) -> usize {
        match self {
            BasicType::Object => id_size,
            BasicType::Boolean | BasicType::Byte => 1,
            BasicType::Char | BasicType::Short => 2,
            BasicType::Float | BasicType::Int => 4,
            BasicType::Double | BasicType::Long => 8,
        }
    }

    /// Bytes in MAT's size model: an object reference takes `ref_size`.
    #[inline]
    pub fn heap_size(self, ref_size: u64) -> u64 {
        match self {
            BasicType::Object => ref_size,
            t => t.file_size(1) as u64,
        }
    }

    /// The Java name of an array of this type (`int[]`).
    pub fn array_name(self) -> &'static str {
        match self {
            BasicType::Object => "java.lang.Object[]",
            BasicType::Boolean => "boolean[]",
            BasicType::Char => "char[]",
            BasicType::Float => "float[]",
            BasicType::Double => "double[]",
            BasicType::Byte => "byte[]",
            BasicType::Short => "short[]",
            BasicType::Int => "int[]",
            BasicType::Long => "long[]",
        }
    }

    /// The primitive array types, in tag order (index = `prim_index`).
    pub const PRIMITIVES: [BasicType; 8] = [
        BasicType::Boolean,
        BasicType::Char,
        BasicType::Float,
        BasicType::Double,
        BasicType::Byte,
        BasicType::Short,
        BasicType::Int,
        BasicType::Long,
    ];

    pub fn prim_index(self) -> usize {
        match self {
            BasicType::Object | BasicType::Boolean => 0,
            BasicType::Char => 1,
            BasicType::Float => 2,
            BasicType::Double => 3,
            BasicType::Byte => 4,
            BasicType::Short => 5,
            BasicType::Int => 6,
            BasicType::Long => 7,
        }
    }
}

/// Rounds up to a multiple of 8 (MAT's object alignment).
#[inline]
pub(super) fn align8(n: u64) -> u64 {
    n.saturating_add(7) & !7
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stop_at_the_end() {
        let b = [0, 0, 0, 5, 1, 2, 3];
        let mut r = Reader::new(&b, 0, 4);
        assert_eq!(r.u4(), Some(5));
        assert_eq!(r.id(), None);
        assert_eq!(r.pos(), 4);
        assert_eq!(r.u2(), Some(0x0102));
        assert_eq!(r.u1(), Some(3));
        assert_eq!(r.u1(), None);
        assert_eq!(r.take(usize::MAX), None);
        let b8 = [0, 0, 0, 1, 0, 0, 0, 2];
        assert_eq!(Reader::new(&b8, 0, 8).id(), Some(0x1_0000_0002));
        assert_eq!(align8(13), 16);
        assert_eq!(align8(16), 16);
    }
}
