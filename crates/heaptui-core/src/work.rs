//! Units of work, counted for the bounds tests (docs/bounds.md): the loops
//! whose length does not follow from the input's size alone (a superclass
//! chain walked per class, an id index's probes, the dominator tree's
//! walks, the held duplicates' paths and searches, refinement rounds) add
//! what they did here, so a test can hold the whole analysis's work against
//! the file's size without reading a clock. The duplicates' verification,
//! bounded by its per-type budget instead, is counted apart
//! ([`add_budgeted`]).
//!
//! Compiled to nothing unless the `count-work` feature is on (the bounds
//! tests turn it on as a dev-dependency feature): [`add`] is then an empty
//! inline function and [`units`] is 0. Callers add once per loop or per
//! call, not per step of a hot loop, so that even with the feature on the
//! counter is no shared cache line every thread writes at each step.

#[cfg(feature = "count-work")]
static UNITS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
#[cfg(feature = "count-work")]
static BUDGETED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Whether work is counted (the `count-work` feature).
pub const COUNTED: bool = cfg!(feature = "count-work");

/// Counts `n` units of work.
#[inline(always)]
pub fn add(n: u64) {
    #[cfg(feature = "count-work")]
    UNITS.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    #[cfg(not(feature = "count-work"))]
    let _ = n;
}

/// The units counted since the process started (0 without the feature).
pub fn units() -> u64 {
    #[cfg(feature = "count-work")]
    return UNITS.load(std::sync::atomic::Ordering::Relaxed);
    #[cfg(not(feature = "count-work"))]
    0
}

/// Counts `n` units of work spent from the duplicates' per-type budget
/// (`--duplicate-budget`): bounded by that budget per type, not by the
/// file's size (docs/bounds.md), so counted apart.
#[inline(always)]
pub fn add_budgeted(n: u64) {
    #[cfg(feature = "count-work")]
    BUDGETED.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    #[cfg(not(feature = "count-work"))]
    let _ = n;
}

/// The budgeted units counted since the process started (0 without the
/// feature).
pub fn budgeted_units() -> u64 {
    #[cfg(feature = "count-work")]
    return BUDGETED.load(std::sync::atomic::Ordering::Relaxed);
    #[cfg(not(feature = "count-work"))]
    0
}
