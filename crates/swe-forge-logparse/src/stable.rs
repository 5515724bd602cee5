//! Test ids that do not depend on where a patch puts its lines.
//!
//! libtest names a Rust doctest by its file, its item and the line its code block starts on:
//! `src/map.rs - map::Map<K,V,S> (line 1488)`, with ` - compile fail` or ` - should panic`
//! after it for such blocks. A fix that adds one line above a doctest (a comment, an import)
//! moves it to `(line 1489)`, and a list naming the doctest by its line no longer finds it.
//! Every parser that reads doctests (`cargo-test`, `libtest-json`, `nextest-junit`) therefore
//! ends with [`ParsedLog::stabilize_ids`], which renames each doctest by file and item only:
//!
//! - the ` (line N)` of libtest's name is removed: `<crate>::doc::src/map.rs - map::Map<K,V,S>`;
//! - when one item (same crate, file and item path) has several doctests in the run, they are
//!   numbered in line order and the second and later ones carry ` (doctest K)` where the line
//!   was: `<crate>::doc::src/map.rs - map::Map<K,V,S> (doctest 2)`. The first has no number, so
//!   an item with one doctest reads as its name; every doctest of the item counts, whatever
//!   its kind, so text and JSON runs (where `compile_fail` blocks carry no suffix) number alike;
//! - what followed the line stays: `<crate>::doc::src/lib.rs - add (doctest 3) - compile fail`.
//!
//! A crate's own docs have an empty item path (`src/lib.rs - (line 1)`), so their id ends in
//! `src/lib.rs -`. Ids already in this form, and every id that is not a line-numbered doctest,
//! are left as they are, so records written by older builds are read with [`stable_ids`] (the
//! whole run's ids, which gives the numbers) or [`stable_id`] (one id: numbered as the first of
//! its item) into the same form. The doctest that a patch adds above another on the same item
//! still moves the numbers after it: the order of an item's examples is all that tells them apart.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use crate::{Framework, ParsedLog, worst};

/// The part of every canonical doctest id between the crate and libtest's name.
const DOC: &str = "::doc::";

/// A line-numbered doctest id split around its ` (line N)`: (before, N, after).
fn split(id: &str) -> Option<(&str, u64, &str)> {
    let doc = id.find(DOC)?;
    let name = &id[doc + DOC.len()..];
    // A doctest name is `<file> - <item>(line N)`: the line is the last parenthesis of the
    // name, after its ` - `, and only libtest's ` - <marker>` may follow it.
    let at = name.rfind(" (line ")?;
    if !name[..at].contains(" - ") && !name[..at].ends_with(" -") {
        return None;
    }
    let rest = &name[at + " (line ".len()..];
    let close = rest.find(')')?;
    let line: u64 = rest[..close].parse().ok().filter(|_| rest[..close].bytes().all(|b| b.is_ascii_digit()))?;
    let after = &rest[close + 1..];
    if !(after.is_empty() || after.starts_with(" - ")) {
        return None;
    }
    let start = doc + DOC.len() + at;
    Some((&id[..start], line, after))
}

/// The stable form of one doctest: `before` (crate, file and item), its number among the
/// item's doctests (from 1) and libtest's `after` marker.
fn form(before: &str, ordinal: usize, after: &str) -> String {
    if ordinal <= 1 { format!("{before}{after}") } else { format!("{before} (doctest {ordinal}){after}") }
}

/// The stable id of one test id: a line-numbered doctest without its line, as the first
/// doctest of its item ([`stable_ids`] numbers an item's others from the rest of the run);
/// any other id as it is.
pub fn stable_id(id: &str) -> Cow<'_, str> {
    match split(id) {
        Some((before, _, after)) => Cow::Owned(form(before, 1, after)),
        None => Cow::Borrowed(id),
    }
}

/// The stable ids of the test ids of one run, for those that change: each line-numbered
/// doctest without its line, numbered ` (doctest K)` from the second doctest of its item on, in
/// line order. Ids that keep their form are absent.
pub fn stable_ids<'a>(ids: impl IntoIterator<Item = &'a str>) -> BTreeMap<&'a str, String> {
    // crate, file and item -> (line, id) of its doctests.
    let mut items: BTreeMap<&str, BTreeSet<(u64, &str)>> = BTreeMap::new();
    for id in ids {
        if let Some((before, line, _)) = split(id) {
            items.entry(before).or_default().insert((line, id));
        }
    }
    let mut out = BTreeMap::new();
    for (before, doctests) in items {
        // One block has one line: the same line twice (two markers) counts once.
        let mut ordinal = 0;
        let mut last = None;
        for (line, id) in doctests {
            if last != Some(line) {
                ordinal += 1;
                last = Some(line);
            }
            let after = split(id).map_or("", |(_, _, a)| a);
            out.insert(id, form(before, ordinal, after));
        }
    }
    out
}

impl ParsedLog {
    /// Renames the line-numbered doctests of a `framework` parse (`cargo-test`, `libtest-json`,
    /// `nextest-junit`) to their stable ids ([`stable_ids`]): every parser of those formats does
    /// it, and a parse kept by an older build is renamed the same way. Other frameworks' ids are
    /// left as they are.
    pub fn stabilize_ids(&mut self, framework: Framework) {
        if !matches!(framework, Framework::CargoLibtest | Framework::LibtestJson | Framework::NextestJunit) {
            return;
        }
        let renamed: Vec<(String, String)> = stable_ids(self.tests.keys().map(String::as_str))
            .into_iter()
            .map(|(old, new)| (old.to_owned(), new))
            .collect();
        for (old, new) in renamed {
            if let Some(status) = self.tests.remove(&old) {
                let status = self.tests.get(&new).map_or(status, |s| worst(*s, status));
                self.tests.insert(new.clone(), status);
            }
            if let Some(name) = self.msb_names.remove(&old) {
                self.msb_names.insert(new.clone(), name);
            }
            if self.timed_out.remove(&old) {
                self.timed_out.insert(new);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doctest_names_lose_their_line() {
        assert_eq!(
            stable_id("c::doc::src/map.rs - map::Map<K,V,S> (line 1488)"),
            "c::doc::src/map.rs - map::Map<K,V,S>"
        );
        assert_eq!(
            stable_id("c::doc::src/lib.rs - add (line 31) - compile fail"),
            "c::doc::src/lib.rs - add - compile fail"
        );
        assert_eq!(stable_id("c::doc::src/lib.rs - (line 1)"), "c::doc::src/lib.rs -");
        // Not line-numbered doctests: as they are.
        for id in [
            "c::doc::src/map.rs - map::Map<K,V,S>",
            "c::doc::src/map.rs - map::Map<K,V,S> (doctest 2)",
            "c::tests::a",
            "test/a.test.js > parses (line 3)",
            "c::doc::src/lib.rs - f (line x)",
            "c::doc::src/lib.rs - f (line 3) trailing",
            "c::doc::(line 3)",
        ] {
            assert_eq!(stable_id(id), id);
        }
    }

    #[test]
    fn an_item_s_doctests_are_numbered_in_line_order() {
        let ids = [
            "c::doc::src/lib.rs - Map (line 12)",
            "c::doc::src/lib.rs - Map (line 5)",
            "c::doc::src/lib.rs - Map (line 18) - compile fail",
            "c::doc::src/lib.rs - Map<V>::new (line 29)",
            "c::doc::src/other.rs - Map (line 1)",
            "d::doc::src/lib.rs - Map (line 7)",
            "c::tests::a",
        ];
        let got = stable_ids(ids);
        let want = BTreeMap::from([
            ("c::doc::src/lib.rs - Map (line 5)", "c::doc::src/lib.rs - Map".to_owned()),
            ("c::doc::src/lib.rs - Map (line 12)", "c::doc::src/lib.rs - Map (doctest 2)".to_owned()),
            (
                "c::doc::src/lib.rs - Map (line 18) - compile fail",
                "c::doc::src/lib.rs - Map (doctest 3) - compile fail".to_owned(),
            ),
            ("c::doc::src/lib.rs - Map<V>::new (line 29)", "c::doc::src/lib.rs - Map<V>::new".to_owned()),
            ("c::doc::src/other.rs - Map (line 1)", "c::doc::src/other.rs - Map".to_owned()),
            ("d::doc::src/lib.rs - Map (line 7)", "d::doc::src/lib.rs - Map".to_owned()),
        ]);
        assert_eq!(got, want);
    }

    #[test]
    fn a_parse_is_renamed_once_and_only_for_rust() {
        let mut p = ParsedLog::default();
        p.tests.insert("c::doc::src/lib.rs - f (line 3)".into(), swe_forge_core::TestStatus::Fail);
        p.tests.insert("c::tests::a".into(), swe_forge_core::TestStatus::Pass);
        let mut jest = p.clone();
        jest.stabilize_ids(Framework::Jest);
        assert_eq!(jest, p);
        p.stabilize_ids(Framework::CargoLibtest);
        let again = p.clone();
        p.stabilize_ids(Framework::CargoLibtest);
        assert_eq!(p, again);
        assert_eq!(p.tests.keys().collect::<Vec<_>>(), ["c::doc::src/lib.rs - f", "c::tests::a"]);
    }
}
