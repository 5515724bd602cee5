//! The vitest text parser: the `verbose` reporter's one line per test,
//! ` ✓ path/a.test.ts > describe > title 2ms` (`×` failed, `↓` skipped, `□` todo), the default
//! reporter's per-file lines (` ✓ path/a.test.ts (3 tests) 5ms`, `❯` when some failed) and the
//! `FAIL path [ path ]` / `FAIL path > describe > title` headers of the failure details.
//!
//! Canonical id: the test's line as vitest prints it without marker and duration,
//! `<path> > <describe> > <title>`; `<path>` for a file. Multi-SWE-bench name: the same.

use swe_forge_core::TestStatus;

use crate::text::strip_duration;
use crate::{LineParser, ParsedLog, Recorder};

/// Line-by-line state of a vitest log.
#[derive(Default)]
pub(crate) struct Parser {
    parsed: Recorder,
}

fn marker(c: char) -> Option<TestStatus> {
    match c {
        '✓' | '√' => Some(TestStatus::Pass),
        '×' | '✕' | '❯' => Some(TestStatus::Fail),
        '↓' | '□' => Some(TestStatus::Skip),
        _ => None,
    }
}

/// Removes vitest's trailing annotations: duration, `[skipped]`, `(retry x2)`.
fn clean_title(s: &str) -> &str {
    let mut s = strip_duration(s);
    for suffix in [" [skipped]", " [todo]", " [skip]"] {
        s = s.strip_suffix(suffix).unwrap_or(s);
    }
    if s.ends_with(')')
        && let Some(i) = s.rfind(" (retry x")
    {
        s = &s[..i];
    }
    strip_duration(s).trim_end()
}

/// A test or file line: (status, id, is_file).
pub(crate) fn result_line(line: &str) -> Option<(TestStatus, &str, bool)> {
    let trimmed = line.trim();
    let mut chars = trimmed.chars();
    let status = marker(chars.next()?)?;
    let rest = chars.as_str().strip_prefix(' ')?.trim();
    if needle!(" > ").find(rest.as_bytes()).is_some() {
        let id = clean_title(rest);
        // `❯` marks a file or suite, never a finished test.
        return (!trimmed.starts_with('❯') && !id.is_empty()).then_some((status, id, false));
    }
    // File summary line: `path (3 tests | 1 failed) 5ms`.
    let (path, counts) = rest.split_once(" (")?;
    if !(counts.contains("test") && (path.contains('.') || path.contains('/'))) || path.contains(' ') {
        return None;
    }
    let status = if counts.contains("failed") { TestStatus::Fail } else { status };
    Some((status, path, true))
}

impl LineParser for Parser {
    fn line(&mut self, line: &str) {
        if let Some((status, id, _)) = result_line(line) {
            self.parsed.record(id.to_owned(), Some(id.to_owned()), status);
            return;
        }
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("FAIL ") {
            let rest = rest.trim();
            let id = match rest.split_once(" [ ") {
                Some((file, _)) => file.trim(),
                None => clean_title(rest),
            };
            if !id.is_empty() && (id.contains(" > ") || id.contains('.') || id.contains('/')) {
                self.parsed.record(id.to_owned(), Some(id.to_owned()), TestStatus::Fail);
            }
        }
    }

    fn finish(self: Box<Self>) -> ParsedLog {
        self.parsed.into_parsed()
    }
}

/// Signature lines for detection.
pub(crate) fn signature(line: &str) -> bool {
    result_line(line).is_some_and(|(_, id, _)| id.contains(" > ")) || line.trim_start().starts_with("Test Files ")
}
