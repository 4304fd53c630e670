//! The panes' names and order (tabs, number keys, per-pane filters). A leaf
//! module: the panes, the filter thread and the router all use it.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PaneId {
    Overview,
    Dominators,
    Types,
    Duplicates,
    Roots,
}

impl PaneId {
    pub const ALL: [PaneId; 5] = [
        PaneId::Overview,
        PaneId::Dominators,
        PaneId::Types,
        PaneId::Duplicates,
        PaneId::Roots,
    ];

    pub fn title(self) -> &'static str {
        match self {
            PaneId::Overview => "Overview",
            PaneId::Dominators => "Dominators",
            PaneId::Types => "Types",
            PaneId::Duplicates => "Duplicates",
            PaneId::Roots => "Roots",
        }
    }

    pub fn index(self) -> usize {
        PaneId::ALL.iter().position(|&p| p == self).unwrap_or(0)
    }
}
