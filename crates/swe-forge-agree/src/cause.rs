//! Why a re-derived list differs from the published one: a classified [`Cause`] for an
//! instance that could not be run (from its rejection) and for every differing test of an
//! instance that was (from the evidence of both sides).
//!
//! The rules for a test that differs, in order:
//! 1. a run of ours timed out, or the test framework's own timeout killed the test in one of
//!    our runs (go test's `panic: test timed out after 10m0s`) -> [`Cause::Timeout`]; our
//!    repeated runs saw the test end both ways -> [`Cause::Flaky`];
//! 2. one side never saw the test under that name but saw one that differs only in case or by
//!    a qualifying prefix (`pkg::Test` vs `Test`, `file:title` vs `title`) -> [`Cause::Naming`];
//! 3. our record says a submodule was missing from the image -> [`Cause::MissingSubmodule`] (tests
//!    that live in it are absent, tests that read its files fail); files of an extra source
//!    (another repository's tree the recipe puts into the image) were missing from the mirror ->
//!    [`Cause::MissingExtraSource`] for a test ours ran (it reads the files and fails; one ours
//!    never ran goes on to the rules below);
//! 4. the run where the sides part (a status on one side, NONE on ours) is one our record labels
//!    truncated (`swe_forge.labels.truncated`): a test patch that does not compile without the
//!    fix -> [`Cause::CompileFailure`], a timeout -> [`Cause::Timeout`], a fail-fast stop, a crash
//!    or an unknown stop -> [`Cause::TruncatedRun`];
//! 5. the run where the sides part (a status on one side, NONE on the other) failed to build on
//!    our side, or stopped early there (fewer than half the published run's tests: the runner
//!    crashed), or reported nothing at all on the published side while ours ran and built (their
//!    compiler rejected what ours accepts) -> [`Cause::Toolchain`]; when our build failed in that
//!    run too and ours went on to run what did build, the sides' commands differ (rule 5);
//!    A test only ours ran whose container (Go package, test binary) the published side lists as
//!    one failed entry is [`Cause::Toolchain`] too (`FAIL pkg [build failed]` there).
//! 6. otherwise a test present on one side only, or present in a run on one side and absent from
//!    the same run on the other (fail-fast `cargo test`, a different selection), ->
//!    [`Cause::DifferentTestCommand`];
//! 7. both sides ran it and it ended differently (PASS vs FAIL): if each side saw it end the same
//!    way in every run it ran in (ours always pass, theirs always fail, or the reverse) ->
//!    [`Cause::Environment`] (the internet, the clock, the number of cores, a service the
//!    other machine had); if one side saw it end both ways -> [`Cause::Flaky`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

use serde::{Deserialize, Serialize};
use swe_forge_core::{RejectReason, Rejection, TestStatus, TruncationCause};
use swe_forge_logparse::ParsedLog;

use crate::View;

/// A classified reason for a difference between published and re-derived lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Cause {
    /// The instance image could not be built (setup failed for a reason other than the toolchain).
    BuildFailure,
    /// The test or fix patch does not apply to the base commit.
    PatchDoesNotApply,
    /// The two sides ran different tests: another command, fail-fast vs not, another selection.
    DifferentTestCommand,
    /// The same test under two names.
    Naming,
    /// A submodule's content was missing from our image.
    MissingSubmodule,
    /// Files of an extra source (test data from another repository) were missing from our image:
    /// the mirror lacks them.
    MissingExtraSource,
    /// The same test ran on both sides and ended differently, and one side saw it end both ways.
    Flaky,
    /// The same test ran on both sides and ended differently, each side the same way every time:
    /// the machines differ (network access, the date, the number of cores, a local service).
    Environment,
    /// A run of ours, or the test framework's own timeout, killed the test.
    Timeout,
    /// The code does not build or run with our toolchain (compiler, language or runtime version).
    Toolchain,
    /// Our setup could not reach a host it needs (a SNAPSHOT repository, a code host).
    NeedsNetwork,
    /// The repository, the base commit or an extra source the recipe declares is not in the local
    /// mirrors.
    RepoUnavailable,
    /// The Docker engine or another piece of infrastructure failed.
    Infrastructure,
    /// A run of ours stopped before tests the other runs reported: fail-fast, a crash, an
    /// unknown early stop (`swe_forge.labels.truncated`).
    TruncatedRun,
    /// The test patch does not compile without the fix, so our test run ran fewer tests.
    CompileFailure,
}

impl Cause {
    /// Every cause, in report order.
    pub const ALL: [Cause; 15] = [
        Cause::BuildFailure,
        Cause::PatchDoesNotApply,
        Cause::DifferentTestCommand,
        Cause::Naming,
        Cause::MissingSubmodule,
        Cause::MissingExtraSource,
        Cause::Flaky,
        Cause::Environment,
        Cause::Timeout,
        Cause::Toolchain,
        Cause::NeedsNetwork,
        Cause::RepoUnavailable,
        Cause::Infrastructure,
        Cause::TruncatedRun,
        Cause::CompileFailure,
    ];

    /// snake_case name as written in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::BuildFailure => "build_failure",
            Cause::PatchDoesNotApply => "patch_does_not_apply",
            Cause::DifferentTestCommand => "different_test_command",
            Cause::Naming => "naming",
            Cause::MissingSubmodule => "missing_submodule",
            Cause::MissingExtraSource => "missing_extra_source",
            Cause::Flaky => "flaky",
            Cause::Environment => "environment",
            Cause::Timeout => "timeout",
            Cause::Toolchain => "toolchain",
            Cause::NeedsNetwork => "needs_network",
            Cause::RepoUnavailable => "repo_unavailable",
            Cause::Infrastructure => "infrastructure",
            Cause::TruncatedRun => "truncated_run",
            Cause::CompileFailure => "compile_failure",
        }
    }

    /// One line for people.
    pub fn describe(self) -> &'static str {
        match self {
            Cause::BuildFailure => "the instance image could not be built",
            Cause::PatchDoesNotApply => "the test or fix patch does not apply to the base commit",
            Cause::DifferentTestCommand => "the sides ran different tests (command, fail-fast, selection)",
            Cause::Naming => "the same test under two names",
            Cause::MissingSubmodule => "a submodule's content was missing from the image",
            Cause::MissingExtraSource => "files of an extra source were missing from the mirror, so from the image",
            Cause::Flaky => "same test, different outcome, and one side saw it end both ways",
            Cause::Environment => {
                "same test, steadily different outcome: the machines differ (network, date, cores, services)"
            }
            Cause::Timeout => "a run, or the test framework's own timeout, killed it",
            Cause::Toolchain => "the code does not build or run with our toolchain version",
            Cause::NeedsNetwork => "our setup could not reach a host it needs (a SNAPSHOT repository, a code host)",
            Cause::RepoUnavailable => "the repository, its base commit or an extra source is not in the mirrors",
            Cause::Infrastructure => "the engine or other infrastructure failed",
            Cause::TruncatedRun => "a run of ours stopped before tests the other runs reported (fail-fast, a crash)",
            Cause::CompileFailure => "the test patch does not compile without the fix, so our test run ran fewer tests",
        }
    }

    /// The cause of an instance that ended with `rejection` before its runs could be compared.
    pub fn of_rejection(rejection: &Rejection) -> Option<Cause> {
        Some(match rejection.reason {
            RejectReason::RepoUnavailable => Cause::RepoUnavailable,
            RejectReason::TestPatchDoesNotApply | RejectReason::FixPatchDoesNotApply => Cause::PatchDoesNotApply,
            RejectReason::ImageBuildFailed if looks_like_toolchain(&rejection.detail) => Cause::Toolchain,
            RejectReason::ImageBuildFailed => Cause::BuildFailure,
            RejectReason::NeedsNetwork => Cause::NeedsNetwork,
            RejectReason::Timeout => Cause::Timeout,
            RejectReason::Infrastructure => Cause::Infrastructure,
            RejectReason::UnsupportedEnvironment => Cause::Toolchain,
            RejectReason::TruncatedRun => Cause::TruncatedRun,
            _ => return None,
        })
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Words in a failed setup's log tail that point at the toolchain rather than the repository.
const TOOLCHAIN_SIGNS: &[&str] = &[
    "requires rustc",
    "rust-version",
    "feature `edition",
    "is not supported by the following package",
    "MINSIGSTKSZ",
    "-Werror",
    "invalid target release",
    "invalid source release",
    "release version",
    "unsupported class file",
    "has been compiled by a more recent version",
    "requires go >=",
    "go.mod requires go",
    "EBADENGINE",
    "Unsupported engine",
    "ERR_OSSL_EVP_UNSUPPORTED",
    "No compiler is provided",
    "not compatible with the current",
];

/// Whether a setup failure's text points at the toolchain.
pub fn looks_like_toolchain(detail: &str) -> bool {
    TOOLCHAIN_SIGNS.iter().any(|s| detail.contains(s))
}

/// Whether a run's parsed log says the code did not build.
pub fn build_failed(log: &ParsedLog) -> bool {
    log.build_failed
}

/// Whether a test ended the same way in every run it has a status in.
fn steady(statuses: [TestStatus; 3]) -> bool {
    let mut seen = statuses.into_iter().filter(|s| *s != TestStatus::None);
    let first = seen.next();
    seen.all(|s| Some(s) == first)
}

/// What is known about our side besides its statuses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Evidence {
    /// A run of ours was killed by the timeout.
    pub timed_out: bool,
    /// Our record says a submodule's content was missing from the image.
    pub missing_submodule: bool,
    /// Our record says files of an extra source were missing from the image.
    pub missing_extra_source: bool,
    /// Per run (run, test, fix): our code did not build there.
    pub build_failed: [bool; 3],
    /// Per run: ours reported fewer than half the tests the published run did, so it stopped
    /// early (a crash of the test runner, a runtime that rejects the code).
    pub stopped_early: [bool; 3],
    /// Per run: the published run reported no test at all (its build failed there).
    pub published_empty: [bool; 3],
    /// Tests of ours whose container (the part of the canonical id before `::`: a Go package, a
    /// test binary) the published side lists as one failed entry and never ran: it did not
    /// build there (`FAIL pkg [build failed]`).
    pub container_failed: BTreeSet<String>,
    /// Per run: our record labels it truncated, with the cause.
    pub truncated: [Option<TruncationCause>; 3],
    /// Tests (in the comparison's naming) whose outcome differed between our repeated runs.
    pub flaky: BTreeSet<String>,
    /// Tests (in the comparison's naming) the test framework's own timeout killed in any of
    /// our runs ([`ParsedLog::timed_out`]: go test's `-timeout`).
    pub timed_out_tests: BTreeSet<String>,
}

/// How many differing tests one cause explains, with a few examples.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CauseCount {
    /// The cause.
    pub cause: Cause,
    /// Differing tests it explains (0 for an instance that was not run).
    pub tests: usize,
    /// Up to five of them, or the rejection's first line.
    pub examples: Vec<String>,
}

/// Classifies every test in `differing` (names in the comparison's naming).
pub fn classify_tests<'a>(
    differing: impl IntoIterator<Item = &'a str>,
    published: &View,
    ours: &View,
    evidence: &Evidence,
) -> Vec<CauseCount> {
    let ours_names = ours.names();
    let published_names = published.names();
    let ours_index = NameIndex::new(ours_names.iter().copied());
    let published_index = NameIndex::new(published_names.iter().copied());
    let mut by_cause: BTreeMap<Cause, Vec<String>> = BTreeMap::new();
    for name in differing {
        let seen_ours = ours_names.contains(name);
        let seen_published = published_names.contains(name);
        let cause = if evidence.timed_out || evidence.timed_out_tests.contains(name) {
            Cause::Timeout
        } else if evidence.flaky.contains(name) {
            Cause::Flaky
        } else if !seen_ours && ours_index.has_near(name) || !seen_published && published_index.has_near(name) {
            Cause::Naming
        } else if evidence.missing_submodule {
            Cause::MissingSubmodule
        } else if evidence.missing_extra_source && seen_ours {
            Cause::MissingExtraSource
        } else if !seen_published && evidence.container_failed.contains(name) {
            Cause::Toolchain
        } else {
            let p = published.transition(name);
            let o = ours.transition(name);
            let pairs = [(p.run, o.run), (p.test, o.test), (p.fix, o.fix)];
            let parted =
                pairs.iter().enumerate().filter(|(_, (a, b))| (*a == TestStatus::None) != (*b == TestStatus::None));
            let mut parted = parted.peekable();
            let truncated = pairs.iter().enumerate().find_map(|(i, (a, b))| {
                (*a != TestStatus::None && *b == TestStatus::None).then_some(evidence.truncated[i]).flatten()
            });
            if let Some(c) = truncated {
                match c {
                    TruncationCause::CompileFailure => Cause::CompileFailure,
                    TruncationCause::Timeout => Cause::Timeout,
                    _ => Cause::TruncatedRun,
                }
            } else if parted.peek().is_some() {
                let ours_broke = |i: usize| evidence.build_failed[i] || evidence.stopped_early[i];
                let toolchain = |(i, (a, b)): (usize, &(TestStatus, TestStatus))| {
                    (*b == TestStatus::None && ours_broke(i))
                        || (*a == TestStatus::None && evidence.published_empty[i] && !evidence.build_failed[i])
                };
                if parted.any(toolchain) { Cause::Toolchain } else { Cause::DifferentTestCommand }
            } else if !seen_ours || !seen_published {
                Cause::DifferentTestCommand
            } else if steady([p.run, p.test, p.fix]) && steady([o.run, o.test, o.fix]) {
                Cause::Environment
            } else {
                Cause::Flaky
            }
        };
        by_cause.entry(cause).or_default().push(name.to_owned());
    }
    let mut out: Vec<CauseCount> = by_cause
        .into_iter()
        .map(|(cause, tests)| CauseCount { cause, tests: tests.len(), examples: tests.into_iter().take(5).collect() })
        .collect();
    out.sort_by(|a, b| b.tests.cmp(&a.tests).then(a.cause.cmp(&b.cause)));
    out
}

/// Names indexed for "the same test under another name": equal ignoring case, or equal after
/// dropping a qualifying prefix that ends in a separator.
struct NameIndex<'a> {
    lower: HashMap<String, &'a str>,
    tails: HashMap<String, &'a str>,
}

const SEPARATORS: &[&str] = &["::", " > ", ":", "#", "/", "."];

impl<'a> NameIndex<'a> {
    fn new(names: impl Iterator<Item = &'a str>) -> NameIndex<'a> {
        let mut lower = HashMap::new();
        let mut tails = HashMap::new();
        for n in names {
            let l = n.to_lowercase();
            for t in tails_of(&l) {
                tails.entry(t.to_owned()).or_insert(n);
            }
            lower.insert(l, n);
        }
        NameIndex { lower, tails }
    }

    /// Whether a different name in the index is `name` under another naming.
    fn has_near(&self, name: &str) -> bool {
        let l = name.to_lowercase();
        if self.lower.get(&l).is_some_and(|n| *n != name) || self.tails.get(&l).is_some_and(|n| *n != name) {
            return true;
        }
        tails_of(&l).any(|t| self.lower.get(t).is_some_and(|n| *n != name))
    }
}

/// The suffixes of `name` after each separator (`a::b::c` -> `b::c`, `c`).
fn tails_of(name: &str) -> impl Iterator<Item = &str> {
    let mut cuts: Vec<usize> = Vec::new();
    for sep in SEPARATORS {
        cuts.extend(name.match_indices(sep).map(|(i, s)| i + s.len()));
    }
    cuts.sort_unstable();
    cuts.dedup();
    cuts.into_iter()
        .filter(move |&i| i < name.len())
        .map(move |i| &name[i..])
        .filter(|t| !t.starts_with([':', '/', '.', '#', ' ', '>']))
}

#[cfg(test)]
mod tests {
    use swe_forge_core::{PhaseStatuses, categorize};

    use super::*;
    use TestStatus::*;

    fn view(rows: &[(&str, TestStatus, TestStatus, TestStatus)]) -> View {
        let mut phases = [PhaseStatuses::new(), PhaseStatuses::new(), PhaseStatuses::new()];
        for (n, a, b, c) in rows {
            for (p, s) in phases.iter_mut().zip([a, b, c]) {
                if *s != None {
                    p.insert(n.to_string(), *s);
                }
            }
        }
        let categories = categorize(&phases[0], &phases[1], &phases[2]);
        View { phases, categories }
    }

    fn check(published: &View, ours: &View, evidence: &Evidence, tests: &[&str]) -> Vec<(Cause, usize)> {
        classify_tests(tests.iter().copied(), published, ours, evidence)
            .into_iter()
            .map(|c| (c.cause, c.tests))
            .collect()
    }

    #[test]
    fn fail_fast_nones_are_a_different_test_command() {
        // Published: fail-fast cargo test left `later` without result in the test run (n2p).
        let published = view(&[("first", Pass, Fail, Pass), ("later", Pass, None, Pass)]);
        let ours = view(&[("first", Pass, Fail, Pass), ("later", Pass, Pass, Pass)]);
        assert_eq!(check(&published, &ours, &Evidence::default(), &["later"]), [(Cause::DifferentTestCommand, 1)]);
        // When our test run did not build, the same gap is the toolchain's doing.
        let ours_broken = view(&[("first", Pass, None, Pass), ("later", Pass, None, Pass)]);
        let published_ok = view(&[("first", Pass, Fail, Pass), ("later", Pass, Pass, Pass)]);
        let evidence = Evidence { build_failed: [false, true, false], ..Evidence::default() };
        assert_eq!(check(&published_ok, &ours_broken, &evidence, &["later"]), [(Cause::Toolchain, 1)]);
        let crashed = Evidence { stopped_early: [false, true, false], ..Evidence::default() };
        assert_eq!(check(&published_ok, &ours_broken, &crashed, &["later"]), [(Cause::Toolchain, 1)]);
        let package = Evidence { container_failed: BTreeSet::from(["later".to_owned()]), ..Evidence::default() };
        let published_without = view(&[("first", Pass, Fail, Pass)]);
        assert_eq!(check(&published_without, &published_ok, &package, &["later"]), [(Cause::Toolchain, 1)]);
        let theirs_broke = Evidence { published_empty: [false, true, false], ..Evidence::default() };
        assert_eq!(check(&ours_broken, &published_ok, &theirs_broke, &["later"]), [(Cause::Toolchain, 1)]);
        // Both builds failed in the test run: theirs stopped there, ours went on (`make -k`, ctest
        // after a partial build): the commands differ, not the compilers.
        let both_broke = Evidence {
            published_empty: [false, true, false],
            build_failed: [false, true, false],
            ..Evidence::default()
        };
        assert_eq!(check(&ours_broken, &published_ok, &both_broke, &["later"]), [(Cause::DifferentTestCommand, 1)]);
        // Our record labels the test run truncated: its cause, not the toolchain's.
        let bailed = Evidence {
            stopped_early: [false, true, false],
            truncated: [Option::None, Some(TruncationCause::FailFast), Option::None],
            ..Evidence::default()
        };
        assert_eq!(check(&published_ok, &ours_broken, &bailed, &["later"]), [(Cause::TruncatedRun, 1)]);
        let no_compile = Evidence {
            build_failed: [false, true, false],
            truncated: [Option::None, Some(TruncationCause::CompileFailure), Option::None],
            ..Evidence::default()
        };
        assert_eq!(check(&published_ok, &ours_broken, &no_compile, &["later"]), [(Cause::CompileFailure, 1)]);
    }

    #[test]
    fn names_that_differ_by_case_or_prefix_are_naming() {
        let published = view(&[("TestLen", Pass, Pass, Pass), ("test-cbor_cpp11", Pass, Pass, Pass)]);
        let ours = view(&[("gostack::TestLen", Pass, Pass, Pass), ("test-CBOR_cpp11", Pass, Pass, Pass)]);
        assert_eq!(
            check(&published, &ours, &Evidence::default(), &["TestLen", "test-cbor_cpp11", "gostack::TestLen"]),
            [(Cause::Naming, 3)]
        );
    }

    #[test]
    fn other_causes() {
        let published = view(&[("a", Pass, Pass, Pass), ("b", Pass, Pass, Pass)]);
        let ours = view(&[("a", Pass, Fail, Pass)]);
        assert_eq!(check(&published, &ours, &Evidence::default(), &["a"]), [(Cause::Flaky, 1)]);
        assert_eq!(check(&published, &ours, &Evidence::default(), &["b"]), [(Cause::DifferentTestCommand, 1)]);
        let sub = Evidence { missing_submodule: true, ..Evidence::default() };
        assert_eq!(check(&published, &ours, &sub, &["a", "b"]), [(Cause::MissingSubmodule, 2)]);
        let extra = Evidence { missing_extra_source: true, ..Evidence::default() };
        assert_eq!(
            check(&published, &ours, &extra, &["a", "b"]),
            [(Cause::DifferentTestCommand, 1), (Cause::MissingExtraSource, 1)],
            "only a test ours ran read the missing files"
        );
        let slow = Evidence { timed_out: true, ..Evidence::default() };
        assert_eq!(check(&published, &ours, &slow, &["a", "b"]), [(Cause::Timeout, 2)]);
        let flaky = Evidence { flaky: BTreeSet::from(["b".to_owned()]), ..Evidence::default() };
        assert_eq!(check(&published, &ours, &flaky, &["b"]), [(Cause::Flaky, 1)]);
    }

    #[test]
    fn steadily_different_outcomes_are_the_environment() {
        // axios: published fails a local-server test in every run, ours passes it in every run;
        // a test needing the internet passes there and fails here.
        let published =
            view(&[("local", Fail, Fail, Fail), ("online", Pass, Pass, Pass), ("wobbly", Pass, Fail, Pass)]);
        let ours = view(&[("local", Pass, Pass, Pass), ("online", Fail, Fail, Fail), ("wobbly", Fail, Fail, Fail)]);
        assert_eq!(
            check(&published, &ours, &Evidence::default(), &["local", "online", "wobbly"]),
            [(Cause::Environment, 2), (Cause::Flaky, 1)]
        );
    }

    #[test]
    fn tests_the_framework_timeout_killed_are_timeout() {
        // grpc-go PR 3201: `Test` hangs in our runs (expired certificates), go test kills the
        // package after 10 minutes; the published side saw it pass.
        let published = view(&[("Test", Pass, Fail, Pass), ("TestOther", Pass, Pass, Pass), ("b", Pass, Pass, Pass)]);
        let ours = view(&[("Test", Fail, Fail, Fail), ("TestOther", Pass, Fail, Pass)]);
        let killed = Evidence { timed_out_tests: BTreeSet::from(["Test".to_owned()]), ..Evidence::default() };
        assert_eq!(check(&published, &ours, &Evidence::default(), &["Test"]), [(Cause::Flaky, 1)], "without evidence");
        assert_eq!(
            check(&published, &ours, &killed, &["Test", "TestOther", "b"]),
            [(Cause::DifferentTestCommand, 1), (Cause::Flaky, 1), (Cause::Timeout, 1)],
            "only the killed test is put down to the timeout"
        );
        // Before the flaky check: a killed test that also ended both ways is the timeout's.
        let both = Evidence { flaky: BTreeSet::from(["Test".to_owned()]), ..killed.clone() };
        assert_eq!(check(&published, &ours, &both, &["Test"]), [(Cause::Timeout, 1)]);
    }

    #[test]
    fn rejections_map_to_causes() {
        let r = |reason, detail: &str| Cause::of_rejection(&Rejection::new(reason, detail));
        assert_eq!(r(RejectReason::RepoUnavailable, ""), Some(Cause::RepoUnavailable));
        assert_eq!(r(RejectReason::FixPatchDoesNotApply, ""), Some(Cause::PatchDoesNotApply));
        assert_eq!(r(RejectReason::ImageBuildFailed, "npm ERR! 404"), Some(Cause::BuildFailure));
        assert_eq!(
            r(
                RejectReason::ImageBuildFailed,
                "error: package `x v1.2.0` cannot be built because it requires rustc 1.88"
            ),
            Some(Cause::Toolchain)
        );
        assert_eq!(r(RejectReason::NoFixedTests, ""), Option::None);
    }

    #[test]
    fn tails_split_at_every_separator() {
        assert_eq!(tails_of("a::b.c").collect::<Vec<_>>(), ["b.c", "c"]);
        assert_eq!(tails_of("t/x.js:name").collect::<Vec<_>>(), ["x.js:name", "js:name", "name"]);
    }
}
