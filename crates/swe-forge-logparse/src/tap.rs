//! The Test Anything Protocol parser (TAP 12-14, including node:test's `--test-reporter=tap`
//! and `prove -v`): `ok N - description`, `not ok N - description`, `# SKIP` / `# TODO`
//! directives, `1..N` plans, YAML diagnostics (`---` … `...`, skipped), `Bail out!`, and
//! subtests indented by four spaces a level with their `# Subtest: name` headers.
//!
//! `ok` is PASS, `not ok` FAIL, a `SKIP` or `TODO` directive SKIP (a TODO test's failure does
//! not count, per TAP). Canonical id: `<file>::<parent> > … > <description>` where `<file>` is
//! the script of a `prove -v` header (`t/basic.t ..`), left out for a bare TAP stream, and
//! the parents are the enclosing `# Subtest:` names; a test without description is `#N`.
//! Multi-SWE-bench name: the description. A plan that promises more top-level tests than
//! reported, or a `# Subtest:` whose result never comes (a crashed script, a cut log), gives
//! a warning; the missing tests are absent.

use swe_forge_core::TestStatus;

use crate::text::indent;
use crate::{LineParser, ParsedLog, Recorder};

/// Line-by-line state of a TAP stream.
#[derive(Default)]
pub(crate) struct Parser {
    parsed: Recorder,
    file: Option<String>,
    /// `# Subtest:` names by depth.
    subtests: Vec<String>,
    /// Indentation of the YAML block being skipped.
    yaml: Option<usize>,
    /// Top-level plan and results of the current file.
    plan: Option<u64>,
    top_results: u64,
    duplicates: usize,
}

/// `ok 3 - name # SKIP why`: (ok, number, description, directive says skip).
pub(crate) fn test_line(trimmed: &str) -> Option<(bool, Option<u64>, &str, bool)> {
    let (ok, rest) = if let Some(r) = trimmed.strip_prefix("not ok") {
        (false, r)
    } else if let Some(r) = trimmed.strip_prefix("ok") {
        (true, r)
    } else {
        return None;
    };
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let rest = rest.trim_start();
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let number = rest[..digits].parse().ok();
    let rest = rest[digits..].trim_start();
    let rest = rest.strip_prefix("- ").unwrap_or(rest.strip_prefix('-').unwrap_or(rest));
    let (desc, skip) = match rest.find('#') {
        Some(i) if !rest[..i].ends_with('\\') => {
            let d = rest[i + 1..].trim_start().to_ascii_uppercase();
            if d.starts_with("SKIP") || d.starts_with("TODO") { (&rest[..i], true) } else { (rest, false) }
        }
        _ => (rest, false),
    };
    Some((ok, number, desc.trim(), skip))
}

/// `t/basic.t ..` (a `prove -v` header): the script.
fn prove_header(line: &str) -> Option<&str> {
    let (file, dots) = line.trim_end().split_once(' ')?;
    let dots = dots.split_whitespace().next()?;
    (dots.len() >= 2
        && dots.bytes().all(|b| b == b'.')
        && (file.contains('.') || file.contains('/'))
        && !line.starts_with(' '))
    .then_some(file)
}

impl Parser {
    fn end_file(&mut self) {
        if let Some(plan) = self.plan.take()
            && self.top_results < plan
        {
            let what = self.file.as_deref().map_or_else(String::new, |f| format!(" of {f}"));
            self.parsed.warnings.push(format!(
                "the TAP plan{what} promised {plan} tests but {} reported (crashed or truncated?); the rest are left out",
                self.top_results
            ));
        }
        if !self.subtests.is_empty() {
            let what = self.file.as_deref().map_or_else(String::new, |f| format!("{f}: "));
            self.parsed.warnings.push(format!(
                "{what}TAP stream ends inside subtest {} (crashed or truncated?); its missing results are absent",
                self.subtests.join(" > ")
            ));
        }
        self.top_results = 0;
        self.subtests.clear();
    }
}

impl LineParser for Parser {
    fn line(&mut self, line: &str) {
        let level = indent(line);
        let trimmed = line.trim();
        if let Some(yaml_indent) = self.yaml {
            if trimmed == "..." && level <= yaml_indent + 2 || (!trimmed.is_empty() && level < yaml_indent) {
                self.yaml = None;
            }
            if self.yaml.is_some() || trimmed == "..." {
                return;
            }
        }
        if trimmed == "---" {
            self.yaml = Some(level);
            return;
        }
        if let Some(file) = prove_header(line) {
            self.end_file();
            self.file = Some(file.to_owned());
            return;
        }
        let depth = level / 4;
        if let Some(name) = trimmed.strip_prefix("# Subtest:") {
            self.subtests.truncate(depth);
            self.subtests.push(name.trim().to_owned());
            return;
        }
        if trimmed.starts_with("Bail out!") {
            self.parsed.warnings.push(format!("TAP stream bailed out: {trimmed}"));
            return;
        }
        if depth == 0
            && let Some(plan) = trimmed.strip_prefix("1..")
        {
            if let Some(n) = plan.split_whitespace().next().and_then(|n| n.parse().ok()) {
                self.plan = Some(n);
            }
            return;
        }
        let Some((ok, number, desc, skip)) = test_line(trimmed) else { return };
        if depth == 0 {
            self.top_results += 1;
        }
        let desc = if desc.is_empty() { format!("#{}", number.unwrap_or(0)) } else { desc.to_owned() };
        let mut id = self.file.as_deref().map_or_else(String::new, |f| format!("{f}::"));
        for parent in self.subtests.iter().take(depth) {
            id.push_str(parent);
            id.push_str(" > ");
        }
        id.push_str(&desc);
        let status = if skip {
            TestStatus::Skip
        } else if ok {
            TestStatus::Pass
        } else {
            TestStatus::Fail
        };
        if self.parsed.tests.contains_key(&id) {
            self.duplicates += 1;
        }
        self.parsed.record_worst(id, Some(desc), status);
        self.subtests.truncate(depth);
    }

    fn finish(mut self: Box<Self>) -> ParsedLog {
        self.end_file();
        if self.duplicates > 0 {
            self.parsed.warnings.push(format!(
                "{} TAP result(s) repeat an earlier description; each such id is FAIL if any of them failed",
                self.duplicates
            ));
        }
        self.parsed.into_parsed()
    }
}

/// Signature lines for detection.
pub(crate) fn signature(line: &str) -> bool {
    let t = line.trim();
    t.starts_with("TAP version")
        || t.starts_with("# Subtest:")
        || (line == t && test_line(t).is_some_and(|(_, n, _, _)| n.is_some()))
}
