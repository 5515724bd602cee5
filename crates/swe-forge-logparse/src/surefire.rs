//! The Maven Surefire console parser (`mvn test`, Surefire 2.x and 3.x, JUnit 4 and 5, with or
//! without Maven's `[INFO]`/`[ERROR]` prefixes).
//!
//! Surefire prints one line per test class (`Tests run: 3, Failures: 1, Errors: 0, Skipped: 0,
//! Time elapsed: 0.1 s <<< FAILURE! -- in pkg.Class`) and one per failed method
//! (`pkg.Class.method -- Time elapsed: ... <<< FAILURE!`, 2.x: `method(pkg.Class)  Time
//! elapsed: ...`); passing methods are never named. So this parser records every class under
//! its own id `pkg.Class` (PASS when it ran tests and none failed, SKIP when all were skipped,
//! FAIL otherwise) and every failed method as `pkg.Class#method` (parameter lists dropped,
//! invocation index kept: `#isSmall[3]`). With `-Dsurefire.rerunFailingTestsCount`, a method
//! listed under `Flakes:` passed on a rerun and is PASS. Multi-SWE-bench name: the class. For
//! method-level results of passing tests, parse the XML reports (`junit-xml`).
//!
//! A class that printed `Running` but no result line (forked VM crashed, `System.exit`) is left
//! out with a warning.

use std::collections::BTreeSet;

use swe_forge_core::TestStatus;

use crate::{LineParser, ParsedLog, Recorder, list};

/// Line-by-line state of a Surefire console log.
#[derive(Default)]
pub(crate) struct Parser {
    parsed: Recorder,
    /// Classes that printed `Running` and no result line yet.
    running: BTreeSet<String>,
    /// The class of the last `Running` or per-class result line.
    current: Option<String>,
    /// Inside the closing `Flakes:` list.
    in_flakes: bool,
    /// Inside a `Crashed tests:` list.
    in_crashed: bool,
    crashed: BTreeSet<String>,
    fork_crash: bool,
}

/// The line without Maven's `[INFO] ` / `[ERROR] ` / `[WARNING] ` level prefix.
fn strip_level(line: &str) -> &str {
    for p in ["[INFO]", "[ERROR]", "[WARNING]", "[WARN]", "[DEBUG]"] {
        if let Some(rest) = line.strip_prefix(p) {
            return rest.strip_prefix(' ').unwrap_or(rest);
        }
    }
    line
}

/// A Java class or method name: dotted identifiers (with `$` for nested classes).
fn is_java_name(s: &str) -> bool {
    !s.is_empty()
        && s.contains('.')
        && s.chars().all(|c| c.is_alphanumeric() || matches!(c, '.' | '$' | '_'))
        && !s.starts_with('.')
        && !s.ends_with('.')
}

/// Drops a parameter list, keeping an invocation index: `isSmall(int)[3]` -> `isSmall[3]`,
/// `adds()` -> `adds`.
pub(crate) fn java_method(name: &str) -> String {
    let name = name.trim();
    match (name.find('('), name.rfind(')')) {
        (Some(open), Some(close)) if close > open => format!("{}{}", &name[..open], &name[close + 1..]),
        _ => name.to_owned(),
    }
}

/// Counts of a `Tests run:` line: run, failures, errors, skipped.
fn counts(rest: &str) -> Option<(u64, u64, u64, u64)> {
    let (mut run, mut failures, mut errors, mut skipped) = (None, None, None, None);
    for part in rest.split(',') {
        let Some((key, value)) = part.split_once(':') else { continue };
        let Some(n) = value.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()) else { continue };
        match key.trim() {
            "Tests run" => run = Some(n),
            "Failures" => failures = Some(n),
            "Errors" => errors = Some(n),
            "Skipped" => skipped = Some(n),
            _ => {}
        }
    }
    Some((run?, failures?, errors.unwrap_or(0), skipped.unwrap_or(0)))
}

impl Parser {
    fn class_result(&mut self, line: &str) -> bool {
        let Some(rest) = line.trim_start().strip_prefix("Tests run:") else { return false };
        if needle!("Time elapsed").find(line.as_bytes()).is_none() {
            return true; // the module's aggregate line
        }
        let Some((run, failures, errors, skipped)) = counts(&format!("Tests run:{rest}")) else { return true };
        let class = match rest.rsplit_once(" in ") {
            Some((_, c)) if is_java_name(c.trim()) => Some(c.trim().to_owned()),
            _ => self.current.clone(),
        };
        let Some(class) = class else { return true };
        self.running.remove(&class);
        self.current = Some(class.clone());
        if run == 0 {
            return true;
        }
        let status = if failures + errors > 0 {
            TestStatus::Fail
        } else if skipped >= run {
            TestStatus::Skip
        } else {
            TestStatus::Pass
        };
        self.parsed.record(class.clone(), Some(class), status);
        true
    }

    /// `pkg.Class.method -- Time elapsed: 0.01 s <<< FAILURE!` (3.x) or
    /// `method(pkg.Class)  Time elapsed: 0.01 sec  <<< ERROR!` (2.x).
    fn method_failure(&mut self, line: &str) -> bool {
        let t = line.trim_end();
        if !(t.ends_with("<<< FAILURE!") || t.ends_with("<<< ERROR!")) {
            return false;
        }
        let Some((name, _)) = t.split_once("Time elapsed") else { return false };
        let name = name.trim().trim_end_matches(['-', ' ']).trim();
        if let Some((method, class)) = two_x_form(name) {
            let id = format!("{class}#{}", java_method(method));
            self.parsed.record(id, Some(class.to_owned()), TestStatus::Fail);
            return true;
        }
        if let Some((class, method)) = self.split_method(name) {
            self.parsed.record(format!("{class}#{method}"), Some(class), TestStatus::Fail);
        } else if is_java_name(name) {
            // Class-level error (a failing `@BeforeAll`): the class itself.
            self.parsed.record(name.to_owned(), Some(name.to_owned()), TestStatus::Fail);
        }
        true
    }

    /// `pkg.Class.method(int)[3]` -> (`pkg.Class`, `method[3]`); `None` when `name` is a class.
    fn split_method(&self, name: &str) -> Option<(String, String)> {
        let base_end = name.find(['(', '[']).unwrap_or(name.len());
        let base = &name[..base_end];
        if self.current.as_deref() == Some(name) || !is_java_name(base) {
            return None;
        }
        let dot = base.rfind('.')?;
        let class = &base[..dot];
        // A class with no method: `pkg.Class` when the current class is another one. Java
        // classes start with a capital letter, methods rarely do.
        let method_name = &base[dot + 1..];
        if method_name.starts_with(char::is_uppercase) && self.current.as_deref() != Some(class) {
            return None;
        }
        Some((class.to_owned(), java_method(&format!("{method_name}{}", &name[base_end..]))))
    }

    fn finish_lists(&mut self, line: &str) {
        let content = line.trim();
        if content.ends_with("Flakes:") {
            self.in_flakes = true;
            self.in_crashed = false;
            return;
        }
        if content == "Crashed tests:" {
            self.in_crashed = true;
            self.in_flakes = false;
            return;
        }
        if content.is_empty() || content.ends_with(':') || content.starts_with("Tests run:") {
            self.in_flakes = false;
            self.in_crashed = false;
            return;
        }
        let indented = line.starts_with(' ');
        if self.in_flakes && !indented && is_java_name(content) {
            if let Some((class, method)) = self.split_method_any(content) {
                self.parsed.record(format!("{class}#{method}"), Some(class), TestStatus::Pass);
            }
        } else if self.in_crashed && !indented && is_java_name(content) {
            self.crashed.insert(content.to_owned());
        } else if !indented {
            self.in_flakes = false;
            self.in_crashed = false;
        }
    }

    fn split_method_any(&self, name: &str) -> Option<(String, String)> {
        let base_end = name.find(['(', '[']).unwrap_or(name.len());
        let dot = name[..base_end].rfind('.')?;
        Some((name[..dot].to_owned(), java_method(&name[dot + 1..])))
    }
}

/// Surefire 2.x `method(pkg.Class)`: (method, class).
fn two_x_form(name: &str) -> Option<(&str, &str)> {
    let inner = name.strip_suffix(')')?;
    let (method, class) = inner.split_once('(')?;
    (is_java_name(class) && !method.is_empty() && !method.contains(' ')).then_some((method, class))
}

impl LineParser for Parser {
    fn line(&mut self, line: &str) {
        let line = strip_level(line);
        let trimmed = line.trim();
        if let Some(class) = trimmed.strip_prefix("Running ").map(str::trim)
            && is_java_name(class)
        {
            self.running.insert(class.to_owned());
            self.current = Some(class.to_owned());
            return;
        }
        if (trimmed.starts_with("Tests run:") && self.class_result(line))
            || (trimmed.ends_with('!') && self.method_failure(line))
        {
            self.in_flakes = false;
            return;
        }
        if needle!("forked").find(trimmed.as_bytes()).is_some()
            && (trimmed.contains("The forked VM terminated without properly saying goodbye")
                || trimmed.contains("There was an error in the forked process"))
        {
            self.fork_crash = true;
        }
        if self.in_flakes || self.in_crashed || trimmed.ends_with(':') {
            self.finish_lists(line);
        }
    }

    fn finish(mut self: Box<Self>) -> ParsedLog {
        let mut unreported: BTreeSet<String> = std::mem::take(&mut self.running);
        unreported.extend(self.crashed.iter().cloned());
        unreported.retain(|c| !self.parsed.tests.contains_key(c));
        if !unreported.is_empty() {
            let names: Vec<&str> = unreported.iter().map(String::as_str).collect();
            let why = if self.fork_crash { "the forked VM crashed" } else { "log truncated?" };
            self.parsed.warnings.push(format!(
                "{} test class(es) started without a result ({why}); their tests are left out: {}",
                names.len(),
                list(&names)
            ));
        } else if self.fork_crash {
            self.parsed.warnings.push("the forked test VM crashed".to_owned());
        }
        self.parsed.into_parsed()
    }
}

/// Signature lines for detection.
pub(crate) fn signature(line: &str) -> bool {
    let l = strip_level(line).trim_start();
    (l.starts_with("Tests run:") && l.contains("Failures:")) || l.starts_with("Running ") && is_java_name(l[8..].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names() {
        assert_eq!(java_method("isSmall(int)[3]"), "isSmall[3]");
        assert_eq!(java_method("adds()"), "adds");
        assert_eq!(java_method("plain"), "plain");
        assert_eq!(two_x_form("adds(com.x.CalcTest)"), Some(("adds", "com.x.CalcTest")));
        assert_eq!(counts("Tests run: 3, Failures: 1, Errors: 0, Skipped: 2, Time"), Some((3, 1, 0, 2)));
    }
}
