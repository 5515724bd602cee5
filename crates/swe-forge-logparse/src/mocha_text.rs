//! The mocha spec reporter parser: nested `describe` titles by indentation (two spaces a
//! level), `✔ title (12ms)` (`✓` in older mocha) for a pass, `N) title` for a failure and
//! `- title` for a pending test; the failure details after `N passing` are not read (they
//! repeat the failures). A failed hook (`N) "before all" hook for "x"`) is a warning: the
//! tests it guarded did not run and are absent.
//!
//! Canonical id: `<describe> > … > <title>` (the spec reporter never names the file, so two
//! files with the same titles share ids; a shared id is FAIL if either failed).
//! Multi-SWE-bench name: the title as its mocha handlers' regex takes it from the raw line,
//! `^✔ (.+?)(?:\s\(\d*\.?\d*\s*\w+\))?$`: one trailing parenthesised word (with optional
//! leading digits) is dropped, be it a duration, `(12ms)`, or part of the title, `(text)`, `(GZIP)`;
//! so `as a String (text)` is `as a String` when mocha printed no duration, and stays whole when it
//! printed one (axios's published lists have both).

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
    raw_test_line(trimmed)
        .map(|(status, raw)| (status, if status == TestStatus::Skip { raw.trim() } else { strip_duration(raw) }))
}

/// Status and the rest of the line after the marker, untouched.
fn raw_test_line(trimmed: &str) -> Option<(TestStatus, &str)> {
    if let Some(rest) = trimmed.strip_prefix("✔ ").or_else(|| trimmed.strip_prefix("✓ ")) {
        return Some((TestStatus::Pass, rest));
    }
    if let Some(rest) = trimmed.strip_prefix("- ") {
        return Some((TestStatus::Skip, rest));
    }
    let digits = trimmed.find(|c: char| !c.is_ascii_digit())?;
    let rest = trimmed[digits..].strip_prefix(") ")?;
    (digits > 0).then_some((TestStatus::Fail, rest))
}

/// The name Multi-SWE-bench's mocha regex takes from the rest of a line: without one trailing
/// ` (<digits>[.<digits>][ ]<word>)`.
pub(crate) fn msb_name(raw: &str) -> &str {
    let t = raw.trim_end();
    if let Some(inner) = t.strip_suffix(')')
        && let Some(open) = inner.rfind('(')
        && open > 0
        && inner[..open].ends_with(char::is_whitespace)
    {
        let group = &inner[open + 1..];
        let rest = group.trim_start_matches(|c: char| c.is_ascii_digit());
        let rest = rest.strip_prefix('.').unwrap_or(rest).trim_start_matches(|c: char| c.is_ascii_digit());
        let word = rest.trim_start();
        if !word.is_empty() && word.chars().all(|c| c.is_alphanumeric() || c == '_') {
            let head = &inner[..open];
            return &head[..head.len() - head.chars().next_back().map_or(0, char::len_utf8)];
        }
    }
    t
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
        let raw = raw_test_line(trimmed);
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
                let msb = raw.map_or(title, |(_, r)| if status == TestStatus::Skip { title } else { msb_name(r) });
                self.parsed.record_worst(id, Some(msb.to_owned()), status);
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

#[cfg(test)]
mod tests {
    use super::msb_name;

    #[test]
    fn msb_names_drop_one_trailing_parenthesised_word() {
        // What `^✔ (.+?)(?:\s\(\d*\.?\d*\s*\w+\))?$` captures (axios's handler).
        assert_eq!(
            msb_name("should support requesting data URL as a String (text)"),
            "should support requesting data URL as a String"
        );
        assert_eq!(
            msb_name("should not fail if response content-length header is missing (GZIP)"),
            "should not fail if response content-length header is missing"
        );
        assert_eq!(msb_name("works (52ms)"), "works");
        assert_eq!(msb_name("works (1.5 s)"), "works");
        // Only one group goes: with a duration printed, the title keeps its own.
        assert_eq!(msb_name("as a String (text) (88ms)"), "as a String (text)");
        // Several words, punctuation or no space before the parenthesis: kept.
        assert_eq!(
            msb_name("as a Blob (if supported by the environment)"),
            "as a Blob (if supported by the environment)"
        );
        assert_eq!(
            msb_name("max body length (follow-redirects as well)"),
            "max body length (follow-redirects as well)"
        );
        assert_eq!(msb_name("call(x)"), "call(x)");
        assert_eq!(msb_name("plain"), "plain");
    }
}
