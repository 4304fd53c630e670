//! Duplicate instances (SPEC §2.4, SciTech semantics): two reachable objects
//! are duplicates when pairing their reachability graphs field by field is
//! one-to-one with equal type name, shallow size and reference count at
//! every pair. Duplicate sets, additional bytes, held duplicates and the
//! holding set.

use crate::graph::{DominatorTree, HeapGraph};
use crate::progress::{Cancelled, Progress, Stage};

/// Which duplicates are detected (`--duplicates`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum DuplicateMode {
    None,
    Trivial,
    #[default]
    All,
}

impl DuplicateMode {
    pub fn name(self) -> &'static str {
        match self {
            DuplicateMode::None => "none",
            DuplicateMode::Trivial => "trivial",
            DuplicateMode::All => "all",
        }
    }
}

impl std::str::FromStr for DuplicateMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(DuplicateMode::None),
            "trivial" => Ok(DuplicateMode::Trivial),
            "all" => Ok(DuplicateMode::All),
            other => Err(format!(
                "unknown duplicates mode `{other}` (none, trivial, all)"
            )),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateOptions {
    pub mode: DuplicateMode,
    /// Work units (object-pairs visited) allowed per type before its
    /// undecided instances are reported as possible duplicates; `None` for
    /// no limit.
    pub budget_per_type: Option<u64>,
}

impl Default for DuplicateOptions {
    fn default() -> Self {
        DuplicateOptions {
            mode: DuplicateMode::All,
            budget_per_type: None,
        }
    }
}

/// One class of two or more mutually duplicate reachable objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateSet {
    /// Position in [`Duplicates::sets`] (sets are sorted by additional
    /// bytes descending, then lowest member id).
    pub id: u32,
    pub type_index: u32,
    /// Members, sorted by object id.
    pub members: Vec<u32>,
    /// Shallow size of one member.
    pub instance_bytes: u64,
    /// Objects reachable from one member, the member included.
    pub objects_per_copy: u64,
    pub additional_bytes: u64,
    /// Members reference nothing.
    pub trivial: bool,
    /// Every set that fully holds this one, ascending.
    pub held_by: Vec<u32>,
    pub holding_set: Option<u32>,
}

/// Instances of one type whose detection was cut short.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PossibleDuplicates {
    pub type_index: u32,
    /// Undecided instances, in index order.
    pub instances: Vec<u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Duplicates {
    pub mode: Option<DuplicateMode>,
    pub sets: Vec<DuplicateSet>,
    pub possible: Vec<PossibleDuplicates>,
    /// `(object, set id)` for every member, sorted by object.
    member_of: Vec<(u32, u32)>,
}

impl Duplicates {
    /// The set an object belongs to.
    pub fn set_of(&self, object: u32) -> Option<u32> {
        self.member_of
            .binary_search_by_key(&object, |&(o, _)| o)
            .ok()
            .map(|i| self.member_of[i].1)
    }

    pub fn total_additional_bytes(&self) -> u64 {
        self.sets.iter().map(|s| s.additional_bytes).sum()
    }
}

/// Detects duplicates as `options` say.
pub fn find_duplicates(
    graph: &HeapGraph,
    dom: &DominatorTree,
    options: &DuplicateOptions,
    progress: &Progress,
) -> Result<Duplicates, Cancelled> {
    progress.start(Stage::Duplicates, 1);
    if options.mode == DuplicateMode::None {
        return Ok(Duplicates::default());
    }
    let dump = &graph.dump;
    // Trivial duplicates: reachable leaves of one type and size.
    let mut leaves: Vec<(u32, u64, u64, u32)> = (0..graph.objects() as u32)
        .filter(|&o| dom.is_reachable(o) && graph.refs(o).is_empty())
        .map(|o| {
            (
                dump.types[o as usize],
                dump.sizes[o as usize],
                dump.ids[o as usize],
                o,
            )
        })
        .collect();
    progress.check()?;
    leaves.sort_unstable();
    let mut sets = Vec::new();
    for class in leaves.chunk_by(|a, b| a.0 == b.0 && a.1 == b.1) {
        if class.len() < 2 {
            continue;
        }
        sets.push(DuplicateSet {
            id: 0,
            type_index: class[0].0,
            members: class.iter().map(|c| c.3).collect(),
            instance_bytes: class[0].1,
            objects_per_copy: 1,
            additional_bytes: class[0].1 * (class.len() as u64 - 1),
            trivial: true,
            held_by: Vec::new(),
            holding_set: None,
        });
    }
    Ok(finish(dump, sets, Vec::new(), options.mode))
}

/// Sorts the sets, numbers them and indexes their members.
fn finish(
    dump: &crate::dump::Dump,
    mut sets: Vec<DuplicateSet>,
    possible: Vec<PossibleDuplicates>,
    mode: DuplicateMode,
) -> Duplicates {
    sets.sort_by(|a, b| {
        b.additional_bytes
            .cmp(&a.additional_bytes)
            .then_with(|| dump.ids[a.members[0] as usize].cmp(&dump.ids[b.members[0] as usize]))
    });
    for (i, s) in sets.iter_mut().enumerate() {
        s.id = i as u32;
    }
    let mut member_of: Vec<(u32, u32)> = sets
        .iter()
        .flat_map(|s| s.members.iter().map(move |&m| (m, s.id)))
        .collect();
    member_of.sort_unstable();
    Duplicates {
        mode: Some(mode),
        sets,
        possible,
        member_of,
    }
}
