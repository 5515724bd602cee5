//! The `cargo test` parser: libtest's pretty text output, split into sections by cargo's
//! `Running <source> (<path>/deps/<name>-<hash>)` and `Doc-tests <crate>` headers, each with
//! `running N tests`, `test <name> ... ok|FAILED|ignored[, reason]` lines and a
//! `test result: ...` summary.
//!
//! Canonical ids:
//! - `<binary>::<test path>` where `<binary>` is the deps file name without its `-<hash>`
//!   suffix: the crate name for a library's unit tests, the target name for integration
//!   tests. Unit tests of binaries, examples and benches get a kind marker (`mycrate[bin]`,
//!   `x[example]`, `x[bench]`) because a package's binary has the library's name by default.
//!   Two different binaries (different hashes) with the same name in one log — same-named
//!   integration tests in two workspace members — are told apart by order: `name`, `name#2`.
//! - `<crate>::doc::<name as printed>` for doctests (`src/lib.rs - Stack::pop (line 10)`), which
//!   [`crate::parse`] renames without the line once the log is read (`src/lib.rs - Stack::pop`,
//!   ` (doctest 2)` for an item's second; `stable.rs`).
//! - `?::<test path>` for results before any section header.
//!
//! The Multi-SWE-bench name is the bare test path; tests libtest prints with its
//! ` - should panic` marker get none (that harness's `test (\S+) ... ok` regex cannot see them),
//! and neither do doctests. A status may come on a later line than its `test name ... `
//! (tests printing with `--nocapture`). Tests without status when a binary stops (crash:
//! `error: test failed` / `process didn't exit successfully` before `test result:`, or the
//! log ends) are left out with a warning, except those libtest said `has been running for over
//! 60 seconds`: they hung, and are FAIL and in [`ParsedLog::timed_out`] (the rust recipe's
//! watchdog kills a test binary that runs too long); summary counts that disagree with the parsed
//! results, and `error: could not compile` lines, give a warning too.

use std::collections::HashMap;

use swe_forge_core::TestStatus;

use crate::{LineParser, ParsedLog, Recorder, list};

/// Canonical prefix for results seen before any section header.
const UNKNOWN_BINARY: &str = "?";

struct Section {
    /// `mycrate`, `mycrate[bin]`, `foo#2`, or the crate of doctests.
    prefix: String,
    doc: bool,
}

impl Section {
    fn label(&self) -> String {
        if self.doc { format!("doctests of {}", self.prefix) } else { format!("test binary {}", self.prefix) }
    }
}

#[derive(Default)]
struct Block {
    /// From `running N tests`.
    expected: Option<usize>,
    passed: usize,
    failed: usize,
    ignored: usize,
    /// Tests whose `test name ... ` line had no status yet, oldest first.
    pending: Vec<String>,
    /// Tests libtest said have been running for over 60 seconds and that have no status yet.
    hung: Vec<String>,
}

impl Block {
    fn reported(&self) -> usize {
        self.passed + self.failed + self.ignored
    }
}

/// Line-by-line state of a `cargo test` log.
#[derive(Default)]
pub(crate) struct Parser {
    parsed: Recorder,
    section: Option<Section>,
    block: Option<Block>,
    /// Binary name (with kind marker) -> hashes seen, in order of appearance.
    binaries: HashMap<String, Vec<Option<String>>>,
    /// The canonical id being built, kept to reuse its allocation.
    id: String,
}

/// `ok`, `FAILED`, `ignored`, `ignored, reason`, `bench: ...` at the start of `s`.
pub(crate) fn status_word(s: &str) -> Option<TestStatus> {
    let end = s.find(|c: char| c == ',' || c.is_whitespace()).unwrap_or(s.len());
    match s.get(..end)? {
        "ok" | "bench:" => Some(TestStatus::Pass),
        "FAILED" => Some(TestStatus::Fail),
        "ignored" => Some(TestStatus::Skip),
        _ => None,
    }
}

/// The test path of a libtest name: the part before libtest's ` - ` markers (` - should panic`,
/// doctest ` - compile fail`).
fn before_dash(name: &str) -> &str {
    match needle!(" - ").find(name.as_bytes()) {
        Some(i) => &name[..i],
        None => name,
    }
}

/// A line holding nothing but a status (the late status of a test that printed output).
fn lone_status(line: &str) -> Option<TestStatus> {
    let t = line.trim();
    if t == "ok" || t == "FAILED" || t == "ignored" || t.starts_with("ignored, ") { status_word(t) } else { None }
}

/// `test <name> ... <rest>`: the name (as printed, trimmed) and the rest (trimmed).
pub(crate) fn test_line(line: &str) -> Option<(&str, &str)> {
    let r = line.strip_prefix("test ")?;
    let idx = needle!(" ...").find(r.as_bytes())?;
    let name = r.get(..idx)?.trim();
    let rest = r.get(idx + 4..)?;
    if name.is_empty() || !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    Some((name, rest.trim()))
}

/// `N passed; N failed; N ignored; ...` after `test result: ok.`: the three counts.
fn summary_counts(rest: &str) -> Option<(usize, usize, usize)> {
    let (mut passed, mut failed, mut ignored) = (None, None, None);
    for part in rest.split(';') {
        let mut words = part.split_whitespace().rev();
        let (Some(what), Some(n)) = (words.next(), words.next()) else { continue };
        let Ok(n) = n.parse::<usize>() else { continue };
        match what {
            "passed" => passed = Some(n),
            "failed" => failed = Some(n),
            "ignored" => ignored = Some(n),
            _ => {}
        }
    }
    Some((passed?, failed?, ignored?))
}

/// `running 3 tests` / `running 1 test`: the count.
pub(crate) fn running_count(line: &str) -> Option<usize> {
    let rest = line.strip_prefix("running ")?;
    let (n, unit) = rest.split_once(' ')?;
    (unit == "tests" || unit == "test").then(|| n.parse().ok()).flatten()
}

/// The header `Running <src> (<path>)` (cargo ≥ 1.58) or `Running <path>` (older): source
/// description, binary base name, hash.
pub(crate) fn running_header(rest: &str) -> Option<(Option<&str>, &str, Option<&str>)> {
    if rest.starts_with('`') {
        return None; // `cargo -v` echoing a rustc or build-script command
    }
    let (src, path) = match rest.strip_suffix(')').and_then(|r| r.rsplit_once(" (")) {
        Some((src, path)) => (Some(src.trim()), path),
        None => (None, rest),
    };
    let file = path.rsplit(['/', '\\']).next()?;
    let file = file.strip_suffix(".exe").unwrap_or(file);
    match file.rsplit_once('-') {
        Some((base, hash)) if !base.is_empty() && hash.len() >= 8 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Some((src, base, Some(hash)))
        }
        _ if path.contains("deps") && !file.is_empty() && !file.contains(char::is_whitespace) => {
            Some((src, file, None))
        }
        _ => None,
    }
}

/// The kind marker of a section from its source description (`unittests src/main.rs`).
fn kind_marker(src: Option<&str>) -> &'static str {
    let Some(src) = src else { return "" };
    let (unittests, path) = match src.strip_prefix("unittests ") {
        Some(p) => (true, p.trim()),
        None => (false, src),
    };
    let path = path.replace('\\', "/");
    if unittests && (path == "src/main.rs" || path.starts_with("src/bin/")) {
        "[bin]"
    } else if path.starts_with("examples/") {
        "[example]"
    } else if path.starts_with("benches/") {
        "[bench]"
    } else {
        ""
    }
}

impl Parser {
    fn label(&self) -> String {
        self.section.as_ref().map_or_else(|| format!("test binary {UNKNOWN_BINARY}"), Section::label)
    }

    /// Ends the current block; `why` says what ended it when no `test result:` line did. A test
    /// libtest said has been running for over 60 seconds and that never finished hung: FAIL (its
    /// binary was killed, by the recipe's watchdog or the run's limit).
    fn close_block(&mut self, why: &str) {
        let hung = self.block.as_mut().map(|b| std::mem::take(&mut b.hung)).unwrap_or_default();
        if !hung.is_empty() {
            let names: Vec<&str> = hung.iter().map(String::as_str).collect();
            let label = self.label();
            self.parsed.warnings.push(format!(
                "{label} stopped ({why}) while {} test(s) had been running for over 60 seconds; FAIL (hung): {}",
                names.len(),
                list(&names)
            ));
            for name in &hung {
                self.forget_pending(name);
                self.record(name, TestStatus::Fail);
                self.parsed.timed_out.insert(self.id.clone());
            }
        }
        let Some(block) = self.block.take() else { return };
        let reported = block.reported();
        let missing = block.expected.is_some_and(|e| e > reported);
        if block.pending.is_empty() && !missing {
            return;
        }
        let of = block.expected.map_or_else(String::new, |e| format!(" of {e}"));
        let names: Vec<&str> = block.pending.iter().map(String::as_str).collect();
        let left_out =
            if names.is_empty() { String::new() } else { format!("; without status, left out: {}", list(&names)) };
        let label = self.label();
        self.parsed
            .warnings
            .push(format!("{label} stopped before its summary ({why}): {reported}{of} test(s) reported{left_out}"));
    }

    fn open_section(&mut self, section: Section) {
        self.close_block("next section started");
        self.section = Some(section);
    }

    fn running(&mut self, rest: &str) -> bool {
        let Some((src, base, hash)) = running_header(rest) else { return false };
        let name = format!("{base}{}", kind_marker(src));
        let hashes = self.binaries.entry(name.clone()).or_default();
        let index = match hashes.iter().position(|h| *h == hash.map(str::to_owned)) {
            Some(i) => i,
            None => {
                hashes.push(hash.map(str::to_owned));
                hashes.len() - 1
            }
        };
        let prefix = if index == 0 {
            name
        } else {
            let renamed = format!("{name}#{}", index + 1);
            self.parsed.warnings.push(format!(
                "another test binary is also named {name} ({}); its tests are under {renamed}",
                hash.unwrap_or("no hash")
            ));
            renamed
        };
        self.open_section(Section { prefix, doc: false });
        true
    }

    fn block(&mut self) -> &mut Block {
        self.block.get_or_insert_with(Block::default)
    }

    /// Counts a result in the current block.
    fn count(&mut self, status: TestStatus) {
        let block = self.block();
        match status {
            TestStatus::Pass => block.passed += 1,
            TestStatus::Fail => block.failed += 1,
            TestStatus::Skip | TestStatus::None => block.ignored += 1,
        }
    }

    /// Records test `name` (as libtest names it) of the current section.
    fn record(&mut self, name: &str, status: TestStatus) {
        self.count(status);
        if let Some(block) = self.block.as_mut() {
            block.hung.retain(|h| h != name);
        }
        let (prefix, doc) = match &self.section {
            Some(s) => (s.prefix.as_str(), s.doc),
            None => (UNKNOWN_BINARY, false),
        };
        record_id(&mut self.parsed, &mut self.id, prefix, doc, name, status);
    }

    /// Records test `name` of the binary `prefix` (`mycrate`, `tool[bin]`), whatever the
    /// current section: for runners that name the binary on every result (nextest).
    /// `count`: whether the result counts in the current block (else the caller keeps count).
    pub(crate) fn record_in(&mut self, prefix: &str, name: &str, status: TestStatus, count: bool) {
        if count {
            self.count(status);
            self.forget_pending(name);
        }
        record_id(&mut self.parsed, &mut self.id, prefix, false, name, status);
    }

    /// Adds a warning.
    pub(crate) fn warn(&mut self, warning: String) {
        self.parsed.warnings.push(warning);
    }

    /// Handles a header line (`Running …`, `Doc-tests …`); whether it was one.
    pub(crate) fn header(&mut self, line: &str) -> bool {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("Running ")
            && self.running(rest.trim())
        {
            return true;
        }
        if let Some(rest) = trimmed.strip_prefix("Doc-tests ")
            && let Some(krate) = rest.split_whitespace().next()
        {
            self.open_section(Section { prefix: krate.to_owned(), doc: true });
            return true;
        }
        false
    }

    /// A test binary starts (libtest's `running N tests`, or its JSON `suite started`).
    pub(crate) fn suite_started(&mut self, expected: Option<usize>) {
        self.close_block("a new test run started");
        self.block = Some(Block { expected, ..Block::default() });
    }

    /// Test `name` started and has no status yet.
    pub(crate) fn test_started(&mut self, name: &str) {
        self.block().pending.push(name.to_owned());
    }

    /// Test `name` of the current section ended with `status`.
    pub(crate) fn test_finished(&mut self, name: &str, status: TestStatus) {
        self.forget_pending(name);
        self.record(name, status);
    }

    fn forget_pending(&mut self, name: &str) {
        if let Some(block) = self.block.as_mut()
            && let Some(i) = block.pending.iter().rposition(|p| p == name)
        {
            block.pending.remove(i);
        }
    }

    /// The test binary's summary: (passed, failed, ignored) when it gives them.
    pub(crate) fn suite_finished(&mut self, counts: Option<(usize, usize, usize)>) {
        let label = self.label();
        let Some(block) = self.block.take() else { return };
        if !block.pending.is_empty() {
            let names: Vec<&str> = block.pending.iter().map(String::as_str).collect();
            self.parsed.warnings.push(format!(
                "{label}: {} test(s) printed no recognisable status; left out: {}",
                names.len(),
                list(&names)
            ));
        }
        if let Some((p, f, i)) = counts
            && (p, f, i) != (block.passed, block.failed, block.ignored)
        {
            self.parsed.warnings.push(format!(
                "{label}: summary says {p} passed, {f} failed, {i} ignored but the log shows {} passed, {} failed, {} ignored",
                block.passed, block.failed, block.ignored
            ));
        }
    }

    /// Lines that end a binary early or report a failed build; whether it was one.
    pub(crate) fn stop_line(&mut self, line: &str) -> bool {
        if line.starts_with("error: test failed") || line.starts_with("error: doctest failed") {
            self.close_block("error: test failed");
        } else if needle!("process didn't exit successfully").find(line.as_bytes()).is_some() {
            self.close_block("process didn't exit successfully");
        } else if line.starts_with("error: could not compile") {
            self.parsed.build_failed(format!("build failed: {}", line.trim()));
        } else {
            return false;
        }
        true
    }

    /// Ends the log: tests still without status are left out, with a warning.
    pub(crate) fn finish_log(mut self) -> ParsedLog {
        self.close_block("log ends");
        self.parsed.into_parsed()
    }

    /// Handles a `test name ... rest` line, and any test lines or events glued onto it.
    fn test_lines(&mut self, mut line: &str) -> bool {
        let mut handled = false;
        while let Some((name, rest)) = test_line(line) {
            let doc = self.section.as_ref().is_some_and(|s| s.doc);
            let path = before_dash(name);
            if !doc && path.contains(char::is_whitespace) {
                break; // test output that merely starts with "test "
            }
            handled = true;
            if let Some(status) = status_word(rest) {
                self.record(name, status);
                return true;
            }
            self.block().pending.push(name.to_owned());
            line = rest;
        }
        if handled {
            self.other(line);
        }
        handled
    }

    /// Lines that are neither headers nor test lines: summaries, crash reports, late statuses.
    fn other(&mut self, line: &str) {
        if let Some(rest) = line.strip_prefix("test result:") {
            self.suite_finished(summary_counts(rest));
        } else if let Some(n) = running_count(line) {
            self.suite_started(Some(n));
        } else if let Some(name) =
            line.strip_prefix("test ").and_then(|r| r.strip_suffix(" has been running for over 60 seconds"))
        {
            let block = self.block();
            if !block.hung.iter().any(|h| h == name) {
                block.hung.push(name.to_owned());
            }
        } else if let Some(status) = lone_status(line) {
            if let Some(name) = self.block.as_mut().and_then(|b| b.pending.pop()) {
                self.record(&name, status);
            }
        } else {
            self.stop_line(line);
        }
    }

    fn handle(&mut self, line: &str) {
        if self.header(line) {
            return;
        }
        let line = line.trim_end();
        if self.test_lines(line) {
            return;
        }
        self.other(line);
    }
}

/// Records `status` for test `name` of binary `prefix` (`id` is a reused buffer).
fn record_id(parsed: &mut Recorder, id: &mut String, prefix: &str, doc: bool, name: &str, status: TestStatus) {
    id.clear();
    id.push_str(prefix);
    if doc {
        id.push_str("::doc::");
        id.push_str(name);
        parsed.record_str(id, || None, status);
    } else {
        let path = before_dash(name).trim_end();
        id.push_str("::");
        id.push_str(path);
        // Multi-SWE-bench's `test (\S+) ... ok` cannot match `test name - should panic ... ok`:
        // that harness never sees such tests, so they get no name there.
        let msb = || (path.len() == name.trim_end().len()).then(|| path.to_owned());
        parsed.record_str(id, msb, status);
    }
}

impl LineParser for Parser {
    fn line(&mut self, line: &str) {
        self.handle(line);
    }

    fn finish(self: Box<Self>) -> ParsedLog {
        self.finish_log()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        assert_eq!(
            running_header("unittests src/lib.rs (target/debug/deps/my_crate-0123abcd4567ef89)"),
            Some((Some("unittests src/lib.rs"), "my_crate", Some("0123abcd4567ef89")))
        );
        assert_eq!(running_header("target/debug/deps/foo-0123abcd"), Some((None, "foo", Some("0123abcd"))));
        assert_eq!(
            running_header(r"tests\a.rs (target\debug\deps\a-0123abcd4567ef89.exe)"),
            Some((Some(r"tests\a.rs"), "a", Some("0123abcd4567ef89")))
        );
        assert_eq!(running_header("`rustc --crate-name x`"), None);
        assert_eq!(running_header("tests now"), None);
        assert_eq!(kind_marker(Some("unittests src/main.rs")), "[bin]");
        assert_eq!(kind_marker(Some("unittests src/bin/tool.rs")), "[bin]");
        assert_eq!(kind_marker(Some("unittests src/lib.rs")), "");
        assert_eq!(kind_marker(Some("tests/foo.rs")), "");
        assert_eq!(kind_marker(Some("benches/b.rs")), "[bench]");
        assert_eq!(kind_marker(Some("unittests examples/e.rs")), "[example]");
    }

    #[test]
    fn lines() {
        assert_eq!(test_line("test a::b ... ok"), Some(("a::b", "ok")));
        assert_eq!(test_line("test a::b ..."), Some(("a::b", "")));
        assert_eq!(test_line("test a ... test b ... ok"), Some(("a", "test b ... ok")));
        assert_eq!(test_line("test result: ok. 1 passed"), None);
        assert_eq!(status_word("ignored, needs network"), Some(TestStatus::Skip));
        assert_eq!(status_word("okay"), None);
        assert_eq!(summary_counts(" FAILED. 3 passed; 1 failed; 2 ignored; 0 measured"), Some((3, 1, 2)));
        assert_eq!(running_count("running 1 test"), Some(1));
        assert_eq!(running_count("running late"), None);
    }
}
