//! Replays demo.tape's keys through the real App and checks its
//! `# expect:` lines, so the recorded demo cannot drift from the program.

use heaptui_testkit::tui as tui_support;

use crossterm::event::{KeyCode, KeyEvent};
use heaptui_testkit::tui::press;
use heaptui_tui::app::Effect;
use tui_support::*;

enum Step {
    Keys(Vec<KeyEvent>),
    Expect(String),
}

fn parse_tape(text: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut hidden = false;
    let mut launched = false;
    for line in text.lines().map(str::trim) {
        if let Some(e) = line.strip_prefix("# expect:") {
            steps.push(Step::Expect(e.trim().to_string()));
            continue;
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (cmd, arg) = line.split_once(' ').unwrap_or((line, ""));
        match cmd {
            "Hide" => hidden = true,
            "Show" => hidden = false,
            _ if hidden => {}
            "Output" | "Set" | "Sleep" | "Screenshot" | "Require" => {}
            "Type" if !launched => {
                assert_eq!(arg, "\"heaptui --demo\"", "the session must start the demo");
            }
            "Enter" if !launched => launched = true,
            "Type" => {
                let s = arg.trim_matches('"');
                steps.push(Step::Keys(s.chars().map(ch).collect()));
            }
            _ => {
                let (name, count) = match cmd.split_once('@') {
                    Some((n, _)) => (n, 1),
                    None => (cmd, arg.parse::<usize>().unwrap_or(1)),
                };
                let code = match name {
                    "Enter" => KeyCode::Enter,
                    "Backspace" => KeyCode::Backspace,
                    "Escape" => KeyCode::Esc,
                    "Tab" => KeyCode::Tab,
                    "Up" => KeyCode::Up,
                    "Down" => KeyCode::Down,
                    "Left" => KeyCode::Left,
                    "Right" => KeyCode::Right,
                    "PageUp" => KeyCode::PageUp,
                    "PageDown" => KeyCode::PageDown,
                    "Space" => KeyCode::Char(' '),
                    other => panic!("demo.tape: unsupported command {other}"),
                };
                steps.push(Step::Keys(vec![key(code); count]));
            }
        }
    }
    assert!(launched, "demo.tape never starts heaptui");
    steps
}

#[test]
fn demo_tape_replays_through_the_app() {
    let tape = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/demo.tape")).unwrap();
    let steps = parse_tape(&tape);
    // About what VHS shows at FontSize 16 and Width 1000.
    let mut a = app(100, 30);
    let mut quit = false;
    let mut checked = 0;
    for step in steps {
        match step {
            Step::Keys(keys) => {
                for k in keys {
                    assert!(!quit, "keys after quitting");
                    quit |= press(&mut a, k) == Some(Effect::Quit);
                }
            }
            Step::Expect(text) => {
                let s = screen(&a);
                assert!(s.contains(&text), "demo.tape expects {text:?} here:\n{s}");
                checked += 1;
            }
        }
    }
    assert!(quit, "the tape ends by quitting");
    assert!(checked >= 8, "the tape keeps its checkpoints");
}
