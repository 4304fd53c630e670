//! Comparing snapshots of one program (docs/analyses.md). Object ids are not
//! identities across dumps (a compacting GC renumbers them, seed 002), so
//! snapshots are matched by aggregates only: types by name, grouped
//! dominator rows by type path ([`super::compare_paths`]), duplicate sets by
//! (type, instance bytes, objects per copy) and their rank within that kind
//! ([`kind_ranks`]), roots by (kind, flags). For V8
//! snapshots only, whose node ids are stable within a process, types also
//! get new and deleted counts.
//!
//! Each snapshot is reduced to a [`SnapshotSummary`] (linear in its
//! reachable objects, a fraction of an analysis) right after its analysis,
//! so the analyses of the baselines can be dropped; [`compare`] merges the
//! summaries in time linear in their sizes.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::compare_paths::{FastMap, MergedRows, PathTable};
use super::roots::root_groups;
use super::{Analysis, AnalysisError};
use crate::graph::duplicates::{DuplicateOptions, Duplicates};
use crate::import::ImportOptions;
use crate::model::Format;
use crate::progress::Progress;

/// Per type of one snapshot (index = the snapshot's type index).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TypeFigures {
    /// Instances in the dump, reachable or not.
    pub count: u64,
    /// Shallow bytes of all instances.
    pub shallow_bytes: u64,
    /// The type's minimum retained bytes ([`super::TypeStats::min_retained_bytes`]).
    pub min_retained_bytes: u64,
}

/// A duplicate set of one snapshot: its key and its figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DuplicateFigures {
    /// The set's type, an index into the snapshot's type names.
    pub type_index: u32,
    /// Shallow bytes of one instance.
    pub instance_bytes: u64,
    /// Objects reachable from one member, the member included.
    pub objects_per_copy: u64,
    /// Its rank among the snapshot's sets of the same kind ([`kind_ranks`]).
    pub rank: u32,
    /// Instances in the set.
    pub instances: u64,
    /// The set's [`DuplicateSet::additional_bytes`](crate::graph::duplicates::DuplicateSet::additional_bytes).
    pub additional_bytes: u64,
}

/// Root records of one (kind, flags) pair in one snapshot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RootFigures {
    /// Root records of the pair.
    pub records: u64,
    /// Distinct objects they root.
    pub objects: u64,
    /// Sum of those objects' retained bytes.
    pub retained_bytes: u64,
}

/// What the comparison needs of one analysed snapshot.
#[derive(Debug, Clone)]
pub struct SnapshotSummary {
    /// The dump file.
    pub file: PathBuf,
    /// Which importer read it.
    pub format: Format,
    /// The snapshot's type names (index = its type index).
    pub type_names: Vec<Box<str>>,
    /// Indexed by type index; types without instances are all zeros.
    pub types: Vec<TypeFigures>,
    /// Its grouped dominator rows, by type path.
    pub paths: PathTable,
    /// Its duplicate sets, in the analysis's order.
    pub duplicates: Vec<DuplicateFigures>,
    /// Per (kind, flags) pair of its root records, their figures.
    pub roots: Vec<((u32, u32), RootFigures)>,
    /// Bytes reachable from the strong roots.
    pub reachable_bytes: u64,
    /// `(id, type index)` sorted by id, for V8 snapshots only (stable ids).
    pub ids: Option<Vec<(u64, u32)>>,
    /// Its duplicate owners (the format's default exclude patterns), by
    /// path text.
    pub owners: Vec<OwnerFigures>,
}

/// One duplicate owner of a snapshot ([`super::owners`]), matched across
/// snapshots by its path's type names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerFigures {
    /// The type names of the owner's path, the owner first (empty: held
    /// by GC roots directly).
    pub path: Vec<String>,
    /// Its extra copies' shallow bytes.
    pub bytes: u64,
    /// Its extra copies.
    pub copies: u64,
}

impl SnapshotSummary {
    /// Summarises an analysis: the path table (parallel, linear) and the
    /// per-type, duplicate and root figures it already holds.
    pub fn of(a: &Analysis) -> SnapshotSummary {
        let span = tracing::debug_span!(target: "heaptui::profile", "paths, roots").entered();
        let dump = a.dump();
        let ((paths, ids), roots) = rayon::join(
            || {
                rayon::join(
                    || PathTable::build(dump, &a.dom),
                    || (dump.format == Format::Heapsnapshot).then(|| sorted_ids(a)),
                )
            },
            || root_groups(&a.graph, &a.dom),
        );
        tracing::debug!(target: "heaptui::profile", "summary: {} paths", paths.len());
        span.exit();
        let mut types = vec![TypeFigures::default(); dump.type_names.len()];
        for t in a.types.iter() {
            types[t.type_index.index()] = TypeFigures {
                count: t.count,
                shallow_bytes: t.shallow_bytes,
                min_retained_bytes: t.min_retained_bytes,
            };
        }
        let ranks = kind_ranks(&a.duplicates);
        let duplicates = a
            .duplicates
            .numbered()
            .zip(ranks)
            .map(|((i, s), rank)| DuplicateFigures {
                type_index: s.type_index,
                instance_bytes: s.instance_bytes,
                objects_per_copy: s.objects_per_copy,
                rank,
                instances: a.duplicates.members(i).len() as u64,
                additional_bytes: s.additional_bytes,
            })
            .collect();
        let roots = roots
            .iter()
            .map(|g| {
                let fig = RootFigures {
                    records: g.roots.len() as u64,
                    objects: g.objects,
                    retained_bytes: g.retained_bytes,
                };
                ((g.kind, g.flags), fig)
            })
            .collect();
        let owners = owner_figures(a);
        SnapshotSummary {
            owners,
            file: dump.path.clone(),
            format: dump.format,
            type_names: dump.type_names.clone(),
            types,
            paths,
            duplicates,
            roots,
            reachable_bytes: a.dom.reachable_bytes,
            ids,
        }
    }
}

/// A snapshot's duplicate owners with its format's default exclude
/// patterns, by path (paths of the same names are one owner).
fn owner_figures(a: &Analysis) -> Vec<OwnerFigures> {
    let dump = a.dump();
    let globs = super::owners::default_owner_globs(dump.format);
    let owners = super::owners::duplicate_owners(dump, &a.dom, &a.duplicates, &globs);
    let mut rows: Vec<OwnerFigures> = owners
        .owners
        .iter()
        .map(|o| OwnerFigures {
            path: o
                .path
                .iter()
                .map(|t| dump.type_names[t.index()].to_string())
                .collect(),
            bytes: o.bytes,
            copies: o.copies,
        })
        .collect();
    rows.sort_by(|a, b| a.path.cmp(&b.path));
    rows.dedup_by(|b, a| {
        let same = a.path == b.path;
        if same {
            a.bytes += b.bytes;
            a.copies += b.copies;
        }
        same
    });
    rows
}

/// Per set of one snapshot (same order): its rank among the snapshot's sets
/// of the same **kind** (type, instance bytes, objects per copy), 0 first.
///
/// A kind can hold several sets in one snapshot (two groups of equal
/// strings of one length, say); sets of one kind are matched across
/// snapshots one to one by this rank, so each gets a Δ of its own: within
/// a kind, sets rank by copies (members) descending, then additional bytes
/// descending, then set id. The kind's biggest set in one snapshot is
/// compared with its biggest in the next, and so on; a rank a snapshot
/// lacks has zeros there. O(sets log sets).
pub fn kind_ranks(dups: &Duplicates) -> Vec<u32> {
    let sets = &dups.sets[..];
    let mut by_kind: Vec<u32> = (0..sets.len() as u32).collect();
    by_kind.sort_unstable_by_key(|&i| {
        let s = &sets[i as usize];
        (
            s.type_index,
            s.instance_bytes,
            s.objects_per_copy,
            std::cmp::Reverse(dups.members(i).len()),
            std::cmp::Reverse(s.additional_bytes),
            i,
        )
    });
    let kind = |i: u32| {
        let s = &sets[i as usize];
        (s.type_index, s.instance_bytes, s.objects_per_copy)
    };
    let mut ranks = vec![0u32; sets.len()];
    for pair in by_kind.windows(2) {
        if kind(pair[0]) == kind(pair[1]) {
            ranks[pair[1] as usize] = ranks[pair[0] as usize] + 1;
        }
    }
    ranks
}

fn sorted_ids(a: &Analysis) -> Vec<(u64, u32)> {
    let dump = a.dump();
    let mut v: Vec<(u64, u32)> = dump
        .ids
        .iter()
        .zip(dump.types.iter().map(|t| t.raw()))
        .collect();
    v.par_sort_unstable();
    v
}

/// One type across the snapshots (arrays oldest first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeComparison {
    /// The type, an index into [`Comparison::type_names`].
    pub type_id: u32,
    /// Instances per snapshot.
    pub count: Vec<u64>,
    /// Shallow bytes per snapshot.
    pub shallow_bytes: Vec<u64>,
    /// Minimum retained bytes per snapshot.
    pub min_retained_bytes: Vec<u64>,
    /// V8 only: objects of the newest snapshot whose id the oldest lacks,
    /// and objects of the oldest whose id the newest lacks.
    pub new_deleted: Option<(u64, u64)>,
}

impl TypeComparison {
    /// Shallow bytes of the newest snapshot minus those of the oldest.
    pub fn shallow_growth(&self) -> i128 {
        *self.shallow_bytes.last().unwrap() as i128 - self.shallow_bytes[0] as i128
    }
    /// Present in the newest snapshot but not the oldest.
    pub fn appears(&self) -> bool {
        self.count[0] == 0 && *self.count.last().unwrap() > 0
    }
    /// Present in the oldest snapshot but not the newest.
    pub fn vanishes(&self) -> bool {
        self.count[0] > 0 && *self.count.last().unwrap() == 0
    }
}

/// One duplicate set across the snapshots: the sets of one kind and rank
/// ([`kind_ranks`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateComparison {
    /// The set's type, an index into [`Comparison::type_names`].
    pub type_id: u32,
    /// Shallow bytes of one instance.
    pub instance_bytes: u64,
    /// Objects in one copy.
    pub objects_per_copy: u64,
    /// The rank within its kind, the same in every snapshot.
    pub rank: u32,
    /// Instances per snapshot (0 where the set is absent).
    pub instances: Vec<u64>,
    /// Additional bytes per snapshot (0 where the set is absent).
    pub additional_bytes: Vec<u64>,
}

/// Root records of one (kind, flags) across the snapshots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootComparison {
    /// A [`crate::model::root_kind`] value.
    pub kind: u32,
    /// [`crate::model::root_flags`] bits.
    pub flags: u32,
    /// The pair's figures per snapshot (zeros where it has none).
    pub figures: Vec<RootFigures>,
}

/// One duplicate owner across the snapshots (zeros where it is absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerComparison {
    /// The type names of the owner's path, as [`OwnerFigures::path`].
    pub path: Vec<String>,
    /// Its extra copies' bytes per snapshot.
    pub bytes: Vec<u64>,
    /// Its extra copies per snapshot.
    pub copies: Vec<u64>,
}

impl OwnerComparison {
    /// Bytes newest − oldest.
    pub fn growth(&self) -> i128 {
        self.bytes[self.bytes.len() - 1] as i128 - self.bytes[0] as i128
    }
}

/// Several snapshots compared, oldest first.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// The dump files, oldest first.
    pub files: Vec<PathBuf>,
    /// Each dump's format.
    pub formats: Vec<Format>,
    /// Shared type ids → names (every type of any snapshot, by name).
    pub type_names: Vec<Box<str>>,
    /// By shallow-bytes growth (newest − oldest) descending, then name.
    pub types: Vec<TypeComparison>,
    /// The grouped dominator rows of every snapshot, merged by type path.
    pub paths: MergedRows,
    /// By additional-bytes growth descending.
    pub duplicates: Vec<DuplicateComparison>,
    /// By (kind, flags).
    pub roots: Vec<RootComparison>,
    /// Duplicate owners matched by path text, by bytes growth descending.
    pub owners: Vec<OwnerComparison>,
    /// Bytes reachable from the strong roots, per snapshot.
    pub reachable_bytes: Vec<u64>,
}

impl Comparison {
    /// How many snapshots are compared.
    pub fn snapshots(&self) -> usize {
        self.files.len()
    }

    /// Whether `new`/`deleted` counts exist (every snapshot is V8).
    pub fn has_stable_ids(&self) -> bool {
        self.types.first().is_some_and(|t| t.new_deleted.is_some())
    }

    /// The type names of a merged path, root-most first.
    pub fn path_names(&self, path: u32) -> Vec<&str> {
        self.paths
            .types_of(path)
            .into_iter()
            .map(|t| &*self.type_names[t as usize])
            .collect()
    }

    /// The merged paths whose figures differ between snapshots, by
    /// retained-bytes growth (newest − oldest) descending, then newest
    /// retained bytes descending, then path number (parents first).
    pub fn changed_paths(&self) -> Vec<u32> {
        let p = &self.paths;
        let mut rows: Vec<u32> = (1..p.len() as u32)
            .into_par_iter()
            .filter(|&r| p.differs(r))
            .collect();
        let k = p.snapshots;
        rows.par_sort_unstable_by_key(|&r| {
            (
                std::cmp::Reverse(p.growth(r)),
                std::cmp::Reverse(p.figures[r as usize * k + k - 1].retained_bytes),
                r,
            )
        });
        rows
    }

    /// The largest retained-bytes growth of any path (oldest → newest) and
    /// that path, if any path grew.
    pub fn largest_growth(&self) -> Option<(u32, u64)> {
        (1..self.paths.len() as u32)
            .into_par_iter()
            .map(|r| (self.paths.growth(r), r))
            .filter(|&(g, _)| g > 0)
            .max_by_key(|&(g, r)| (g, std::cmp::Reverse(r)))
            .map(|(g, r)| (r, g as u64))
    }
}

/// Compares summaries, oldest first. Linear in their sizes.
pub fn compare(snapshots: &[SnapshotSummary]) -> Comparison {
    assert!(!snapshots.is_empty(), "nothing to compare");
    // Shared type ids by name.
    let mut by_name: FastMap<&str, u32> = FastMap::default();
    let mut type_names: Vec<Box<str>> = Vec::new();
    let shared_type: Vec<Vec<u32>> = snapshots
        .iter()
        .map(|s| {
            s.type_names
                .iter()
                .map(|n| {
                    *by_name.entry(n).or_insert_with(|| {
                        type_names.push(n.clone());
                        (type_names.len() - 1) as u32
                    })
                })
                .collect()
        })
        .collect();
    let span = tracing::debug_span!(target: "heaptui::profile", "compare").entered();
    let tables: Vec<&PathTable> = snapshots.iter().map(|s| &s.paths).collect();
    let (paths, types) = rayon::join(
        || MergedRows::merge(&tables, &shared_type),
        || compare_types(snapshots, &shared_type, &type_names),
    );
    tracing::debug!(target: "heaptui::profile", "compare: {} merged paths", paths.len());
    span.exit();
    Comparison {
        files: snapshots.iter().map(|s| s.file.clone()).collect(),
        formats: snapshots.iter().map(|s| s.format).collect(),
        types,
        paths,
        duplicates: compare_duplicates(snapshots, &shared_type),
        roots: compare_roots(snapshots),
        owners: compare_owners(snapshots),
        reachable_bytes: snapshots.iter().map(|s| s.reachable_bytes).collect(),
        type_names,
    }
}

fn compare_types(
    snapshots: &[SnapshotSummary],
    shared_type: &[Vec<u32>],
    names: &[Box<str>],
) -> Vec<TypeComparison> {
    let k = snapshots.len();
    let mut rows: Vec<TypeComparison> = (0..names.len() as u32)
        .map(|t| TypeComparison {
            type_id: t,
            count: vec![0; k],
            shallow_bytes: vec![0; k],
            min_retained_bytes: vec![0; k],
            new_deleted: None,
        })
        .collect();
    for (s, snap) in snapshots.iter().enumerate() {
        for (t, f) in snap.types.iter().enumerate() {
            let r = &mut rows[shared_type[s][t] as usize];
            r.count[s] += f.count;
            r.shallow_bytes[s] += f.shallow_bytes;
            r.min_retained_bytes[s] += f.min_retained_bytes;
        }
    }
    if let Some(nd) = new_and_deleted(snapshots, shared_type, names.len()) {
        for (r, x) in rows.iter_mut().zip(nd) {
            r.new_deleted = Some(x);
        }
    }
    rows.retain(|r| r.count.iter().any(|&c| c > 0));
    rows.sort_by(|a, b| {
        b.shallow_growth()
            .cmp(&a.shallow_growth())
            .then_with(|| names[a.type_id as usize].cmp(&names[b.type_id as usize]))
    });
    rows
}

/// V8 only: per shared type, (new, deleted) object counts between the
/// oldest and the newest snapshot, by stable node id. A merge of two sorted
/// id lists.
fn new_and_deleted(
    snapshots: &[SnapshotSummary],
    shared_type: &[Vec<u32>],
    types: usize,
) -> Option<Vec<(u64, u64)>> {
    let (first, last) = (snapshots.first()?, snapshots.last()?);
    if snapshots.len() < 2 || snapshots.iter().any(|s| s.format != Format::Heapsnapshot) {
        return None;
    }
    let (old, new) = (first.ids.as_ref()?, last.ids.as_ref()?);
    let (old_types, new_types) = (&shared_type[0], &shared_type[snapshots.len() - 1]);
    let mut out = vec![(0u64, 0u64); types];
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < new.len() {
        match (old.get(i), new.get(j)) {
            (Some(a), Some(b)) if a.0 == b.0 => {
                i += 1;
                j += 1;
            }
            (Some(a), b) if b.is_none_or(|b| a.0 < b.0) => {
                out[old_types[a.1 as usize] as usize].1 += 1;
                i += 1;
            }
            (_, Some(b)) => {
                out[new_types[b.1 as usize] as usize].0 += 1;
                j += 1;
            }
            _ => unreachable!(),
        }
    }
    Some(out)
}

fn compare_duplicates(
    snapshots: &[SnapshotSummary],
    shared_type: &[Vec<u32>],
) -> Vec<DuplicateComparison> {
    let k = snapshots.len();
    let mut keyed: FastMap<(u32, u64, u64, u32), usize> = FastMap::default();
    let mut rows: Vec<DuplicateComparison> = Vec::new();
    for (s, snap) in snapshots.iter().enumerate() {
        for d in &snap.duplicates {
            let ty = shared_type[s][d.type_index as usize];
            let i = *keyed
                .entry((ty, d.instance_bytes, d.objects_per_copy, d.rank))
                .or_insert_with(|| {
                    rows.push(DuplicateComparison {
                        type_id: ty,
                        instance_bytes: d.instance_bytes,
                        objects_per_copy: d.objects_per_copy,
                        rank: d.rank,
                        instances: vec![0; k],
                        additional_bytes: vec![0; k],
                    });
                    rows.len() - 1
                });
            rows[i].instances[s] += d.instances;
            rows[i].additional_bytes[s] += d.additional_bytes;
        }
    }
    let growth =
        |r: &DuplicateComparison| r.additional_bytes[k - 1] as i128 - r.additional_bytes[0] as i128;
    rows.sort_by(|a, b| {
        growth(b)
            .cmp(&growth(a))
            .then(b.additional_bytes[k - 1].cmp(&a.additional_bytes[k - 1]))
            .then(
                (a.type_id, a.instance_bytes, a.objects_per_copy, a.rank).cmp(&(
                    b.type_id,
                    b.instance_bytes,
                    b.objects_per_copy,
                    b.rank,
                )),
            )
    });
    rows
}

/// Owners matched by path text, by bytes growth descending, then newest
/// bytes descending, then path.
fn compare_owners(snapshots: &[SnapshotSummary]) -> Vec<OwnerComparison> {
    let k = snapshots.len();
    let mut keyed: FastMap<&[String], usize> = FastMap::default();
    let mut rows: Vec<OwnerComparison> = Vec::new();
    for (s, snap) in snapshots.iter().enumerate() {
        for o in &snap.owners {
            let i = *keyed.entry(&o.path).or_insert_with(|| {
                rows.push(OwnerComparison {
                    path: o.path.clone(),
                    bytes: vec![0; k],
                    copies: vec![0; k],
                });
                rows.len() - 1
            });
            rows[i].bytes[s] += o.bytes;
            rows[i].copies[s] += o.copies;
        }
    }
    rows.sort_by(|a, b| {
        b.growth()
            .cmp(&a.growth())
            .then(b.bytes[k - 1].cmp(&a.bytes[k - 1]))
            .then_with(|| a.path.cmp(&b.path))
    });
    rows
}

fn compare_roots(snapshots: &[SnapshotSummary]) -> Vec<RootComparison> {
    let k = snapshots.len();
    let mut rows: Vec<RootComparison> = Vec::new();
    for (s, snap) in snapshots.iter().enumerate() {
        for &((kind, flags), f) in &snap.roots {
            let i = match rows.iter().position(|r| (r.kind, r.flags) == (kind, flags)) {
                Some(i) => i,
                None => {
                    rows.push(RootComparison {
                        kind,
                        flags,
                        figures: vec![RootFigures::default(); k],
                    });
                    rows.len() - 1
                }
            };
            rows[i].figures[s] = f;
        }
    }
    rows.sort_by_key(|r| (r.kind, r.flags));
    rows
}

/// How the snapshots of a comparison are analysed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Schedule {
    /// All at once where the memory allows it (estimated from the file
    /// sizes and the available memory), else one after another.
    #[default]
    Auto,
    /// All at once (rayon): the most memory, sometimes the least time.
    Parallel,
    /// One after another, each summarised and dropped before the next:
    /// the memory of one analysis.
    Sequential,
}

/// Analyses `files` (oldest first; the last is the report's own dump),
/// summarises each, and compares them. Returns the comparison and the
/// newest snapshot's full analysis.
pub fn compare_files(
    files: &[PathBuf],
    import: ImportOptions,
    options: &DuplicateOptions,
    progress: &Progress,
    schedule: Schedule,
) -> Result<(Comparison, Analysis), AnalysisError> {
    compare_files_with(files, schedule, progress, &|p, progress| {
        Analysis::run(p, import, options, progress)
    })
}

/// [`compare_files`] with the analysis of one file given: the baselines
/// are analysed with a progress of their own and reduced to their summary
/// at once (their analyses dropped), the newest with `progress`.
pub fn compare_files_with<F>(
    files: &[PathBuf],
    schedule: Schedule,
    progress: &Progress,
    analyse: &F,
) -> Result<(Comparison, Analysis), AnalysisError>
where
    F: Fn(&Path, &Progress) -> Result<Analysis, AnalysisError> + Sync,
{
    let (newest, baselines) = files.split_last().expect("at least one file");
    let parallel = match schedule {
        Schedule::Parallel => true,
        Schedule::Sequential => false,
        Schedule::Auto => memory_allows(files),
    };
    let summarise = |p: &PathBuf| -> Result<SnapshotSummary, AnalysisError> {
        let a = analyse(p, &Progress::new())?;
        Ok(SnapshotSummary::of(&a))
    };
    let analyse_newest = || -> Result<(Analysis, SnapshotSummary), AnalysisError> {
        let a = analyse(newest, progress)?;
        let s = SnapshotSummary::of(&a);
        Ok((a, s))
    };
    let (old, new) = if parallel {
        let (old, new) = rayon::join(
            || {
                baselines
                    .par_iter()
                    .map(summarise)
                    .collect::<Result<Vec<_>, _>>()
            },
            analyse_newest,
        );
        (old?, new?)
    } else {
        let old = baselines
            .iter()
            .map(summarise)
            .collect::<Result<Vec<_>, _>>()?;
        (old, analyse_newest()?)
    };
    let (analysis, newest_summary) = new;
    for o in &old {
        same_format(&o.file, o.format, newest, newest_summary.format)
            .map_err(AnalysisError::Input)?;
    }
    let mut all = old;
    all.push(newest_summary);
    Ok((compare(&all), analysis))
}

/// Refuses to compare `baseline` (of `its` format) with `newest`: type
/// names, sizes and roots mean different things in different formats (a
/// Java dump against a Node one reported `java.lang.Class` as grown).
pub fn same_format(
    baseline: &Path,
    its: Format,
    newest: &Path,
    format: Format,
) -> Result<(), crate::import::InputError> {
    if its == format {
        return Ok(());
    }
    Err(crate::import::InputError::new(
        baseline,
        format!(
            "a {}, not a {} as {} is: snapshots compare only within one format",
            its.describe(),
            format.describe(),
            crate::model::text::printable_path(newest)
        ),
    ))
}

/// Whether every file's analysis fits in the available memory at once: an
/// analysis takes about 2.5 bytes per byte of text dump (140 bytes per
/// object, docs/performance.md); compressed and binary formats are denser, so this is
/// generous for them only in the cautious direction for text.
fn memory_allows(files: &[PathBuf]) -> bool {
    let need: u64 = files.iter().map(|p| estimate(p)).sum();
    match available_memory() {
        Some(avail) => need <= avail / 10 * 8,
        None => false,
    }
}

fn estimate(path: &Path) -> u64 {
    let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let mut head = [0u8; 2];
    let gz = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok()
        && head == [0x1f, 0x8b];
    // A gzip of text shrinks about tenfold.
    if gz {
        len.saturating_mul(25)
    } else {
        len.saturating_mul(5) / 2
    }
}

fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::duplicates::{DuplicateSet, SetLists};

    fn set(type_index: u32, copies: usize, additional: u64) -> (DuplicateSet, Vec<u32>) {
        let s = DuplicateSet::new(type_index, 16, 2, additional, false);
        (s, (0..copies as u32).collect())
    }

    /// Sets numbered by position, their members anything of their count.
    fn numbered(sets: Vec<(DuplicateSet, Vec<u32>)>) -> Duplicates {
        let n = sets.len();
        let (sets, members): (Vec<_>, Vec<_>) = sets.into_iter().unzip();
        Duplicates::from_parts(
            16,
            false,
            None,
            sets,
            SetLists::from_lists(members),
            SetLists::from_lists(vec![Vec::<u32>::new(); n]),
            Vec::new(),
            None,
            Vec::new(),
        )
    }

    #[test]
    fn kind_ranks_order_the_sets_of_a_kind_by_copies_then_bytes_then_id() {
        let mut other_size = set(1, 9, 900);
        other_size.0.instance_bytes = 24;
        let sets = numbered(vec![
            set(1, 3, 300),
            set(1, 5, 500),
            set(2, 2, 200),
            set(1, 3, 400),
            set(1, 3, 400),
            other_size,
        ]);
        // Kind (1, 16, 2): #1 (5 copies), #3 and #4 (3 copies, 400 B; by
        // id), #0 (3 copies, 300 B). #2 and #5 are alone in their kinds.
        assert_eq!(kind_ranks(&sets), [3, 0, 0, 1, 2, 0]);
        assert!(kind_ranks(&numbered(Vec::new())).is_empty());
    }
}
