//! The instance record: every field of a Multi-SWE-bench record plus swe-forge's own,
//! which live under `swe_forge` and are ignored by Multi-SWE-bench readers.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, Write};

use serde::{Deserialize, Serialize};

use crate::{Categorized, Phase, RecordError, Timestamp, Transition};

/// Version of the `swe_forge` block's layout; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// Test id -> its three statuses.
pub type TestMap = BTreeMap<String, Transition>;

/// One pull request turned into a benchmark instance (or a candidate for one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Instance {
    /// Repository owner.
    pub org: String,
    /// Repository name.
    pub repo: String,
    /// Pull request number.
    pub number: u64,
    /// Pull request state as GitHub reports it (`closed` for merged PRs).
    pub state: String,
    /// Pull request title.
    pub title: String,
    /// Pull request body.
    pub body: Option<String>,
    /// The commit the PR was based on.
    pub base: Base,
    /// Issues the PR resolves.
    pub resolved_issues: Vec<ResolvedIssue>,
    /// The non-test part of the PR's diff.
    pub fix_patch: String,
    /// The test part of the PR's diff.
    pub test_patch: String,
    /// f2p + s2p + n2p.
    #[serde(default)]
    pub fixed_tests: TestMap,
    /// PASS -> PASS between the test and fix runs.
    #[serde(default)]
    pub p2p_tests: TestMap,
    /// FAIL -> PASS.
    #[serde(default)]
    pub f2p_tests: TestMap,
    /// SKIP -> PASS.
    #[serde(default)]
    pub s2p_tests: TestMap,
    /// NONE -> PASS.
    #[serde(default)]
    pub n2p_tests: TestMap,
    /// Results at the base commit.
    #[serde(default)]
    pub run_result: TestResult,
    /// Results with the test patch.
    #[serde(default)]
    pub test_patch_result: TestResult,
    /// Results with both patches.
    #[serde(default)]
    pub fix_patch_result: TestResult,
    /// `org__repo-N`.
    #[serde(default)]
    pub instance_id: String,
    /// Hints text (comments before the fix), when collected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<String>,
    /// Multi-SWE-bench handler tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// Multi-SWE-bench handler PR-number interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number_interval: Option<String>,
    /// Language of the repository (`go`, `rust`, `java`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
    /// swe-forge's own fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swe_forge: Option<ForgeMeta>,
}

/// The base of a pull request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Base {
    /// `org:branch`.
    pub label: String,
    /// Branch name.
    #[serde(rename = "ref")]
    pub ref_: String,
    /// Commit sha.
    pub sha: String,
}

/// An issue a pull request resolves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolvedIssue {
    /// Issue number.
    pub number: u64,
    /// Issue title.
    pub title: String,
    /// Issue body.
    pub body: Option<String>,
}

/// The outcome of one run, in Multi-SWE-bench's shape.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestResult {
    /// Number of passed tests.
    pub passed_count: u64,
    /// Number of failed tests.
    pub failed_count: u64,
    /// Number of skipped tests.
    pub skipped_count: u64,
    /// Names of passed tests.
    pub passed_tests: Vec<String>,
    /// Names of failed tests.
    pub failed_tests: Vec<String>,
    /// Names of skipped tests.
    pub skipped_tests: Vec<String>,
}

impl TestResult {
    /// Builds a result from a run's statuses (sorted by test id).
    pub fn from_statuses(statuses: &crate::PhaseStatuses) -> TestResult {
        let mut r = TestResult::default();
        for (name, status) in statuses {
            let list = match status {
                crate::TestStatus::Pass => &mut r.passed_tests,
                crate::TestStatus::Fail => &mut r.failed_tests,
                crate::TestStatus::Skip => &mut r.skipped_tests,
                crate::TestStatus::None => continue,
            };
            list.push(name.clone());
        }
        r.passed_count = r.passed_tests.len() as u64;
        r.failed_count = r.failed_tests.len() as u64;
        r.skipped_count = r.skipped_tests.len() as u64;
        r
    }

    /// Total number of tests with a result.
    pub fn total(&self) -> u64 {
        self.passed_count + self.failed_count + self.skipped_count
    }
}

/// swe-forge's additions to a record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ForgeMeta {
    /// Layout version of this block.
    pub schema_version: u32,
    /// Outcome of validation.
    pub status: ValidationStatus,
    /// Why the instance was rejected (empty when accepted).
    #[serde(default)]
    pub rejections: Vec<Rejection>,
    /// Per-run details (exit code, duration, log digest), in phase order.
    #[serde(default)]
    pub runs: Vec<PhaseRun>,
    /// Difficulty label with the features it was derived from (`swe-forge curate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difficulty: Option<Difficulty>,
    /// The latest decision of a person on the review page (`swe-forge review`, applied by curate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<Review>,
    /// The latest explicit decision of a person (keep, drop, needs work, with a reason), made on
    /// the review page apart from the questionnaire and applied by curate; it wins over the
    /// questionnaire's keep rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// Set when this instance's fix patch (nearly) duplicates a kept instance's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicate_of: Option<Duplicate>,
    /// Test command that produced the results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_command: Option<String>,
    /// The parser that read the logs, written as its name (`go-test`). A record naming a parser
    /// this build does not have fails to read, with the field and the known names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parser: Option<crate::Framework>,
    /// Tag of the instance image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Content id (`sha256:...`) of the instance image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_id: Option<String>,
    /// The instance image in a registry, pinned by digest: `HOST:PORT/<path>@sha256:<digest>`
    /// (written by `swe-forge images push`; `images pull` brings it back under `image`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry_image: Option<String>,
    /// Every image pushed for this instance (instance, environment, toolchain, base, and the
    /// Multi-SWE-bench style name when asked for): local name -> `HOST:PORT/<path>@sha256:<digest>`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub registry_images: BTreeMap<String, String>,
    /// When the PR was merged (RFC 3339), when known; overrides may select on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_at: Option<Timestamp>,
    /// When the PR was opened (RFC 3339), when known: SWE-bench's `created_at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<Timestamp>,
    /// How the instance's environment was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    /// Warnings that do not reject the instance (exit code disagrees with the parsed results, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Parser of the structured result files, when the recipe has one (`parser` reads the log);
    /// read and written as `parser` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub results_parser: Option<crate::Framework>,
    /// Tests whose outcome differed between repeated runs of a phase, with their pass rates;
    /// they are left out of every category.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub flaky: BTreeMap<String, PassRates>,
    /// Share of tests whose outcome was the same in every repeated run (1.0 without reruns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stability: Option<f64>,
    /// How the lists were labelled: the rule, tests set apart because the test phase did not
    /// run them, phases that ran fewer tests than the others and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<crate::Labels>,
    /// What the instance was checked with beyond its three phases: the gold patch through
    /// evaluation k times, the negative controls, signs of the network in its logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<crate::Evidence>,
    /// The other naming of the record's tests: canonical id -> the name Multi-SWE-bench's parser
    /// gives it (Go subtests as the repository's handler names them), for every test of the three
    /// run results that Multi-SWE-bench can name (Rust doctests cannot). With the run results it
    /// is all `export --naming msb` needs; absent on records made before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msb_names: Option<BTreeMap<String, String>>,
    /// The quality signals of an accepted instance: solution leakage, identifiers the issue
    /// never names, specificity, untested hunks, flakiness (`swe-forge curate` and validation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<crate::Quality>,
}

/// Everything that went into an instance's image, so it can be rebuilt and audited.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Provenance {
    /// Recipe name (`go`, `java-maven`, ...).
    pub recipe: String,
    /// sha256 of the resolved recipe (after overrides), as JSON.
    pub recipe_sha256: String,
    /// Base image tag (its tag carries the rootfs sha256).
    pub base_image: String,
    /// Toolchain image tag.
    pub toolchain_image: String,
    /// sha256 of the toolchain Dockerfile.
    pub toolchain_dockerfile_sha256: String,
    /// What the toolchain prints of its versions, then `package version` of every package taken
    /// from another Debian suite (`name/sid`).
    pub toolchain_versions: String,
    /// Versions the repository asks for (`go.mod` go line, `rust-version`, ...), by source.
    pub requested_versions: BTreeMap<String, String>,
    /// Lockfiles and build files at the base commit: path -> git blob id.
    pub lockfiles: BTreeMap<String, String>,
    /// Lockfiles in the repository of the instance image once its setup ran, those the setup
    /// resolved itself included (a crate without a committed `Cargo.lock`): path -> sha256. They
    /// pin what was installed; the base commit's own lockfiles are in `lockfiles`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resolved_lockfiles: BTreeMap<String, String>,
    /// Tree id of the base commit.
    pub base_tree: String,
    /// Source-layer image id.
    pub source_image_id: String,
    /// Commit the repository environment was built at: the base commit or an ancestor of it, shared
    /// by instances of the repository (never newer than the base, so nothing of the future is in it).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub env_commit: String,
    /// Repository environment image (toolchain + the tree at `env_commit` + setup) that the
    /// instance layer is built on.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub env_image: String,
    /// Id of the environment image.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub env_image_id: String,
    /// Milliseconds building the environment image took (source layer, setup, commit), when the
    /// validation run that made this record built it (every record of that run on the same
    /// environment carries it); absent when the image existed already.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_build_ms: Option<u64>,
    /// Milliseconds it spent building the instance layer on the environment; absent when the
    /// instance image existed already.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_build_ms: Option<u64>,
    /// Dependency fingerprint of the base commit: 16 hex digits of a hash of the recipe's
    /// lockfiles, dependency manifests and build files there (empty: the recipe names none).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub fingerprint: String,
    /// Dependency fingerprint of `env_commit`; when it differs from `fingerprint` the instance
    /// layer ran the recipe's refresh commands before its setup.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub env_fingerprint: String,
    /// Trees of other repositories the recipe put into the image (outside the repository), each
    /// with the commit its revision resolved to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_sources: Vec<ExtraSourceProvenance>,
    /// How the toolchain's version was chosen (families whose version is chosen: Java, Node, Go,
    /// Rust), and the versions tried before it when a setup failed because of the toolchain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolchain_choice: Option<ToolchainChoice>,
    /// Where the test command came from when not from the recipe or an override as written (the
    /// script the project's CI runs), what was changed in it (fail-fast switched off), and the
    /// build options of the project's CI added to the setup (`cmake -D ...`, `configure`, `mvn -P`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub test_command_notes: Vec<String>,
    /// What the setup had to do beyond the recipe's first way, in its own words (a `configure`
    /// of its time that failed, the build system then regenerated with `autoreconf -fi`), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup_notes: Vec<String>,
    /// The build options taken from the project's CI (one job's: `ciflags.rs` in recipes), and
    /// the sets tried before when a setup failed with signs of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_options: Option<CiOptions>,
    /// On a record whose image could not be made: the line of the setup's log that says why
    /// (the rest of the provenance is what was chosen and tried up to then).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub setup_error: String,
    /// What a failed first build or a first set of runs that reported no test made validation do
    /// before this image, in order: a system package installed, another CMake generator, another
    /// build system of the tree. Validation of the record again (and evaluation, and a rebuild)
    /// does the same from the start.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub build_attempts: Vec<BuildAttempt>,
}

/// One thing validation changed after a failed first build or runs that reported no test.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct BuildAttempt {
    /// `system_package` (a Debian package that provides what the build lacked), `fallback` (a
    /// recipe's other way to build: CMake's Makefile generator) or `build_system` (the tree's
    /// next build system, when the first's runs reported no test).
    pub kind: String,
    /// What was done: the package installed, the fallback taken, the recipe tried next.
    pub action: String,
    /// What the log showed (`header cmocka.h`; the runner's line that it found no test).
    pub found: String,
    /// The log line that showed it.
    pub line: String,
    /// The logs it was read from (`setup`; `run, test, fix`).
    pub log: String,
    /// Where the action came from (`usr/include/cmocka.h in trixie's Contents-amd64`), if anywhere.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub source: String,
}

impl BuildAttempt {
    /// A Debian package installed.
    pub const SYSTEM_PACKAGE: &'static str = "system_package";
    /// A recipe's fallback taken.
    pub const FALLBACK: &'static str = "fallback";
    /// Another build system of the tree.
    pub const BUILD_SYSTEM: &'static str = "build_system";
    /// The runs as an unprivileged test user, the suite having refused to run as root.
    pub const TEST_USER: &'static str = "test_user";
}

/// The build options an image's setup took from the project's CI.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CiOptions {
    /// The tool they are for (`cmake -D`, `configure`, `mvn -P`).
    pub tool: String,
    /// Where they come from: a job (`.github/workflows/ci.yml job test (cc=gcc)`), the test
    /// switches of one, or none.
    pub job: String,
    /// Why that job: how many configure and run the tests, and what the others had.
    pub reason: String,
    /// The options passed, as the tool takes them (empty: none of the CI's).
    pub options: Vec<String>,
    /// Sets tried before, each with the setup's line that showed its options failed, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<CiOptionsAttempt>,
}

/// A set of CI build options whose setup failed with signs of them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CiOptionsAttempt {
    /// Where they came from, as [`CiOptions::job`].
    pub job: String,
    /// The options.
    pub options: Vec<String>,
    /// The line of the setup's log (`CMake Error at CMakeLists.txt:9 (message): ...`).
    pub error: String,
}

/// The choice of a toolchain version for an instance.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolchainChoice {
    /// The family (`java`, `node`, `go`, `rust`).
    pub family: String,
    /// The version chosen (`8`, `16`).
    pub version: String,
    /// The toolchain image's name (`java8`, `node16`).
    pub toolchain: String,
    /// Why: the requests (and where each came from) or the base commit's date that decided it.
    pub reason: String,
    /// Whether a pipeline override named another toolchain, which was used instead.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub overridden: bool,
    /// Versions tried before, each with the setup error that named the toolchain, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<ToolchainAttempt>,
}

/// A toolchain version whose setup failed in a way that names the toolchain.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolchainAttempt {
    /// The toolchain tried (`java`).
    pub toolchain: String,
    /// The line of the setup log that names the toolchain.
    pub error: String,
}

/// An extra source in an image: the tree of repository `repo` at commit `sha` (what `rev`
/// named when the image was built), as plain files at `path`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtraSourceProvenance {
    /// `org/name` in the mirrors folder.
    pub repo: String,
    /// The revision the recipe asked for (tag, branch or sha).
    pub rev: String,
    /// The commit it resolved to.
    pub sha: String,
    /// Where its tree is in the image.
    pub path: String,
}

impl ForgeMeta {
    /// A block with the given status and nothing else.
    pub fn new(status: ValidationStatus) -> ForgeMeta {
        ForgeMeta {
            schema_version: SCHEMA_VERSION,
            status,
            rejections: Vec::new(),
            runs: Vec::new(),
            difficulty: None,
            review: None,
            decision: None,
            duplicate_of: None,
            test_command: None,
            parser: None,
            image: None,
            image_id: None,
            registry_image: None,
            registry_images: BTreeMap::new(),
            merged_at: None,
            created_at: None,
            provenance: None,
            warnings: Vec::new(),
            results_parser: None,
            flaky: BTreeMap::new(),
            stability: None,
            labels: None,
            evidence: None,
            msb_names: None,
            quality: None,
        }
    }
}

/// Where an instance ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValidationStatus {
    /// Mined, not validated yet.
    Candidate,
    /// Passed every keep rule.
    Accepted,
    /// Failed a keep rule or could not be built or run.
    Rejected,
}

impl ValidationStatus {
    /// The snake_case name, as in records.
    pub fn as_str(self) -> &'static str {
        match self {
            ValidationStatus::Candidate => "candidate",
            ValidationStatus::Accepted => "accepted",
            ValidationStatus::Rejected => "rejected",
        }
    }
}

/// One run of the test command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseRun {
    /// Which run.
    pub phase: Phase,
    /// Exit code of the test command (None when killed).
    pub exit_code: Option<i64>,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// Whether the phase was killed for exceeding its timeout.
    pub timed_out: bool,
    /// sha256 of the whole log.
    pub log_sha256: String,
    /// Size of the whole log in bytes.
    pub log_bytes: u64,
    /// Number of tests with a result.
    pub tests: u64,
    /// 0 for the first run of the phase, 1.. for reruns.
    #[serde(default)]
    pub attempt: u32,
    /// Time spent inside the test command (measured in the container), in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_ms: Option<u64>,
}

/// How often a test passed in each phase over all of its runs (0.0 to 1.0; None: never reported).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PassRates {
    /// Base runs.
    pub run: Option<f64>,
    /// Test-patch runs.
    pub test: Option<f64>,
    /// Fix runs.
    pub fix: Option<f64>,
}

/// A machine-readable reason with a human-readable detail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejection {
    /// What went wrong.
    pub reason: RejectReason,
    /// Details (test names, error text).
    #[serde(default)]
    pub detail: String,
}

impl Rejection {
    /// A rejection with a detail text.
    pub fn new(reason: RejectReason, detail: impl Into<String>) -> Rejection {
        Rejection { reason, detail: detail.into() }
    }
}

/// Every reason an instance can be rejected for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RejectReason {
    /// The repository, the base commit or an extra source the recipe declares was not found.
    RepoUnavailable,
    /// The test patch does not apply to the base commit.
    TestPatchDoesNotApply,
    /// The fix patch does not apply on top of the test patch.
    FixPatchDoesNotApply,
    /// The instance image could not be built.
    ImageBuildFailed,
    /// The setup needs a host this machine cannot reach (a SNAPSHOT repository, a tarball on a
    /// code host, a submodule on the web); the rejection's detail names it.
    NeedsNetwork,
    /// A run exceeded its timeout.
    Timeout,
    /// The fix run reported no test at all.
    NoTestsInFixRun,
    /// No test goes from non-PASS to PASS.
    NoFixedTests,
    /// No phase reported a test: no run printed a per-test result and no phase's test command
    /// passed (the runner found no test, a build error such as a missing header, a crash), so the
    /// suite never ran; the detail names the log line that shows why, when one does. Stands for
    /// `no_fixed_tests` and `no_tests_in_fix_run`, which say less.
    SuiteNeverRan,
    /// A test passes with the test patch and fails with the fix.
    PassToFail,
    /// A test passes at base, is missing or skipped with the test patch, and fails with the fix.
    Anomaly,
    /// The engine or another piece of infrastructure failed; not a test result.
    Infrastructure,
    /// No recipe can build this repository here (unknown build system, Gradle without a distribution).
    UnsupportedEnvironment,
    /// A run was killed by the memory limit.
    Oom,
    /// A run hit the limit on the number of processes.
    PidsLimit,
    /// A patch escapes the repository (`..`, absolute paths, `.git/`, symlinks pointing outside).
    UnsafePatch,
    /// The test or fix run stopped before reporting tests the other runs reported (fail-fast, a
    /// crash, a fix that does not compile), and running without fail-fast did not repair it.
    TruncatedRun,
    /// Every FAIL_TO_PASS test passed at the base and did not run with the test patch (it does
    /// not compile without the fix: a renamed type), so any patch that makes it compile resolves
    /// the instance; none failed or was absent at the base.
    FixedTestsPassedAtBase,
    /// Every FAIL_TO_PASS test depended on the gold patch's layout: it passed with the gold patch
    /// and was missing or failed under a layout variant of it (a blank line before the first
    /// change, hunks placed by their context), so a fix laid out otherwise fails it.
    UnstableTests,
}

impl RejectReason {
    /// Whether the reason is no verdict on the instance but on this machine or its inputs'
    /// presence (the engine failed after its retries; the clone, the base commit or an extra
    /// source is missing; the setup could not reach a host), so a later run tries the instance
    /// again instead of keeping it.
    pub fn is_retried(self) -> bool {
        matches!(self, RejectReason::Infrastructure | RejectReason::RepoUnavailable | RejectReason::NeedsNetwork)
    }

    /// snake_case name as written in records.
    pub fn as_str(self) -> &'static str {
        match self {
            RejectReason::RepoUnavailable => "repo_unavailable",
            RejectReason::TestPatchDoesNotApply => "test_patch_does_not_apply",
            RejectReason::FixPatchDoesNotApply => "fix_patch_does_not_apply",
            RejectReason::ImageBuildFailed => "image_build_failed",
            RejectReason::NeedsNetwork => "needs_network",
            RejectReason::Timeout => "timeout",
            RejectReason::NoTestsInFixRun => "no_tests_in_fix_run",
            RejectReason::NoFixedTests => "no_fixed_tests",
            RejectReason::SuiteNeverRan => "suite_never_ran",
            RejectReason::PassToFail => "pass_to_fail",
            RejectReason::Anomaly => "anomaly",
            RejectReason::Infrastructure => "infrastructure",
            RejectReason::UnsupportedEnvironment => "unsupported_environment",
            RejectReason::Oom => "oom",
            RejectReason::PidsLimit => "pids_limit",
            RejectReason::UnsafePatch => "unsafe_patch",
            RejectReason::TruncatedRun => "truncated_run",
            RejectReason::FixedTestsPassedAtBase => "fixed_tests_passed_at_base",
            RejectReason::UnstableTests => "unstable_tests",
        }
    }
}

impl Instance {
    /// `org__repo-N`, the id Multi-SWE-bench uses.
    pub fn expected_id(&self) -> String {
        format!("{}__{}-{}", self.org, self.repo, self.number)
    }

    /// What is wrong with the record's `instance_id` when it is not [`Instance::expected_id`]:
    /// an id naming another pull request would have the record's runs, images and reviews filed
    /// under the wrong instance.
    pub fn id_problem(&self) -> Option<String> {
        let expected = self.expected_id();
        (self.instance_id != expected)
            .then(|| format!("is not {expected:?}, the id its org, repo and number give (org__repo-number)"))
    }

    /// Stores the derived categories and the three run results on the record.
    pub fn set_results(
        &mut self,
        c: &Categorized,
        run: crate::TestResult,
        test: crate::TestResult,
        fix: crate::TestResult,
    ) {
        self.p2p_tests = c.p2p.clone();
        self.f2p_tests = c.f2p.clone();
        self.s2p_tests = c.s2p.clone();
        self.n2p_tests = c.n2p.clone();
        self.fixed_tests = c.fixed.clone();
        self.run_result = run;
        self.test_patch_result = test;
        self.fix_patch_result = fix;
    }

    /// Validation status, `Candidate` when the record carries none.
    pub fn status(&self) -> ValidationStatus {
        self.swe_forge.as_ref().map_or(ValidationStatus::Candidate, |m| m.status)
    }
}

/// Why `name` cannot be one path component (instance ids, orgs and repositories become folder
/// names of logs, images and clones), or None when it can: it must be non-empty, not `.` or `..`,
/// and hold no `/`, `\\`, NUL or other control character.
pub fn path_component_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("is empty")
    } else if name == "." || name == ".." {
        Some("names a folder above or at its own")
    } else if name.contains(['/', '\\']) {
        Some("holds a path separator")
    } else if name.chars().any(char::is_control) {
        Some("holds a control character")
    } else {
        None
    }
}

/// Why `owner/name` cannot name the repository's images, or None when it can: its images are
/// `swe-forge/<owner>__<name>` (lowercased), and a Docker repository path component is runs of
/// `a-z0-9` joined by one `.`, one or two `_`, or dashes; so each part starts and ends with a
/// letter or digit and holds nothing but letters, digits, `.`, `_` and `-` (GitHub's own names do).
pub fn image_name_problem(owner: &str, name: &str) -> Option<String> {
    for (what, part) in [("owner", owner), ("name", name)] {
        if part.is_empty() {
            return Some(format!("the {what} is empty"));
        }
        if let Some(c) = part.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))) {
            return Some(format!("the {what} {part:?} holds {c:?} (letters, digits, '.', '_' and '-' only)"));
        }
        let ends = [part.chars().next(), part.chars().last()];
        if ends.iter().any(|c| !c.is_some_and(|c| c.is_ascii_alphanumeric())) {
            return Some(format!("the {what} {part:?} does not start and end with a letter or digit"));
        }
    }
    let component = format!("{owner}__{name}").to_ascii_lowercase();
    let bytes = component.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_alphanumeric() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && !bytes[i].is_ascii_alphanumeric() {
            i += 1;
        }
        let sep = &component[start..i];
        let fits = matches!(sep, "." | "_" | "__") || sep.bytes().all(|b| b == b'-');
        if !fits {
            return Some(format!("{sep:?} in {owner}/{name} cannot join the parts of an image name"));
        }
    }
    None
}

/// Reads JSONL records; blank lines are skipped; a missing `instance_id` is filled in. A line
/// longer than [`crate::MAX_LINE`] is an error (read no further).
/// A malformed line is reported with its line number and the path of the bad field; so is an
/// `instance_id`, `org` or `repo` that is not a safe path component
/// ([`path_component_problem`]) and an instance id seen before.
pub fn read_jsonl(reader: impl BufRead) -> Result<Vec<Instance>, RecordError> {
    read_lines(reader, false)
}

/// Reads an append-only JSONL log of records (a resumable command's progress, where a record
/// written again later supersedes the earlier one): as [`read_jsonl`], but an instance id may
/// repeat; every line is returned, in order.
pub fn read_jsonl_log(reader: impl BufRead) -> Result<Vec<Instance>, RecordError> {
    read_lines(reader, true)
}

fn read_lines(reader: impl BufRead, repeats: bool) -> Result<Vec<Instance>, RecordError> {
    JsonlRecords {
        lines: crate::bounded_lines(reader, crate::MAX_LINE),
        seen: HashMap::new(),
        line: 0,
        repeats,
        done: false,
    }
    .collect()
}

/// The records of a JSONL stream one at a time, checked as [`read_jsonl`] checks them (an
/// instance id seen before is an error); only the ids seen so far are kept, with their line.
/// After the first error the iterator ends.
pub fn jsonl_records<R: BufRead>(reader: R) -> JsonlRecords<R> {
    JsonlRecords {
        lines: crate::bounded_lines(reader, crate::MAX_LINE),
        seen: HashMap::new(),
        line: 0,
        repeats: false,
        done: false,
    }
}

/// Iterator of [`jsonl_records`].
pub struct JsonlRecords<R> {
    lines: crate::BoundedLines<R>,
    /// Instance id -> the line it first appeared on.
    seen: HashMap<String, usize>,
    /// Lines read so far, blank ones included.
    line: usize,
    repeats: bool,
    done: bool,
}

impl<R: BufRead> Iterator for JsonlRecords<R> {
    type Item = Result<Instance, RecordError>;

    fn next(&mut self) -> Option<Result<Instance, RecordError>> {
        if self.done {
            return None;
        }
        let result = self.next_record().transpose();
        if !matches!(result, Some(Ok(_))) {
            self.done = true;
        }
        result
    }
}

impl<R: BufRead> JsonlRecords<R> {
    fn next_record(&mut self) -> Result<Option<Instance>, RecordError> {
        let (idx, line) = loop {
            let Some(line) = self.lines.next() else { return Ok(None) };
            let line = line?;
            let idx = self.line;
            self.line += 1;
            if !line.trim().is_empty() {
                break (idx, line);
            }
        };
        let de = &mut serde_json::Deserializer::from_str(&line);
        let mut inst: Instance = serde_path_to_error::deserialize(de).map_err(|e| RecordError::Malformed {
            line: idx + 1,
            field: e.path().to_string(),
            message: crate::json_line_error(e.inner()),
        })?;
        if inst.instance_id.is_empty() {
            inst.instance_id = inst.expected_id();
        }
        for (field, value) in [("org", &inst.org), ("repo", &inst.repo), ("instance_id", &inst.instance_id)] {
            if let Some(why) = path_component_problem(value) {
                return Err(RecordError::UnsafeName { line: idx + 1, field, value: value.clone(), why });
            }
        }
        if let Some(why) = inst.id_problem() {
            return Err(RecordError::WrongId { line: idx + 1, instance_id: inst.instance_id, why });
        }
        if let Some(first) = self.seen.insert(inst.instance_id.clone(), idx + 1)
            && !self.repeats
        {
            return Err(RecordError::Duplicate { line: idx + 1, first, instance_id: inst.instance_id });
        }
        Ok(Some(inst))
    }
}

/// Writes records as JSONL, one per line.
pub fn write_jsonl<'a>(
    mut writer: impl Write,
    records: impl IntoIterator<Item = &'a Instance>,
) -> Result<(), RecordError> {
    for r in records {
        serde_json::to_writer(&mut writer, r).map_err(std::io::Error::from)?;
        writer.write_all(b"\n")?;
    }
    writer.flush()?;
    Ok(())
}

/// How hard an instance is, and why (see docs/difficulty-calibration.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Difficulty {
    /// The label in force: a human's when one exists, else the heuristic's.
    pub label: DifficultyLabel,
    /// Where `label` comes from.
    pub source: LabelSource,
    /// What the heuristic says, kept even when a human label overrides it.
    pub heuristic: DifficultyLabel,
    /// The heuristic's score (higher is harder).
    pub score: f64,
    /// Everything the heuristic looked at, so a user can re-cut the labels.
    pub features: DifficultyFeatures,
}

/// Easy (< 15 min for an experienced engineer), medium (15 min to 1 h), hard (more).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DifficultyLabel {
    /// Under 15 minutes.
    Easy,
    /// 15 minutes to an hour.
    Medium,
    /// More than an hour.
    Hard,
}

impl DifficultyLabel {
    /// snake_case name as written in records.
    pub fn as_str(self) -> &'static str {
        match self {
            DifficultyLabel::Easy => "easy",
            DifficultyLabel::Medium => "medium",
            DifficultyLabel::Hard => "hard",
        }
    }
}

/// Who decided a difficulty label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LabelSource {
    /// The transparent heuristic over `features`.
    Heuristic,
    /// A person (a labels file, or the time-to-fix answer of a review).
    Human,
}

/// The measurements behind a difficulty label.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DifficultyFeatures {
    /// Files changed by the fix patch.
    pub fix_files: u64,
    /// Hunks of the fix patch.
    pub fix_hunks: u64,
    /// Lines the fix patch adds.
    pub fix_lines_added: u64,
    /// Lines the fix patch removes.
    pub fix_lines_removed: u64,
    /// Distinct directories the fix patch touches.
    pub fix_dirs: u64,
    /// Distinct top-level directories (modules) the fix patch touches.
    pub fix_top_dirs: u64,
    /// Files changed by the test patch.
    pub test_files: u64,
    /// Lines the test patch adds or removes.
    pub test_lines: u64,
    /// Tests the fix makes pass (f2p + s2p + n2p).
    pub fixed_tests: u64,
    /// Characters of the issue text (titles and bodies of the resolved issues; the PR's when none).
    pub issue_chars: u64,
}

/// A person's answers about one instance, modelled on Multi-SWE-bench's and SWE-bench
/// Verified's annotation questionnaires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Review {
    /// Who answered.
    pub reviewer: String,
    /// When (RFC 3339, UTC).
    pub reviewed_at: String,
    /// A severe problem the other questions do not cover makes the instance unusable.
    pub severe_problem: bool,
    /// Is the issue clear enough to attempt a solution? 0 (no) to 3 (well specified).
    pub issue_clarity: u8,
    /// Do the tests accept every reasonable solution? 0 (no) to 3 (perfectly).
    pub test_adequacy: u8,
    /// Time an experienced engineer needs, when answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_fix: Option<TimeToFix>,
    /// Free notes.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub notes: String,
    /// The keep rule's verdict on these answers when the dataset was curated.
    pub keep: bool,
}

/// A person's explicit decision about one instance, separate from the questionnaire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    /// Keep, drop or needs work.
    pub verdict: Verdict,
    /// Why (required for drop and needs work on the review page).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Who decided.
    pub reviewer: String,
    /// When (RFC 3339, UTC).
    pub decided_at: String,
}

/// What a person decided about an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The instance stays in the dataset (if validation accepted it).
    Keep,
    /// The instance leaves the dataset.
    Drop,
    /// The instance is held back until someone fixes it (an override, a better test patch).
    NeedsWork,
}

impl Verdict {
    /// Every verdict.
    pub const ALL: [Verdict; 3] = [Verdict::Keep, Verdict::Drop, Verdict::NeedsWork];

    /// The name as written in records and the store (`keep`, `drop`, `needs_work`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Keep => "keep",
            Verdict::Drop => "drop",
            Verdict::NeedsWork => "needs_work",
        }
    }

    /// Parses a name written by `as_str`.
    pub fn parse(s: &str) -> Option<Verdict> {
        Verdict::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

/// The time-to-fix answer of a review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TimeToFix {
    /// Less than 15 minutes (easy).
    #[serde(rename = "<15m")]
    Under15Min,
    /// 15 minutes to an hour (medium).
    #[serde(rename = "15m-1h")]
    Under1Hour,
    /// One to four hours (hard).
    #[serde(rename = "1h-4h")]
    Under4Hours,
    /// More than four hours (hard).
    #[serde(rename = ">4h")]
    Over4Hours,
}

impl TimeToFix {
    /// Every answer, shortest first.
    pub const ALL: [TimeToFix; 4] =
        [TimeToFix::Under15Min, TimeToFix::Under1Hour, TimeToFix::Under4Hours, TimeToFix::Over4Hours];

    /// The name as written in records (`<15m`, `15m-1h`, `1h-4h`, `>4h`).
    pub fn as_str(self) -> &'static str {
        match self {
            TimeToFix::Under15Min => "<15m",
            TimeToFix::Under1Hour => "15m-1h",
            TimeToFix::Under4Hours => "1h-4h",
            TimeToFix::Over4Hours => ">4h",
        }
    }

    /// Parses a name written by `as_str`.
    pub fn parse(s: &str) -> Option<TimeToFix> {
        TimeToFix::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// The difficulty this answer stands for (Multi-SWE-bench's mapping).
    pub fn difficulty(self) -> DifficultyLabel {
        match self {
            TimeToFix::Under15Min => DifficultyLabel::Easy,
            TimeToFix::Under1Hour => DifficultyLabel::Medium,
            TimeToFix::Under4Hours | TimeToFix::Over4Hours => DifficultyLabel::Hard,
        }
    }
}

/// Marks an instance whose fix patch (nearly) duplicates another's (backports, cherry-picks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Duplicate {
    /// The instance kept from the group.
    pub of: String,
    /// Similarity of the two fix patches (1.0: identical after normalisation).
    pub similarity: f64,
}

#[cfg(test)]
mod image_name_tests {
    use super::image_name_problem;

    #[test]
    fn names_that_cannot_become_an_image_reference_are_told_apart() {
        for (owner, name) in [("forge-fixtures", "gostack"), ("nlohmann", "json"), ("a", "b.c_d--e"), ("Org9", "X")] {
            assert_eq!(image_name_problem(owner, name), None, "{owner}/{name}");
        }
        let problem = |o, n| image_name_problem(o, n).unwrap_or_else(|| panic!("{o}/{n} passed"));
        assert!(problem(".tmpAbC", "widget").contains("does not start and end"), "a tempdir's name");
        assert!(problem("acme", "wid get").contains("holds ' '"));
        assert!(problem("acme", "").contains("name is empty"));
        assert!(problem("acme", "a..b").contains("\"..\""));
        assert!(problem("ac_", "x").contains("does not start and end"));
        assert!(problem("acme", "a_-b").contains("cannot join"));
    }
}
