//! Signs in a test log that tests failed because today's date is past an expiry written into
//! their fixtures (a certificate, a signed token): a "time bomb". Such a failure says nothing of
//! the code under test, and the instance only worked while the fixture was valid; validation
//! flags it `time_bomb` with the line found as evidence. A line that belongs to a test that
//! passed is no sign: tests of expiry make expired certificates on purpose.

use std::collections::BTreeMap;

use swe_forge_core::TestStatus;

/// Lowercase phrases the common stacks print for an expired certificate or token: Go's `x509`
/// and OpenSSL ("certificate has expired"), Node (`CERT_HAS_EXPIRED`, `TokenExpiredError` of
/// jsonwebtoken), Java (`CertificateExpiredException`), Rust's rustls and webpki
/// (`CertExpired`, "certificate expired"), jwt-go ("token is expired"), others ("token has
/// expired").
const SIGNS: &[&str] = &[
    "certificate has expired",
    "cert_has_expired",
    "certificateexpiredexception",
    "certexpired",
    "certificate expired",
    "token is expired",
    "token has expired",
    "tokenexpirederror",
];

/// Longest evidence kept, in characters.
const MAX_EVIDENCE: usize = 300;

/// Lines with a sign that are looked at; the rest of a log full of them is not.
const MAX_SIGN_LINES: usize = 20;

/// Lines looked back through for the test a sign line belongs to.
const LOOK_BACK: usize = 100;

/// The first line of `log` that says a certificate or token expired, trimmed (for `go test -json`
/// logs the event's test name and output), or None; `tests` are the run's parsed statuses. A line
/// counts unless it belongs to a test that passed or was skipped: in a `go test -json` event, the
/// event's test; in other logs, a test named on the nearest line before it that names one (go's
/// `=== RUN TestX`, jest's `● suite › title`, pytest's `___ test_x ___`). A line that belongs to
/// a test that failed or reported nothing (it hung or was killed), or to no test, counts.
pub fn time_bomb_evidence(log: &[u8], tests: &BTreeMap<String, TestStatus>) -> Option<String> {
    let lines: Vec<&[u8]> = log.split(|&b| b == b'\n').collect();
    for (at, raw) in lines.iter().enumerate().filter(|(_, l)| has_sign(l)).take(MAX_SIGN_LINES) {
        let text = String::from_utf8_lossy(raw);
        let event = go_event(&text);
        let passed = match &event {
            Some(e) => e.test.as_deref().is_some_and(|t| go_test_passed(tests, e.package.as_deref(), t)),
            None => named_before(&lines[at.saturating_sub(LOOK_BACK)..at], tests).is_some_and(did_not_fail),
        };
        if passed {
            continue;
        }
        let line = event.map_or_else(|| text.trim().to_owned(), GoEvent::text);
        let mut evidence: String = line.chars().take(MAX_EVIDENCE).collect();
        if evidence.len() < line.len() {
            evidence.push('…');
        }
        return Some(evidence);
    }
    None
}

fn has_sign(line: &[u8]) -> bool {
    // Long lines are searched too, but a line is lowercased at most once.
    if memchr::memchr2(b'e', b'E', line).is_none() {
        return false;
    }
    let lower = line.to_ascii_lowercase();
    SIGNS.iter().any(|s| memchr::memmem::find(&lower, s.as_bytes()).is_some())
}

/// A `go test -json` output event.
#[derive(serde::Deserialize)]
struct GoEvent {
    #[serde(rename = "Package")]
    package: Option<String>,
    #[serde(rename = "Test")]
    test: Option<String>,
    #[serde(rename = "Output")]
    output: String,
}

impl GoEvent {
    /// `Test: output`, or the output of a package's event.
    fn text(self) -> String {
        match self.test {
            Some(test) => format!("{test}: {}", self.output.trim()),
            None => self.output.trim().to_owned(),
        }
    }
}

fn go_event(line: &str) -> Option<GoEvent> {
    serde_json::from_str(line.trim()).ok()
}

fn did_not_fail(status: TestStatus) -> bool {
    matches!(status, TestStatus::Pass | TestStatus::Skip)
}

/// Whether Go test `test` of `package` (`<Package>::<Test>`, a subtest's top-level test when the
/// subtest has no status) passed or was skipped.
fn go_test_passed(tests: &BTreeMap<String, TestStatus>, package: Option<&str>, test: &str) -> bool {
    let package = package.unwrap_or_default();
    let top = test.split('/').next().unwrap_or(test);
    [test, top].iter().find_map(|t| tests.get(&format!("{package}::{t}"))).is_some_and(|s| did_not_fail(*s))
}

/// The status of the test named on the last of `before` that names one (its own name: what
/// follows the last `::`, `#`, ` > ` or `/`, at least 4 characters, as a whole word); when
/// that line names several, a failed one wins.
fn named_before(before: &[&[u8]], tests: &BTreeMap<String, TestStatus>) -> Option<TestStatus> {
    let names: Vec<(&str, TestStatus)> = tests
        .iter()
        .map(|(id, s)| (id.rsplit(['#', '/', ':']).next().unwrap_or(id).rsplit(" > ").next().unwrap_or(id).trim(), *s))
        .filter(|(n, _)| n.chars().count() >= 4)
        .collect();
    before.iter().rev().find_map(|raw| {
        let line = String::from_utf8_lossy(raw);
        let named: Vec<TestStatus> = names.iter().filter(|(n, _)| contains_word(&line, n)).map(|(_, s)| *s).collect();
        named.iter().copied().find(|s| !did_not_fail(*s)).or(named.first().copied())
    })
}

/// Whether `name` is in `text` with no letter, digit or `_` right before or after it.
fn contains_word(text: &str, name: &str) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    text.match_indices(name)
        .any(|(at, _)| !word(text[..at].chars().next_back()) && !word(text[at + name.len()..].chars().next()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expired_certificates_and_tokens_are_found_in_each_stacks_words() {
        let go = b"{\"Action\":\"output\",\"Package\":\"p\",\"Test\":\"TestTLS\",\"Output\":\"    tls_test.go:40: Get \\\"https://127.0.0.1:4431\\\": x509: certificate has expired or is not yet valid: current time 2026-12-04T01:00:00Z is after 2021-01-01T00:00:00Z\\n\"}\n";
        assert_eq!(
            time_bomb_evidence(go, &BTreeMap::new()).unwrap(),
            "TestTLS: tls_test.go:40: Get \"https://127.0.0.1:4431\": x509: certificate has expired or is not yet valid: current time 2026-12-04T01:00:00Z is after 2021-01-01T00:00:00Z"
        );
        for (log, want) in [
            (
                &b"ok\n  Error: certificate has expired\n    at TLSSocket.onConnectSecure\n"[..],
                "Error: certificate has expired",
            ),
            (b"code: 'CERT_HAS_EXPIRED'", "code: 'CERT_HAS_EXPIRED'"),
            (
                b"Caused by: java.security.cert.CertificateExpiredException: NotAfter: Fri Jan 01",
                "Caused by: java.security.cert.CertificateExpiredException: NotAfter: Fri Jan 01",
            ),
            (b"thread 'tls' panicked: InvalidCertificate(Expired)\nError: CertExpired", "Error: CertExpired"),
            (
                b"--- FAIL: TestJWT\n    jwt_test.go:12: token is expired by 2000h\n",
                "jwt_test.go:12: token is expired by 2000h",
            ),
            (b"TokenExpiredError: jwt expired", "TokenExpiredError: jwt expired"),
        ] {
            assert_eq!(
                time_bomb_evidence(log, &BTreeMap::new()).as_deref(),
                Some(want),
                "{}",
                String::from_utf8_lossy(log)
            );
        }
    }

    #[test]
    fn ordinary_failures_and_words_alike_are_not_time_bombs() {
        for log in [
            &b"--- FAIL: TestExpiry (0.00s)\n    cache_test.go:9: entry expired too early\n"[..],
            b"the certificate is valid\nexpected 2 got 3\n",
            b"",
            b"\xff\xfe binary \x00 noise",
        ] {
            assert_eq!(time_bomb_evidence(log, &BTreeMap::new()), None, "{}", String::from_utf8_lossy(log));
        }
    }

    /// `TestHandshakeExpired` checks an expired certificate on purpose and passes, while two other
    /// tests fail: no time bomb (as seen in a Go exporter's runs). Then tests fail on a
    /// fixture certificate that expired in 2020: a time bomb, named by a failed test.
    #[test]
    fn an_expired_certificate_in_a_test_that_passed_is_no_time_bomb() {
        let parse = |log: &[u8]| crate::parse(crate::Framework::GoTestJson, log).tests;
        let on_purpose = include_bytes!("../test_data/go-test-json/expired_on_purpose.log");
        let tests = parse(on_purpose);
        assert_eq!(tests.get("example.com/certcheck::TestHandshakeExpired"), Some(&TestStatus::Pass));
        assert!(tests.values().any(|s| *s == TestStatus::Fail));
        assert_eq!(time_bomb_evidence(on_purpose, &tests), None);
        let expired = include_bytes!("../test_data/go-test-json/expired_fixture.log");
        let evidence = time_bomb_evidence(expired, &parse(expired)).unwrap();
        assert!(evidence.starts_with("TestConnectSuccess: "), "{evidence}");
        // In a text log, the test named before the line: `=== RUN` of a test that passed, then of
        // one that failed.
        let text = b"=== RUN   TestExpired\n    x509: certificate has expired\n--- PASS: TestExpired\n=== RUN   TestFixture\n    tls: certificate has expired\n--- FAIL: TestFixture\n";
        let tests = BTreeMap::from([
            ("p::TestExpired".to_owned(), TestStatus::Pass),
            ("p::TestFixture".to_owned(), TestStatus::Fail),
        ]);
        assert_eq!(time_bomb_evidence(text, &tests).as_deref(), Some("tls: certificate has expired"));
        let passed_only = b"=== RUN   TestExpired
    x509: certificate has expired
--- PASS: TestExpired
";
        assert_eq!(time_bomb_evidence(passed_only, &tests), None);
    }

    #[test]
    fn evidence_is_short_even_from_a_huge_line() {
        let mut log = vec![b'x'; 1 << 20];
        log.extend_from_slice(b" certificate has expired");
        let evidence = time_bomb_evidence(&log, &BTreeMap::new()).unwrap();
        assert_eq!(evidence.chars().count(), MAX_EVIDENCE + 1);
        assert!(evidence.ends_with('…'));
    }
}
