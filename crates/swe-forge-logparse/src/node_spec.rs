//! The node:test spec reporter parser (`node --test`, the default reporter on a terminal and
//! `--test-reporter=spec`): `▶ name` opens a suite or a test with subtests (two spaces of
//! indentation a level), `✔ name (1.2ms)` passed, `✖ name (1.2ms)` failed, `﹣ name (…) # SKIP`
//! skipped; a `# TODO` or `# SKIP` directive makes any result SKIP. The `✖ failing tests:`
//! list after the `ℹ` summary repeats failures without their parents and is not read.
//!
//! Canonical id: `<parent> > … > <name>`; parents (suites, tests with subtests) get their own
//! result under their own id, as node reports one. Node 20 does not name the file, so two
//! files with the same names share ids (FAIL if either failed). Multi-SWE-bench name: the name.

use swe_forge_core::TestStatus;

use crate::text::{indent, strip_duration};
use crate::{LineParser, ParsedLog, Recorder};

/// Line-by-line state of a node:test spec log.
#[derive(Default)]
pub(crate) struct Parser {
    parsed: Recorder,
    stack: Vec<(usize, String)>,
    in_failing_list: bool,
}

/// The name without directive and duration, and whether a directive made it SKIP.
fn name_and_directive(rest: &str) -> (&str, bool) {
    let (name, skip) = match rest.contains('#').then(|| rest.rfind(" # ")).flatten() {
        Some(i) => {
            let d = rest[i + 3..].trim_start().to_ascii_uppercase();
            // node writes the skip reason itself (`# not today`) after a `﹣` marker.
            (&rest[..i], d.starts_with("SKIP") || d.starts_with("TODO"))
        }
        None => (rest, false),
    };
    (strip_duration(name), skip)
}

/// A result line: (status, name).
pub(crate) fn result_line(trimmed: &str) -> Option<(TestStatus, &str)> {
    let (status, rest) = if let Some(r) = trimmed.strip_prefix("✔ ") {
        (TestStatus::Pass, r)
    } else if let Some(r) = trimmed.strip_prefix("✖ ") {
        (TestStatus::Fail, r)
    } else if let Some(r) = trimmed.strip_prefix("﹣ ") {
        (TestStatus::Skip, r)
    } else {
        return None;
    };
    let (name, skip) = if status == TestStatus::Skip {
        // `﹣ name (0.1ms) # reason`: the part after `#` is the reason.
        let name = rest.contains('#').then(|| rest.rfind(" # ")).flatten().map_or(rest, |i| &rest[..i]);
        (strip_duration(name), true)
    } else {
        name_and_directive(rest)
    };
    if name.is_empty() || name == "failing tests:" {
        return None;
    }
    Some((if skip { TestStatus::Skip } else { status }, name))
}

impl LineParser for Parser {
    fn line(&mut self, line: &str) {
        let trimmed = line.trim();
        if trimmed == "✖ failing tests:" {
            self.in_failing_list = true;
            return;
        }
        let level = indent(line);
        if let Some(name) = trimmed.strip_prefix("▶ ") {
            self.in_failing_list = false;
            self.stack.retain(|(i, _)| *i < level);
            self.stack.push((level, strip_duration(name).to_owned()));
            return;
        }
        let Some((status, name)) = result_line(trimmed) else { return };
        if self.in_failing_list {
            if status == TestStatus::Fail {
                return;
            }
            self.in_failing_list = false;
        }
        let mut id = String::new();
        for (_, parent) in self.stack.iter().filter(|(i, _)| *i < level) {
            id.push_str(parent);
            id.push_str(" > ");
        }
        id.push_str(name);
        self.parsed.record_worst(id, Some(name.to_owned()), status);
    }

    fn finish(self: Box<Self>) -> ParsedLog {
        self.parsed.into_parsed()
    }
}

/// Signature lines for detection.
pub(crate) fn signature(line: &str) -> bool {
    let t = line.trim_start();
    ["ℹ tests ", "ℹ pass ", "ℹ fail ", "ℹ duration_ms "].iter().any(|p| t.starts_with(p))
}
