//! Setups that failed because they need the network this machine does not give them: a parent
//! POM or SNAPSHOT on a repository that cannot be reached, a tarball from a code host, a
//! submodule on the web. Such an instance is rejected `needs_network` with the host as evidence,
//! not `image_build_failed` (which says the code does not build), and the toolchain search does
//! not try other toolchains for it.

/// The keep rules a missing network can break: no test fixed (under the strict rule also when the
/// only tests the fix makes pass did not run with the test patch: `fixed_tests_passed_at_base`
/// stands in `no_fixed_tests`'s place), none run with the fix, the suite never ran.
pub const KEEP_RULES_THE_NETWORK_EXPLAINS: [swe_forge_core::RejectReason; 4] = [
    swe_forge_core::RejectReason::NoFixedTests,
    swe_forge_core::RejectReason::FixedTestsPassedAtBase,
    swe_forge_core::RejectReason::NoTestsInFixRun,
    swe_forge_core::RejectReason::SuiteNeverRan,
];

/// A test run that needed a host it could not reach: test data cloned or downloaded at test
/// time (CMake's FetchContent, a `git clone` in a test script, a test asking a web API). Runs
/// have no network here, so an instance that fixed no test (ran none with the fix, never ran its suite) and whose
/// fix or test run says it could not reach a host is rejected `needs_network` with the host and
/// the line as evidence, ahead of the keep rule it broke; `reachable` hosts are no evidence.
/// An instance that passed the keep rules keeps its status: a suite that tests its own
/// handling of an unreachable host prints the same words.
pub fn needed_in_runs(
    rejections: &[swe_forge_core::Rejection],
    logs: &swe_forge_core::RunLogs,
    reachable: &[String],
) -> Option<swe_forge_core::Rejection> {
    use swe_forge_core::{Phase, RejectReason, Rejection, RunLogs};
    let broke_keep_rule = rejections.iter().any(|r| KEEP_RULES_THE_NETWORK_EXPLAINS.contains(&r.reason));
    if !broke_keep_rule || rejections.iter().any(|r| r.reason == RejectReason::NeedsNetwork) {
        return None;
    }
    [Phase::Fix, Phase::Test].into_iter().find_map(|phase| {
        let log = swe_forge_fs::read_file_capped(&logs.log(&RunLogs::label(phase, 0)), swe_forge_fs::READ_CAP).ok()?;
        let (host, line) = unreachable_host(&String::from_utf8_lossy(&log.bytes), reachable)?;
        Some(Rejection::new(
            RejectReason::NeedsNetwork,
            format!("the {} run could not reach {host} (runs have no network): {line}", phase.as_str()),
        ))
    })
}

/// The network's part in `rejections` of an instance's finished runs: a run that could not
/// reach a host makes it `needs_network` ([`needed_in_runs`]); failing that, the repositories
/// its CI clones are named in the keep rule's rejection ([`ci_clone_hint`]).
pub fn add_evidence(
    rejections: &mut Vec<swe_forge_core::Rejection>,
    logs: &swe_forge_core::RunLogs,
    requested: Option<&std::collections::BTreeMap<String, String>>,
    reachable: &[String],
) {
    if let Some(r) = needed_in_runs(rejections, logs, reachable) {
        rejections.insert(0, r);
    } else if let Some(hint) = requested.and_then(|r| ci_clone_hint(r, reachable)) {
        for r in rejections.iter_mut().filter(|r| KEEP_RULES_THE_NETWORK_EXPLAINS.contains(&r.reason)) {
            r.detail.push_str(&hint);
        }
    }
}

/// What to add to the keep rule's rejection of an instance whose CI clones repositories before
/// its tests (`<file> git clone` in the provenance's requested versions) when no run said it
/// could not reach a host: the tests may read what the CI clones, which the runs cannot fetch.
/// Evidence, not a verdict: the rejection's reason stays the keep rule's (a CI may clone a tool
/// the tests never read). `reachable` hosts are left out.
pub fn ci_clone_hint(requested: &std::collections::BTreeMap<String, String>, reachable: &[String]) -> Option<String> {
    let clones: Vec<String> = requested
        .iter()
        .filter_map(|(k, v)| k.strip_suffix(" git clone").map(|file| (file, v)))
        .flat_map(|(file, urls)| {
            urls.split_whitespace()
                .filter(|u| !reachable.iter().any(|r| r.eq_ignore_ascii_case(host_name(u))))
                .map(move |u| format!("{u} ({file})"))
        })
        .collect();
    (!clones.is_empty()).then(|| {
        format!(
            "; the CI clones {} before its tests, which the runs cannot (no network): tests that read it fail here",
            clones.join(", ")
        )
    })
}

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

/// A Maven `-SNAPSHOT` coordinate the setup could not fetch, with the line that says so: a
/// dependency, plugin or parent POM whose snapshot repository cannot be reached or no longer
/// serves it (snapshots are never on Maven Central, and their repositories drop them). Such a
/// build needs a repository of its own time, which no toolchain here stands in for.
pub fn unfetchable_snapshot(output: &str) -> Option<(String, String)> {
    const FAILED: [&str; 6] = [
        "Could not transfer artifact ",
        "Could not find artifact ",
        "Failure to find ",
        "Could not resolve dependencies",
        "Non-resolvable parent POM",
        "Failed to read artifact descriptor for ",
    ];
    for line in output.lines() {
        if !line.contains("-SNAPSHOT") || !FAILED.iter().any(|f| line.contains(f)) {
            continue;
        }
        // The coordinate the failure names, most specific first: what could not be fetched.
        let named = ["Could not transfer artifact ", "Could not find artifact ", "Failure to find "]
            .iter()
            .filter_map(|f| line.find(f).map(|i| &line[i + f.len()..]))
            .filter_map(|rest| rest.split_whitespace().next())
            .map(|c| c.trim_end_matches([':', ',', ';']))
            .find(|c| c.ends_with("-SNAPSHOT"));
        let coordinate = named.or_else(|| {
            line.split_whitespace()
                .map(|w| w.trim_matches(|c: char| ":,;()'\"".contains(c)))
                .find(|w| w.ends_with("-SNAPSHOT") && w.contains(':'))
        });
        if let Some(c) = coordinate.filter(|c| !of_this_build(output, c)) {
            return Some((c.to_owned(), line.trim().chars().take(400).collect()));
        }
    }
    None
}

/// Whether `coordinate`'s version is one the build itself is at (`[INFO] Building core
/// 1.0-SNAPSHOT [2/5]`): a module of the same reactor that was not built (a `test-jar` that
/// `mvn test` does not package), which no repository is asked for in vain.
fn of_this_build(output: &str, coordinate: &str) -> bool {
    let version = coordinate.rsplit(':').next().unwrap_or(coordinate);
    output.lines().filter_map(|l| l.trim().strip_prefix("[INFO] Building ")).any(|rest| {
        let rest = rest.trim_end();
        let rest = match rest.rfind(" [") {
            Some(i) if rest.ends_with(']') => rest[..i].trim_end(),
            _ => rest,
        };
        rest.ends_with(&format!(" {version}"))
    })
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
        // Maven's resolver: `transfer failed for https://…: Unknown host oss.sonatype.org`.
        "unknown host ",
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

    #[test]
    fn a_run_that_could_not_reach_a_host_is_the_reason_only_when_a_keep_rule_broke() {
        use swe_forge_core::{RejectReason, Rejection, RunLogs};
        let tmp = tempfile::tempdir().unwrap();
        let logs = RunLogs::new(tmp.path(), "o__r-1");
        std::fs::create_dir_all(logs.log("fix").parent().unwrap()).unwrap();
        std::fs::write(
            logs.log("fix"),
            "ok\nfatal: unable to access 'https://x.invalid/d.git/': Could not resolve host: x.invalid\n",
        )
        .unwrap();
        let no_fixed = [Rejection::new(RejectReason::NoFixedTests, "none")];
        let r = needed_in_runs(&no_fixed, &logs, &[]).unwrap();
        assert_eq!(r.reason, RejectReason::NeedsNetwork);
        assert!(
            r.detail.starts_with("the fix run could not reach https://x.invalid/d.git/ (runs have no network): fatal:"),
            "{}",
            r.detail
        );
        assert_eq!(needed_in_runs(&[], &logs, &[]), None, "an instance that passed the keep rules keeps its status");
        let timeout = [Rejection::new(RejectReason::Timeout, "slow")];
        assert_eq!(needed_in_runs(&timeout, &logs, &[]), None, "another reason stands");
        assert_eq!(
            needed_in_runs(&no_fixed, &logs, &["x.invalid".to_owned()]),
            None,
            "a reachable host is no evidence"
        );
        std::fs::remove_file(logs.log("fix")).unwrap();
        assert_eq!(needed_in_runs(&no_fixed, &logs, &[]), None, "no log, no evidence");
    }

    #[test]
    fn the_repositories_a_ci_clones_are_named_as_evidence() {
        let requested = std::collections::BTreeMap::from([
            (".travis.yml git clone".to_owned(), "https://github.com/toml-lang/toml.git".to_owned()),
            (".travis.yml apt-get install".to_owned(), "cmake".to_owned()),
        ]);
        assert_eq!(
            ci_clone_hint(&requested, &[]).unwrap(),
            "; the CI clones https://github.com/toml-lang/toml.git (.travis.yml) before its tests, which the runs \
             cannot (no network): tests that read it fail here"
        );
        assert_eq!(ci_clone_hint(&requested, &["github.com".to_owned()]), None);
        assert_eq!(ci_clone_hint(&Default::default(), &[]), None);
    }

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
            (
                "[ERROR] Failed to execute goal on project y: Could not resolve dependencies for project x:y:jar:1: Failed to collect dependencies at com.x:lib:jar:1.2.0-SNAPSHOT: Could not transfer artifact com.x:lib:pom:1.2.0-SNAPSHOT from/to sonatype-nexus-snapshots (https://oss.sonatype.org/content/repositories/snapshots): transfer failed for https://oss.sonatype.org/content/repositories/snapshots/com/x/lib/1.2.0-SNAPSHOT/lib-1.2.0-SNAPSHOT.pom: Unknown host oss.sonatype.org -> [Help 1]",
                "https://oss.sonatype.org/content/repositories/snapshots",
            ),
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
    fn a_snapshot_maven_could_not_fetch_is_named_by_its_coordinate() {
        // Maven 3.8's words (this network: the snapshot host does not resolve), warnings first.
        let unreachable = "[WARNING] Could not transfer metadata com.x:lib:1.2.0-SNAPSHOT/maven-metadata.xml from/to sonatype-nexus-snapshots (https://oss.sonatype.org/content/repositories/snapshots): transfer failed for https://oss.sonatype.org/content/repositories/snapshots/com/x/lib/1.2.0-SNAPSHOT/maven-metadata.xml\n[ERROR] Failed to execute goal on project y: Could not resolve dependencies for project x:y:jar:1: Failed to collect dependencies at com.x:lib:jar:1.2.0-SNAPSHOT: Failed to read artifact descriptor for com.x:lib:jar:1.2.0-SNAPSHOT: Could not transfer artifact com.x:lib:pom:1.2.0-SNAPSHOT from/to sonatype-nexus-snapshots (https://oss.sonatype.org/content/repositories/snapshots): transfer failed: Unknown host oss.sonatype.org -> [Help 1]\n";
        let (c, line) = unfetchable_snapshot(unreachable).unwrap();
        assert_eq!(c, "com.x:lib:pom:1.2.0-SNAPSHOT");
        assert!(line.starts_with("[ERROR] Failed to execute goal"), "{line}");
        // A snapshot repository that answers but no longer has it.
        let gone = "[ERROR] Failed to execute goal on project y: Could not resolve dependencies for project x:y:jar:1: Could not find artifact com.x:lib:jar:1.2.0-SNAPSHOT in snapshots (https://repo.example.org/snapshots) -> [Help 1]";
        assert_eq!(unfetchable_snapshot(gone).unwrap().0, "com.x:lib:jar:1.2.0-SNAPSHOT");
        let parent = "[FATAL] Non-resolvable parent POM for com.x:y:1.0-SNAPSHOT: Failure to find com.x:parent:pom:7-SNAPSHOT in https://repo.example.org/snapshots was cached in the local repository @ line 5, column 11";
        assert_eq!(
            unfetchable_snapshot(parent).unwrap().0,
            "com.x:parent:pom:7-SNAPSHOT",
            "the parent, not the project"
        );
        // The project's own SNAPSHOT version in a compile error, and a release that is missing.
        assert_eq!(
            unfetchable_snapshot("[INFO] Building y 1.0-SNAPSHOT\n[ERROR] COMPILATION ERROR : cannot find symbol\n"),
            None
        );
        assert_eq!(unfetchable_snapshot("[ERROR] Could not find artifact com.x:lib:jar:1.2.0 in central"), None);
        // A module of the reactor itself (its version is the build's own) that was not packaged.
        let reactor = "[INFO] Building core 2.1-SNAPSHOT                                   [2/3]\n[ERROR] Failed to execute goal on project web: Could not resolve dependencies for project com.x:web:jar:2.1-SNAPSHOT: Could not find artifact com.x:core:jar:tests:2.1-SNAPSHOT in central (https://repo.maven.apache.org/maven2)\n";
        assert_eq!(unfetchable_snapshot(reactor), None);
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
