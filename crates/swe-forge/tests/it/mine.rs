//! `swe-forge mine`: a fixture mirror mined and validated, a GitHub mine against the local replay
//! server killed with SIGKILL and resumed without duplicates, and the pipeline `[mine]` section.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use swe_forge_mine::Candidate;
use swe_forge_test_support::replay::{FakeGithub, FakePr, ReplayServer};

use crate::support::{make_repos, root, swe_forge, text};

fn candidates(path: &Path) -> Vec<Candidate> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| Candidate::from_json_line(l).unwrap())
        .collect()
}

#[test]
fn a_mined_fixture_candidate_is_accepted_by_validate() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_repos(tmp.path());
    let out = tmp.path().join("mined.jsonl");
    let mirror = repos.join("forge-fixtures/gostack");
    let o = swe_forge(&["mine", "--mirror", mirror.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("| forge-fixtures/gostack | 5 | 5 | 5 | 4 | 4 | 0 | no_fix 1 |"),
        "{}",
        text(&o)
    );
    assert!(tmp.path().join("mined.funnel.json").exists() && tmp.path().join("mined.funnel.md").exists());
    let mined = candidates(&out);
    let recorded = crate::support::read_records(&root().join("data/fixtures/instances.jsonl"));
    let pr1 = &mined[0].record;
    let want = recorded.iter().find(|r| r.instance_id == "forge-fixtures__gostack-1").unwrap();
    assert_eq!((&pr1.base, &pr1.fix_patch, &pr1.test_patch), (&want.base, &want.fix_patch, &want.test_patch));

    // Only PR 1 goes through the (slow) validation, next to the recorded candidate: validate must
    // accept it and treat both alike.
    let mined_one = tmp.path().join("mined-one.jsonl");
    std::fs::write(&mined_one, std::fs::read_to_string(&out).unwrap().lines().next().unwrap().to_owned() + "\n")
        .unwrap();
    let recorded_one = tmp.path().join("recorded-one.jsonl");
    swe_forge_core::write_jsonl(std::fs::File::create(&recorded_one).unwrap(), [want]).unwrap();
    let outcome = |records: &Path, name: &str| {
        let validated = tmp.path().join(name);
        let o = swe_forge(&[
            "validate",
            "--records",
            records.to_str().unwrap(),
            "--repos",
            repos.to_str().unwrap(),
            "--out",
            validated.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o));
        let v = crate::support::read_records(&validated).remove(0);
        (v.status(), v.f2p_tests.keys().cloned().collect::<Vec<_>>(), v.p2p_tests.keys().cloned().collect::<Vec<_>>())
    };
    let mined_outcome = outcome(&mined_one, "mined-validated.jsonl");
    assert_eq!(mined_outcome, outcome(&recorded_one, "recorded-validated.jsonl"));
    assert_eq!(mined_outcome.0, swe_forge_core::ValidationStatus::Accepted, "{mined_outcome:?}");
    assert_eq!(mined_outcome.1, ["gostack::TestPopEmptyReturnsError"], "{mined_outcome:?}");
}

#[test]
fn mine_usage_errors() {
    let o = swe_forge(&["mine", "--repo", "a/b"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x.jsonl");
    let o =
        swe_forge(&["mine", "--repo", "not-a-repo", "--out", out.to_str().unwrap(), "--api-url", "http://127.0.0.1:9"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("not owner/name"), "{}", text(&o));
    let o = swe_forge(&["mine", "--mirror", "/nonexistent", "--repo", "a/b", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
}

/// A mirror reached through a symbolic link is named after the link (`mirrors/acme/widget`), not
/// its target's folders; a folder whose name no image can carry (a tempdir's `.tmpXYZ`) is
/// refused at mine time, naming the way out, instead of failing every validation later.
#[test]
fn a_linked_mirror_is_named_after_the_link_and_unfit_names_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_repos(tmp.path());
    let hidden = tmp.path().join(".tmpAbC123");
    std::fs::create_dir(&hidden).unwrap();
    std::fs::rename(repos.join("forge-fixtures/gostack"), hidden.join("gostack")).unwrap();
    std::fs::create_dir_all(tmp.path().join("mirrors/acme")).unwrap();
    std::os::unix::fs::symlink(hidden.join("gostack"), tmp.path().join("mirrors/acme/widget")).unwrap();

    let out = tmp.path().join("mined.jsonl");
    let link = tmp.path().join("mirrors/acme/widget");
    let o = swe_forge(&["mine", "--mirror", link.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let mined = candidates(&out);
    assert!(!mined.is_empty());
    assert!(mined.iter().all(|c| (c.record.org.as_str(), c.record.repo.as_str()) == ("acme", "widget")));
    assert_eq!(mined[0].record.instance_id, "acme__widget-1");

    let out2 = tmp.path().join("unfit.jsonl");
    let target = hidden.join("gostack");
    let o = swe_forge(&["mine", "--mirror", target.to_str().unwrap(), "--out", out2.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains(".tmpAbC123/gostack (named after ")
            && text(&o).contains("cannot name a Docker image: the owner \".tmpAbC123\" does not start and end")
            && text(&o).contains("--github-repo OWNER/NAME"),
        "{}",
        text(&o)
    );
    // Named by hand, the same folder mines.
    let o = swe_forge(&[
        "mine",
        "--mirror",
        target.to_str().unwrap(),
        "--github-repo",
        "forge-fixtures/gostack",
        "--out",
        out2.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(candidates(&out2)[0].record.instance_id, "forge-fixtures__gostack-1");
}

/// 60 merged PRs, 40 of them candidates, served slowly enough to kill the mine midway.
fn big_repo(delay: Duration) -> FakeGithub {
    let prs = (1..=60u64)
        .map(|n| {
            let files: &[&str] = if n.is_multiple_of(3) { &["src/a.go"] } else { &["src/a.go", "src/a_test.go"] };
            let diff: String = files
                .iter()
                .map(|p| format!("diff --git a/{p} b/{p}\nindex 1111111..2222222 100644\n--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-a\n+b{n}\n"))
                .collect();
            FakePr {
                closing: vec![("acme/big".into(), 1000 + n, format!("Issue {n}"), Some("broken".into()))],
                ..FakePr::merged(n, &diff)
            }
        })
        .collect();
    let mut fake = FakeGithub::new("acme/big", prs);
    fake.delay = delay;
    fake
}

fn mine_cmd(url: &str, out: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_swe-forge"));
    c.args(["mine", "--repo", "acme/big", "--page-size", "10", "--out", out.to_str().unwrap(), "--api-url", url])
        .env("GITHUB_TOKEN", "ghp_KILLTESTtoken1111111111111111111111111")
        .env("SWE_FORGE_NO_PROGRESS", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

#[test]
fn a_killed_mine_resumes_without_duplicates() {
    let slow = Arc::new(big_repo(Duration::from_millis(40)));
    let f = slow.clone();
    let server = ReplayServer::start(move |r| f.answer(r));
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("mined.jsonl");
    let mut child = mine_cmd(server.url(), &out).spawn().unwrap();
    let started = Instant::now();
    while candidates(&out).len() < 12 {
        assert!(started.elapsed() < Duration::from_secs(60), "the mine made no progress");
        assert!(child.try_wait().unwrap().is_none(), "the mine ended before it was killed");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = candidates(&out).len();
    assert!(before < 40, "killed too late to test anything ({before})");
    let first_run = server.requests().len();

    let o = mine_cmd(server.url(), &out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mined = candidates(&out);
    let ids: Vec<&str> = mined.iter().map(|c| c.record.instance_id.as_str()).collect();
    let unique: BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(ids.len(), unique.len(), "duplicates after resuming");
    let want: BTreeSet<String> =
        (1..=60u64).filter(|n| !n.is_multiple_of(3)).map(|n| format!("acme__big-{n}")).collect();
    assert_eq!(unique.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>(), want);
    // The resumed run did not start over: it re-listed at most from the last finished page.
    let second_run = server.requests().len() - first_run;
    assert!(second_run < 6 + 40, "the resumed run sent {second_run} requests");
    let funnel: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("mined.funnel.json")).unwrap()).unwrap();
    assert_eq!(funnel["repositories"][0]["seen"], 60);
    assert_eq!(funnel["repositories"][0]["kept"], 40);
    // The token is in no file the mine wrote.
    for name in ["mined.jsonl", "mined.progress.jsonl", "mined.funnel.json", "mined.funnel.md"] {
        assert!(!std::fs::read_to_string(tmp.path().join(name)).unwrap().contains("KILLTEST"), "{name}");
    }
    assert!(!String::from_utf8_lossy(&o.stderr).contains("KILLTEST"));
}

#[test]
fn the_pipeline_mine_section_mines_every_listed_repository() {
    let tmp = tempfile::tempdir().unwrap();
    let pipeline = tmp.path().join("p.toml");
    std::fs::write(
        &pipeline,
        format!(
            "name = \"t\"\n[source]\nrecords = \"out/mined.jsonl\"\nrepos = \"repos\"\nmake_repos = \"{}\"\n\
             [mine]\nsince = \"2024-01-01\"\nuntil = \"2024-01-31\"\n\
             [[mine.repos]]\nname = \"forge-fixtures/gostack\"\nmirror = \"repos/forge-fixtures/gostack\"\n\
             [[mine.repos]]\nname = \"forge-fixtures/ringq\"\nmirror = \"repos/forge-fixtures/ringq\"\nmax_files = 1\n\
             [output]\nvalidated = \"out/v.jsonl\"\n",
            root().join("data/fixtures/make-repos.sh").display()
        ),
    )
    .unwrap();
    let o = swe_forge(&["mine", "--pipeline", pipeline.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let ids: Vec<String> =
        candidates(&tmp.path().join("out/mined.jsonl")).into_iter().map(|c| c.record.instance_id).collect();
    assert_eq!(
        ids,
        [
            "forge-fixtures__gostack-1",
            "forge-fixtures__gostack-2",
            "forge-fixtures__gostack-4",
            "forge-fixtures__gostack-6"
        ]
    );
    let md = std::fs::read_to_string(tmp.path().join("out/mined.funnel.md")).unwrap();
    assert!(md.contains("| forge-fixtures/ringq | 1 | 1 | 0 | 0 | 0 | 0 | too_large 1 |"), "{md}");
}

/// An API answer holding terminal escape sequences: the error printed quotes it without its
/// control characters, and log lines on a pipe carry no colour codes.
#[test]
fn escape_sequences_from_the_api_never_reach_the_terminal() {
    let server = ReplayServer::start(|_| {
        swe_forge_test_support::replay::Reply::status(
            422,
            r#"{"message":"\u001b[2J\u001b]0;pwned\u0007Validation \u009b31mFailed"}"#,
        )
    });
    let tmp = tempfile::tempdir().unwrap();
    // -v: log lines too, which carry no colour codes on a pipe.
    let o = mine_cmd(server.url(), &tmp.path().join("mined.jsonl")).arg("-v").output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("[2J]0;pwnedValidation 31mFailed"), "{stderr:?}");
    assert!(!stderr.chars().any(|c| c.is_control() && c != '\n'), "{stderr:?}");
}

/// GitHub mode with nothing listening at the API's address (as with no network): the mine fails
/// within seconds, saying the API cannot be reached, instead of retrying with backoff for a minute.
#[test]
fn github_mode_without_a_network_fails_within_seconds() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("mined.jsonl");
    let started = Instant::now();
    let o = mine_cmd(&format!("http://127.0.0.1:{port}"), &out).output().unwrap();
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(took < Duration::from_secs(10), "gave up after {took:?}: {stderr}");
    assert!(stderr.contains("cannot reach the GitHub API at http://127.0.0.1:"), "{stderr}");
    assert!(!stderr.contains("KILLTEST"), "{stderr}");
    // stderr is a pipe here: log lines carry no colour codes.
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
}

/// One token GitHub refuses (401) among two: the mine goes on with the other, and the warning
/// names the refused one by position, never by value. All refused: a clear error naming each.
#[test]
fn a_refused_token_is_skipped_and_named_by_its_position() {
    let fake = Arc::new(big_repo(Duration::ZERO));
    let f = fake.clone();
    let server = ReplayServer::start(move |r| {
        if r.header("authorization").unwrap_or_default().contains("BADCRED") {
            return swe_forge_test_support::replay::Reply::status(401, r#"{"message":"Bad credentials"}"#);
        }
        f.answer(r)
    });
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("mined.jsonl");
    let o = mine_cmd(server.url(), &out)
        .env("GITHUB_TOKEN", "ghp_BADCREDtoken11111111111111111111111111,ghp_GOODtoken2222222222222222222222222222")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("GitHub refused token #1 of 2 (401 Unauthorized: Bad credentials)"), "{stderr}");
    assert!(!stderr.contains("BADCRED") && !stderr.contains("GOODtoken"), "{stderr}");
    assert_eq!(candidates(&out).len(), 40);

    let out = tmp.path().join("refused.jsonl");
    let o = mine_cmd(server.url(), &out)
        .env("GITHUB_TOKEN", "ghp_BADCREDtoken11111111111111111111111111,ghp_BADCREDtoken2222222222222222222222222")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("GitHub refused every token: token #1 of 2 (401"), "{stderr}");
    assert!(stderr.contains("token #2 of 2 (401 Unauthorized: Bad credentials)"), "{stderr}");
    assert!(!stderr.contains("BADCRED"), "{stderr}");
}
