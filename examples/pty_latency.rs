//! Launch-to-ready and key latency of the real binary in a pseudo-terminal,
//! as a user on a terminal sees them.
//!
//! ```sh
//! cargo build --release
//! cargo run --release --example pty_latency -- big.txt --no-cache
//! cargo run --release --example pty_latency -- --size 120x40 --every 100 big.txt
//! ```
//!
//! It starts `target/release/heaptui DUMP [ARGS…]` (`--binary` picks
//! another) on a new pty, and reports when the first frame was on the
//! screen and when the status line said `ready`. Meanwhile, every
//! `--every` milliseconds (250 by default), it presses `1` or `3` in turn
//! (switching between the Overview and Types tabs, which works whatever
//! has loaded) and times each press until the screen shows the other tab
//! selected: the latency of a key while the analysis runs, then for two
//! more seconds once it is ready. A press slower than 50 ms is listed with
//! the time it was made, to match it with a stage's arrival. The output is plain text, one figure per
//! line, for docs/performance.md.

use heaptui_testkit::pty;

use std::ffi::OsString;
use std::io::Write;
use std::time::{Duration, Instant};

struct Options {
    binary: OsString,
    rows: u16,
    cols: u16,
    every: Duration,
    args: Vec<OsString>,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        binary: "target/release/heaptui".into(),
        rows: 24,
        cols: 80,
        every: Duration::from_millis(250),
        args: Vec::new(),
    };
    let mut it = std::env::args_os().skip(1);
    while let Some(arg) = it.next() {
        match arg.to_str() {
            Some("--binary") => o.binary = it.next().ok_or("--binary needs a path")?,
            Some("--size") => {
                let v = it.next().ok_or("--size needs COLSxROWS")?;
                let v = v.to_string_lossy();
                let (c, r) = v.split_once('x').ok_or("--size is COLSxROWS, e.g. 80x24")?;
                o.cols = c.parse().map_err(|_| "--size: bad column count")?;
                o.rows = r.parse().map_err(|_| "--size: bad row count")?;
            }
            Some("--every") => {
                let v = it.next().ok_or("--every needs milliseconds")?;
                let ms: u64 = v
                    .to_string_lossy()
                    .parse()
                    .map_err(|_| "--every: milliseconds")?;
                o.every = Duration::from_millis(ms.max(10));
            }
            _ => o.args.push(arg),
        }
    }
    if o.args.is_empty() {
        return Err(
            "usage: pty_latency [--binary PATH] [--size 80x24] [--every MS] DUMP [ARGS…]".into(),
        );
    }
    Ok(o)
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn summary(label: &str, mut v: Vec<Duration>) {
    if v.is_empty() {
        println!("{label}: no key presses");
        return;
    }
    v.sort();
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    println!(
        "{label}: {} presses, median {}, p95 {}, max {}",
        v.len(),
        ms(at(0.5)),
        ms(at(0.95)),
        ms(*v.last().unwrap())
    );
}

fn main() {
    let o = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let (master, slave) = pty::openpty(o.rows, o.cols);
    let args: Vec<&std::ffi::OsStr> = o.args.iter().map(|a| a.as_os_str()).collect();
    let start = Instant::now();
    let (mut child, out) = pty::start(
        o.binary.as_ref(),
        &args,
        &[],
        &master,
        &slave,
        (o.rows as usize, o.cols as usize),
    );
    drop(slave);
    let mut keys = std::fs::File::from(master);
    let Some(first) = pty::wait_for_screen(&out, "Overview", Duration::from_secs(60)) else {
        eprintln!("no first frame within 60 s:\n{}", pty::text(&out));
        let _ = child.kill();
        std::process::exit(1);
    };
    println!("first frame: {}", ms(first - start));

    let (mut loading, mut after) = (Vec::new(), Vec::new());
    let mut ready_at: Option<Instant> = None;
    let mut toggle = false;
    loop {
        std::thread::sleep(o.every);
        if ready_at.is_none() && pty::text(&out).contains(" ready (") {
            ready_at = Some(out.0.lock().unwrap().last);
        }
        if let Some(r) = ready_at {
            if r.elapsed() > Duration::from_secs(2) {
                break;
            }
        }
        if child.try_wait().ok().flatten().is_some() {
            eprintln!("heaptui ended early:\n{}", pty::text(&out));
            std::process::exit(1);
        }
        toggle = !toggle;
        let (key, marker) = if toggle {
            (b"3", "[3 Types]")
        } else {
            (b"1", "[1 Overview]")
        };
        let pressed = Instant::now();
        keys.write_all(key).expect("write a key");
        match pty::wait_for_screen(&out, marker, Duration::from_secs(30)) {
            Some(seen) => {
                let took = seen.saturating_duration_since(pressed);
                if took > Duration::from_millis(50) {
                    println!("slow key at {}: {}", ms(pressed - start), ms(took));
                }
                if ready_at.is_some() {
                    after.push(took)
                } else {
                    loading.push(took)
                }
            }
            None => {
                eprintln!("the key {key:?} was not answered within 30 s");
                std::process::exit(1);
            }
        }
    }
    let ready = ready_at.expect("ready");
    println!("ready: {}", ms(ready - start));
    let screen = pty::text(&out);
    if let Some(line) = screen.lines().find(|l| l.contains(" ready (")) {
        println!("status line: {}", line.trim());
    }
    summary("key while analysing", loading);
    summary("key when ready", after);
    // Quitting waits for the reopen cache to be written (seconds to
    // minutes on a big heap): give it that time, so the next run of this
    // tool measures the reopen.
    let quit = Instant::now();
    let _ = keys.write_all(b"q");
    let deadline = quit + Duration::from_secs(900);
    while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    match child.try_wait().ok().flatten() {
        Some(_) => println!(
            "quit: {} (the reopen cache written, if any)",
            ms(quit.elapsed())
        ),
        None => {
            println!("quit: still running after 15 min; killed");
            let _ = child.kill();
        }
    }
}
