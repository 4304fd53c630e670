//! Symbols and styles. Colour only ever doubles what text already says
//! (markers, bold, brackets), so `NO_COLOR` and monochrome terminals lose
//! nothing; ASCII mode swaps every non-ASCII glyph. How many colours the
//! terminal has ([`Colors`]) is read from `NO_COLOR`, `COLORTERM` and
//! `TERM`; the palette never uses more than that.

use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::border;

/// How the UI draws: glyphs (Unicode or ASCII) and the colours the terminal has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// ASCII glyphs only (`--ascii`).
    pub ascii: bool,
    /// The colours the styles may use.
    pub colors: Colors,
}

/// What the terminal can colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Colors {
    /// No colour at all: reverse video, bold and markers only (`NO_COLOR`,
    /// `TERM=*-mono`, `dumb`, or no `TERM`).
    Mono,
    /// The 16 ANSI colours (any other `TERM`).
    Ansi16,
    /// The 256-colour palette (`TERM=*-256color`).
    Ansi256,
    /// 24-bit colour (`COLORTERM=truecolor` or `24bit`, `TERM=*-direct`).
    TrueColor,
}

impl Colors {
    /// The colour support named by the environment (a pure function of the
    /// variables, for tests). `NO_COLOR` (non-empty) wins; a monochrome or
    /// missing `TERM` comes next, as `COLORTERM` is often inherited by
    /// programs that run in a different terminal.
    pub fn detect(get: impl Fn(&str) -> Option<String>) -> Colors {
        let var = |k: &str| get(k).filter(|v| !v.is_empty());
        if var("NO_COLOR").is_some() {
            return Colors::Mono;
        }
        let Some(term) = var("TERM").map(|t| t.to_ascii_lowercase()) else {
            return Colors::Mono;
        };
        if term == "dumb" || term.ends_with("-mono") || term.ends_with("-m") {
            return Colors::Mono;
        }
        let colorterm = var("COLORTERM").map(|t| t.to_ascii_lowercase());
        if matches!(colorterm.as_deref(), Some("truecolor" | "24bit")) || term.ends_with("-direct")
        {
            return Colors::TrueColor;
        }
        if term.contains("256color") {
            return Colors::Ansi256;
        }
        Colors::Ansi16
    }
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
    /// the locale is not UTF-8; colours as [`Colors::detect`] finds them.
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
            colors: Colors::detect(get),
        }
    }

    /// Whether any colour may be used.
    pub fn color(&self) -> bool {
        self.colors != Colors::Mono
    }

    /// `c` where colour is allowed.
    fn fg(&self, s: Style, c: Color) -> Style {
        if self.color() {
            s.fg(c)
        } else {
            s
        }
    }

    /// The grey of secondary text. Palette index 8 ("bright black") is the
    /// background colour in some 16-colour schemes (Solarized), so richer
    /// terminals get a mid grey that reads on dark and light backgrounds.
    fn grey(&self) -> Color {
        match self.colors {
            Colors::TrueColor => Color::Rgb(138, 138, 138),
            Colors::Ansi256 => Color::Indexed(245),
            _ => Color::DarkGray,
        }
    }

    /// The pane borders' line set.
    pub fn border(&self) -> border::Set {
        if self.ascii {
            ASCII_BORDER
        } else {
            border::PLAIN
        }
    }

    /// The marker of an expanded row.
    pub fn expanded(&self) -> &'static str {
        if self.ascii {
            "-"
        } else {
            "▾"
        }
    }

    /// The marker of a collapsed row.
    pub fn collapsed(&self) -> &'static str {
        if self.ascii {
            "+"
        } else {
            "▸"
        }
    }

    /// An arrow, as in a path.
    pub fn arrow(&self) -> &'static str {
        if self.ascii {
            "->"
        } else {
            "→"
        }
    }

    /// An ellipsis, for cut text and work under way.
    pub fn ellipsis(&self) -> &'static str {
        if self.ascii {
            "..."
        } else {
            "…"
        }
    }

    /// A column separator.
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
        self.fg(Style::new().add_modifier(Modifier::REVERSED), Color::Cyan)
    }

    /// Bold text.
    pub fn bold(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    /// Column headers and titles.
    pub fn header(&self) -> Style {
        self.fg(Style::new().add_modifier(Modifier::BOLD), Color::Yellow)
    }

    /// Text of less weight (hints, rows gone from the newest snapshot).
    pub fn dim(&self) -> Style {
        self.fg(Style::new(), self.grey())
    }

    /// Text to stand out (in cyan where colours are allowed).
    pub fn accent(&self) -> Style {
        self.fg(Style::new(), Color::Cyan)
    }

    /// Warnings and errors (bold, red where colours are allowed).
    pub fn warn(&self) -> Style {
        self.fg(Style::new().add_modifier(Modifier::BOLD), Color::Red)
    }

    /// The bars of charts.
    pub fn bar_style(&self) -> Style {
        self.fg(Style::new(), Color::Green)
    }
}

#[cfg(test)]
mod tests {
    use super::{Colors, Theme};

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
        let xterm = ("TERM", "xterm");
        assert!(theme(false, &[xterm]).color());
        assert!(!theme(false, &[xterm, ("NO_COLOR", "1")]).color());
        assert!(
            theme(false, &[xterm, ("NO_COLOR", "")]).color(),
            "empty NO_COLOR is unset"
        );
    }

    fn colors(vars: &[(&str, &str)]) -> Colors {
        theme(false, vars).colors
    }

    #[test]
    fn colour_support_from_term_and_colorterm() {
        use Colors::*;
        assert_eq!(colors(&[]), Mono, "no TERM");
        assert_eq!(colors(&[("TERM", "")]), Mono, "empty TERM");
        assert_eq!(colors(&[("TERM", "dumb")]), Mono);
        assert_eq!(colors(&[("TERM", "xterm-mono")]), Mono);
        assert_eq!(colors(&[("TERM", "vt100")]), Ansi16);
        assert_eq!(colors(&[("TERM", "xterm")]), Ansi16);
        assert_eq!(colors(&[("TERM", "linux")]), Ansi16);
        assert_eq!(colors(&[("TERM", "xterm-256color")]), Ansi256);
        assert_eq!(colors(&[("TERM", "tmux-256color")]), Ansi256);
        assert_eq!(colors(&[("TERM", "xterm-direct")]), TrueColor);
        for ct in ["truecolor", "24bit", "TrueColor"] {
            assert_eq!(
                colors(&[("TERM", "xterm-256color"), ("COLORTERM", ct)]),
                TrueColor
            );
        }
        assert_eq!(
            colors(&[("TERM", "xterm"), ("COLORTERM", "yes")]),
            Ansi16,
            "COLORTERM other than truecolor/24bit says nothing"
        );
        assert_eq!(
            colors(&[("TERM", "xterm-mono"), ("COLORTERM", "truecolor")]),
            Mono,
            "a monochrome TERM wins over an inherited COLORTERM"
        );
        assert_eq!(
            colors(&[("TERM", "xterm-256color"), ("NO_COLOR", "1")]),
            Mono
        );
    }

    #[test]
    fn the_palette_stays_within_the_support() {
        use ratatui::style::Color;
        let fgs = |colors| {
            let t = Theme {
                ascii: false,
                colors,
            };
            [
                t.selected(),
                t.header(),
                t.dim(),
                t.accent(),
                t.warn(),
                t.bar_style(),
            ]
            .map(|s| s.fg)
        };
        assert!(fgs(Colors::Mono).iter().all(|c| c.is_none()));
        let named =
            |c: &Option<Color>| !matches!(c, Some(Color::Indexed(_) | Color::Rgb(..)) | None);
        assert!(fgs(Colors::Ansi16).iter().all(named));
        assert!(fgs(Colors::Ansi256)
            .iter()
            .all(|c| !matches!(c, Some(Color::Rgb(..)) | None)));
        assert!(fgs(Colors::Ansi256).contains(&Some(Color::Indexed(245))));
        assert!(fgs(Colors::TrueColor).contains(&Some(Color::Rgb(138, 138, 138))));
    }
}
