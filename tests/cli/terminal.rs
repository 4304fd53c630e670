//! The real binary in a pseudo-terminal: it starts on the demo heap, answers
//! keys, and gives the terminal back when quitting, and also when the dump
//! it maps is truncated under it (SIGBUS).
#![allow(unsafe_code)] // libc calls

use heaptui_testkit::common;
use heaptui_testkit::pty;

use pty::{openpty, Shared};
use std::io::Write;
use std::os::fd::OwnedFd;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

fn wait_for(out: &Shared, needle: &str, what: &str) {
    if pty::wait_for_screen(out, needle, Duration::from_secs(20)).is_none() {
        panic!(
            "{what}: {needle:?} never appeared; output so far:\n{}",
            pty::text(out)
        );
    }
}

/// heaptui started with `arg` on the pseudo-terminal whose other side is
/// `slave` (its controlling terminal, 24 × 80), and everything it writes.
fn start_on_pty(arg: &std::ffi::OsStr, master: &OwnedFd, slave: &OwnedFd) -> (Child, Shared) {
    start_on_pty_with(arg, &[], master, slave)
}

/// [`start_on_pty`] with extra environment variables.
fn start_on_pty_with(
    arg: &std::ffi::OsStr,
    envs: &[(&str, &str)],
    master: &OwnedFd,
    slave: &OwnedFd,
) -> (Child, Shared) {
    let binary = std::path::Path::new(env!("CARGO_BIN_EXE_heaptui"));
    pty::start(binary, &[arg], envs, master, slave, (24, 80))
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
    let text = pty::raw(&out);
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
    use heaptui_core::mem::{restore_terminal_mode, save_terminal_mode_of};
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
    // A dump far over the copy limit, so it is mapped, that takes the
    // parser seconds to walk. It is cut as soon as the process maps it:
    // the parser's next page fault raises SIGBUS, deterministically (it
    // cannot finish in between).
    let (_dir, path, file) = common::sparse_dump();

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

    ends_on_sigbus(
        &mut child,
        &out,
        &slave,
        &format!(
            "heaptui: {name}: the dump file shrank while it was being read \
             (truncated by another process); nothing was written\r\n"
        ),
    );
}

/// The child ends with exit 2 after a SIGBUS: the terminal cooked again
/// (echo and line editing for the shell that comes back), the alternate
/// screen left, and `message` written (its newline translated to CR LF by
/// the restored mode).
fn ends_on_sigbus(child: &mut Child, out: &Shared, slave: &OwnedFd, message: &str) {
    let status = wait_exit(child, "heaptui did not end on SIGBUS");
    std::thread::sleep(Duration::from_millis(100));
    let text = pty::raw(out);
    assert_eq!(status.code(), Some(2), "{status:?}\n{text}");
    assert!(cooked(&termios(slave)), "the terminal was left in raw mode");
    assert!(text.contains("\x1b[?1049l"), "left the alternate screen");
    assert!(text.contains(message), "{text:?}");
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
    let text = pty::raw(&out);
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
    let text = pty::raw(&out);
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
    let text = pty::raw(&out);
    assert_eq!(status.signal(), Some(libc::SIGUSR1), "{status:?}");
    assert!(
        cooked(&termios(&slave)),
        "the terminal was left in raw mode"
    );
    assert!(text.contains("\x1b[?1049l"), "left the alternate screen");
}

/// A reopen maps the cache file; if another program cuts it short while
/// the UI runs, the next frame's read raises SIGBUS, and the handler names
/// the cache file, says how to go on, and gives the terminal back.
#[test]
fn a_cache_file_truncated_while_mapped_leaves_the_terminal_cooked() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("cached.txt");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo.dump.txt"),
        &dump,
    )
    .unwrap();
    let cache_home = dir.path().join("cache");
    let home = cache_home.to_str().unwrap();
    let envs = [("XDG_CACHE_HOME", home), ("HEAPTUI_CACHE_MIN", "0")];

    // The first run analyses, is quit as soon as it is ready, and finishes
    // writing the cache before it exits (the write runs in the background;
    // a process that did not wait lost it on a loaded machine).
    let (master, slave) = openpty(24, 80);
    let (mut child, out) = start_on_pty_with(dump.as_os_str(), &envs, &master, &slave);
    wait_for(&out, "ready", "the first analysis");
    let send = |m: &OwnedFd, b: &[u8]| {
        std::fs::File::from(m.try_clone().unwrap())
            .write_all(b)
            .unwrap()
    };
    send(&master, b"q");
    assert!(wait_exit(&mut child, "the first run did not quit").success());
    let cache_dir = cache_home.join("heaptui");
    let cache: Vec<_> = std::fs::read_dir(&cache_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "cache"))
        .collect();
    assert_eq!(cache.len(), 1, "one cache file: {cache:?}");

    // The second run maps it; then it is cut to nothing under the UI.
    let (master, slave) = openpty(24, 80);
    let (mut child, out) = start_on_pty_with(dump.as_os_str(), &envs, &master, &slave);
    wait_for(&out, "ready", "the reopen");
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", child.id())).unwrap();
    let name = cache[0].display().to_string();
    assert!(maps.contains(&name), "the cache file is mapped");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&cache[0])
        .unwrap()
        .set_len(0)
        .unwrap();
    // The Dominators pane reads retained sizes from the map every frame.
    send(&master, b"2");
    ends_on_sigbus(
        &mut child,
        &out,
        &slave,
        &format!(
            "heaptui: {name}: the reopen cache file shrank while it was being read \
             (truncated by another process); run again, or with --no-cache\r\n"
        ),
    );
}

/// SIGUSR2, SIGXCPU (real under `ulimit -t`) and SIGSYS: the terminal is
/// given back before the signal ends the process (they used to leave it
/// raw).
#[test]
fn other_fatal_signals_restore_the_terminal_first() {
    use std::os::unix::process::ExitStatusExt;
    for sig in [libc::SIGUSR2, libc::SIGXCPU, libc::SIGSYS] {
        let (master, slave) = openpty(24, 80);
        let (mut child, out) = start_on_pty("--demo".as_ref(), &master, &slave);
        wait_for(&out, "ready", "analysis of the demo");
        // SAFETY: a signal to our own child.
        unsafe { libc::kill(child.id() as libc::pid_t, sig) };
        let status = wait_exit(&mut child, "heaptui did not end on the signal");
        assert_eq!(status.signal(), Some(sig), "{status:?}");
        assert!(cooked(&termios(&slave)), "signal {sig}: left raw");
        // The reader thread may not have read the last bytes yet.
        let deadline = Instant::now() + Duration::from_secs(20);
        while !pty::raw(&out).contains("\x1b[?1049l") && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(pty::raw(&out).contains("\x1b[?1049l"), "signal {sig}");
    }
}

/// `kill -TSTP` (Ctrl-Z in a shell): the terminal is given back (main
/// screen, cooked, cursor shown, mouse off) and the process stops; SIGCONT
/// (`fg`) takes the terminal again and redraws the whole screen.
#[test]
fn sigtstp_gives_the_terminal_back_and_sigcont_redraws() {
    let (master, slave) = openpty(24, 80);
    let (mut child, out) = start_on_pty("--demo".as_ref(), &master, &slave);
    let pid = child.id() as libc::pid_t;
    wait_for(&out, "ready", "analysis of the demo");
    let before = pty::raw(&out).len();
    // SAFETY: signals to our own child.
    unsafe { libc::kill(pid, libc::SIGTSTP) };
    assert!(stops(pid), "heaptui did not stop on SIGTSTP");
    // The reader thread may not have read the last bytes yet.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !pty::raw(&out)[before..].contains("\x1b[?1049l") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let given_back = pty::raw(&out)[before..].to_string();
    assert!(cooked(&termios(&slave)), "stopped in raw mode");
    for (seq, what) in [
        ("\x1b[?1049l", "the main screen"),
        ("\x1b[?25h", "the cursor"),
        ("\x1b[?1000l", "mouse tracking off"),
    ] {
        assert!(given_back.contains(seq), "{what}: {given_back:?}");
    }
    let at = pty::raw(&out).len();
    unsafe { libc::kill(pid, libc::SIGCONT) };
    wait_for(&out, "Overview", "a redraw after SIGCONT");
    std::thread::sleep(Duration::from_millis(300));
    let back = pty::raw(&out)[at..].to_string();
    assert!(
        back.contains("\x1b[?1049h"),
        "the alternate screen again: {back:?}"
    );
    assert!(!cooked(&termios(&slave)), "raw mode again");
    // Still answering keys.
    let mut writer = std::fs::File::from(master);
    writer.write_all(b"q").unwrap();
    let status = wait_exit(&mut child, "heaptui did not quit after resuming");
    assert_eq!(status.code(), Some(0));
}

/// Whether process `pid` is stopped within 20 s.
fn stops(pid: libc::pid_t) -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let state = stat.rsplit(')').next().unwrap().split_whitespace().next();
        if state == Some("T") {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Ctrl-Z, which raw mode turns into a key, suspends as in a shell (it
/// used to be swallowed).
#[test]
fn ctrl_z_suspends() {
    let (master, slave) = openpty(24, 80);
    let (mut child, out) = start_on_pty("--demo".as_ref(), &master, &slave);
    let pid = child.id() as libc::pid_t;
    wait_for(&out, "ready", "analysis of the demo");
    let mut writer = std::fs::File::from(master);
    writer.write_all(b"\x1a").unwrap();
    assert!(stops(pid), "heaptui did not stop on Ctrl-Z");
    assert!(cooked(&termios(&slave)), "stopped in raw mode");
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    std::thread::sleep(Duration::from_millis(300));
    writer.write_all(b"q").unwrap();
    let status = wait_exit(&mut child, "heaptui did not quit after resuming");
    assert_eq!(status.code(), Some(0));
}

/// `R` analyses a Java dump again with referents retaining, and back: the
/// same terminal, a fresh analysis each time, then a clean quit.
#[test]
fn r_analyses_again_with_the_other_references_mode() {
    let (master, slave) = openpty(24, 80);
    let dump = common::fixture("leaky.hprof.gz");
    let (mut child, out) = start_on_pty(dump.as_os_str(), &master, &slave);
    drop(slave);
    let mut writer = std::fs::File::from(master);
    wait_for(
        &out,
        "by refs only",
        "the overview of the held-only objects",
    );
    writer.write_all(b"R").unwrap();
    wait_for(
        &out,
        "referents    retain, 363 of them",
        "the analysis again",
    );
    wait_for(&out, "25,088 objects (98.2%)", "referents retain");
    writer.write_all(b"R").unwrap();
    wait_for(&out, "by refs only", "and back");
    wait_for(
        &out,
        "24,431 objects (95.6%)",
        "only strong references retain",
    );
    writer.write_all(b"q").unwrap();
    let status = wait_exit(&mut child, "heaptui did not quit on q");
    assert!(status.success(), "exit status {status:?}");
}
