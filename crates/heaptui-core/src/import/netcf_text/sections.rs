//! Resolving sections and types: which AppDomain section is in force at each
//! record (from the chunks' `a`/`c` events, in file order), the type names
//! interned across sections, and per section the table from the dump's
//! type ids (scoped to their section, docs/formats.md) to type indices.

use crate::model::Kind;
use std::collections::HashMap;

use super::build::Assembly;
use super::lines::{Chunk, SectionEvent};
use crate::model::{AppDomain, MAX_MESSAGES};

/// The type index of objects whose type id their section never defines,
/// until they get a name of their own.
pub(super) const NO_TYPE: u32 = u32::MAX;

/// The AppDomain sections and where each is in force.
pub(super) struct Sections {
    /// Index 0 is the implicit section outside any `a … c` pair.
    pub(super) app_domains: Vec<AppDomain>,
    /// `at[chunk][marker]`: the section in force in that chunk after
    /// `marker` of its section events.
    at: Vec<Vec<u32>>,
}

impl Sections {
    /// Replays the chunks' section events in file order (draining them).
    pub(super) fn read(chunks: &mut [Chunk]) -> Sections {
        let mut app_domains = vec![AppDomain::default()];
        let mut current = 0usize;
        let mut at: Vec<Vec<u32>> = Vec::with_capacity(chunks.len());
        for c in chunks {
            let mut here = Vec::with_capacity(c.events.len() + 1);
            here.push(current as u32);
            for e in c.events.drain(..) {
                match e {
                    SectionEvent::Open {
                        version,
                        name,
                        stamp,
                    } => {
                        app_domains.push(AppDomain {
                            version,
                            name,
                            stamp,
                            closed: false,
                            objects: 0,
                        });
                        current = app_domains.len() - 1;
                    }
                    SectionEvent::Close => {
                        if current != 0 {
                            app_domains[current].closed = true;
                        }
                        current = 0;
                    }
                }
                here.push(current as u32);
            }
            at.push(here);
        }
        Sections { app_domains, at }
    }

    /// The section in force in chunk `chunk` after `marker` section events.
    #[inline]
    pub(super) fn at(&self, chunk: usize, marker: u32) -> u32 {
        self.at[chunk][marker as usize]
    }

    /// The sections in force in one chunk, by marker.
    #[inline]
    pub(super) fn of_chunk(&self, chunk: usize) -> &[u32] {
        &self.at[chunk]
    }
}

/// Type names, interned, and each section's id → index table.
pub(super) struct Types {
    /// Two sections' types with one name share an index.
    pub(super) names: Vec<Box<str>>,
    pub(super) by_name: HashMap<Box<str>, u32>,
    /// By section.
    pub(super) tables: Vec<TypeTable>,
}

impl Types {
    /// Reads the chunks' `t` records in file order (draining them); the
    /// first definition of an id in a section wins, later ones are skipped
    /// lines.
    pub(super) fn read(a: &mut Assembly, chunks: &mut [Chunk], sections: &Sections) -> Types {
        let mut names: Vec<Box<str>> = Vec::new();
        let mut by_name: HashMap<Box<str>, u32> = HashMap::new();
        let mut section_pairs: Vec<Vec<(u64, u32)>> = vec![Vec::new(); sections.app_domains.len()];
        let mut seen: HashMap<(u32, u64), ()> = HashMap::new();
        // Records are visited in line order, so keeping the first
        // MAX_MESSAGES messages keeps every one that can be among the first
        // MAX_MESSAGES overall; a doubled 10-million-object dump would
        // otherwise hold 10 million message strings.
        let mut redefined = 0usize;
        for (ci, c) in chunks.iter_mut().enumerate() {
            for t in c.types.drain(..) {
                let section = sections.at(ci, t.marker);
                if seen.insert((section, t.id), ()).is_some() {
                    a.diag.count(Kind::Skipped, 1);
                    redefined += 1;
                    if redefined <= MAX_MESSAGES {
                        a.diag.note(
                            a.first_line[ci] + t.line as u64,
                            || format!(
                                "type id {:x} defined again in this section; the first definition is kept",
                                t.id
                            ),
);
                    }
                    continue;
                }
                let idx = *by_name.entry(t.name.clone()).or_insert_with(|| {
                    names.push(t.name);
                    (names.len() - 1) as u32
                });
                section_pairs[section as usize].push((t.id, idx));
                a.records.types += 1;
            }
        }
        drop(seen);
        let tables = section_pairs.iter().map(|p| TypeTable::build(p)).collect();
        Types {
            names,
            by_name,
            tables,
        }
    }

    /// The index of a type name, adding it when new.
    pub(super) fn intern(&mut self, name: &str) -> u32 {
        match self.by_name.get(name) {
            Some(&i) => i,
            None => {
                self.names.push(name.into());
                let idx = (self.names.len() - 1) as u32;
                self.by_name.insert(name.into(), idx);
                idx
            }
        }
    }
}

/// Type id → type index within one section: dense when the ids fill a good
/// part of their range, else hashed, so the memory follows the number of
/// types whatever the ids (a file of small sections with large ids once
/// took gigabytes).
pub(super) enum TypeTable {
    Dense(Vec<u32>),
    Sparse(HashMap<u64, u32>),
}

/// A dense table has at most this many slots per type, plus [`DENSE_SLACK`].
const DENSE_SLOTS_PER_TYPE: u64 = 4;
const DENSE_SLACK: u64 = 64;

impl TypeTable {
    fn build(pairs: &[(u64, u32)]) -> TypeTable {
        let max = pairs.iter().map(|p| p.0).max().unwrap_or(0);
        if max < DENSE_SLOTS_PER_TYPE * pairs.len() as u64 + DENSE_SLACK {
            let mut v = vec![NO_TYPE; max as usize + 1];
            for &(id, t) in pairs {
                v[id as usize] = t;
            }
            TypeTable::Dense(v)
        } else {
            TypeTable::Sparse(pairs.iter().copied().collect())
        }
    }

    #[inline]
    pub(super) fn get(&self, id: u64) -> Option<u32> {
        match self {
            TypeTable::Dense(v) => v.get(id as usize).copied().filter(|&t| t != NO_TYPE),
            TypeTable::Sparse(m) => m.get(&id).copied(),
        }
    }

    /// Entries the table holds room for.
    #[cfg(test)]
    fn slots(&self) -> usize {
        match self {
            TypeTable::Dense(v) => v.len(),
            TypeTable::Sparse(m) => m.capacity(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::netcf_text::build::Assembly;
    use crate::import::netcf_text::lines::parse_chunk;
    use crate::progress::Progress;

    fn types_of(text: &str) -> Types {
        let mut chunks = vec![parse_chunk(text.as_bytes())];
        let progress = Progress::new();
        let mut a = Assembly::new(&mut chunks, text.len() as u64, &progress);
        let sections = Sections::read(&mut chunks);
        Types::read(&mut a, &mut chunks, &sections)
    }

    #[test]
    fn many_small_sections_with_large_type_ids_take_memory_in_proportion() {
        let mut text = String::new();
        for s in 0..500 {
            text += &format!(
                "a 1 d{s}\nt fffff T{s}\nt {s:x} U{s}\no {:x} fffff 10\nc d{s}\n",
                s + 1
            );
        }
        let types = types_of(&text);
        assert_eq!(types.names.len(), 1000);
        // Dense tables of (largest id + 1) slots would hold 501 × 2^20.
        let slots: usize = types.tables.iter().map(TypeTable::slots).sum();
        assert!(slots <= 64 * 501, "{slots} slots for 1000 types");
        assert_eq!(types.tables[1].get(0xfffff), Some(0));
        assert_eq!(types.tables[500].get(0xfffff), Some(998));
        assert_eq!(types.tables[500].get(0x1f3), Some(999));
        assert_eq!(types.tables[500].get(0x1f2), None);
    }

    #[test]
    fn small_dense_ids_stay_dense() {
        let text: String = (0..1000).map(|i| format!("t {i:x} T{i}\n")).collect();
        let types = types_of(&text);
        assert!(matches!(types.tables[0], TypeTable::Dense(ref v) if v.len() == 1000));
        assert_eq!(types.tables[0].get(0x3e7), Some(999));
    }
}
