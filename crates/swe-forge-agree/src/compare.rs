//! Comparing two test lists: exact or not, Jaccard similarity, and the tests on each side only.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// How one published list compares with ours.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListComparison {
    /// The two lists are the same set.
    pub exact: bool,
    /// |published ∩ ours| / |published ∪ ours|; 1 when both are empty.
    pub jaccard: f64,
    /// Size of the published list.
    pub published: usize,
    /// Size of ours.
    pub ours: usize,
    /// Tests in both.
    pub common: usize,
    /// Tests only the published list has, sorted.
    pub only_published: Vec<String>,
    /// Tests only ours has, sorted.
    pub only_ours: Vec<String>,
}

impl ListComparison {
    /// Compares two lists of names.
    pub fn new<'a>(
        published: impl IntoIterator<Item = &'a String>,
        ours: impl IntoIterator<Item = &'a String>,
    ) -> ListComparison {
        let p: BTreeSet<&str> = published.into_iter().map(String::as_str).collect();
        let o: BTreeSet<&str> = ours.into_iter().map(String::as_str).collect();
        let common = p.intersection(&o).count();
        let union = p.len() + o.len() - common;
        ListComparison {
            exact: p == o,
            jaccard: if union == 0 { 1.0 } else { common as f64 / union as f64 },
            published: p.len(),
            ours: o.len(),
            common,
            only_published: p.difference(&o).map(|s| (*s).to_owned()).collect(),
            only_ours: o.difference(&p).map(|s| (*s).to_owned()).collect(),
        }
    }

    /// Every test on one side only.
    pub fn differing(&self) -> impl Iterator<Item = &str> {
        self.only_published.iter().chain(&self.only_ours).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(p: &[&str], o: &[&str]) -> ListComparison {
        let p: Vec<String> = p.iter().map(|s| s.to_string()).collect();
        let o: Vec<String> = o.iter().map(|s| s.to_string()).collect();
        ListComparison::new(&p, &o)
    }

    #[test]
    fn exact_jaccard_and_sides() {
        let c = check(&["a", "b", "c"], &["b", "c", "d"]);
        assert!(!c.exact);
        assert_eq!(c.jaccard, 0.5);
        assert_eq!((c.published, c.ours, c.common), (3, 3, 2));
        assert_eq!(c.only_published, ["a"]);
        assert_eq!(c.only_ours, ["d"]);
        assert_eq!(c.differing().collect::<Vec<_>>(), ["a", "d"]);
        let same = check(&["a", "a"], &["a"]);
        assert!(same.exact && same.jaccard == 1.0);
        let empty = check(&[], &[]);
        assert!(empty.exact && empty.jaccard == 1.0, "two empty lists agree");
        assert_eq!(check(&["a"], &[]).jaccard, 0.0);
    }
}
