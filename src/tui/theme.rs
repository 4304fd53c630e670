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
        Theme::from_vars(ascii, |k| std::env::var(k).ok())
    }

    /// [`Theme::from_env`] over any variable lookup (testable).
    pub fn from_vars(ascii: bool, get: impl Fn(&str) -> Option<String>) -> Theme {
        let var = |k: &str| get(k).filter(|v| !v.is_empty());
        // The first of LC_ALL, LC_CTYPE, LANG that is set decides.
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

#[cfg(test)]
mod tests {
    use super::Theme;

    fn theme(ascii: bool, vars: &[(&str, &str)]) -> Theme {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Theme::from_vars(ascii, |k| {
            vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn locale_and_no_color() {
        assert!(!theme(false, &[("LANG", "en_US.UTF-8")]).ascii);
        assert!(
            theme(true, &[("LANG", "en_US.UTF-8")]).ascii,
            "--ascii wins"
        );
        assert!(theme(false, &[("LANG", "C")]).ascii);
        assert!(theme(false, &[]).ascii, "no locale: ASCII");
        assert!(
            theme(false, &[("LC_ALL", "C"), ("LANG", "en_US.utf8")]).ascii,
            "LC_ALL first"
        );
        assert!(
            !theme(false, &[("LC_ALL", ""), ("LC_CTYPE", "C.UTF-8")]).ascii,
            "empty is unset"
        );
        assert!(theme(false, &[]).color);
        assert!(!theme(false, &[("NO_COLOR", "1")]).color);
        assert!(
            theme(false, &[("NO_COLOR", "")]).color,
            "empty NO_COLOR is unset"
        );
    }
}
