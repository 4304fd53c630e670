//! The verification's per-thread scratch ([`Workspace`]) and the work
//! allowance of one type ([`Budget`]).

use std::sync::Arc;

use super::hubs::Hub;
use crate::progress::Progress;

/// Why verification of a block stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    Budget,
    Cancelled,
}

/// Work allowance of one type (object pairs and objects visited).
pub(crate) struct Budget<'p> {
    pub used: u64,
    pub limit: Option<u64>,
    pub(super) progress: &'p Progress,
    pub(super) next_check: u64,
}

impl<'p> Budget<'p> {
    pub fn new(limit: Option<u64>, progress: &'p Progress) -> Self {
        Budget {
            used: 0,
            limit,
            progress,
            next_check: 0,
        }
    }

    #[inline]
    pub(super) fn spend(&mut self, units: u64) -> Result<(), Stop> {
        self.used += units;
        if self.used >= self.next_check {
            self.next_check = self.used + 4096;
            if self.progress.is_cancelled() {
                return Err(Stop::Cancelled);
            }
        }
        match self.limit {
            Some(l) if self.used > l => Err(Stop::Budget),
            _ => Ok(()),
        }
    }
}

/// Per-object `u32` slots, `NONE` where unset, stored complemented so that
/// the fresh array is all zero bytes: its pages come from the kernel
/// untouched and count against memory only once written, and
/// [`Workspace::release`] can give them back.
pub(super) struct Slots(pub(super) Vec<u32>);

impl Slots {
    #[inline(always)]
    pub(super) fn get(&self, i: u32) -> u32 {
        !self.0[i as usize]
    }

    #[inline(always)]
    pub(super) fn set(&mut self, i: u32, value: u32) {
        self.0[i as usize] = !value;
    }
}

/// Dense per-thread scratch (12 bytes per object), reset by what was
/// touched. Its arrays start as untouched zero pages, so a workspace costs
/// only the pages its walks wrote, and [`Workspace::release`] returns those
/// between tasks: the memory of verification grows with what the threads
/// touch at once, not with the thread count times the heap.
pub(crate) struct Workspace {
    pub(super) fwd: Slots,
    pub(super) bwd: Slots,
    /// `2e` = in reach of the current representative, `2e + 1` = counted
    /// as additional for its class (e = epoch).
    pub(super) stamp: Vec<u32>,
    pub(super) epoch: u32,
    pub(super) pairs: Vec<(u32, u32)>,
    pub(super) stack: Vec<u32>,
    pub(super) explored: Vec<u32>,
    pub(super) deferred: Vec<u32>,
    /// Hubs entered by the current representative's walk.
    pub(super) reached: Vec<Arc<Hub>>,
}

impl Workspace {
    pub fn new(objects: usize) -> Self {
        Workspace {
            fwd: Slots(crate::mem::zeroed(objects)),
            bwd: Slots(crate::mem::zeroed(objects)),
            stamp: crate::mem::zeroed(objects),
            epoch: 0,
            pairs: Vec::new(),
            stack: Vec::new(),
            explored: Vec::new(),
            deferred: Vec::new(),
            reached: Vec::new(),
        }
    }

    /// Gives the pages written so far back to the kernel (every slot unset,
    /// every stamp 0 afterwards), for a workspace going back to the pool.
    pub fn release(&mut self) {
        crate::mem::release_zeroed(&mut self.fwd.0);
        crate::mem::release_zeroed(&mut self.bwd.0);
        crate::mem::release_zeroed(&mut self.stamp);
        self.epoch = 0;
    }

    pub(super) fn next_epoch(&mut self) -> u32 {
        if self.epoch >= (u32::MAX >> 1) - 1 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.epoch = 0;
        }
        self.epoch += 1;
        self.epoch
    }

    /// Whether `p` is in reach of the current representative.
    #[inline]
    pub(super) fn in_r0(&self, p: u32, in_r0: u32) -> bool {
        self.stamp[p as usize] == in_r0 || self.reached.iter().any(|h| h.reach.get(p))
    }
}
