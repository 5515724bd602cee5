//! Setups that failed because they need the network this machine does not give them: a parent
//! POM or SNAPSHOT on a repository that cannot be reached, a tarball from a code host, a
//! submodule on the web. Such an instance is rejected `needs_network` with the host as evidence,
//! not `image_build_failed` (which says the code does not build), and the toolchain search does
//! not try other toolchains for it.

/// The host (or URL) a setup's output says it could not reach, with the line that says so:
/// name resolution, connection and transfer failures of curl, wget, git, Maven, Gradle, npm,
/// yarn, pip, cargo and Go. `reachable` lists hosts the user's machine does reach
/// (`[validate] reachable_hosts`): a failure naming one of those is not taken for a missing
/// network.
pub fn unreachable_host(output: &str, reachable: &[String]) -> Option<(String, String)> {
    for line in output.lines() {
        let Some(host) = host_of_failure(line) else { continue };
        let bare = host_name(&host);
        if bare.is_empty() || reachable.iter().any(|r| r.eq_ignore_ascii_case(bare)) {
            continue;
        }
        return Some((host, line.trim().chars().take(400).collect()));
    }
    None
}

/// The host part of a URL or `host:port`.
fn host_name(s: &str) -> &str {
    let s = s.split_once("://").map_or(s, |(_, rest)| rest);
    let s = s.split(['/', '?', '#']).next().unwrap_or(s);
    let s = s.rsplit_once('@').map_or(s, |(_, h)| h);
    match s.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => s,
    }
}

/// Text between `start` and the first of `ends` after it.
fn between<'a>(line: &'a str, start: &str, ends: &[char]) -> Option<&'a str> {
    let i = line.find(start)? + start.len();
    let rest = line[i..].trim_start_matches(['\'', '"', '`']);
    let end = rest.find(|c: char| ends.contains(&c)).unwrap_or(rest.len());
    let s = rest[..end].trim_matches(|c: char| c == '\'' || c == '"' || c == '`');
    (!s.is_empty()).then_some(s)
}

fn host_of_failure(line: &str) -> Option<String> {
    let lower = line.to_ascii_lowercase();
    let cannot_reach = [
        "could not resolve host",
        "temporary failure in name resolution",
        "name or service not known",
        "no such host",
        "unknownhostexception",
        "enotfound",
        "eai_again",
        "network is unreachable",
        "failed to establish a new connection",
        "could not connect to server",
        "failed to connect to",
        "connection timed out",
        "unable to resolve host address",
        "nodename nor servname",
        "failed to lookup address",
    ];
    if !cannot_reach.iter().any(|p| lower.contains(p)) {
        return None;
    }
    // The most specific first: the URL a tool names, then the host it names.
    let url = ["https://", "http://", "git://", "ssh://"]
        .iter()
        .filter_map(|scheme| line.find(scheme).map(|i| &line[i..]))
        .map(|u| u.split(|c: char| c.is_whitespace() || "'\")>,;]".contains(c)).next().unwrap_or(u))
        .next();
    if let Some(u) = url.filter(|u| !host_name(u).is_empty()) {
        return Some(u.trim_end_matches(['.', ':']).to_owned());
    }
    let ends = [' ', ',', ';', ')', '\'', '"', ']'];
    let named = between(line, "Could not resolve host: ", &ends)
        .or_else(|| between(line, "UnknownHostException: ", &ends))
        .or_else(|| between(line, "getaddrinfo ENOTFOUND ", &ends))
        .or_else(|| between(line, "getaddrinfo EAI_AGAIN ", &ends))
        .or_else(|| between(line, "unable to resolve host address ", &ends))
        .or_else(|| between(line, "Failed to connect to ", &ends))
        .or_else(|| between(line, "dial tcp: lookup ", &[' ', ':']))
        .or_else(|| between(line, "Resolving ", &[' ', '(']))
        .or_else(|| between(line, "host='", &['\'']));
    named.map(|h| h.trim_end_matches(['.', ':']).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(out: &str) -> Option<String> {
        unreachable_host(out, &[]).map(|(h, _)| h)
    }

    #[test]
    fn each_tools_words_for_an_unreachable_host_give_the_host() {
        let cases = [
            (
                "[ERROR] Non-resolvable parent POM for org.x:lib:1.0-SNAPSHOT: Could not transfer artifact org.x:parent:pom:3-SNAPSHOT from/to snapshots (https://oss.sonatype.org/content/repositories/snapshots): oss.sonatype.org: Temporary failure in name resolution",
                "https://oss.sonatype.org/content/repositories/snapshots",
            ),
            ("curl: (6) Could not resolve host: downloads.example.org", "downloads.example.org"),
            (
                "fatal: unable to access 'https://github.com/google/googletest.git/': Could not resolve host: github.com",
                "https://github.com/google/googletest.git/",
            ),
            (
                "go: golang.org/x/net@v0.1.0: Get \"https://proxy.golang.org/golang.org/x/net/@v/v0.1.0.mod\": dial tcp: lookup proxy.golang.org on 10.0.0.1:53: no such host",
                "https://proxy.golang.org/golang.org/x/net/@v/v0.1.0.mod",
            ),
            (
                "npm ERR! request to https://codeload.github.com/a/b/tar.gz/x failed, reason: getaddrinfo ENOTFOUND codeload.github.com",
                "https://codeload.github.com/a/b/tar.gz/x",
            ),
            ("npm ERR! getaddrinfo ENOTFOUND registry.example.com", "registry.example.com"),
            ("Resolving ftp.gnu.org (ftp.gnu.org)... failed: Name or service not known.", "ftp.gnu.org"),
            ("wget: unable to resolve host address 'ftp.gnu.org'", "ftp.gnu.org"),
            (
                "WARNING: Retrying (Retry(total=4)) after connection broken by 'NewConnectionError('<urllib3.connection.HTTPSConnection object>: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')': /simple/six/",
                "",
            ),
            ("java.net.UnknownHostException: repo.spring.io", "repo.spring.io"),
        ];
        for (line, want) in cases {
            let got = host(&format!("step 3/7\n{line}\nexit 1\n"));
            if want.is_empty() {
                assert_eq!(got, None, "{line}");
            } else {
                assert_eq!(got.as_deref(), Some(want), "{line}");
            }
        }
    }

    #[test]
    fn build_failures_and_reachable_hosts_are_not_a_missing_network() {
        assert_eq!(host("error: 'MINSIGSTKSZ' was not declared in this scope\nmake: *** [all] Error 2\n"), None);
        assert_eq!(host("[ERROR] COMPILATION ERROR : cannot find symbol\n"), None);
        let log = "curl: (6) Could not resolve host: mirror.local\n";
        assert_eq!(unreachable_host(log, &["MIRROR.local".to_owned()]), None);
        let (h, line) = unreachable_host(log, &["other.host".to_owned()]).unwrap();
        assert_eq!((h.as_str(), line.as_str()), ("mirror.local", "curl: (6) Could not resolve host: mirror.local"));
        assert_eq!(host_name("https://user@repo.example.com:8443/x"), "repo.example.com");
    }
}
