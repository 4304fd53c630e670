//! Signals and panics while the UI owns the terminal. `signal-hook` turns
//! the fatal signals into events for the loop, which ends normally so the
//! terminal guard restores the screen; [`Exit`] then says how the process
//! ends. A panic on a background thread is recorded here for the UI to
//! show instead of being printed over the screen; suspending (Ctrl-Z,
//! SIGTSTP) gives the terminal back and takes it again. Imports nothing of
//! the UI.

use std::sync::Mutex;

use crossterm::event::{DisableMouseCapture, EnableMouseCapture};

use signal_hook::consts::signal::{
    SIGALRM, SIGCONT, SIGHUP, SIGINT, SIGIO, SIGPROF, SIGQUIT, SIGSYS, SIGTERM, SIGTRAP, SIGTSTP,
    SIGUSR1, SIGUSR2, SIGVTALRM, SIGXCPU, SIGXFSZ,
};

/// The signals the UI catches to give the terminal back first: every one
/// that ends the process by default and can be caught (SIGPIPE is ignored
/// by Rust programs; SIGABRT, SIGBUS, SIGSEGV, SIGFPE and SIGILL are raised
/// by the process itself, where no event loop can answer), then SIGTSTP,
/// which suspends once the terminal is given back, and SIGCONT, after
/// which the UI takes the terminal again and redraws.
pub const CAUGHT: [i32; 16] = [
    SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU,
    SIGXFSZ, SIGSYS, SIGTRAP, SIGIO, SIGTSTP, SIGCONT,
];

/// What a caught signal asks of the UI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    /// Give the terminal back, then stop (Ctrl-Z in a shell, `kill -TSTP`).
    Suspend,
    /// Continued (`fg`, `kill -CONT`): take the terminal again, redraw.
    Resume,
    /// End, the terminal given back first.
    End,
}

impl Asked {
    pub fn of(sig: i32) -> Asked {
        match sig {
            SIGTSTP => Asked::Suspend,
            SIGCONT => Asked::Resume,
            _ => Asked::End,
        }
    }
}

/// How the UI ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Exit with this status.
    Code(u8),
    /// Die of this signal once the terminal is restored (its default
    /// action: SIGQUIT, SIGUSR1, SIGALRM).
    Reraise(i32),
}

impl Exit {
    /// SIGINT, SIGTERM, SIGHUP end with 128 + n, as a shell reports them;
    /// the others are raised again with their default action.
    pub fn of_signal(sig: i32) -> Exit {
        match sig {
            SIGINT | SIGTERM | SIGHUP => Exit::Code(128 + sig as u8),
            other => Exit::Reraise(other),
        }
    }

    /// The exit status the shell will see.
    pub fn status(self) -> i32 {
        match self {
            Exit::Code(c) => c as i32,
            Exit::Reraise(sig) => 128 + sig,
        }
    }

    /// Ends the process as this says (the terminal must be restored).
    pub fn finish(self) -> u8 {
        match self {
            Exit::Code(c) => c,
            Exit::Reraise(sig) => {
                let _ = signal_hook::low_level::emulate_default_handler(sig);
                // Not reached for a terminating signal.
                (128 + sig) as u8
            }
        }
    }
}

/// Starts the thread that forwards caught signals to `send` (until it
/// returns false).
pub fn forward(send: impl Fn(i32) -> bool + Send + 'static) -> std::io::Result<()> {
    let mut signals = signal_hook::iterator::Signals::new(CAUGHT)?;
    std::thread::Builder::new()
        .name("heaptui-signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                if !send(sig) {
                    break;
                }
            }
        })?;
    Ok(())
}

/// The first panic of a background thread: where and why.
static BACKGROUND_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Takes the recorded background panic, if any.
pub fn take_background_panic() -> Option<String> {
    BACKGROUND_PANIC.lock().ok()?.take()
}

/// The text of a panic payload.
pub fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_string()
    }
}

/// Wraps the current panic hook (ratatui's, which restores the terminal,
/// then color-eyre's): a panic on the main thread goes to it; one on a
/// background thread is only recorded, because printing it would scribble
/// over the screen and restoring the terminal would leave the UI running
/// on the main screen. The UI shows it and exits 101.
pub fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().name() == Some("main") {
            previous(info);
            return;
        }
        let what = payload_text(info.payload());
        let text = match info.location() {
            Some(l) => format!("{what} (at {}:{})", l.file(), l.line()),
            None => what,
        };
        if let Ok(mut slot) = BACKGROUND_PANIC.lock() {
            slot.get_or_insert(text);
        }
    }));
}

/// Gives the terminal back as the guard does (the shell gets its screen,
/// cursor and line mode), stops the process until it is continued (`fg`),
/// then takes the terminal again ([`take_terminal`]; the caller redraws).
pub fn suspend() {
    let _ = crossterm::execute!(
        std::io::stdout(),
        DisableMouseCapture,
        crossterm::cursor::Show
    );
    ratatui::restore();
    // SIGTSTP is caught (it asked for this): SIGSTOP stops for sure.
    let _ = signal_hook::low_level::raise(signal_hook::consts::signal::SIGSTOP);
    take_terminal();
}

/// Raw mode, the alternate screen, mouse capture and a hidden cursor
/// again: after a suspend, or a continue after a stop from elsewhere (a
/// shell may have reset the line mode meanwhile, so raw mode is set anew).
pub fn take_terminal() {
    let _ = crossterm::terminal::disable_raw_mode();
    let _ = crossterm::terminal::enable_raw_mode();
    let _ = crossterm::execute!(
        std::io::stdout(),
        crossterm::terminal::EnterAlternateScreen,
        EnableMouseCapture,
        crossterm::cursor::Hide
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_statuses_follow_the_shell_convention() {
        assert_eq!(Exit::of_signal(SIGINT), Exit::Code(130));
        assert_eq!(Exit::of_signal(SIGTERM), Exit::Code(143));
        assert_eq!(Exit::of_signal(SIGHUP), Exit::Code(129));
        assert_eq!(Exit::of_signal(SIGQUIT), Exit::Reraise(SIGQUIT));
        assert_eq!(Exit::of_signal(SIGUSR1).status(), 128 + SIGUSR1);
    }
}
