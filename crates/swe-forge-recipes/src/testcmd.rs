//! The test command an instance runs: the script the project's CI runs preferred over a
//! developer's `test` script, and, under the strict label rule, fail-fast switched off so that
//! an early stop never decides a label. Each change is said in words for the provenance.

use swe_forge_git::SourceRepo;

/// npm script names that projects give the test run of their CI, most specific first.
const CI_SCRIPTS: [&str; 5] = ["test-ci", "test:ci", "ci:test", "test_ci", "ci"];

/// Test runners a CI script must invoke (directly or through another script) to be taken.
const RUNNERS: [&str; 9] = ["mocha", "jest", "vitest", "karma", "ava", "tap", "jasmine", "node --test", "nyc"];

/// Whether `command` is the plain run of the project's own `test` script (`npm test`, `yarn
/// test`, ...), with no arguments of its own.
fn runs_test_script(command: &str) -> bool {
    let c = command.trim();
    ["npm test", "npm run test", "npm run-script test", "yarn test", "yarn run test", "pnpm test", "pnpm run test"]
        .contains(&c)
}

/// The npm script the project's CI runs its tests with, instead of `test`, when `command` runs
/// the `test` script: a script named for CI (`test-ci`, `test:ci`, ...) or the one a CI
/// workflow runs (`npm run X` in `.github/workflows/*.yml`, `.travis.yml`, ...), if it invokes a
/// test runner. Returns the new command and where it came from.
pub fn ci_test_command(repo: &SourceRepo, sha: &str, command: &str) -> Option<(String, String)> {
    if !runs_test_script(command) {
        return None;
    }
    let package: serde_json::Value = serde_json::from_slice(&repo.file_at(sha, "package.json")?).ok()?;
    let scripts = package.get("scripts")?.as_object()?;
    let runs_tests = |name: &str| {
        let text = scripts.get(name).and_then(|v| v.as_str()).unwrap_or_default();
        RUNNERS.iter().any(|r| text.contains(r))
            || text
                .split_whitespace()
                .any(|w| scripts.get(w).and_then(|v| v.as_str()).is_some_and(|t| RUNNERS.iter().any(|r| t.contains(r))))
    };
    let tool = command.split_whitespace().next().unwrap_or("npm");
    let run = |name: &str| if tool == "yarn" { format!("yarn run {name}") } else { format!("{tool} run {name}") };
    // A script a CI configuration runs.
    let ci_files: Vec<String> = repo
        .paths_at(sha)
        .ok()?
        .into_iter()
        .filter(|p| {
            (p.starts_with(".github/workflows/") && (p.ends_with(".yml") || p.ends_with(".yaml")))
                || matches!(
                    p.as_str(),
                    ".travis.yml" | ".circleci/config.yml" | "appveyor.yml" | ".gitlab-ci.yml" | "azure-pipelines.yml"
                )
        })
        .collect();
    for file in &ci_files {
        let Some(text) = repo.file_at(sha, file) else { continue };
        for line in String::from_utf8_lossy(&text).lines() {
            for name in scripts_run_by(line) {
                if name != "test" && scripts.contains_key(&name) && runs_tests(&name) {
                    return Some((run(&name), format!("package.json scripts.{name}, which {file} runs")));
                }
            }
        }
    }
    CI_SCRIPTS
        .iter()
        .find(|n| scripts.contains_key(**n) && runs_tests(n))
        .map(|n| (run(n), format!("package.json scripts.{n}, the project's CI test script")))
}

/// The npm scripts a line of CI configuration runs: `npm run X`, `npm run-script X`, `yarn X`,
/// `yarn run X`, `pnpm X`, `pnpm run X`.
fn scripts_run_by(line: &str) -> Vec<String> {
    let words: Vec<&str> = line
        .split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ';' | '&' | '|'))
        .filter(|w| !w.is_empty())
        .collect();
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let next = |k: usize| words.get(i + k).copied().unwrap_or_default();
        let name = match *w {
            "npm" if matches!(next(1), "run" | "run-script") => next(2),
            "yarn" | "pnpm" if next(1) == "run" => next(2),
            "yarn" | "pnpm" => next(1),
            _ => continue,
        };
        if !name.is_empty() && !name.starts_with('-') {
            out.push(name.to_owned());
        }
    }
    out
}

/// `command` with the fail-fast of the runners it calls switched off, and what was changed:
/// `go test` without `-failfast`, `cargo test --no-fail-fast`, Maven `-fae`, ctest without
/// `--stop-on-failure`, mocha, jest and vitest without `--bail` / `-b`. Other commands are
/// returned as they are. (Scripts and configuration files the command reads are handled in the
/// container: [`NO_FAIL_FAST_JS`].)
pub fn no_fail_fast(command: &str) -> (String, Vec<String>) {
    let mut notes = Vec::new();
    let mut out = String::new();
    let mut rest = command;
    // Segments between shell operators, the operators kept as they are.
    while !rest.is_empty() {
        let cut = ["&&", "||", ";", "|", "\n"].iter().filter_map(|op| rest.find(op).map(|i| (i, op.len()))).min();
        let (seg, op, tail) = match cut {
            Some((i, n)) => (&rest[..i], &rest[i..i + n], &rest[i + n..]),
            None => (rest, "", ""),
        };
        out.push_str(&segment(seg, &mut notes));
        out.push_str(op);
        rest = tail;
    }
    (out, notes)
}

fn segment(seg: &str, notes: &mut Vec<String>) -> String {
    let drop_words = |seg: &str, bad: &dyn Fn(&str) -> bool, notes: &mut Vec<String>, what: &str| {
        let mut dropped = Vec::new();
        let kept: Vec<&str> = seg
            .split(' ')
            .filter(|w| {
                let b = bad(w);
                if b {
                    dropped.push(w.to_string());
                }
                !b
            })
            .collect();
        if !dropped.is_empty() {
            notes.push(format!("{what}: {} removed", dropped.join(" ")));
        }
        kept.join(" ")
    };
    let words: Vec<&str> = seg.split_whitespace().collect();
    let has = |a: &str, b: &str| words.windows(2).any(|w| w[0] == a && w[1] == b);
    if has("go", "test") {
        return drop_words(seg, &|w| matches!(w, "-failfast" | "--failfast" | "-failfast=true"), notes, "go test");
    }
    if words.iter().any(|w| *w == "ctest" || w.ends_with("/ctest")) {
        return drop_words(seg, &|w| w == "--stop-on-failure", notes, "ctest");
    }
    if has("cargo", "test") && !words.contains(&"--no-fail-fast") {
        notes.push("cargo test: --no-fail-fast added".into());
        return seg.replacen("cargo test", "cargo test --no-fail-fast", 1);
    }
    if words.iter().any(|w| *w == "mvn" || w.ends_with("/mvn") || *w == "./mvnw")
        && !words.iter().any(|w| matches!(*w, "-fae" | "--fail-at-end" | "-fn" | "--fail-never"))
    {
        let mvn =
            words.iter().find(|w| **w == "mvn" || w.ends_with("/mvn") || **w == "./mvnw").copied().unwrap_or("mvn");
        notes.push("mvn: -fae added".into());
        return seg.replacen(mvn, &format!("{mvn} -fae"), 1);
    }
    if words.iter().any(|w| w.contains("mocha") || w.contains("jest") || w.contains("vitest")) {
        return drop_words(seg, &|w| w == "--bail" || w == "-b" || w.starts_with("--bail="), notes, "test runner");
    }
    seg.to_owned()
}

/// A Node program, run in the container before the test command under the strict rule, that
/// switches off the fail-fast of a JavaScript project's own scripts and configuration:
/// `--bail`/`-b` of mocha, jest and vitest in package.json scripts, `&&` between two test-runner
/// commands (the second would not run when the first fails), mocha's `bail` in `.mocharc.*`,
/// `test/mocha.opts` and package.json, jest's `bail` in package.json and `jest.config.*`. It
/// prints a line for each change (`swe-forge: fail-fast off: ...`) and changes nothing else.
pub const NO_FAIL_FAST_JS: &str = include_str!("../recipes/no-fail-fast.js");

/// The shell step that runs [`NO_FAIL_FAST_JS`] when the project has a package.json and node.
pub fn no_fail_fast_js_step() -> String {
    format!(
        "if [ -f package.json ] && command -v node >/dev/null 2>&1; then node - <<'SWE_FORGE_NO_FAIL_FAST'\n{NO_FAIL_FAST_JS}SWE_FORGE_NO_FAIL_FAST\nfi"
    )
}

/// The mocha options of the project's own `test` script carried into the recipe's mocha command
/// (`npx mocha --reporter spec`): a project whose script is `nyc mocha --require @babel/register
/// --reporter dot` loads its sources through Babel, and without `--require` every run stopped at
/// `SyntaxError: Cannot use import statement outside a module`. The mocha call of `scripts.test`
/// (or of the one script it runs) keeps its options, spec paths and `VAR=value` words; its
/// reporter, `--bail` and `--watch` are dropped. Returns the command and where it came from; None
/// when `command` is not the recipe's mocha command or the script adds nothing.
pub fn mocha_options(package_json: &[u8], command: &str) -> Option<(String, String)> {
    const BASE: &str = "npx mocha --reporter spec";
    if command.trim() != BASE {
        return None;
    }
    let package: serde_json::Value = serde_json::from_slice(package_json).ok()?;
    let scripts = package.get("scripts")?.as_object()?;
    let script = |name: &str| scripts.get(name).and_then(|v| v.as_str()).map(str::to_owned);
    script("test")?;
    // `npm run test:unit` and the like: the first script the `test` script runs, at any depth,
    // that calls mocha.
    let (name, text) = script_chain(scripts, "test").into_iter().find(|(_, t)| mocha_segment(t).is_some())?;
    let segment = mocha_segment(&text)?;
    let words: Vec<&str> = segment.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "mocha" || w.ends_with("/mocha") || w.ends_with("/_mocha"))?;
    let env: Vec<&str> = words[..at].iter().copied().filter(|w| w.contains('=') && !w.starts_with('-')).collect();
    let mut kept = Vec::new();
    let mut rest = words[at + 1..].iter().copied();
    while let Some(w) = rest.next() {
        match w {
            "--reporter" | "-R" | "--reporter-options" | "-O" => {
                rest.next();
            }
            "--bail" | "-b" | "--watch" | "-w" => {}
            _ if w.starts_with("--reporter=") || w.starts_with("--reporter-options=") => {}
            _ => kept.push(w),
        }
    }
    if kept.is_empty() && env.is_empty() {
        return None;
    }
    let mut out = env.join(" ");
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(BASE);
    for w in kept {
        out.push(' ');
        out.push_str(w);
    }
    Some((out, format!("the mocha options of package.json scripts.{name}")))
}

/// The scripts `name` runs, itself first, each followed by those it runs in the order it runs
/// them (`npm run X`, `npm run-script X`, `yarn run X`, `yarn X`, `pnpm run X`, `npm test`), each
/// once, at most six levels deep: `(name, text)`.
pub fn script_chain(scripts: &serde_json::Map<String, serde_json::Value>, name: &str) -> Vec<(String, String)> {
    fn walk(
        scripts: &serde_json::Map<String, serde_json::Value>,
        name: &str,
        depth: usize,
        out: &mut Vec<(String, String)>,
    ) {
        let Some(text) = scripts.get(name).and_then(|v| v.as_str()) else { return };
        if depth > 6 || out.iter().any(|(n, _)| n == name) {
            return;
        }
        out.push((name.to_owned(), text.to_owned()));
        let words: Vec<&str> = text.split_whitespace().collect();
        for (i, w) in words.iter().enumerate() {
            let next = |k: usize| words.get(i + k).map(|s| s.trim_matches(['"', '\'', ';', ')']));
            let called = match (*w, next(1)) {
                ("npm" | "pnpm", Some("run" | "run-script")) | ("yarn", Some("run")) => next(2),
                ("npm" | "pnpm" | "yarn", Some("test" | "t")) => Some("test"),
                ("yarn", Some(s)) if scripts.contains_key(s) => Some(s),
                _ => None,
            };
            if let Some(c) = called {
                walk(scripts, c, depth + 1, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(scripts, name, 0, &mut out);
    out
}

/// Words of a script's name, or first words of its text, that lint, format, type-check or report
/// rather than build what the tests load.
const NOT_BUILDS: [&str; 22] = [
    "lint",
    "eslint",
    "jshint",
    "jscs",
    "prettier",
    "format",
    "fmt",
    "tslint",
    "xo",
    "standard",
    "tsc",
    "tsd",
    "typecheck",
    "types",
    "flow",
    "size",
    "doc",
    "coverage",
    "check",
    "audit",
    "codecov",
    "coveralls",
];

/// What a project's test script runs before its test runner: a script of package.json, run with
/// `npm run`, or a command of the script's own text (`grunt build && vitest run`), run with the
/// project's `node_modules/.bin` on the path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreRunner {
    /// A script's name.
    Script(String),
    /// A command, as the script writes it.
    Command(String),
}

impl std::fmt::Display for PreRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PreRunner::Script(s) => write!(f, "`npm run {s}`"),
            PreRunner::Command(c) => write!(f, "`{c}`"),
        }
    }
}

/// The commands of a script's text before the first one that calls a test runner, without calls
/// of other scripts (`npm run x`: [`script_chain`] follows those), linters, formatters and type
/// checks ([`NOT_BUILDS`]; `tsc` builds unless `--noEmit`), and commands that only set the scene
/// (`echo`, `rm`, `mkdir`, `cd`, `cross-env` alone).
fn own_commands_before_runner(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for seg in text.split("&&").flat_map(|s| s.split(';')).map(str::trim).filter(|s| !s.is_empty()) {
        if calls_runner(seg) {
            break;
        }
        let words: Vec<&str> = seg.split_whitespace().collect();
        let first = words[0].rsplit('/').next().unwrap_or(words[0]).to_ascii_lowercase();
        let script_call = matches!(first.as_str(), "npm" | "pnpm" | "yarn" | "npx" | "run-s" | "run-p" | "npm-run-all");
        let scene = matches!(
            first.as_str(),
            "echo" | "rm" | "rimraf" | "mkdir" | "cd" | "true" | "export" | "set" | "cross-env"
        );
        let type_check = first == "tsc" && words.contains(&"--noEmit");
        let lints = first != "tsc" && NOT_BUILDS.iter().any(|b| first.contains(b));
        if !(script_call || scene || type_check || lints || seg.contains('|')) {
            out.push(seg.to_owned());
        }
    }
    out
}

/// What the project runs before its test runner, which the recipe's own runner command (`npx
/// mocha`) would skip: the scripts `pretest` runs (npm runs it before `test`; itself when it runs
/// no other script) and those the `test` script runs before the script that leads to a runner,
/// each whole (a `build` that runs `build:browser` then `build:node` runs as `build`), going down
/// only along the way to the runner, without linters, formatters and type checks
/// ([`NOT_BUILDS`]): validator.js's `build` (its tests load the built `index.js`), ajv's `build`
/// (compiled templates) and `json-tests` (generated specs); and the commands of the script that
/// calls the runner before its call (`grunt build && vitest run`: the tests load `dist/`). In
/// order, each once.
pub fn pre_runner_steps(package: &serde_json::Value) -> Vec<PreRunner> {
    let Some(scripts) = package.get("scripts").and_then(|s| s.as_object()) else { return Vec::new() };
    let not_build = |name: &str| {
        let first = scripts.get(name).and_then(|v| v.as_str()).and_then(|t| t.split_whitespace().next());
        [Some(name), first].into_iter().flatten().any(|w| NOT_BUILDS.iter().any(|b| w.to_ascii_lowercase().contains(b)))
    };
    let leads_to_runner = |name: &str| script_chain(scripts, name).iter().any(|(_, t)| calls_runner(t));
    let children = |name: &str| -> Vec<String> {
        let text = scripts.get(name).and_then(|v| v.as_str()).unwrap_or_default();
        let mut called: Vec<String> = Vec::new();
        for (n, _) in script_chain(scripts, name).into_iter().skip(1) {
            if text.contains(n.as_str()) && !called.contains(&n) {
                called.push(n);
            }
        }
        called
    };
    let script = |n: String| PreRunner::Script(n);
    let mut out: Vec<PreRunner> = Vec::new();
    if scripts.contains_key("pretest") {
        let called = children("pretest");
        if called.is_empty() {
            out.push(script("pretest".to_owned()));
        }
        out.extend(called.into_iter().filter(|c| !not_build(c)).map(script));
    }
    // Down the way to the runner: at each level the scripts before the one that leads to it.
    let mut at = "test".to_owned();
    for _ in 0..6 {
        let text = scripts.get(&at).and_then(|v| v.as_str()).unwrap_or_default();
        if calls_runner(text) {
            out.extend(own_commands_before_runner(text).into_iter().map(PreRunner::Command));
            break;
        }
        let called = children(&at);
        let Some(next) = called.iter().position(|c| leads_to_runner(c)) else { break };
        out.extend(called[..next].iter().filter(|c| !not_build(c)).cloned().map(script));
        at = called[next].clone();
    }
    let mut unique = Vec::new();
    for n in out {
        if !unique.contains(&n) {
            unique.push(n);
        }
    }
    unique
}

/// Test runners no recipe drives: a project whose scripts call one runs its own `test` script.
const OTHER_RUNNERS: &[&str] =
    &["qunit", "qunit-cli", "tape", "ava", "tap", "nodeunit", "jasmine", "jasmine-node", "lab", "vows", "buster-test"];

/// Whether the `test` script of `package`, or a script it runs ([`script_chain`]), calls a test
/// runner of [`OTHER_RUNNERS`] as a command.
pub fn calls_other_runner(package: &serde_json::Value) -> bool {
    let Some(scripts) = package.get("scripts").and_then(|s| s.as_object()) else { return false };
    script_chain(scripts, "test").iter().any(|(_, text)| {
        text.split(['&', '|', ';']).any(|seg| {
            let words: Vec<&str> = seg.split_whitespace().skip_while(|w| w.contains('=') || *w == "npx").collect();
            words.first().is_some_and(|w| OTHER_RUNNERS.contains(&w.rsplit('/').next().unwrap_or(w)))
        })
    })
}

/// Whether a script's text calls a test runner itself.
fn calls_runner(text: &str) -> bool {
    text.split(['&', '|', ';']).any(|seg| {
        seg.split_whitespace()
            .any(|w| matches!(w.rsplit('/').next().unwrap_or(w), "mocha" | "_mocha" | "jest" | "vitest" | "karma"))
    })
}

/// The pre-test step that runs [`pre_runner_steps`] before each test run: scripts with `npm run`,
/// commands with the project's `node_modules/.bin` first on the path (a step that fails is said
/// and the run goes on: the tests then fail as they would).
pub fn pre_runner_step(steps: &[PreRunner]) -> Option<String> {
    if steps.is_empty() {
        return None;
    }
    let one = |s: &PreRunner| match s {
        PreRunner::Script(n) => {
            let q = crate::shell_quote(n);
            format!(
                "echo \"swe-forge: npm run {n} (the test script runs it before its runner)\"; npm run {q} || echo \"swe-forge: npm run {n} failed\""
            )
        }
        PreRunner::Command(c) => {
            let q = crate::shell_quote(c);
            format!(
                "echo {}; PATH=\"$PWD/node_modules/.bin:$PATH\" sh -c {q} || echo {}",
                crate::shell_quote(&format!("swe-forge: {c} (the test script runs it before its runner)")),
                crate::shell_quote(&format!("swe-forge: {c} failed")),
            )
        }
    };
    Some(steps.iter().map(one).collect::<Vec<_>>().join("; "))
}

/// The test runner the `test` script of `package` starts first, following the scripts it runs
/// ([`script_chain`]): `mocha` (also `_mocha`), `jest`, `vitest` or `karma`, by the order of
/// their calls (a chain that lints, runs mocha with coverage, then karma on a browser bundle
/// is a mocha suite). None when no script of the chain calls one.
pub fn first_runner(package: &serde_json::Value) -> Option<&'static str> {
    let scripts = package.get("scripts")?.as_object()?;
    let chain = script_chain(scripts, "test");
    chain.iter().find_map(|(_, text)| {
        text.split(['&', '|', ';']).find_map(|seg| {
            seg.split_whitespace().find_map(|w| {
                let w = w.rsplit('/').next().unwrap_or(w);
                match w {
                    "mocha" | "_mocha" => Some("mocha"),
                    "jest" => Some("jest"),
                    "vitest" => Some("vitest"),
                    "karma" => Some("karma"),
                    _ => None,
                }
            })
        })
    })
}

/// The part of a shell command line that calls mocha, between shell operators.
fn mocha_segment(text: &str) -> Option<&str> {
    text.split(['&', '|', ';'])
        .find(|seg| seg.split_whitespace().any(|w| w == "mocha" || w.ends_with("/mocha") || w.ends_with("/_mocha")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_projects_mocha_options_join_the_recipes_command() {
        let pkg = |test: &str, more: &str| format!(r#"{{"scripts": {{"test": "{test}"{more}}}}}"#).into_bytes();
        let base = "npx mocha --reporter spec";
        let got = |p: &[u8]| mocha_options(p, base).map(|(c, _)| c);
        assert_eq!(
            got(&pkg("nyc mocha --require @babel/register --reporter dot", "")).as_deref(),
            Some("npx mocha --reporter spec --require @babel/register")
        );
        assert_eq!(
            got(&pkg("npm run lint && cross-env NODE_ENV=test mocha -R min --bail test/**/*.spec.js", "")).as_deref(),
            Some("NODE_ENV=test npx mocha --reporter spec test/**/*.spec.js")
        );
        // One level of `npm run`.
        let chained = pkg("npm run test:unit", r#", "test:unit": "mocha --recursive --timeout 5000""#);
        assert_eq!(got(&chained).as_deref(), Some("npx mocha --reporter spec --recursive --timeout 5000"));
        // Two levels down, through coverage: ajv's `test` lints, then `test-cov` runs `nyc npm run test-spec`.
        let deep = pkg(
            "npm run eslint && npm run test-cov && npm run test-browser",
            r#", "eslint": "eslint lib", "test-cov": "nyc npm run test-spec", "test-spec": "mocha spec/*.spec.js -R spec", "test-browser": "karma start""#,
        );
        assert_eq!(got(&deep).as_deref(), Some("npx mocha --reporter spec spec/*.spec.js"));
        // Nothing to add, another runner, or another command: no change.
        assert_eq!(got(&pkg("mocha", "")), None);
        assert_eq!(got(&pkg("jest --coverage", "")), None);
        assert_eq!(mocha_options(&pkg("mocha -r x", ""), "npm test"), None);
    }

    #[test]
    fn the_first_runner_is_found_through_the_scripts_the_test_script_runs() {
        let first = |json: &str| first_runner(&serde_json::from_str(json).unwrap());
        let ajv = r#"{"scripts": {"test": "npm run jshint && npm run test-cov && npm run test-browser",
            "jshint": "jshint lib", "test-cov": "istanbul cover node_modules/mocha/bin/_mocha -- spec",
            "test-browser": "npm run bundle && karma start"}}"#;
        assert_eq!(first(ajv), Some("mocha"));
        assert_eq!(first(r#"{"scripts": {"test": "karma start config/karma.js"}}"#), Some("karma"));
        assert_eq!(first(r#"{"scripts": {"test": "yarn unit", "unit": "jest --ci"}}"#), Some("jest"));
        assert_eq!(first(r#"{"scripts": {"test": "npm run a", "a": "npm run test"}}"#), None, "a cycle ends");
        assert_eq!(first(r#"{"scripts": {"test": "node test.js"}}"#), None);
    }

    #[test]
    fn the_scripts_before_the_runner_are_its_builds_without_linters() {
        let pre = |json: &str| -> Vec<String> {
            pre_runner_steps(&serde_json::from_str(json).unwrap())
                .into_iter()
                .map(|s| match s {
                    PreRunner::Script(n) => n,
                    PreRunner::Command(c) => format!("$ {c}"),
                })
                .collect()
        };
        let ajv = r#"{"scripts": {"test": "npm run jshint && npm run test-ts && npm run build && npm run test-cov && npm run test-browser",
            "jshint": "jshint lib", "test-ts": "tsc --noEmit x.ts", "build": "node scripts/compile-dots.js",
            "test-cov": "nyc npm run test-spec", "test-spec": "mocha spec", "test-browser": "npm run bundle && karma start",
            "bundle": "node bundle.js"}}"#;
        assert_eq!(pre(ajv), ["build"]);
        let generated = r#"{"scripts": {"test": "npm run json-tests && npm run prettier:check && npm run test-cov",
            "json-tests": "node scripts/jsontests", "prettier:check": "prettier --check .", "test-cov": "nyc npm run test-spec",
            "test-spec": "mocha -r ts-node/register spec"}}"#;
        assert_eq!(pre(generated), ["json-tests"]);
        let validator = r#"{"scripts": {"pretest": "npm run build && npm run lint", "build": "run-p build:*",
            "lint": "eslint src test", "test": "nyc mocha --require @babel/register"}}"#;
        assert_eq!(pre(validator), ["build"]);
        // A build that runs other scripts runs whole (its own commands too: `build:browser` makes the
        // file the tests load, then runs `minify`).
        let whole = r#"{"scripts": {"pretest": "npm run build && npm run lint", "build": "npm run build:browser && npm run build:node",
            "build:browser": "node build-browser && npm run minify", "minify": "uglifyjs validator.js -o validator.min.js",
            "build:node": "babel src -d .", "lint": "eslint src", "test": "mocha"}}"#;
        assert_eq!(pre(whole), ["build"]);
        assert_eq!(pre(r#"{"scripts": {"pretest": "node gen.js", "test": "mocha"}}"#), ["pretest"]);
        assert!(pre(r#"{"scripts": {"test": "mocha"}}"#).is_empty());
        // Commands of the script that calls the runner, before its call: a build, not a linter,
        // a type check or a scene-setting command.
        let grunt = r#"{"scripts": {"test": "grunt build && vitest run --project node", "build": "grunt build"}}"#;
        assert_eq!(pre(grunt), ["$ grunt build"]);
        let tsc = r#"{"scripts": {"test": "rimraf dist && eslint . && tsc --noEmit && tsc -p . && mocha dist/test"}}"#;
        assert_eq!(pre(tsc), ["$ tsc -p ."]);
        let steps = pre_runner_steps(&serde_json::from_str(ajv).unwrap());
        let step = pre_runner_step(&steps).unwrap();
        assert!(step.contains("npm run build ||"), "{step}");
        let step = pre_runner_step(&[PreRunner::Command("grunt build".into())]).unwrap();
        assert!(step.contains("PATH=\"$PWD/node_modules/.bin:$PATH\" sh -c \"grunt build\" ||"), "{step}");
    }

    #[test]
    fn fail_fast_is_switched_off_in_commands() {
        let off = |c: &str| no_fail_fast(c).0;
        assert_eq!(off("go test -failfast -json ./..."), "go test -json ./...");
        assert_eq!(off("cargo test"), "cargo test --no-fail-fast");
        assert_eq!(off("cargo test --no-fail-fast"), "cargo test --no-fail-fast");
        assert_eq!(
            off("cmake --build build; cd build && ctest --stop-on-failure"),
            "cmake --build build; cd build && ctest"
        );
        assert_eq!(off("mvn -B test"), "mvn -fae -B test");
        assert_eq!(off("mvn -B -fae test"), "mvn -B -fae test");
        assert_eq!(off("npx mocha --bail --reporter spec"), "npx mocha --reporter spec");
        assert_eq!(off("tsc -b && npx mocha -b"), "tsc -b && npx mocha");
        assert_eq!(off("npm test"), "npm test");
        let (_, notes) = no_fail_fast("go test -failfast ./... && cargo test");
        assert_eq!(notes, ["go test: -failfast removed", "cargo test: --no-fail-fast added"]);
    }

    #[test]
    fn the_javascript_step_switches_off_bail_in_scripts_and_configuration() {
        // The step as the phase script runs it, with the machine's node.
        let dir = tempfile::tempdir().unwrap();
        let write = |p: &str, t: &str| {
            let path = dir.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, t).unwrap();
        };
        write(
            "package.json",
            r#"{"scripts": {"test": "mocha --bail test/ && jest -b", "build": "tsc -b", "ci": "npm test"}, "jest": {"bail": 1}}"#,
        );
        write(".mocharc.yml", "spec: test\nbail: true\n");
        write("test/mocha.opts", "--require should\n--bail\n");
        write("jest.config.js", "module.exports = { bail: 2, verbose: true };\n");
        let out = std::process::Command::new("bash")
            .args(["-c", &no_fail_fast_js_step()])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let log = String::from_utf8_lossy(&out.stdout);
        assert_eq!(log.matches("swe-forge: fail-fast off: ").count(), 5, "{log}");
        let read = |p: &str| std::fs::read_to_string(dir.path().join(p)).unwrap();
        let pkg: serde_json::Value = serde_json::from_str(&read("package.json")).unwrap();
        assert_eq!(pkg["scripts"]["test"], "mocha test/; jest", "{pkg}");
        assert_eq!(pkg["scripts"]["build"], "tsc -b", "other tools keep their flags");
        assert_eq!(pkg["jest"], serde_json::json!({}));
        assert_eq!(read(".mocharc.yml"), "spec: test\nbail: false\n");
        assert_eq!(read("test/mocha.opts"), "--require should\n\n");
        assert_eq!(read("jest.config.js"), "module.exports = { bail: 0, verbose: true };\n");
        // Nothing to change: nothing written, nothing said.
        let again = std::process::Command::new("bash")
            .args(["-c", &no_fail_fast_js_step()])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&again.stdout), "");
    }

    #[test]
    fn ci_lines_name_the_scripts_they_run() {
        assert_eq!(scripts_run_by("      - run: npm run test-ci"), ["test-ci"]);
        assert_eq!(scripts_run_by("script: yarn test:coverage && yarn lint"), ["test:coverage", "lint"]);
        assert_eq!(scripts_run_by("  - npm ci"), Vec::<String>::new());
        assert!(runs_test_script("npm test"));
        assert!(runs_test_script("yarn test"));
        assert!(!runs_test_script("npm test -- --reporter console"), "arguments of its own: taken as it is");
        assert!(!runs_test_script("npx mocha"));
    }
}
