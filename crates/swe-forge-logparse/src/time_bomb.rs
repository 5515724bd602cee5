//! Signs in a test log that tests failed because today's date is past an expiry written into
//! their fixtures (a certificate, a signed token): a "time bomb". Such a failure says nothing of
//! the code under test, and the instance only worked while the fixture was valid; validation
//! flags it `time_bomb` with the line found as evidence.

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

/// The first line of `log` that says a certificate or token expired, trimmed (for `go test -json`
/// logs the event's test name and output), or None.
pub fn time_bomb_evidence(log: &[u8]) -> Option<String> {
    for raw in log.split(|&b| b == b'\n') {
        if !has_sign(raw) {
            continue;
        }
        let line = String::from_utf8_lossy(raw);
        let line = go_event_text(&line).unwrap_or_else(|| line.trim().to_owned());
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
    if !line.iter().any(|b| matches!(b, b'e' | b'E')) {
        return false;
    }
    let lower = line.to_ascii_lowercase();
    SIGNS.iter().any(|s| lower.windows(s.len()).any(|w| w == s.as_bytes()))
}

/// `Test: output` of a `go test -json` output event.
fn go_event_text(line: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
    let output = v.get("Output")?.as_str()?.trim();
    Some(match v.get("Test").and_then(|t| t.as_str()) {
        Some(test) => format!("{test}: {output}"),
        None => output.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expired_certificates_and_tokens_are_found_in_each_stacks_words() {
        let go = b"{\"Action\":\"output\",\"Package\":\"p\",\"Test\":\"TestTLS\",\"Output\":\"    tls_test.go:40: Get \\\"https://127.0.0.1:4431\\\": x509: certificate has expired or is not yet valid: current time 2026-12-04T01:00:00Z is after 2021-01-01T00:00:00Z\\n\"}\n";
        assert_eq!(
            time_bomb_evidence(go).unwrap(),
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
            assert_eq!(time_bomb_evidence(log).as_deref(), Some(want), "{}", String::from_utf8_lossy(log));
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
            assert_eq!(time_bomb_evidence(log), None, "{}", String::from_utf8_lossy(log));
        }
    }

    #[test]
    fn evidence_is_short_even_from_a_huge_line() {
        let mut log = vec![b'x'; 1 << 20];
        log.extend_from_slice(b" certificate has expired");
        let evidence = time_bomb_evidence(&log).unwrap();
        assert_eq!(evidence.chars().count(), MAX_EVIDENCE + 1);
        assert!(evidence.ends_with('…'));
    }
}
