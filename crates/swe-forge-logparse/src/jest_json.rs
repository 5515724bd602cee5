//! The jest `--json` and vitest `--reporter json` parser (both write jest's report shape):
//! `testResults[]` holds one entry per test file (`name`, `status`, `assertionResults[]` with
//! `ancestorTitles`, `title`, `status`). The report is read element by element from the log
//! (see `json_doc.rs`); jest's text report on stderr may surround it.
//!
//! Canonical ids: `<path> > <ancestor> > … > <title>` for tests, `<path>` for each file (FAIL
//! when it failed to load, with a warning); `passed` is PASS, `failed` FAIL, `pending`,
//! `skipped`, `todo` and `disabled` SKIP. Multi-SWE-bench names: `<path>:<title>` and `<path>`.
//! `<path>` is the file's path relative to the project: the report holds absolute paths, so
//! the validator's repository directory `/testbed/` is removed, or else the relative path
//! jest printed for the same file in a `PASS`/`FAIL` line of the log; otherwise it stays
//! absolute.

use std::collections::BTreeSet;
use std::fmt;
use std::io::BufRead;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use swe_forge_core::TestStatus;

use crate::json_doc::{self, De, JsonReport};
use crate::{ParsedLog, Recorder, jest_text};

/// Directories removed from the front of report paths: where the validator puts repositories.
pub(crate) const REPO_ROOTS: &[&str] = &["/testbed/"];

#[derive(Default)]
struct State {
    parsed: Recorder,
    /// Relative paths seen in `PASS`/`FAIL` text lines.
    seen_paths: BTreeSet<String>,
    failed_to_load: Vec<String>,
}

#[derive(Deserialize)]
struct Assertion {
    #[serde(rename = "ancestorTitles", default)]
    ancestors: Vec<String>,
    #[serde(default)]
    title: String,
    #[serde(default)]
    status: String,
}

/// A report path relative to the project, see the module docs.
pub(crate) fn relative(path: &str, seen: &BTreeSet<String>) -> String {
    for root in REPO_ROOTS {
        if let Some(rest) = path.strip_prefix(root) {
            return rest.to_owned();
        }
    }
    seen.iter()
        .filter(|r| path.len() > r.len() && path.ends_with(r.as_str()) && path[..path.len() - r.len()].ends_with('/'))
        .max_by_key(|r| r.len())
        .cloned()
        .unwrap_or_else(|| path.to_owned())
}

impl State {
    fn file(&mut self, name: Option<String>, status: Option<String>, assertions: Vec<Assertion>) {
        let Some(name) = name else { return };
        let path = relative(&name, &self.seen_paths);
        for a in &assertions {
            let status = match a.status.as_str() {
                "passed" => TestStatus::Pass,
                "failed" => TestStatus::Fail,
                "pending" | "skipped" | "todo" | "disabled" => TestStatus::Skip,
                _ => continue,
            };
            let mut id = path.clone();
            for part in a.ancestors.iter().chain(std::iter::once(&a.title)) {
                id.push_str(" > ");
                id.push_str(part);
            }
            self.parsed.record(id, Some(format!("{path}:{}", a.title)), status);
        }
        let file_status = match status.as_deref() {
            Some("passed") => Some(TestStatus::Pass),
            Some("failed") => Some(TestStatus::Fail),
            Some("skipped" | "pending") => Some(TestStatus::Skip),
            _ => None,
        };
        if file_status == Some(TestStatus::Fail) && assertions.is_empty() {
            self.failed_to_load.push(path.clone());
        }
        if let Some(s) = file_status {
            self.parsed.record(path.clone(), Some(path), s);
        }
    }
}

struct Top<'a> {
    st: &'a mut State,
    recognised: &'a mut bool,
}

impl<'de> DeserializeSeed<'de> for Top<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a jest report")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Top { st, recognised } = self;
        while let Some(key) = map.next_key::<String>()? {
            if key == "testResults" {
                *recognised = true;
                map.next_value_seed(Files { st: &mut *st })?;
            } else {
                if key.starts_with("numTotalTest") {
                    *recognised = true;
                }
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

struct Files<'a> {
    st: &'a mut State,
}

impl<'de> DeserializeSeed<'de> for Files<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Files<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of test files")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(File { st: &mut *self.st })?.is_some() {}
        Ok(())
    }
}

struct File<'a> {
    st: &'a mut State,
}

impl<'de> DeserializeSeed<'de> for File<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for File<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a test file result")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let (mut name, mut status, mut assertions) = (None, None, Vec::new());
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "name" => name = Some(map.next_value::<String>()?),
                "status" => status = Some(map.next_value::<String>()?),
                "assertionResults" => assertions = map.next_value::<Vec<Assertion>>()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        self.st.file(name, status, assertions);
        Ok(())
    }
}

impl JsonReport for State {
    fn value(&mut self, de: &mut De<'_>) -> (bool, serde_json::Result<()>) {
        let mut recognised = false;
        let result = Top { st: self, recognised: &mut recognised }.deserialize(de);
        (recognised, result)
    }

    fn text_line(&mut self, line: &str) {
        if let Some((_, path)) = jest_text::file_line(line) {
            self.seen_paths.insert(path.to_owned());
        }
    }
}

pub(crate) fn parse(reader: impl BufRead) -> ParsedLog {
    let mut st = State::default();
    let warnings = json_doc::drive(reader, &mut st);
    if !st.failed_to_load.is_empty() {
        let names: Vec<&str> = st.failed_to_load.iter().map(String::as_str).collect();
        st.parsed.warnings.push(format!(
            "{} test file(s) failed without running any test (does not load?): {}",
            names.len(),
            crate::list(&names)
        ));
    }
    st.parsed.warnings.extend(warnings);
    st.parsed.into_parsed()
}

/// Whether `line` opens a jest or vitest JSON report (for detection): (is jest, is vitest).
pub(crate) fn signature(line: &str) -> Option<bool> {
    let t = line.trim_start();
    if t.starts_with("{\"numFailedTestSuites\"") {
        Some(true)
    } else if t.starts_with("{\"numTotalTestSuites\"") {
        Some(false)
    } else {
        None
    }
}
