//! The machine's faults told from the repository's: a setup step that fails because a public
//! registry every build relies on cannot be reached (its name does not resolve, the lookup times
//! out) failed because of this machine's network or DNS, not because of the repository. Such a
//! failure is retried with backoff as engine failures are, and never rejects an instance as
//! `image_build_failed`.

/// Registries every toolchain's setup relies on. A repository that fetches from elsewhere may
/// name a host that is really gone: that stays the repository's failure.
const REGISTRIES: &[&str] = &[
    "deb.debian.org",
    "index.crates.io",
    "static.crates.io",
    "crates.io",
    "proxy.golang.org",
    "sum.golang.org",
    "registry.npmjs.org",
    "registry.yarnpkg.com",
    "repo.maven.apache.org",
    "repo1.maven.org",
    "pypi.org",
    "files.pythonhosted.org",
];

/// How name-resolution failures read, by tool: curl and git, apt, Go, npm, Maven, cargo.
const UNRESOLVED: &[&str] = &[
    "Could not resolve host",
    "Temporary failure resolving",
    "Temporary failure in name resolution",
    "dial tcp: lookup",
    "EAI_AGAIN",
    "ENOTFOUND",
    "UnknownHostException",
    "Unknown host",
    "failed to lookup address information",
    "Name or service not known",
];

/// The public registry a setup log says it could not reach, when the log's last lines show a
/// name-resolution failure that names one.
pub(crate) fn unreachable_registry(log: &[u8]) -> Option<&'static str> {
    let tail = String::from_utf8_lossy(&log[log.len().saturating_sub(64 * 1024)..]);
    tail.lines()
        .filter(|l| UNRESOLVED.iter().any(|u| l.contains(u)))
        .find_map(|l| REGISTRIES.iter().find(|r| l.contains(*r)).copied())
}

/// How a failed TLS verification reads (curl and git, OpenSSL, npm, Java, cargo).
const TLS_FAILURES: &[&str] = &[
    "SSL certificate problem",
    "self-signed certificate in certificate chain",
    "self signed certificate in certificate chain",
    "unable to get local issuer certificate",
    "SELF_SIGNED_CERT_IN_CHAIN",
    "PKIX path building failed",
    "certificate verify failed",
];

/// What to do when a setup log shows that TLS verification failed: the network in between
/// presents a certificate this machine's bundle does not hold.
pub(crate) fn tls_hint(log: &[u8]) -> Option<&'static str> {
    let tail = String::from_utf8_lossy(&log[log.len().saturating_sub(64 * 1024)..]);
    TLS_FAILURES.iter().any(|t| tail.contains(t)).then_some(
        "hint: the setup failed to verify a TLS certificate: behind a TLS-intercepting proxy, give its CA with \
         --ca-bundle FILE (or SWE_FORGE_CA_BUNDLE, or ca_bundle in the pipeline's [validate]); the system bundle is \
         used by default when one exists",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreachable_registries_are_the_machine_s_fault() {
        for (log, host) in [
            (
                "error: failed to get `serde`\nCaused by:\n  [6] Could not resolve host: index.crates.io\n",
                "index.crates.io",
            ),
            (
                "go: github.com/x/y@v1.0.0: Get \"https://proxy.golang.org/x\": dial tcp: lookup proxy.golang.org on 10.0.0.2:53: read udp: i/o timeout",
                "proxy.golang.org",
            ),
            (
                "npm error code EAI_AGAIN\nnpm error request to https://registry.npmjs.org/left-pad failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org",
                "registry.npmjs.org",
            ),
            (
                "W: Failed to fetch http://deb.debian.org/debian/dists/trixie/InRelease  Temporary failure resolving 'deb.debian.org'",
                "deb.debian.org",
            ),
            (
                "[ERROR] Could not transfer artifact x from/to central (https://repo.maven.apache.org/maven2): repo.maven.apache.org: Temporary failure in name resolution: Unknown host repo.maven.apache.org",
                "repo.maven.apache.org",
            ),
        ] {
            assert_eq!(unreachable_registry(log.as_bytes()), Some(host), "{log}");
        }
        // A host of the repository's own choosing, or a failing step, stays the repository's fault.
        assert_eq!(
            unreachable_registry(
                b"fatal: unable to access 'https://git.example.org/x': Could not resolve host: git.example.org"
            ),
            None
        );
        assert_eq!(
            unreachable_registry(b"error[E0425]: cannot find value `x` in this scope\nerror: could not compile"),
            None
        );
        assert_eq!(
            unreachable_registry(
                b"Downloaded from central: https://repo.maven.apache.org/maven2/x.jar\n[ERROR] COMPILATION ERROR"
            ),
            None
        );
    }
}
