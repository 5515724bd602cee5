//! Canary tests: two tests an evaluation run adds whose names carry a per-run random nonce the
//! model's patch cannot know, one that must pass and one that must fail. They are written into
//! the repository inside the container after the model's patch and the test patch are applied,
//! next to a test of the test patch (the package directory of a Go test, the crate of a Rust
//! test, the folder of a jest or vitest test file). A run whose results do not report the pass
//! canary as PASS and the fail canary as FAIL did not report its tests' own outcomes (a patch
//! that prints `--- PASS:` lines and exits, a runner or reporter that rewrites results): the
//! evaluation is `tampered`. The canaries' names are taken out of the statuses before grading.
//!
//! Only evaluation runs get canaries; validation's scripts never do. Where no canary can be
//! placed (another language or runner, no test file to put it next to), the evaluation says so
//! in a warning and grades as before.

use std::hash::{BuildHasher, Hasher};

use swe_forge_core::{PatchShape, PhaseStatuses, TestStatus, is_test_path};
use swe_forge_logparse::Framework;

use crate::grading::grade::Parsers;

/// The test runners a canary can be written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Runner {
    /// `go test`: a `zz_swe_forge_canary_<nonce>_test.go` in a test's package directory, with
    /// that test file's package clause.
    Go,
    /// `cargo test`: an integration test `tests/swe_forge_canary_<nonce>.rs` of the crate (the
    /// nearest `Cargo.toml` with a `[package]`) holding a test of the test patch.
    Cargo,
    /// jest: a test file named like its neighbour (`swe_forge_canary_<nonce>.test.ts`).
    Jest,
    /// vitest: as jest, importing `test` from `vitest`.
    Vitest,
}

/// The canaries of one evaluation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Canary {
    runner: Runner,
    nonce: String,
    /// Files of the test patch a canary may go next to, the likeliest first.
    next_to: Vec<String>,
}

/// What the runs said of the canaries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Check {
    /// The pass canary passed and the fail canary failed in every run.
    Sound,
    /// The script could not place them (its reason): nothing to conclude.
    NotPlaced(String),
    /// A run did not report them as they are: what it reported.
    Wrong(String),
}

/// Why a run gets no canaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NoCanary {
    /// No canary is written for tests this parser reads (its name).
    #[error("no canary for the {0} parser")]
    Parser(&'static str),
    /// The test patch touches no file a canary could go next to.
    #[error("no test file of the test patch to put it next to")]
    NoTestFile,
}

impl Canary {
    /// The canaries for a run parsed by `parsers`, next to the files of `test_patch`; the ones
    /// whose names appear in a FAIL_TO_PASS id (`f2p`) first. `Err` says why there are none.
    pub(crate) fn plan<'a>(
        parsers: &Parsers,
        test_patch: &str,
        f2p: impl IntoIterator<Item = &'a String>,
    ) -> Result<Canary, NoCanary> {
        let runner = match (parsers.log, parsers.results) {
            (Framework::GoTestJson | Framework::GoTestVerbose, _) => Runner::Go,
            (Framework::CargoLibtest | Framework::LibtestJson, _) => Runner::Cargo,
            (Framework::Jest | Framework::JestJson, _) | (_, Some(Framework::JestJson)) => Runner::Jest,
            (Framework::Vitest | Framework::VitestJson, _) | (_, Some(Framework::VitestJson)) => Runner::Vitest,
            (log, _) => return Err(NoCanary::Parser(log.name())),
        };
        let fits = |path: &str| match runner {
            Runner::Go => path.ends_with("_test.go"),
            Runner::Cargo => path.ends_with(".rs"),
            Runner::Jest | Runner::Vitest => js_canary_name(path, "x").is_some(),
        };
        let mut next_to: Vec<String> = PatchShape::of(test_patch).files.into_iter().filter(|p| fits(p)).collect();
        if next_to.is_empty() {
            return Err(NoCanary::NoTestFile);
        }
        // A file whose name (or a Go package's directory) a FAIL_TO_PASS id names goes first.
        let f2p: Vec<&String> = f2p.into_iter().collect();
        let named = |path: &String| {
            let token = match runner {
                Runner::Go => path.rsplit_once('/').map_or("", |(d, _)| d.rsplit('/').next().unwrap_or(d)),
                _ => path.rsplit('/').next().unwrap_or(path).split('.').next().unwrap_or_default(),
            };
            !token.is_empty() && f2p.iter().any(|id| id.contains(token))
        };
        next_to.sort_by_key(|p| !named(p));
        Ok(Canary { runner, nonce: nonce(), next_to })
    }

    /// The part of the canaries' names that marks them: `canary_<pass|fail>_<nonce>`.
    fn token(&self, which: &str) -> String {
        format!("canary_{which}_{}", self.nonce)
    }

    /// The bash steps that write the canaries, run in the repository after the test patch is
    /// applied: the first place that works, else a `swe-forge: canary <nonce> not placed: …` line.
    pub(crate) fn script(&self) -> String {
        let (pass, fail, n) = (self.token("pass"), self.token("fail"), &self.nonce);
        let mut s = String::from("swe_forge_canary=\n");
        let why = match self.runner {
            Runner::Go => {
                for f in &self.next_to {
                    let dir = f.rsplit_once('/').map_or(".", |(d, _)| d);
                    s.push_str(&format!(
                        "if [ -z \"$swe_forge_canary\" ] && [ -f {f} ]; then swe_forge_pkg=$(sed -n 's/^package[[:space:]][[:space:]]*\\([A-Za-z_][A-Za-z0-9_]*\\).*/\\1/p' {f} | head -n 1); \
if [ -n \"$swe_forge_pkg\" ]; then printf '%s\\n' \"package $swe_forge_pkg\" '' {go} > {d}/zz_swe_forge_canary_{n}_test.go && swe_forge_canary=1; fi; fi\n",
                        f = quote(f),
                        d = quote(dir),
                        go = go_canary(&pass, &fail, n).iter().map(|l| quote(l)).collect::<Vec<_>>().join(" "),
                    ));
                }
                "no package clause in the test files of the test patch"
            }
            Runner::Cargo => {
                // The crate is the nearest folder whose Cargo.toml has a [package]; its base
                // version decides (a patch cannot switch the canary off with `autotests = false`).
                s.push_str(&format!(
                    "swe_forge_crate() {{ d=$(dirname -- \"$1\"); while :; do if [ \"$d\" = . ]; then m=Cargo.toml; else m=\"$d/Cargo.toml\"; fi; \
if [ -f \"$m\" ]; then b=$(git show \"HEAD:$m\" 2>/dev/null || cat \"$m\"); if printf '%s\\n' \"$b\" | grep -q '^\\[package\\]'; then \
if printf '%s\\n' \"$b\" | grep -Eq '^[[:space:]]*autotests[[:space:]]*=[[:space:]]*false'; then echo \"swe-forge: canary {n} not placed: autotests = false in $m\"; return 1; fi; \
mkdir -p \"${{m%Cargo.toml}}tests\" && printf '%s\\n' '//! swe-forge canary.' '#![allow(warnings)]' '#[test]' 'fn {pass}() {{}}' '#[test]' 'fn {fail}() {{ panic!(\"swe-forge canary: this test must fail\") }}' > \"${{m%Cargo.toml}}tests/swe_forge_canary_{n}.rs\"; return; fi; fi; \
[ \"$d\" = . ] && return 1; d=$(dirname -- \"$d\"); done; }}\n"
                ));
                for f in &self.next_to {
                    s.push_str(&format!(
                        "if [ -z \"$swe_forge_canary\" ] && [ -f {f} ] && swe_forge_crate {f}; then swe_forge_canary=1; fi\n",
                        f = quote(f)
                    ));
                }
                "no crate with a [package] holds the test files of the test patch"
            }
            Runner::Jest | Runner::Vitest => {
                let import = if self.runner == Runner::Vitest { "import { test } from 'vitest';" } else { "" };
                for f in &self.next_to {
                    let Some(target) = js_canary_name(f, n) else { continue };
                    let ts = [".ts", ".tsx", ".mts", ".cts"].iter().any(|e| f.ends_with(e));
                    let export = if ts && self.runner == Runner::Jest { "export {};" } else { "" };
                    let dir = target.rsplit_once('/').map_or(".", |(d, _)| d);
                    s.push_str(&format!(
                        "if [ -z \"$swe_forge_canary\" ] && [ -f {f} ] && [ -d {d} ]; then printf '%s\\n' \"{import}\" \"test('{pass}', () => {{}});\" \"test('{fail}', () => {{ throw new Error('swe-forge canary: this test must fail'); }});\" \"{export}\" > {t} && swe_forge_canary=1; fi\n",
                        f = quote(f),
                        d = quote(dir),
                        t = quote(&target),
                    ));
                }
                "no folder of a test file of the test patch"
            }
        };
        s.push_str(&format!("[ -n \"$swe_forge_canary\" ] || echo 'swe-forge: canary {n} not placed: {why}'\n"));
        s
    }

    /// What the runs said of the canaries: `notes` are the script's `swe-forge: canary` lines of
    /// every run, `attempts` the canonical statuses of every run.
    pub(crate) fn check(&self, notes: &[String], attempts: &[PhaseStatuses]) -> Check {
        let prefix = format!("swe-forge: canary {} not placed: ", self.nonce);
        if let Some(why) = notes.iter().find_map(|l| l.strip_prefix(&prefix)) {
            return Check::NotPlaced(why.to_owned());
        }
        let (pass, fail) = (self.token("pass"), self.token("fail"));
        for (i, attempt) in attempts.iter().enumerate() {
            let seen = |token: &str| {
                attempt.iter().find(|(name, _)| name.contains(token)).map_or(TestStatus::None, |(_, s)| *s)
            };
            let (p, f) = (seen(&pass), seen(&fail));
            if p != TestStatus::Pass || f != TestStatus::Fail {
                return Check::Wrong(format!(
                    "run {i} reported the pass canary {} and the fail canary {} (expected PASS and FAIL)",
                    p.as_str(),
                    f.as_str()
                ));
            }
        }
        Check::Sound
    }

    /// `attempts` without the canaries.
    pub(crate) fn strip(&self, attempts: &mut [PhaseStatuses]) {
        for a in attempts {
            a.retain(|name, _| !name.contains(&self.nonce));
        }
    }
}

/// The Go canary file's lines after its package clause. Its `init()` runs after every `init()`
/// and package variable of the package's code (test files are compiled after the others), before
/// any test: it compares `os.Args` with the arguments the kernel started the test binary with
/// (`/proc/self/cmdline`), and the pass canary fails when they differ (code of the package
/// changed them: `-test.skip` appended, say). Imports are renamed so that no name of the package
/// collides with them.
fn go_canary(pass: &str, fail: &str, n: &str) -> Vec<String> {
    [
        "import (",
        "\tswe_forge_ioutil \"io/ioutil\"",
        "\tswe_forge_os \"os\"",
        "\tswe_forge_strings \"strings\"",
        "\tswe_forge_testing \"testing\"",
        ")",
        "",
        "var swe_forge_argv_N string",
        "",
        "func init() {",
        "\tb, err := swe_forge_ioutil.ReadFile(\"/proc/self/cmdline\")",
        "\tif err == nil && swe_forge_strings.Join(swe_forge_os.Args, \"\\x00\") != swe_forge_strings.TrimSuffix(string(b), \"\\x00\") {",
        "\t\tswe_forge_argv_N = swe_forge_strings.Join(swe_forge_os.Args, \" \")",
        "\t}",
        "}",
        "",
        "func Test_swe_forge_PASS(t *swe_forge_testing.T) {",
        "\tif swe_forge_argv_N != \"\" {",
        "\t\tt.Fatal(\"swe-forge canary: os.Args differs from the test binary's own arguments: \" + swe_forge_argv_N)",
        "\t}",
        "}",
        "",
        "func Test_swe_forge_FAIL(t *swe_forge_testing.T) { t.Fatal(\"swe-forge canary: this test must fail\") }",
    ]
    .iter()
    .map(|l| l.replace("PASS", pass).replace("FAIL", fail).replace("argv_N", &format!("argv_{n}")))
    .collect()
}

/// The canary file next to the JS/TS test file `path`, named the way it is: `x.test.ts` ->
/// `swe_forge_canary_<nonce>.test.ts`, `x.spec.js` -> `….spec.js`, `__tests__/x.js` ->
/// `__tests__/swe_forge_canary_<nonce>.js`; none for other files.
fn js_canary_name(path: &str, nonce: &str) -> Option<String> {
    const EXTS: &[&str] = &["js", "jsx", "ts", "tsx", "mjs", "cjs", "mts", "cts"];
    let (dir, file) = path.rsplit_once('/').map_or(("", path), |(d, f)| (d, f));
    let ext = file.rsplit_once('.').map(|(_, e)| e)?;
    if !EXTS.contains(&ext) || !is_test_path(path) {
        return None;
    }
    // From the marker (`.test.`, `.spec.`, or the `.` before `-spec.`: `.e2e-spec.ts`) on.
    let marker = [".test.", ".spec."].iter().filter_map(|m| file.rfind(m)).max().or_else(|| {
        let at = file.rfind("-spec.")?;
        file[..at].rfind('.')
    });
    let suffix = marker.map_or_else(|| format!(".{ext}"), |at| file[at..].to_owned());
    if matches!(file.split('.').next(), Some("test" | "tests" | "spec")) && suffix == format!(".{ext}") {
        return None; // `src/x/test.js`: the runner matches that one name
    }
    let name = format!("swe_forge_canary_{nonce}{suffix}");
    Some(if dir.is_empty() { name } else { format!("{dir}/{name}") })
}

/// `s` quoted for bash.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// 64 random bits as hex, from the standard library's randomly keyed hasher (seeded by the
/// operating system once per thread, stepped for every new state) and the clock.
fn nonce() -> String {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.write_u32(std::process::id());
    format!("{:016x}", h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsers(log: &str, results: Option<&str>) -> Parsers {
        Parsers::new(log.parse().unwrap(), results.map(|r| r.parse().unwrap()))
    }

    fn new_file(path: &str, body: &str) -> String {
        let lines: String = body.lines().map(|l| format!("+{l}\n")).collect();
        format!(
            "diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{} @@\n{lines}",
            body.lines().count()
        )
    }

    #[test]
    fn a_canary_goes_next_to_a_test_of_the_test_patch_in_its_runners_way() {
        let patch =
            [new_file("docs/x.md", "a"), new_file("pkg/b/b_test.go", "package b"), new_file("a_test.go", "x")].concat();
        let f2p = ["example.com/m/pkg/b::TestB".to_owned()];
        let c = Canary::plan(&parsers("go-test-json", None), &patch, &f2p).unwrap();
        assert_eq!(c.runner, Runner::Go);
        assert_eq!(c.next_to, ["pkg/b/b_test.go", "a_test.go"], "the FAIL_TO_PASS test's package first");
        assert_eq!(c.nonce.len(), 16);
        assert_ne!(c.nonce, Canary::plan(&parsers("go-test-json", None), &patch, &f2p).unwrap().nonce);
        let s = c.script();
        assert!(s.contains(&format!("> 'pkg/b'/zz_swe_forge_canary_{}_test.go", c.nonce)), "{s}");
        assert!(s.contains(&format!("func Test_swe_forge_canary_fail_{}(t *swe_forge_testing.T)", c.nonce)), "{s}");
        assert!(s.contains("/proc/self/cmdline"), "the pass canary checks os.Args: {s}");

        let rust = Canary::plan(&parsers("cargo-test", None), &new_file("tests/capacity.rs", "x"), &[]).unwrap();
        assert_eq!(rust.runner, Runner::Cargo);
        assert!(rust.script().contains(&format!("tests/swe_forge_canary_{}.rs", rust.nonce)));
        let jest = Canary::plan(&parsers("jest", Some("jest-json")), &new_file("test/d.test.ts", "x"), &[]).unwrap();
        assert!(jest.script().contains(&format!("'test/swe_forge_canary_{}.test.ts'", jest.nonce)));
        assert!(jest.script().contains("export {};"));
        let vitest = Canary::plan(&parsers("vitest", Some("vitest-json")), &new_file("a.spec.js", "x"), &[]).unwrap();
        assert!(vitest.script().contains("import { test } from 'vitest';"));

        let err = |p: &Parsers, patch: &str| Canary::plan(p, patch, &[]).unwrap_err();
        assert_eq!(
            err(&parsers("maven-surefire", None), &patch).to_string(),
            "no canary for the maven-surefire parser"
        );
        assert_eq!(err(&parsers("go-test-json", None), &new_file("x.md", "a")), NoCanary::NoTestFile);
        assert_eq!(NoCanary::NoTestFile.to_string(), "no test file of the test patch to put it next to");
    }

    #[test]
    fn js_canaries_are_named_like_their_neighbours() {
        assert_eq!(js_canary_name("test/duration.test.js", "n").as_deref(), Some("test/swe_forge_canary_n.test.js"));
        assert_eq!(js_canary_name("a.b.spec.tsx", "n").as_deref(), Some("swe_forge_canary_n.spec.tsx"));
        assert_eq!(js_canary_name("src/x.e2e-spec.ts", "n").as_deref(), Some("src/swe_forge_canary_n.e2e-spec.ts"));
        assert_eq!(js_canary_name("src/__tests__/x.js", "n").as_deref(), Some("src/__tests__/swe_forge_canary_n.js"));
        assert_eq!(js_canary_name("src/addDays/test.js", "n"), None);
        assert_eq!(js_canary_name("src/x.js", "n"), None);
        assert_eq!(js_canary_name("test/data.json", "n"), None);
    }

    #[test]
    fn runs_that_misreport_the_canaries_are_caught_and_the_canaries_stripped() {
        let c = Canary { runner: Runner::Go, nonce: "abc".into(), next_to: vec!["a_test.go".into()] };
        let run = |pass: TestStatus, fail: TestStatus| -> PhaseStatuses {
            [
                ("m::TestX".to_owned(), TestStatus::Pass),
                ("m::Test_swe_forge_canary_pass_abc".to_owned(), pass),
                ("m::Test_swe_forge_canary_fail_abc".to_owned(), fail),
            ]
            .into_iter()
            .filter(|(_, s)| *s != TestStatus::None)
            .collect()
        };
        assert_eq!(c.check(&[], &[run(TestStatus::Pass, TestStatus::Fail)]), Check::Sound);
        let forged = c.check(&[], &[run(TestStatus::Pass, TestStatus::Fail), run(TestStatus::Pass, TestStatus::Pass)]);
        assert_eq!(
            forged,
            Check::Wrong(
                "run 1 reported the pass canary PASS and the fail canary PASS (expected PASS and FAIL)".into()
            )
        );
        assert!(matches!(c.check(&[], &[run(TestStatus::None, TestStatus::None)]), Check::Wrong(_)));
        let notes = ["swe-forge: canary abc not placed: no package clause".to_owned()];
        assert_eq!(c.check(&notes, &[PhaseStatuses::new()]), Check::NotPlaced("no package clause".into()));
        // A note with another nonce (printed by the patch's code, say) is not this run's.
        let other = ["swe-forge: canary zzz not placed: forged".to_owned()];
        assert!(matches!(c.check(&other, &[PhaseStatuses::new()]), Check::Wrong(_)));
        let mut attempts = vec![run(TestStatus::Pass, TestStatus::Fail)];
        c.strip(&mut attempts);
        assert_eq!(attempts[0].keys().collect::<Vec<_>>(), ["m::TestX"]);
    }

    #[test]
    fn the_scripts_are_valid_bash() {
        let patch =
            [new_file("p/a_test.go", "package p"), new_file("tests/it's.rs", "x"), new_file("t/a.test.ts", "x")]
                .concat();
        for (log, results) in
            [("go-test-json", None), ("cargo-test", None), ("jest", Some("jest-json")), ("vitest", None)]
        {
            let c = Canary::plan(&parsers(log, results), &patch, &[]).unwrap();
            let ok = std::process::Command::new("bash").args(["-n", "-c", &c.script()]).status().unwrap();
            assert!(ok.success(), "{log}:\n{}", c.script());
        }
    }
}
