//! PerfView's FastSerialization stream, as far as a gcdump needs it: the
//! signature, primitive fields (little-endian integers and floats, strings
//! as a UTF-16 unit count then each unit in 1–3 UTF-8-like bytes), object
//! headers with their `SerializationType`, the skipping of tagged fields up
//! to an object's `EndObject` tag, and forward references (resolved through
//! the table the trailer points at). Every read is bounds-checked; errors
//! say what was being read and at which byte.
//!
//! Followed: microsoft/perfview `src/FastSerialization/FastSerialization.cs`
//! (the `Tags` enum, `Deserializer.ReadObjectDefinition`, `FindEndTag`,
//! `ResolveForwardReference`, the layout synopsis above `Serializer`) and
//! `src/FastSerialization/StreamReaderWriter.cs` (`ReadString`).

use std::collections::HashMap;

pub const SIGNATURE: &[u8] = b"!FastSerialization.1";

/// FastSerialization's `Tags`.
pub mod tag {
    pub const NULL_REFERENCE: u8 = 1;
    pub const OBJECT_REFERENCE: u8 = 2;
    pub const FORWARD_REFERENCE: u8 = 3;
    pub const BEGIN_OBJECT: u8 = 4;
    pub const BEGIN_PRIVATE_OBJECT: u8 = 5;
    pub const END_OBJECT: u8 = 6;
    pub const FORWARD_DEFINITION: u8 = 7;
    pub const BYTE: u8 = 8;
    pub const INT16: u8 = 9;
    pub const INT32: u8 = 10;
    pub const INT64: u8 = 11;
    pub const SKIP_REGION: u8 = 12;
    pub const STRING: u8 = 13;
    pub const BLOB: u8 = 14;
}

/// A `SerializationType`: the full name of an object's class and the
/// versions it was written with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeInfo {
    pub name: String,
    pub version: i32,
    pub min_reader_version: i32,
}

pub struct Reader<'a> {
    pub bytes: &'a [u8],
    pub pos: usize,
    /// Types already read, by the stream position of their definition.
    types: HashMap<usize, TypeInfo>,
}

pub type Result<T> = std::result::Result<T, String>;

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader {
            bytes,
            pos: 0,
            types: HashMap::new(),
        }
    }

    pub fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        match self.pos.checked_add(n).filter(|&e| e <= self.bytes.len()) {
            Some(end) => {
                let s = &self.bytes[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => Err(format!(
                "the file ends inside {what} (at byte {}, {n} bytes needed)",
                self.pos
            )),
        }
    }

    pub fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.take(1, what)?[0])
    }

    pub fn i32(&mut self, what: &str) -> Result<i32> {
        Ok(i32::from_le_bytes(self.take(4, what)?.try_into().unwrap()))
    }

    pub fn i64(&mut self, what: &str) -> Result<i64> {
        Ok(i64::from_le_bytes(self.take(8, what)?.try_into().unwrap()))
    }

    pub fn f32(&mut self, what: &str) -> Result<f32> {
        Ok(f32::from_le_bytes(self.take(4, what)?.try_into().unwrap()))
    }

    /// A non-negative count.
    pub fn count(&mut self, what: &str) -> Result<usize> {
        let at = self.pos;
        let n = self.i32(what)?;
        usize::try_from(n).map_err(|_| format!("{what} is negative ({n}) at byte {at}"))
    }

    /// A string: UTF-16 unit count (-1: null), then each unit in 1–3 bytes.
    pub fn string(&mut self, what: &str) -> Result<Option<String>> {
        let at = self.pos;
        let n = self.i32(what)?;
        if n < 0 {
            return Ok(None);
        }
        // Each unit takes a byte at least: a count beyond the file is corrupt.
        if n as usize > self.bytes.len() - self.pos {
            return Err(format!(
                "{what}: a string of {n} characters at byte {at} runs past the end"
            ));
        }
        let mut units = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let b = self.u8(what)? as u16;
            let unit = if b < 0x80 {
                b
            } else if b < 0xe0 {
                (b & 0x1f) << 6 | (self.u8(what)? as u16 & 0x3f)
            } else {
                let b1 = self.u8(what)? as u16 & 0x3f;
                let b2 = self.u8(what)? as u16 & 0x3f;
                (b & 0xf) << 12 | b1 << 6 | b2
            };
            units.push(unit);
        }
        Ok(Some(String::from_utf16_lossy(&units)))
    }

    /// Reads the signature: its length (i32) and text (the text alone is
    /// taken too).
    pub fn signature(&mut self) -> Result<()> {
        if self.bytes.starts_with(SIGNATURE) {
            self.pos = SIGNATURE.len();
            return Ok(());
        }
        let n = self.i32("the signature")?;
        let sig = self.take(SIGNATURE.len(), "the signature")?;
        if n as usize != SIGNATURE.len() || sig != SIGNATURE {
            return Err("not a FastSerialization stream (bad signature)".into());
        }
        Ok(())
    }

    /// Reads an object's start (`[ForwardDefinition i32] BeginObject
    /// <type>`) and returns its type.
    pub fn begin_object(&mut self, what: &str) -> Result<TypeInfo> {
        let at = self.pos;
        let mut t = self.u8(what)?;
        if t == tag::FORWARD_DEFINITION {
            self.i32(what)?;
            t = self.u8(what)?;
        }
        if t != tag::BEGIN_OBJECT && t != tag::BEGIN_PRIVATE_OBJECT {
            return Err(format!(
                "{what}: expected an object at byte {at}, found tag {t}"
            ));
        }
        self.type_ref(what)
    }

    /// A reference to a `SerializationType`: null (the type of types), an
    /// inline definition, or a reference to an earlier one.
    fn type_ref(&mut self, what: &str) -> Result<TypeInfo> {
        let at = self.pos;
        match self.u8(what)? {
            tag::NULL_REFERENCE => Ok(TypeInfo {
                name: "FastSerialization.SerializationType".into(),
                version: 0,
                min_reader_version: 0,
            }),
            tag::OBJECT_REFERENCE => {
                let label = self.i32(what)? as u32 as usize;
                self.types
                    .get(&label)
                    .cloned()
                    .ok_or_else(|| format!("{what}: type reference to byte {label} names no type"))
            }
            t @ (tag::BEGIN_OBJECT | tag::BEGIN_PRIVATE_OBJECT | tag::FORWARD_DEFINITION) => {
                if t == tag::FORWARD_DEFINITION {
                    self.i32(what)?;
                    self.u8(what)?;
                }
                self.type_ref(what)?; // the type of a type
                let info = TypeInfo {
                    version: self.i32(what)?,
                    min_reader_version: self.i32(what)?,
                    name: self.string(what)?.unwrap_or_default(),
                };
                self.end_object(what)?;
                self.types.insert(at, info.clone());
                Ok(info)
            }
            t => Err(format!(
                "{what}: expected a type at byte {at}, found tag {t}"
            )),
        }
    }

    /// Skips tagged fields up to the object's unmatched `EndObject` tag
    /// (as `FindEndTag`).
    pub fn end_object(&mut self, what: &str) -> Result<()> {
        let mut nesting = 0usize;
        loop {
            let at = self.pos;
            match self.u8(what)? {
                tag::BYTE => _ = self.take(1, what)?,
                tag::INT16 => _ = self.take(2, what)?,
                tag::INT32 => _ = self.take(4, what)?,
                tag::INT64 => _ = self.take(8, what)?,
                tag::STRING => _ = self.string(what)?,
                tag::NULL_REFERENCE => {}
                tag::BEGIN_OBJECT | tag::BEGIN_PRIVATE_OBJECT => nesting += 1,
                tag::FORWARD_DEFINITION | tag::FORWARD_REFERENCE | tag::OBJECT_REFERENCE => {
                    _ = self.take(4, what)?
                }
                tag::SKIP_REGION => {
                    let r = self.i32(what)?;
                    self.pos = self.forward_reference(r)?;
                }
                tag::BLOB => {
                    let n = self.count(what)?;
                    self.take(n, what)?;
                }
                tag::END_OBJECT => match nesting.checked_sub(1) {
                    Some(n) => nesting = n,
                    None => return Ok(()),
                },
                t => {
                    return Err(format!(
                        "{what}: unknown tag {t} at byte {at} while looking for the object's end"
                    ))
                }
            }
        }
    }

    /// Where forward reference `r` points: the trailer (the stream's last 4
    /// bytes) gives the table's position; the table is a count and labels.
    pub fn forward_reference(&self, r: i32) -> Result<usize> {
        let bad = |why: &str| format!("forward reference {r}: {why}");
        let b = self.bytes;
        let at = |p: usize| -> Result<usize> {
            b.get(p..p + 4)
                .map(|s| u32::from_le_bytes(s.try_into().unwrap()) as usize)
                .ok_or_else(|| bad("the table lies outside the file"))
        };
        let trailer = at(b.len().checked_sub(4).ok_or_else(|| bad("no trailer"))?)?;
        let table = at(trailer)?;
        let count = at(table)?;
        let i = usize::try_from(r).map_err(|_| bad("negative"))?;
        if i >= count {
            return Err(bad("not in the table"));
        }
        let target = at(table + 4 + 4 * i)?;
        if target > b.len() {
            return Err(bad("points past the end"));
        }
        Ok(target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_utf16_units_in_utf8_like_bytes() {
        // "é" (2 bytes), "€" (3 bytes), a surrogate pair as two 3-byte units.
        let mut b = 4i32.to_le_bytes().to_vec();
        b.extend_from_slice(&[
            0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80,
        ]);
        b.extend_from_slice(&(-1i32).to_le_bytes());
        let mut r = Reader::new(&b);
        assert_eq!(r.string("s").unwrap().as_deref(), Some("é€😀"));
        assert_eq!(r.string("s").unwrap(), None);
        assert!(r.string("s").unwrap_err().contains("ends inside s"));
    }

    #[test]
    fn absurd_string_lengths_are_errors_not_allocations() {
        let b = i32::MAX.to_le_bytes();
        assert!(Reader::new(&b)
            .string("name")
            .unwrap_err()
            .contains("runs past the end"));
    }
}
