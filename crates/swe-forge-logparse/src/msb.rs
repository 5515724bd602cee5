//! Multi-SWE-bench granularity: the published records name tests the way each repository's
//! hand-written parser saw them (Java test classes, Go names with or without their last subtest
//! level, jest `file` and `file:title`, ctest targets, cargo `module::test`, automake scripts).
//! [`msb_rollup`] folds canonical results onto those names. Where the handlers of one language
//! name tests differently (Go subtests; ctest targets, which catchorg/Catch2's handler
//! lower-cases; jest and mocha titles, `msb_js.rs`), the rule of each repository is data (`pipelines/naming/msb.toml`, read by
//! [`MsbNaming`]: [`MsbNaming::repository`] gives a [`RepoNaming`]), applied to a parse with
//! [`ParsedLog::name_as`].

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use serde::Deserialize;
use swe_forge_core::TestStatus;

use crate::error::MsbNamingError;
use crate::msb_js::{JestNames, MochaJsonNames, MochaNames};
use crate::{Framework, ParsedLog, worst};

/// How a repository's Multi-SWE-bench Go handler names a subtest (its `get_base_name`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum GoSubtests {
    /// The name as go test prints it: `TestA/case` stays `TestA/case` (14 of the 19 Go handlers
    /// of multi-swe-bench 1.1.2, cli/cli among them, and every repository without a handler).
    #[default]
    Full,
    /// The name without its last `/` level: `TestA/case` is `TestA`, `Test/Group/case` is
    /// `Test/Group` (grpc-go, etcd, go-zero, gorm and gin).
    Base,
}

impl GoSubtests {
    /// The Multi-SWE-bench name of Go test `test` (`TestA/case`) under this rule.
    pub fn name(self, test: &str) -> &str {
        match self {
            GoSubtests::Full => test,
            GoSubtests::Base => test.rfind('/').map_or(test, |i| &test[..i]),
        }
    }
}

/// How a repository's Multi-SWE-bench C/C++ handler names a ctest target.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum CtestNames {
    /// The name as ctest prints it (`ApprovalTests`): every C/C++ handler but one, and every
    /// repository without a handler.
    #[default]
    AsPrinted,
    /// The name lower-cased (`approvaltests`): catchorg/Catch2's handler lower-cases each log
    /// line before it matches ctest's result lines.
    Lowercase,
}

impl CtestNames {
    /// The Multi-SWE-bench name of ctest target `test` under this rule.
    pub fn name(self, test: &str) -> String {
        match self {
            CtestNames::AsPrinted => test.to_owned(),
            CtestNames::Lowercase => test.to_lowercase(),
        }
    }
}

/// Every Multi-SWE-bench naming rule of one repository.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RepoNaming {
    /// How Go subtests are named.
    pub go_subtests: GoSubtests,
    /// How ctest targets are named.
    pub ctest: CtestNames,
    /// How jest tests are named.
    pub jest: JestNames,
    /// How mocha tests (spec reporter) are named.
    pub mocha: MochaNames,
    /// How tests of mocha's JSON reporter are named.
    pub mocha_json: MochaJsonNames,
}

/// Multi-SWE-bench naming rules that differ by repository, read from TOML
/// (`pipelines/naming/msb.toml` is built in: [`MsbNaming::builtin`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MsbNaming {
    /// `org/repo`, lowercased, of the repositories whose Go handler names subtests by their parent.
    go_base_name_repos: BTreeSet<String>,
    /// `org/repo`, lowercased, of the repositories whose handler lower-cases ctest targets.
    ctest_lowercase_repos: BTreeSet<String>,
    /// Lowercased `org/repo` to its jest rule, for the repositories that have one.
    jest: BTreeMap<String, JestNames>,
    /// Lowercased `org/repo` to its mocha rule.
    mocha: BTreeMap<String, MochaNames>,
    /// Lowercased `org/repo` to its mocha JSON rule.
    mocha_json: BTreeMap<String, MochaJsonNames>,
}

/// The file's shape; unknown keys are refused.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NamingFile {
    #[serde(default)]
    go: GoSection,
    #[serde(default)]
    ctest: CtestSection,
    #[serde(default)]
    jest: JestSection,
    #[serde(default)]
    mocha: MochaSection,
    #[serde(default)]
    mocha_json: MochaJsonSection,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct JestSection {
    #[serde(default)]
    leaf_title_repos: Vec<String>,
    #[serde(default)]
    full_title_repos: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct MochaSection {
    #[serde(default)]
    full_title_repos: Vec<String>,
    #[serde(default)]
    path_repos: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct MochaJsonSection {
    #[serde(default)]
    file_title_repos: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CtestSection {
    #[serde(default)]
    lowercase_repos: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct GoSection {
    #[serde(default)]
    base_name_repos: Vec<String>,
}

/// The built-in rules, parsed once.
static BUILTIN: LazyLock<Result<MsbNaming, MsbNamingError>> =
    LazyLock::new(|| MsbNaming::from_toml(include_str!("../../../pipelines/naming/msb.toml")));

impl MsbNaming {
    /// The rules of `pipelines/naming/msb.toml`, built into this crate (an error only if that
    /// file is invalid, which this crate's tests rule out).
    pub fn builtin() -> Result<&'static MsbNaming, MsbNamingError> {
        BUILTIN.as_ref().map_err(Clone::clone)
    }

    /// Reads rules from TOML text: `[go] base_name_repos`, `[ctest] lowercase_repos`, `[jest]
    /// leaf_title_repos` and `full_title_repos`, `[mocha] full_title_repos` and `path_repos`,
    /// `[mocha_json] file_title_repos`, each a list of `org/repo` names. Each must have one `/`
    /// between two non-empty parts without spaces, none may be listed twice in a list, nor in two
    /// lists of one table (case aside).
    pub fn from_toml(text: &str) -> Result<MsbNaming, MsbNamingError> {
        let file: NamingFile = toml::from_str(text).map_err(|e| MsbNamingError::Toml(e.to_string()))?;
        Ok(MsbNaming {
            go_base_name_repos: repositories(file.go.base_name_repos)?,
            ctest_lowercase_repos: repositories(file.ctest.lowercase_repos)?,
            jest: rules([
                (file.jest.leaf_title_repos, JestNames::Title),
                (file.jest.full_title_repos, JestNames::FullTitle),
            ])?,
            mocha: rules([
                (file.mocha.full_title_repos, MochaNames::FullTitle),
                (file.mocha.path_repos, MochaNames::Path),
            ])?,
            mocha_json: rules([(file.mocha_json.file_title_repos, MochaJsonNames::FileFullTitle)])?,
        })
    }

    /// Every naming rule of `org/repo`.
    pub fn repository(&self, org: &str, repo: &str) -> RepoNaming {
        let key = format!("{org}/{repo}").to_lowercase();
        RepoNaming {
            go_subtests: self.go_subtests(org, repo),
            ctest: if self.ctest_lowercase_repos.contains(&key) {
                CtestNames::Lowercase
            } else {
                CtestNames::AsPrinted
            },
            jest: self.jest.get(&key).copied().unwrap_or_default(),
            mocha: self.mocha.get(&key).copied().unwrap_or_default(),
            mocha_json: self.mocha_json.get(&key).copied().unwrap_or_default(),
        }
    }

    /// How the Multi-SWE-bench handler of `org/repo` names Go subtests.
    pub fn go_subtests(&self, org: &str, repo: &str) -> GoSubtests {
        let key = format!("{org}/{repo}").to_lowercase();
        if self.go_base_name_repos.contains(&key) { GoSubtests::Base } else { GoSubtests::Full }
    }

    /// The repositories (lowercased `org/repo`) whose Go subtests are named by their parent.
    pub fn go_base_name_repos(&self) -> impl Iterator<Item = &str> {
        self.go_base_name_repos.iter().map(String::as_str)
    }
}

/// The lists of one table, each with the rule its repositories follow: checked, lowercased, and
/// no repository in two lists.
fn rules<R: Copy, const N: usize>(lists: [(Vec<String>, R); N]) -> Result<BTreeMap<String, R>, MsbNamingError> {
    let mut out = BTreeMap::new();
    for (list, rule) in lists {
        for repo in repositories(list)? {
            if out.insert(repo.clone(), rule).is_some() {
                return Err(MsbNamingError::TwoRules(repo));
            }
        }
    }
    Ok(out)
}

/// A list of `org/repo` names, checked and lowercased.
fn repositories(list: Vec<String>) -> Result<BTreeSet<String>, MsbNamingError> {
    let mut out = BTreeSet::new();
    for repo in list {
        let valid = repo.split_once('/').is_some_and(|(org, name)| {
            !org.is_empty() && !name.is_empty() && !name.contains('/') && !repo.contains(char::is_whitespace)
        });
        if !valid {
            return Err(MsbNamingError::NotARepository(repo));
        }
        if !out.insert(repo.to_lowercase()) {
            return Err(MsbNamingError::Repeated(repo));
        }
    }
    Ok(out)
}

impl ParsedLog {
    /// Names the tests of a `framework` parse by every rule of `naming`: Go subtests
    /// ([`ParsedLog::name_go_subtests`]), ctest targets ([`ParsedLog::name_ctest_targets`]) and
    /// jest and mocha titles ([`ParsedLog::name_js_tests`]),
    /// with stable doctest ids ([`ParsedLog::stabilize_ids`]: a parse kept by an older build
    /// carries libtest's line-numbered ones).
    pub fn name_as(&mut self, framework: Framework, naming: RepoNaming) {
        self.stabilize_ids(framework);
        self.name_go_subtests(framework, naming.go_subtests);
        self.name_ctest_targets(framework, naming.ctest);
        self.name_js_tests(framework, naming.jest, naming.mocha, naming.mocha_json);
    }

    /// Names the ctest targets of a `framework` parse (`ctest`, `ctest-junit`) by `rule`, from
    /// their ids (the target as ctest printed it), so a kept parse written under another rule is
    /// renamed the same way. Other frameworks' names are left as they are.
    pub fn name_ctest_targets(&mut self, framework: Framework, rule: CtestNames) {
        if !matches!(framework, Framework::Ctest | Framework::CtestJunit) {
            return;
        }
        for (id, name) in &mut self.msb_names {
            let named = rule.name(id);
            if *name != named {
                *name = named;
            }
        }
    }

    /// Names the Go tests of a `framework` parse by `rule`, from their ids (`<package>::<test>`):
    /// every parse starts with [`GoSubtests::Full`], and a kept parse written under another rule
    /// is renamed the same way. Other frameworks' names are left as they are.
    pub fn name_go_subtests(&mut self, framework: Framework, rule: GoSubtests) {
        if !matches!(framework, Framework::GoTestJson | Framework::GoTestVerbose) {
            return;
        }
        for (id, name) in &mut self.msb_names {
            if let Some((_, test)) = id.split_once("::") {
                let named = rule.name(test);
                if name != named {
                    named.clone_into(name);
                }
            }
        }
    }
}

/// Statuses keyed by Multi-SWE-bench name: each name gets the worst status of the canonical
/// tests that map to it (FAIL over PASS over SKIP). So a Java class is FAIL when any of its
/// methods failed, PASS when none failed and at least one passed, SKIP when all were skipped,
/// as Multi-SWE-bench's Surefire parsers decide from the class's counts; a Go name shared by
/// two packages (or by subtests, under [`GoSubtests::Base`]), or a cargo path shared by two test
/// binaries, is FAIL when either failed, as Multi-SWE-bench's "a later FAIL removes an earlier
/// PASS" does. Tests Multi-SWE-bench cannot name (Rust doctests) are left out.
pub fn msb_rollup(parsed: &ParsedLog) -> BTreeMap<String, TestStatus> {
    let mut out: BTreeMap<String, TestStatus> = BTreeMap::new();
    for (id, &status) in &parsed.tests {
        let Some(name) = parsed.msb_names.get(id) else { continue };
        out.entry(name.clone()).and_modify(|s| *s = worst(*s, status)).or_insert(status);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;

    /// Go's nesting: `TestA` with two subtests, `TestB/x/deep` two levels down.
    const TESTS: [&str; 6] = ["TestA", "TestA/one", "TestA/two", "TestB", "TestB/x", "TestB/x/deep"];

    fn log(fw: Framework) -> String {
        match fw {
            Framework::GoTestJson => {
                let ev = |action: &str, test: &str| {
                    format!("{{\"Action\":\"{action}\",\"Package\":\"example.com/m\",\"Test\":\"{test}\"}}\n")
                };
                let mut out: String = TESTS.iter().map(|t| ev("run", t)).collect();
                out.extend(TESTS.iter().rev().map(|t| ev("pass", t)));
                out + "{\"Action\":\"pass\",\"Package\":\"example.com/m\"}\n"
            }
            _ => {
                let mut out: String = TESTS.iter().map(|t| format!("=== RUN   {t}\n")).collect();
                for t in TESTS {
                    out.push_str(&format!("{}--- PASS: {t} (0.00s)\n", "    ".repeat(t.matches('/').count())));
                }
                out + "ok  \texample.com/m\t0.01s\n"
            }
        }
    }

    #[test]
    fn the_built_in_rules_load_and_name_the_five_base_name_handlers() {
        let naming = MsbNaming::builtin().unwrap();
        assert_eq!(
            naming.go_base_name_repos().collect::<Vec<_>>(),
            ["etcd-io/etcd", "gin-gonic/gin", "go-gorm/gorm", "grpc/grpc-go", "zeromicro/go-zero"]
        );
        assert_eq!(naming.go_subtests("grpc", "grpc-go"), GoSubtests::Base);
        assert_eq!(naming.go_subtests("Go-Gorm", "GORM"), GoSubtests::Base, "case aside");
        assert_eq!(naming.go_subtests("cli", "cli"), GoSubtests::Full);
        assert_eq!(naming.go_subtests("forge-fixtures", "gostack"), GoSubtests::Full, "unlisted: full names");
    }

    #[test]
    fn full_names_by_default_base_names_for_listed_repositories() {
        for fw in [Framework::GoTestVerbose, Framework::GoTestJson] {
            let mut p = parse(fw, log(fw).as_bytes());
            let names = |p: &ParsedLog| msb_rollup(p).into_keys().collect::<Vec<_>>();
            assert_eq!(p.tests.len(), 6, "{fw}: {:?}", p.tests);
            assert_eq!(names(&p), TESTS, "{fw}: full subtest names, as cli/cli's handler names them");
            assert_eq!(p.msb_names["example.com/m::TestB/x/deep"], "TestB/x/deep");
            p.name_go_subtests(fw, GoSubtests::Base);
            assert_eq!(names(&p), ["TestA", "TestB", "TestB/x"], "{fw}: the last level dropped, as grpc-go's handler");
            assert_eq!(p.msb_names["example.com/m::TestA/one"], "TestA");
            let base = p.clone();
            p.name_go_subtests(fw, GoSubtests::Base);
            assert_eq!(p, base, "{fw}: applying a rule twice changes nothing");
            p.name_go_subtests(Framework::Jest, GoSubtests::Full);
            assert_eq!(p, base, "{fw}: the rule is only for Go parses");
            p.name_go_subtests(fw, GoSubtests::Full);
            assert_eq!(names(&p), TESTS, "{fw}: renamed back from the ids");
        }
    }

    #[test]
    fn catch2_s_ctest_targets_are_lower_cased_every_other_repository_s_as_printed() {
        let naming = MsbNaming::builtin().unwrap();
        let catch2 = naming.repository("catchorg", "Catch2");
        assert_eq!(catch2, RepoNaming { ctest: CtestNames::Lowercase, ..RepoNaming::default() });
        assert_eq!(naming.repository("CatchOrg", "catch2").ctest, CtestNames::Lowercase, "case aside");
        assert_eq!(naming.repository("fmtlib", "fmt"), RepoNaming::default());
        assert_eq!(naming.repository("grpc", "grpc-go").go_subtests, GoSubtests::Base);

        let log = "    Start 1: ApprovalTests\n1/3 Test #1: ApprovalTests ....................   Passed    0.50 sec\n    \
                   Start 2: RunTests\n2/3 Test #2: RunTests .........................***Failed    0.40 sec\n    \
                   Start 3: List::Tests::Output\n3/3 Test #3: List::Tests::Output ..............   Passed    0.01 sec\n";
        let mut p = parse(Framework::Ctest, log.as_bytes());
        let printed = p.clone();
        assert_eq!(
            msb_rollup(&p).into_keys().collect::<Vec<_>>(),
            ["ApprovalTests", "List::Tests::Output", "RunTests"]
        );
        p.name_as(Framework::Ctest, catch2);
        assert_eq!(
            msb_rollup(&p).into_iter().collect::<Vec<_>>(),
            [
                ("approvaltests".to_owned(), TestStatus::Pass),
                ("list::tests::output".to_owned(), TestStatus::Pass),
                ("runtests".to_owned(), TestStatus::Fail)
            ]
        );
        assert_eq!(p.tests, printed.tests, "canonical ids stay as ctest printed them");
        p.name_as(Framework::Jest, RepoNaming::default());
        assert_ne!(p, printed, "the rule is only for ctest parses");
        p.name_as(Framework::CtestJunit, RepoNaming::default());
        assert_eq!(p, printed, "renamed back from the ids");
    }

    #[test]
    fn ctest_results_the_handlers_do_not_match_have_no_multi_swe_bench_status() {
        // Every ctest handler matches `Passed` and `***Failed` lines only: a test whose
        // executable was not built, that crashed or timed out is absent from its results.
        let log = "Test project /b\n    Start 1: unit\nCould not find executable unit_bin\n\
                   1/5 Test #1: unit .............***Not Run   0.00 sec\n    Start 2: other\n\
                   2/5 Test #2: other ............   Passed    0.00 sec\n    Start 3: crash\n\
                   3/5 Test #3: crash ............***Exception: SegFault  0.01 sec\n    Start 4: slow\n\
                   4/5 Test #4: slow .............***Timeout  60.00 sec\n    Start 5: wrong\n\
                   5/5 Test #5: wrong ............***Failed    0.00 sec\n\n\
                   The following tests FAILED:\n\t  1 - unit (Not Run)\n\t  3 - crash (SEGFAULT)\n\
                   \t  4 - slow (Timeout)\n\t  5 - wrong (Failed)\n";
        let p = parse(Framework::Ctest, log.as_bytes());
        // `unit` did not run: absent here too.
        assert_eq!(p.tests.len(), 4, "{p:?}");
        assert!(!p.tests.contains_key("unit"), "{p:?}");
        assert!(p.tests.iter().filter(|(id, _)| *id != "other").all(|(_, s)| *s == TestStatus::Fail), "{p:?}");
        assert!(p.build_failed);
        assert_eq!(
            msb_rollup(&p).into_iter().collect::<Vec<_>>(),
            [("other".to_owned(), TestStatus::Pass), ("wrong".to_owned(), TestStatus::Fail)]
        );
    }

    #[test]
    fn rule_files_are_checked_when_loaded() {
        let ok =
            MsbNaming::from_toml("[go]\nbase_name_repos = [\"a/b\"]\n[ctest]\nlowercase_repos = [\"a/b\"]\n").unwrap();
        assert_eq!(
            ok.repository("a", "b"),
            RepoNaming { go_subtests: GoSubtests::Base, ctest: CtestNames::Lowercase, ..RepoNaming::default() }
        );
        let js = MsbNaming::from_toml(
            "[jest]\nleaf_title_repos = [\"a/b\"]\nfull_title_repos = [\"c/d\"]\n[mocha]\nfull_title_repos = [\"a/b\"]\n\
             path_repos = [\"c/d\"]\n[mocha_json]\nfile_title_repos = [\"C/D\"]\n",
        )
        .unwrap();
        assert_eq!(
            js.repository("A", "B"),
            RepoNaming { jest: JestNames::Title, mocha: MochaNames::FullTitle, ..RepoNaming::default() }
        );
        assert_eq!(
            js.repository("c", "d"),
            RepoNaming {
                jest: JestNames::FullTitle,
                mocha: MochaNames::Path,
                mocha_json: MochaJsonNames::FileFullTitle,
                ..RepoNaming::default()
            }
        );
        assert_eq!(MsbNaming::from_toml("").unwrap(), MsbNaming::default());
        for (text, want) in [
            ("[go]\nbase_name_repos = [\"grpc-go\"]", "`grpc-go` is not `org/repo`"),
            ("[go]\nbase_name_repos = [\"a/b/c\"]", "`a/b/c` is not `org/repo`"),
            ("[go]\nbase_name_repos = [\"a /b\"]", "`a /b` is not `org/repo`"),
            ("[go]\nbase_name_repos = [\"a/b\", \"A/B\"]", "`A/B` is listed twice"),
            ("[ctest]\nlowercase_repos = [\"Catch2\"]", "`Catch2` is not `org/repo`"),
            ("[ctest]\nlowercase = [\"a/b\"]", "unknown field `lowercase`"),
            ("[go]\nbase_names = [\"a/b\"]", "unknown field `base_names`"),
            ("[java]\n", "unknown field `java`"),
            ("[jest]\nleaf_title_repos = [\"a/b\"]\nfull_title_repos = [\"A/b\"]", "`a/b` has two rules in one table"),
            ("[mocha]\nfull_title_repos = [\"mongoose\"]", "`mongoose` is not `org/repo`"),
            ("[mocha]\nleaf_title_repos = [\"a/b\"]", "unknown field `leaf_title_repos`"),
            ("[mocha_json]\nfile_title_repos = [\"a/b\", \"a/b\"]", "`a/b` is listed twice"),
        ] {
            let err = MsbNaming::from_toml(text).unwrap_err().to_string();
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}
