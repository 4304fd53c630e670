//! The guard over mapped dump files: a file another process truncates
//! raises SIGBUS on the next page touched; the handler gives the terminal
//! back (its saved mode, when the UI holds it) and ends the process with a
//! clear message and exit code 2 instead of a crash.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicUsize, Ordering};
use std::sync::Once;

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

/// Whether the most recently mapped file is a reopen cache (the message
/// then tells how to get past it) rather than a dump.
static MAPPED_IS_CACHE: AtomicBool = AtomicBool::new(false);

/// Names the reopen cache file just mapped in the SIGBUS message.
pub fn remember_mapped_cache(path: &Path) {
    remember_mapped_path(path);
    MAPPED_IS_CACHE.store(true, Ordering::SeqCst);
}

/// Records the path of the dump being mapped, for the SIGBUS message if it shrinks.
pub fn remember_mapped_path(path: &Path) {
    MAPPED_IS_CACHE.store(false, Ordering::SeqCst);
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

/// Installs the SIGBUS handler that names the mapped file that shrank (once per process).
pub fn install_sigbus_handler() {
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
    const CACHE_MSG: &[u8] =
        b"the reopen cache file shrank while it was being read (truncated by another process); run again, or with --no-cache\n";
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
        let msg = if MAPPED_IS_CACHE.load(Ordering::SeqCst) {
            CACHE_MSG
        } else {
            MSG
        };
        libc::write(2, msg.as_ptr().cast(), msg.len());
        libc::_exit(2);
    }
}
