//! Keeping the resident set within the budget while a phase runs. The
//! checkpoints ([`super::checkpoint`]) drop the spilled arrays' pages at
//! the end of each phase; a phase that reads or writes them at random
//! (the dominators' semidominators, the duplicates' checks) would still
//! gather all the pages it touches until its end. A watcher thread reads
//! the resident set every [`PERIOD`] (every [`NEAR_PERIOD`] past half the
//! limit) while work that may read spilled pages runs ([`busy`]), and
//! every [`IDLE_PERIOD`] when none does; when the resident set is over the
//! limit, less the growth it saw between its last looks, with enough of it
//! in spilled pages to matter, it drops them
//! ([`super::spill::release_all`]): the phase goes on, faulting back in
//! what it needs from the page cache. Dropping a file map's pages never
//! loses data (the spilled arrays are file maps, read-only or shared), so
//! this is safe at any moment.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::thread::Thread;
use std::time::Duration;

/// How often the watcher looks while something runs ([`busy`]) and the
/// resident set is below half the limit.
const PERIOD: Duration = Duration::from_millis(10);

/// How often it looks while something runs and the resident set is past
/// half the limit. Pages come back fast (a fault maps up to 16 pages of a
/// file at once, and two threads fault some GB/s): on the 10 M heap the
/// resident set went 100–180 MiB over a 300 MiB budget between looks
/// every 10 ms. A look reads `/proc/self/statm` (a few microseconds), so
/// 500 a second cost about a thousandth of a core.
const NEAR_PERIOD: Duration = Duration::from_millis(2);

/// How often it looks when nothing runs (the analysis over, the report
/// written, the UI idle): slowly, for the few pages a key press reads.
const IDLE_PERIOD: Duration = Duration::from_secs(1);

/// Resident file pages under which a release is not worth it (the
/// binary's own pages are file pages too).
const MIN_FILE_BYTES: u64 = 32 << 20;

/// The share of the limit kept free below it (1/32: 96 MiB of a 3 GiB
/// budget): pages keep coming in while a release runs and between two
/// looks, faster than the growth the watcher saw. Without it the 100.6 M
/// text heap under `--memory 3G` peaked at 3,170 MiB in the duplicates'
/// verification.
const MARGIN_DIVISOR: u64 = 32;

/// The resident set the watcher keeps to (0: none).
static LIMIT: AtomicU64 = AtomicU64::new(0);

/// How many times it dropped the spilled pages.
static RELEASES: AtomicU64 = AtomicU64::new(0);

/// The watcher thread, once started.
static WATCHER: OnceLock<Option<Thread>> = OnceLock::new();

/// How many [`Busy`] guards are alive: work that may read spilled pages.
static BUSY: AtomicUsize = AtomicUsize::new(0);

/// The largest anonymous resident set (memory not spilled) the watcher
/// saw since [`take_anon_peak`] was last called.
static ANON_PEAK: AtomicU64 = AtomicU64::new(0);

/// The largest anonymous resident set seen since the last call (0 when
/// no watcher runs), for the checkpoints' log: the floor the budget
/// cannot reach by dropping spilled pages.
pub fn take_anon_peak() -> u64 {
    ANON_PEAK.swap(0, Ordering::Relaxed)
}

/// Keeps the resident set near `limit` bytes from now on (the lowest
/// limit given wins), starting the watcher at the first call. Only
/// spilled pages are dropped: memory that is not spilled stays.
pub fn keep_within(limit: u64) {
    let _ = LIMIT.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |l| {
        Some(if l == 0 { limit } else { l.min(limit) })
    });
    WATCHER.get_or_init(|| {
        let spawned = std::thread::Builder::new()
            .name("heaptui-memory".into())
            .spawn(watch);
        match spawned {
            Ok(handle) => Some(handle.thread().clone()),
            Err(e) => {
                tracing::debug!(target: "heaptui::memory", "no memory watcher: {e}");
                None
            }
        }
    });
}

/// Work that may read spilled pages (an analysis, a report, a job of the
/// UI) is running while the guard lives: the watcher looks every few
/// milliseconds, and once no guard is left, once a second.
#[must_use = "the work counts as running while the guard lives"]
pub struct Busy(());

/// Marks work that may read spilled pages as running until the guard is
/// dropped, waking the watcher if it waits (cheap when none runs).
pub fn busy() -> Busy {
    BUSY.fetch_add(1, Ordering::Relaxed);
    if let Some(Some(t)) = WATCHER.get() {
        t.unpark();
    }
    Busy(())
}

impl Drop for Busy {
    fn drop(&mut self) {
        BUSY.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Whether work that may read spilled pages is running.
pub fn is_busy() -> bool {
    BUSY.load(Ordering::Relaxed) > 0
}

/// How many times the watcher dropped the spilled pages so far.
pub fn releases() -> u64 {
    RELEASES.load(Ordering::Relaxed)
}

fn watch() {
    let mut period = PERIOD;
    loop {
        std::thread::park_timeout(period);
        let Some(rss) = look() else {
            return;
        };
        period = next_period(is_busy(), rss, LIMIT.load(Ordering::Relaxed));
    }
}

/// The resident set at the last look, and its growth between two looks at
/// its largest lately (halved at each look without growth): a release
/// starts that far below the limit, so the next look finds the set within
/// it.
static LAST_RSS: AtomicU64 = AtomicU64::new(0);
static GROWTH: AtomicU64 = AtomicU64::new(0);

/// One look, by the watcher or a working thread ([`pace`]): the resident
/// set, its spilled pages dropped first when it is (or is about to be)
/// over the limit. `None` where `/proc` cannot be read.
fn look() -> Option<u64> {
    let limit = LIMIT.load(Ordering::Relaxed);
    let (rss, file) = resident_and_file_now()?;
    ANON_PEAK.fetch_max(rss.saturating_sub(file), Ordering::Relaxed);
    let grew = rss.saturating_sub(LAST_RSS.swap(rss, Ordering::Relaxed));
    let growth = grew.max(GROWTH.load(Ordering::Relaxed) / 2).min(limit / 4);
    GROWTH.store(growth, Ordering::Relaxed);
    if limit != 0 && rss + growth + limit / MARGIN_DIVISOR > limit && file >= MIN_FILE_BYTES {
        super::spill::release_all();
        RELEASES.fetch_add(1, Ordering::Relaxed);
        LAST_RSS.store(rss.saturating_sub(file), Ordering::Relaxed);
        tracing::trace!(target: "heaptui::memory",
            "over the budget: rss {} MiB (growing {} MiB a look), {} MiB of file pages dropped",
            rss >> 20, growth >> 20, file >> 20);
        return Some(rss - file.min(rss));
    }
    Some(rss)
}

/// How often, at most, working threads look ([`pace`]) between them.
const PACE_MICROS: u64 = 250;

/// When a working thread last looked, in microseconds from [`epoch`].
static LAST_PACE: AtomicU64 = AtomicU64::new(0);

/// Whether a memory limit is kept (the heap was over its budget): walks
/// that read spilled arrays at random then call [`pace`] often.
#[inline]
pub fn limited() -> bool {
    LIMIT.load(Ordering::Relaxed) != 0
}

/// For a walk that reads spilled arrays at random, called every few
/// hundred steps: a look, as the watcher's, at most every quarter of a millisecond
/// among all threads. The watcher alone cannot keep such a walk within the
/// limit where threads outnumber cores (it waits its turn for a core while
/// the walk faults pages in at some GB/s). One atomic load when no limit
/// is kept.
#[inline]
pub fn pace() {
    if limited() {
        pace_look();
    }
}

#[cold]
fn pace_look() {
    let now = epoch().elapsed().as_micros() as u64;
    let last = LAST_PACE.load(Ordering::Relaxed);
    if now < last + PACE_MICROS
        || LAST_PACE
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
    {
        return;
    }
    let _ = look();
}

/// The instant [`pace`] counts from.
fn epoch() -> std::time::Instant {
    static EPOCH: OnceLock<std::time::Instant> = OnceLock::new();
    *EPOCH.get_or_init(std::time::Instant::now)
}

/// How long the watcher waits before its next look: see [`PERIOD`],
/// [`NEAR_PERIOD`] and [`IDLE_PERIOD`].
fn next_period(busy: bool, rss: u64, limit: u64) -> Duration {
    if !busy {
        IDLE_PERIOD
    } else if rss > limit / 2 {
        NEAR_PERIOD
    } else {
        PERIOD
    }
}

/// The resident set and its file pages from `/proc/self/statm` (resident
/// and shared pages: the file and shared memory pages, of which heaptui
/// has none of the latter), in bytes: the watcher's cheap look.
fn resident_and_file_now() -> Option<(u64, u64)> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let mut fields = statm.split_ascii_whitespace().skip(1);
    let resident: u64 = fields.next()?.parse().ok()?;
    let shared: u64 = fields.next()?.parse().ok()?;
    let page = page_size();
    Some((resident * page, shared * page))
}

/// The system's page size in bytes.
fn page_size() -> u64 {
    static PAGE: OnceLock<u64> = OnceLock::new();
    *PAGE.get_or_init(|| {
        // SAFETY: sysconf only reads a system constant.
        let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        u64::try_from(size).ok().filter(|&s| s > 0).unwrap_or(4096)
    })
}

/// The resident file pages (`RssFile`: the binary's, the spilled arrays'
/// and the mapped dump's), in bytes.
pub fn resident_file() -> Option<u64> {
    Some(resident_and_file()?.1)
}

/// The resident set and its file pages (`VmRSS`, `RssFile` of
/// `/proc/self/status`), in bytes.
fn resident_and_file() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    Some((
        super::status_field(&status, "VmRSS:")?,
        super::status_field(&status, "RssFile:")?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_fields_are_read_in_kib() {
        let status = "Name: x\nVmRSS:\t  2048 kB\nRssAnon:\t1 kB\nRssFile:\t  1024 kB\n";
        assert_eq!(crate::mem::status_field(status, "VmRSS:"), Some(2 << 20));
        assert_eq!(crate::mem::status_field(status, "RssFile:"), Some(1 << 20));
        assert_eq!(crate::mem::status_field(status, "RssShmem:"), None);
        if std::path::Path::new("/proc/self/status").exists() {
            let (rss, file) = resident_and_file().unwrap();
            assert!(rss > 0 && file <= rss);
            let (rss, file) = resident_and_file_now().unwrap();
            assert!(rss > 0 && file <= rss);
        }
    }
}

#[cfg(test)]
mod busy_tests {
    use super::*;

    #[test]
    fn the_watcher_looks_often_only_while_work_runs() {
        let limit = 300 << 20;
        assert_eq!(next_period(false, 400 << 20, limit), IDLE_PERIOD);
        assert_eq!(next_period(true, 100 << 20, limit), PERIOD);
        assert_eq!(next_period(true, 200 << 20, limit), NEAR_PERIOD);
        let before = BUSY.load(Ordering::Relaxed);
        let guard = busy();
        assert!(is_busy());
        drop(guard);
        assert_eq!(BUSY.load(Ordering::Relaxed), before);
    }
}
