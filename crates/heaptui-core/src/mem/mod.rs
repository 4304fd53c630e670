//! Large arrays for random access. The analyses touch arrays of tens of
//! megabytes at random (id lookups, dominator links); with 4 KiB pages
//! nearly every access misses the TLB. Asking the kernel for transparent
//! huge pages before the first touch removes most of those misses.
//!
//! One of the two modules where `unsafe` is allowed (the crate root denies
//! it elsewhere; the other is `import::v8::simd`, for its AVX2 number
//! parsing): huge-page advice, atomic views, prefetch hints, and in [`map`]
//! file maps. Each use says why it is sound.

mod array;
pub mod bits;
pub mod budget;
pub(crate) mod guard;
mod idset;
pub(crate) mod map;
pub mod nodes;
mod packed;
mod ranked;
pub(crate) mod scratch;
pub mod spill;
pub(crate) mod watch;
pub mod words;

pub use array::Array;
pub use bits::{BitIter, BitRow, Bits, BitsMut};
/// The SIGBUS guard's terminal side, for the UI (which takes the terminal).
pub use guard::{
    restore_terminal_mode, save_terminal_mode, save_terminal_mode_of, TERMINAL_IN_USE,
};
pub use idset::IdSet;
pub use nodes::{NodeIter, Nodes, Slots};
pub(crate) use packed::paired;
pub use packed::{Escapes, Packed};
pub use ranked::RankedBits;
pub use scratch::Scratch;
pub use watch::{busy, pace, Busy};
pub use words::Words;

/// A vector of `len` copies of `value`, backed by huge pages where the
/// kernel allows it.
pub(crate) fn filled<T: Copy>(len: usize, value: T) -> Vec<T> {
    let mut v = with_capacity(len);
    v.resize(len, value);
    v
}

/// An empty vector with room for `capacity` elements, backed by huge pages
/// where the kernel allows it. Advice only: never fails.
pub(crate) fn with_capacity<T>(capacity: usize) -> Vec<T> {
    let v: Vec<T> = Vec::with_capacity(capacity);
    advise_huge_pages(&v);
    v
}

/// Asks for huge pages under a vector's allocation (before it is touched).
#[allow(clippy::ptr_arg)] // the capacity, not the length, is advised
fn advise_huge_pages<T>(v: &Vec<T>) {
    let bytes = v.capacity() * std::mem::size_of::<T>();
    if bytes >= 4 << 20 && std::env::var_os("HEAPTUI_NO_HUGEPAGES").is_none() {
        let start = v.as_ptr() as usize;
        let page = 4096;
        let begin = start.div_ceil(page) * page;
        let end = (start + bytes) / page * page;
        if end > begin {
            // SAFETY: advice on memory this vector owns; it changes no data.
            unsafe {
                libc::madvise(begin as *mut libc::c_void, end - begin, libc::MADV_HUGEPAGE);
            }
        }
    }
}

/// Hands the whole pages of `v` from its byte `from` on back to the
/// kernel: they read as zeros afterwards. For an array narrowed in place,
/// whose tail is written again before it is read: no reallocation (which
/// may copy, the old and new blocks resident at once) to shrink and grow it.
pub(crate) fn release_tail<T: bytemuck::Pod>(v: &mut [T], from: usize) {
    let start = v.as_mut_ptr() as usize;
    let page = 4096;
    let begin = (start + from).div_ceil(page) * page;
    let end = (start + std::mem::size_of_val(v)) / page * page;
    if end > begin {
        // SAFETY: the range lies within `v`, borrowed mutably here. On
        // private anonymous memory the pages are replaced by zero-filled
        // ones on the next touch, and zeros are a valid `T` (`Pod`).
        unsafe {
            libc::madvise(begin as *mut libc::c_void, end - begin, libc::MADV_DONTNEED);
        }
    }
}

/// A vector of `len` zeroed elements, backed by huge pages where the
/// kernel allows it. Large blocks come zeroed from the kernel untouched
/// (calloc maps fresh pages), so this costs no more than an uninitialised
/// vector and needs no `unsafe` in the code that fills it.
pub(crate) fn zeroed<T: bytemuck::Zeroable>(len: usize) -> Vec<T> {
    let v: Vec<T> = bytemuck::zeroed_vec(len);
    advise_huge_pages(&v);
    v
}

/// For the blocks of `block` consecutive indices of `0..len` (the last one
/// shorter), the sum of `value` over the indices before each block, and
/// the sum over all: each block's total in parallel, then running totals.
pub(crate) fn block_starts(
    len: usize,
    block: usize,
    value: &(impl Fn(usize) -> u64 + Sync),
) -> (Vec<u64>, u64) {
    use rayon::prelude::*;
    let mut starts: Vec<u64> = (0..len.div_ceil(block))
        .into_par_iter()
        .map(|b| (b * block..((b + 1) * block).min(len)).map(value).sum())
        .collect();
    let mut before = 0u64;
    for s in starts.iter_mut() {
        (*s, before) = (before, before + *s);
    }
    (starts, before)
}

/// The `len + 1` running totals of `value(0..len)` (starting at 0), summed
/// in parallel blocks: each block's total, then each block's entries from
/// the totals of the blocks before it.
pub(crate) fn prefix_sums(len: usize, value: impl Fn(usize) -> u64 + Sync) -> Vec<u64> {
    use rayon::prelude::*;
    const BLOCK: usize = 1 << 16;
    let block = |b: usize| b * BLOCK..((b + 1) * BLOCK).min(len);
    let (starts, _) = block_starts(len, BLOCK, &value);
    let mut out: Vec<u64> = zeroed(len + 1);
    out[1..]
        .par_chunks_mut(BLOCK)
        .zip(starts)
        .enumerate()
        .for_each(|(b, (out, mut acc))| {
            for (slot, i) in out.iter_mut().zip(block(b)) {
                acc += value(i);
                *slot = acc;
            }
        });
    out
}

/// Cuts `v` into consecutive parts of the given lengths (which must not
/// add up to more than its length).
pub(crate) fn split_by<T>(mut v: &mut [T], lens: impl IntoIterator<Item = usize>) -> Vec<&mut [T]> {
    let mut parts = Vec::new();
    for len in lens {
        let (head, tail) = std::mem::take(&mut v).split_at_mut(len);
        parts.push(head);
        v = tail;
    }
    parts
}

/// Keeps the allocator's memory independent of the thread count and of
/// what the stages before freed; called once at start-up, before any
/// thread exists.
///
/// glibc gives threads that meet on a locked arena new arenas, up to eight
/// per core, and each arena keeps the blocks freed in it for the threads
/// that use it: on the 10M heap peak RSS went from 1189 MiB with one
/// thread to 1339 MiB with sixteen. At most four arenas bound that
/// whatever the thread count (1243 MiB with sixteen threads; two threads
/// and the main one never need more).
///
/// Blocks of 128 KiB or more are mapped on their own and unmapped when
/// freed (a fixed mmap threshold): glibc's default raises the threshold
/// to each mapped block freed, up to 32 MiB, after which the stages'
/// scratch of up to 32 MiB (the retainers' packed pieces, the dominators'
/// and duplicates' per-thread buffers) came from the arenas and stayed
/// there once freed, in pieces later stages could not reuse: 100–150 MiB
/// resident and free at the HPROF's and V8 snapshot's peaks
/// (docs/performance.md, "What is resident besides the arrays"). An
/// earlier build measured 5 % more time for this on the text heap; the
/// build of 2026-11-27 measured no difference beyond the noise. Limits the
/// user set (`MALLOC_ARENA_MAX`, `MALLOC_MMAP_THRESHOLD_`) are left alone.
pub fn bound_allocator_retention() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let unset = |name: &str| std::env::var_os(name).is_none();
        // SAFETY: mallopt only changes the allocator's policy for later
        // allocations; no live allocation changes.
        unsafe {
            if unset("MALLOC_ARENA_MAX") {
                libc::mallopt(libc::M_ARENA_MAX, 4);
            }
            if unset("MALLOC_MMAP_THRESHOLD_") {
                libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
            }
        }
    }
}

/// The size from which the allocator maps a block on its own (see
/// [`bound_allocator_retention`]): glibc's initial threshold, kept.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: libc::c_int = 128 << 10;

/// Gives the allocator's free memory back to the kernel. glibc keeps what
/// worker threads free in their own arenas, where only those threads reuse
/// it: after a parallel phase with per-thread scratch the resident set would
/// keep every thread's high-water mark, and grow with the thread count.
pub(crate) fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only hands free pages of the allocator back to the
    // kernel; no live allocation changes.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The process's resident set and its peak so far (`VmRSS`, `VmHWM` of
/// `/proc/self/status`), in bytes; `None` where the kernel has no such
/// file. One small read: for the memory account's checkpoints, which run
/// only when the log is on.
pub(crate) fn resident() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    Some((
        status_field(&status, "VmRSS:")?,
        status_field(&status, "VmHWM:")?,
    ))
}

/// A `NAME: N kB` line of a `/proc` status text, in bytes.
pub(crate) fn status_field(status: &str, name: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line[name.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// The end of `phase`: the pages of spilled arrays it read leave the
/// resident set ([`spill::release_all`]), and, when the log is on, the
/// resident set and its peak so far are logged (target `heaptui::memory`):
/// where the peak rises between two checkpoints is the phase that set it
/// (each checkpoint's own with `HEAPTUI_STAGE_PEAKS`: [`stage_peaks`]).
pub(crate) fn checkpoint(phase: &str) {
    spill::release_all();
    if !tracing::enabled!(target: "heaptui::memory", tracing::Level::DEBUG) {
        return;
    }
    if let Some((rss, peak)) = resident() {
        let file = watch::resident_file().unwrap_or(0);
        let heap = match allocated() {
            Some((used, free)) => format!(
                ", allocated {} MiB (the allocator holds {} MiB free)",
                used >> 20,
                free >> 20
            ),
            None => String::new(),
        };
        tracing::debug!(target: "heaptui::memory",
            "{phase}: rss {} MiB ({} MiB of file pages), peak {} MiB, {} releases, not spilled at most {} MiB{heap}",
            rss >> 20, file >> 20, peak >> 20, watch::releases(), watch::take_anon_peak() >> 20);
    }
    if stage_peaks() {
        // "5" resets the high-water mark to the resident set (proc(5)).
        let _ = std::fs::write("/proc/self/clear_refs", "5");
    }
}

/// Whether `HEAPTUI_STAGE_PEAKS` is set (read once): each logged
/// checkpoint then resets the kernel's high-water mark, so that each
/// line's peak is its own stage's, not the run's so far (a diagnostic: the
/// peak `time` reports is then the last stage's).
fn stage_peaks() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("HEAPTUI_STAGE_PEAKS").is_some())
}

/// Logs (target `heaptui::memory`, when on) the arrays of a phase alive
/// at its highest point, then [`checkpoint`]s it: where a phase's peak is
/// and what makes it.
pub(crate) fn alive(phase: &str, arrays: &[(&str, usize)]) {
    arrays_alive(phase, arrays);
    checkpoint(phase);
}

/// Logs (target `heaptui::memory`, when on) the arrays of a step alive at
/// its highest point, by name with their bytes: where a phase's peak is
/// and what makes it, beside the checkpoints' resident set.
pub(crate) fn arrays_alive(step: &str, arrays: &[(&str, usize)]) {
    if !tracing::enabled!(target: "heaptui::memory", tracing::Level::DEBUG) {
        return;
    }
    let total: usize = arrays.iter().map(|a| a.1).sum();
    let each: Vec<String> = arrays
        .iter()
        .map(|(name, b)| format!("{name} {}", b >> 20))
        .collect();
    tracing::debug!(target: "heaptui::memory",
        "{step}: arrays alive {} MiB ({})", total >> 20, each.join(", "));
}

/// The bytes the program has allocated and not freed, and the bytes the
/// allocator holds free (some of them resident), from glibc's
/// `mallinfo2` (every arena, the mapped blocks included); `None` with
/// another allocator. The resident set less the first is what lies
/// outside the heap's live blocks: file pages, free blocks, the binary.
/// Walks the allocator's free lists: for the checkpoints' log only.
pub(crate) fn allocated() -> Option<(u64, u64)> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallinfo2 reads the allocator's statistics under its
        // locks; it changes nothing.
        let m = unsafe { libc::mallinfo2() };
        Some(((m.uordblks + m.hblkhd) as u64, m.fordblks as u64))
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    None
}

/// Inverts a permutation by a parallel scatter: `out[perm[i]] = i` for
/// every `i` where `perm[i]` is not `none` (the values are distinct and
/// below `out.len()`); the other entries of `out` keep what they held,
/// the caller's fill. In blocks of [`INVERT_BLOCK`] entries over the
/// threads; each step asks the CPU for the slot [`INVERT_AHEAD`] entries
/// on (the slots come at random). The dominators' vertices and preorder,
/// and the preorder numbers made again after the set-aside, are these.
pub fn invert(perm: &(impl Permutation + ?Sized), none: u32, out: &mut [u32]) {
    invert_into(perm, none, as_atomic(out));
}

/// [`invert`] into any [`InvertTarget`] (a packed [`Nodes`] being written:
/// [`nodes::Slots`]).
pub fn invert_into(
    perm: &(impl Permutation + ?Sized),
    none: u32,
    out: &(impl InvertTarget + ?Sized),
) {
    use rayon::prelude::*;
    let len = perm.values();
    (0..len.div_ceil(INVERT_BLOCK))
        .into_par_iter()
        .for_each(|b| {
            let first = b * INVERT_BLOCK;
            let part = perm.run(first..(first + INVERT_BLOCK).min(len));
            for (i, k) in (first..).zip(part) {
                if let Some(ahead) = perm.at(i + INVERT_AHEAD) {
                    // `none` (or past the end) asks for nothing.
                    out.prefetch(ahead as usize);
                }
                if k != none {
                    out.store(k as usize, i as u32);
                }
            }
        });
}

/// Where [`invert_into`] writes: slots written at random from many
/// threads, each once.
pub trait InvertTarget: Sync {
    /// Slot `k` takes `value`.
    fn store(&self, k: usize, value: u32);
    /// Hints the CPU to fetch slot `k` (none past the end).
    fn prefetch(&self, k: usize);
}

impl InvertTarget for [std::sync::atomic::AtomicU32] {
    #[inline]
    fn store(&self, k: usize, value: u32) {
        self[k].store(value, std::sync::atomic::Ordering::Relaxed);
    }
    #[inline]
    fn prefetch(&self, k: usize) {
        if let Some(slot) = self.get(k) {
            prefetch(slot);
        }
    }
}

impl InvertTarget for nodes::Slots<'_> {
    #[inline]
    fn store(&self, k: usize, value: u32) {
        self.set(k, value);
    }
    #[inline]
    fn prefetch(&self, k: usize) {
        nodes::Slots::prefetch(self, k);
    }
}

/// `f(k, places[k])` for every `k` of `places` (`u32`s, or packed
/// [`Nodes`]), in parallel over blocks of 2^16 places, each block's read
/// in order (a run decodes sequentially).
pub fn each_place(places: &(impl Permutation + ?Sized), f: impl Fn(usize, usize) + Sync) {
    use rayon::prelude::*;
    const BLOCK: usize = 1 << 16;
    let len = places.values();
    (0..len.div_ceil(BLOCK)).into_par_iter().for_each(|b| {
        let first = b * BLOCK;
        for (k, p) in (first..).zip(places.run(first..(first + BLOCK).min(len))) {
            f(k, p as usize);
        }
    });
}

/// What [`invert`] reads: `u32`s in a slice, or packed [`Nodes`].
pub trait Permutation: Sync {
    /// How many values.
    fn values(&self) -> usize;
    /// Value `i`, or `None` past the end.
    fn at(&self, i: usize) -> Option<u32>;
    /// Values `range`, in order.
    fn run(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = u32>;
}

impl Permutation for [u32] {
    fn values(&self) -> usize {
        <[u32]>::len(self)
    }
    #[inline]
    fn at(&self, i: usize) -> Option<u32> {
        self.get(i).copied()
    }
    fn run(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = u32> {
        self[range].iter().copied()
    }
}

impl Permutation for Nodes {
    fn values(&self) -> usize {
        Nodes::len(self)
    }
    #[inline]
    fn at(&self, i: usize) -> Option<u32> {
        self.get_checked(i)
    }
    fn run(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = u32> {
        self.range(range)
    }
}

/// Entries of the permutation per parallel job of [`invert`].
const INVERT_BLOCK: usize = 1 << 14;

/// How many entries ahead of the one it stores [`invert`] prefetches.
const INVERT_AHEAD: usize = 16;

/// Views a slice of u32 as atomics, for parallel counting and scattering.
pub(crate) fn as_atomic(v: &mut [u32]) -> &[std::sync::atomic::AtomicU32] {
    // SAFETY: AtomicU32 has the same size and alignment as u32, and the
    // exclusive borrow guarantees no plain access while the view lives.
    unsafe { &*(v as *mut [u32] as *const [std::sync::atomic::AtomicU32]) }
}

/// Views a slice of u8 as atomics, for parallel scattering.
pub(crate) fn as_atomic_u8(v: &mut [u8]) -> &[std::sync::atomic::AtomicU8] {
    // SAFETY: AtomicU8 has the same size and alignment as u8, and the
    // exclusive borrow guarantees no plain access while the view lives.
    unsafe { &*(v as *mut [u8] as *const [std::sync::atomic::AtomicU8]) }
}

/// Views a slice of u16 as atomics, for parallel scattering.
pub(crate) fn as_atomic_u16(v: &mut [u16]) -> &[std::sync::atomic::AtomicU16] {
    // SAFETY: AtomicU16 has the same size and alignment as u16, and the
    // exclusive borrow guarantees no plain access while the view lives.
    unsafe { &*(v as *mut [u16] as *const [std::sync::atomic::AtomicU16]) }
}

/// Views a slice of u64 as atomics, for parallel scattering.
pub(crate) fn as_atomic_u64(v: &mut [u64]) -> &[std::sync::atomic::AtomicU64] {
    const _: () = assert!(
        std::mem::align_of::<std::sync::atomic::AtomicU64>() == std::mem::align_of::<u64>()
    );
    // SAFETY: AtomicU64 has the same size as u64 and (checked above) the
    // same alignment here, and the exclusive borrow guarantees no plain
    // access while the view lives.
    unsafe { &*(v as *mut [u64] as *const [std::sync::atomic::AtomicU64]) }
}

/// Asks the CPU to bring `value`'s cache line in (a hint; no effect where
/// the architecture has no such instruction).
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint and never faults.
    unsafe {
        std::arch::x86_64::_mm_prefetch(
            value as *const T as *const i8,
            std::arch::x86_64::_MM_HINT_T0,
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

#[cfg(test)]
mod tests {
    /// Against the plain loop, on shuffled partial permutations across
    /// the block size, with `none` entries and the fill left alone.
    #[test]
    fn invert_is_the_inverse() {
        for len in [
            0usize,
            1,
            17,
            (1 << 14) - 1,
            1 << 14,
            (1 << 14) + 5,
            100_003,
        ] {
            let mut perm: Vec<u32> = (0..len as u32).collect();
            let mut x = 12345u64;
            for i in (1..len).rev() {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                perm.swap(i, (x >> 33) as usize % (i + 1));
            }
            // Every seventh entry is none, its value's slot keeps the fill.
            for i in (0..len).step_by(7) {
                perm[i] = u32::MAX;
            }
            let mut want = vec![7u32; len];
            for (i, &k) in perm.iter().enumerate() {
                if k != u32::MAX {
                    want[k as usize] = i as u32;
                }
            }
            let mut got = vec![7u32; len];
            super::invert(&perm[..], u32::MAX, &mut got);
            assert_eq!(got, want, "{len}");
        }
    }

    #[test]
    fn prefix_sums_are_running_totals() {
        for len in [0, 1, 5, (1 << 16) - 1, 1 << 16, (1 << 16) + 1, 200_003] {
            let value = |i: usize| (i as u64 * 7919) % 13;
            let got = super::prefix_sums(len, value);
            let mut want = vec![0u64];
            for i in 0..len {
                want.push(want[i] + value(i));
            }
            assert_eq!(got, want, "{len}");
        }
    }
}
