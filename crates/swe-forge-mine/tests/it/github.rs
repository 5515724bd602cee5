//! GitHub mode against the local replay server: the fixture PRs served as GitHub would serve them,
//! with a secondary rate limit, a 502, a malformed body, pagination and 304s; every request counted.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use swe_forge_core::Instance;
use swe_forge_mine::{
    Client, ClientOptions, Decision, GithubOptions, IssueTexts, Journal, Quiet, Token, mine_github, progress_path,
};
use swe_forge_test_support::replay::{FakeGithub, FakePr, Fault, ReplayServer, Target};

use crate::support::{read_candidates, root};

const TOKEN_A: &str = "ghp_TESTtokenAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const TOKEN_B: &str = "ghp_TESTtokenBBBBBBBBBBBBBBBBBBBBBBBBBBBB";

fn fixture_records() -> Vec<swe_forge_core::Instance> {
    swe_forge_core::read_jsonl(std::fs::read(root().join("data/fixtures/instances.jsonl")).unwrap().as_slice()).unwrap()
}

/// The gostack fixture PRs as GitHub would list them: the recorded titles, bodies, bases and
/// issues, and a `.diff` that is the fix patch followed by the test patch (GitHub sorts by path).
fn gostack_on_github() -> FakeGithub {
    let prs = fixture_records()
        .into_iter()
        .filter(|r| r.repo == "gostack")
        .map(|r| FakePr {
            title: r.title.clone(),
            body: r.body.clone(),
            base_sha: r.base.sha.clone(),
            closing: r
                .resolved_issues
                .iter()
                .map(|i| ("forge-fixtures/gostack".to_owned(), i.number, i.title.clone(), i.body.clone()))
                .collect(),
            ..FakePr::merged(r.number, &format!("{}{}", r.fix_patch, r.test_patch))
        })
        .collect();
    FakeGithub::new("forge-fixtures/gostack", prs)
}

fn client(url: &str, tokens: &[&str], cache: Option<&Path>) -> Client {
    let mut o = ClientOptions::new(url, tokens.iter().map(|t| Token::new(t)).collect());
    o.cache_dir = cache.map(Path::to_path_buf);
    o.backoff = Duration::from_millis(10);
    o.max_wait = Duration::from_secs(30);
    Client::new(o).unwrap()
}

fn serve(fake: FakeGithub) -> (ReplayServer, Arc<FakeGithub>) {
    let fake = Arc::new(fake);
    let f = fake.clone();
    (ReplayServer::start(move |req| f.answer(req)), fake)
}

fn options(repo: &str, page_size: u32) -> GithubOptions {
    let mut o = GithubOptions::new(vec![repo.to_owned()]);
    o.page_size = page_size;
    o
}

#[tokio::test]
async fn fixture_prs_from_the_api_equal_the_recorded_candidates_despite_faults() {
    let fake = gostack_on_github()
        .fault(Target::Search, Fault::SecondaryLimit(1))
        .fault(Target::Search, Fault::Delay(Duration::ZERO))
        .fault(Target::Search, Fault::Malformed)
        .fault(Target::Diff, Fault::BadGateway);
    let (server, fake) = serve(fake);
    let tmp = tempfile::tempdir().unwrap();
    let (out, cache) = (tmp.path().join("mined.jsonl"), tmp.path().join("cache"));
    let c = client(server.url(), &[TOKEN_A, TOKEN_B], Some(&cache));
    let mut journal = Journal::open(&out, false).unwrap();
    mine_github(&options("forge-fixtures/gostack", 2), &c, &mut journal, &Quiet).await.unwrap();

    let mined = read_candidates(&out);
    let recorded: Vec<_> = fixture_records().into_iter().filter(|r| r.repo == "gostack").collect();
    assert_eq!(mined.len(), recorded.len());
    for (m, want) in mined.iter().zip(&recorded) {
        // The PR's dates come from the API into `swe_forge` (status candidate); the rest is the
        // recorded candidate.
        let meta = m.record.swe_forge.as_ref().expect("dated");
        assert_eq!(meta.status, swe_forge_core::ValidationStatus::Candidate);
        assert_eq!(meta.created_at.as_ref().map(|t| t.as_str()), Some("2024-01-10T08:30:00Z"));
        assert_eq!(meta.merged_at.as_ref().map(|t| t.as_str()), Some("2024-01-15T12:00:00Z"));
        let undated = Instance { swe_forge: None, ..m.record.clone() };
        assert_eq!(&undated, want, "{}", want.instance_id);
        assert_eq!(m.mining.issue_texts, IssueTexts::Resolved);
        assert!(m.mining.issues.iter().all(|i| i.github_link && i.keyword));
    }
    // 3 pages of 2 + the 403 and the malformed page retried; 6 diffs + the 502 retried.
    let stats = c.stats();
    assert_eq!((stats.graphql, stats.rest), (5, 7), "{stats:?}");
    assert_eq!(stats.requests as usize, server.requests().len());
    assert_eq!((stats.rate_limited, stats.server_errors, stats.malformed), (1, 1, 1));
    // The secondary limit parked token A; token B took over at once.
    let auth = fake.authorizations();
    assert_eq!(auth[0], format!("Bearer {TOKEN_A}"));
    assert_eq!(auth[1], format!("Bearer {TOKEN_B}"));
    assert_eq!(stats.token_switches, 1);
    assert_eq!(stats.waited_secs, 0, "another token was free: no wait");

    // A fresh re-run through the same cache costs 304s for every diff.
    let out2 = tmp.path().join("again.jsonl");
    let c2 = client(server.url(), &[TOKEN_A], Some(&cache));
    let mut journal = Journal::open(&out2, false).unwrap();
    mine_github(&options("forge-fixtures/gostack", 100), &c2, &mut journal, &Quiet).await.unwrap();
    assert_eq!(std::fs::read_to_string(&out2).unwrap(), std::fs::read_to_string(&out).unwrap());
    let s2 = c2.stats();
    assert_eq!((s2.graphql, s2.rest, s2.not_modified), (1, 6, 6), "{s2:?}");

    // Re-running into the finished output costs nothing.
    let c3 = client(server.url(), &[TOKEN_A], Some(&cache));
    let mut journal = Journal::open(&out, false).unwrap();
    mine_github(&options("forge-fixtures/gostack", 2), &c3, &mut journal, &Quiet).await.unwrap();
    assert_eq!(c3.stats().requests, 0);
    assert_eq!(read_candidates(&out).len(), 6);

    // No token anywhere on disk.
    for file in walk(tmp.path()) {
        let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
        assert!(!text.contains("TESTtoken"), "token in {}", file.display());
    }
    assert!(!format!("{:?}", Token::new(TOKEN_A)).contains("TESTtoken"));
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
    }
    out
}

fn diff(files: &[&str]) -> String {
    files
        .iter()
        .map(|p| {
            format!(
                "diff --git a/{p} b/{p}\nindex 1111111..2222222 100644\n--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-a\n+b\n"
            )
        })
        .collect()
}

#[tokio::test]
async fn links_filters_and_the_funnel() {
    let code = diff(&["lib.go", "lib_test.go"]);
    let pr = |n: u64| FakePr::merged(n, &code);
    let prs = vec![
        // GitHub links #100; the body also names #101 with a colon and a cross-repo issue.
        FakePr {
            body: Some(
                "<!-- Fixes #999 -->\nFixes: #101\nresolves other/lib#5\nCloses https://github.com/acme/lib/issues/100"
                    .into(),
            ),
            closing: vec![("acme/lib".into(), 100, "Crash".into(), Some("It crashes".into()))],
            ..pr(1)
        },
        // A keyword pointing at a pull request and one at a missing issue: not issues.
        FakePr { body: Some("fixes #1, fixed #404".into()), ..pr(2) },
        FakePr { merged: false, body: Some("Fixes #101".into()), ..pr(3) },
        FakePr { draft: true, body: Some("Fixes #101".into()), ..pr(4) },
        FakePr { author: "dependabot[bot]".into(), body: Some("Fixes #101".into()), ..pr(5) },
        FakePr { body: Some("Fixes #101".into()), ..FakePr::merged(6, &diff(&["README.md", "lib.go"])) },
        FakePr { body: None, ..pr(7) },
        FakePr { commits: vec!["Fix the parser\n\nFIXES #102".into()], ..pr(8) },
        FakePr {
            body: Some("Fixes #101".into()),
            ..FakePr::merged(9, &diff(&["lib.go", "a.go", "b.go", "c_test.go"]))
        },
    ];
    let fake = FakeGithub::new("acme/lib", prs)
        .issue("acme/lib", 101, "Wrong answer", Some("A() returns 1"))
        .issue("acme/lib", 102, "Parser", None)
        .issue("other/lib", 5, "Upstream bug", Some("see upstream"));
    let (server, _fake) = serve(fake);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out.jsonl");
    let c = client(server.url(), &[TOKEN_A], None);
    let mut journal = Journal::open(&out, false).unwrap();
    let mut opts = options("acme/lib", 100);
    opts.limits.max_files = Some(3);
    mine_github(&opts, &c, &mut journal, &Quiet).await.unwrap();

    let mined = read_candidates(&out);
    let numbers: Vec<u64> = mined.iter().map(|c| c.record.number).collect();
    assert_eq!(numbers, [1, 8]);
    let first = &mined[0];
    let issues: Vec<(String, u64, bool, bool, bool)> = first
        .mining
        .issues
        .iter()
        .map(|i| (i.repo.clone(), i.number, i.cross_repo, i.github_link, i.keyword))
        .collect();
    assert_eq!(
        issues,
        [
            ("acme/lib".into(), 100, false, true, true),
            ("acme/lib".into(), 101, false, false, true),
            ("other/lib".into(), 5, true, false, true),
        ]
    );
    let texts: Vec<(u64, &str)> = first.record.resolved_issues.iter().map(|i| (i.number, i.title.as_str())).collect();
    assert_eq!(texts, [(100, "Crash"), (101, "Wrong answer"), (5, "Upstream bug")]);
    assert_eq!(mined[1].record.resolved_issues[0].title, "Parser");

    let f = &journal.funnels()[0];
    assert_eq!((f.seen, f.merged, f.linked, f.with_tests, f.kept), (9, 8, 3, 2, 2), "{f:?}");
    let dropped: Vec<(&str, u64)> = f.dropped.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        dropped,
        [("bot", 1), ("draft", 1), ("no_linked_issue", 2), ("no_tests", 1), ("not_merged", 1), ("too_large", 1)]
    );
    assert_eq!(f.dropped.get(Decision::NoTests.as_str()), Some(&1));
    // One listing, one issue lookup for the whole page, and diffs only for the PRs that the listing
    // and the lookup could not rule out (1, 8): PR 2 (its references are a PR and nothing), PR 6
    // (no test file) and the others cost no request of their own.
    let stats = c.stats();
    assert_eq!((stats.graphql, stats.rest), (2, 2), "{stats:?}");
    assert!(progress_path(&out).exists());
}

#[tokio::test]
async fn a_spent_token_hands_over_and_a_lone_token_waits_for_its_reset() {
    let code = diff(&["lib.go", "lib_test.go"]);
    let prs = vec![FakePr { body: Some("Fixes #7".into()), ..FakePr::merged(1, &code) }];
    let fake = FakeGithub::new("acme/lib", prs.clone())
        .issue("acme/lib", 7, "Bug", None)
        .fault(Target::Search, Fault::PrimaryLimit(3600));
    let (server, fake) = serve(fake);
    let tmp = tempfile::tempdir().unwrap();
    let c = client(server.url(), &[TOKEN_A, TOKEN_B], None);
    let mut journal = Journal::open(&tmp.path().join("a.jsonl"), false).unwrap();
    mine_github(&options("acme/lib", 10), &c, &mut journal, &Quiet).await.unwrap();
    let auth = fake.authorizations();
    assert!(auth[1..].iter().all(|a| a.ends_with(TOKEN_B)), "token A is parked for an hour: {}", auth.len());
    assert_eq!(c.stats().rate_limited, 1);

    // One token, reset in 1 s: the client waits, then goes on.
    let fake =
        FakeGithub::new("acme/lib", prs).issue("acme/lib", 7, "Bug", None).fault(Target::Diff, Fault::PrimaryLimit(1));
    let (server, _fake) = serve(fake);
    let c = client(server.url(), &[TOKEN_A], None);
    let mut journal = Journal::open(&tmp.path().join("b.jsonl"), false).unwrap();
    let started = std::time::Instant::now();
    mine_github(&options("acme/lib", 10), &c, &mut journal, &Quiet).await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(900));
    assert_eq!(read_candidates(&tmp.path().join("b.jsonl")).len(), 1);

    // GraphQL's own limit answer (200 + RATE_LIMITED): the client waits for the reset and goes on.
    let prs = vec![FakePr { body: Some("Fixes #7".into()), ..FakePr::merged(1, &code) }];
    let fake = FakeGithub::new("acme/lib", prs)
        .issue("acme/lib", 7, "Bug", None)
        .fault(Target::Search, Fault::GraphqlRateLimited(1));
    let (server, _fake) = serve(fake);
    let c = client(server.url(), &[TOKEN_A], None);
    let mut journal = Journal::open(&tmp.path().join("g.jsonl"), false).unwrap();
    mine_github(&options("acme/lib", 10), &c, &mut journal, &Quiet).await.unwrap();
    assert_eq!(read_candidates(&tmp.path().join("g.jsonl")).len(), 1);
    assert_eq!(c.stats().graphql, 3, "{:?}", c.stats());

    // A limit longer than --max-wait stops the mine with an error that names no token.
    let fake = FakeGithub::new("acme/lib", vec![]).fault(Target::Search, Fault::PrimaryLimit(7200));
    let (server, _fake) = serve(fake);
    let c = client(server.url(), &[TOKEN_A], None);
    let mut journal = Journal::open(&tmp.path().join("c.jsonl"), false).unwrap();
    let err = mine_github(&options("acme/lib", 10), &c, &mut journal, &Quiet).await.unwrap_err().to_string();
    assert!(err.contains("rate limited") && !err.contains("TESTtoken"), "{err}");
}

#[tokio::test]
async fn a_window_over_the_search_cap_is_halved_until_each_half_fits() {
    // 1,050 PRs closed over 2024 (GitHub search serves at most 1,000 results per query); every
    // tenth changes tests, the others are ruled out from the listing without a diff request.
    let (code, code_only) = (diff(&["lib.go", "lib_test.go"]), diff(&["lib.go"]));
    let prs: Vec<FakePr> = (1..=1050u64)
        .map(|n| {
            let day = (n - 1) * 366 / 1050;
            let closed_at = swe_forge_mine::format_time(1_704_067_200 + day as i64 * 86_400 + 3600);
            let d = if n.is_multiple_of(10) { &code } else { &code_only };
            FakePr { closed_at, ..FakePr::merged(n, d) }
        })
        .collect();
    let (server, _fake) = serve(FakeGithub::new("acme/lib", prs));
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out.jsonl");
    let c = client(server.url(), &[TOKEN_A], None);
    let mut journal = Journal::open(&out, false).unwrap();
    let mut opts = options("acme/lib", 100);
    opts.window = swe_forge_mine::Window::parse(Some("2024-01-01"), Some("2024-12-31")).unwrap();
    opts.require_issue = false;
    mine_github(&opts, &c, &mut journal, &Quiet).await.unwrap();
    let f = &journal.funnels()[0];
    assert_eq!((f.seen, f.kept), (1050, 105), "{f:?}");
    let mined = read_candidates(&out);
    let unique: std::collections::BTreeSet<u64> = mined.iter().map(|c| c.record.number).collect();
    assert_eq!((mined.len(), unique.len()), (105, 105));
    for r in server.requests().iter().filter(|r| r.body.contains("search(")) {
        let v: serde_json::Value = serde_json::from_str(&r.body).unwrap();
        assert!(v["variables"]["q"].as_str().unwrap().contains("closed:2024-"), "{}", v["variables"]["q"]);
    }
}
