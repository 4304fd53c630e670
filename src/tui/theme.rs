//! Symbols and styles. Colour only ever doubles what text already says
//! (markers, bold, brackets), so `NO_COLOR` and monochrome links lose
//! nothing; ASCII mode swaps every non-ASCII glyph.

use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::border;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub ascii: bool,
    pub color: bool,
}

const ASCII_BORDER: border::Set = border::Set {
    top_left: "+",
    top_right: "+",
    bottom_left: "+",
    bottom_right: "+",
    vertical_left: "|",
    vertical_right: "|",
    horizontal_top: "-",
    horizontal_bottom: "-",
};

impl Theme {
    /// From the command line and the environment: ASCII when asked or when
    /// the locale is not UTF-8; colour unless `NO_COLOR` is set non-empty.
    pub fn from_env(ascii: bool) -> Theme {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let locale = var("LC_ALL")
            .or_else(|| var("LC_CTYPE"))
            .or_else(|| var("LANG"));
        let utf8 = locale.is_some_and(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("utf-8") || l.contains("utf8")
        });
        Theme {
            ascii: ascii || !utf8,
            color: var("NO_COLOR").is_none(),
        }
    }

    pub fn border(&self) -> border::Set {
        if self.ascii {
            ASCII_BORDER
        } else {
            border::PLAIN
        }
    }

    pub fn expanded(&self) -> &'static str {
        if self.ascii {
            "-"
        } else {
            "▾"
        }
    }

    pub fn collapsed(&self) -> &'static str {
        if self.ascii {
            "+"
        } else {
            "▸"
        }
    }

    pub fn arrow(&self) -> &'static str {
        if self.ascii {
            "->"
        } else {
            "→"
        }
    }

    pub fn ellipsis(&self) -> &'static str {
        if self.ascii {
            "..."
        } else {
            "…"
        }
    }

    pub fn sep(&self) -> &'static str {
        if self.ascii {
            "|"
        } else {
            "│"
        }
    }

    /// Bar of `eighths` eighth-cells (whole cells only in ASCII).
    pub fn bar(&self, eighths: usize) -> String {
        if self.ascii {
            return "#".repeat(eighths.div_ceil(8).max(usize::from(eighths > 0)));
        }
        const PARTS: [&str; 8] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];
        let mut s = "█".repeat(eighths / 8);
        s.push_str(PARTS[eighths % 8]);
        if s.is_empty() && eighths > 0 {
            s.push('▏');
        }
        s
    }

    /// The selected row: reverse video always (plus the `>` marker the
    /// widgets draw), a colour on top when allowed.
    pub fn selected(&self) -> Style {
        let s = Style::new().add_modifier(Modifier::REVERSED);
        if self.color {
            s.fg(Color::Cyan)
        } else {
            s
        }
    }

    pub fn bold(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    pub fn header(&self) -> Style {
        let s = Style::new().add_modifier(Modifier::BOLD);
        if self.color {
            s.fg(Color::Yellow)
        } else {
            s
        }
    }

    pub fn dim(&self) -> Style {
        if self.color {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new()
        }
    }

    pub fn accent(&self) -> Style {
        if self.color {
            Style::new().fg(Color::Cyan)
        } else {
            Style::new()
        }
    }

    pub fn warn(&self) -> Style {
        let s = Style::new().add_modifier(Modifier::BOLD);
        if self.color {
            s.fg(Color::Red)
        } else {
            s
        }
    }

    pub fn bar_style(&self) -> Style {
        if self.color {
            Style::new().fg(Color::Green)
        } else {
            Style::new()
        }
    }
}
