//! The panes' names and order (tabs, number keys, per-pane filters). A leaf
//! module: the panes, the filter thread and the router all use it.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PaneId {
    Overview,
    Dominators,
    Types,
    Duplicates,
    Roots,
    Suspects,
}

impl PaneId {
    /// How many panes there are (the tabs, the per-pane arrays).
    pub const COUNT: usize = 6;

    pub const ALL: [PaneId; PaneId::COUNT] = [
        PaneId::Overview,
        PaneId::Dominators,
        PaneId::Types,
        PaneId::Duplicates,
        PaneId::Roots,
        PaneId::Suspects,
    ];

    pub fn title(self) -> &'static str {
        match self {
            PaneId::Overview => "Overview",
            PaneId::Dominators => "Dominators",
            PaneId::Types => "Types",
            PaneId::Duplicates => "Duplicates",
            PaneId::Roots => "Roots",
            PaneId::Suspects => "Suspects",
        }
    }

    /// The tab's label: the title, shortened where six full titles would
    /// not fit in 80 columns.
    pub fn tab(self) -> &'static str {
        match self {
            PaneId::Suspects => "Leaks",
            p => p.title(),
        }
    }

    pub fn index(self) -> usize {
        PaneId::ALL.iter().position(|&p| p == self).unwrap_or(0)
    }
}
