//! Keeping the resident set within the budget while a phase runs. The
//! checkpoints ([`super::checkpoint`]) drop the spilled arrays' pages at
//! the end of each phase; a phase that reads or writes them at random
//! (the dominators' semidominators, the duplicates' checks) would still
//! gather all the pages it touches until its end. A watcher thread reads
//! the resident set every [`PERIOD`] and, when it is over the limit with
//! enough of it in spilled pages to matter, drops them
//! ([`super::spill::release_all`]): the phase goes on, faulting back in
//! what it needs from the page cache. Dropping a file map's pages never
//! loses data (the spilled arrays are file maps, read-only or shared), so
//! this is safe at any moment.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// How often the watcher looks. Pages come back fast (a fault maps up to
/// 16 pages of a file at once, and two threads fault some GB/s): on the
/// 10 M heap's duplicate verification the resident set went 150–180 MiB
/// over a 300 MiB budget between looks every 5, 10 or 20 ms alike, while
/// looking every 5 ms, and dropping at 7/8 of the budget, doubled the
/// run's time (the pages dropped are faulted in again).
const PERIOD: Duration = Duration::from_millis(10);

/// Resident file pages under which a release is not worth it (the
/// binary's own pages are file pages too).
const MIN_FILE_BYTES: u64 = 32 << 20;

/// The resident set the watcher keeps to (0: none).
static LIMIT: AtomicU64 = AtomicU64::new(0);

/// How many times it dropped the spilled pages.
static RELEASES: AtomicU64 = AtomicU64::new(0);

static STARTED: OnceLock<()> = OnceLock::new();

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
    STARTED.get_or_init(|| {
        let spawned = std::thread::Builder::new()
            .name("heaptui-memory".into())
            .spawn(watch);
        if let Err(e) = spawned {
            tracing::debug!(target: "heaptui::memory", "no memory watcher: {e}");
        }
    });
}

/// How many times the watcher dropped the spilled pages so far.
pub fn releases() -> u64 {
    RELEASES.load(Ordering::Relaxed)
}

fn watch() {
    loop {
        std::thread::sleep(PERIOD);
        let limit = LIMIT.load(Ordering::Relaxed);
        let Some((rss, file)) = resident_and_file() else {
            return;
        };
        ANON_PEAK.fetch_max(rss.saturating_sub(file), Ordering::Relaxed);
        if limit != 0 && rss > limit && file >= MIN_FILE_BYTES {
            super::spill::release_all();
            RELEASES.fetch_add(1, Ordering::Relaxed);
            tracing::trace!(target: "heaptui::memory",
                "over the budget: rss {} MiB, {} MiB of file pages dropped", rss >> 20, file >> 20);
        }
    }
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
        }
    }
}
