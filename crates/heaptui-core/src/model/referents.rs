//! The referents of `java.lang.ref.Reference` objects (soft, weak, final,
//! phantom references): edges the garbage collector does not treat as
//! strong. By default they are kept out of `Model::refs`, so no analysis
//! follows them (an object reachable only through them is not retained by
//! its reference, and is left out of dominators and duplicates); with
//! `--references all` they are among the references as well and retain as
//! any field does. Either way they are listed here, so the inspector can
//! show a referent, marked weak, and the analysis can count what they hold.
//! One entry per reference object with a referent: memory in proportion to
//! the references, not the heap.

use super::ObjectIdx;

/// How strongly a reference holds its referent, strongest first (the order
/// in which the garbage collector clears them: an object reachable through
/// several kinds counts under the strongest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Strength {
    /// `java.lang.ref.SoftReference` (cleared only under memory pressure).
    Soft = 0,
    /// `java.lang.ref.WeakReference` (and a `Reference` subclass of no
    /// other kind).
    Weak = 1,
    /// `java.lang.ref.FinalReference` (`java.lang.ref.Finalizer`; Android's
    /// `FinalizerReference`): objects waiting for `finalize()`.
    Final = 2,
    /// `java.lang.ref.PhantomReference` (`Cleaner`s among them).
    Phantom = 3,
}

impl Strength {
    /// Every strength, strongest first (the index is the `u8` value).
    pub const ALL: [Strength; 4] = [
        Strength::Soft,
        Strength::Weak,
        Strength::Final,
        Strength::Phantom,
    ];

    /// The name in the reports and the JSON contract.
    pub fn key(self) -> &'static str {
        match self {
            Strength::Soft => "soft",
            Strength::Weak => "weak",
            Strength::Final => "finalizer",
            Strength::Phantom => "phantom",
        }
    }

    /// The strength stored as `v`, `None` past [`Strength::Phantom`].
    pub fn from_u8(v: u8) -> Option<Strength> {
        Strength::ALL.get(v as usize).copied()
    }
}

/// One reference object's referent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Referent {
    /// The `java.lang.ref.Reference` object.
    pub reference: ObjectIdx,
    /// The object its `referent` field points at.
    pub referent: ObjectIdx,
    /// What kind of reference holds it.
    pub strength: Strength,
}

/// Every referent of a dump, by reference object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Referents {
    /// Ordered by reference object (one entry each at most).
    list: Vec<Referent>,
    /// Positions in `list` ordered by referent.
    by_referent: Vec<u32>,
    /// Whether the referents are also in `Model::refs` (`--references
    /// all`): then they retain as fields do.
    pub strong: bool,
}

impl Referents {
    /// The referents in any order; a reference object listed twice keeps
    /// its first entry.
    pub fn new(mut list: Vec<Referent>, strong: bool) -> Referents {
        list.sort_by_key(|r| r.reference);
        list.dedup_by_key(|r| r.reference);
        let mut by_referent: Vec<u32> = (0..list.len() as u32).collect();
        by_referent.sort_by_key(|&i| (list[i as usize].referent, i));
        Referents {
            list,
            by_referent,
            strong,
        }
    }

    /// The referents, ordered by reference object.
    pub fn list(&self) -> &[Referent] {
        &self.list
    }

    /// How many reference objects have a referent.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether no reference object has a referent.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The referent of a reference object, if it is one with a referent.
    pub fn of(&self, reference: ObjectIdx) -> Option<&Referent> {
        let i = self.list.partition_point(|r| r.reference < reference);
        self.list.get(i).filter(|r| r.reference == reference)
    }

    /// The reference objects whose referent `object` is.
    pub fn holding(&self, object: ObjectIdx) -> impl Iterator<Item = &Referent> + '_ {
        let list = &self.list;
        let start = self
            .by_referent
            .partition_point(|&i| list[i as usize].referent < object);
        self.by_referent[start..]
            .iter()
            .map(move |&i| &list[i as usize])
            .take_while(move |r| r.referent == object)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looked_up_both_ways() {
        let r = |a, b, s| Referent {
            reference: ObjectIdx(a),
            referent: ObjectIdx(b),
            strength: s,
        };
        let refs = Referents::new(
            vec![
                r(5, 1, Strength::Weak),
                r(2, 1, Strength::Soft),
                r(3, 4, Strength::Phantom),
                r(5, 9, Strength::Weak),
            ],
            false,
        );
        assert_eq!(refs.len(), 3, "a reference object keeps one entry");
        assert_eq!(refs.of(ObjectIdx(5)).unwrap().referent, ObjectIdx(1));
        assert_eq!(refs.of(ObjectIdx(4)), None);
        let holders: Vec<u32> = refs.holding(ObjectIdx(1)).map(|r| r.reference.0).collect();
        assert_eq!(holders, [2, 5]);
        assert_eq!(refs.holding(ObjectIdx(9)).count(), 0);
        assert!(Strength::Soft < Strength::Weak && Strength::Final < Strength::Phantom);
        assert_eq!(Strength::from_u8(2), Some(Strength::Final));
        assert_eq!(Strength::from_u8(4), None);
    }
}
