//! The Catch2 XML reporter parser (`-r xml`, v2 `<Catch>` and v3 `<Catch2TestRun>` roots),
//! read as a stream of XML events: each `<TestCase name="…">` ends with
//! `<OverallResult success="true|false" skips="N"/>`. success false is FAIL; true with skips
//! SKIP; true PASS. A test case without `OverallResult` (the binary crashed, the report was cut)
//! is left out with a warning. Canonical id and Multi-SWE-bench name: the test case name.

use std::io::BufRead;

use quick_xml::events::{BytesStart, Event};
use swe_forge_core::TestStatus;

use crate::{ParsedLog, Recorder, list};

fn attr(e: &BytesStart<'_>, key: &[u8]) -> Option<String> {
    let a = e.attributes().flatten().find(|a| a.key.as_ref() == key)?;
    let raw = String::from_utf8_lossy(&a.value).into_owned();
    Some(quick_xml::escape::unescape(&raw).map(|c| c.into_owned()).unwrap_or(raw))
}

pub(crate) fn parse(reader: impl BufRead) -> ParsedLog {
    let mut parsed = Recorder::default();
    let (mut xml, guard) = crate::xml_bound::reader(reader);
    let config = xml.config_mut();
    config.check_end_names = false;
    config.allow_unmatched_ends = true;
    let mut buf = Vec::new();
    // Open test case: name, result once seen.
    let mut case: Option<(String, Option<TestStatus>)> = None;
    let mut unfinished = Vec::new();
    let mut errors = 0usize;
    loop {
        buf.clear();
        let before = xml.buffer_position();
        let event = xml.read_event_into(&mut buf);
        if event.is_ok() {
            guard.event_done();
        }
        let event = match event {
            Ok(Event::Eof) => break,
            Ok(e) => e,
            Err(e) => {
                errors += 1;
                if errors > 100 || xml.buffer_position() == before {
                    parsed.warnings.push(format!("XML report unreadable at byte {}: {e}", xml.buffer_position()));
                    break;
                }
                continue;
            }
        };
        match event {
            Event::Start(e) if e.local_name().as_ref() == b"TestCase" => {
                if let Some((name, None)) = case.take() {
                    unfinished.push(name);
                }
                case = attr(&e, b"name").filter(|n| !n.is_empty()).map(|n| (n, None));
            }
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == b"OverallResult" => {
                if let Some((_, result)) = &mut case {
                    let success = attr(&e, b"success").is_some_and(|v| v == "true");
                    let skips = attr(&e, b"skips").and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
                    *result = Some(if !success {
                        TestStatus::Fail
                    } else if skips > 0 {
                        TestStatus::Skip
                    } else {
                        TestStatus::Pass
                    });
                }
            }
            Event::End(e) if e.local_name().as_ref() == b"TestCase" => match case.take() {
                Some((name, Some(status))) => parsed.record_worst(name.clone(), Some(name), status),
                Some((name, None)) => unfinished.push(name),
                None => {}
            },
            _ => {}
        }
    }
    if let Some((name, result)) = case.take() {
        match result {
            Some(status) => parsed.record_worst(name.clone(), Some(name), status),
            None => unfinished.push(name),
        }
    }
    if !unfinished.is_empty() {
        let names: Vec<&str> = unfinished.iter().map(String::as_str).collect();
        parsed.warnings.push(format!(
            "{} Catch2 test case(s) without a result (crashed or truncated?); left out: {}",
            names.len(),
            list(&names)
        ));
    }
    parsed.into_parsed()
}
