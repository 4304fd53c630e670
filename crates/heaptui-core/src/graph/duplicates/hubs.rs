//! Hubs of the duplicate verification (see `verify`'s module doc): a
//! region many sets reach (a strongly connected component and everything
//! it reaches) kept as bitsets, so that marking the reach of a
//! representative takes a hub's whole reach at once instead of walking it
//! again for every set.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock, TryLockError};

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
    pub(super) fn new(n: usize) -> Self {
        BitSet(vec![0; n.div_ceil(64)])
    }
    #[inline]
    pub(super) fn get(&self, i: u32) -> bool {
        self.0[i as usize >> 6] >> (i & 63) & 1 != 0
    }
    #[inline]
    pub(super) fn set(&mut self, i: u32) -> bool {
        let w = &mut self.0[i as usize >> 6];
        let was = *w >> (i & 63) & 1 != 0;
        *w |= 1 << (i & 63);
        !was
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
        let hub = Self::of_inner(graph, h, hubs, known);
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
    /// component reaches exactly what the hub's pivot reaches.
    pub(super) fn of_inner(graph: &View, h: u32, hubs: &Hubs, known: &[Arc<Hub>]) -> Hub {
        let n = graph.objects();
        let mut reach = BitSet::new(n);
        reach.set(h);
        let mut entered = vec![false; known.len()];
        let mut queue = VecDeque::from([h]);
        let refs = &graph.dump.refs;
        let ahead = |x: u32, far: bool| {
            if far {
                refs.prefetch_offsets(x)
            } else {
                refs.prefetch_targets(x)
            }
        };
        breadth_first(ahead, &mut queue, |x, queue| {
            if hubs.in_any_reach(x) {
                if let Some(k) = known.iter().position(|k| k.scc.get(x)) {
                    entered[k] = true;
                    return;
                }
            }
            for &c in graph.refs_raw(x) {
                if reach.set(c) {
                    queue.push_back(c);
                }
            }
        });
        for (k, _) in known.iter().zip(&entered).filter(|(_, &e)| e) {
            for (w, &o) in reach.0.iter_mut().zip(&k.reach.0) {
                *w |= o;
            }
        }
        let reach_objects = reach.0.iter().map(|w| w.count_ones() as u64).sum();
        // The component: what reaches h, within what h reaches.
        let mut scc = BitSet::new(n);
        scc.set(h);
        queue.clear();
        queue.push_back(h);
        let mut scc_objects = 1;
        let retainers = &graph.graph.retainers;
        let ahead = |x: u32, far: bool| {
            if far {
                retainers.prefetch_index(x)
            } else {
                retainers.prefetch(x)
            }
        };
        breadth_first(ahead, &mut queue, |x, queue| {
            for p in graph.retainers_raw(x) {
                if reach.get(p) && scc.set(p) {
                    queue.push_back(p);
                    scc_objects += 1;
                }
            }
        });
        Hub {
            pivot: h,
            scc,
            scc_objects,
            reach,
            reach_objects,
        }
    }
}

/// Visits the objects of `queue` and those `step` appends, first in first
/// out (only sets are computed, so the order is free), fetching the
/// adjacency of the objects a few places ahead while the current one waits
/// on memory. Visited objects leave the queue: it holds the frontier, not
/// the whole reach (which on a hub can be every object of the heap).
pub(super) fn breadth_first(
    prefetch: impl Fn(u32, bool),
    queue: &mut VecDeque<u32>,
    mut step: impl FnMut(u32, &mut VecDeque<u32>),
) {
    while let Some(x) = queue.pop_front() {
        if let Some(&ahead) = queue.get(15) {
            prefetch(ahead, true);
        }
        if let Some(&ahead) = queue.get(7) {
            prefetch(ahead, false);
        }
        step(x, queue);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
