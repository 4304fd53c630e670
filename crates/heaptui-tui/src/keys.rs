//! The one key table: (mode, key, command, description). The footer hints,
//! the `?` help screen and key dispatch all read it, so they cannot drift.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::pane_id::PaneId;

/// Where a binding applies. Pane modes are tried before `Global`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Everywhere, unless a pane's binding of the key comes first.
    Global,
    /// The Dominators pane.
    Dominators,
    /// The Types pane.
    Types,
    /// The Duplicates pane.
    Duplicates,
    /// The Roots pane.
    Roots,
    /// The Suspects pane.
    Suspects,
    /// The instances of a type (a list within the Types pane).
    TypeInstances,
    /// The object inspector.
    Inspector,
    /// The merged paths to the roots (an overlay like the inspector).
    Paths,
    /// Typing into the `/` filter line.
    Filter,
}

impl Mode {
    /// The heading of the mode's section in the help screen.
    pub fn title(self) -> &'static str {
        match self {
            Mode::Global => "Everywhere",
            Mode::Dominators => "Dominators",
            Mode::Types => "Types",
            Mode::Duplicates => "Duplicates",
            Mode::Roots => "Roots",
            Mode::Suspects => "Suspects",
            Mode::TypeInstances => "Instances of a type",
            Mode::Inspector => "Inspector",
            Mode::Paths => "Merged paths to the roots",
            Mode::Filter => "Filter line",
        }
    }
}

/// What a key does; [`KEYS`] binds keys to it per [`Mode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cmd {
    /// Quit (cancelling a running analysis).
    Quit,
    /// Show the help screen: every key.
    Help,
    /// The next pane.
    NextPane,
    /// The previous pane.
    PrevPane,
    /// This pane (its number key).
    Pane(PaneId),
    /// Move up a row.
    Up,
    /// Move down a row.
    Down,
    /// Up a page.
    PageUp,
    /// Down a page.
    PageDown,
    /// The first row.
    Top,
    /// The last row.
    Bottom,
    /// Open, zoom into or jump to the selected row.
    Open,
    /// Back in the history.
    Back,
    /// Clear the pane's filter, else go back.
    Escape,
    /// Expand the selected row.
    Expand,
    /// Collapse the selected row, or go to its parent.
    Collapse,
    /// Open the `/` filter line.
    OpenFilter,
    /// Inspect the selected object.
    Inspect,
    /// Show the selected row's full type name.
    FullName,
    /// Java heaps: analyse again with referents retaining, or not.
    ToggleReferences,
    // Dominators
    /// Switch the Dominators pane between Tree and Path mode.
    ToggleTreeMode,
    /// Show or hide the retained-size chart.
    ToggleChart,
    /// Switch a row between its group and its instances.
    Instances,
    /// Expand or collapse the selected row.
    ToggleExpand,
    /// Zoom out one level.
    ZoomOut,
    /// Sort by retained bytes or by growth (with a comparison).
    SortGrowth,
    /// Only the rows that grow steadily (with a comparison).
    SteadyOnly,
    // Types
    /// What cutting the selection would free (in the background).
    WhatIf,
    /// Compute the type's precise retained bytes (in the background).
    PreciseRetained,
    /// The immediate dominators of the type.
    ImmediateDominators,
    /// Edit the exclude pattern of the immediate dominators.
    ExcludePattern,
    /// List the type's instances.
    ListInstances,
    // Every list pane
    /// Sort by the next column.
    SortNext,
    /// Reverse the sort.
    SortReverse,
    // Duplicates
    /// Jump to the selected set's holding set.
    JumpHoldingSet,
    /// Detect the type's possible duplicates to completion.
    DetectPossible,
    /// Switch the Duplicates pane between its sets and their owners.
    ToggleOwners,
    // Suspects
    /// Scroll the selected suspect's detail down / up.
    DetailDown,
    /// Scroll the selected suspect's detail up.
    DetailUp,
    // Types, Dominators, Duplicates
    /// The merged paths to the roots of the selected type, group or set.
    MergedPaths,
    // Merged paths
    /// Skip the platform's types in the paths, or not.
    SkipPlatform,
    // Inspector
    /// Show the inspected object in the dominator tree.
    OpenInDominators,
    // Filter line
    /// Apply the filter and leave the line.
    Accept,
    /// Clear the filter line.
    Clear,
    /// Delete the last character.
    DeleteChar,
}

/// A key as bindings name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    /// A character key (Shift folded in).
    Char(char),
    /// A character with Ctrl (lowercase).
    Ctrl(char),
    /// Any other key.
    Code(KeyCode),
}

impl Key {
    /// The key as the footer and help screen name it (`Enter`, `Ctrl-C`, `PgUp`).
    pub fn label(self) -> String {
        match self {
            Key::Char(' ') => "Space".into(),
            Key::Char(c) => c.to_string(),
            Key::Ctrl(c) => format!("Ctrl-{}", c.to_ascii_uppercase()),
            Key::Code(KeyCode::Enter) => "Enter".into(),
            Key::Code(KeyCode::Esc) => "Esc".into(),
            Key::Code(KeyCode::Backspace) => "Bksp".into(),
            Key::Code(KeyCode::Tab) => "Tab".into(),
            Key::Code(KeyCode::BackTab) => "S-Tab".into(),
            Key::Code(KeyCode::Up) => "Up".into(),
            Key::Code(KeyCode::Down) => "Down".into(),
            Key::Code(KeyCode::Left) => "Left".into(),
            Key::Code(KeyCode::Right) => "Right".into(),
            Key::Code(KeyCode::PageUp) => "PgUp".into(),
            Key::Code(KeyCode::PageDown) => "PgDn".into(),
            Key::Code(KeyCode::Home) => "Home".into(),
            Key::Code(KeyCode::End) => "End".into(),
            Key::Code(c) => format!("{c:?}"),
        }
    }

    /// The binding key of a terminal event (Shift is folded into the char).
    pub fn of(ev: &KeyEvent) -> Key {
        match ev.code {
            KeyCode::Char(c) if ev.modifiers.contains(KeyModifiers::CONTROL) => {
                Key::Ctrl(c.to_ascii_lowercase())
            }
            KeyCode::Char(c) => Key::Char(c),
            code => Key::Code(code),
        }
    }
}

/// One line of the key table: in `mode`, `key` runs `cmd`.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    /// Where the binding applies.
    pub mode: Mode,
    /// The key.
    pub key: Key,
    /// What it does.
    pub cmd: Cmd,
    /// The help screen's description.
    pub description: &'static str,
    /// Footer label; empty: not in the footer.
    pub short: &'static str,
}

const fn b(
    mode: Mode,
    key: Key,
    cmd: Cmd,
    description: &'static str,
    short: &'static str,
) -> Binding {
    Binding {
        mode,
        key,
        cmd,
        description,
        short,
    }
}

use Cmd::*;
use Key::{Char as C, Code as K, Ctrl};
use Mode::*;

/// The key table: [`HEAD`], one number key per pane of the registry
/// (`pane_id`), then [`REST`].
pub static KEYS: &[Binding] = &TABLE;

/// The bindings before the pane keys.
const HEAD: [Binding; 5] = [
    b(
        Global,
        C('q'),
        Quit,
        "quit (cancels running analysis)",
        "quit",
    ),
    b(Global, Ctrl('c'), Quit, "quit", ""),
    b(Global, C('?'), Help, "help: every key", "help"),
    b(Global, K(KeyCode::Tab), NextPane, "next pane", ""),
    b(Global, K(KeyCode::BackTab), PrevPane, "previous pane", ""),
];

const TABLE_LEN: usize = HEAD.len() + PaneId::COUNT + REST.len();

/// [`HEAD`], the pane keys (`1` … from the pane registry), [`REST`].
const TABLE: [Binding; TABLE_LEN] = {
    let mut table = [HEAD[0]; TABLE_LEN];
    let mut i = 0;
    while i < HEAD.len() {
        table[i] = HEAD[i];
        i += 1;
    }
    let mut p = 0;
    while p < PaneId::COUNT {
        let pane = PaneId::ALL[p];
        table[i] = b(Global, C(pane.key()), Pane(pane), pane.help(), "");
        i += 1;
        p += 1;
    }
    let mut r = 0;
    while r < REST.len() {
        table[i] = REST[r];
        i += 1;
        r += 1;
    }
    table
};

/// `s` in a sortable list: the next column.
const fn sort_next(mode: Mode) -> Binding {
    b(mode, C('s'), SortNext, "sort by the next column", "sort")
}

/// `S` in a sortable list: the sort reversed.
const fn sort_reverse(mode: Mode) -> Binding {
    b(mode, C('S'), SortReverse, "reverse the sort", "")
}

/// `t` in a pane with a comparison: only what grows steadily (`what` says
/// which rows).
const fn steady_only(mode: Mode, what: &'static str, short: &'static str) -> Binding {
    b(mode, C('t'), SteadyOnly, what, short)
}

/// The bindings after the pane keys.
const REST: &[Binding] = &[
    b(Global, K(KeyCode::Up), Up, "move up", ""),
    b(Global, C('k'), Up, "move up", ""),
    b(Global, K(KeyCode::Down), Down, "move down", ""),
    b(Global, C('j'), Down, "move down", ""),
    b(Global, K(KeyCode::PageUp), PageUp, "page up", ""),
    b(Global, K(KeyCode::PageDown), PageDown, "page down", ""),
    b(Global, K(KeyCode::Home), Top, "first row", ""),
    b(Global, C('g'), Top, "first row", ""),
    b(Global, K(KeyCode::End), Bottom, "last row", ""),
    b(Global, C('G'), Bottom, "last row", ""),
    b(
        Global,
        K(KeyCode::Enter),
        Open,
        "open / zoom / jump",
        "open",
    ),
    b(
        Global,
        K(KeyCode::Backspace),
        Back,
        "back (history)",
        "back",
    ),
    b(
        Global,
        K(KeyCode::Esc),
        Escape,
        "clear the pane's filter, else back",
        "",
    ),
    b(Global, K(KeyCode::Right), Expand, "expand", ""),
    b(Global, C('l'), Expand, "expand", ""),
    b(
        Global,
        K(KeyCode::Left),
        Collapse,
        "collapse / to parent",
        "",
    ),
    b(Global, C('h'), Collapse, "collapse / to parent", ""),
    b(
        Global,
        C('/'),
        OpenFilter,
        "filter by type name (or sets by text)",
        "filter",
    ),
    b(
        Global,
        C('i'),
        Inspect,
        "inspect the selected object",
        "inspect",
    ),
    b(
        Global,
        C('n'),
        FullName,
        "the selected row's full type name",
        "name",
    ),
    b(
        Global,
        C('R'),
        ToggleReferences,
        "Java: analyse again with soft/weak/final/phantom referents retaining, or not",
        "",
    ),
    b(
        Dominators,
        C('m'),
        ToggleTreeMode,
        "Tree / Path mode",
        "tree/path",
    ),
    b(
        Dominators,
        C('c'),
        ToggleChart,
        "retained-size chart (narrow terminals)",
        "chart",
    ),
    b(
        Dominators,
        C('x'),
        Instances,
        "group <-> instances",
        "instances",
    ),
    b(Dominators, C(' '), ToggleExpand, "expand / collapse", ""),
    b(
        Dominators,
        C('w'),
        WhatIf,
        "what cutting the row (all its objects) frees",
        "what if",
    ),
    b(Dominators, C('-'), ZoomOut, "zoom out one level", ""),
    b(
        Dominators,
        C('s'),
        SortGrowth,
        "comparing: sort by retained bytes / by growth (Δ)",
        "",
    ),
    steady_only(
        Dominators,
        "comparing: only the rows that grow steadily (and their parents)",
        "",
    ),
    b(
        Types,
        C('p'),
        PreciseRetained,
        "precise retained bytes (background)",
        "precise",
    ),
    b(
        Types,
        C('d'),
        ImmediateDominators,
        "immediate dominators of the type",
        "dominators",
    ),
    b(
        Types,
        C('e'),
        ExcludePattern,
        "exclude pattern for immediate dominators",
        "",
    ),
    b(
        Types,
        C('x'),
        ListInstances,
        "list the type's instances (Enter inspects one)",
        "instances",
    ),
    sort_next(Types),
    steady_only(
        Types,
        "comparing: only the types that grow steadily",
        "steady",
    ),
    sort_reverse(Types),
    sort_next(TypeInstances),
    sort_reverse(TypeInstances),
    sort_next(Duplicates),
    sort_reverse(Duplicates),
    steady_only(
        Duplicates,
        "comparing: only the sets (or owners) that grow steadily",
        "steady",
    ),
    sort_next(Roots),
    sort_reverse(Roots),
    steady_only(
        Roots,
        "comparing: only the root groups that grow steadily",
        "steady",
    ),
    b(
        Suspects,
        C('J'),
        DetailDown,
        "scroll the suspect's detail down",
        "detail",
    ),
    b(
        Suspects,
        C('K'),
        DetailUp,
        "scroll the suspect's detail up",
        "",
    ),
    b(
        Duplicates,
        C('H'),
        JumpHoldingSet,
        "jump to the holding set",
        "holding set",
    ),
    b(
        Duplicates,
        C('D'),
        DetectPossible,
        "detect possible duplicates of the type",
        "detect",
    ),
    b(
        Types,
        C('M'),
        MergedPaths,
        "why alive: their paths from the roots, merged",
        "paths",
    ),
    b(
        Dominators,
        C('M'),
        MergedPaths,
        "why alive: their paths from the roots, merged",
        "paths",
    ),
    b(
        Duplicates,
        C('M'),
        MergedPaths,
        "why alive: the set's paths from the roots, merged",
        "paths",
    ),
    b(
        Duplicates,
        C('w'),
        WhatIf,
        "what a set's (owner's) extra copies free if gone",
        "what if",
    ),
    b(
        Duplicates,
        C('O'),
        ToggleOwners,
        "sets / owners: duplicate waste by the structure that holds the copies",
        "owners",
    ),
    b(
        Duplicates,
        C('o'),
        OpenInDominators,
        "owners: show the owner in the dominator tree",
        "in tree",
    ),
    b(
        Duplicates,
        C('e'),
        ExcludePattern,
        "owners: the exclude patterns owners are cut at",
        "",
    ),
    b(
        Inspector,
        C('o'),
        OpenInDominators,
        "show in the dominator tree",
        "in tree",
    ),
    b(Paths, C(' '), ToggleExpand, "expand / collapse", ""),
    b(
        Paths,
        C('o'),
        OpenInDominators,
        "show the node's object in the dominator tree",
        "in tree",
    ),
    b(
        Paths,
        C('e'),
        SkipPlatform,
        "skip platform types (java.*, System.*) or not",
        "skip",
    ),
    b(
        Inspector,
        C('w'),
        WhatIf,
        "what cutting this reference (or object) frees",
        "what if",
    ),
    b(
        Filter,
        K(KeyCode::Enter),
        Accept,
        "keep the filter, leave the line",
        "keep",
    ),
    b(Filter, K(KeyCode::Esc), Clear, "clear the filter", "clear"),
    b(
        Filter,
        K(KeyCode::Backspace),
        DeleteChar,
        "delete a character",
        "",
    ),
];

/// The command bound to `key` in `mode` (pane modes fall back to Global;
/// the filter line does not, so typed letters stay text).
pub fn lookup(mode: Mode, key: Key) -> Option<Cmd> {
    let find = |m: Mode| {
        KEYS.iter()
            .find(|b| b.mode == m && b.key == key)
            .map(|b| b.cmd)
    };
    match mode {
        Filter => find(Filter),
        Global => find(Global),
        m => find(m).or_else(|| find(Global)),
    }
}

/// Footer rank of a binding with a footer label: lower ranks come first
/// and are the last to give way on a narrow terminal. Help and quit are
/// how a new user finds everything else; filter, open and inspect work in
/// every pane; a mode's own keys (tree/path, chart, precise, …, and any
/// added later) come next; back is also Esc and rarely needed in a hint.
fn footer_rank(b: &Binding) -> u8 {
    match b.cmd {
        Help => 0,
        Quit => 1,
        OpenFilter => 2,
        Open => 3,
        Inspect => 4,
        Back => 9,
        _ if b.mode != Global => 5,
        _ => 6,
    }
}

/// Footer hints for a mode (its own and the global ones) in priority
/// order: the footer shows as many as fit, the first ones first.
pub fn footer(mode: Mode) -> Vec<(String, &'static str)> {
    footer_with(mode, |_| None)
}

/// [`footer`] with the labels `label` gives for the focus's state (a
/// group's `x` says `group` while it shows instances); `Some("")` hides a
/// key that does nothing there.
pub fn footer_with(
    mode: Mode,
    label: impl Fn(Cmd) -> Option<&'static str>,
) -> Vec<(String, &'static str)> {
    let mut out: Vec<(String, &'static str)> = Vec::new();
    let modes: &[Mode] = if mode == Filter {
        &[Filter]
    } else if mode == Global {
        &[Global]
    } else {
        &[mode, Global]
    };
    let mut hints: Vec<&Binding> = KEYS
        .iter()
        .filter(|b| modes.contains(&b.mode) && !b.short.is_empty())
        .collect();
    // Stable: equal ranks keep the key table's order.
    // A key whose label names the focus's state (`x instances` on a
    // group) comes right after the always-present ones.
    hints.sort_by_key(|b| match label(b.cmd) {
        Some(l) if !l.is_empty() => 9,
        _ => footer_rank(b) * 2,
    });
    for b in hints {
        let short = label(b.cmd).unwrap_or(b.short);
        if !short.is_empty() {
            out.push((b.key.label(), short));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn no_key_is_bound_twice_in_a_mode() {
        let mut seen = HashSet::new();
        for b in KEYS {
            assert!(
                seen.insert((b.mode, b.key)),
                "{:?} bound twice in {:?}",
                b.key,
                b.mode
            );
        }
    }

    #[test]
    fn pane_keys_do_not_shadow_global_ones() {
        // Except Space, which is not global.
        for b in KEYS.iter().filter(|b| !matches!(b.mode, Global | Filter)) {
            let global = KEYS.iter().find(|g| g.mode == Global && g.key == b.key);
            assert!(
                global.is_none(),
                "{:?} in {:?} shadows a global key",
                b.key,
                b.mode
            );
        }
    }

    #[test]
    fn footer_puts_help_quit_filter_and_inspect_before_pane_keys() {
        let labels = |m| footer(m).into_iter().map(|(_, s)| s).collect::<Vec<_>>();
        let d = labels(Dominators);
        assert_eq!(d[..5], ["help", "quit", "filter", "open", "inspect"]);
        assert_eq!(d.last(), Some(&"back"));
        assert!(d.contains(&"tree/path") && d.contains(&"chart"));
        assert_eq!(labels(Filter), ["keep", "clear"]);
    }

    #[test]
    fn lookup_falls_back_to_global_but_not_in_the_filter_line() {
        assert_eq!(lookup(Dominators, C('m')), Some(ToggleTreeMode));
        assert_eq!(lookup(Dominators, C('q')), Some(Quit));
        assert_eq!(lookup(Types, C('m')), None);
        assert_eq!(lookup(Filter, C('q')), None);
        assert_eq!(lookup(Filter, K(KeyCode::Esc)), Some(Clear));
    }
}
