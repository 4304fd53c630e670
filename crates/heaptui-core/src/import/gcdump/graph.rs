//! The `MemoryGraph` object of a gcdump: its fields as `Graph.ToStream` and
//! `MemoryGraph.ToStream` write them (microsoft/perfview
//! `src/MemoryGraph/graph.cs`, `src/MemoryGraph/MemoryGraph.cs`):
//!
//! - total size (i64), root node index (i32);
//! - types: count, then per type name (string), size (i32; a node whose size
//!   equals its type's stores none), module name (string);
//! - nodes: count, then per node the position of its record in the blob;
//! - the blob: byte count, then the node records: compressed
//!   `type << 1 | has_size`, [compressed size], compressed child count,
//!   each child as a compressed delta from the node's own index
//!   (`Node.WriteCompressedInt`: big-endian 7-bit groups, a high bit on all
//!   but the last, the first group sign-extended);
//! - a deferred region (only when the type's minimum reader version is ≥ 1:
//!   deferred type names, skipped here), then per node its address (i64),
//!   then tagged extras up to `EndObject` (`Is64Bit`).
//!
//! The arrays are not copied: node records are decoded from the file's
//! bytes in parallel blocks.

use std::ops::Range;

use super::stream::{tag, Reader, Result};

/// The graph's parts, as positions in the file.
#[derive(Debug)]
pub struct RawGraph {
    pub total_size: i64,
    pub root: i64,
    /// Per type: name and size.
    pub types: Vec<(String, i32)>,
    /// Node count × u32 blob positions.
    pub nodes: Range<usize>,
    pub blob: Range<usize>,
    pub is_64_bit: Option<bool>,
    pub addresses: u64,
}

impl RawGraph {
    pub fn node_count(&self) -> usize {
        self.nodes.len() / 4
    }

    /// Node `i`'s blob position.
    pub fn label(&self, bytes: &[u8], i: usize) -> usize {
        let p = self.nodes.start + 4 * i;
        u32::from_le_bytes(bytes[p..p + 4].try_into().unwrap()) as usize
    }
}

/// Reads the graph's fields; the reader stands after its type.
pub fn read(r: &mut Reader, min_reader_version: i32) -> Result<RawGraph> {
    let total_size = r.i64("the graph's total size")?;
    let root = r.i32("the root index")? as i64;
    let type_count = r.count("the type count")?;
    let mut types = Vec::with_capacity(type_count.min(r.bytes.len() / 9));
    for i in 0..type_count {
        let what = format!("type {i}");
        let name = r.string(&what)?.unwrap_or_default();
        let size = r.i32(&what)?;
        r.string(&what)?;
        types.push((name, size));
    }
    let node_count = r.count("the node count")?;
    let start = r.pos;
    r.take(
        node_count.checked_mul(4).ok_or("node count overflows")?,
        "the node table",
    )?;
    let nodes = start..r.pos;
    let blob_len = r.count("the node blob's size")?;
    let start = r.pos;
    r.take(blob_len, "the node blob")?;
    let blob = start..r.pos;
    if min_reader_version >= 1 {
        // Deferred type names (.NET Native): skipped, names stay as stored.
        let end = r.i32("the deferred region")?;
        r.pos = r.forward_reference(end)?;
    }
    let addresses = r.count("the address count")?;
    r.take(
        addresses.checked_mul(8).ok_or("address count overflows")?,
        "the node addresses",
    )?;
    let is_64_bit = match r.bytes.get(r.pos) {
        Some(&tag::BYTE) => {
            r.pos += 1;
            Some(r.u8("Is64Bit")? != 0)
        }
        _ => None,
    };
    r.end_object("the graph")?;
    Ok(RawGraph {
        total_size,
        root,
        types,
        nodes,
        blob,
        is_64_bit,
        addresses: addresses as u64,
    })
}

/// Reads a compressed int at `*pos` of `blob` (`Node.ReadCompressedInt`).
/// Where five bytes remain (all but the blob's last few), one bounds check
/// covers the longest form. (Gathering the 7-bit groups by masks instead of
/// this loop was no faster: the next int's position waits on the length,
/// which the loop's branch predicts.)
#[inline]
pub fn compressed(blob: &[u8], pos: &mut usize) -> Option<i32> {
    let Some(w) = blob.get(*pos..*pos + 5) else {
        return compressed_near_end(blob, pos);
    };
    let mut v = ((w[0] as i32) << 25) >> 25;
    let mut k = 1;
    while k < 5 && w[k - 1] & 0x80 != 0 {
        let bits = if k == 4 {
            w[4] as i32
        } else {
            (w[k] & 0x7f) as i32
        };
        v = v.wrapping_shl(7).wrapping_add(bits);
        k += 1;
    }
    *pos += k;
    Some(v)
}

/// [`compressed`] byte by byte, where the blob may end inside the int.
fn compressed_near_end(blob: &[u8], pos: &mut usize) -> Option<i32> {
    let mut b = *blob.get(*pos)?;
    *pos += 1;
    let mut v = ((b as i32) << 25) >> 25;
    for i in 0..4 {
        if b & 0x80 == 0 {
            return Some(v);
        }
        b = *blob.get(*pos)?;
        *pos += 1;
        let bits = if i == 3 { b as i32 } else { (b & 0x7f) as i32 };
        v = v.wrapping_shl(7).wrapping_add(bits);
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `v` as `Node.WriteCompressedInt` does: the round trip's other
    /// half (the fixtures' writer is heaptui-testkit's).
    fn write_compressed(out: &mut Vec<u8>, v: i32) {
        let groups = if (v << 25) >> 25 == v {
            1
        } else if (v << 18) >> 18 == v {
            2
        } else if (v << 11) >> 11 == v {
            3
        } else if (v << 4) >> 4 == v {
            4
        } else {
            5
        };
        for g in (1..groups).rev() {
            out.push(((v >> (7 * g)) as u8 & 0x7f) | 0x80);
        }
        out.push(v as u8 & 0x7f);
    }

    #[test]
    fn compressed_ints_round_trip() {
        for v in [
            0,
            1,
            -1,
            63,
            64,
            -64,
            -65,
            8191,
            8192,
            -8192,
            1 << 20,
            -(1 << 27),
            i32::MAX,
            i32::MIN,
            123_456_789,
        ] {
            let mut b = Vec::new();
            write_compressed(&mut b, v);
            let mut pos = 0;
            assert_eq!(compressed(&b, &mut pos), Some(v), "{v}: {b:x?}");
            assert_eq!(pos, b.len());
            // With bytes after it, the five-byte read gives the same.
            let tail = [b.clone(), vec![0x80; 5]].concat();
            let mut pos = 0;
            assert_eq!(compressed(&tail, &mut pos), Some(v), "{v}: {b:x?}");
            assert_eq!(pos, b.len());
            let mut pos = 0;
            assert_eq!(compressed_near_end(&b, &mut pos), Some(v));
            let mut padded = b.clone();
            padded.resize(5, 0);
            let mut pos = 0;
            assert_eq!(compressed(&padded, &mut pos), Some(v), "{v}: {b:x?}");
            assert_eq!(pos, b.len());
        }
        assert_eq!(compressed(&[0x81], &mut 0), None);
    }

    /// The five-byte read agrees with the byte-by-byte one on any bytes.
    #[test]
    fn the_fast_read_agrees_with_the_plain_one() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            // High bits set more often than not, for long ints.
            let mut bytes = (seed | (seed >> 3 & 0x8080_8080_8080_8080)).to_le_bytes();
            bytes[7] = (seed >> 59) as u8;
            let (mut a, mut b) = (0, 0);
            assert_eq!(
                compressed(&bytes, &mut a),
                compressed_near_end(&bytes, &mut b),
                "{bytes:x?}"
            );
            assert_eq!(a, b, "{bytes:x?}");
        }
    }
}
