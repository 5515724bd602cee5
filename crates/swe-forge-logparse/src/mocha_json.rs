//! The mocha `--reporter json` parser: one JSON object with `stats`, `tests`, `pending`,
//! `failures` and `passes` arrays, each test carrying `title`, `fullTitle` and `file`. Read
//! element by element from the log (see `json_doc.rs`); `passes` are PASS, `failures` FAIL,
//! `pending` SKIP (`tests` repeats them and is ignored). A failed hook (`"before all" hook for
//! "x"`) is a warning: the tests it guarded never ran and are absent.
//!
//! Canonical id: `<file> > <parent> > <title>` where `<parent>` is `fullTitle` without the
//! title (mocha joins nested describe titles with spaces, so they stay one segment) and
//! `<file>` is relative as in `jest-json`; without `file`, `<parent> > <title>`.
//! Multi-SWE-bench name: `fullTitle` (the describe titles and the title joined with spaces,
//! `Route errors should handle errors via arity 4 functions`), as its handlers of mocha's JSON
//! reporter take it (expressjs/express's `parse_json_log`); the title when there is none.

use std::collections::BTreeSet;
use std::fmt;
use std::io::BufRead;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use swe_forge_core::TestStatus;

use crate::json_doc::{self, De, JsonReport};
use crate::{ParsedLog, Recorder, jest_json};

#[derive(Default)]
struct State {
    parsed: Recorder,
    hooks: Vec<String>,
}

#[derive(Deserialize)]
struct Test {
    #[serde(default)]
    title: String,
    #[serde(rename = "fullTitle", default)]
    full_title: String,
    #[serde(default)]
    file: Option<String>,
}

impl State {
    fn test(&mut self, t: Test, status: TestStatus) {
        if is_hook(&t.title) {
            if status == TestStatus::Fail {
                self.hooks.push(t.full_title);
            }
            return;
        }
        let parent = t.full_title.strip_suffix(t.title.as_str()).unwrap_or("").trim_end();
        let mut id = String::new();
        if let Some(file) = t.file.as_deref().filter(|f| !f.is_empty()) {
            id.push_str(&jest_json::relative(file, &BTreeSet::new()));
            id.push_str(" > ");
        }
        if !parent.is_empty() {
            id.push_str(parent);
            id.push_str(" > ");
        }
        id.push_str(&t.title);
        let msb = if t.full_title.trim().is_empty() { t.title } else { t.full_title };
        self.parsed.record(id, Some(msb), status);
    }
}

/// `"before all" hook for "x"`, `"after each" hook in "suite"`.
pub(crate) fn is_hook(title: &str) -> bool {
    title.starts_with('"')
        && (title.contains("\" hook for \"") || title.contains("\" hook in \"") || title.ends_with("\" hook"))
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
        f.write_str("a mocha report")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Top { st, recognised } = self;
        while let Some(key) = map.next_key::<String>()? {
            let status = match key.as_str() {
                "passes" => TestStatus::Pass,
                "failures" => TestStatus::Fail,
                "pending" => TestStatus::Skip,
                "stats" => {
                    *recognised = true;
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *recognised = true;
            map.next_value_seed(Tests { st: &mut *st, status })?;
        }
        Ok(())
    }
}

struct Tests<'a> {
    st: &'a mut State,
    status: TestStatus,
}

impl<'de> DeserializeSeed<'de> for Tests<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Tests<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of tests")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(t) = seq.next_element::<Test>()? {
            self.st.test(t, self.status);
        }
        Ok(())
    }
}

impl JsonReport for State {
    fn value(&mut self, de: &mut De<'_>) -> (bool, serde_json::Result<()>) {
        let mut recognised = false;
        let result = Top { st: self, recognised: &mut recognised }.deserialize(de);
        (recognised, result)
    }
}

pub(crate) fn parse(reader: impl BufRead) -> ParsedLog {
    let mut st = State::default();
    let warnings = json_doc::drive(reader, &mut st);
    if !st.hooks.is_empty() {
        let names: Vec<&str> = st.hooks.iter().map(String::as_str).collect();
        st.parsed.warnings.push(format!(
            "{} hook(s) failed; the tests they guard did not run and are left out: {}",
            names.len(),
            crate::list(&names)
        ));
    }
    st.parsed.warnings.extend(warnings);
    st.parsed.into_parsed()
}

#[cfg(test)]
mod tests {
    use crate::{Framework, msb_rollup, parse};

    #[test]
    fn multi_swe_bench_names_are_full_titles() {
        // express's reporter output, nested describes: its handler names tests by fullTitle.
        let log = r#"{"stats":{"tests":2},"tests":[],"pending":[],"failures":[
  {"title":"should handle errors via arity 4 functions","fullTitle":"Route errors should handle errors via arity 4 functions","file":"/app/test/Route.js"}],
 "passes":[{"title":"should work","fullTitle":"Route .all should work","file":"/app/test/Route.js"},
  {"title":"lonely","fullTitle":"","file":"/app/test/x.js"}]}"#;
        let p = parse(Framework::MochaJson, log.as_bytes());
        let names: Vec<String> = msb_rollup(&p).into_keys().collect();
        assert_eq!(
            names,
            ["Route .all should work", "Route errors should handle errors via arity 4 functions", "lonely"]
        );
        assert!(
            p.tests.contains_key("/app/test/Route.js > Route errors > should handle errors via arity 4 functions"),
            "{:?}",
            p.tests
        );
    }
}
