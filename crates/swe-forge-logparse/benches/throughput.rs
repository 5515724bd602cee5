//! Throughput and memory of the parsers on large generated logs:
//! `cargo bench -p swe-forge-logparse` (or `LOGPARSE_BENCH_MB=20 LOGPARSE_BENCH_ONLY=gtest,jest
//! cargo bench ...`).
//!
//! For each main framework a log of `LOGPARSE_BENCH_MB` MB (default 100) is written to
//! `LOGPARSE_BENCH_DIR` (default: `swe-forge-logparse-bench` in the temp dir; kept, so other
//! parsers can be run on the same files, see `docs/benchmarks/logparse.md`), then parsed from the
//! file with `parse_reader`. The table gives MB/s (per CPU second of the parsing thread, best of
//! three) and the peak resident memory while parsing the full log and a tenth of it: streaming
//! means the two stay close. The logs repeat 20,000
//! test names with the status fixed per name, and most of their bytes are test output, as in
//! real logs.
//!
//! A second table runs only the line scan the text parsers share (reading, cutting, decoding,
//! ANSI and `\r` removal; no parser) on the text logs just written, so the scan's own speed can
//! be told apart from the parsers'. `LOGPARSE_BENCH_SCAN=0` leaves it out.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use swe_forge_logparse::{Framework, parse_reader, scan_lines};

/// Distinct test names in a generated log.
const DISTINCT: usize = 20_000;

#[derive(Clone, Copy, PartialEq)]
enum Outcome {
    Pass,
    Fail,
    Skip,
}

fn outcome(i: usize) -> Outcome {
    if i % 17 == 3 {
        Outcome::Fail
    } else if i % 29 == 5 {
        Outcome::Skip
    } else {
        Outcome::Pass
    }
}

/// Writes one chunk of the log (a few tests) for test index `i` into `s`.
type Chunk = fn(usize, &mut String);

fn go_verbose(i: usize, s: &mut String) {
    let t = i % DISTINCT;
    let pkg = t / 200;
    let _ = write!(s, "=== RUN   TestCase{t}\n    case_test.go:42: preparing fixture {t} with some detail\n");
    let _ = writeln!(s, "    case_test.go:57: checked {t} values, all within the expected bounds");
    let word = match outcome(t) {
        Outcome::Pass => "PASS",
        Outcome::Fail => "FAIL",
        Outcome::Skip => "SKIP",
    };
    let _ = writeln!(s, "--- {word}: TestCase{t} (0.01s)");
    if t % 200 == 199 {
        let _ = writeln!(s, "ok  \texample.com/mod/pkg{pkg}\t0.123s");
    }
}

fn go_json(i: usize, s: &mut String) {
    let t = i % DISTINCT;
    let pkg = format!("example.com/mod/pkg{}", t / 200);
    let head = format!("{{\"Time\":\"2026-11-30T05:00:00.123456Z\",\"Package\":\"{pkg}\",\"Test\":\"TestCase{t}\"");
    let _ = writeln!(s, "{head},\"Action\":\"run\"}}");
    let _ = writeln!(s, "{head},\"Action\":\"output\",\"Output\":\"=== RUN   TestCase{t}\\n\"}}");
    let _ = writeln!(
        s,
        "{head},\"Action\":\"output\",\"Output\":\"    case_test.go:42: preparing fixture {t} with some detail\\n\"}}"
    );
    let action = match outcome(t) {
        Outcome::Pass => "pass",
        Outcome::Fail => "fail",
        Outcome::Skip => "skip",
    };
    let _ = writeln!(s, "{head},\"Action\":\"{action}\",\"Elapsed\":0.01}}");
}

fn cargo(i: usize, s: &mut String) {
    let t = i % DISTINCT;
    if t.is_multiple_of(500) {
        let _ = write!(
            s,
            "     Running unittests src/lib.rs (target/debug/deps/crate{}-0123456789abcdef)\n\nrunning 500 tests\n",
            t / 500
        );
    }
    let word = match outcome(t) {
        Outcome::Pass => "ok",
        Outcome::Fail => "FAILED",
        Outcome::Skip => "ignored",
    };
    let _ = writeln!(s, "test module{}::tests::case_{t} ... {word}", t % 7);
    if t % 500 == 499 {
        let _ = write!(
            s,
            "\ntest result: ok. 470 passed; 20 failed; 10 ignored; 0 measured; 0 filtered out; finished in 0.50s\n\n"
        );
    }
}

fn surefire(i: usize, s: &mut String) {
    let t = i % DISTINCT;
    let class = format!("com.example.pkg{}.Case{t}Test", t % 13);
    let _ = writeln!(s, "[INFO] Running {class}");
    let _ = writeln!(s, "12:00:00.123 [main] INFO com.example.Service - handling request {t} for the test fixture");
    let _ = writeln!(s, "12:00:00.124 [main] DEBUG com.example.Service - response {t} computed in 3 ms");
    match outcome(t) {
        Outcome::Fail => {
            let _ = writeln!(
                s,
                "[ERROR] Tests run: 4, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.05 s <<< FAILURE! -- in {class}"
            );
            let _ = writeln!(s, "[ERROR] {class}.checksValue -- Time elapsed: 0.01 s <<< FAILURE!");
            let _ = writeln!(s, "org.opentest4j.AssertionFailedError: expected: <1> but was: <2>");
            for _ in 0..4 {
                let _ = writeln!(s, "\tat {class}.checksValue(Case{t}Test.java:42)");
            }
        }
        Outcome::Skip => {
            let _ = writeln!(
                s,
                "[WARNING] Tests run: 4, Failures: 0, Errors: 0, Skipped: 4, Time elapsed: 0.01 s -- in {class}"
            );
        }
        Outcome::Pass => {
            let _ = writeln!(
                s,
                "[INFO] Tests run: 4, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.05 s -- in {class}"
            );
        }
    }
}

fn junit_xml(i: usize, s: &mut String) {
    let t = i % DISTINCT;
    let class = format!("com.example.pkg{}.Case{}Test", t % 13, t / 10);
    if t.is_multiple_of(10) {
        let _ = write!(s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"{class}\" tests=\"10\">\n");
    }
    match outcome(t) {
        Outcome::Pass => {
            let _ = writeln!(s, "  <testcase name=\"case{t}(int)[1]\" classname=\"{class}\" time=\"0.01\"/>");
        }
        Outcome::Skip => {
            let _ = writeln!(
                s,
                "  <testcase name=\"case{t}\" classname=\"{class}\"><skipped message=\"later\"/></testcase>"
            );
        }
        Outcome::Fail => {
            let _ = writeln!(s, "  <testcase name=\"case{t}\" classname=\"{class}\" time=\"0.02\">");
            let _ = writeln!(
                s,
                "    <failure message=\"expected: &lt;1&gt; but was: &lt;2&gt;\"><![CDATA[org.opentest4j.AssertionFailedError"
            );
            for _ in 0..4 {
                let _ = writeln!(s, "\tat {class}.case{t}(Case.java:42)");
            }
            let _ = writeln!(s, "]]></failure>\n  </testcase>");
        }
    }
    let _ = writeln!(s, "  <system-out><![CDATA[log line of case {t} with some detail]]></system-out>");
    if t % 10 == 9 {
        let _ = writeln!(s, "</testsuite>");
    }
}

fn jest(i: usize, s: &mut String) {
    let t = i % DISTINCT;
    let file = t / 20;
    if t.is_multiple_of(20) {
        let failing = (t..t + 20).any(|k| outcome(k) == Outcome::Fail);
        let _ = write!(
            s,
            "{} tests/file{file}.test.js (1.2 s)\n  describe block {file}\n",
            if failing { "FAIL" } else { "PASS" }
        );
    }
    let mark = match outcome(t) {
        Outcome::Pass => "✓",
        Outcome::Fail => "✕",
        Outcome::Skip => "○ skipped",
    };
    let _ = writeln!(s, "    {mark} renders case {t} correctly (3 ms)");
    if t % 20 == 19 {
        let _ = write!(
            s,
            "\n  console.log\n    rendered output of file {file}\n\n      at Object.log (tests/file{file}.test.js:7:39)\n\n"
        );
    }
}

fn jest_json(i: usize, s: &mut String) {
    let t = i % DISTINCT;
    let file = t / 20;
    if i == 0 {
        s.push_str("{\"numFailedTestSuites\":1,\"numTotalTests\":0,\"testResults\":[");
    } else if t.is_multiple_of(20) {
        s.push(',');
    }
    if t.is_multiple_of(20) {
        s.push_str("{\"assertionResults\":[");
    } else {
        s.push(',');
    }
    let status = match outcome(t) {
        Outcome::Pass => "passed",
        Outcome::Fail => "failed",
        Outcome::Skip => "pending",
    };
    let failure = if outcome(t) == Outcome::Fail {
        "\"expect(received).toBe(expected)\\n\\nExpected: 3\\nReceived: 2\""
    } else {
        ""
    };
    let _ = write!(
        s,
        "{{\"ancestorTitles\":[\"describe block {file}\"],\"duration\":3,\"failureMessages\":[{failure}],\"fullName\":\"describe block {file} renders case {t} correctly\",\"status\":\"{status}\",\"title\":\"renders case {t} correctly\"}}"
    );
    if t % 20 == 19 {
        let _ = write!(s, "],\"message\":\"\",\"name\":\"/testbed/tests/file{file}.test.js\",\"status\":\"passed\"}}");
    }
}

fn gtest(i: usize, s: &mut String) {
    let t = i % DISTINCT;
    let name = format!("Suite{}.Case{t}", t / 50);
    let _ = writeln!(s, "[ RUN      ] {name}");
    let _ = writeln!(s, "I1130 05:00:00.123456 12345 server.cc:42] handling request {t} in the fixture");
    match outcome(t) {
        Outcome::Pass => {
            let _ = writeln!(s, "[       OK ] {name} (0 ms)");
        }
        Outcome::Fail => {
            let _ = writeln!(s, "test.cc:42: Failure\nExpected equality of these values:\n  a\n    Which is: 2\n  3");
            let _ = writeln!(s, "[  FAILED  ] {name} (0 ms)");
        }
        Outcome::Skip => {
            let _ = writeln!(s, "[  SKIPPED ] {name} (0 ms)");
        }
    }
}

fn ctest(i: usize, s: &mut String) {
    let t = i % DISTINCT;
    let n = t + 1;
    let _ = writeln!(s, "      Start {n:>5}: test_case_{t}");
    let result = match outcome(t) {
        Outcome::Pass => "   Passed    0.01 sec",
        Outcome::Fail => "***Failed    0.01 sec",
        Outcome::Skip => "***Skipped   0.00 sec",
    };
    let _ =
        writeln!(s, "{n:>5}/{DISTINCT} Test {:>6}: test_case_{t} ...........................{result}", format!("#{n}"));
}

fn automake(i: usize, s: &mut String) {
    let t = i % DISTINCT;
    let word = match outcome(t) {
        Outcome::Pass => "PASS",
        Outcome::Fail => "FAIL",
        Outcome::Skip => "SKIP",
    };
    let _ = writeln!(s, "make[2]: Entering directory '/testbed/tests'\n{word}: tests/case{t}.sh");
}

fn mocha(i: usize, s: &mut String) {
    let t = i % DISTINCT;
    if t.is_multiple_of(20) {
        let _ = writeln!(s, "\n  describe block {}", t / 20);
    }
    match outcome(t) {
        Outcome::Pass => {
            let _ = writeln!(s, "    ✔ handles case {t} (3ms)");
        }
        Outcome::Fail => {
            let _ = writeln!(s, "    {}) handles case {t}", t % 100 + 1);
        }
        Outcome::Skip => {
            let _ = writeln!(s, "    - handles case {t}");
        }
    }
    let _ = writeln!(s, "output printed by case {t}");
}

fn vitest(i: usize, s: &mut String) {
    let t = i % DISTINCT;
    let mark = match outcome(t) {
        Outcome::Pass => "✓",
        Outcome::Fail => "×",
        Outcome::Skip => "↓",
    };
    let _ = writeln!(s, " {mark} test/file{}.test.ts > describe block > handles case {t} 3ms", t / 20);
    if outcome(t) == Outcome::Fail {
        let _ = writeln!(s, "   → expected 2 to be 3 // Object.is equality");
    }
}

/// (framework, file name, chunk writer, closing text).
const FORMATS: &[(Framework, &str, Chunk, &str)] = &[
    (Framework::GoTestVerbose, "go-test.log", go_verbose, ""),
    (Framework::GoTestJson, "go-test-json.log", go_json, ""),
    (Framework::CargoLibtest, "cargo-test.log", cargo, ""),
    (Framework::MavenSurefire, "maven-surefire.log", surefire, ""),
    (Framework::JunitXml, "junit-xml.log", junit_xml, ""),
    (Framework::Jest, "jest.log", jest, ""),
    (Framework::JestJson, "jest-json.log", jest_json, "],\"success\":false}\n"),
    (Framework::Mocha, "mocha.log", mocha, "\n  1 passing (1s)\n"),
    (Framework::Vitest, "vitest.log", vitest, ""),
    (Framework::Gtest, "gtest.log", gtest, ""),
    (Framework::Ctest, "ctest.log", ctest, ""),
    (Framework::Automake, "automake.log", automake, ""),
];

/// Writes a log of about `bytes` bytes; for jest-json, closes the document at a file boundary.
fn generate(path: &Path, bytes: u64, chunk: Chunk, closing: &str) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let mut written = 0u64;
    let mut s = String::new();
    let mut i = 0usize;
    loop {
        s.clear();
        chunk(i, &mut s);
        out.write_all(s.as_bytes())?;
        written += s.len() as u64;
        i += 1;
        // Stop at a boundary of 20 tests so documents and blocks close.
        if written >= bytes && i.is_multiple_of(DISTINCT.min(20)) {
            break;
        }
    }
    out.write_all(closing.as_bytes())?;
    out.flush()
}

/// Resets the peak resident set size (Linux), so [`peak_rss_mib`] measures what follows.
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn bench_dir() -> PathBuf {
    std::env::var_os("LOGPARSE_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("swe-forge-logparse-bench"))
}

/// CPU time of this thread so far, in seconds (Linux `schedstat`, nanoseconds): on a machine
/// shared with other work, CPU time varies far less than wall time.
fn thread_cpu_secs() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

/// Parses `path`: (CPU seconds, wall seconds, tests found, peak RSS MiB).
fn measure(framework: Framework, path: &Path) -> (f64, f64, usize, Option<f64>) {
    reset_peak();
    let ((cpu, wall), parsed) = timed(|| parse_reader(framework, File::open(path).expect("generated log")));
    (cpu, wall, parsed.tests.len(), peak_rss_mib())
}

/// Runs `f`: ((CPU seconds of this thread, wall seconds), its result).
fn timed<T>(f: impl FnOnce() -> T) -> ((f64, f64), T) {
    let cpu = thread_cpu_secs();
    let start = Instant::now();
    let out = f();
    let wall = start.elapsed().as_secs_f64();
    let cpu = match (cpu, thread_cpu_secs()) {
        (Some(a), Some(b)) => b - a,
        _ => wall,
    };
    ((cpu, wall), out)
}

/// The line-scan table: every text log among `logs`, scanned (best of three).
#[allow(clippy::print_stdout)]
fn scan_table(logs: &[(Framework, PathBuf)]) {
    println!("\nline scan only (no parser):\n");
    println!("| log | MB | CPU s | MB/s (CPU) | wall s | lines |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (framework, path) in logs.iter().filter(|(f, _)| !f.is_structured()) {
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0) as f64 / 1e6;
        let (mut best, mut best_wall, mut lines) = (f64::MAX, f64::MAX, 0);
        for _ in 0..3 {
            let ((cpu, wall), (n, _)) = timed(|| scan_lines(File::open(path).expect("generated log")));
            best = best.min(cpu);
            best_wall = best_wall.min(wall);
            lines = n;
        }
        println!("| {framework} | {size:.0} | {best:.3} | {:.0} | {best_wall:.3} | {lines} |", size / best);
    }
}

#[allow(clippy::print_stdout)]
fn main() {
    let mb: u64 = std::env::var("LOGPARSE_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(100);
    let dir = bench_dir();
    std::fs::create_dir_all(&dir).expect("bench directory");
    println!("logs in {} ({mb} MB each)\n", dir.display());
    println!("| framework | log MB | CPU s | MB/s (CPU) | wall s | tests | peak RSS MiB (log / tenth of it) |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let only = std::env::var("LOGPARSE_BENCH_ONLY").ok();
    let mut logs = Vec::new();
    for (framework, file, chunk, closing) in FORMATS {
        if only.as_deref().is_some_and(|o| !o.split(',').any(|name| name == framework.name())) {
            continue;
        }
        let full = dir.join(file);
        let tenth = dir.join(format!("tenth-{file}"));
        generate(&full, mb * 1_000_000, *chunk, closing).expect("writing the log");
        generate(&tenth, mb * 100_000, *chunk, closing).expect("writing the log");
        let size = std::fs::metadata(&full).map(|m| m.len()).unwrap_or(0) as f64 / 1e6;
        logs.push((*framework, full.clone()));
        let (_, _, _, small_peak) = measure(*framework, &tenth);
        // Best of three runs.
        let (mut best, mut best_wall) = (f64::MAX, f64::MAX);
        let (mut tests, mut peak) = (0, None);
        for _ in 0..3 {
            let (cpu, wall, n, p) = measure(*framework, &full);
            best = best.min(cpu);
            best_wall = best_wall.min(wall);
            tests = n;
            peak = p;
        }
        let fmt_peak = |p: Option<f64>| p.map_or_else(|| "?".to_owned(), |p| format!("{p:.0}"));
        println!(
            "| {framework} | {size:.0} | {best:.3} | {:.0} | {best_wall:.3} | {tests} | {} / {} |",
            size / best,
            fmt_peak(peak),
            fmt_peak(small_peak)
        );
    }
    if std::env::var("LOGPARSE_BENCH_SCAN").map_or(true, |v| v != "0") {
        scan_table(&logs);
    }
}
