//! Glob patterns over type names (`System.*`, `*Cache`, `Foo?`), as used by
//! the command line's set selection and exclude patterns. Case-sensitive,
//! whole-name; `*` matches any run of characters, `?` one character.

/// A compiled glob pattern, matched against whole type names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    pattern: Vec<char>,
    /// The pieces between the `*`s (all of it where there is none).
    pieces: Vec<Piece>,
}

/// A run of the pattern without `*`: literal text found by a linear
/// substring search, or with `?`s, matched by bit-parallel shift-and
/// (a bit per pattern character, so work is the text's length times the
/// piece's length over 64).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Piece {
    /// `None` for `?`.
    chars: Vec<Option<char>>,
    /// The text, where the piece has no `?`.
    literal: Option<String>,
}

impl Piece {
    fn new(chars: &[char]) -> Piece {
        let chars: Vec<Option<char>> = chars.iter().map(|&c| (c != '?').then_some(c)).collect();
        let literal = chars.iter().copied().collect::<Option<String>>();
        Piece { chars, literal }
    }

    /// Whether `text` starts with the piece: the byte length matched.
    fn prefix_of(&self, text: &str) -> Option<usize> {
        let mut it = text.char_indices();
        for p in &self.chars {
            let (_, c) = it.next()?;
            if p.is_some_and(|p| p != c) {
                return None;
            }
        }
        Some(it.next().map_or(text.len(), |(at, _)| at))
    }

    /// The first place in `text` where the piece matches: (start, end) in
    /// bytes.
    fn find(&self, text: &str) -> Option<(usize, usize)> {
        if let Some(lit) = &self.literal {
            let at = memchr::memmem::find(text.as_bytes(), lit.as_bytes())?;
            return Some((at, at + lit.len()));
        }
        let m = self.chars.len();
        let words = m.div_ceil(64);
        let mut any = vec![0u64; words];
        let mut of_char: std::collections::HashMap<char, Vec<u64>> = Default::default();
        for (j, p) in self.chars.iter().enumerate() {
            let bits = match p {
                None => &mut any,
                Some(c) => of_char.entry(*c).or_insert_with(|| vec![0u64; words]),
            };
            bits[j / 64] |= 1 << (j % 64);
        }
        let mut state = vec![0u64; words];
        let mut starts = std::collections::VecDeque::with_capacity(m);
        for (at, c) in text.char_indices() {
            starts.push_back(at);
            if starts.len() > m {
                starts.pop_front();
            }
            let mask = of_char.get(&c);
            #[cfg(test)]
            tests::STEPS.with(|s| s.set(s.get() + words as u64));
            let mut carry = 1u64;
            for w in 0..words {
                let next = state[w] >> 63;
                state[w] = ((state[w] << 1) | carry) & (any[w] | mask.map_or(0, |b| b[w]));
                carry = next;
            }
            if state[(m - 1) / 64] & (1 << ((m - 1) % 64)) != 0 {
                return Some((starts[0], at + c.len_utf8()));
            }
        }
        None
    }
}

impl Glob {
    /// Compiles `pattern` (every string is a valid pattern).
    pub fn new(pattern: &str) -> Glob {
        let pattern: Vec<char> = pattern.chars().collect();
        Glob {
            pieces: pattern.split(|&c| c == '*').map(Piece::new).collect(),
            pattern,
        }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> String {
        self.pattern.iter().collect()
    }

    /// Whether the whole of `name` matches, in time linear in the name
    /// (pieces with `?` cost a word per 64 of their characters per
    /// character): the first piece is a prefix, the last a suffix, and
    /// those between are found leftmost, each after the one before.
    pub fn matches(&self, name: &str) -> bool {
        let pieces = &self.pieces;
        let [first, middle @ .., last] = &pieces[..] else {
            // No `*`: one piece, the whole name.
            return pieces[0].prefix_of(name) == Some(name.len());
        };
        let Some(mut at) = first.prefix_of(name) else {
            return false;
        };
        // Where the last piece must start: its length in characters from
        // the end.
        let Some(tail) = (match last.chars.len() {
            0 => Some(name.len()),
            n => name.char_indices().rev().nth(n - 1).map(|(i, _)| i),
        }) else {
            return false;
        };
        if tail < at || last.prefix_of(&name[tail..]) != Some(name.len() - tail) {
            return false;
        }
        for piece in middle {
            match piece.find(&name[at..tail]) {
                Some((_, end)) => at += end,
                None => return false,
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::Glob;

    thread_local! {
        /// Shift-and word steps taken by this thread's matches.
        pub(super) static STEPS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }

    #[test]
    fn globs() {
        assert!(Glob::new("System.*").matches("System.String"));
        assert!(Glob::new("System.*").matches("System.Collections.Generic.List<System.String>"));
        assert!(!Glob::new("System.*").matches("MyApp.Cache"));
        assert!(Glob::new("*[]").matches("System.Char[]"));
        assert!(Glob::new("System.Char[]").matches("System.Char[]"));
        assert!(!Glob::new("System.Char").matches("System.Char[]"));
        assert!(Glob::new("*").matches(""));
        assert!(Glob::new("a?c").matches("abc"));
        assert!(Glob::new("*a*b*").matches("xxaxxbxx"));
        assert!(!Glob::new("*a*b").matches("xxaxxbxx"));
        assert!(Glob::new("a*a").matches("aa"));
        assert!(!Glob::new("a*a").matches("a"));
        assert!(Glob::new("*?é?*").matches("xéy"));
        assert!(!Glob::new("?é?").matches("éy"));
        assert!(Glob::new("*b?d*").matches("abcbxd"));
    }

    /// Against a brute-force matcher on every short pattern and name over a
    /// small alphabet.
    #[test]
    fn agrees_with_brute_force() {
        fn brute(p: &[char], t: &[char]) -> bool {
            match (p.first(), t.first()) {
                (None, _) => t.is_empty(),
                (Some('*'), _) => brute(&p[1..], t) || (!t.is_empty() && brute(p, &t[1..])),
                (Some(_), None) => false,
                (Some(&c), Some(&d)) => (c == '?' || c == d) && brute(&p[1..], &t[1..]),
            }
        }
        let words = |alphabet: &[char], max: usize| {
            let mut all = vec![String::new()];
            let mut last = vec![String::new()];
            for _ in 0..max {
                last = last
                    .iter()
                    .flat_map(|w| alphabet.iter().map(move |c| format!("{w}{c}")))
                    .collect();
                all.extend(last.iter().cloned());
            }
            all
        };
        let patterns = words(&['a', 'é', '*', '?'], 5);
        let names = words(&['a', 'é', 'b'], 5);
        for p in &patterns {
            let g = Glob::new(p);
            let pc: Vec<char> = p.chars().collect();
            for n in &names {
                let nc: Vec<char> = n.chars().collect();
                assert_eq!(g.matches(n), brute(&pc, &nc), "{p:?} on {n:?}");
            }
        }
    }

    /// The worst shape for a backtracking matcher: a long piece that
    /// nearly matches at every place of a long name. The old matcher took
    /// 4000 × 2000 steps per name here (seconds for 200 names); one pass
    /// each now: literal pieces by a linear substring search, pieces with
    /// `?` by shift-and, whose word steps are counted.
    #[test]
    fn long_pieces_match_in_one_pass() {
        let name = "a".repeat(4000);
        for pattern in [
            format!("*{}b", "a".repeat(2000)),
            format!("*{}?b*", "a".repeat(2000)),
            format!("*{}b*", "a".repeat(2000)),
        ] {
            let g = Glob::new(&pattern);
            STEPS.with(|s| s.set(0));
            for _ in 0..200 {
                assert!(!g.matches(&name));
            }
            // At most one pass over the name per piece, a word per 64
            // pattern characters at each character.
            let words = 2002u64.div_ceil(64);
            let steps = STEPS.with(|s| s.get());
            assert!(
                steps <= 200 * 4000 * words,
                "{steps} steps for {:.8}…",
                pattern
            );
        }
    }
}
