//! A comparison of snapshots (docs/analyses.md) as the panes read it: the
//! [`Comparison`] plus the indexes a pane needs to find the comparison row
//! of what it shows, all built once in the worker (linear in the merged
//! rows, never per key or per frame). A leaf module: imports analysis
//! only; the worker builds it, `loading` keeps it, the panes read it.

use std::collections::HashMap;

use crate::theme::Theme;
use heaptui_core::analysis::Comparison;
pub use heaptui_core::analysis::NO_PATH;
use heaptui_core::model::TypeIdx;

/// The comparison of the newest snapshot (the one the UI opened) with its
/// baselines, indexed.
#[derive(Debug, Clone)]
pub struct Compared {
    pub cmp: Comparison,
    /// Newest snapshot's type index → shared type id of the comparison.
    pub shared_type: Vec<u32>,
    /// `(parent path, shared type, path)` of every merged path but the
    /// empty one, sorted: a row's children are contiguous, found by
    /// binary search.
    by_parent: Vec<(u32, u32, u32)>,
    /// Per merged path: it or a row below it grows steadily.
    pub steady_below: Vec<bool>,
    /// Per merged path: a row right below it is absent from the newest
    /// snapshot.
    has_vanished: Vec<bool>,
    /// Shared type id → row of `cmp.types` (`u32::MAX`: none).
    type_row: Vec<u32>,
    /// `(shared type, instance bytes, objects per copy, rank in the kind)`
    /// → row of `cmp.duplicates`.
    dup_row: HashMap<(u32, u64, u64, u32), u32>,
}

impl Compared {
    /// Indexes `cmp` for a newest snapshot whose type names are
    /// `newest_types`. Linear in the merged rows (plus a sort).
    pub fn new(cmp: Comparison, newest_types: &[Box<str>]) -> Compared {
        let by_name: HashMap<&str, u32> = cmp
            .type_names
            .iter()
            .enumerate()
            .map(|(i, n)| (&**n, i as u32))
            .collect();
        let shared_type = newest_types
            .iter()
            .map(|n| by_name.get(&**n).copied().unwrap_or(u32::MAX))
            .collect();
        drop(by_name);
        let p = &cmp.paths;
        let n = p.len();
        let mut by_parent: Vec<(u32, u32, u32)> = (1..n as u32)
            .map(|r| (p.parent[r as usize], p.type_id[r as usize], r))
            .collect();
        by_parent.sort_unstable();
        let mut steady_below = vec![false; n];
        for r in (1..n).rev() {
            steady_below[r] |= p.grows_steadily(r as u32);
            let parent = p.parent[r] as usize;
            if steady_below[r] && parent < n {
                steady_below[parent] = true;
            }
        }
        let mut has_vanished = vec![false; n];
        for r in 1..n {
            if p.figures_of(r as u32).last().is_some_and(|f| f.count == 0) {
                has_vanished[p.parent[r] as usize] = true;
            }
        }
        let mut type_row = vec![u32::MAX; cmp.type_names.len()];
        for (i, t) in cmp.types.iter().enumerate() {
            type_row[t.type_id as usize] = i as u32;
        }
        let dup_row = cmp
            .duplicates
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let key = (d.type_id, d.instance_bytes, d.objects_per_copy, d.rank);
                (key, i as u32)
            })
            .collect();
        Compared {
            cmp,
            shared_type,
            by_parent,
            steady_below,
            has_vanished,
            type_row,
            dup_row,
        }
    }

    /// How many snapshots were compared (the newest included).
    pub fn snapshots(&self) -> usize {
        self.cmp.snapshots()
    }

    /// The merged path of the row of newest type `newest_type` under the
    /// row `parent` (0: the top level), or [`NO_PATH`].
    pub fn child(&self, parent: u32, newest_type: TypeIdx) -> u32 {
        let Some(&ty) = self.shared_type.get(newest_type.index()) else {
            return NO_PATH;
        };
        if parent == NO_PATH || ty == u32::MAX {
            return NO_PATH;
        }
        match self
            .by_parent
            .binary_search_by_key(&(parent, ty), |e| (e.0, e.1))
        {
            Ok(i) => self.by_parent[i].2,
            Err(_) => NO_PATH,
        }
    }

    /// The rows under `parent` that the newest snapshot lacks (present in
    /// a baseline, gone now), most shrunk first.
    pub fn vanished(&self, parent: u32) -> Vec<u32> {
        if parent == NO_PATH {
            return Vec::new();
        }
        let start = self.by_parent.partition_point(|e| e.0 < parent);
        let end = self.by_parent.partition_point(|e| e.0 <= parent);
        let p = &self.cmp.paths;
        let mut out: Vec<u32> = self.by_parent[start..end]
            .iter()
            .map(|e| e.2)
            .filter(|&r| p.figures_of(r).last().is_some_and(|f| f.count == 0))
            .collect();
        out.sort_by_key(|&r| (p.growth(r), r));
        out
    }

    /// Whether a row right below `path` is absent from the newest snapshot.
    pub fn has_vanished(&self, path: u32) -> bool {
        self.has_vanished
            .get(path as usize)
            .copied()
            .unwrap_or(false)
    }

    /// Whether the row `path` has rows below it in any snapshot.
    pub fn has_children(&self, path: u32) -> bool {
        let i = self.by_parent.partition_point(|e| e.0 < path);
        self.by_parent.get(i).is_some_and(|e| e.0 == path)
    }

    /// Newest minus oldest retained bytes of a row.
    pub fn growth(&self, path: u32) -> i128 {
        self.cmp.paths.growth(path)
    }

    /// Newest minus oldest instances of a row.
    pub fn count_growth(&self, path: u32) -> i128 {
        let f = self.cmp.paths.figures_of(path);
        f[f.len() - 1].count as i128 - f[0].count as i128
    }

    /// Retained bytes rise at every step.
    pub fn steady(&self, path: u32) -> bool {
        path != NO_PATH && self.cmp.paths.grows_steadily(path)
    }

    /// Whether the row or one below it grows steadily.
    pub fn steady_at_or_below(&self, path: u32) -> bool {
        self.steady_below
            .get(path as usize)
            .copied()
            .unwrap_or(false)
    }

    /// The row of `cmp.types` of a newest type index.
    pub fn type_row(&self, newest_type: u32) -> Option<usize> {
        let ty = *self.shared_type.get(newest_type as usize)?;
        let r = *self.type_row.get(ty as usize)?;
        (r != u32::MAX).then_some(r as usize)
    }

    /// The row of `cmp.duplicates` of a newest duplicate set: its kind and
    /// its rank within the kind ([`heaptui_core::analysis::kind_ranks`]).
    pub fn duplicate_row(
        &self,
        newest_type: u32,
        instance_bytes: u64,
        objects_per_copy: u64,
        rank: u32,
    ) -> Option<usize> {
        let ty = *self.shared_type.get(newest_type as usize)?;
        self.dup_row
            .get(&(ty, instance_bytes, objects_per_copy, rank))
            .map(|&r| r as usize)
    }

    /// The row of `cmp.roots` of a (kind, flags) pair.
    pub fn root_row(&self, kind: u32, flags: u32) -> Option<usize> {
        self.cmp
            .roots
            .iter()
            .position(|r| (r.kind, r.flags) == (kind, flags))
    }

    /// The type name of a shared type id.
    pub fn type_name(&self, shared: u32) -> &str {
        self.cmp.type_names.get(shared as usize).map_or("?", |n| n)
    }

    /// The file names compared, oldest first (for titles).
    pub fn file_names(&self) -> Vec<String> {
        self.cmp
            .files
            .iter()
            .map(|f| {
                let name = f.file_name().map_or(f.as_path(), std::path::Path::new);
                heaptui_core::model::printable_path(name)
            })
            .collect()
    }
}

/// A signed byte difference with an explicit sign (`+1.50 KiB`, `−512 B`,
/// `0 B`); ASCII themes use `-`.
pub fn signed_bytes(delta: i128, theme: &Theme) -> String {
    signed(delta, theme, crate::fmt::bytes)
}

/// A signed count difference with an explicit sign (`+1,024`, `−3`, `0`).
pub fn signed_count(delta: i128, theme: &Theme) -> String {
    signed(delta, theme, crate::fmt::count)
}

fn signed(delta: i128, theme: &Theme, f: impl Fn(u64) -> String) -> String {
    let magnitude = f(delta.unsigned_abs().min(u64::MAX as u128) as u64);
    let minus = if theme.ascii { "-" } else { "−" };
    match delta {
        d if d > 0 => format!("+{magnitude}"),
        d if d < 0 => format!("{minus}{magnitude}"),
        _ => magnitude,
    }
}

/// The mark after the Δ of a row that grows in every snapshot.
pub fn steady_mark(theme: &Theme) -> &'static str {
    if theme.ascii {
        "^"
    } else {
        "↑"
    }
}

/// Figures that rise at every step, oldest to newest (with two snapshots:
/// that rise).
pub fn rises(figures: &[u64]) -> bool {
    figures.len() >= 2 && figures.windows(2).all(|w| w[1] > w[0])
}

/// The status line of the `t` key (in Types, Duplicates and Roots): the
/// new view, and what "steady" means with two snapshots. `rows`: what the
/// rows are (`types`, `sets`, `root groups`).
pub fn steady_status(on: bool, snapshots: usize, rows: &str) -> String {
    match (on, snapshots) {
        (false, _) => format!("every {rows} again"),
        (true, n) if n < 3 => {
            format!("{n} snapshots: only the {rows} that grew (steady growth needs 3 or more)")
        }
        (true, _) => format!("only the {rows} that grow in every snapshot (t: all again)"),
    }
}

/// The line an empty list shows under `t`.
pub fn steady_empty(snapshots: usize, rows: &str) -> String {
    if snapshots < 3 {
        format!(" (no {rows} grew; t shows them all)")
    } else {
        format!(" (none of the {rows} grows in every snapshot; t shows them all)")
    }
}

/// The width of a list's Δ column: the sign, the widest of its rows'
/// byte figures (`widest`) and of the gone rows' losses, and the steady
/// mark after it.
pub fn delta_width(widest: usize, gone: impl Iterator<Item = i128>) -> usize {
    let loss = gone.map(|d| d.unsigned_abs()).max().unwrap_or(0);
    widest.max(crate::fmt::bytes_width(loss.min(u64::MAX as u128) as u64)) + 2
}

/// Widest [`signed_bytes`] of a magnitude up to `max`.
pub fn signed_bytes_width(max: u64) -> usize {
    crate::fmt::bytes_width(max) + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_are_explicit_and_ascii_uses_a_hyphen() {
        let uni = Theme {
            ascii: false,
            colors: crate::theme::Colors::Mono,
        };
        let ascii = Theme {
            ascii: true,
            colors: crate::theme::Colors::Mono,
        };
        assert_eq!(signed_bytes(1536, &uni), "+1.50 KiB");
        assert_eq!(signed_bytes(-512, &uni), "−512 B");
        assert_eq!(signed_bytes(-512, &ascii), "-512 B");
        assert_eq!(signed_bytes(0, &uni), "0 B");
        assert_eq!(signed_count(-1234, &ascii), "-1,234");
    }
}
