//! The ctest text parser: one line per test,
//! `  3/10 Test  #3: name ..........   Passed    0.01 sec` (or `***Failed`, `***Exception:
//! SegFault`, `***Timeout`, `***Skipped`, `***Not Run (Disabled)`, `***Not Run`), in any order
//! with `-j`, and the closing `The following tests FAILED:` / `did not run:` lists, which fill
//! in tests whose line is missing. Lines of `-V` output (`3: …`) are ignored.
//!
//! Once ctest has printed `Start N: name` lines, a result line counts only for a started test,
//! so a test printing a ctest-like line cannot fake a result. Passed is PASS; Skipped and `Not Run (Disabled)` SKIP;
//! `Not Run` (its executable was not built, a required file or fixture was missing) is absent
//! (NONE), as a test that did not run is in every other format, though ctest counts it as
//! failed: a test that passed at the base and was not built with the test patch is then set
//! apart, never FAIL_TO_PASS; anything else FAIL. Canonical id: the test
//! name. Multi-SWE-bench name: the test name, for a `Passed` or `***Failed` line only: the
//! harness's ctest handlers match those two (`\.+\s*Passed`, `\.+\s*\*+Failed`), so a test
//! that was `Not Run` (its executable was not built), crashed (`***Exception`) or timed out has
//! no status there (NONE), nor one that only the closing lists name. A test that printed `Start`
//! but no result (ctest killed, log cut) is left out with a warning.

use std::collections::BTreeSet;

use swe_forge_core::TestStatus;

use crate::{LineParser, ParsedLog, Recorder, list};

#[derive(Default, PartialEq)]
enum List {
    #[default]
    None,
    Failed,
    NotRun,
}

/// Line-by-line state of a ctest log.
#[derive(Default)]
pub(crate) struct Parser {
    parsed: Recorder,
    started: BTreeSet<String>,
    /// Whether any `Start` line was seen: then only started tests may report.
    saw_start: bool,
    list: List,
    /// Tests reported `***Not Run` (not disabled).
    not_run: Vec<String>,
    /// The same, to look up when the closing lists name them.
    seen_not_run: BTreeSet<String>,
    /// ctest said it could not find a test's executable.
    missing_exe: bool,
}

fn status_of(word: &str) -> TestStatus {
    let w = word.trim();
    if w.starts_with("Passed") {
        TestStatus::Pass
    } else if w.starts_with("Skipped") || w.starts_with("Not Run (Disabled)") || w.starts_with("Disabled") {
        TestStatus::Skip
    } else {
        TestStatus::Fail
    }
}

/// `3/10 Test  #3: name ....   Passed  0.01 sec`: name, status, and whether Multi-SWE-bench's
/// handlers read the line (`Passed` or `***Failed`).
pub(crate) fn result_line(line: &str) -> Option<(&str, TestStatus, bool)> {
    let t = line.trim_start();
    let (count, rest) = t.split_once(' ')?;
    let (a, b) = count.split_once('/')?;
    if a.is_empty() || b.is_empty() || !a.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    let rest = rest.trim_start().strip_prefix("Test")?.trim_start().strip_prefix('#')?;
    let (num, rest) = rest.split_once(':')?;
    if num.is_empty() || !num.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let (name_part, status_part) = match needle!("***").find(rest.as_bytes()) {
        Some(i) => (&rest[..i], &rest[i + 3..]),
        None => {
            static PASSED: std::sync::LazyLock<memchr::memmem::FinderRev<'static>> =
                std::sync::LazyLock::new(|| memchr::memmem::FinderRev::new(" Passed"));
            let i = PASSED.rfind(rest.as_bytes())?;
            (&rest[..i], &rest[i + 1..])
        }
    };
    let name = name_part.trim().trim_end_matches('.').trim_end();
    let read_by_msb = ["Passed", "Failed"].iter().any(|w| status_part.trim_start().starts_with(w));
    (!name.is_empty()).then(|| (name, status_of(status_part), read_by_msb))
}

/// `\t  2 - name (SEGFAULT)` in the closing lists: name and reason.
fn list_line(line: &str) -> Option<(&str, &str)> {
    let t = line.trim();
    let (num, rest) = t.split_once(" - ")?;
    if num.is_empty() || !num.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let open = rest.rfind(" (")?;
    Some((rest[..open].trim(), rest[open + 2..].trim_end_matches(')')))
}

impl LineParser for Parser {
    fn line(&mut self, line: &str) {
        if let Some((name, status, read_by_msb)) = result_line(line) {
            // A result line of a test that never started is output of a test (a fake).
            if self.started.remove(name) || !self.saw_start {
                if line.contains("***Not Run") && !line.contains("***Not Run (Disabled)") {
                    self.not_run.push(name.to_owned());
                    self.seen_not_run.insert(name.to_owned());
                } else {
                    self.parsed.record(name.to_owned(), read_by_msb.then(|| name.to_owned()), status);
                }
            }
            self.list = List::None;
            return;
        }
        let t = line.trim();
        if t.starts_with("Unable to find executable") || t.starts_with("Could not find executable") {
            self.missing_exe = true;
            return;
        }
        if let Some(rest) = t.strip_prefix("Start ")
            && let Some((num, name)) = rest.trim_start().split_once(": ")
            && num.bytes().all(|c| c.is_ascii_digit())
        {
            self.started.insert(name.trim().to_owned());
            self.saw_start = true;
            return;
        }
        if t == "The following tests FAILED:" {
            self.list = List::Failed;
            return;
        }
        if t == "The following tests did not run:" {
            self.list = List::NotRun;
            return;
        }
        if self.list == List::None {
            return;
        }
        match list_line(line) {
            Some((name, reason)) => {
                self.started.remove(name);
                if reason == "Not Run" || self.seen_not_run.contains(name) {
                    // Not run: absent (its result line, when there was one, said so too).
                } else if !self.parsed.tests.contains_key(name) {
                    let status = if self.list == List::NotRun { status_of(reason) } else { TestStatus::Fail };
                    self.parsed.record(name.to_owned(), None, status);
                }
            }
            None => self.list = List::None,
        }
    }

    fn first_byte(&self) -> Option<crate::text::FirstByte> {
        Some(|b| b.is_ascii_digit() || matches!(b, b'S' | b'T' | b'U' | b'C'))
    }

    fn finish(mut self: Box<Self>) -> ParsedLog {
        if !self.started.is_empty() {
            let names: Vec<&str> = self.started.iter().map(String::as_str).collect();
            self.parsed.warnings.push(format!(
                "{} ctest test(s) started without a result (ctest killed or log truncated?); left out: {}",
                names.len(),
                list(&names)
            ));
        }
        if self.missing_exe && !self.not_run.is_empty() {
            let names: Vec<&str> = self.not_run.iter().map(String::as_str).collect();
            self.parsed.build_failed(crate::not_built_warning(&names));
        }
        self.parsed.into_parsed()
    }
}

/// Signature lines for detection (strong ones count more).
pub(crate) fn signature(line: &str) -> u32 {
    let t = line.trim();
    if result_line(line).is_some() {
        1
    } else if t.starts_with("Test project ") || (t.contains("% tests passed, ") && t.contains(" tests failed out of "))
    {
        100
    } else {
        0
    }
}
