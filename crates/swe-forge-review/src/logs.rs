//! Run logs as the page shows them: `go test -json` decoded into the text `go test` would have
//! printed (each line remembering the test it came from), and every log cut into per-test
//! sections, the line ranges that belong to each test of the instance's table.
//!
//! Sections are exact for `go test -json` (each event names its package and test). For other
//! logs they are found by name: a line that names the test (its last part: `TestX`, `method`,
//! the title after the last ` > `), and the lines after it until one names another test, a
//! line starts flush left after a blank line, or 40 lines have gone by, which catches cargo's
//! `---- name stdout ----` blocks, Surefire's stack traces and jest's `●` failure blocks.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Value, json};

/// Lines a section takes after the line that names its test, at most.
const CONTINUATION: usize = 40;
/// Tests whose names are searched as text (titles with spaces), at most.
const TEXT_SEARCHED: usize = 500;

/// One phase's log, ready for the page.
pub(crate) struct LogView {
    /// What is shown: the decoded text of a `go test -json` log, else the log.
    pub text: String,
    /// The log as written, when `text` is decoded from it.
    pub raw: Option<String>,
    /// `go-json` or `text`.
    pub format: &'static str,
    /// Test id -> `[first, end)` line ranges of `text` (0-based, merged, in order).
    pub sections: BTreeMap<String, Vec<(usize, usize)>>,
}

impl LogView {
    pub fn to_json(&self) -> Value {
        let sections: serde_json::Map<String, Value> = self
            .sections
            .iter()
            .map(|(k, v)| (k.clone(), Value::Array(v.iter().map(|(a, b)| json!([a, b])).collect())))
            .collect();
        json!({ "text": self.text, "raw": self.raw, "format": self.format, "sections": sections })
    }
}

/// Cuts `log` into the sections of `tests` (canonical ids).
pub(crate) fn view(log: String, tests: &[&str]) -> LogView {
    if let Some(lines) = decode_go_json(&log) {
        let mut sections: BTreeMap<String, Vec<(usize, usize)>> = BTreeMap::new();
        let by_key: HashMap<&str, Vec<usize>> = lines.iter().enumerate().fold(HashMap::new(), |mut m, (i, (k, _))| {
            if let Some(k) = k {
                m.entry(k.as_str()).or_default().push(i);
            }
            m
        });
        // A test's section holds its subtests' lines: each key goes to itself and to every
        // prefix of it cut at a `/` that is a test (one look-up each, not one pass per test).
        let wanted: HashSet<&str> = tests.iter().copied().collect();
        let mut hits: HashMap<&str, Vec<usize>> = HashMap::new();
        for (key, at) in &by_key {
            let cuts = key.match_indices('/').map(|(i, _)| &key[..i]).chain(std::iter::once(*key));
            for test in cuts.filter(|t| wanted.contains(t)) {
                hits.entry(test).or_default().extend(at);
            }
        }
        for (test, mut at) in hits {
            at.sort_unstable();
            sections.insert(test.to_owned(), ranges(&at));
        }
        let mut text = String::with_capacity(log.len() / 2);
        for (_, line) in &lines {
            text.push_str(line);
            text.push('\n');
        }
        return LogView { text, raw: Some(log), format: "go-json", sections };
    }
    let sections = text_sections(&log, tests);
    LogView { text: log, raw: None, format: "text", sections }
}

/// The lines of a `go test -json` log as `go test` prints them, each with the `Package::Test`
/// (or `Package`) it belongs to; None when the log holds no test event.
fn decode_go_json(log: &str) -> Option<Vec<(Option<String>, String)>> {
    let looks_like = log.lines().take(5000).any(|l| {
        let l = l.trim_start();
        (l.starts_with("{\"Time\"") || l.starts_with("{\"Action\""))
            && serde_json::from_str::<Value>(l).is_ok_and(|v| v.get("Action").is_some())
    });
    if !looks_like {
        return None;
    }
    let mut out = Vec::new();
    for line in log.lines() {
        let event = line.trim_start().starts_with('{').then(|| serde_json::from_str::<Value>(line).ok()).flatten();
        let Some(event) = event.filter(|e| e.get("Action").is_some()) else {
            out.push((None, line.to_owned()));
            continue;
        };
        let Some(output) = event.get("Output").and_then(Value::as_str) else { continue };
        let package = event.get("Package").and_then(Value::as_str).unwrap_or_default();
        let key = match event.get("Test").and_then(Value::as_str) {
            Some(test) => format!("{package}::{test}"),
            None => package.to_owned(),
        };
        for part in output.strip_suffix('\n').unwrap_or(output).split('\n') {
            out.push((Some(key.clone()), part.to_owned()));
        }
    }
    Some(out)
}

/// The name a log line shows for a canonical id: Go `pkg::TestX/sub` -> `sub` is too short to
/// find, so `TestX/sub` and `TestX`; Rust `bin::mod::test` -> `mod::test`; Java
/// `pkg.Class#method` -> `method`; jest `path > describe > title` -> `title`.
fn names_in_logs(id: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some((_, title)) = id.rsplit_once(" > ") {
        out.push(title.to_owned());
    } else if let Some((_, method)) = id.rsplit_once('#') {
        out.push(method.to_owned());
    } else if let Some((_, rest)) = id.split_once("::") {
        out.push(rest.to_owned());
        if let Some((_, last)) = rest.rsplit_once("::") {
            out.push(last.to_owned());
        }
        if let Some((top, _)) = rest.split_once('/') {
            out.push(top.to_owned());
        }
    } else {
        out.push(id.to_owned());
        if let Some((_, last)) = id.rsplit_once('.') {
            out.push(last.to_owned());
        }
    }
    out.retain(|n| n.chars().count() >= 3);
    out
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Sections found by name in a plain log.
fn text_sections(log: &str, tests: &[&str]) -> BTreeMap<String, Vec<(usize, usize)>> {
    let lines: Vec<&str> = log.lines().collect();
    // Names made of word characters (and `::`, `/`, `.`) are looked up token by token; titles
    // with spaces are searched as text.
    let mut by_token: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut searched: Vec<(String, usize)> = Vec::new();
    let names: Vec<Vec<String>> = tests.iter().map(|t| names_in_logs(t)).collect();
    for (i, ns) in names.iter().enumerate() {
        for n in ns {
            if n.chars().all(|c| is_word(c) || matches!(c, ':' | '/' | '.' | '-')) {
                by_token.entry(n.as_str()).or_default().push(i);
            } else if searched.len() < TEXT_SEARCHED {
                searched.push((n.clone(), i));
            }
        }
    }
    // Which tests each line names.
    let mut named: Vec<Vec<usize>> = vec![Vec::new(); lines.len()];
    for (li, line) in lines.iter().enumerate() {
        let mut found: Vec<usize> = Vec::new();
        for token in line.split(|c: char| !(is_word(c) || matches!(c, ':' | '/' | '.' | '-'))) {
            let token = token.trim_matches(|c: char| matches!(c, ':' | '.' | '-' | '/'));
            if token.is_empty() {
                continue;
            }
            if let Some(ts) = by_token.get(token) {
                found.extend(ts);
            }
            // `mod::test` inside `bin::mod::test`, `TestX` inside `TestX/sub`.
            for (cut, _) in token.match_indices("::").chain(token.match_indices('/')) {
                for part in [&token[..cut], &token[cut + if token[cut..].starts_with("::") { 2 } else { 1 }..]] {
                    if let Some(ts) = by_token.get(part) {
                        found.extend(ts);
                    }
                }
            }
        }
        for (name, t) in &searched {
            if line.contains(name.as_str()) {
                found.push(*t);
            }
        }
        found.sort_unstable();
        found.dedup();
        named[li] = found;
    }
    let mut hits: Vec<Vec<usize>> = vec![Vec::new(); tests.len()];
    for (li, ts) in named.iter().enumerate() {
        for &t in ts {
            hits[t].push(li);
            let mut j = li + 1;
            while j < lines.len() && j - li <= CONTINUATION {
                let other = named[j].iter().any(|&o| o != t);
                let flush_after_blank = lines[j - 1].trim().is_empty()
                    && !lines[j].is_empty()
                    && !lines[j].starts_with(char::is_whitespace);
                if other || flush_after_blank || named[j].contains(&t) {
                    break;
                }
                hits[t].push(j);
                j += 1;
            }
        }
    }
    let mut out = BTreeMap::new();
    for (t, mut h) in hits.into_iter().enumerate() {
        if h.is_empty() {
            continue;
        }
        h.sort_unstable();
        h.dedup();
        out.insert(tests[t].to_owned(), ranges(&h));
    }
    out
}

/// Sorted line numbers as merged `[first, end)` ranges.
fn ranges(lines: &[usize]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for &l in lines {
        match out.last_mut() {
            Some((_, end)) if *end >= l => *end = (*end).max(l + 1),
            _ => out.push((l, l + 1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of<'a>(v: &'a LogView, test: &str) -> Vec<&'a str> {
        let text: Vec<&str> = v.text.lines().collect();
        v.sections
            .get(test)
            .map_or_else(Vec::new, |r| r.iter().flat_map(|&(a, b)| text[a..b].iter().copied()).collect())
    }

    #[test]
    fn go_json_is_decoded_and_cut_by_event() {
        let log = [
            "swe-forge: running go test",
            r#"{"Time":"2024-01-01T00:00:00Z","Action":"start","Package":"example.com/gostack"}"#,
            r#"{"Action":"run","Package":"example.com/gostack","Test":"TestLen"}"#,
            r#"{"Action":"output","Package":"example.com/gostack","Test":"TestLen","Output":"=== RUN   TestLen\n"}"#,
            r#"{"Action":"output","Package":"example.com/gostack","Test":"TestPush","Output":"=== RUN   TestPush\n"}"#,
            r#"{"Action":"output","Package":"example.com/gostack","Test":"TestLen","Output":"    stack_test.go:30: Len() = 1, want 0\n"}"#,
            r#"{"Action":"output","Package":"example.com/gostack","Test":"TestLen/empty","Output":"    --- FAIL: TestLen/empty (0.00s)\n"}"#,
            r#"{"Action":"output","Package":"example.com/gostack","Test":"TestLen","Output":"--- FAIL: TestLen (0.00s)\n"}"#,
            r#"{"Action":"fail","Package":"example.com/gostack","Test":"TestLen"}"#,
            r#"{"Action":"output","Package":"example.com/gostack","Output":"FAIL\n"}"#,
        ]
        .join("\n");
        let v = view(log.clone(), &["example.com/gostack::TestLen", "example.com/gostack::TestPush", "other::TestLen"]);
        assert_eq!(v.format, "go-json");
        assert_eq!(v.raw.as_deref(), Some(log.as_str()));
        assert_eq!(
            v.text,
            "swe-forge: running go test\n=== RUN   TestLen\n=== RUN   TestPush\n    stack_test.go:30: Len() = 1, want 0\n    --- FAIL: TestLen/empty (0.00s)\n--- FAIL: TestLen (0.00s)\nFAIL\n"
        );
        assert_eq!(v.sections["example.com/gostack::TestLen"], [(1, 2), (3, 6)]);
        assert_eq!(lines_of(&v, "example.com/gostack::TestPush"), ["=== RUN   TestPush"]);
        assert!(!v.sections.contains_key("other::TestLen"), "another package's test of the same name");
    }

    #[test]
    fn plain_logs_are_cut_by_name() {
        let log = "running 2 tests\n\
                   test tests::adds ... ok\n\
                   test tests::subtracts ... FAILED\n\
                   \n\
                   failures:\n\
                   \n\
                   ---- tests::subtracts stdout ----\n\
                   thread 'tests::subtracts' panicked at src/lib.rs:9:\n\
                   assertion `left == right` failed\n\
                   \x20 left: 1\n\
                   \n\
                   ---- tests::adds_more stdout ----\n\
                   nothing\n\
                   \n\
                   test result: FAILED. 1 passed; 1 failed\n";
        let v = view(log.to_owned(), &["calc::tests::adds", "calc::tests::subtracts", "calc::tests::adds_more"]);
        assert_eq!(v.format, "text");
        assert!(v.raw.is_none());
        assert_eq!(lines_of(&v, "calc::tests::adds"), ["test tests::adds ... ok"]);
        assert_eq!(
            lines_of(&v, "calc::tests::subtracts"),
            [
                "test tests::subtracts ... FAILED",
                "",
                "---- tests::subtracts stdout ----",
                "thread 'tests::subtracts' panicked at src/lib.rs:9:",
                "assertion `left == right` failed",
                "  left: 1",
                "",
            ]
        );
        assert_eq!(lines_of(&v, "calc::tests::adds_more"), ["---- tests::adds_more stdout ----", "nothing", ""]);
    }

    #[test]
    fn jest_titles_and_java_methods_are_found() {
        let log = "  ● parse › rejects 1x\n\n    expect(received).toThrow()\n\n      at Object.<anonymous> (test/parse.test.js:5:3)\n\nTests: 1 failed\n\
                   [ERROR] rejectsEmpty(com.example.SlugTest)  Time elapsed: 0.01 s  <<< FAILURE!\n\tat com.example.SlugTest.rejectsEmpty(SlugTest.java:12)\n";
        let v = view(log.to_owned(), &["test/parse.test.js > parse > rejects 1x", "com.example.SlugTest#rejectsEmpty"]);
        assert_eq!(
            lines_of(&v, "test/parse.test.js > parse > rejects 1x"),
            [
                "  ● parse › rejects 1x",
                "",
                "    expect(received).toThrow()",
                "",
                "      at Object.<anonymous> (test/parse.test.js:5:3)",
                ""
            ]
        );
        assert_eq!(
            lines_of(&v, "com.example.SlugTest#rejectsEmpty"),
            [
                "[ERROR] rejectsEmpty(com.example.SlugTest)  Time elapsed: 0.01 s  <<< FAILURE!",
                "\tat com.example.SlugTest.rejectsEmpty(SlugTest.java:12)"
            ]
        );
    }

    #[test]
    fn ranges_merge() {
        assert_eq!(ranges(&[1, 2, 3, 7, 9, 10]), [(1, 4), (7, 8), (9, 11)]);
        assert!(ranges(&[]).is_empty());
    }
}
