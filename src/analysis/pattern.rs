//! Glob patterns over type names (`System.*`, `*Cache`, `Foo?`), as used by
//! the command line's set selection and exclude patterns. Case-sensitive,
//! whole-name; `*` matches any run of characters, `?` one character.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    pattern: Vec<char>,
}

impl Glob {
    pub fn new(pattern: &str) -> Glob {
        Glob {
            pattern: pattern.chars().collect(),
        }
    }

    pub fn as_str(&self) -> String {
        self.pattern.iter().collect()
    }

    pub fn matches(&self, name: &str) -> bool {
        let text: Vec<char> = name.chars().collect();
        let p = &self.pattern;
        // Iterative wildcard matching with one backtrack point: linear-ish.
        let (mut ti, mut pi) = (0usize, 0usize);
        let mut star: Option<(usize, usize)> = None;
        while ti < text.len() {
            if pi < p.len() && (p[pi] == '?' || p[pi] == text[ti]) {
                ti += 1;
                pi += 1;
            } else if pi < p.len() && p[pi] == '*' {
                star = Some((pi, ti));
                pi += 1;
            } else if let Some((sp, st)) = star {
                pi = sp + 1;
                ti = st + 1;
                star = Some((sp, st + 1));
            } else {
                return false;
            }
        }
        while pi < p.len() && p[pi] == '*' {
            pi += 1;
        }
        pi == p.len()
    }
}

#[cfg(test)]
mod tests {
    use super::Glob;

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
    }
}
