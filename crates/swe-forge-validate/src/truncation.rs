//! What a run's log says about a phase that reported fewer tests than the others: the cause
//! ([`TruncationCause`]) and the line that shows it; and about a run that reported none (the
//! runner found none, a build error: `suite_never_ran`'s evidence). Read from the log as the run
//! ends (and again from a kept log by regrade), graded with the statuses in `grading/grade.rs`.

use swe_forge_core::{TestStatus, TruncationCause, exit_code_status};

/// What one run tells about an early stop.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFacts {
    /// The run was killed by its timeout.
    pub timed_out: bool,
    /// The test command's exit code (None when killed).
    pub exit_code: Option<i64>,
    /// A cause the log or the command shows, with the line or flag that shows it.
    pub sign: Option<(TruncationCause, String)>,
    /// Lines (at most five) that show a test reaching for the network.
    pub network: Vec<String>,
    /// The line in which the test runner says it found or ran no test, if any.
    pub no_tests: Option<String>,
    /// The first line that shows the code or its tests did not build (a compiler's error, a
    /// missing header, CMake's or the linker's error), whether or not the build stopped on it:
    /// the evidence of a suite that never ran.
    pub build_error: Option<String>,
}

impl RunFacts {
    /// Reads `log` of a run of `command`.
    pub fn of(log: &[u8], exit_code: Option<i64>, timed_out: bool, command: &str) -> RunFacts {
        let text = String::from_utf8_lossy(log);
        RunFacts {
            timed_out,
            exit_code,
            sign: sign(&text, command),
            network: network_lines(&text),
            no_tests: swe_forge_logparse::no_tests_ran(log),
            build_error: build_error(&text),
        }
    }

    /// What this run shows of why it reported no test: the runner's line that it found none, the
    /// run's timeout, a compile failure, a build error line, a crash; else nothing.
    pub fn why_no_test(&self) -> Option<String> {
        if self.no_tests.is_some() {
            return self.no_tests.clone();
        }
        let (cause, evidence) = self.cause();
        match cause {
            TruncationCause::Timeout | TruncationCause::CompileFailure => Some(evidence),
            _ => self.build_error.clone().or_else(|| (cause == TruncationCause::Crash).then_some(evidence)),
        }
    }

    /// The status of [`swe_forge_core::ALL_TESTS`] when this run is graded by its exit code: none
    /// when its log says no test ran (ctest's `No tests were found!!!` exits 0), else the exit
    /// code's.
    pub fn exit_code_status(&self) -> TestStatus {
        if self.no_tests.is_some() { TestStatus::None } else { exit_code_status(self.exit_code) }
    }

    /// The cause of a truncation of this run, with its evidence.
    pub fn cause(&self) -> (TruncationCause, String) {
        if self.timed_out {
            return (TruncationCause::Timeout, "killed by the run's timeout".into());
        }
        if let Some(s) = &self.sign {
            return s.clone();
        }
        match self.exit_code {
            None => (TruncationCause::Crash, "the test command was killed".into()),
            // 128 + the signal's number; 128 itself is git's and bash's own failure, no signal.
            Some(c) if c > 128 => (TruncationCause::Crash, format!("the test command exited with {c} (a signal)")),
            _ => (TruncationCause::Unknown, String::new()),
        }
    }
}

/// Lines that show code or tests did not compile (or a test file did not load).
const COMPILE_SIGNS: [&str; 11] = [
    "COMPILATION ERROR",
    "Compilation failure",
    "[build failed]",
    "[setup failed]",
    "error: could not compile",
    "Test suite failed to run",
    "Error: Cannot find module",
    "SyntaxError: ",
    "ERR_MODULE_NOT_FOUND",
    "ninja: build stopped",
    "make: *** ",
];

/// Lines that show a build error of C, C++ or their build files (a missing header is the
/// compiler's `fatal error`) or of a linker, even where no `make` or `ninja` stop follows.
const BUILD_ERROR_SIGNS: [&str; 6] = [
    ": fatal error: ",
    ": error: ",
    "CMake Error",
    "undefined reference to ",
    "cannot find -l",
    "No rule to make target",
];

/// The first line (trimmed, at most 300 characters) of `log` that shows a build error: a compile
/// sign, else a [`BUILD_ERROR_SIGNS`] line.
fn build_error(log: &str) -> Option<String> {
    let first = |signs: &[&str]| log.lines().find(|l| signs.iter().any(|s| has(l, s)));
    first(&COMPILE_SIGNS[..9]).or_else(|| first(&BUILD_ERROR_SIGNS)).map(|l| l.trim().chars().take(300).collect())
}

/// Lines that show the runner stopped at a failure on purpose.
const FAIL_FAST_SIGNS: [&str; 2] = ["Bail out!", "Test run was interrupted"];

/// Lines that show the runner died (Surefire's forked JVM out of heap: `[ERROR] Java heap space`,
/// `There was an error in the forked process`).
const CRASH_SIGNS: [&str; 8] = [
    "Segmentation fault",
    "core dumped",
    "JavaScript heap out of memory",
    "fatal error: all goroutines",
    "panic: ",
    "Aborted",
    "java.lang.OutOfMemoryError",
    "There was an error in the forked process",
];

/// Whether `hay` (a test log, or one of its lines) holds `s`. Logs are searched for a few dozen
/// phrases each, line by line: this is `memchr`'s search, fast in debug builds too.
pub(crate) fn has(hay: impl AsRef<[u8]>, s: &str) -> bool {
    memchr::memmem::find(hay.as_ref(), s.as_bytes()).is_some()
}

/// The cause the log or the command shows, first by kind: compile failure, fail-fast, crash.
fn sign(log: &str, command: &str) -> Option<(TruncationCause, String)> {
    let line_with = |signs: &[&str]| {
        log.lines().find(|l| signs.iter().any(|s| has(l, s))).map(|l| l.trim().chars().take(300).collect::<String>())
    };
    // A C or C++ compiler's error (a missing header is a `fatal error`) only counts when make or
    // ninja stopped on it.
    let c_error = log
        .lines()
        .find(|l| has(l, ": error: ") || has(l, ": fatal error: "))
        .filter(|_| line_with(&COMPILE_SIGNS[9..]).is_some());
    if let Some(l) = line_with(&COMPILE_SIGNS[..9]).or_else(|| c_error.map(|l| l.trim().chars().take(300).collect())) {
        return Some((TruncationCause::CompileFailure, l));
    }
    if let Some(flag) = fail_fast_flag(command) {
        return Some((TruncationCause::FailFast, format!("the test command runs with {flag}")));
    }
    // npm and yarn echo each script they run (`> mocha --bail test/`): a flag in a script the
    // command reaches through others (`npm run test-ci` running `nyc npm test`).
    let script = log.lines().map(str::trim).filter(|l| l.starts_with("> ")).find_map(|l| Some((l, fail_fast_flag(l)?)));
    if let Some((l, flag)) = script {
        let l: String = l.chars().take(300).collect();
        return Some((TruncationCause::FailFast, format!("a script the test command runs has {flag}: {l}")));
    }
    let cargo_stop = command.contains("cargo test") && !command.contains("--no-fail-fast");
    if cargo_stop && let Some(l) = log.lines().find(|l| has(l, "error: test failed, to rerun pass")) {
        return Some((TruncationCause::FailFast, format!("plain `cargo test` stopped: {}", l.trim())));
    }
    let mvn_stop = command.contains("mvn")
        && !["-fae", "--fail-at-end", "-fn", "--fail-never", "maven.test.failure.ignore=true"]
            .iter()
            .any(|f| command.contains(f));
    if mvn_stop && let Some(l) = log.lines().find(|l| has(l, "BUILD FAILURE")) {
        return Some((TruncationCause::FailFast, format!("Maven without -fae stopped: {}", l.trim())));
    }
    if let Some(l) = line_with(&FAIL_FAST_SIGNS) {
        return Some((TruncationCause::FailFast, l));
    }
    line_with(&CRASH_SIGNS).map(|l| (TruncationCause::Crash, l))
}

/// What resolvers and clients print when a host cannot be reached: runs have no network.
const NETWORK_SIGNS: [&str; 11] = [
    "ENOTFOUND",
    "EAI_AGAIN",
    "getaddrinfo",
    "UnknownHostException",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Could not resolve host",
    "Network is unreachable",
    "no such host",
    "dial tcp: lookup",
    "NoRouteToHostException",
];

/// Up to five distinct lines of `log` that show the network was reached for.
fn network_lines(log: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in log.lines().filter(|l| NETWORK_SIGNS.iter().any(|s| has(l, s))) {
        let line: String = line.trim().chars().take(300).collect();
        if !out.contains(&line) {
            out.push(line);
            if out.len() == 5 {
                break;
            }
        }
    }
    out
}

/// A fail-fast flag on the command line, if any.
pub(crate) fn fail_fast_flag(command: &str) -> Option<&'static str> {
    let words: Vec<&str> = command.split_whitespace().collect();
    ["--bail", "-failfast", "--failfast", "--stop-on-failure", "--fail-fast"]
        .into_iter()
        .find(|f| words.iter().any(|w| w == f || w.starts_with(&format!("{f}="))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_without_tests_says_why_when_its_log_does() {
        let why =
            |log: &str, code: Option<i64>| RunFacts::of(log.as_bytes(), code, false, "sh run-tests").why_no_test();
        assert_eq!(why("Test project /b\nNo tests were found!!!", Some(0)).as_deref(), Some("No tests were found!!!"));
        // A compiler's error counts without a make or ninja stop after it, as does CMake's.
        let gcc = "cc -o t t.c\nt.c:1:10: fatal error: cmocka.h: No such file or directory\ncompilation terminated.";
        assert_eq!(why(gcc, Some(1)).as_deref(), Some("t.c:1:10: fatal error: cmocka.h: No such file or directory"));
        assert_eq!(
            why("-- Configuring incomplete\nCMake Error at CMakeLists.txt:8 (find_package):", Some(1)).as_deref(),
            Some("CMake Error at CMakeLists.txt:8 (find_package):")
        );
        assert_eq!(why("", Some(139)).as_deref(), Some("the test command exited with 139 (a signal)"));
        assert_eq!(RunFacts::of(b"", None, true, "").why_no_test().as_deref(), Some("killed by the run's timeout"));
        assert_eq!(why("something went wrong", Some(1)), None);
    }

    #[test]
    fn the_cause_is_read_from_the_log_and_the_command() {
        let cause =
            |log: &str, code: Option<i64>, command: &str| RunFacts::of(log.as_bytes(), code, false, command).cause();
        let maven = "[ERROR] COMPILATION ERROR : \n[ERROR] /w/src/test/java/a/SlugsTest.java:[12,9] cannot find symbol";
        assert_eq!(
            cause(maven, Some(1), "mvn -fae test"),
            (TruncationCause::CompileFailure, "[ERROR] COMPILATION ERROR :".into())
        );
        let go = "FAIL\texample.com/stack [build failed]\nok  \texample.com/other\t0.1s";
        assert_eq!(cause(go, Some(1), "go test ./...").0, TruncationCause::CompileFailure);
        let gcc = "calc.cpp:3:5: error: 'sub' was not declared in this scope\nninja: build stopped: subcommand failed.";
        assert_eq!(
            cause(gcc, Some(1), "cmake --build build").1,
            "calc.cpp:3:5: error: 'sub' was not declared in this scope"
        );
        assert_eq!(cause("a failing test prints: error: expected", Some(1), "make check").0, TruncationCause::Unknown);
        let header = "t.c:3:10: fatal error: cmocka.h: No such file or directory\nmake: *** [Makefile:9: t.o] Error 1";
        assert_eq!(
            cause(header, Some(2), "make check"),
            (TruncationCause::CompileFailure, "t.c:3:10: fatal error: cmocka.h: No such file or directory".into())
        );
        assert_eq!(
            cause("fatal: unable to access 'https://x.invalid/'", Some(128), "git clone").0,
            TruncationCause::Unknown
        );
        assert_eq!(
            cause("  1 passing\n  1 failing", Some(1), "mocha --bail test/"),
            (TruncationCause::FailFast, "the test command runs with --bail".into())
        );
        let npm = "> body-parser@1.19.0 test-ci /app\n> nyc --reporter=text npm test\n\n> body-parser@1.19.0 test /app\n> mocha --require test/support/env --reporter spec --bail --check-leaks test/\n\n  1 passing\n  1 failing";
        assert_eq!(
            cause(npm, Some(1), "npm run test-ci"),
            (
                TruncationCause::FailFast,
                "a script the test command runs has --bail: > mocha --require test/support/env --reporter spec --bail --check-leaks test/".into()
            )
        );
        assert_eq!(cause("> mocha test/\n  1 failing", Some(1), "npm test").0, TruncationCause::Unknown);
        assert_eq!(
            cause("error: test failed, to rerun pass `--lib`", Some(101), "cargo test").0,
            TruncationCause::FailFast
        );
        assert_eq!(
            cause("error: test failed, to rerun pass `--lib`", Some(101), "cargo test --no-fail-fast").0,
            TruncationCause::Unknown
        );
        assert_eq!(cause("[INFO] BUILD FAILURE", Some(1), "mvn test").0, TruncationCause::FailFast);
        assert_eq!(cause("[INFO] BUILD FAILURE", Some(1), "mvn -fae test").0, TruncationCause::Unknown);
        assert_eq!(cause("Segmentation fault (core dumped)", Some(139), "ctest").0, TruncationCause::Crash);
        assert_eq!(cause("", Some(137), "ctest").0, TruncationCause::Crash);
        let surefire =
            "[ERROR] Java heap space\n[INFO] BUILD FAILURE\n[ERROR] There was an error in the forked process";
        assert_eq!(
            cause(surefire, Some(1), "mvn -fae test"),
            (TruncationCause::Crash, "[ERROR] There was an error in the forked process".into())
        );
        assert_eq!(cause("", None, "ctest").0, TruncationCause::Crash);
        let t = RunFacts::of(b"", None, true, "go test ./...").cause();
        assert_eq!(t.0, TruncationCause::Timeout);
        assert_eq!(fail_fast_flag("go test -failfast ./..."), Some("-failfast"));
        let net = RunFacts::of(
            b"ok\nError: getaddrinfo ENOTFOUND api.github.com\nError: getaddrinfo ENOTFOUND api.github.com\n",
            Some(1),
            false,
            "",
        );
        assert_eq!(net.network, ["Error: getaddrinfo ENOTFOUND api.github.com"]);
        assert_eq!(fail_fast_flag("vitest run --bail=1"), Some("--bail"));
        assert_eq!(fail_fast_flag("cargo test --no-fail-fast"), None);
    }
}
