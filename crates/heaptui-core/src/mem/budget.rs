//! The memory budget: how much of the machine one analysis may hold in
//! memory before its big arrays go to disk ([`super::spill`]). Given with
//! `--memory SIZE`, else [`SHARE`] of the memory available: `MemAvailable`
//! of `/proc/meminfo`, or what the process's cgroup still allows where
//! that is lower. A process-wide setting, set at start-up ([`set`]);
//! analyses read it ([`get`]).

use std::sync::RwLock;

/// The share of the available memory the default budget takes, as
/// (numerator, denominator): three quarters. The rest stays for what the
/// budget does not count (the terminal UI's screens and jobs, the report's
/// writer, other processes) and for the page cache that serves the spilled
/// files: with all of it taken, reading them back would evict each other.
pub const SHARE: (u64, u64) = (3, 4);

/// One analysis's memory budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// The bytes an analysis may keep in memory (`u64::MAX`: no limit).
    pub bytes: u64,
    /// Where it came from.
    pub source: Source,
}

/// Where a [`Budget`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `--memory SIZE`.
    Given,
    /// [`SHARE`] of this many bytes available.
    Available(u64),
    /// Nothing says what is available: no limit.
    Unknown,
}

impl Budget {
    /// No limit: nothing is ever spilled.
    pub const UNLIMITED: Budget = Budget {
        bytes: u64::MAX,
        source: Source::Unknown,
    };

    /// A budget the user gave.
    pub fn given(bytes: u64) -> Budget {
        Budget {
            bytes,
            source: Source::Given,
        }
    }

    /// [`SHARE`] of the memory available now; unlimited where nothing says.
    pub fn default_now() -> Budget {
        match available_memory() {
            Some(avail) => Budget::share_of(avail),
            None => Budget::UNLIMITED,
        }
    }

    /// [`SHARE`] of `available` bytes.
    pub fn share_of(available: u64) -> Budget {
        Budget {
            bytes: (available / SHARE.1).saturating_mul(SHARE.0),
            source: Source::Available(available),
        }
    }

    /// Whether an analysis estimated to need `need` bytes at its peak fits.
    pub fn fits(&self, need: u64) -> bool {
        need <= self.bytes
    }

    /// As the overview and the report show it: `400 MiB (--memory)`,
    /// `16.5 GiB (3/4 of the 22 GiB available)`, `none`.
    pub fn describe(&self) -> String {
        let size = |b: u64| humansize::format_size(b, humansize::BINARY);
        match self.source {
            Source::Given if self.bytes == u64::MAX => "none (--memory none)".into(),
            Source::Given => format!("{} (--memory)", size(self.bytes)),
            Source::Available(a) => format!(
                "{} ({}/{} of the {} available)",
                size(self.bytes),
                SHARE.0,
                SHARE.1,
                size(a)
            ),
            Source::Unknown => "none (the available memory is unknown)".into(),
        }
    }
}

/// Parses `--memory`: a size, as `size` reads one (at least one byte), or
/// `none` for no limit.
pub fn parse(text: &str, size: impl Fn(&str) -> Result<u64, String>) -> Result<Budget, String> {
    if text.trim().eq_ignore_ascii_case("none") {
        return Ok(Budget::given(u64::MAX));
    }
    match size(text)? {
        0 => Err(format!(
            "`{text}` is no memory: give at least one byte (1 puts every big array on disk), or none"
        )),
        b => Ok(Budget::given(b)),
    }
}

static BUDGET: RwLock<Option<Budget>> = RwLock::new(None);

/// Sets the process's budget (the command line's; a test harness's).
pub fn set(budget: Budget) {
    if let Ok(mut b) = BUDGET.write() {
        *b = Some(budget);
    }
}

/// The process's budget: the one [`set`], else [`Budget::default_now`]
/// taken at the first call and kept.
pub fn get() -> Budget {
    if let Some(b) = BUDGET.read().ok().and_then(|b| *b) {
        return b;
    }
    let Ok(mut b) = BUDGET.write() else {
        return Budget::default_now();
    };
    *b.get_or_insert_with(Budget::default_now)
}

/// The memory available to this process: `MemAvailable`, or the cgroup's
/// limit less its usage where that is lower.
pub fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok();
    let mem = info.as_deref().and_then(mem_available);
    let cgroup = cgroup_room();
    match (mem, cgroup) {
        (Some(m), Some(c)) => Some(m.min(c)),
        (m, c) => m.or(c),
    }
}

/// `MemAvailable` of a `/proc/meminfo` text, in bytes.
fn mem_available(info: &str) -> Option<u64> {
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// What this process's cgroup still allows (limit less usage), where it
/// has a limit: cgroup v2's `memory.max` and `memory.current`, else v1's
/// `memory.limit_in_bytes` and `memory.usage_in_bytes`.
fn cgroup_room() -> Option<u64> {
    let read = |p: &str| -> Option<u64> { std::fs::read_to_string(p).ok()?.trim().parse().ok() };
    let own = std::fs::read_to_string("/proc/self/cgroup").ok();
    let v2 = own
        .as_deref()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("0::")))
        .map(|p| format!("/sys/fs/cgroup{}", p.trim_end_matches('/')));
    for dir in v2.iter().map(String::as_str).chain(["/sys/fs/cgroup"]) {
        if let Some(limit) = read(&format!("{dir}/memory.max")) {
            let used = read(&format!("{dir}/memory.current")).unwrap_or(0);
            return Some(limit.saturating_sub(used));
        }
    }
    let limit = read("/sys/fs/cgroup/memory/memory.limit_in_bytes")?;
    // v1 writes a huge number for "no limit".
    if limit >= 1 << 60 {
        return None;
    }
    let used = read("/sys/fs/cgroup/memory/memory.usage_in_bytes").unwrap_or(0);
    Some(limit.saturating_sub(used))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(s: &str) -> Result<u64, String> {
        match s {
            "400M" => Ok(400 << 20),
            "0" => Ok(0),
            "1" => Ok(1),
            _ => Err(format!("`{s}` is not a size")),
        }
    }

    #[test]
    fn memory_flag_takes_sizes_and_none() {
        assert_eq!(parse("400M", size), Ok(Budget::given(400 << 20)));
        assert_eq!(parse("1", size), Ok(Budget::given(1)));
        assert_eq!(parse("None", size), Ok(Budget::given(u64::MAX)));
        assert!(parse("0", size).unwrap_err().contains("at least one byte"));
        assert!(parse("lots", size).unwrap_err().contains("not a size"));
    }

    #[test]
    fn default_is_three_quarters_of_what_is_available() {
        let b = Budget::share_of(16 << 30);
        assert_eq!(b.bytes, 12 << 30);
        assert_eq!(b.describe(), "12 GiB (3/4 of the 16 GiB available)");
        assert!(b.fits(12 << 30) && !b.fits((12 << 30) + 1));
        assert_eq!(Budget::given(400 << 20).describe(), "400 MiB (--memory)");
        assert!(Budget::UNLIMITED.fits(u64::MAX));
    }

    #[test]
    fn mem_available_is_read_in_kib() {
        let info = "MemTotal:       24000000 kB\nMemFree: 1 kB\nMemAvailable:   2000 kB\n";
        assert_eq!(mem_available(info), Some(2000 * 1024));
        assert_eq!(mem_available("MemTotal: 5 kB\n"), None);
    }

    #[test]
    fn available_memory_is_positive_on_linux() {
        if std::path::Path::new("/proc/meminfo").exists() {
            assert!(available_memory().is_some_and(|a| a > 0));
        }
    }
}
