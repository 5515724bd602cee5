//! The jest text parser (default and `--verbose` reporters, stderr merged into stdout).
//!
//! A file block starts with `PASS <path>` or `FAIL <path>` at the start of a line; with
//! `--verbose` (or a single test file) the block lists each test as `✓ title (5 ms)`,
//! `✕ title`, `○ skipped title` or `✎ todo title`, nested under unmarked `describe` lines by
//! indentation; failures are detailed as `● describe › title`, which names failing tests even
//! without `--verbose`.
//!
//! Canonical ids: `<path> > <describe> > … > <title>` for tests, `<path>` for the file itself
//! (its PASS/FAIL line, so a file that fails to load is FAIL). Multi-SWE-bench names:
//! `<path>:<title>` and `<path>`. Tests jest never printed (a process that exited half way,
//! a non-verbose run with several files) are absent.

use swe_forge_core::TestStatus;

use crate::text::{indent, strip_duration};
use crate::{LineParser, ParsedLog, Recorder};

/// Line-by-line state of a jest log.
#[derive(Default)]
pub(crate) struct Parser {
    parsed: Recorder,
    file: Option<String>,
    /// Enclosing `describe` blocks: (indentation, name).
    stack: Vec<(usize, String)>,
    /// After the first `●` detail of the current file: no more describe lines.
    in_details: bool,
    /// The canonical id being built, kept to reuse its allocation.
    id: String,
}

/// `PASS tests/a.test.js (5.1 s)`: the status and the path.
pub(crate) fn file_line(line: &str) -> Option<(TestStatus, &str)> {
    let (status, rest) = if let Some(r) = line.strip_prefix("PASS ") {
        (TestStatus::Pass, r)
    } else if let Some(r) = line.strip_prefix("FAIL ") {
        (TestStatus::Fail, r)
    } else {
        return None;
    };
    let path = strip_duration(rest.trim());
    let looks_like_path = !path.is_empty() && (path.contains('.') || path.contains('/')) && !path.contains(" > ");
    looks_like_path.then_some((status, path))
}

/// `✓ title (5 ms)` and friends: the status and the title.
pub(crate) fn test_line(trimmed: &str) -> Option<(TestStatus, &str)> {
    let mut chars = trimmed.chars();
    let marker = chars.next()?;
    let rest = chars.as_str().strip_prefix(' ')?;
    let (status, title) = match marker {
        '✓' | '√' => (TestStatus::Pass, rest),
        '✕' | '×' => (TestStatus::Fail, rest),
        '○' => (TestStatus::Skip, rest.strip_prefix("skipped ").unwrap_or(rest)),
        '✎' => (TestStatus::Skip, rest.strip_prefix("todo ").unwrap_or(rest)),
        _ => return None,
    };
    let title = strip_duration(title);
    (!title.is_empty()).then_some((status, title))
}

/// Writes the id of test `title` at indentation `level` into `id`: the file, the enclosing
/// `describe` blocks, the title.
fn build_id(id: &mut String, file: &str, stack: &[(usize, String)], level: usize, title: &str) {
    id.clear();
    id.push_str(file);
    for (_, name) in stack.iter().filter(|(i, _)| *i < level) {
        id.push_str(" > ");
        id.push_str(name);
    }
    id.push_str(" > ");
    id.push_str(title);
}

impl LineParser for Parser {
    fn line(&mut self, line: &str) {
        if let Some((status, path)) = file_line(line) {
            self.file = Some(path.to_owned());
            self.stack.clear();
            self.in_details = false;
            self.parsed.record(path.to_owned(), Some(path.to_owned()), status);
            return;
        }
        let Some(file) = self.file.as_deref() else { return };
        let level = indent(line);
        let trimmed = line.trim();
        if level == 0 || trimmed.is_empty() {
            if level == 0 && !trimmed.is_empty() {
                self.in_details = true; // summary or other output after the block
            }
            return;
        }
        if let Some(detail) = trimmed.strip_prefix("● ") {
            let detail = detail.trim();
            if level == 2 && detail != "Console" && detail != "Test suite failed to run" && !detail.is_empty() {
                let parts: Vec<&str> = detail.split(" › ").collect();
                let title = parts.last().copied().unwrap_or(detail);
                let id = format!("{file} > {}", parts.join(" > "));
                let msb = format!("{file}:{title}");
                self.parsed.record(id, Some(msb), TestStatus::Fail);
            }
            self.in_details = true;
            return;
        }
        if self.in_details {
            return;
        }
        if let Some((status, title)) = test_line(trimmed) {
            build_id(&mut self.id, file, &self.stack, level, title);
            self.parsed.record_str(&self.id, || Some(format!("{file}:{title}")), status);
            return;
        }
        self.stack.retain(|(i, _)| *i < level);
        self.stack.push((level, trimmed.to_owned()));
    }

    fn finish(self: Box<Self>) -> ParsedLog {
        self.parsed.into_parsed()
    }
}

/// Signature lines for detection.
pub(crate) fn signature(line: &str) -> bool {
    file_line(line).is_some() || line.starts_with("Test Suites: ")
}
