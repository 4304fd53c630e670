//! The one diagnostics collector every importer uses: counts by kind, and
//! the first [`MAX_MESSAGES`] messages by place in the file (a line, a byte
//! offset, or only the order they were noted in), bounded however many are
//! noted. Parallel parts each fill their own collector and are merged in
//! file order; a message's text is only formatted while it can still be
//! among the first.

use super::{Diagnostics, MAX_MESSAGES};

/// What a diagnostic counts as: the categories of [`Diagnostics`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A line, record or header claim that could not be used.
    Skipped,
    /// A reference to no object.
    Dangling,
    /// An object whose type could not be resolved.
    Undefined,
    /// An object whose id an earlier one already had.
    Duplicate,
    /// A root whose object is not in the dump.
    MissingRoot,
    /// A root whose kind or flags were cut to fit.
    Clamped,
}

const KINDS: usize = 6;

/// How a message's place is written before its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// `line N: why`.
    Line,
    /// `offset 0xN: why`.
    Offset,
    /// `why`: the place is only an order.
    Unplaced,
}

/// Counts by [`Kind`] plus the first messages by (place, order noted).
#[derive(Debug, Default)]
pub struct Collector {
    counts: [u64; KINDS],
    /// (place, order noted, text); at most 2 × [`MAX_MESSAGES`], the first
    /// [`MAX_MESSAGES`] of everything noted always among them.
    kept: Vec<(u64, u64, String)>,
    /// Messages noted so far (kept or not): the next one's order.
    noted: u64,
    /// Once trimmed: the last message kept; later ones past it are dropped
    /// unformatted.
    bar: Option<(u64, u64)>,
    /// That the file ended early, with its place: always the first message
    /// (what follows from a cut file, such as references to the objects
    /// cut off, would push it out of the first messages by place).
    early: Option<(u64, String)>,
}

impl Collector {
    /// Counts one `kind` with a message at `at`.
    pub fn push(&mut self, kind: Kind, at: u64, why: impl FnOnce() -> String) {
        self.add(kind, at, 1, why);
    }

    /// Counts `n` of `kind` under one message at `at`.
    pub fn add(&mut self, kind: Kind, at: u64, n: u64, why: impl FnOnce() -> String) {
        self.count(kind, n);
        self.note(at, why);
    }

    /// Counts `n` of `kind` without a message.
    pub fn count(&mut self, kind: Kind, n: u64) {
        self.counts[kind as usize] += n;
    }

    /// A message at `at` that counts nothing (or whose count is elsewhere).
    pub fn note(&mut self, at: u64, why: impl FnOnce() -> String) {
        let key = (at, self.noted);
        self.noted += 1;
        if self.bar.is_some_and(|bar| key > bar) {
            return;
        }
        self.kept.push((key.0, key.1, why()));
        self.trim_if_full();
    }

    /// Counts `n` of `kind` under the message that the file ended early
    /// (cut short); the first such message is kept, first of all.
    pub fn ended_early(&mut self, kind: Kind, at: u64, n: u64, why: impl FnOnce() -> String) {
        self.count(kind, n);
        if self.early.is_none() {
            self.early = Some((at, why()));
        }
    }

    /// How many of `kind` were counted.
    pub fn counted(&self, kind: Kind) -> u64 {
        self.counts[kind as usize]
    }

    /// Adds a later part's counts and messages (`other` was noted after
    /// everything noted here, as far as equal places go).
    pub fn merge(&mut self, other: Collector) {
        for (a, b) in self.counts.iter_mut().zip(other.counts) {
            *a += b;
        }
        if self.early.is_none() {
            self.early = other.early;
        }
        let base = self.noted;
        self.noted += other.noted;
        for (at, order, why) in other.kept {
            let key = (at, base + order);
            if self.bar.is_none_or(|bar| key <= bar) {
                self.kept.push((key.0, key.1, why));
                self.trim_if_full();
            }
        }
    }

    fn trim_if_full(&mut self) {
        if self.kept.len() >= 2 * MAX_MESSAGES {
            self.trim();
        }
    }

    fn trim(&mut self) {
        self.kept.sort_unstable_by_key(|m| (m.0, m.1));
        self.kept.truncate(MAX_MESSAGES);
        if self.kept.len() == MAX_MESSAGES {
            self.bar = self.kept.last().map(|m| (m.0, m.1));
        }
    }

    /// The first [`MAX_MESSAGES`] messages by place, then order noted, each
    /// written with its place.
    /// written with its place; that the file ended early always first.
    pub fn messages(mut self, place: Place) -> Vec<String> {
        self.trim();
        let early = self.early.take();
        if early.is_some() {
            self.kept.truncate(MAX_MESSAGES - 1);
        }
        early
            .into_iter()
            .chain(self.kept.into_iter().map(|(at, _, why)| (at, why)))
            .map(|(at, why)| match place {
                Place::Line => format!("line {at}: {why}"),
                Place::Offset => format!("offset 0x{at:x}: {why}"),
                Place::Unplaced => why,
            })
            .collect()
    }

    /// The model's diagnostics.
    pub fn finish(self, place: Place) -> Diagnostics {
        let c = self.counts;
        Diagnostics {
            skipped_lines: c[Kind::Skipped as usize],
            dangling_references: c[Kind::Dangling as usize],
            undefined_types: c[Kind::Undefined as usize],
            duplicate_objects: c[Kind::Duplicate as usize],
            missing_root_objects: c[Kind::MissingRoot as usize],
            clamped_roots: c[Kind::Clamped as usize],
            messages: self.messages(place),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the collector must equal: every message kept, sorted stably
    /// by place, the first MAX_MESSAGES.
    fn reference(noted: &[(u64, String)]) -> Vec<String> {
        let mut all = noted.to_vec();
        all.sort_by_key(|m| m.0);
        all.truncate(MAX_MESSAGES);
        all.into_iter().map(|m| m.1).collect()
    }

    #[test]
    fn keeps_the_first_messages_by_place_then_order_whatever_the_split() {
        // Places out of order, many ties, far more than MAX_MESSAGES.
        let noted: Vec<(u64, String)> = (0..1000u64)
            .map(|i| ((i * 7919) % 37, format!("m{i}")))
            .collect();
        let want = reference(&noted);
        for parts in [1, 2, 3, 7, 64, 1000] {
            let size = noted.len().div_ceil(parts);
            let mut all = Collector::default();
            for part in noted.chunks(size) {
                let mut c = Collector::default();
                for (at, why) in part {
                    c.push(Kind::Skipped, *at, || why.clone());
                }
                all.merge(c);
            }
            assert_eq!(all.counted(Kind::Skipped), 1000);
            assert_eq!(all.messages(Place::Unplaced), want, "{parts} parts");
        }
    }

    #[test]
    fn unplaced_messages_keep_the_order_noted_and_stop_formatting() {
        let mut c = Collector::default();
        let mut formatted = 0;
        for i in 0..10_000 {
            c.add(Kind::Dangling, 0, 2, || {
                formatted += 1;
                format!("{i}")
            });
        }
        assert!(formatted <= 2 * MAX_MESSAGES, "{formatted}");
        let d = c.finish(Place::Unplaced);
        assert_eq!(d.dangling_references, 20_000);
        let want: Vec<String> = (0..MAX_MESSAGES).map(|i| i.to_string()).collect();
        assert_eq!(d.messages, want);
    }

    #[test]
    fn that_the_file_ended_early_is_the_first_message_kept() {
        // Messages about references to objects cut off come earlier in
        // the file than where it ends, and outnumber the kept messages.
        let mut all = Collector::default();
        let mut late = Collector::default();
        late.ended_early(Kind::Skipped, 5000, 1, || "the file ended early".into());
        late.ended_early(Kind::Skipped, 6000, 1, || "a second cut".into());
        for part in 0..3u64 {
            let mut c = Collector::default();
            for i in 0..MAX_MESSAGES as u64 {
                c.push(Kind::Dangling, part * 1000 + i, || format!("dangling {i}"));
            }
            all.merge(c);
        }
        all.merge(late);
        assert_eq!(all.counted(Kind::Skipped), 2);
        let m = all.messages(Place::Offset);
        assert_eq!(m.len(), MAX_MESSAGES);
        assert_eq!(m[0], "offset 0x1388: the file ended early");
        assert_eq!(m[1], "offset 0x0: dangling 0");
    }

    #[test]
    fn places_are_written_as_lines_or_offsets() {
        let mut c = Collector::default();
        c.note(255, || "b".into());
        c.push(Kind::Clamped, 3, || "a".into());
        assert_eq!(c.counted(Kind::Clamped), 1);
        assert_eq!(
            c.messages(Place::Offset),
            ["offset 0x3: a", "offset 0xff: b"]
        );
        let mut c = Collector::default();
        c.note(12, || "x".into());
        assert_eq!(c.finish(Place::Line).messages, ["line 12: x"]);
    }
}
