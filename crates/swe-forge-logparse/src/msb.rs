//! Multi-SWE-bench granularity: the published records name tests the way each repository's
//! hand-written parser saw them (Java test classes, Go names without their last subtest level, jest `file` and
//! `file:title`, ctest targets, cargo `module::test`, automake scripts). [`msb_rollup`] folds
//! canonical results onto those names.

use std::collections::BTreeMap;

use swe_forge_core::TestStatus;

use crate::{ParsedLog, worst};

/// The Multi-SWE-bench name of a Go test: its name without the last `/` level, as the Go handlers
/// of that harness that call `get_base_name` record it (in multi-swe-bench 1.1.2: grpc-go, etcd,
/// go-zero, gorm and gin; the other 14 Go handlers, cli/cli among them, keep full subtest names,
/// which this rule does not follow; `scripts/python_readers.py` compares both): `TestA` stays
/// `TestA`, the subtest `TestA/case` is named `TestA`, `Test/Group/case` is `Test/Group`.
pub(crate) fn go_base_name(test: &str) -> &str {
    test.rfind('/').map_or(test, |i| &test[..i])
}

/// The names a run's statuses are keyed by: swe-forge's canonical ids, or the names
/// Multi-SWE-bench's harness gives the same tests (what its published lists hold).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TestNaming {
    /// Canonical ids (`path::name`), as swe-forge records its own lists.
    #[default]
    Canonical,
    /// Multi-SWE-bench's names, by [`msb_rollup`].
    Msb,
}

impl TestNaming {
    /// The statuses of `parsed` keyed in this naming.
    pub fn statuses(self, parsed: &ParsedLog) -> BTreeMap<String, TestStatus> {
        match self {
            TestNaming::Canonical => parsed.tests.clone(),
            TestNaming::Msb => msb_rollup(parsed),
        }
    }
}

/// Statuses keyed by Multi-SWE-bench name: each name gets the worst status of the canonical
/// tests that map to it (FAIL over PASS over SKIP). So a Java class is FAIL when any of its
/// methods failed, PASS when none failed and at least one passed, SKIP when all were skipped,
/// as Multi-SWE-bench's Surefire parsers decide from the class's counts; a Go name shared by
/// two packages, or a cargo path shared by two test binaries, is FAIL when either failed, as
/// Multi-SWE-bench's "a later FAIL removes an earlier PASS" does. Tests Multi-SWE-bench cannot
/// name (Rust doctests) are left out.
pub fn msb_rollup(parsed: &ParsedLog) -> BTreeMap<String, TestStatus> {
    let mut out: BTreeMap<String, TestStatus> = BTreeMap::new();
    for (id, &status) in &parsed.tests {
        let Some(name) = parsed.msb_names.get(id) else { continue };
        out.entry(name.clone()).and_modify(|s| *s = worst(*s, status)).or_insert(status);
    }
    out
}
