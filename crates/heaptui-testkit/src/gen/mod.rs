//! A generator of large, realistic heap dumps in the RPM text format, for
//! benchmarks, demos and tests. Deterministic for a given seed. The shapes
//! are those of a managed application's heap: strings and char arrays,
//! lists over object arrays, dictionaries with bucket and entry arrays,
//! caches holding duplicate object graphs (duplicate lists of duplicate
//! arrays of duplicate strings), shared singletons, circular linked lists,
//! trees with parent back-references (cyclic duplicates), statics, locals,
//! a finalizer queue, weak and pinned handles, unreachable garbage, and two
//! AppDomains that reuse type ids for different types.

use std::io::{self, Write};

pub(crate) use crate::rng::SplitMix64 as Rng;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenOptions {
    /// Approximate number of objects (the result is within a few percent).
    pub objects: u64,
    pub seed: u64,
}

/// What was written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GenStats {
    pub objects: u64,
    pub references: u64,
    pub roots: u64,
    pub bytes: u64,
}

// Type ids of the main AppDomain.

mod shapes;

pub use shapes::Snapshot;
use shapes::*;

/// A fast writer of `o`/`r` lines: hex formatting without `fmt`.
struct Lines<W: Write> {
    out: W,
    buf: Vec<u8>,
    written: u64,
}

impl<W: Write> Lines<W> {
    fn hex(&mut self, mut v: u64) {
        let mut tmp = [0u8; 16];
        let mut i = tmp.len();
        loop {
            i -= 1;
            tmp[i] = b"0123456789abcdef"[(v & 15) as usize];
            v >>= 4;
            if v == 0 {
                break;
            }
        }
        self.buf.extend_from_slice(&tmp[i..]);
    }

    fn text(&mut self, s: &str) {
        self.buf.extend_from_slice(s.as_bytes());
    }

    fn flush_if_full(&mut self) -> io::Result<()> {
        if self.buf.len() >= 1 << 20 {
            self.out.write_all(&self.buf)?;
            self.written += self.buf.len() as u64;
            self.buf.clear();
        }
        Ok(())
    }
}

/// Writes one section. Object ids are address-like: objects are laid out by
/// size from `base`; the file lists them in blocks visited out of order, so
/// references point both forwards and backwards in the file.
fn write_section<W: Write>(
    w: &mut Lines<W>,
    h: &Heap,
    names: &[&str],
    domain: (&str, &str),
    base: u64,
    rng: &mut Rng,
    gaps: bool,
) -> io::Result<(u64, u64)> {
    let (ids, addr) = object_ids(h, base, rng, gaps);
    w.text("a 1 ");
    w.text(domain.0);
    w.text(" ");
    w.text(domain.1);
    w.text("\n");
    // Most types up front; the last few only after the objects that use them
    // (forward references to types are legal).
    let late = names.len() * 9 / 10;
    write_types(w, names, 0..late);
    let order = block_order(h.types.len().div_ceil(OBJECT_BLOCK), rng);
    let refs = write_objects(w, h, &ids, order)?;
    write_types(w, names, late..names.len());
    write_roots(w, h, &ids)?;
    w.text("c ");
    w.text(domain.0);
    w.text("\n");
    Ok((refs, addr))
}

/// Objects a section lists together.
const OBJECT_BLOCK: usize = 4096;

/// Each object's id, laid out by size from `base`, and the address after
/// the last.
fn object_ids(h: &Heap, base: u64, rng: &mut Rng, gaps: bool) -> (Vec<u64>, u64) {
    let mut ids = Vec::with_capacity(h.types.len());
    let mut addr = base;
    for &s in &h.sizes {
        ids.push(addr);
        addr += (s as u64 + 7) & !7;
        // Free space a compaction has not squeezed out yet, different in
        // every snapshot of a series: ids move.
        if gaps && rng.chance(10) {
            addr += 8 * (1 + rng.below(32));
        }
    }
    (ids, addr)
}

/// The type records of `names[range]`.
fn write_types<W: Write>(w: &mut Lines<W>, names: &[&str], range: std::ops::Range<usize>) {
    for (i, name) in names.iter().enumerate().take(range.end).skip(range.start) {
        w.text("t ");
        w.hex(i as u64 + 1);
        w.text(" ");
        w.text(name);
        w.text("\n");
    }
}

/// The order the blocks of objects are listed in: ascending, with about
/// one in thirty swapped somewhere earlier.
fn block_order(blocks: usize, rng: &mut Rng) -> Vec<usize> {
    let mut order: Vec<usize> = (0..blocks).collect();
    for i in (1..order.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        if rng.chance(30) {
            order.swap(i, j);
        }
    }
    order
}

/// The object records, block by block in `order`; the references written.
fn write_objects<W: Write>(
    w: &mut Lines<W>,
    h: &Heap,
    ids: &[u64],
    order: Vec<usize>,
) -> io::Result<u64> {
    let n = h.types.len();
    let mut refs = 0u64;
    for b in order {
        for o in b * OBJECT_BLOCK..((b + 1) * OBJECT_BLOCK).min(n) {
            w.text("o ");
            w.hex(ids[o]);
            w.text(" ");
            w.hex(h.types[o] as u64 + 1);
            w.text(" ");
            w.hex(h.sizes[o] as u64);
            let (start, len) = h.spans[o];
            for &t in &h.edges[start as usize..(start + len) as usize] {
                w.text(" ");
                w.hex(ids[t as usize]);
            }
            refs += len as u64;
            w.text("\n");
            w.flush_if_full()?;
        }
    }
    Ok(refs)
}

/// The root records.
fn write_roots<W: Write>(w: &mut Lines<W>, h: &Heap, ids: &[u64]) -> io::Result<()> {
    for &(o, kind, flags, container) in &h.roots {
        w.text("r ");
        w.hex(ids[o as usize]);
        w.text(" ");
        w.hex(kind as u64);
        w.text(" ");
        w.hex(flags as u64);
        if let Some(c) = container {
            w.text(" ");
            w.hex(c as u64 + 1);
        }
        w.text("\n");
        w.flush_if_full()?;
    }
    Ok(())
}

/// Writes a generated dump to `out`.
pub fn generate(options: &GenOptions, out: impl Write) -> io::Result<GenStats> {
    generate_inner(options, None, out)
}

/// Writes snapshot `snapshot.index` of a series of dumps of one program
/// (see [`Snapshot`]) to `out`.
pub fn generate_snapshot(
    options: &GenOptions,
    snapshot: &Snapshot,
    out: impl Write,
) -> io::Result<GenStats> {
    generate_inner(options, Some(snapshot), out)
}

fn generate_inner(
    options: &GenOptions,
    snapshot: Option<&Snapshot>,
    out: impl Write,
) -> io::Result<GenStats> {
    let mut rng = Rng(options.seed ^ 0x0068_6561_7074_7569);
    let plugin_target = (options.objects / 50).max(8);
    let main_target = options.objects.saturating_sub(plugin_target).max(16);
    let mut main = build_main(&mut rng, main_target);
    let mut names: Vec<&str> = TYPE_NAMES.to_vec();
    // In a series the layout draws from its own generator, so that the
    // stable part (and the plugin heap built after it) is the same heap in
    // every snapshot, only laid out elsewhere.
    let mut layout = snapshot.map(|s| {
        add_leaks(&mut main, s);
        names.extend(SERIES_NAMES);
        Rng(options.seed ^ (s.index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
    });
    let base = 0x7f3a_1c00_0000 + snapshot.map_or(0, |s| s.index as u64 * 0x40_0000);
    let mut w = Lines {
        out,
        buf: Vec::with_capacity(2 << 20),
        written: 0,
    };
    let gaps = layout.is_some();
    let (refs_a, end) = write_section(
        &mut w,
        &main,
        &names,
        ("MyApp.exe", "6555d2c1"),
        base,
        layout.as_mut().unwrap_or(&mut rng),
        gaps,
    )?;
    let (objects_a, roots_a) = (main.types.len() as u64, main.roots.len() as u64);
    drop(main);
    let plugin = build_plugin(&mut rng, plugin_target);
    let (refs_b, _) = write_section(
        &mut w,
        &plugin,
        &PLUGIN_NAMES,
        ("Plugin.Domain", "6555d2c2"),
        (end + 0xffff) & !0xffff,
        layout.as_mut().unwrap_or(&mut rng),
        gaps,
    )?;
    w.out.write_all(&w.buf)?;
    w.written += w.buf.len() as u64;
    w.out.flush()?;
    Ok(GenStats {
        objects: objects_a + plugin.types.len() as u64,
        references: refs_a + refs_b,
        roots: roots_a + plugin.roots.len() as u64,
        bytes: w.written,
    })
}

/// One snapshot of a series as bytes (small heaps: tests).
pub fn generate_snapshot_bytes(options: &GenOptions, snapshot: &Snapshot) -> Vec<u8> {
    let mut v = Vec::new();
    generate_snapshot(options, snapshot, &mut v).expect("writing to a Vec cannot fail");
    v
}

/// A generated dump as bytes (small heaps: tests and benchmarks).
pub fn generate_bytes(options: &GenOptions) -> Vec<u8> {
    let mut v = Vec::new();
    generate(options, &mut v).expect("writing to a Vec cannot fail");
    v
}
