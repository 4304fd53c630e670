//! Arrays on disk: when an analysis would not fit its memory budget
//! ([`super::budget`]), its big arrays are written to files and mapped
//! read-only in their place ([`Spill::array`]). Readers see the same
//! slices; the pages they touch are the kernel's to drop, and
//! [`release_all`] drops them at the end of each phase, so the resident set
//! holds only what the phase running reads.
//!
//! A spill file is unlinked the moment it is created: it lives as long as
//! its map and goes with the process however that ends (exit, signal,
//! crash). One killed between the two calls keeps its name,
//! `.spill-PID-N`, and the next spill in that directory removes it once
//! its process is gone. Each file's space is reserved (`posix_fallocate`)
//! and written before it is mapped, so a full disk is a write error, never
//! a SIGBUS at a later read; a spill that fails leaves its array in memory.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use bytemuck::Pod;
use memmap2::{Mmap, MmapMut};

use super::{map, Array, Scratch, Words};

/// One spill map alive (weakly: an array dropped frees its file).
enum Entry {
    /// A read-only map (a spilled [`Array`]).
    Read(Weak<Mmap>),
    /// A writable map (a spilled [`Scratch`]): its address and length,
    /// taken when it was made, so that releasing its pages never forms a
    /// reference to elements a writer may hold.
    Write {
        alive: Weak<MmapMut>,
        start: usize,
        len: usize,
    },
}

/// Every spill map alive, for [`release_all`].
static MAPS: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

static DIR: OnceLock<PathBuf> = OnceLock::new();

/// Sets the directory spill files go to (the reopen cache's); the first
/// call wins.
pub fn set_dir(dir: PathBuf) {
    let _ = DIR.set(dir);
}

/// The directory spill files go to: the one [`set_dir`] gave, else the
/// system's temporary directory.
pub fn dir() -> PathBuf {
    DIR.get().cloned().unwrap_or_else(std::env::temp_dir)
}

/// Drops the resident pages of every spilled array: what a phase read
/// leaves the resident set and is read back from the page cache (or the
/// disk) by the next one that needs it. Cheap when nothing was spilled.
pub fn release_all() {
    let Ok(mut maps) = MAPS.lock() else {
        return;
    };
    maps.retain(|e| match e {
        Entry::Read(m) => match m.upgrade() {
            Some(m) => {
                map::release_pages(&m, 0, m.len());
                true
            }
            None => false,
        },
        Entry::Write { alive, start, len } => match alive.upgrade() {
            Some(_held) => {
                // The map is alive (held here) and shared: only its pages go.
                super::scratch::release_region(*start, *len);
                true
            }
            None => false,
        },
    });
}

/// Has [`release_all`] drop `map`'s pages too (a reopened cache file over
/// the memory budget), for as long as it is mapped.
pub fn track(map: &Arc<Mmap>) {
    register(Entry::Read(Arc::downgrade(map)));
}

fn register(entry: Entry) {
    if let Ok(mut maps) = MAPS.lock() {
        maps.push(entry);
    }
}

/// A spilled [`Scratch`]'s map as an [`Array`] of its first `len`
/// elements, without a copy (the registry's entry for the map stays).
pub(super) fn seal<T: Pod>(m: Arc<MmapMut>, len: usize) -> Array<T> {
    Array::written(m, len).expect("a scratch map holds its elements")
}

/// Where one analysis's arrays go, and how that went.
#[derive(Debug)]
pub struct Spill {
    dir: PathBuf,
    /// Bytes written so far.
    written: AtomicU64,
    /// Files made so far (their names' last part).
    files: AtomicU64,
    /// The first failure, after which nothing more is spilled.
    failed: Mutex<Option<String>>,
}

impl Spill {
    /// Spill files in `dir` (made if missing), for about `need` bytes:
    /// refused with a message (that does not name the directory) when it
    /// cannot be made or its file system has not that much free (with a
    /// sixteenth to spare).
    pub fn open(dir: &Path, need: u64) -> Result<Spill, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot make the directory: {e}"))?;
        let handle = File::open(dir).map_err(|e| format!("cannot open the directory: {e}"))?;
        let free = map::free_disk_bytes(&handle);
        if !room_for(free, need) {
            return Err(format!(
                "its disk has {} free, the spill needs about {}",
                humansize::format_size(free, humansize::BINARY),
                humansize::format_size(need, humansize::BINARY)
            ));
        }
        remove_stale(dir);
        Ok(Spill {
            dir: dir.to_path_buf(),
            written: AtomicU64::new(0),
            files: AtomicU64::new(0),
            failed: Mutex::new(None),
        })
    }

    /// The directory the files go to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Bytes spilled so far (the full size of spilled scratch arrays).
    pub fn written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }

    /// Spill files made so far.
    pub fn files(&self) -> u64 {
        self.files.load(Ordering::Relaxed)
    }

    /// `len` zeroed elements in a new spill file, mapped writable
    /// ([`Scratch`]); in memory when `len` is 0, after a failure, or when
    /// the file cannot be made (the failure is recorded: a full disk fails
    /// here, when the space is reserved).
    pub fn scratch<T: Pod>(&self, len: usize) -> Scratch<T> {
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        if bytes == 0 || self.failure().is_some() {
            return Scratch::in_memory(len);
        }
        let made = self
            .new_file(bytes as u64)
            .and_then(|f| map::map_file_mut(&f));
        let map = match made {
            Ok(m) => m,
            Err(e) => {
                self.fail(format!("cannot make a spill file: {e}"));
                return Scratch::in_memory(len);
            }
        };
        let (start, map_len) = (map.as_ptr() as usize, map.len());
        match Scratch::in_map(map, len) {
            Some(s) => {
                if let Some(m) = s.map() {
                    register(Entry::Write {
                        alive: Arc::downgrade(m),
                        start,
                        len: map_len,
                    });
                }
                self.written.fetch_add(bytes as u64, Ordering::Relaxed);
                s
            }
            None => {
                self.fail("a spill file's map was short or misaligned".into());
                Scratch::in_memory(len)
            }
        }
    }

    /// Why spilling stopped, if it did (the arrays not yet spilled then
    /// stay in memory).
    pub fn failure(&self) -> Option<String> {
        self.failed.lock().ok().and_then(|f| f.clone())
    }

    /// Puts `a` on disk: its elements written to a spill file and mapped
    /// in its place (the vector freed). Left as it is when it is empty,
    /// already mapped, or after a failure (recorded, see [`Spill::failure`]).
    pub fn array<T: Pod>(&self, a: &mut Array<T>) {
        if a.is_empty() || a.is_mapped() || self.failure().is_some() {
            return;
        }
        let bytes: &[u8] = bytemuck::cast_slice(a.as_slice());
        match self.write_mapped(bytes) {
            Ok(m) => match Array::mapped(&m, 0, a.len()) {
                Some(on_disk) => {
                    self.written
                        .fetch_add(bytes.len() as u64, Ordering::Relaxed);
                    *a = on_disk;
                }
                None => self.fail("a spill file's map was short or misaligned".into()),
            },
            Err(e) => self.fail(format!("cannot write a spill file: {e}")),
        }
    }

    /// [`Spill::array`] for every form of [`Words`].
    pub fn words(&self, w: &mut Words) {
        match w {
            Words::Narrow(a) => self.array(a),
            Words::Wide(a) => self.array(a),
            Words::Short {
                bases,
                within,
                side,
            } => {
                self.array(bases);
                self.array(within);
                self.array(side);
            }
        }
    }

    fn fail(&self, why: String) {
        if let Ok(mut f) = self.failed.lock() {
            f.get_or_insert(why);
        }
    }

    /// `bytes` in a new, already unlinked file, its space reserved first,
    /// mapped read-only.
    fn write_mapped(&self, bytes: &[u8]) -> io::Result<Arc<Mmap>> {
        let mut file = self.new_file(bytes.len() as u64)?;
        file.write_all(bytes)?;
        let m = Arc::new(map::map_file(&file)?);
        if m.len() != bytes.len() {
            return Err(io::Error::other("the spill file changed size"));
        }
        register(Entry::Read(Arc::downgrade(&m)));
        Ok(m)
    }

    /// A new spill file, already unlinked, with `len` bytes reserved.
    fn new_file(&self, len: u64) -> io::Result<File> {
        let n = self.files.fetch_add(1, Ordering::Relaxed);
        let path = self.dir.join(format!(".spill-{}-{n}", std::process::id()));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        // Unlinked at once: the file lives as long as its map.
        std::fs::remove_file(&path)?;
        reserve(&file, len)?;
        // Where the file system cannot reserve, the file is given its size
        // (sparse) so that its map has no page past the end.
        if file.metadata()?.len() < len {
            file.set_len(len)?;
        }
        Ok(file)
    }
}

/// Whether `free` bytes hold `need` with a sixteenth to spare.
fn room_for(free: u64, need: u64) -> bool {
    free >= need.saturating_add(need / 16)
}

/// Reserves `len` bytes of disk for `file` (posix_fallocate): a full disk
/// fails here. Where the file system cannot reserve, the writes that
/// follow still report a full disk as an error.
fn reserve(file: &File, len: u64) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let Ok(len) = libc::off_t::try_from(len) else {
        return Err(io::Error::other("a spill file too large for this system"));
    };
    // SAFETY: posix_fallocate only allocates blocks for a descriptor we own.
    let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len) };
    match rc {
        0 | libc::EOPNOTSUPP | libc::EINVAL => Ok(()),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

/// Removes spill files of processes that are gone (killed between making
/// a file and unlinking it).
fn remove_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    if !Path::new("/proc/self").exists() {
        return;
    }
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(".spill-")) else {
            continue;
        };
        let owner = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
        if owner.is_none_or(|p| !Path::new("/proc").join(p.to_string()).exists()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spilled_array_reads_as_before_and_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let s = Spill::open(dir.path(), 1 << 20).unwrap();
        let v: Vec<u64> = (0..10_000u64).map(|i| i * i).collect();
        let mut a = Array::from(v.clone());
        s.array(&mut a);
        assert!(a.is_mapped(), "{:?}", s.failure());
        assert_eq!(&a[..], &v[..]);
        assert_eq!(s.written(), 80_000);
        let mut w = Words::from(vec![1u64, 2, 3]);
        s.words(&mut w);
        assert!(w.is_mapped());
        assert_eq!(w.to_vec(), [1, 2, 3]);
        release_all();
        assert_eq!(a.iter().sum::<u64>(), v.iter().sum::<u64>(), "read back");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(names.is_empty(), "spill files are unlinked: {names:?}");
        let mut empty: Array<u32> = Array::default();
        s.array(&mut empty);
        assert!(!empty.is_mapped());
    }

    #[test]
    fn an_unusable_directory_is_refused_with_its_reason() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let e = Spill::open(&file.path().join("sub"), 10).unwrap_err();
        assert!(e.starts_with("cannot make the directory: "), "{e}");
        assert!(room_for(1_700, 1_600) && !room_for(1_699, 1_600));
        assert!(!room_for(0, u64::MAX));
    }

    #[test]
    fn a_failed_spill_keeps_the_array_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let s = Spill::open(dir.path(), 0).unwrap();
        let gone = dir.path().to_path_buf();
        drop(dir);
        assert!(!gone.exists());
        let mut a = Array::from(vec![7u32; 100]);
        s.array(&mut a);
        assert!(!a.is_mapped());
        assert_eq!(&a[..], &[7u32; 100][..]);
        assert!(s
            .failure()
            .unwrap()
            .starts_with("cannot write a spill file: "));
    }

    #[test]
    fn stale_files_of_dead_processes_go() {
        let dir = tempfile::tempdir().unwrap();
        let dead = dir.path().join(".spill-4000000000-0");
        let mine = dir.path().join(format!(".spill-{}-99", std::process::id()));
        let other = dir.path().join("x.cache");
        for p in [&dead, &mine, &other] {
            std::fs::write(p, b"x").unwrap();
        }
        let _s = Spill::open(dir.path(), 0).unwrap();
        assert!(!dead.exists() && mine.exists() && other.exists());
    }
}
