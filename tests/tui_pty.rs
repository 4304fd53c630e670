//! The real binary in a pseudo-terminal: it starts on the demo heap, answers
//! keys, and gives the terminal back when quitting, and also when the dump
//! it maps is truncated under it (SIGBUS).

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn openpty(rows: u16, cols: u16) -> (OwnedFd, OwnedFd) {
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

/// The screen the byte stream paints: enough of a VT100 for ratatui's
/// output (cursor positioning, text; other sequences skipped).
fn screen(bytes: &[u8], rows: usize, cols: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut grid = vec![vec![' '; cols]; rows];
    let (mut r, mut c) = (0usize, 0usize);
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '\x1b' => {
                if chars.next() != Some('[') {
                    continue;
                }
                let mut params = String::new();
                let mut fin = ' ';
                for x in chars.by_ref() {
                    if x.is_ascii_alphabetic() || x == '~' || x == '@' {
                        fin = x;
                        break;
                    }
                    params.push(x);
                }
                if fin == 'H' {
                    let mut it = params.split(';').map(|p| p.parse::<usize>().unwrap_or(1));
                    r = it.next().unwrap_or(1).saturating_sub(1).min(rows - 1);
                    c = it.next().unwrap_or(1).saturating_sub(1).min(cols - 1);
                } else if fin == 'J' && params == "2" {
                    grid = vec![vec![' '; cols]; rows];
                }
            }
            '\r' => c = 0,
            '\n' => r = (r + 1).min(rows - 1),
            ch if ch >= ' ' => {
                if c < cols {
                    grid[r][c] = ch;
                }
                c += 1;
            }
            _ => {}
        }
    }
    grid.into_iter()
        .map(|l| l.into_iter().collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

fn wait_for(out: &Arc<Mutex<Vec<u8>>>, needle: &str, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let text = screen(&out.lock().unwrap(), 24, 80);
        if text.contains(needle) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: {needle:?} never appeared; output so far:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// heaptui started with `arg` on the pseudo-terminal whose other side is
/// `slave` (its controlling terminal), and everything it writes to the
/// terminal, collected by a thread reading `master`.
fn start_on_pty(
    arg: &std::ffi::OsStr,
    master: &OwnedFd,
    slave: &OwnedFd,
) -> (Child, Arc<Mutex<Vec<u8>>>) {
    start_on_pty_with(arg, &[], master, slave)
}

/// [`start_on_pty`] with extra environment variables.
fn start_on_pty_with(
    arg: &std::ffi::OsStr,
    envs: &[(&str, &str)],
    master: &OwnedFd,
    slave: &OwnedFd,
) -> (Child, Arc<Mutex<Vec<u8>>>) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_heaptui"));
    cmd.arg(arg)
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
    let out = Arc::new(Mutex::new(Vec::new()));
    let mut reader = std::fs::File::from(master.try_clone().unwrap());
    let sink = out.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    (child, out)
}

/// The child's exit status, waiting at most 20 s.
fn wait_exit(child: &mut Child, what: &str) -> ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_real_binary_runs_in_a_terminal_and_quits_cleanly() {
    let (master, slave) = openpty(24, 80);
    let (mut child, out) = start_on_pty("--demo".as_ref(), &master, &slave);
    drop(slave);
    let mut writer = std::fs::File::from(master);

    wait_for(&out, "Overview", "first frame");
    wait_for(&out, "ready", "analysis of the demo");
    writer.write_all(b"2").unwrap();
    wait_for(&out, "Dominators [Tree]", "pane switch");
    wait_for(&out, "ImageCache", "dominator rows");
    writer.write_all(b"?").unwrap();
    wait_for(&out, "Keys (from the key table", "help");
    writer.write_all(b"x").unwrap();
    writer.write_all(b"q").unwrap();

    let status = wait_exit(&mut child, "heaptui did not quit on q");
    assert!(status.success(), "exit status {status:?}");
    std::thread::sleep(Duration::from_millis(100));
    let text = String::from_utf8_lossy(&out.lock().unwrap()).to_string();
    // The alternate screen was entered and left again.
    assert!(text.contains("\x1b[?1049h"), "entered the alternate screen");
    assert!(text.contains("\x1b[?1049l"), "left the alternate screen");
    // Mouse reporting was switched on, then off again.
    assert!(
        text.contains("\x1b[?1000h") && text.contains("\x1b[?1000l"),
        "mouse capture released"
    );
}

#[test]
fn a_missing_file_fails_before_the_screen_changes() {
    let (master, slave) = openpty(24, 80);
    let out = Command::new(env!("CARGO_BIN_EXE_heaptui"))
        .arg("/nonexistent/heap.txt")
        .stdin(Stdio::from(slave.try_clone().unwrap()))
        .stdout(Stdio::from(slave))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    drop(master);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim(), "heaptui: /nonexistent/heap.txt: no such file");
}

fn termios(fd: &OwnedFd) -> libc::termios {
    use std::os::fd::AsRawFd;
    let mut t = std::mem::MaybeUninit::<libc::termios>::uninit();
    // SAFETY: tcgetattr fills `t` on success, which is asserted.
    unsafe {
        assert_eq!(libc::tcgetattr(fd.as_raw_fd(), t.as_mut_ptr()), 0);
        t.assume_init()
    }
}

fn cooked(t: &libc::termios) -> bool {
    t.c_lflag & libc::ICANON != 0 && t.c_lflag & libc::ECHO != 0
}

#[test]
fn the_saved_terminal_mode_is_restored() {
    use heaptui::import::source::{restore_terminal_mode, save_terminal_mode_of};
    use std::os::fd::AsRawFd;
    let (_master, slave) = openpty(24, 80);
    let before = termios(&slave);
    assert!(cooked(&before), "a new pty starts cooked");
    assert!(save_terminal_mode_of(slave.as_raw_fd()));
    let mut raw = before;
    // SAFETY: plain struct manipulation and a tcsetattr on our own pty.
    unsafe {
        libc::cfmakeraw(&mut raw);
        assert_eq!(libc::tcsetattr(slave.as_raw_fd(), libc::TCSANOW, &raw), 0);
    }
    assert!(!cooked(&termios(&slave)));
    assert!(restore_terminal_mode());
    let after = termios(&slave);
    assert!(cooked(&after));
    assert_eq!(
        (after.c_iflag, after.c_oflag, after.c_lflag),
        (before.c_iflag, before.c_oflag, before.c_lflag)
    );
    // A non-terminal has no mode to save.
    let file = tempfile::tempfile().unwrap();
    assert!(!save_terminal_mode_of(file.as_raw_fd()));
}

#[test]
fn a_dump_truncated_while_mapped_leaves_the_terminal_cooked() {
    // A dump far over the copy limit, so it is mapped: 64 KiB of text (the
    // parser's binary check reads that much), then a sparse hole of 4 GiB
    // that costs no disk and takes the parser seconds to walk. It is cut
    // as soon as the process maps it: the parser's next page fault raises
    // SIGBUS, deterministically (it cannot finish in between).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shrinking.txt");
    let mut text = b"t 1 T\no 1 1 8\nr 1 1 0\n".to_vec();
    text.resize(64 << 10, b' ');
    text.push(b'\n');
    std::fs::write(&path, &text).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(4 << 30).unwrap();

    let (master, slave) = openpty(24, 80);
    assert!(cooked(&termios(&slave)), "a new pty starts cooked");
    let (mut child, out) = start_on_pty(path.as_os_str(), &master, &slave);

    wait_for(&out, "Overview", "first frame");
    assert!(!cooked(&termios(&slave)), "the UI runs in raw mode");
    let maps = format!("/proc/{}/maps", child.id());
    let name = path.display().to_string();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(&maps)
        .unwrap_or_default()
        .contains(&name)
    {
        assert!(Instant::now() < deadline, "the dump was never mapped");
        assert!(child.try_wait().unwrap().is_none(), "heaptui ended early");
        std::thread::sleep(Duration::from_millis(1));
    }
    file.set_len(0).unwrap();

    let status = wait_exit(&mut child, "heaptui did not end on SIGBUS");
    std::thread::sleep(Duration::from_millis(100));
    let text = String::from_utf8_lossy(&out.lock().unwrap()).to_string();
    assert_eq!(status.code(), Some(2), "{status:?}\n{text}");
    // Cooked again: echo and line editing for the shell that comes back.
    assert!(
        cooked(&termios(&slave)),
        "the terminal was left in raw mode"
    );
    assert!(text.contains("\x1b[?1049l"), "left the alternate screen");
    // The message, its newline translated to CR LF by the restored mode.
    let message = format!(
        "heaptui: {name}: the dump file shrank while it was being read \
         (truncated by another process); nothing was written\r\n"
    );
    assert!(text.contains(&message), "{text:?}");
}

#[test]
fn sigterm_exits_143_with_the_terminal_restored() {
    let (master, slave) = openpty(24, 80);
    let (mut child, out) = start_on_pty("--demo".as_ref(), &master, &slave);
    wait_for(&out, "ready", "analysis of the demo");
    assert!(!cooked(&termios(&slave)), "the UI runs in raw mode");
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let status = wait_exit(&mut child, "heaptui did not end on SIGTERM");
    std::thread::sleep(Duration::from_millis(100));
    let text = String::from_utf8_lossy(&out.lock().unwrap()).to_string();
    assert_eq!(status.code(), Some(143), "{status:?}");
    assert!(
        cooked(&termios(&slave)),
        "the terminal was left in raw mode"
    );
    assert!(text.contains("\x1b[?1049l"), "left the alternate screen");
    assert!(text.contains("\x1b[?1000l"), "mouse capture released");
}

#[test]
fn a_worker_panic_shows_an_error_screen_and_exits_101() {
    // The hook that injects the panic exists in debug builds only.
    if !cfg!(debug_assertions) {
        return;
    }
    let (master, slave) = openpty(24, 80);
    let (mut child, out) = start_on_pty_with(
        "--demo".as_ref(),
        &[("HEAPTUI_TEST_WORKER_PANIC", "1")],
        &master,
        &slave,
    );
    wait_for(&out, "Analysis failed", "the error screen");
    wait_for(
        &out,
        "injected by HEAPTUI_TEST_WORKER_PANIC",
        "the panic message",
    );
    let mut writer = std::fs::File::from(master.try_clone().unwrap());
    writer.write_all(b"q").unwrap();
    let status = wait_exit(&mut child, "heaptui did not quit after the panic");
    std::thread::sleep(Duration::from_millis(100));
    let text = String::from_utf8_lossy(&out.lock().unwrap()).to_string();
    assert_eq!(status.code(), Some(101), "{status:?}");
    assert!(
        cooked(&termios(&slave)),
        "the terminal was left in raw mode"
    );
    // Restored once, then the message again for the scrollback.
    assert_eq!(text.matches("\x1b[?1049l").count(), 1, "{text:?}");
    let left = text.rfind("\x1b[?1049l").unwrap();
    assert!(
        text[left..].contains("the analysis failed (internal error): injected"),
        "{text:?}"
    );
}

#[test]
fn sigusr1_is_raised_again_after_the_terminal_is_restored() {
    use std::os::unix::process::ExitStatusExt;
    let (master, slave) = openpty(24, 80);
    let (mut child, out) = start_on_pty("--demo".as_ref(), &master, &slave);
    wait_for(&out, "ready", "analysis of the demo");
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGUSR1) };
    let status = wait_exit(&mut child, "heaptui did not end on SIGUSR1");
    std::thread::sleep(Duration::from_millis(100));
    let text = String::from_utf8_lossy(&out.lock().unwrap()).to_string();
    assert_eq!(status.signal(), Some(libc::SIGUSR1), "{status:?}");
    assert!(
        cooked(&termios(&slave)),
        "the terminal was left in raw mode"
    );
    assert!(text.contains("\x1b[?1049l"), "left the alternate screen");
}
