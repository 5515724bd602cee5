//! The request-count benchmark (docs/benchmarks/mining.md): a replayed repository with 1,000 PRs
//! of a realistic mix, mined once through the API only and once with a local clone for the diffs.
//! Prints the numbers; asserts the costs the design promises.

use std::sync::Arc;
use std::time::Instant;

use git2::build::TreeUpdateBuilder;
use git2::{FileMode, Oid, Repository, Signature, Time};
use swe_forge_mine::{Client, ClientOptions, GithubOptions, Journal, Limits, Quiet, Token, diff_commits, mine_github};
use swe_forge_test_support::replay::{FakeGithub, FakePr, ReplayServer};

use crate::support::read_candidates;

const PRS: u64 = 1000;

/// A small deterministic generator (xorshift).
fn mix(n: u64) -> u64 {
    let mut x = n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x
}

/// The paths PR `n` changes: 55% code and tests, 30% code only, 8% tests only, 5% docs only,
/// 2% sixty files (over the size limit).
fn files(n: u64) -> Vec<String> {
    let m = n % 7;
    match mix(n) % 100 {
        0..55 => vec![format!("pkg/m{m}.go"), format!("pkg/m{m}_test.go")],
        55..85 => vec![format!("pkg/m{m}.go")],
        85..93 => vec![format!("pkg/m{m}_test.go")],
        93..98 => vec![format!("docs/page{m}.md")],
        _ => (0..60).map(|i| format!("pkg/big/f{i}.go")).collect(),
    }
}

/// A repository with a base commit and one head commit per PR.
fn build_repo(dir: &std::path::Path) -> (Oid, Vec<Oid>) {
    let repo = Repository::init_bare(dir).unwrap();
    let sig = Signature::new("bench", "bench@example.invalid", &Time::new(1_704_067_200, 0)).unwrap();
    let empty = repo.treebuilder(None).unwrap().write().unwrap();
    let mut base_tree = TreeUpdateBuilder::new();
    let a = repo.blob(b"package pkg\n\n// a\n").unwrap();
    for m in 0..7 {
        base_tree.upsert(format!("pkg/m{m}.go"), a, FileMode::Blob);
        base_tree.upsert(format!("pkg/m{m}_test.go"), a, FileMode::Blob);
        base_tree.upsert(format!("docs/page{m}.md"), a, FileMode::Blob);
    }
    let base_tree = base_tree.create_updated(&repo, &repo.find_tree(empty).unwrap()).unwrap();
    let base_tree = repo.find_tree(base_tree).unwrap();
    let base = repo.commit(Some("refs/heads/main"), &sig, &sig, "base", &base_tree, &[]).unwrap();
    let base_commit = repo.find_commit(base).unwrap();
    let heads = (1..=PRS)
        .map(|n| {
            let blob = repo.blob(format!("package pkg\n\n// b{n}\n").as_bytes()).unwrap();
            let mut t = TreeUpdateBuilder::new();
            for f in files(n) {
                t.upsert(f, blob, FileMode::Blob);
            }
            let tree = repo.find_tree(t.create_updated(&repo, &base_tree).unwrap()).unwrap();
            repo.commit(None, &sig, &sig, &format!("PR {n}"), &tree, &[&base_commit]).unwrap()
        })
        .collect();
    (base, heads)
}

/// 1,000 PRs: 8% closed without merging, 2% drafts, 5% bots; 60% linked by GitHub, 10% only by a
/// keyword in the body (their issue texts need a lookup), 30% unlinked.
fn thousand_prs(repo: &Repository, base: Oid, heads: &[Oid]) -> FakeGithub {
    let prs = (1..=PRS)
        .map(|n| {
            let r = mix(n.wrapping_add(7919));
            let head = heads[(n - 1) as usize];
            let diff = diff_commits(repo, base, head).unwrap();
            let mut pr = FakePr {
                base_sha: base.to_string(),
                head_sha: head.to_string(),
                merged: r % 100 >= 8,
                draft: (r / 100).is_multiple_of(50),
                author: if (r / 5000).is_multiple_of(20) { "renovate[bot]".into() } else { format!("dev{}", r % 40) },
                ..FakePr::merged(n, &diff)
            };
            match (r / 100_000) % 10 {
                0..6 => pr.closing = vec![("acme/big".into(), 5000 + n, format!("Bug {n}"), Some("details".into()))],
                6 => pr.body = Some(format!("Fixes: #{}", 5000 + n)),
                _ => pr.body = Some("Refactoring.".into()),
            }
            pr
        })
        .collect();
    let mut fake = FakeGithub::new("acme/big", prs);
    for n in 1..=PRS {
        fake = fake.issue("acme/big", 5000 + n, &format!("Bug {n}"), Some("details"));
    }
    fake
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_count_on_a_replayed_repository_with_1000_prs() {
    let tmp = tempfile::tempdir().unwrap();
    let clone = tmp.path().join("clones").join("acme").join("big");
    let (base, heads) = build_repo(&clone);
    let fake = Arc::new(thousand_prs(&Repository::open(&clone).unwrap(), base, &heads));
    let f = fake.clone();
    let server = ReplayServer::start(move |r| f.answer(r));
    let mut opts = GithubOptions::new(vec!["acme/big".into()]);
    opts.page_size = 100;
    opts.limits = Limits { max_files: Some(50), max_fix_lines: None };

    let mut results = Vec::new();
    for (label, repos_dir) in [("API only", None), ("diffs from a local clone", Some(tmp.path().join("clones")))] {
        let out = tmp.path().join(format!("{}.jsonl", results.len()));
        let client = Client::new(ClientOptions::new(server.url(), vec![Token::new("bench")])).unwrap();
        let mut journal = Journal::open(&out, false).unwrap();
        let mut o = opts.clone();
        o.repos_dir = repos_dir;
        let started = Instant::now();
        mine_github(&o, &client, &mut journal, &Quiet).await.unwrap();
        let elapsed = started.elapsed();
        let s = client.stats();
        let f = journal.funnels().remove(0);
        eprintln!(
            "{label}: {} PRs seen, {} merged, {} linked, {} with tests, {} kept; {} requests ({} GraphQL, {} REST) = {:.3} per kept candidate, {:.3} per PR; {:.2?}",
            f.seen,
            f.merged,
            f.linked,
            f.with_tests,
            f.kept,
            s.requests,
            s.graphql,
            s.rest,
            s.requests as f64 / f.kept as f64,
            s.requests as f64 / f.seen as f64,
            elapsed
        );
        assert_eq!(f.seen, PRS);
        // 10 listing pages and at most one issue lookup per page.
        assert!(s.graphql <= 20, "{s:?}");
        results.push((out, s, f));
    }
    let (api, clone_run) = (&results[0], &results[1]);
    assert_eq!(std::fs::read_to_string(&api.0).unwrap(), std::fs::read_to_string(&clone_run.0).unwrap());
    // API only: one diff per kept candidate and none for any other PR.
    assert_eq!(api.1.rest, api.2.kept, "{:?}", api.1);
    assert!((api.1.requests as f64) / (api.2.kept as f64) < 1.1, "{:?}", api.1);
    // With a local clone: no request per PR at all.
    assert_eq!(clone_run.1.rest, 0);
    assert!(clone_run.1.requests as f64 / clone_run.2.kept as f64 <= 0.1);
    assert!(read_candidates(&api.0).len() as u64 == api.2.kept);
}
