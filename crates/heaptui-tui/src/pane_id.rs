//! The pane registry: the one table that names the panes and orders them.
//! Everything about a pane outside its own file derives from its line in
//! [`pane_registry!`]: the [`PaneId`] variant, the tab (number key, title,
//! short title), the help line of its number key, its key mode, and its
//! state in the router (`panes::Panes`). A leaf module: the panes, the
//! filter thread, the key table and the router all use it.
//!
//! Adding a pane: write `crates/heaptui-tui/src/panes/<name>.rs` with a state type that
//! implements `Default` and `panes::Pane` (its keys and drawing; where it
//! needs them, its place in the history (`save`, `restore`), the stages it
//! waits for (`arrived`), its job results (`receive`), its filter, the
//! jumps it takes (`prepare_jump`, `jump`)), declare it in `panes/mod.rs`
//! (`pub mod <name>;`), and add its line to the table below. Its keys, if
//! it has any of its own, go in `keys.rs` under its mode. If other panes
//! are to send the user to a place in it, give that place a type of its own
//! in the pane's file with a function that makes the jump
//! (`panes::Jump::to(PaneId::<Variant>, place)`, as `dominators::reveal`
//! and `duplicates::show_set` do); the pane reads it back with
//! `jump.place()`. The router, the history, the jumps and the view need no
//! change: they reach every pane through the trait and this table.

/// The pane table, passed to `$then!` (a macro that expands it). Each line:
/// `Variant => field: StateType, mode Mode, "Title", tab "Tab", short
/// "Short", help "Help";` where the state type is a path inside `panes`,
/// `mode` names the [`super::keys::Mode`] of its keys, `tab` is the tab's
/// label (shorter where six full titles would not fit in 80 columns),
/// `short` the label on narrow terminals, `help` the `?` line of its
/// number key. The order is the tabs' and the number keys' (1, 2, …).
macro_rules! pane_registry {
    ($then:ident) => {
        $then! {
            Overview => overview: overview::OverviewPane, mode Global, "Overview", tab "Overview", short "Over", help "Overview";
            Dominators => dominators: Option<dominators::DominatorsPane>, mode Dominators, "Dominators", tab "Dominators", short "Dom", help "Dominators";
            Types => types: types::TypesPane, mode Types, "Types", tab "Types", short "Types", help "Types";
            Duplicates => duplicates: duplicates::DuplicatesPane, mode Duplicates, "Duplicates", tab "Duplicates", short "Dup", help "Duplicates";
            Roots => roots: roots::RootsPane, mode Roots, "Roots", tab "Roots", short "Roots", help "Roots";
            Suspects => suspects: suspects::SuspectsPane, mode Suspects, "Suspects", tab "Leaks", short "Leaks", help "Suspects (leak suspects)";
        }
    };
}
pub(crate) use pane_registry;

/// What the tabs and the help screen say of a pane.
struct PaneInfo {
    title: &'static str,
    tab: &'static str,
    short: &'static str,
    help: &'static str,
}

/// Expands the table into [`PaneId`] and its descriptions (the state types
/// and modes are left to `panes`, which knows them).
macro_rules! define_ids {
    ($($id:ident => $field:ident: $state:ty, mode $mode:ident, $title:literal, tab $tab:literal, short $short:literal, help $help:literal;)*) => {
        /// The panes, in tab order.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum PaneId {
            $(#[doc = concat!("The ", $title, " pane.")]
            $id,)*
        }

        impl PaneId {
            /// How many panes there are (the tabs, the per-pane arrays).
            pub const COUNT: usize = [$(PaneId::$id),*].len();

            /// The panes in tab order.
            pub const ALL: [PaneId; PaneId::COUNT] = [$(PaneId::$id),*];

            const INFO: [PaneInfo; PaneId::COUNT] = [$(PaneInfo {
                title: $title,
                tab: $tab,
                short: $short,
                help: $help,
            }),*];
        }
    };
}

pane_registry!(define_ids);

// The number keys 1–9 select the panes.
const _: () = assert!(PaneId::COUNT <= 9);

impl PaneId {
    /// The pane's title.
    pub const fn title(self) -> &'static str {
        Self::INFO[self as usize].title
    }

    /// The tab's label: the title, shortened where every full title would
    /// not fit in 80 columns.
    pub const fn tab(self) -> &'static str {
        Self::INFO[self as usize].tab
    }

    /// The tab's label on a narrow terminal.
    pub const fn short(self) -> &'static str {
        Self::INFO[self as usize].short
    }

    /// The help screen's line for the pane's number key.
    pub const fn help(self) -> &'static str {
        Self::INFO[self as usize].help
    }

    /// The position in [`PaneId::ALL`] (the tab order).
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The number key that selects the pane (`'1'` for the first).
    pub const fn key(self) -> char {
        (b'1' + self as u8) as char
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_orders_the_panes() {
        for (i, p) in PaneId::ALL.into_iter().enumerate() {
            assert_eq!(p.index(), i);
        }
        assert_eq!(PaneId::Suspects.tab(), "Leaks");
        assert_eq!(PaneId::Dominators.short(), "Dom");
        assert_eq!(PaneId::Types.key(), '3');
    }
}
