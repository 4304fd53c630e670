//! The type-name filter syntax of the TUI's `/` line (docs/ui.md), after
//! dotMemory: plain words are left for fuzzy ranking (the UI hands them to
//! `nucleo`), while these tokens narrow the set structurally:
//!
//! | token | meaning |
//! |---|---|
//! | `*` in a word | wildcard pattern; each dotted part matches as a prefix (`sys.*.data`) |
//! | `[]` | arrays only; `[` / `[,` … arrays of at least that rank; `[,]` exactly rank 2 |
//! | `!a` | no arrays |
//! | `<` | generic types only; `<str` an argument contains `str`; `<,>` exactly two arguments, `<,` at least two |
//! | `!g` | ignore generic arguments: match the text against the name without them, and drop generic types |
//! | `#ns X` | namespace contains `X`; `#c X` class name contains `X` |
//!
//! Matching is case-insensitive. This module is pure logic; it also marks
//! the dominator subtrees that contain a matching type, so a filtered tree
//! keeps every match's ancestors.

use crate::graph::DominatorTree;
use crate::model::{Model, ObjectIdx};

/// What the text part of the filter is matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TextScope {
    /// The whole type name.
    #[default]
    FullName,
    /// The name without generic arguments (`List` of `List<String>`).
    BaseName,
}

/// Array constraint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ArraySpec {
    /// Arrays or not (no constraint).
    #[default]
    Any,
    /// Arrays of any rank.
    Only,
    /// Arrays of this rank or higher.
    MinRank(u32),
    /// Arrays of exactly this rank.
    Rank(u32),
    /// No arrays.
    Exclude,
}

/// Generic-arguments constraint.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GenericSpec {
    /// At least / exactly this many arguments.
    pub arity: u32,
    /// Whether the count is exact (`<,>`) rather than a minimum (`<,`).
    pub exact: bool,
    /// Per-position patterns (lowercase, empty = any); a single unclosed
    /// pattern matches any argument.
    pub args: Vec<String>,
}

/// A parsed filter query.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TypeFilter {
    /// Words for fuzzy ranking, space-joined (empty: rank nothing).
    pub fuzzy: String,
    /// What the fuzzy words and patterns are matched against.
    pub scope: TextScope,
    /// Wildcard patterns (lowercase), each must match.
    pub globs: Vec<String>,
    /// The array constraint (`[]`, `[,]`, `!a`).
    pub array: ArraySpec,
    /// The generic-arguments constraint (`<…`), if any.
    pub generic: Option<GenericSpec>,
    /// `!g`: match against the name without generic arguments and drop generic types.
    pub exclude_generics: bool,
    /// `#ns X`: the namespace must contain this (lowercase).
    pub namespace: Option<String>,
    /// `#c X`: the class name must contain this (lowercase).
    pub class: Option<String>,
    /// Tokens that were not understood (shown to the user, otherwise ignored).
    pub unknown: Vec<String>,
}

impl TypeFilter {
    /// Parses a `/` line; unknown tokens go to `unknown`, never an error.
    pub fn parse(query: &str) -> TypeFilter {
        let mut f = TypeFilter::default();
        let mut words: Vec<String> = Vec::new();
        let mut tokens = query.split_whitespace().peekable();
        while let Some(tok) = tokens.next() {
            match tok {
                "!a" | "!A" => f.array = ArraySpec::Exclude,
                "!g" | "!G" => {
                    f.exclude_generics = true;
                    f.scope = TextScope::BaseName;
                }
                "#ns" | "#c" => {
                    if let Some(arg) = tokens.next() {
                        let arg = arg.to_lowercase();
                        if tok == "#ns" {
                            f.namespace = Some(arg);
                        } else {
                            f.class = Some(arg);
                        }
                    } else {
                        f.unknown.push(tok.to_string());
                    }
                }
                t if t.starts_with('#') => f.unknown.push(t.to_string()),
                t => {
                    let text = f.take_suffixes(t);
                    if text.contains('*') {
                        f.globs.push(prefix_glob(&text.to_lowercase()));
                    } else if !text.is_empty() {
                        words.push(text);
                    }
                }
            }
        }
        f.fuzzy = words.join(" ");
        f
    }

    /// Strips a trailing `[…` or `<…` part from a word into constraints and
    /// returns the text before it.
    fn take_suffixes(&mut self, word: &str) -> String {
        let lt = word.find('<');
        let br = word.find('[');
        match (lt, br) {
            (Some(i), b) if b.is_none_or(|b| i < b) => {
                self.generic = Some(parse_generic(&word[i + 1..]));
                self.scope = TextScope::BaseName;
                word[..i].to_string()
            }
            (_, Some(i)) => {
                self.array = parse_array(&word[i..]);
                word[..i].to_string()
            }
            _ => word.to_string(),
        }
    }

    /// No constraint and no text: everything passes, unranked.
    pub fn is_empty(&self) -> bool {
        self.fuzzy.is_empty() && self.structural_key() == TypeFilter::default().structural_key()
    }

    /// The filter without its fuzzy words; when this changes, the candidate
    /// set changes (the UI re-injects), otherwise only the ranking does.
    pub fn structural_key(&self) -> TypeFilter {
        TypeFilter {
            fuzzy: String::new(),
            ..self.clone()
        }
    }

    /// Whether a type name passes every structural constraint (not the
    /// fuzzy words).
    pub fn accepts(&self, name: &str) -> bool {
        let lower = name.to_lowercase();
        if !self.globs.iter().all(|g| glob_match(g, &lower)) {
            return false;
        }
        let rank = array_rank(name);
        let array_ok = match self.array {
            ArraySpec::Any => true,
            ArraySpec::Only => rank.is_some(),
            ArraySpec::MinRank(r) => rank.is_some_and(|k| k >= r),
            ArraySpec::Rank(r) => rank == Some(r),
            ArraySpec::Exclude => rank.is_none(),
        };
        if !array_ok {
            return false;
        }
        let args = generic_args(name);
        if self.exclude_generics && !args.is_empty() {
            return false;
        }
        if let Some(g) = &self.generic {
            if !g.accepts(&args) {
                return false;
            }
        }
        let base = base_name(&lower);
        let base: &str = &base;
        if let Some(ns) = &self.namespace {
            let namespace = base.rsplit_once('.').map_or("", |(n, _)| n);
            if !namespace.contains(ns.as_str()) {
                return false;
            }
        }
        if let Some(c) = &self.class {
            let class = base.rsplit_once('.').map_or(base, |(_, c)| c);
            if !class.contains(c.as_str()) {
                return false;
            }
        }
        true
    }
}

impl GenericSpec {
    fn accepts(&self, args: &[&str]) -> bool {
        if args.is_empty() {
            return false;
        }
        let n = args.len() as u32;
        if (self.exact && n != self.arity) || n < self.arity {
            return false;
        }
        let lower: Vec<String> = args.iter().map(|a| a.to_lowercase()).collect();
        if self.args.len() == 1 && !self.exact {
            let p = &self.args[0];
            return p.is_empty() || lower.iter().any(|a| a.contains(p.as_str()));
        }
        self.args
            .iter()
            .zip(&lower)
            .all(|(p, a)| p.is_empty() || a.contains(p.as_str()))
    }
}

/// `str,,task>` (after the `<`) into arity and per-argument patterns.
fn parse_generic(rest: &str) -> GenericSpec {
    let (body, exact) = match rest.find('>') {
        Some(i) => (&rest[..i], true),
        None => (rest, false),
    };
    let args: Vec<String> = body.split(',').map(|s| s.trim().to_lowercase()).collect();
    GenericSpec {
        arity: args.len() as u32,
        exact,
        args,
    }
}

/// `[]`, `[`, `[,`, `[,]`, `[,,` … into an array constraint.
fn parse_array(spec: &str) -> ArraySpec {
    let commas = spec.chars().filter(|&c| c == ',').count() as u32;
    let closed = spec.ends_with(']');
    match (commas, closed) {
        (0, _) => ArraySpec::Only,
        (c, true) => ArraySpec::Rank(c + 1),
        (c, false) => ArraySpec::MinRank(c + 1),
    }
}

/// Turns a dotted wildcard pattern into a whole-name glob where each dotted
/// part is a prefix: `sys.*.data` → `*sys*.data*`; a lone `*` part spans any
/// number of parts, and a trailing `.` asks for a namespace match.
fn prefix_glob(pattern: &str) -> String {
    let mut out = String::from("*");
    let parts: Vec<&str> = pattern.split('.').collect();
    let mut first = true;
    for (i, part) in parts.iter().enumerate() {
        if *part == "*" && i > 0 && i + 1 < parts.len() {
            continue; // absorbed by the previous part's trailing `*`
        }
        if !first {
            out.push('.');
        }
        first = false;
        out.push_str(part);
        if !out.ends_with('*') {
            out.push('*');
        }
    }
    out
}

/// Whole-string wildcard match (`*` any run, `?` one character).
fn glob_match(pattern: &str, text: &str) -> bool {
    crate::analysis::Glob::new(pattern).matches(text)
}

/// Rank of an array type (`Foo[]` 1, `Foo[,]` 2); `None` for non-arrays.
/// Only the last bracket group counts (`int[][]` is an array of arrays).
pub fn array_rank(name: &str) -> Option<u32> {
    let name = name.trim_end();
    if !name.ends_with(']') {
        return None;
    }
    let open = name.rfind('[')?;
    let inner = &name[open + 1..name.len() - 1];
    if inner.chars().all(|c| c == ',' || c == ' ') {
        Some(inner.chars().filter(|&c| c == ',').count() as u32 + 1)
    } else {
        None
    }
}

/// The name without its generic arguments: `A.List<B>` → `A.List`,
/// `A.List<B>[]` → `A.List[]`.
pub fn base_name(name: &str) -> std::borrow::Cow<'_, str> {
    let Some(open) = name.find('<') else {
        return name.into();
    };
    let mut depth = 0i32;
    let mut out = String::with_capacity(name.len());
    out.push_str(&name[..open]);
    for c in name[open..].chars() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out.into()
}

/// The outermost generic arguments, split at top-level commas.
pub fn generic_args(name: &str) -> Vec<&str> {
    let Some(open) = name.find('<') else {
        return Vec::new();
    };
    let mut depth = 0i32;
    let mut args = Vec::new();
    let mut start = open + 1;
    for (i, c) in name[open..].char_indices() {
        let i = open + i;
        match c {
            '<' => depth += 1,
            '>' => {
                depth -= 1;
                if depth == 0 {
                    let a = name[start..i].trim();
                    if !a.is_empty() {
                        args.push(a);
                    }
                    return args;
                }
            }
            ',' if depth == 1 => {
                args.push(name[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    args
}

/// For every object, whether its dominator subtree contains an object whose
/// row type (what its row is named by: `class X` for a Java class object)
/// is marked in `type_matches`. One pass over the objects; each match marks
/// its dominators up to the first one marked already (whose own are), so
/// every object is marked once; unreachable objects only mark themselves.
pub fn subtrees_with_match(dump: &Model, dom: &DominatorTree, type_matches: &[bool]) -> Vec<bool> {
    let rows = dump.row_types();
    let mut mark = vec![false; dump.types.len()];
    for (o, t) in dump.types.iter().enumerate() {
        let t = rows.of(ObjectIdx::from_usize(o), t);
        if !type_matches.get(t.index()).copied().unwrap_or(false) {
            continue;
        }
        mark[o] = true;
        let mut d = dom.idom.get(o) as usize;
        while d < mark.len() && !mark[d] {
            mark[d] = true;
            d = dom.idom.get(d) as usize;
        }
    }
    mark
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passes(q: &str, name: &str) -> bool {
        TypeFilter::parse(q).accepts(name)
    }

    #[test]
    fn plain_words_are_fuzzy_only() {
        let f = TypeFilter::parse("  str  buil ");
        assert_eq!(f.fuzzy, "str buil");
        assert!(f.accepts("System.Text.StringBuilder"));
        assert!(!f.is_empty());
        assert!(TypeFilter::parse("   ").is_empty());
    }

    #[test]
    fn wildcards_match_dotted_prefixes() {
        assert!(passes("*", "Anything"));
        assert!(passes("sys.*.data", "System.Data"));
        assert!(passes("sys.*.data", "System.Windows.Controls.Datagrid"));
        assert!(passes("sys.*.data", "System.Windows.Data.Binding"));
        assert!(!passes("sys.*.data", "MyApp.Data"));
        assert!(passes("sys.*.data.", "System.Windows.Data.Binding"));
        assert!(!passes("sys.*.data.", "System.Windows.Controls.Datagrid"));
        assert!(!passes("sys.*.data.", "System.Data"));
        let f = TypeFilter::parse("sys.*.data");
        assert_eq!(f.fuzzy, "");
    }

    #[test]
    fn arrays() {
        assert!(passes("[]", "System.Char[]"));
        assert!(passes("[]", "System.Int32[,]"));
        assert!(!passes("[]", "System.String"));
        let f = TypeFilter::parse("str[]");
        assert_eq!(f.fuzzy, "str");
        assert_eq!(f.array, ArraySpec::Only);
        assert!(passes("[,", "A[,]"));
        assert!(passes("[,", "A[,,]"));
        assert!(!passes("[,", "A[]"));
        assert!(passes("[,]", "A[,]"));
        assert!(!passes("[,]", "A[,,]"));
        assert!(passes("str[,,", "System.String[,,,]"));
        assert!(!passes("!a", "System.String[]"));
        assert!(passes("!a str", "System.String"));
        assert_eq!(array_rank("int[][]"), Some(1));
        assert_eq!(array_rank("List<int[]>"), None);
    }

    #[test]
    fn generics() {
        assert!(passes("<", "List<String>"));
        assert!(!passes("<", "String"));
        let f = TypeFilter::parse("str<");
        assert_eq!(f.fuzzy, "str");
        assert_eq!(f.scope, TextScope::BaseName);
        assert!(passes(
            "<str",
            "System.Collections.Generic.List<System.String>"
        ));
        assert!(!passes("<str", "FileStreamStorage<System.Char>"));
        assert!(passes("<str", "Dictionary<System.Int32,System.String>"));
        assert!(passes("<,>", "Dictionary<A,B>"));
        assert!(!passes("<,>", "Func<A,B,C>"));
        assert!(!passes("<,>", "List<A>"));
        assert!(passes("<,", "Func<A,B,C>"));
        assert!(passes("fun<,,>", "Func<A,B,C>"));
        assert!(passes(
            "fun<str,,task",
            "Func<Stream,IAsyncResult,TaskResult,EventArgs>"
        ));
        assert!(!passes("fun<str,,task", "Func<Stream,IAsyncResult,Object>"));
        assert_eq!(
            generic_args("D<K,List<V,W>>"),
            vec!["K", "List<V,W>"],
            "nested commas stay inside their argument"
        );
        assert_eq!(base_name("A.List<B<C>>[]"), "A.List[]");
    }

    #[test]
    fn exclude_generics_searches_the_base_name() {
        let f = TypeFilter::parse("!g str");
        assert_eq!(f.fuzzy, "str");
        assert_eq!(f.scope, TextScope::BaseName);
        assert!(f.accepts("System.String"));
        assert!(!f.accepts("List<System.String>"));
    }

    #[test]
    fn namespace_and_class() {
        assert!(passes("#ns feature", "MyApp.Feature.Cache"));
        assert!(!passes("#ns feature", "MyApp.FeatureCache"));
        assert!(passes("#c cache", "MyApp.FeatureCache"));
        assert!(!passes("#c myapp", "MyApp.FeatureCache"));
        let f = TypeFilter::parse("#struct x");
        assert_eq!(f.unknown, vec!["#struct".to_string()]);
        assert_eq!(f.fuzzy, "x");
    }

    #[test]
    fn structural_key_ignores_words() {
        let a = TypeFilter::parse("str []");
        let b = TypeFilter::parse("string []");
        assert_eq!(a.structural_key(), b.structural_key());
        assert_ne!(
            a.structural_key(),
            TypeFilter::parse("string").structural_key()
        );
    }

    #[test]
    fn subtree_marks_keep_ancestors() {
        use crate::graph::HeapGraph;
        let text = "t 1 Root\nt 2 Mid\nt 3 Leaf\nt 4 Other\n\
                    o a 1 10 b d\no b 2 10 c\no c 3 10\no d 4 10\no e 3 10\nr a 1 0\n";
        let dump =
            crate::import::netcf_text::parse_bytes(std::path::Path::new("t"), text.as_bytes())
                .unwrap();
        let graph = HeapGraph::build(dump);
        let dom = DominatorTree::compute(&graph, &crate::progress::Progress::new()).unwrap();
        let d = &graph.dump;
        let leaf = d.type_of(d.index_of(0xc).unwrap()).index();
        let mut types = vec![false; d.type_names.len()];
        types[leaf] = true;
        let mark = subtrees_with_match(d, &dom, &types);
        let at = |id: u64| mark[d.index_of(id).unwrap().index()];
        assert!(at(0xa) && at(0xb) && at(0xc));
        assert!(!at(0xd));
        assert!(at(0xe), "an unreachable match marks itself only");
    }
}
