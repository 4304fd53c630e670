//! The real binary in a pseudo-terminal, shared by `tests/cli/terminal.rs` and
//! the `pty_latency` example: open a pty, start heaptui on it as its
//! controlling terminal, collect what it writes, and paint that byte
//! stream onto a grid of cells (enough of a VT100 for ratatui's output:
//! cursor positioning and text; other sequences are skipped).
#![allow(unsafe_code)] // libc calls

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// A new pseudo-terminal of `rows` × `cols`: (master, slave).
pub fn openpty(rows: u16, cols: u16) -> (OwnedFd, OwnedFd) {
    let (mut master, mut slave) = (0, 0);
    let size = libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: plain out-parameters; on success both descriptors are ours.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &size,
        )
    };
    assert_eq!(rc, 0, "openpty failed");
    // SAFETY: freshly opened descriptors, owned from here on.
    unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

/// A screen painted incrementally: bytes are fed as they arrive, and an
/// escape sequence or UTF-8 character cut between two reads is completed
/// by the next one.
pub struct Screen {
    grid: Vec<Vec<char>>,
    rows: usize,
    cols: usize,
    r: usize,
    c: usize,
    pending: Vec<u8>,
}

impl Screen {
    pub fn new(rows: usize, cols: usize) -> Screen {
        Screen {
            grid: vec![vec![' '; cols]; rows],
            rows,
            cols,
            r: 0,
            c: 0,
            pending: Vec::new(),
        }
    }

    /// Paints `bytes` (after whatever an earlier call left incomplete).
    pub fn feed(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        let pending = std::mem::take(&mut self.pending);
        let used = self.paint(&pending);
        self.pending = pending[used..].to_vec();
    }

    /// Paints complete sequences from `b`; returns how many bytes it used.
    fn paint(&mut self, b: &[u8]) -> usize {
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                0x1b => {
                    let Some(&next) = b.get(i + 1) else {
                        return i;
                    };
                    if next != b'[' {
                        i += 2;
                        continue;
                    }
                    let Some(len) = b[i + 2..]
                        .iter()
                        .position(|x| x.is_ascii_alphabetic() || *x == b'~' || *x == b'@')
                    else {
                        return i;
                    };
                    let params = String::from_utf8_lossy(&b[i + 2..i + 2 + len]).into_owned();
                    self.csi(&params, b[i + 2 + len]);
                    i += len + 3;
                }
                b'\r' => {
                    self.c = 0;
                    i += 1;
                }
                b'\n' => {
                    self.r = (self.r + 1).min(self.rows - 1);
                    i += 1;
                }
                x if x < b' ' => i += 1,
                x => {
                    let len = match x {
                        0xc0..=0xdf => 2,
                        0xe0..=0xef => 3,
                        0xf0..=0xf7 => 4,
                        _ => 1,
                    };
                    if i + len > b.len() {
                        return i;
                    }
                    let ch = std::str::from_utf8(&b[i..i + len])
                        .ok()
                        .and_then(|s| s.chars().next())
                        .unwrap_or('\u{fffd}');
                    if self.c < self.cols {
                        self.grid[self.r][self.c] = ch;
                    }
                    self.c += 1;
                    i += len;
                }
            }
        }
        i
    }

    fn csi(&mut self, params: &str, fin: u8) {
        if fin == b'H' {
            let mut it = params.split(';').map(|p| p.parse::<usize>().unwrap_or(1));
            self.r = it.next().unwrap_or(1).saturating_sub(1).min(self.rows - 1);
            self.c = it.next().unwrap_or(1).saturating_sub(1).min(self.cols - 1);
        } else if fin == b'J' && params == "2" {
            self.grid = vec![vec![' '; self.cols]; self.rows];
        }
    }

    pub fn text(&self) -> String {
        self.grid
            .iter()
            .map(|l| l.iter().collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The screen a whole byte stream paints.
pub fn screen(bytes: &[u8], rows: usize, cols: usize) -> String {
    let mut s = Screen::new(rows, cols);
    s.feed(bytes);
    s.text()
}

/// What a running heaptui has written to its terminal so far: every byte,
/// the screen they paint, and when the last byte arrived. Readers wait on
/// `changed`.
pub struct Output {
    pub bytes: Vec<u8>,
    pub screen: Screen,
    pub last: Instant,
    pub closed: bool,
}

pub type Shared = Arc<(Mutex<Output>, Condvar)>;

/// `binary` started with `args` and `envs` on the pseudo-terminal whose
/// other side is `slave` (its controlling terminal, `rows` × `cols`), and
/// everything it writes, collected by a thread reading `master`.
pub fn start(
    binary: &Path,
    args: &[&std::ffi::OsStr],
    envs: &[(&str, &str)],
    master: &OwnedFd,
    slave: &OwnedFd,
    (rows, cols): (usize, usize),
) -> (Child, Shared) {
    let mut cmd = Command::new(binary);
    cmd.args(args)
        .envs(envs.iter().copied())
        .env("LANG", "C.UTF-8")
        .env("TERM", "xterm-256color")
        .env_remove("NO_COLOR")
        .stdin(Stdio::from(slave.try_clone().unwrap()))
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave.try_clone().unwrap()));
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            libc::ioctl(0, libc::TIOCSCTTY, 0);
            Ok(())
        });
    }
    let child = cmd.spawn().expect("start heaptui");
    let shared: Shared = Arc::new((
        Mutex::new(Output {
            bytes: Vec::new(),
            screen: Screen::new(rows, cols),
            last: Instant::now(),
            closed: false,
        }),
        Condvar::new(),
    ));
    let mut reader = std::fs::File::from(master.try_clone().unwrap());
    let sink = shared.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 65536];
        loop {
            let n = reader.read(&mut buf).unwrap_or(0);
            let (lock, cvar) = &*sink;
            let mut out = lock.lock().unwrap();
            if n == 0 {
                out.closed = true;
                cvar.notify_all();
                break;
            }
            out.bytes.extend_from_slice(&buf[..n]);
            out.screen.feed(&buf[..n]);
            out.last = Instant::now();
            cvar.notify_all();
        }
    });
    (child, shared)
}

/// Waits until the screen contains `needle`; the time it appeared, or None
/// after `timeout` (or when the terminal closed first).
pub fn wait_for_screen(out: &Shared, needle: &str, timeout: Duration) -> Option<Instant> {
    let deadline = Instant::now() + timeout;
    let (lock, cvar) = &**out;
    let mut guard = lock.lock().unwrap();
    loop {
        if guard.screen.text().contains(needle) {
            return Some(guard.last);
        }
        let now = Instant::now();
        if now >= deadline || guard.closed {
            return None;
        }
        guard = cvar.wait_timeout(guard, deadline - now).unwrap().0;
    }
}

/// The screen as text now.
pub fn text(out: &Shared) -> String {
    out.0.lock().unwrap().screen.text()
}

/// Every byte written so far, lossily as text.
pub fn raw(out: &Shared) -> String {
    String::from_utf8_lossy(&out.0.lock().unwrap().bytes).into_owned()
}
