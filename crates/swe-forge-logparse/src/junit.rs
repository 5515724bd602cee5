//! JUnit XML in all its dialects, read as a stream of XML events (quick-xml): Surefire and
//! Gradle (`junit-xml`), ctest `--output-junit` (`ctest-junit`), GoogleTest
//! `--gtest_output=xml` (`gtest-xml`), Catch2 `-r junit` (`catch2-junit`) and cargo-nextest
//! (`nextest-junit`). Several documents may follow each other (one log holding several
//! reports, or [`crate::parse_files`] feeding one file after another).
//!
//! A `<testcase>` is FAIL when it holds `<failure>` or `<error>`, SKIP when it holds `<skipped>`
//! or its `status` / `result` attribute says it did not run (`notrun`, `disabled`,
//! `suppressed`, `skipped`), PASS otherwise; `<flakyFailure>` / `<flakyError>` (passed on a
//! rerun) and `<rerunFailure>` (kept with the final `<failure>`) do not change that. An id
//! reported twice (JUnit 5 repeated or dynamic tests, Catch2 sections of one test case, a retry
//! plugin's attempts) is FAIL if any report failed.
//!
//! Canonical ids per dialect:
//! - `junit-xml`: `<classname>#<name>` with the parameter list dropped (`isSmall(int)[1]` ->
//!   `isSmall[1]`), `<classname>` for a class-level error (empty name). When the classname is
//!   not a class (empty, or undotted and unlike its suite, as node:test's `classname="test"`),
//!   `<suite> > … > <name>` from the enclosing suites, as `node-test` names it. Multi-SWE-bench
//!   name: the class, or the name.
//! - `ctest-junit`: the test name (the ctest target). A test ctest did not run (`status="notrun"`:
//!   its executable is missing, a required file or fixture failed) is absent, as `Not Run` in
//!   ctest's text; one skipped by the test itself (`<skipped message="SKIP_RETURN_CODE=77"/>`,
//!   `SKIP_REGULAR_EXPRESSION_MATCHED`) is SKIP.
//! - `gtest-xml`: `<classname>.<name>`, as gtest prints it (`Small/ParamTest.IsSmall/2`). A
//!   testcase without `status` or `result` is gtest's listing (`--gtest_list_tests`), left out.
//! - `catch2-junit`: the test case: `name` up to its first `/` (the rest names a section).
//! - `nextest-junit`: `<binary>::<name>` with the binary named as in `cargo-test`
//!   (`mycrate`, `mycrate[bin]`, `integration`); the suite is `<crate>` for library unit
//!   tests, `<crate>::<target>` for integration tests, `<crate>::bin/<name>` for binaries.

use std::borrow::Cow;
use std::io::BufRead;

use quick_xml::events::{BytesStart, Event};
use swe_forge_core::TestStatus;

use crate::{Framework, ParsedLog, Recorder, surefire::java_method};

/// Reads JUnit XML documents into one [`ParsedLog`].
pub(crate) struct Parser {
    framework: Framework,
    parsed: Recorder,
    /// Names of the enclosing `<testsuite>` elements.
    suites: Vec<String>,
    /// The open `<testcase>`: id, Multi-SWE-bench name, status.
    case: Option<Case>,
    /// ctest tests whose executable was missing (not built) in the document being read.
    not_built: Vec<String>,
}

struct Case {
    id: String,
    msb: Option<String>,
    status: TestStatus,
    /// ctest did not run it (`status="notrun"` without a skip of the test's own): absent.
    not_run: bool,
}

/// An attribute's value, unescaped, decoded lossily.
fn attr<'a>(e: &'a BytesStart<'_>, key: &[u8]) -> Option<Cow<'a, str>> {
    let a = e.attributes().flatten().find(|a| a.key.as_ref() == key)?;
    let raw = match a.value {
        Cow::Borrowed(b) => String::from_utf8_lossy(b),
        Cow::Owned(b) => Cow::Owned(String::from_utf8_lossy(&b).into_owned()),
    };
    Some(match quick_xml::escape::unescape(&raw) {
        Ok(Cow::Borrowed(_)) => raw,
        Ok(Cow::Owned(s)) => Cow::Owned(s),
        Err(_) => raw,
    })
}

/// Nextest's suite name as the binary prefix of a `cargo-test` id.
fn nextest_binary(suite: &str) -> String {
    match suite.split_once("::") {
        None => suite.to_owned(),
        Some((_, target)) => match target.split_once('/') {
            Some(("bin", name)) => format!("{name}[bin]"),
            Some(("example", name)) => format!("{name}[example]"),
            Some(("bench", name)) => format!("{name}[bench]"),
            Some((_, name)) => name.to_owned(),
            None => target.to_owned(),
        },
    }
}

impl Parser {
    pub(crate) fn new(framework: Framework) -> Self {
        Parser { framework, parsed: Recorder::default(), suites: Vec::new(), case: None, not_built: Vec::new() }
    }

    /// Reads every XML event of `reader`; a malformed or truncated document ends with a warning.
    pub(crate) fn read(&mut self, reader: impl BufRead) {
        let (mut xml, guard) = crate::xml_bound::reader(reader);
        let config = xml.config_mut();
        config.check_end_names = false;
        config.allow_unmatched_ends = true;
        config.trim_text(true);
        let mut buf = Vec::new();
        let mut errors = 0usize;
        let mut first_error = None;
        loop {
            buf.clear();
            let before = xml.buffer_position();
            let event = xml.read_event_into(&mut buf);
            if event.is_ok() {
                guard.event_done();
            }
            match event {
                Ok(Event::Eof) => break,
                Ok(Event::Start(e)) => self.start(&e, false),
                Ok(Event::Empty(e)) => self.start(&e, true),
                Ok(Event::End(e)) => self.end(e.local_name().as_ref()),
                Ok(Event::Text(t)) if self.framework == Framework::CtestJunit => self.text(&t),
                Ok(_) => {}
                Err(e) => {
                    errors += 1;
                    first_error.get_or_insert_with(|| format!("at byte {}: {e}", xml.buffer_position()));
                    if errors > 100 || xml.buffer_position() == before {
                        break;
                    }
                }
            }
        }
        if let Some(e) = first_error {
            self.parsed.warnings.push(format!("XML report malformed or cut short ({e})"));
        }
        if let Some(case) = self.case.take() {
            self.parsed.warnings.push(format!("XML report ends inside test case {} (truncated?); left out", case.id));
        } else if let Some(suite) = self.suites.last() {
            self.parsed.warnings.push(format!(
                "XML report ends inside test suite {suite} (truncated?); its unreported test cases are absent"
            ));
        }
        self.suites.clear();
        if !self.not_built.is_empty() {
            let names = std::mem::take(&mut self.not_built);
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            self.parsed.build_failed(crate::not_built_warning(&names));
        }
    }

    fn start(&mut self, e: &BytesStart<'_>, empty: bool) {
        match e.local_name().as_ref() {
            b"testsuite" if !empty => {
                let name = attr(e, b"name").map(Cow::into_owned).unwrap_or_default();
                self.suites.push(name);
            }
            b"testcase" => {
                self.case = self.open_case(e);
                if empty {
                    self.close_case();
                }
            }
            b"failure" | b"error" => {
                if let Some(c) = &mut self.case {
                    c.status = TestStatus::Fail;
                }
            }
            b"skipped" => {
                // ctest marks a test whose executable is missing as skipped, as it does one the
                // test skipped itself (`SKIP_RETURN_CODE=77`): only the latter ran.
                let message = attr(e, b"message");
                let missing = self.framework == Framework::CtestJunit
                    && message.as_deref().is_some_and(|m| m.starts_with("Unable to find executable"));
                let skipped_itself = message.as_deref().is_some_and(|m| m.starts_with("SKIP_"));
                if let Some(c) = &mut self.case
                    && c.status != TestStatus::Fail
                {
                    c.status = TestStatus::Skip;
                    c.not_run &= !skipped_itself;
                    if missing {
                        self.not_built.push(c.id.clone());
                    }
                }
            }
            _ => {}
        }
    }

    /// Text inside a ctest test case: the test launcher's word that the executable is missing
    /// (`swe-forge: not run: <path> does not exist`, recipes/c-cmake.toml) makes it a test ctest
    /// did not run, as its own `Unable to find executable`.
    fn text(&mut self, text: &[u8]) {
        let Some(c) = &mut self.case else { return };
        if needle!("swe-forge: not run: ").find(text).is_some() {
            c.status = TestStatus::Skip;
            c.not_run = true;
            self.not_built.push(c.id.clone());
        }
    }

    fn end(&mut self, name: &[u8]) {
        match name {
            b"testcase" => self.close_case(),
            b"testsuite" => {
                self.suites.pop();
            }
            _ => {}
        }
    }

    fn open_case(&self, e: &BytesStart<'_>) -> Option<Case> {
        let name = attr(e, b"name").unwrap_or_default();
        let class = attr(e, b"classname").unwrap_or_default();
        let suite = self.suites.last().map(String::as_str).unwrap_or("");
        let not_run = |v: Option<Cow<'_, str>>| {
            v.is_some_and(|v| matches!(v.as_ref(), "notrun" | "disabled" | "suppressed" | "skipped"))
        };
        let status = if not_run(attr(e, b"status")) || not_run(attr(e, b"result")) {
            TestStatus::Skip
        } else {
            TestStatus::Pass
        };
        if self.framework == Framework::GtestXml && attr(e, b"status").is_none() && attr(e, b"result").is_none() {
            // gtest's listing (`--gtest_list_tests` with an XML output) names cases it never ran.
            return None;
        }
        let (id, msb) = match self.framework {
            Framework::CtestJunit => (name.to_string(), Some(name.to_string())),
            Framework::GtestXml => {
                let id = if class.is_empty() { name.to_string() } else { format!("{class}.{name}") };
                (id.clone(), Some(id))
            }
            Framework::Catch2Junit => {
                let case = name.split('/').next().unwrap_or(&name).to_owned();
                (case.clone(), Some(case))
            }
            Framework::NextestJunit => {
                let binary = nextest_binary(if suite.is_empty() { &class } else { suite });
                (format!("{binary}::{name}"), Some(name.to_string()))
            }
            _ => {
                if class.is_empty() || (!class.contains('.') && class != suite) {
                    // Not a Java class (node:test's reporter writes `classname="test"` and
                    // nests a `testsuite` per describe): the enclosing suites name the test.
                    let mut id = String::new();
                    for s in self.suites.iter().filter(|s| !s.is_empty()) {
                        id.push_str(s);
                        id.push_str(" > ");
                    }
                    id.push_str(&name);
                    (id, Some(name.to_string()))
                } else if name.is_empty() {
                    (class.to_string(), Some(class.to_string()))
                } else {
                    (format!("{class}#{}", java_method(&name)), Some(class.to_string()))
                }
            }
        };
        if id.is_empty() {
            return None;
        }
        let not_run =
            self.framework == Framework::CtestJunit && attr(e, b"status").is_some_and(|s| s.as_ref() == "notrun");
        Some(Case { id, msb, status, not_run })
    }

    fn close_case(&mut self) {
        let Some(case) = self.case.take() else { return };
        if case.not_run && case.status != TestStatus::Fail {
            return;
        }
        // A repeated test case is another test sharing the name (a repeated or dynamic test, a
        // Catch2 section) or a retry plugin's attempt: FAIL if any report failed.
        self.parsed.record_worst(case.id, case.msb, case.status);
    }

    pub(crate) fn finish(self) -> ParsedLog {
        self.parsed.into_parsed()
    }
}
