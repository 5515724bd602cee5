//! The GoogleTest text parser: `[ RUN      ] Suite.Test`, then `[       OK ] Suite.Test (0 ms)`,
//! `[  FAILED  ] Suite.Test (0 ms)` (with `, where GetParam() = …` for parameterised tests) or
//! `[  SKIPPED ] Suite.Test (0 ms)`; `[ DISABLED ] Suite.DISABLED_Test` is SKIP. Lines of
//! several binaries may follow each other (ctest), prefixed by ctest's `N: ` under `-V`.
//!
//! A result counts only for a test that is running (its `RUN` seen and no result yet), so the
//! closing `FAILED` list and lines a test prints itself are ignored; logs without any `RUN`
//! line (`--gtest_brief=1`) take every well-formed result. A test running when the log ends
//! (the binary crashed) is left out with a warning. Canonical id and Multi-SWE-bench name:
//! `Suite.Test` as gtest prints it (`Inst/Suite.Test/0` for parameterised tests).

use std::collections::BTreeSet;

use swe_forge_core::TestStatus;

use crate::{LineParser, ParsedLog, Recorder, list};

/// Line-by-line state of a gtest log.
#[derive(Default)]
pub(crate) struct Parser {
    parsed: Recorder,
    running: BTreeSet<String>,
    saw_run: bool,
}

pub(crate) enum Mark<'a> {
    Run(&'a str),
    Result(&'a str, TestStatus),
}

/// A gtest marker line (ctest's `N: ` prefix allowed).
pub(crate) fn mark(line: &str) -> Option<Mark<'_>> {
    let mut t = line.trim_start();
    if t.starts_with(|c: char| c.is_ascii_digit())
        && let Some((num, rest)) = t.split_once(": ")
        && !num.is_empty()
        && num.bytes().all(|b| b.is_ascii_digit())
    {
        t = rest;
    }
    let rest = t.strip_prefix('[')?;
    let (tag, rest) = rest.split_once(']')?;
    let name = rest.split_whitespace().next()?.trim_end_matches(',');
    if name.is_empty() {
        return None;
    }
    Some(match tag.trim() {
        "RUN" => Mark::Run(name),
        "OK" => Mark::Result(name, TestStatus::Pass),
        "FAILED" => Mark::Result(name, TestStatus::Fail),
        "SKIPPED" | "DISABLED" => Mark::Result(name, TestStatus::Skip),
        _ => return None,
    })
}

/// `Suite.Test`, `Inst/Suite.Test/0`.
fn well_formed(name: &str) -> bool {
    name.contains('.')
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_alphanumeric() || matches!(c, '.' | '/' | '_' | '-' | '<' | '>' | ':'))
}

impl LineParser for Parser {
    fn line(&mut self, line: &str) {
        match mark(line) {
            Some(Mark::Run(name)) => {
                self.saw_run = true;
                self.running.insert(name.to_owned());
            }
            Some(Mark::Result(name, status)) => {
                let disabled = status == TestStatus::Skip && line.contains("DISABLED ]");
                let counts = self.running.remove(name) || ((!self.saw_run || disabled) && well_formed(name));
                if counts {
                    self.parsed.record(name.to_owned(), Some(name.to_owned()), status);
                }
            }
            None => {}
        }
    }

    fn first_byte(&self) -> Option<crate::text::FirstByte> {
        Some(|b| b == b'[' || b.is_ascii_digit())
    }

    fn finish(mut self: Box<Self>) -> ParsedLog {
        if !self.running.is_empty() {
            let names: Vec<&str> = self.running.iter().map(String::as_str).collect();
            self.parsed.warnings.push(format!(
                "{} gtest test(s) started without a result (crashed or truncated?); left out: {}",
                names.len(),
                list(&names)
            ));
        }
        self.parsed.into_parsed()
    }
}

/// Signature lines for detection.
pub(crate) fn signature(line: &str) -> bool {
    mark(line).is_some() || line.starts_with("[==========] ")
}
