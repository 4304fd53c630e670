//! Read-only access to the dump file's bytes.
//!
//! Small files are copied into memory, large ones are memory-mapped. A mapped
//! file that another process truncates would raise SIGBUS on the next page we
//! touch; a handler turns that into a clear message and exit code 2 instead of
//! a crash, giving the terminal back first when the UI holds it (its saved
//! mode, see [`save_terminal_mode`]). The file is only ever opened for
//! reading.
//!
//! Pipes and devices (`cat dump | heaptui report /dev/stdin`) have no length
//! and may never end (`/dev/zero`): their first 64 KiB are checked for
//! binary data before reading on, and what is read is capped.

use std::cell::UnsafeCell;
use std::fs::File;
use std::io::Read;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicUsize, Ordering};
use std::sync::Once;

use memmap2::{Mmap, UncheckedAdvice};

use super::InputError;

/// Files up to this size are read into memory: immune to truncation, and the
/// copy costs less than the mapping's page faults.
pub const COPY_LIMIT: u64 = 64 << 20;

/// The bytes of a dump file.
pub enum Source {
    Owned(Vec<u8>),
    Mapped(Mmap),
}

impl Source {
    pub fn open(path: &Path) -> Result<Source, InputError> {
        let err = |reason: String| InputError::new(path, reason);
        let meta = std::fs::metadata(path).map_err(|e| err(io_reason(&e)))?;
        if meta.is_dir() {
            return Err(err("is a directory, not a heap dump file".into()));
        }
        let mut file = File::open(path).map_err(|e| err(io_reason(&e)))?;
        if !meta.is_file() {
            return read_stream(&mut file, stream_limit())
                .map(Source::Owned)
                .map_err(err);
        }
        let len = meta.len();
        if len == 0 {
            return Err(err("the file is empty".into()));
        }
        if len <= COPY_LIMIT {
            let mut bytes = Vec::with_capacity(len as usize);
            file.read_to_end(&mut bytes)
                .map_err(|e| err(io_reason(&e)))?;
            if bytes.is_empty() {
                return Err(err("the file is empty".into()));
            }
            return Ok(Source::Owned(bytes));
        }
        install_sigbus_handler();
        remember_mapped_path(path);
        // SAFETY: the map is read-only and private to us. If the file is
        // truncated while mapped, the SIGBUS handler ends the process with a
        // clear message rather than letting it crash.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| err(io_reason(&e)))?;
        // Read front to back once: ask for aggressive read-ahead.
        let _ = map.advise(memmap2::Advice::Sequential);
        Ok(Source::Mapped(map))
    }

    pub fn bytes(&self) -> &[u8] {
        match self {
            Source::Owned(v) => v,
            Source::Mapped(m) => m,
        }
    }

    /// Tells the kernel we are done with a range of the file, so its pages
    /// leave our resident set (they are re-read from the file if touched).
    pub fn release(&self, start: usize, len: usize) {
        if let Source::Mapped(m) = self {
            // Only whole pages inside the range may be dropped.
            let page = 4096;
            let begin = start.div_ceil(page) * page;
            let end = (start + len) / page * page;
            if end > begin {
                // SAFETY: the mapping is read-only and file-backed; dropping
                // its pages only makes later reads fault them in again.
                let _ = unsafe {
                    m.unchecked_advise_range(UncheckedAdvice::DontNeed, begin, end - begin)
                };
            }
        }
    }
}

/// How much of a file [`check_file`] reads: enough to know its format and
/// that it is one heaptui reads.
pub const CHECK_BYTES: usize = 64 << 10;

/// Checks, before the terminal is taken over, that `path` is a dump heaptui
/// can open: it exists and can be read, is not empty, and its first
/// [`CHECK_BYTES`] (decompressed when gzipped) are of a format heaptui reads
/// with a valid header, or hold text dump records. A file no larger than
/// that is imported whole. Pipes and devices are only opened (reading them
/// would consume what the analysis needs). The error is the one line the
/// import would give.
pub fn check_file(path: &Path) -> Result<(), InputError> {
    let err = |reason: String| InputError::new(path, reason);
    let meta = std::fs::metadata(path).map_err(|e| err(io_reason(&e)))?;
    if meta.is_dir() {
        return Err(err("is a directory, not a heap dump file".into()));
    }
    let file = File::open(path).map_err(|e| err(io_reason(&e)))?;
    if !meta.is_file() {
        return Ok(());
    }
    if meta.len() == 0 {
        return Err(err("the file is empty".into()));
    }
    let mut head = Vec::with_capacity(CHECK_BYTES);
    file.take(CHECK_BYTES as u64 + 1)
        .read_to_end(&mut head)
        .map_err(|e| err(io_reason(&e)))?;
    if head.len() <= CHECK_BYTES {
        // The whole file: what the import says is the answer.
        return super::import_bytes(path, &head).map(|_| ());
    }
    head.truncate(CHECK_BYTES);
    if super::gzip::is_gzip(&head) {
        let mut inner = Vec::with_capacity(CHECK_BYTES);
        let read = flate2::read::MultiGzDecoder::new(&head[..])
            .take(CHECK_BYTES as u64)
            .read_to_end(&mut inner);
        match read {
            Ok(_) => {}
            // Only the first compressed bytes were read.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {}
            Err(e) => return Err(err(format!("corrupt gzip data: {e}"))),
        }
        if super::gzip::is_gzip(&inner) {
            return Err(err("gzip inside gzip; decompress it once first".into()));
        }
        if inner.is_empty() {
            return Ok(());
        }
        head = inner;
    }
    match super::detect(&head) {
        crate::model::Format::Rpm => super::rpm::check_head(path, &head),
        crate::model::Format::Hprof => super::hprof::check_header(&head).map_err(err),
        crate::model::Format::Heapsnapshot | crate::model::Format::Gcdump => Ok(()),
    }
}

/// What a pipe or device must show in its first bytes before it is read
/// on: enough to tell text from binary.
const SNIFF: usize = 64 << 10;

/// The most read into memory from a pipe or device (they have no length to
/// check first, and may never end, as `/dev/zero` does): a quarter of the
/// machine's memory, at least 1 GiB.
fn stream_limit() -> u64 {
    // SAFETY: sysconf only reads system configuration.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let memory = if pages > 0 && page > 0 {
        pages as u64 * page as u64
    } else {
        16 << 30
    };
    (memory / 4).max(1 << 30)
}

/// Reads a pipe or device: its first [`SNIFF`] bytes must not be binary
/// (unless they announce a native format, which is binary by design), and
/// no more than `limit` bytes are read. Errors are the reason, one line.
pub fn read_stream(reader: &mut impl Read, limit: u64) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    reader
        .by_ref()
        .take(SNIFF as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| io_reason(&e))?;
    if bytes.is_empty() {
        return Err("the file is empty".into());
    }
    let native =
        super::detect(&bytes) != crate::model::Format::Rpm || bytes.starts_with(b"\x1f\x8b");
    if !native && looks_binary(&bytes) {
        return Err(
            "binary data from a pipe or device, not a heap dump; nothing more was read".into(),
        );
    }
    reader
        .take(limit.saturating_sub(bytes.len() as u64).saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io_reason(&e))?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "a pipe or device longer than {} (the most read into memory from one: a quarter of this machine's memory); save the dump to a file and open that",
            humansize::format_size(limit, humansize::BINARY)
        ));
    }
    Ok(bytes)
}

/// NUL bytes or a high share of control bytes: not text.
fn looks_binary(head: &[u8]) -> bool {
    let control = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0b | 0x0c))
        .count();
    head.contains(&0) || control * 20 > head.len()
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => {
            if e.raw_os_error() == Some(libc::EISDIR) {
                "is a directory, not a heap dump file".into()
            } else {
                e.to_string()
            }
        }
    }
}

/// Set while the TUI owns the terminal, so the SIGBUS handler can give it
/// back before printing.
pub static TERMINAL_IN_USE: AtomicBool = AtomicBool::new(false);

/// The terminal's mode from before the UI made it raw. The SIGBUS handler
/// cannot ask crossterm (it keeps the mode behind a lock), so it is kept
/// here as well, in plain memory a handler may read.
struct SavedMode(UnsafeCell<MaybeUninit<libc::termios>>);

// SAFETY: written only while `SAVED_TTY` is -1, so the handler, which reads
// it only after loading a valid descriptor from `SAVED_TTY`, never sees a
// half-written mode (saving is done once, before any file is mapped).
unsafe impl Sync for SavedMode {}

static SAVED_MODE: SavedMode = SavedMode(UnsafeCell::new(MaybeUninit::uninit()));

/// A descriptor of the terminal whose mode is in `SAVED_MODE` (our own
/// duplicate, never closed while published), or -1.
static SAVED_TTY: AtomicI32 = AtomicI32::new(-1);

/// Remembers the mode of the terminal the UI is about to make raw: standard
/// input when it is a terminal, else `/dev/tty` (the one crossterm makes
/// raw). Call before raw mode is enabled. False when there is no terminal.
pub fn save_terminal_mode() -> bool {
    // SAFETY: isatty only inspects the descriptor.
    if unsafe { libc::isatty(libc::STDIN_FILENO) } == 1 {
        return save_terminal_mode_of(libc::STDIN_FILENO);
    }
    match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    {
        Ok(tty) => save_terminal_mode_of(tty.as_raw_fd()),
        Err(_) => false,
    }
}

/// Remembers the mode of terminal `fd`. A duplicate of `fd` is kept for
/// [`restore_terminal_mode`], so the caller may close its own.
pub fn save_terminal_mode_of(fd: RawFd) -> bool {
    let mut mode = MaybeUninit::<libc::termios>::uninit();
    // SAFETY: tcgetattr fills `mode` when it returns 0; fcntl duplicates a
    // descriptor we were given.
    unsafe {
        if libc::tcgetattr(fd, mode.as_mut_ptr()) != 0 {
            return false;
        }
        let dup = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0);
        if dup < 0 {
            return false;
        }
        // Unpublish, write, publish (see `SavedMode`).
        let old = SAVED_TTY.swap(-1, Ordering::SeqCst);
        (*SAVED_MODE.0.get()).write(mode.assume_init());
        SAVED_TTY.store(dup, Ordering::SeqCst);
        if old >= 0 {
            libc::close(old);
        }
    }
    true
}

/// Puts the saved terminal mode back. Async-signal-safe (one tcsetattr),
/// for the SIGBUS handler. False when nothing was saved or it failed.
pub fn restore_terminal_mode() -> bool {
    let fd = SAVED_TTY.load(Ordering::SeqCst);
    if fd < 0 {
        return false;
    }
    // SAFETY: the mode was fully written before `fd` was published.
    unsafe { libc::tcsetattr(fd, libc::TCSANOW, (*SAVED_MODE.0.get()).as_ptr()) == 0 }
}

static SIGBUS_ONCE: Once = Once::new();

/// The path of the most recently mapped file, for the SIGBUS message. The
/// bytes are leaked (one small allocation per mapped file) so the handler
/// can read them without locks or allocation.
static MAPPED_PATH: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static MAPPED_PATH_LEN: AtomicUsize = AtomicUsize::new(0);

fn remember_mapped_path(path: &Path) {
    let bytes: &'static mut [u8] = Box::leak(
        path.as_os_str()
            .as_encoded_bytes()
            .to_vec()
            .into_boxed_slice(),
    );
    // Length first set to 0 so a signal in between never reads a stale pair.
    MAPPED_PATH_LEN.store(0, Ordering::SeqCst);
    MAPPED_PATH.store(bytes.as_mut_ptr(), Ordering::SeqCst);
    MAPPED_PATH_LEN.store(bytes.len(), Ordering::SeqCst);
}

fn install_sigbus_handler() {
    SIGBUS_ONCE.call_once(|| {
        // SAFETY: installs an async-signal-safe handler (tcsetattr, write
        // and _exit only).
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
        }
    });
}

/// Set by the first thread that runs the SIGBUS handler.
static SIGBUS_HANDLING: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigbus(_: libc::c_int, _: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // Mouse reporting off, main screen, cursor shown.
    const RESTORE: &[u8] =
        b"\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1015l\x1b[?1049l\x1b[?25h\r\n";
    const PREFIX: &[u8] = b"heaptui: ";
    const MSG: &[u8] =
        b"the dump file shrank while it was being read (truncated by another process); nothing was written\n";
    // The parser's threads touch the mapping in parallel: several can fault
    // at once, and each runs this handler. Only the first speaks (their
    // writes interleaved into "heaptui: heaptui: …"); the others wait for
    // its _exit, which ends every thread.
    if SIGBUS_HANDLING.swap(true, Ordering::SeqCst) {
        loop {
            // SAFETY: pause(2) is async-signal-safe.
            unsafe { libc::pause() };
        }
    }
    // SAFETY: tcsetattr(3), write(2) and _exit(2) are async-signal-safe;
    // the path bytes are leaked, never freed, and published before the
    // length.
    unsafe {
        if TERMINAL_IN_USE.load(Ordering::Relaxed) {
            // Cooked mode first (echo, line editing, output newline
            // translation), so the shell the user returns to works and the
            // message below ends its lines properly.
            restore_terminal_mode();
            libc::write(1, RESTORE.as_ptr().cast(), RESTORE.len());
        }
        libc::write(2, PREFIX.as_ptr().cast(), PREFIX.len());
        let len = MAPPED_PATH_LEN.load(Ordering::SeqCst);
        let ptr = MAPPED_PATH.load(Ordering::SeqCst);
        if len > 0 && !ptr.is_null() {
            libc::write(2, ptr.cast(), len);
            libc::write(2, b": ".as_ptr().cast(), 2);
        }
        libc::write(2, MSG.as_ptr().cast(), MSG.len());
        libc::_exit(2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_of_text_is_read_whole() {
        let text = b"o 1 1 8\no 2 1 8 1\n".repeat(10_000);
        assert_eq!(read_stream(&mut &text[..], 1 << 20), Ok(text));
    }

    #[test]
    fn an_endless_stream_stops_at_the_limit() {
        let err = read_stream(&mut std::io::repeat(b'o'), 1 << 20).unwrap_err();
        assert!(err.contains("longer than 1 MiB"), "{err}");
        // Exactly the limit is fine.
        let text = vec![b'o'; 1 << 20];
        assert!(read_stream(&mut &text[..], 1 << 20).is_ok());
    }

    #[test]
    fn a_binary_stream_is_refused_after_its_first_bytes() {
        let mut zeros = std::io::repeat(0).take(1 << 30);
        let err = read_stream(&mut zeros, 1 << 40).unwrap_err();
        assert!(err.starts_with("binary data"), "{err}");
        // Only the sniffed bytes were read.
        assert_eq!(zeros.limit(), (1 << 30) - SNIFF as u64);
    }

    #[test]
    fn native_formats_are_binary_by_design() {
        let mut hprof = b"JAVA PROFILE 1.0.2\0".to_vec();
        hprof.extend([0u8; 100]);
        assert_eq!(read_stream(&mut &hprof[..], 1 << 20), Ok(hprof));
    }

    #[test]
    fn an_empty_stream_is_empty() {
        assert_eq!(
            read_stream(&mut &b""[..], 1 << 20),
            Err("the file is empty".to_string())
        );
    }
}
