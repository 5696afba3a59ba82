//! A user's stored verdicts by scheme id: a vector sorted by scheme, not a `BTreeMap`.
//!
//! Every pass walks all of them beside its candidate rules, about a thousand (`pass::plan`),
//! and a changed one copies them (`Arc::make_mut`); a batch in flight frees them. Contiguous
//! entries made the walk and the copy several times cheaper than a tree's nodes, which were
//! the passes' largest cost at 5,000 updates/s (docs/fleet.md "Where the time goes"). Entries
//! are added or removed only when a scheme starts or stops applying to the user, which is rare;
//! a changed verdict is replaced in place.

use super::state::StoredVerdict;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct SchemeVerdicts {
    /// Ordered by scheme id (byte order, as `str` compares), each scheme once.
    by_scheme: Vec<(&'static str, StoredVerdict)>,
}

impl SchemeVerdicts {
    /// As a map collects: ordered by scheme, and of two entries for one scheme the later stays.
    pub fn from_entries(mut by_scheme: Vec<(&'static str, StoredVerdict)>) -> Self {
        // A user's stored verdicts are packed in scheme order, so loading them needs no sort.
        if by_scheme.is_sorted_by(|a, b| a.0 < b.0) {
            return SchemeVerdicts { by_scheme };
        }
        // Stable: entries of one scheme stay in the order given, and the last is kept below.
        by_scheme.sort_by_key(|(scheme, _)| *scheme);
        let mut kept: Vec<(&'static str, StoredVerdict)> = Vec::with_capacity(by_scheme.len());
        for entry in by_scheme {
            match kept.last_mut() {
                Some(last) if last.0 == entry.0 => *last = entry,
                _ => kept.push(entry),
            }
        }
        SchemeVerdicts { by_scheme: kept }
    }

    fn find(&self, scheme: &str) -> Result<usize, usize> {
        self.by_scheme
            .binary_search_by(|(held, _)| (**held).cmp(scheme))
    }

    pub fn get(&self, scheme: &str) -> Option<&StoredVerdict> {
        self.find(scheme).ok().map(|at| &self.by_scheme[at].1)
    }

    pub fn contains_key(&self, scheme: &str) -> bool {
        self.find(scheme).is_ok()
    }

    /// Sets the scheme's verdict; returns the one it replaces.
    pub fn insert(
        &mut self,
        scheme: &'static str,
        verdict: StoredVerdict,
    ) -> Option<StoredVerdict> {
        match self.find(scheme) {
            Ok(at) => Some(std::mem::replace(&mut self.by_scheme[at].1, verdict)),
            Err(at) => {
                self.by_scheme.insert(at, (scheme, verdict));
                None
            }
        }
    }

    pub fn remove(&mut self, scheme: &str) -> Option<StoredVerdict> {
        self.find(scheme).ok().map(|at| self.by_scheme.remove(at).1)
    }

    /// Every (scheme, verdict), in scheme order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &StoredVerdict)> {
        self.by_scheme
            .iter()
            .map(|(scheme, verdict)| (*scheme, verdict))
    }

    /// Every verdict, in scheme order.
    pub fn values(&self) -> impl Iterator<Item = &StoredVerdict> {
        self.by_scheme.iter().map(|(_, verdict)| verdict)
    }

    pub fn len(&self) -> usize {
        self.by_scheme.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_scheme.is_empty()
    }
}

/// As [`SchemeVerdicts::from_entries`].
impl FromIterator<(&'static str, StoredVerdict)> for SchemeVerdicts {
    fn from_iter<I: IntoIterator<Item = (&'static str, StoredVerdict)>>(entries: I) -> Self {
        SchemeVerdicts::from_entries(entries.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::names::intern;
    use engine::Verdict;
    use engine::transitions::Known;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn verdict(score: u8) -> StoredVerdict {
        StoredVerdict {
            rule_key: i32::from(score),
            rule_id: "r",
            rule_version: 1,
            known: Known {
                verdict: Verdict::PartialMatch,
                score,
                gaps: 0,
            },
            as_of: engine::Date::parse("2025-01-01").unwrap(),
        }
    }

    #[derive(Debug, Clone)]
    enum Step {
        Insert(String, u8),
        Remove(String),
    }

    fn step() -> impl Strategy<Value = Step> {
        let scheme = "[a-d]{1,2}";
        prop_oneof![
            (scheme, any::<u8>()).prop_map(|(s, n)| Step::Insert(s, n)),
            scheme.prop_map(Step::Remove),
        ]
    }

    proptest! {
        /// Collected, then changed by inserts and removals, it holds what a `BTreeMap` would,
        /// in the same order, and answers as it would.
        #[test]
        fn it_behaves_as_a_map_by_scheme(
            start in prop::collection::vec(("[a-d]{1,2}", any::<u8>()), 0..12),
            steps in prop::collection::vec(step(), 0..24),
        ) {
            let entries = || start.iter().map(|(s, n)| (intern(s), verdict(*n)));
            let mut ours: SchemeVerdicts = entries().collect();
            let mut model: BTreeMap<&'static str, StoredVerdict> = entries().collect();
            for step in steps {
                match step {
                    Step::Insert(s, n) => prop_assert_eq!(
                        ours.insert(intern(&s), verdict(n)),
                        model.insert(intern(&s), verdict(n))
                    ),
                    Step::Remove(s) => prop_assert_eq!(ours.remove(&s), model.remove(s.as_str())),
                }
                let held: Vec<_> = ours.iter().collect();
                prop_assert_eq!(held, model.iter().map(|(s, v)| (*s, v)).collect::<Vec<_>>());
                prop_assert_eq!(ours.len(), model.len());
                for probe in ["a", "ab", "d", "dd", "e"] {
                    prop_assert_eq!(ours.get(probe), model.get(probe));
                    prop_assert_eq!(ours.contains_key(probe), model.contains_key(probe));
                }
            }
        }
    }
}
