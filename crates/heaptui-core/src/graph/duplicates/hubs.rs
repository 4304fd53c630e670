//! Hubs of the duplicate verification (see `verify`'s module doc): a
//! region many sets reach (a strongly connected component and everything
//! it reaches) kept as bitsets, so that marking the reach of a
//! representative takes a hub's whole reach at once instead of walking it
//! again for every set.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rayon::prelude::*;
use std::sync::{Arc, Condvar, Mutex, OnceLock, RwLock, TryLockError};

use super::view::View;

/// A marking walk this large makes a hub of the node it is at; 0 means
/// automatic: a thirty-second of the heap, between 4096 and 2^18 objects
/// (tests set a tiny value to exercise hubs; results never depend on it).
pub(crate) static HUB_AFTER: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

pub(super) fn hub_after(objects: usize) -> usize {
    match HUB_AFTER.load(Ordering::Relaxed) {
        0 => (objects / 32).clamp(1 << 12, 1 << 18),
        t => t,
    }
}
/// At most this many hubs (two bitsets of n bits each).
pub(crate) const MAX_HUBS: usize = 16;

/// At most this many walks past [`hub_after`] objects at once, whatever
/// the thread count: each such walk's scratch can grow to arrays of the
/// heap's size (see `Workspace`).
pub(crate) const BIG_WALKS: usize = 2;

#[derive(Clone)]
pub(super) struct BitSet(pub(super) Vec<u64>);

impl BitSet {
    #[inline]
    pub(super) fn get(&self, i: u32) -> bool {
        self.0[i as usize >> 6] >> (i & 63) & 1 != 0
    }
    fn count(&self) -> u64 {
        self.0.iter().map(|w| w.count_ones() as u64).sum()
    }
}

/// A region many objects reach: a strongly connected component and
/// everything it reaches.
pub(crate) struct Hub {
    pub(super) pivot: u32,
    pub(super) scc: BitSet,
    pub(super) scc_objects: u64,
    pub(super) reach: BitSet,
    pub(super) reach_objects: u64,
}

/// The hubs found so far, shared by all workers.
pub(crate) struct Hubs {
    pub(super) list: RwLock<Vec<Arc<Hub>>>,
    /// Union of the hubs' reach, for a one-lookup fast path.
    pub(super) any_reach: Vec<AtomicU64>,
    pub(super) building: Mutex<()>,
    /// Candidates tried already: a candidate's component and reach are
    /// those of the graph, whatever hubs exist, so a second try finds what
    /// the first did (the 10.1 M text heap at 16 threads: a one-object
    /// component reaching 8.85 M objects tried in three searches, 1-3 s
    /// each).
    tried: Mutex<Vec<u32>>,
    /// Walks holding a place among the [`BIG_WALKS`], and the signal that
    /// one was given back.
    big: Mutex<usize>,
    big_left: Condvar,
}

impl Hubs {
    pub fn new(objects: usize) -> Self {
        Hubs {
            list: RwLock::new(Vec::new()),
            any_reach: (0..objects.div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect(),
            building: Mutex::new(()),
            tried: Mutex::new(Vec::new()),
            big: Mutex::new(0),
            big_left: Condvar::new(),
        }
    }

    /// Takes a place among the big walks if one is free.
    pub(super) fn try_enter_big(&self) -> bool {
        let mut held = self.big.lock().unwrap_or_else(|p| p.into_inner());
        let free = *held < BIG_WALKS;
        *held += free as usize;
        free
    }

    /// Waits for a place among the big walks and takes it.
    pub(super) fn enter_big(&self) {
        let mut held = self.big.lock().unwrap_or_else(|p| p.into_inner());
        while *held >= BIG_WALKS {
            held = self.big_left.wait(held).unwrap_or_else(|p| p.into_inner());
        }
        *held += 1;
    }

    /// Gives a place among the big walks back.
    pub(super) fn leave_big(&self) {
        let mut held = self.big.lock().unwrap_or_else(|p| p.into_inner());
        *held = held.saturating_sub(1);
        drop(held);
        self.big_left.notify_one();
    }

    #[inline]
    pub(super) fn in_any_reach(&self, i: u32) -> bool {
        self.any_reach[i as usize >> 6].load(Ordering::Relaxed) >> (i & 63) & 1 != 0
    }

    pub(super) fn snapshot(&self) -> Vec<Arc<Hub>> {
        self.list.read().unwrap().clone()
    }

    /// Makes a hub of the candidate with the largest strongly connected
    /// component (objects of a large walk), unless one is already in a
    /// hub's component or there are enough hubs. A hub must reach at least
    /// `min_reach` objects: a smaller one saves no walk worth its place,
    /// and would stop later walks from trying. `Err(Busy)` while another
    /// thread builds one (see [`Hubs::wait_built`]).
    pub(super) fn add(
        &self,
        graph: &View,
        candidates: &[u32],
        min_reach: usize,
    ) -> Result<Option<Arc<Hub>>, Busy> {
        let _guard = match self.building.try_lock() {
            Ok(g) => g,
            Err(TryLockError::WouldBlock) => return Err(Busy),
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
        };
        let known = self.snapshot();
        if known.len() >= MAX_HUBS {
            return Ok(None);
        }
        // The walk reaches a known component anyway: nothing to build.
        if candidates
            .iter()
            .any(|&h| known.iter().any(|k| k.scc.get(h)))
        {
            return Ok(None);
        }
        let mut best: Option<Hub> = None;
        let mut tried = self.tried.lock().unwrap_or_else(|p| p.into_inner());
        for &h in candidates {
            if tried.contains(&h) {
                continue;
            }
            tried.push(h);
            let hub = Hub::of(graph, h, self, &known);
            // A component of a sizeable share of a large enough reach is
            // what other walks will enter: stop looking (each try walks the
            // reach). A tiny candidate (reach 2, component 1) is no reason
            // to stop: it stopped the search with a one-object component
            // reaching 8.85 M objects as the best so far, on the 10.1 M text
            // heap at 16 threads, whose walks then went round the large
            // component behind it instead of entering it.
            let good =
                hub.scc_objects * 16 >= hub.reach_objects && hub.reach_objects >= min_reach as u64;
            if best
                .as_ref()
                .is_none_or(|b| hub.scc_objects > b.scc_objects)
            {
                best = Some(hub);
            }
            if good {
                break;
            }
        }
        let Some(hub) = best.filter(|b| b.reach_objects >= min_reach as u64) else {
            return Ok(None);
        };
        let hub = Arc::new(hub);
        for (a, &w) in self.any_reach.iter().zip(&hub.reach.0) {
            if w != 0 {
                a.fetch_or(w, Ordering::Relaxed);
            }
        }
        self.list.write().unwrap().push(hub.clone());
        Ok(Some(hub))
    }

    /// Returns once no thread is building a hub.
    pub(super) fn wait_built(&self) {
        drop(self.building.lock().unwrap_or_else(|p| p.into_inner()));
    }
}

/// Another thread is building a hub.
pub(super) struct Busy;

impl Hub {
    pub(super) fn of(graph: &View, h: u32, hubs: &Hubs, known: &[Arc<Hub>]) -> Hub {
        let t = std::time::Instant::now();
        // Built from a thread of no pool: a worker of the analysis's pool
        // waiting on `hub_pool` would take the analysis's other work meanwhile,
        // and a walk it took that tries for a hub would wait forever for the
        // lock this one holds.
        let hub = std::thread::scope(|s| {
            s.spawn(|| Self::of_inner(graph, h, hubs, known))
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        });
        if tracing::enabled!(target: "heaptui::duplicates", tracing::Level::TRACE) {
            tracing::debug!(target: "heaptui::duplicates",
                "hub candidate {h}: scc {} reach {} in {} ms",
                hub.scc_objects,
                hub.reach_objects,
                t.elapsed().as_millis()
            );
        }
        hub
    }

    /// Reach and component of `h`. The reach walk stops at the components
    /// of known hubs and takes their reach whole: an object x of a hub's
    /// component reaches exactly what the hub's pivot reaches. Both walks
    /// go level by level, a large level on [`hub_pool`]'s threads (see
    /// [`levels`]): only sets are computed, so the result is the serial
    /// walk's whatever the thread count.
    pub(super) fn of_inner(graph: &View, h: u32, hubs: &Hubs, known: &[Arc<Hub>]) -> Hub {
        let n = graph.objects();
        let reach = AtomicBits::new(n);
        reach.insert(h);
        let entered: Vec<AtomicBool> = known.iter().map(|_| AtomicBool::new(false)).collect();
        let refs = &graph.dump.refs;
        let ahead = |x: u32, far: bool| {
            if far {
                refs.prefetch_offsets(x)
            } else {
                refs.prefetch_targets(x)
            }
        };
        levels(n, ahead, vec![h], |x, next| {
            if hubs.in_any_reach(x) {
                if let Some(k) = known.iter().position(|k| k.scc.get(x)) {
                    entered[k].store(true, Ordering::Relaxed);
                    return;
                }
            }
            for c in graph.refs_raw(x) {
                if reach.insert(c) {
                    next(c);
                }
            }
        });
        let mut reach = reach.into_bits();
        for (k, _) in known
            .iter()
            .zip(&entered)
            .filter(|(_, e)| e.load(Ordering::Relaxed))
        {
            for (w, &o) in reach.0.iter_mut().zip(&k.reach.0) {
                *w |= o;
            }
        }
        let reach_objects = reach.count();
        // The component: what reaches h, within what h reaches.
        let scc = AtomicBits::new(n);
        scc.insert(h);
        let retainers = &graph.graph.retainers;
        let ahead = |x: u32, far: bool| {
            if far {
                retainers.prefetch_index(x)
            } else {
                retainers.prefetch(x)
            }
        };
        levels(n, ahead, vec![h], |x, next| {
            for p in graph.retainers_raw(x) {
                if reach.get(p) && scc.insert(p) {
                    next(p);
                }
            }
        });
        let scc = scc.into_bits();
        Hub {
            pivot: h,
            scc_objects: scc.count(),
            scc,
            reach,
            reach_objects,
        }
    }
}

/// A set of objects that several threads add to at once.
struct AtomicBits(Vec<AtomicU64>);

impl AtomicBits {
    fn new(n: usize) -> Self {
        AtomicBits((0..n.div_ceil(64)).map(|_| AtomicU64::new(0)).collect())
    }

    /// Adds `i`; whether it was not in the set (exactly one of the
    /// threads adding it at once is told so).
    #[inline]
    fn insert(&self, i: u32) -> bool {
        let word = &self.0[i as usize >> 6];
        let bit = 1u64 << (i & 63);
        word.load(Ordering::Relaxed) & bit == 0 && word.fetch_or(bit, Ordering::Relaxed) & bit == 0
    }

    fn into_bits(self) -> BitSet {
        BitSet(self.0.into_iter().map(AtomicU64::into_inner).collect())
    }
}

/// A level of a walk at least this large is split among [`hub_pool`]'s
/// threads, in pieces of [`LEVEL_PIECE`] objects.
const PARALLEL_LEVEL: usize = 1 << 14;
const LEVEL_PIECE: usize = 1 << 12;

/// The threads that build a hub: as many as the analysis has. Its own
/// pool, because the analysis's other threads wait for the hub blocked
/// (see `verify::grown`) and would take none of its work. It is entered
/// from a thread of no pool only (see [`Hub::of`]).
fn hub_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let threads = rayon::current_num_threads();
        (threads > 1)
            .then(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .thread_name(|i| format!("heaptui-hub-{i}"))
                    .build()
                    .ok()
            })
            .flatten()
    })
    .as_ref()
}

/// Visits the objects of `first` and, level after level, those `step`
/// emits (each once: `step` emits only what it adds to its set), a large
/// level in pieces on [`hub_pool`]'s threads. Only the frontier is held,
/// never the whole reach (which on a hub can be every object of the
/// heap): a level of fewer than [`PARALLEL_LEVEL`] objects as a list, the
/// level after a larger one as bits (`n` objects: an eighth of a byte an
/// object), listed again where it is narrow (under one object in 32). Lists
/// of a hub's widest levels (millions of objects, and their pieces beside
/// them while the next was gathered) were the verification's peak on the
/// HPROF test dump, 26 MiB above what it held before. Within a piece the
/// adjacency of the objects a few places ahead is fetched while the
/// current one waits on memory.
fn levels(
    n: usize,
    prefetch: impl Fn(u32, bool) + Sync,
    first: Vec<u32>,
    step: impl Fn(u32, &mut dyn FnMut(u32)) + Sync,
) {
    let piece = |xs: &[u32], emit: &mut dyn FnMut(u32)| {
        for (i, &x) in xs.iter().enumerate() {
            if let Some(&ahead) = xs.get(i + 15) {
                prefetch(ahead, true);
            }
            if let Some(&ahead) = xs.get(i + 7) {
                prefetch(ahead, false);
            }
            step(x, emit);
        }
    };
    let mut level = Level::List(first);
    loop {
        level = match level {
            Level::List(xs) if xs.is_empty() => return,
            Level::List(xs) if xs.len() < PARALLEL_LEVEL => {
                let mut next = Vec::new();
                piece(&xs, &mut |c| next.push(c));
                Level::List(next)
            }
            Level::List(xs) => {
                let next = AtomicBits::new(n);
                each_piece(&xs, LEVEL_PIECE, |_, xs| {
                    piece(xs, &mut |c| {
                        next.insert(c);
                    })
                });
                drop(xs);
                Level::of(next.into_bits(), n)
            }
            Level::Bits(words) => {
                let next = AtomicBits::new(n);
                each_piece(&words.0, LEVEL_PIECE / 64, |k, words| {
                    let xs = BitSet::ones(words, (k * LEVEL_PIECE) as u32);
                    piece(&xs, &mut |c| {
                        next.insert(c);
                    })
                });
                drop(words);
                Level::of(next.into_bits(), n)
            }
        };
    }
}

/// A level of [`levels`]' walk.
enum Level {
    List(Vec<u32>),
    Bits(BitSet),
}

impl Level {
    /// The level of the objects in `bits` (of `n`): listed where they are
    /// fewer than one in 32, when the list takes less than the bits.
    fn of(bits: BitSet, n: usize) -> Level {
        if bits.count() * 32 < n as u64 {
            Level::List(BitSet::ones(&bits.0, 0))
        } else {
            Level::Bits(bits)
        }
    }
}

impl BitSet {
    /// The objects whose bits are set in `words`, the first word's lowest
    /// bit object `first`, ascending.
    fn ones(words: &[u64], first: u32) -> Vec<u32> {
        let mut xs = Vec::new();
        for (i, &w) in words.iter().enumerate() {
            let mut w = w;
            while w != 0 {
                xs.push(first + (i * 64) as u32 + w.trailing_zeros());
                w &= w - 1;
            }
        }
        xs
    }
}

/// `f` on each piece of `items` (`size` of them, the last fewer) with its
/// number: on [`hub_pool`]'s threads, or one after the other where the
/// analysis has one thread (whose only worker waits for the hub: the pool
/// of the analysis must not be entered).
fn each_piece<T: Sync>(items: &[T], size: usize, f: impl Fn(usize, &[T]) + Sync) {
    match hub_pool() {
        Some(pool) => pool.install(|| {
            items
                .par_chunks(size)
                .enumerate()
                .for_each(|(k, c)| f(k, c))
        }),
        None => items.chunks(size).enumerate().for_each(|(k, c)| f(k, c)),
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write;

    use super::*;
    use crate::graph::HeapGraph;

    /// What `from` reaches and, of that, what reaches `from`: a plain
    /// walk each way, the oracle of [`Hub::of`].
    fn oracle(graph: &HeapGraph, from: u32) -> (Vec<bool>, Vec<bool>) {
        let n = graph.objects();
        let (mut reach, mut scc) = (vec![false; n], vec![false; n]);
        let mut stack = vec![from];
        reach[from as usize] = true;
        while let Some(x) = stack.pop() {
            for c in graph.refs_raw(x) {
                if !std::mem::replace(&mut reach[c as usize], true) {
                    stack.push(c);
                }
            }
        }
        stack.push(from);
        scc[from as usize] = true;
        while let Some(x) = stack.pop() {
            for p in graph.retainers_raw(x) {
                if reach[p as usize] && !std::mem::replace(&mut scc[p as usize], true) {
                    stack.push(p);
                }
            }
        }
        (reach, scc)
    }

    /// [`levels`] visits each object reached exactly once, through levels
    /// listed and levels as bits alike: an implicit graph whose second to
    /// fourth levels are wide (the third and fourth held as bits), the
    /// fifth narrow again (listed), then a chain of a thousand levels.
    #[test]
    fn levels_visit_every_reached_object_once() {
        let wide = 2 * PARALLEL_LEVEL as u32;
        let n = (3 * wide + 1001) as usize;
        let refs = |x: u32| -> Vec<u32> {
            match x {
                0 => (1..=wide).collect(),
                x if x <= wide => vec![x + wide, (x * 7) % wide + 1],
                x if x <= 2 * wide => vec![x + wide],
                x if x <= 3 * wide => vec![3 * wide + 1 + x % 100],
                x if (x as usize) < n - 1 => vec![x + 1],
                _ => Vec::new(),
            }
        };
        let seen = AtomicBits::new(n);
        seen.insert(0);
        let visits: Vec<std::sync::atomic::AtomicU32> =
            (0..n).map(|_| Default::default()).collect();
        levels(
            n,
            |_, _| {},
            vec![0],
            |x, next| {
                visits[x as usize].fetch_add(1, Ordering::Relaxed);
                for c in refs(x) {
                    if seen.insert(c) {
                        next(c);
                    }
                }
            },
        );
        let mut reached = vec![false; n];
        let mut stack = vec![0];
        reached[0] = true;
        while let Some(x) = stack.pop() {
            for c in refs(x) {
                if !std::mem::replace(&mut reached[c as usize], true) {
                    stack.push(c);
                }
            }
        }
        assert!(reached.iter().all(|&r| r));
        for (o, v) in visits.iter().enumerate() {
            assert_eq!(v.load(Ordering::Relaxed), reached[o] as u32, "{o}");
        }
    }

    /// A hub's reach and component are the plain walks' whatever hubs are
    /// known, also where a level is wide enough to be split among threads:
    /// object 0 leads to 3 × [`PARALLEL_LEVEL`] objects, each to one of a
    /// few hundred that lead back to 0 or on, with pseudo-random edges.
    #[test]
    fn a_hub_built_level_by_level_is_the_plain_walks() {
        let wide = 3 * PARALLEL_LEVEL as u32;
        let n = 1 + wide + 600;
        let mut text = String::from("t 1 Node\n");
        let mut seed = 0x9e37_79b9_u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        };
        for i in 0..n {
            let mut refs: Vec<u32> = match i {
                0 => (1..=wide).collect(),
                i if i <= wide => vec![wide + 1 + i % 600],
                i if i % 3 == 0 => vec![0],
                _ => vec![1 + next() % (n - 1)],
            };
            if next() % 4 == 0 {
                refs.push(next() % n);
            }
            write!(text, "o {:x} 1 10", i + 1).unwrap();
            for r in refs {
                write!(text, " {:x}", r + 1).unwrap();
            }
            text.push('\n');
        }
        text.push_str("r 1 1 0\n");
        let dump =
            crate::import::netcf_text::parse_bytes(std::path::Path::new("t.txt"), text.as_bytes())
                .unwrap();
        let graph = HeapGraph::build(dump);
        let view = View::plain(&graph);
        let hubs = Hubs::new(graph.objects());
        let bits = |b: &BitSet| {
            (0..graph.objects() as u32)
                .map(|i| b.get(i))
                .collect::<Vec<_>>()
        };
        // The first (one of the few that lead back to 0) with no hub
        // known, the next two entering its component.
        let back = (wide + 1..n).find(|i| i % 3 == 0).unwrap();
        for from in [back, 0, 5] {
            let known = hubs.snapshot();
            let hub = Hub::of(&view, from, &hubs, &known);
            let (reach, scc) = oracle(&graph, from);
            assert_eq!(bits(&hub.reach), reach, "reach of {from}");
            assert_eq!(bits(&hub.scc), scc, "component of {from}");
            assert_eq!(
                hub.reach_objects,
                reach.iter().filter(|&&r| r).count() as u64
            );
            assert_eq!(hub.scc_objects, scc.iter().filter(|&&r| r).count() as u64);
            if known.is_empty() {
                let hub = Arc::new(hub);
                for (a, &w) in hubs.any_reach.iter().zip(&hub.reach.0) {
                    a.fetch_or(w, Ordering::Relaxed);
                }
                hubs.list.write().unwrap().push(hub);
            }
        }
    }

    /// At most [`BIG_WALKS`] places are held; a walk waiting for one gets
    /// it when another is given back.
    #[test]
    fn big_walks_take_turns() {
        let hubs = Arc::new(Hubs::new(64));
        for _ in 0..BIG_WALKS {
            assert!(hubs.try_enter_big());
        }
        assert!(!hubs.try_enter_big());
        let waiter = {
            let hubs = hubs.clone();
            std::thread::spawn(move || {
                hubs.enter_big();
                hubs.leave_big();
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(!waiter.is_finished(), "waits while every place is held");
        hubs.leave_big();
        waiter.join().unwrap();
        assert!(hubs.try_enter_big(), "the waiter gave its place back");
    }
}
