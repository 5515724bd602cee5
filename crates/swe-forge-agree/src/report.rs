//! One row per instance ([`InstanceAgreement`], made by [`agree`]) and the whole report
//! ([`AgreementReport`]): the rows plus tallies overall, per language and per repository.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use swe_forge_core::{Instance, Phase, TestResult, TestStatus, ValidationStatus};

use swe_forge_core::Warning;

use crate::cause::{Evidence, build_failed, classify_tests};
use swe_forge_logparse::Naming;

use crate::{Cause, CauseCount, ListComparison, PhaseLogs, View, rederive};

/// Everything known about one re-validated instance.
#[derive(Debug, Clone, Copy)]
pub struct Revalidated<'a> {
    /// The published record, test lists included.
    pub published: &'a Instance,
    /// Our record of the same instance, as the validator left it.
    pub ours: &'a Instance,
    /// The parsed logs of our three runs, when they ran.
    pub logs: Option<&'a PhaseLogs>,
}

/// Image facts of an instance, measured by the caller.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageFacts {
    /// Tag of the instance image.
    pub image: Option<String>,
    /// Wall time of making the image (toolchain, sources, setup), in milliseconds; None when it
    /// already existed.
    pub build_ms: Option<u64>,
    /// Bytes the instance image adds on top of its repository environment image (on top of its
    /// toolchain image when it was built before environments existed).
    pub unique_bytes: Option<u64>,
    /// Tag of the repository environment image the instance was built on, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    /// Bytes the environment image adds on top of its toolchain image (shared by the instances
    /// built on it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment_bytes: Option<u64>,
}

/// Passed, failed and skipped counts of one run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Passed tests.
    pub passed: u64,
    /// Failed tests.
    pub failed: u64,
    /// Skipped tests.
    pub skipped: u64,
}

impl Counts {
    fn of(r: &TestResult) -> Counts {
        // Counted from the lists: published counts and lists agree (Multi-SWE-bench checks it).
        Counts {
            passed: r.passed_tests.len() as u64,
            failed: r.failed_tests.len() as u64,
            skipped: r.skipped_tests.len() as u64,
        }
    }
}

/// One run's counts on both sides, in the comparison's naming.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunCounts {
    /// Which run.
    pub phase: Phase,
    /// The published record's counts.
    pub published: Counts,
    /// Ours, when our runs happened.
    pub ours: Option<Counts>,
}

/// How far an instance got on our side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The three runs happened and their lists were compared.
    Compared,
    /// The instance stopped before its runs (repository, patches, image); nothing to compare.
    NotRun,
    /// The instance has not been re-validated (yet): a partial report.
    Pending,
}

/// The language of an instance neither side names.
const UNKNOWN_LANGUAGE: &str = "unknown";

/// The agreement of one instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstanceAgreement {
    /// `org__repo-N`.
    pub instance_id: String,
    /// `org/repo`.
    pub repo: String,
    /// Language (ours when known, else the published record's, else `unknown`).
    pub language: String,
    /// The naming both sides were compared in.
    pub naming: Naming,
    /// Whether the lists were compared.
    pub outcome: Outcome,
    /// Our validation status.
    pub status: ValidationStatus,
    /// Our rejections, `reason: first line of the detail`.
    pub rejections: Vec<String>,
    /// The test command we ran.
    pub test_command: Option<String>,
    /// Strict f2p (FAIL -> PASS) compared.
    pub f2p: Option<ListComparison>,
    /// FAIL_TO_PASS (f2p + s2p + n2p) compared.
    pub fail_to_pass: Option<ListComparison>,
    /// PASS_TO_PASS compared.
    pub pass_to_pass: Option<ListComparison>,
    /// Run counts side by side.
    pub runs: Vec<RunCounts>,
    /// FAIL_TO_PASS and PASS_TO_PASS are both exact.
    pub agrees: bool,
    /// The cause explaining most of the differences; None when the lists agree.
    pub cause: Option<Cause>,
    /// Every cause with the number of differing tests it explains.
    pub causes: Vec<CauseCount>,
    /// Image facts, when measured.
    #[serde(default)]
    pub image: ImageFacts,
}

impl InstanceAgreement {
    /// The row of an instance that has not been re-validated (yet).
    pub fn pending(published: &Instance, naming: Naming) -> InstanceAgreement {
        let counts = [&published.run_result, &published.test_patch_result, &published.fix_patch_result].map(Counts::of);
        InstanceAgreement {
            instance_id: published.instance_id.clone(),
            repo: format!("{}/{}", published.org, published.repo),
            language: published.lang.clone().unwrap_or_else(|| UNKNOWN_LANGUAGE.to_owned()),
            naming: naming.resolve(published),
            outcome: Outcome::Pending,
            status: published.status(),
            rejections: Vec::new(),
            test_command: None,
            f2p: None,
            fail_to_pass: None,
            pass_to_pass: None,
            runs: Phase::ALL
                .iter()
                .zip(counts)
                .map(|(phase, published)| RunCounts { phase: *phase, published, ours: None })
                .collect(),
            agrees: false,
            cause: None,
            causes: Vec::new(),
            image: ImageFacts::default(),
        }
    }
}

/// Compares one instance in `naming` (resolved per record when `Auto`); also returns the
/// re-derived record in that naming when our runs happened.
pub fn agree(input: Revalidated<'_>, naming: Naming) -> (InstanceAgreement, Option<Instance>) {
    let Revalidated { published, ours, logs } = input;
    let naming = naming.resolve(published);
    let meta = ours.swe_forge.as_ref();
    let rejections: Vec<String> = meta
        .map(|m| {
            m.rejections
                .iter()
                .map(|r| match r.detail.lines().next().filter(|l| !l.is_empty()) {
                    Some(line) => format!("{}: {line}", r.reason.as_str()),
                    None => r.reason.as_str().to_owned(),
                })
                .collect()
        })
        .unwrap_or_default();
    let language = ours.lang.clone().or_else(|| published.lang.clone()).unwrap_or_else(|| UNKNOWN_LANGUAGE.to_owned());
    let pub_view = View::published(published);
    let published_counts =
        [&published.run_result, &published.test_patch_result, &published.fix_patch_result].map(Counts::of);
    let mut row = InstanceAgreement {
        instance_id: published.instance_id.clone(),
        repo: format!("{}/{}", published.org, published.repo),
        language,
        naming,
        outcome: Outcome::NotRun,
        status: ours.status(),
        rejections,
        test_command: meta.and_then(|m| m.test_command.clone()),
        f2p: None,
        fail_to_pass: None,
        pass_to_pass: None,
        runs: Phase::ALL
            .iter()
            .zip(published_counts)
            .map(|(phase, published)| RunCounts { phase: *phase, published, ours: None })
            .collect(),
        agrees: false,
        cause: None,
        causes: Vec::new(),
        image: ImageFacts { image: meta.and_then(|m| m.image.clone()), ..ImageFacts::default() },
    };
    let ran = meta.is_some_and(|m| Phase::ALL.iter().all(|p| m.runs.iter().any(|r| r.phase == *p)));
    let Some(logs) = logs.filter(|_| ran) else {
        let first = meta.into_iter().flat_map(|m| &m.rejections).find_map(|r| Cause::of_rejection(r).map(|c| (c, r)));
        let (cause, example) = match first {
            Some((c, r)) => (c, r.detail.lines().next().unwrap_or_default().to_owned()),
            None => (Cause::Infrastructure, "no runs were recorded".to_owned()),
        };
        row.cause = Some(cause);
        row.causes = vec![CauseCount { cause, tests: 0, examples: vec![example] }];
        return (row, None);
    };
    let flaky_ids: BTreeSet<String> = meta.map(|m| m.flaky.keys().cloned().collect()).unwrap_or_default();
    let our_view = View::ours(logs, naming, &flaky_ids);
    row.outcome = Outcome::Compared;
    for (rc, r) in row.runs.iter_mut().zip(our_view.results()) {
        rc.ours = Some(Counts::of(&r));
    }
    let f2p = ListComparison::new(pub_view.categories.f2p.keys(), our_view.categories.f2p.keys());
    let fixed = ListComparison::new(pub_view.categories.fixed.keys(), our_view.categories.fixed.keys());
    let p2p = ListComparison::new(pub_view.categories.p2p.keys(), our_view.categories.p2p.keys());
    row.agrees = fixed.exact && p2p.exact;
    let mut differing: Vec<&str> = f2p.differing().chain(fixed.differing()).chain(p2p.differing()).collect();
    differing.sort_unstable();
    differing.dedup();
    let evidence = Evidence {
        timed_out: meta.is_some_and(|m| m.runs.iter().any(|r| r.timed_out)),
        missing_submodule: meta.is_some_and(|m| Warning::MissingSubmodule.on(&m.warnings)),
        missing_extra_source: meta.is_some_and(|m| Warning::MissingExtraSource.on(&m.warnings)),
        build_failed: [build_failed(&logs.run), build_failed(&logs.test), build_failed(&logs.fix)],
        stopped_early: [0, 1, 2].map(|i| {
            let published = pub_view.phases[i].len();
            published > 0 && our_view.phases[i].len() * 2 < published
        }),
        published_empty: [0, 1, 2].map(|i| pub_view.phases[i].is_empty() && !our_view.phases[i].is_empty()),
        truncated: [Phase::Run, Phase::Test, Phase::Fix].map(|p| {
            let labels = meta.and_then(|m| m.labels.as_ref());
            labels.and_then(|l| l.truncated.iter().find(|t| t.phase == p)).map(|t| t.cause)
        }),
        container_failed: container_failed(&pub_view, logs, naming),
        flaky: View::names_of(logs, naming, &flaky_ids),
        timed_out_tests: View::names_of(logs, naming, &timed_out_ids(logs)),
    };
    row.causes = classify_tests(differing, &pub_view, &our_view, &evidence);
    row.cause = row.causes.first().map(|c| c.cause);
    row.f2p = Some(f2p);
    row.fail_to_pass = Some(fixed);
    row.pass_to_pass = Some(p2p);
    let record = rederive(ours, &our_view);
    (row, Some(record))
}

/// Canonical ids of the tests the test framework's own timeout killed in any of our runs.
fn timed_out_ids(logs: &PhaseLogs) -> BTreeSet<String> {
    [&logs.run, &logs.test, &logs.fix].iter().flat_map(|l| l.timed_out.iter().cloned()).collect()
}

/// Names (in `naming`) of our tests whose container, the part of the canonical id before `::`,
/// is a name the published side reports as FAIL in some run.
fn container_failed(published: &View, logs: &PhaseLogs, naming: Naming) -> BTreeSet<String> {
    let failed: BTreeSet<&str> = published
        .phases
        .iter()
        .flat_map(|p| p.iter().filter(|(_, s)| **s == TestStatus::Fail).map(|(n, _)| n.as_str()))
        .collect();
    let mut out = BTreeSet::new();
    for log in [&logs.run, &logs.test, &logs.fix] {
        for id in log.tests.keys() {
            let Some((container, _)) = id.split_once("::") else { continue };
            if !failed.contains(container) {
                continue;
            }
            match naming {
                Naming::Canonical => out.insert(id.clone()),
                Naming::Msb | Naming::Auto => log.msb_names.get(id).is_some_and(|n| out.insert(n.clone())),
            };
        }
    }
    out
}

/// Counts over a group of instances.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Tally {
    /// Instances in the group.
    pub instances: usize,
    /// Instances whose image was built.
    pub images_built: usize,
    /// Instances whose three runs happened and were compared.
    pub compared: usize,
    /// Compared instances with the strict f2p list exact.
    pub exact_f2p: usize,
    /// Compared instances with FAIL_TO_PASS exact.
    pub exact_fail_to_pass: usize,
    /// Compared instances with PASS_TO_PASS exact.
    pub exact_pass_to_pass: usize,
    /// Compared instances with both exact.
    pub exact_both: usize,
    /// Mean Jaccard of FAIL_TO_PASS over compared instances.
    pub mean_jaccard_fail_to_pass: f64,
    /// Mean Jaccard of PASS_TO_PASS over compared instances.
    pub mean_jaccard_pass_to_pass: f64,
    /// Instances by their main cause (instances that agree are not counted).
    pub causes: BTreeMap<Cause, usize>,
}

impl Tally {
    /// Tallies `rows`.
    pub fn of<'a>(rows: impl IntoIterator<Item = &'a InstanceAgreement>) -> Tally {
        let mut t = Tally::default();
        let (mut jf, mut jp) = (0.0, 0.0);
        for r in rows {
            t.instances += 1;
            t.images_built += usize::from(r.image.image.is_some());
            if let Some(c) = r.cause {
                *t.causes.entry(c).or_default() += 1;
            }
            let (Some(f2p), Some(fixed), Some(p2p)) = (&r.f2p, &r.fail_to_pass, &r.pass_to_pass) else { continue };
            t.compared += 1;
            t.exact_f2p += usize::from(f2p.exact);
            t.exact_fail_to_pass += usize::from(fixed.exact);
            t.exact_pass_to_pass += usize::from(p2p.exact);
            t.exact_both += usize::from(fixed.exact && p2p.exact);
            jf += fixed.jaccard;
            jp += p2p.jaccard;
        }
        if t.compared > 0 {
            t.mean_jaccard_fail_to_pass = jf / t.compared as f64;
            t.mean_jaccard_pass_to_pass = jp / t.compared as f64;
        }
        t
    }
}

/// The agreement of a set of instances under one profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgreementReport {
    /// The profile the instances were run with.
    pub profile: String,
    /// The naming the profile compares in.
    pub naming: Naming,
    /// Test commands per language or recipe as the profile sets them (for the report's reader).
    #[serde(default)]
    pub commands: BTreeMap<String, String>,
    /// One row per instance, in input order.
    pub instances: Vec<InstanceAgreement>,
    /// Every instance.
    pub overall: Tally,
    /// Per language.
    pub by_language: BTreeMap<String, Tally>,
    /// Per `org/repo`.
    pub by_repo: BTreeMap<String, Tally>,
}

impl AgreementReport {
    /// A report over `instances` with its tallies. An instance whose language is unknown (it never
    /// ran, and the published record names none) takes the language another instance of its
    /// repository ran in.
    pub fn new(profile: &str, naming: Naming, mut instances: Vec<InstanceAgreement>) -> AgreementReport {
        let known: BTreeMap<String, String> = instances
            .iter()
            .filter(|r| r.language != UNKNOWN_LANGUAGE)
            .map(|r| (r.repo.clone(), r.language.clone()))
            .collect();
        for r in instances.iter_mut().filter(|r| r.language == UNKNOWN_LANGUAGE) {
            if let Some(l) = known.get(&r.repo) {
                r.language.clone_from(l);
            }
        }
        let group = |key: &dyn Fn(&InstanceAgreement) -> String| {
            let mut groups: BTreeMap<String, Vec<&InstanceAgreement>> = BTreeMap::new();
            for r in &instances {
                groups.entry(key(r)).or_default().push(r);
            }
            groups.into_iter().map(|(k, rows)| (k, Tally::of(rows))).collect::<BTreeMap<_, _>>()
        };
        let by_language = group(&|r| r.language.clone());
        let by_repo = group(&|r| r.repo.clone());
        AgreementReport {
            profile: profile.to_owned(),
            naming,
            commands: BTreeMap::new(),
            overall: Tally::of(&instances),
            instances,
            by_language,
            by_repo,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use swe_forge_core::{ForgeMeta, PhaseRun, Rejection, TestStatus, Transition};

    use super::*;
    use crate::tests::{log, record};

    fn ran(mut inst: Instance) -> Instance {
        let mut meta = ForgeMeta::new(ValidationStatus::Accepted);
        // Built from JSON so that fields added to PhaseRun later keep their defaults.
        meta.runs = Phase::ALL
            .iter()
            .map(|p| {
                serde_json::from_value::<PhaseRun>(serde_json::json!({
                    "phase": p, "exit_code": 0, "duration_ms": 1, "timed_out": false,
                    "log_sha256": "", "log_bytes": 0, "tests": 1
                }))
                .unwrap()
            })
            .collect();
        meta.image = Some("swe-forge/o__r:pr-1-x".into());
        inst.swe_forge = Some(meta);
        inst.lang = Some("go".into());
        inst
    }

    #[test]
    fn an_instance_is_compared_in_msb_naming_and_rederived() {
        use TestStatus::{Fail, None, Pass};
        let t = |run, test, fix| Transition { run, test, fix };
        let mut published = record("o", "r", 1);
        published.f2p_tests = BTreeMap::from([("TestNew".to_owned(), t(None, Fail, Pass))]);
        published.fixed_tests = published.f2p_tests.clone();
        published.p2p_tests = BTreeMap::from([("TestOld".to_owned(), t(Pass, Pass, Pass))]);
        published.fix_patch_result.passed_tests = vec!["TestNew".into(), "TestOld".into()];
        let ours = ran(record("o", "r", 1));
        let logs = PhaseLogs {
            run: log(&[("p::TestOld", "TestOld", Pass)]),
            test: log(&[("p::TestOld", "TestOld", Pass), ("p::TestNew", "TestNew", Fail)]),
            fix: log(&[("p::TestOld", "TestOld", Pass), ("p::TestNew", "TestNew", Pass)]),
        };
        let (row, rederived) =
            agree(Revalidated { published: &published, ours: &ours, logs: Some(&logs) }, Naming::Auto);
        assert_eq!(row.naming, Naming::Msb);
        assert!(row.agrees && row.cause.is_none(), "{row:?}");
        assert_eq!(row.runs[2].ours, Some(Counts { passed: 2, failed: 0, skipped: 0 }));
        assert_eq!(row.runs[2].published.passed, 2);
        let rederived = rederived.unwrap();
        assert_eq!(rederived.f2p_tests, published.f2p_tests);
        assert_eq!(rederived.fix_patch_result.passed_tests, ["TestNew", "TestOld"]);

        // Fail-fast on the published side: TestOld had no result in its test run.
        published.p2p_tests.clear();
        published.n2p_tests = BTreeMap::from([("TestOld".to_owned(), t(Pass, None, Pass))]);
        published.fixed_tests.extend(published.n2p_tests.clone());
        let (row, _) = agree(Revalidated { published: &published, ours: &ours, logs: Some(&logs) }, Naming::Msb);
        assert!(!row.agrees);
        assert!(row.f2p.as_ref().unwrap().exact, "strict f2p still agrees");
        assert_eq!(row.fail_to_pass.as_ref().unwrap().only_published, ["TestOld"]);
        assert_eq!(row.cause, Some(Cause::DifferentTestCommand));

        let report = AgreementReport::new("msb", Naming::Msb, vec![row]);
        assert_eq!(report.overall.compared, 1);
        assert_eq!(report.overall.exact_f2p, 1);
        assert_eq!(report.overall.exact_both, 0);
        assert_eq!(report.overall.mean_jaccard_fail_to_pass, 0.5);
        assert_eq!(report.by_language["go"].causes[&Cause::DifferentTestCommand], 1);
        assert_eq!(report.by_repo["o/r"].instances, 1);

        // An instance of the same repository that never ran is counted under its language.
        let mut unrun = InstanceAgreement::pending(&record("o", "r", 2), Naming::Msb);
        assert_eq!(unrun.language, "unknown");
        let other = InstanceAgreement::pending(&record("x", "y", 3), Naming::Msb);
        unrun.outcome = Outcome::NotRun;
        let report = AgreementReport::new("msb", Naming::Msb, vec![report.instances[0].clone(), unrun, other]);
        assert_eq!(report.by_language["go"].instances, 2);
        assert_eq!(report.by_language["unknown"].instances, 1, "no instance of x/y ran");
    }

    #[test]
    fn tests_killed_by_go_tests_own_timeout_are_put_down_to_the_timeout() {
        use TestStatus::Pass;
        use swe_forge_logparse::{Framework, MsbNaming, parse};
        let t = |run, test, fix| Transition { run, test, fix };
        // grpc-go PR 3201's shape: the `test` package hangs in `Test/CZSocketGetSecurityValueTLS`
        // in every run of ours and go test kills it after 10 minutes; `TestFlake` in another
        // package just ends differently (steadily: the environment).
        let log = parse(
            Framework::GoTestVerbose,
            b"=== RUN   Test\n=== RUN   Test/CZSocketGetSecurityValueTLS\n\
              panic: test timed out after 10m0s\n\trunning tests:\n\t\tTest (10m0s)\n\
              \t\tTest/CZSocketGetSecurityValueTLS (9m53s)\n\ngoroutine 1234 [running]:\n\
              FAIL\tgoogle.golang.org/grpc/test\t600.055s\n\
              === RUN   TestFlake\n--- FAIL: TestFlake (0.00s)\nFAIL\tgoogle.golang.org/grpc/other\t0.1s\n",
        );
        assert_eq!(log.timed_out.len(), 2, "{log:?}");
        // grpc-go's handler names a subtest by its parent, as the validator's parse says.
        let mut log = log;
        log.name_go_subtests(Framework::GoTestVerbose, MsbNaming::builtin().unwrap().go_subtests("grpc", "grpc-go"));
        let logs = PhaseLogs { run: log.clone(), test: log.clone(), fix: log };
        let mut published = record("grpc", "grpc-go", 3201);
        published.p2p_tests =
            BTreeMap::from([("Test".to_owned(), t(Pass, Pass, Pass)), ("TestFlake".to_owned(), t(Pass, Pass, Pass))]);
        for r in [&mut published.run_result, &mut published.test_patch_result, &mut published.fix_patch_result] {
            r.passed_tests = vec!["Test".into(), "TestFlake".into()];
        }
        let ours = ran(record("grpc", "grpc-go", 3201));
        let (row, _) = agree(Revalidated { published: &published, ours: &ours, logs: Some(&logs) }, Naming::Msb);
        assert!(!row.agrees);
        let causes: Vec<(Cause, Vec<String>)> = row.causes.iter().map(|c| (c.cause, c.examples.clone())).collect();
        assert_eq!(
            causes,
            [(Cause::Environment, vec!["TestFlake".to_owned()]), (Cause::Timeout, vec!["Test".to_owned()])],
            "{row:?}"
        );
        // In canonical naming (a swe-forge record on the published side) the killed ids count.
        let hung = "google.golang.org/grpc/test::Test/CZSocketGetSecurityValueTLS";
        published.p2p_tests = BTreeMap::from([(hung.to_owned(), t(Pass, Pass, Pass))]);
        for r in [&mut published.run_result, &mut published.test_patch_result, &mut published.fix_patch_result] {
            r.passed_tests = vec![hung.into()];
        }
        let (row, _) = agree(Revalidated { published: &published, ours: &ours, logs: Some(&logs) }, Naming::Canonical);
        let causes: Vec<(Cause, Vec<String>)> = row.causes.iter().map(|c| (c.cause, c.examples.clone())).collect();
        assert_eq!(causes, [(Cause::Timeout, vec![hung.to_owned()])], "{row:?}");
    }

    #[test]
    fn a_pending_instance_counts_but_is_not_compared() {
        let mut published = record("o", "r", 3);
        published.run_result.passed_tests = vec!["a".into()];
        let row = InstanceAgreement::pending(&published, Naming::Auto);
        assert_eq!((row.outcome, row.naming, row.cause), (Outcome::Pending, Naming::Msb, Option::None));
        assert_eq!(row.runs[0].published.passed, 1);
        let t = Tally::of([&row]);
        assert_eq!((t.instances, t.compared, t.causes.len()), (1, 0, 0));
    }

    #[test]
    fn an_instance_that_did_not_run_gets_its_rejection_as_cause() {
        let published = record("o", "r", 2);
        let mut ours = record("o", "r", 2);
        let mut meta = ForgeMeta::new(ValidationStatus::Rejected);
        meta.rejections =
            vec![Rejection::new(swe_forge_core::RejectReason::TestPatchDoesNotApply, "error: patch failed\nmore")];
        ours.swe_forge = Some(meta);
        let (row, rederived) = agree(Revalidated { published: &published, ours: &ours, logs: None }, Naming::Msb);
        assert!(rederived.is_none());
        assert_eq!(row.outcome, Outcome::NotRun);
        assert_eq!(row.cause, Some(Cause::PatchDoesNotApply));
        assert_eq!(row.rejections, ["test_patch_does_not_apply: error: patch failed"]);
        assert_eq!(row.causes[0].examples, ["error: patch failed"]);
        let t = Tally::of([&row]);
        assert_eq!((t.instances, t.compared, t.images_built), (1, 0, 0));
    }
}
