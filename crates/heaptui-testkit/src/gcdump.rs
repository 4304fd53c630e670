//! A writer of the gcdump layout that `graph` reads: a FastSerialization
//! stream holding a `GCHeapDump` (format version 10) whose `MemoryGraph` has
//! the given types and nodes. The tests' round trips, bad-input cases and
//! `examples/to_gcdump.rs` (which writes any heap as a large gcdump for
//! timing the importer) use it; heaptui itself never writes a dump.

/// Writes `v` as `Node.WriteCompressedInt` does (the compressed int the importer reads).
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

/// Builds the node blob one node at a time, in node order.
#[doc(hidden)]
#[derive(Debug)]
pub struct Writer {
    /// Per type: name and size (a node of that size stores none).
    types: Vec<(String, i32)>,
    blob: Vec<u8>,
    table: Vec<u32>,
    total: i64,
}

impl Writer {
    /// `types[0]` should be PerfView's `UNDEFINED` of size 0: nodes never
    /// defined point at a record of that type.
    pub fn new(types: Vec<(String, i32)>) -> Self {
        let mut blob = Vec::new();
        write_compressed(&mut blob, 0); // type 0, the type's size
        write_compressed(&mut blob, 0); // no children
        Writer {
            types,
            blob,
            table: Vec::new(),
            total: 0,
        }
    }

    /// The node blob and its table so far (tests find them in the file).
    pub fn parts(&self) -> (&[u8], &[u32]) {
        (&self.blob, &self.table)
    }

    /// The next node, created but never defined.
    pub fn undefined(&mut self) {
        self.table.push(0);
    }

    /// The next node: its type, size and children (node indices).
    pub fn node(&mut self, ty: u32, size: i32, children: impl ExactSizeIterator<Item = u32>) {
        let i = self.table.len() as i64;
        let at = u32::try_from(self.blob.len()).expect("a node blob under 4 GiB");
        self.table.push(at);
        self.total += size as i64;
        if self.types.get(ty as usize).map(|t| t.1) == Some(size) {
            write_compressed(&mut self.blob, (ty as i32) << 1);
        } else {
            write_compressed(&mut self.blob, (ty as i32) << 1 | 1);
            write_compressed(&mut self.blob, size);
        }
        write_compressed(&mut self.blob, children.len() as i32);
        for c in children {
            write_compressed(&mut self.blob, (c as i64 - i) as i32);
        }
    }

    /// The whole file, with `root` as the graph's root node and the dump's
    /// (count, size) sampling multipliers.
    pub fn finish(self, root: u32, multipliers: (f32, f32)) -> Vec<u8> {
        let len = |n: usize| i32::try_from(n).expect("a count under 2^31");
        let mut out = 20i32.to_le_bytes().to_vec();
        out.extend_from_slice(b"!FastSerialization.1");
        out.push(4); // BeginObject: the entry object
        type_object(&mut out, "GCHeapDump", 10, 8);
        out.push(4); // BeginObject: its first field, the graph
        type_object(&mut out, "Graphs.MemoryGraph", 1, 0);
        out.reserve(self.blob.len() + 12 * self.table.len() + 64);
        out.extend_from_slice(&self.total.to_le_bytes());
        out.extend_from_slice(&(root as i32).to_le_bytes());
        out.extend_from_slice(&len(self.types.len()).to_le_bytes());
        for (name, size) in &self.types {
            string(&mut out, name);
            out.extend_from_slice(&size.to_le_bytes());
            out.extend_from_slice(&(-1i32).to_le_bytes()); // no module name
        }
        out.extend_from_slice(&len(self.table.len()).to_le_bytes());
        for l in &self.table {
            out.extend_from_slice(&l.to_le_bytes());
        }
        out.extend_from_slice(&len(self.blob.len()).to_le_bytes());
        out.extend_from_slice(&self.blob);
        out.extend_from_slice(&len(self.table.len()).to_le_bytes());
        for i in 0..self.table.len() as i64 {
            out.extend_from_slice(&(0x1000 + 16 * i).to_le_bytes());
        }
        out.extend_from_slice(&[8, 1, 6]); // tagged Is64Bit, EndObject of the graph
        out.push(1); // the old Is64Bit bool
        out.extend_from_slice(&multipliers.0.to_le_bytes());
        out.extend_from_slice(&multipliers.1.to_le_bytes());
        out.extend_from_slice(&[1, 1, 6]); // null JSHeapInfo, DotNetHeapInfo; (cut short) end
        let table_at = out.len() as u32;
        out.extend_from_slice(&0i32.to_le_bytes()); // no forward references
        let trailer = out.len() as u32;
        out.extend_from_slice(&table_at.to_le_bytes());
        out.extend_from_slice(&trailer.to_le_bytes());
        out
    }
}

/// A FastSerialization string: its UTF-16 unit count, then each unit in
/// one to three bytes (`Reader::string` reads it back).
fn string(out: &mut Vec<u8>, s: &str) {
    let units: Vec<u16> = s.encode_utf16().collect();
    out.extend_from_slice(&(units.len() as i32).to_le_bytes());
    for u in units {
        match u {
            0..=0x7f => out.push(u as u8),
            0x80..=0x7ff => {
                out.extend_from_slice(&[0xc0 | (u >> 6) as u8, 0x80 | (u & 0x3f) as u8])
            }
            _ => out.extend_from_slice(&[
                0xe0 | (u >> 12) as u8,
                0x80 | ((u >> 6) & 0x3f) as u8,
                0x80 | (u & 0x3f) as u8,
            ]),
        }
    }
}

fn type_object(out: &mut Vec<u8>, name: &str, version: i32, min: i32) {
    out.extend_from_slice(&[4, 1]); // BeginObject, the type of types (null)
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&min.to_le_bytes());
    string(out, name);
    out.push(6); // EndObject
}
