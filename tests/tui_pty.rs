//! One smoke test of the real binary in a pseudo-terminal: it starts on the
//! demo heap, answers keys, and gives the terminal back when quitting.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
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

#[test]
fn the_real_binary_runs_in_a_terminal_and_quits_cleanly() {
    let (master, slave) = openpty(24, 80);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_heaptui"));
    cmd.arg("--demo")
        .env("LANG", "C.UTF-8")
        .env("TERM", "xterm-256color")
        .env_remove("NO_COLOR")
        .stdin(Stdio::from(slave.try_clone().unwrap()))
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave));
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            libc::ioctl(0, libc::TIOCSCTTY, 0);
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("start heaptui");
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

    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "heaptui did not quit on q");
        std::thread::sleep(Duration::from_millis(20));
    };
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
