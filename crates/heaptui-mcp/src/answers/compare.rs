//! `comparison`: with older snapshots on the command line, the grouped
//! dominator rows of every snapshot merged by type path, those that grow at
//! every step first (the leak candidates), then the others by growth.

use serde_json::{json, Value};

use heaptui_core::analysis::NO_OBJECT;
use heaptui_core::model::ObjectIdx;

use crate::page::{window, Page, Refusal};
use crate::state::Loaded;

/// A page of the changed type paths of the comparison.
pub fn comparison(l: &Loaded, offset: Option<u64>, limit: Option<u64>) -> Result<Value, Refusal> {
    let Some(c) = &l.comparison else {
        return Err(Refusal::new(
            "no comparison: the server was started with one dump; start it with older snapshots first (heaptui mcp OLD… NEW)",
        ));
    };
    let a = &l.analysis;
    let rows = l.changed_paths();
    let range = window(rows.len(), offset, limit)?;
    let page = rows[range.clone()]
        .iter()
        .map(|&r| {
            let f = c.paths.figures_of(r);
            let largest = c.paths.newest_largest[r as usize];
            let largest = (largest != NO_OBJECT).then(|| a.dump().id_hex(ObjectIdx(largest)));
            json!({
                "type_path": c.path_names(r),
                "grows_steadily": c.paths.grows_steadily(r),
                "growth_bytes": c.paths.growth(r).clamp(i64::MIN as i128, i64::MAX as i128) as i64,
                "retained_bytes": f.iter().map(|x| x.retained_bytes).collect::<Vec<_>>(),
                "count": f.iter().map(|x| x.count).collect::<Vec<_>>(),
                "newest_largest_id": largest,
            })
        })
        .collect();
    let files: Vec<String> = c.files.iter().map(|f| f.display().to_string()).collect();
    Ok(Page::new("paths", page, range.start, rows.len())
        .with("snapshots_oldest_first", files)
        .with("reachable_bytes", c.reachable_bytes.clone())
        .with(
            "next",
            "object with newest_largest_id shows the row's largest member in the newest snapshot; suspects lists where growth accumulates",
        )
        .finish())
}
