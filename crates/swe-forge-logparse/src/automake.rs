//! The automake parallel test harness parser (`make check`): one line per test script,
//! `PASS: tests/a.sh`, `FAIL:`, `SKIP:`, `XFAIL:` (an expected failure: PASS), `XPASS:` (an
//! unexpected pass: FAIL) and `ERROR:` (FAIL); with the TAP driver, one line per TAP result,
//! `PASS: tests/t.tap 2 - description # SKIP why`. The `# TOTAL:` summary is not read.
//! [`parse_trs_files`] reads the `.trs` files the harness leaves next to each test's log.
//!
//! Canonical id: the script as printed; `<script>::<description>` for a TAP-driver result
//! (`<script>::#N` without description). Multi-SWE-bench name: the script. From `.trs` files:
//! the `.trs` path without its extension (automake drops the script's extension when it is in
//! `TEST_EXTENSIONS`), with the `:global-test-result:`.

use swe_forge_core::TestStatus;

use crate::{LineParser, ParsedLog, Recorder, tap, worst};

/// Line-by-line state of a `make check` log.
#[derive(Default)]
pub(crate) struct Parser {
    parsed: Recorder,
}

fn status_of(word: &str) -> Option<TestStatus> {
    match word {
        "PASS" | "XFAIL" => Some(TestStatus::Pass),
        "FAIL" | "XPASS" | "ERROR" => Some(TestStatus::Fail),
        "SKIP" => Some(TestStatus::Skip),
        _ => None,
    }
}

/// `PASS: tests/a.sh` and TAP-driver lines: (status, script, TAP description).
pub(crate) fn result_line(line: &str) -> Option<(TestStatus, &str, Option<String>)> {
    let colon = line.find(':')?;
    let (word, rest) = (&line[..colon], line[colon + 1..].strip_prefix(' ')?);
    let status = status_of(word)?;
    let rest = rest.trim();
    let (script, tail) = match rest.split_once(' ') {
        Some((s, t)) => (s, t.trim()),
        None => (rest, ""),
    };
    if script.is_empty() {
        return None;
    }
    if tail.is_empty() {
        return Some((status, script, None));
    }
    // TAP driver: `2 - description # SKIP why`.
    let desc = match tap::test_line(&format!("ok {tail}")) {
        Some((_, number, "", _)) => format!("#{}", number.unwrap_or(0)),
        Some((_, _, desc, _)) => desc.to_owned(),
        None => tail.to_owned(),
    };
    Some((status, script, Some(desc)))
}

impl LineParser for Parser {
    fn line(&mut self, line: &str) {
        if let Some((status, script, desc)) = result_line(line) {
            let id = match desc {
                Some(d) => format!("{script}::{d}"),
                None => script.to_owned(),
            };
            self.parsed.record(id, Some(script.to_owned()), status);
        }
    }

    fn first_byte(&self) -> Option<crate::text::FirstByte> {
        Some(|b| matches!(b, b'P' | b'F' | b'S' | b'X' | b'E'))
    }

    fn finish(self: Box<Self>) -> ParsedLog {
        self.parsed.into_parsed()
    }
}

/// Reads automake `.trs` files: one result per file, keyed by the path without `.trs`.
pub(crate) fn parse_trs_files(files: &[&(String, Vec<u8>)]) -> ParsedLog {
    let mut parsed = Recorder::default();
    for (path, bytes) in files {
        let text = String::from_utf8_lossy(bytes);
        let mut global = None;
        let mut each: Option<TestStatus> = None;
        for line in text.lines() {
            if let Some(v) = line.strip_prefix(":global-test-result:") {
                global = status_of(v.trim());
            } else if let Some(v) = line.strip_prefix(":test-result:")
                && let Some(s) = v.split_whitespace().next().and_then(status_of)
            {
                each = Some(each.map_or(s, |e| worst(e, s)));
            }
        }
        let id = path.strip_suffix(".trs").unwrap_or(path).to_owned();
        match global.or(each) {
            Some(status) => parsed.record(id.clone(), Some(id), status),
            None => parsed.warnings.push(format!("{path}: no test result in the .trs file (test still running?)")),
        }
    }
    parsed.into_parsed()
}

/// Signature lines for detection (strong ones count more).
pub(crate) fn signature(line: &str) -> u32 {
    let t = line.trim();
    if t.starts_with("# TOTAL:") || t.starts_with("Testsuite summary for ") {
        100
    } else {
        u32::from(result_line(line).is_some())
    }
}
