//! The mocha spec reporter parser: nested `describe` titles by indentation (two spaces a
//! level), `✔ title (12ms)` (`✓` in older mocha) for a pass, `N) title` for a failure and
//! `- title` for a pending test; the failure details after `N passing` are not read (they
//! repeat the failures). A failed hook (`N) "before all" hook for "x"`) is a warning: the
//! tests it guarded did not run and are absent.
//!
//! Canonical id: `<describe> > … > <title>` (the spec reporter never names the file, so two
//! files with the same titles share ids; a shared id is FAIL if either failed).
//! Multi-SWE-bench name: the title.

use swe_forge_core::TestStatus;

use crate::mocha_json::is_hook;
use crate::text::{indent, strip_duration};
use crate::{LineParser, ParsedLog, Recorder, list};

/// Line-by-line state of a mocha spec log.
#[derive(Default)]
pub(crate) struct Parser {
    parsed: Recorder,
    stack: Vec<(usize, String)>,
    /// After `N passing`: the failure details.
    in_details: bool,
    hooks: Vec<String>,
}

/// `✔ title (5ms)`, `1) title`, `- title`: status and title.
pub(crate) fn test_line(trimmed: &str) -> Option<(TestStatus, &str)> {
    if let Some(rest) = trimmed.strip_prefix("✔ ").or_else(|| trimmed.strip_prefix("✓ ")) {
        return Some((TestStatus::Pass, strip_duration(rest)));
    }
    if let Some(rest) = trimmed.strip_prefix("- ") {
        return Some((TestStatus::Skip, rest.trim()));
    }
    let digits = trimmed.find(|c: char| !c.is_ascii_digit())?;
    let rest = trimmed[digits..].strip_prefix(") ")?;
    (digits > 0).then(|| (TestStatus::Fail, strip_duration(rest)))
}

/// `7 passing (16ms)`.
fn passing_line(trimmed: &str) -> bool {
    if !trimmed.starts_with(|c: char| c.is_ascii_digit()) {
        return false;
    }
    let mut words = trimmed.split_whitespace();
    words.next().is_some_and(|n| n.parse::<u64>().is_ok()) && words.next() == Some("passing")
}

impl LineParser for Parser {
    fn line(&mut self, line: &str) {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            return;
        }
        if passing_line(trimmed) {
            self.in_details = true;
            return;
        }
        let level = indent(line);
        if level == 0 {
            return; // console output of the tests
        }
        let result = test_line(trimmed);
        if self.in_details {
            match result {
                Some((TestStatus::Pass, _)) => self.in_details = false, // a new run
                _ => return,
            }
        }
        match result {
            Some((status, title)) if !title.is_empty() => {
                if is_hook(title) {
                    self.hooks.push(title.to_owned());
                    return;
                }
                let mut id = String::new();
                for (_, name) in self.stack.iter().filter(|(i, _)| *i < level) {
                    id.push_str(name);
                    id.push_str(" > ");
                }
                id.push_str(title);
                self.parsed.record_worst(id, Some(title.to_owned()), status);
            }
            Some(_) => {}
            None => {
                self.stack.retain(|(i, _)| *i < level);
                self.stack.push((level, trimmed.to_owned()));
            }
        }
    }

    fn finish(mut self: Box<Self>) -> ParsedLog {
        if !self.hooks.is_empty() {
            let names: Vec<&str> = self.hooks.iter().map(String::as_str).collect();
            self.parsed.warnings.push(format!(
                "{} hook(s) failed; the tests they guard did not run and are left out: {}",
                names.len(),
                list(&names)
            ));
        }
        self.parsed.into_parsed()
    }
}

/// Signature lines for detection.
pub(crate) fn signature(line: &str) -> bool {
    let t = line.trim();
    passing_line(t) || (t.split_whitespace().nth(1) == Some("failing") && t.starts_with(|c: char| c.is_ascii_digit()))
}
