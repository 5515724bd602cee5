//! `swe-forge review` end to end: a generated 5,000-instance dataset is served, the page is driven
//! in headless Chromium (load, filter, review with the keyboard, save, reload and see the
//! decision), the server's paging is timed, foreign requests are refused, and `swe-forge curate`
//! and `publish` carry the decisions into the records and the published folder.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use swe_forge_core::{ForgeMeta, Instance, RejectReason, Rejection, ValidationStatus};

use crate::browser::Browser;
use crate::support::{read_records, root, swe_forge, text};

const LANGS: [&str; 7] = ["go", "rust", "java", "js", "ts", "c", "cpp"];

/// Writes `n` records made from the devset (languages in turn, every fifth rejected, long test
/// lists trimmed so the file stays small) and run logs for the first one.
pub fn generate(path: &Path, n: usize) -> Vec<Instance> {
    let devset = read_records(&root().join("data/devset/instances.jsonl"));
    let records: Vec<Instance> = (0..n)
        .map(|i| {
            let mut r = devset[i % devset.len()].clone();
            r.number = 100_000 + i as u64;
            r.instance_id = r.expected_id();
            r.lang = Some(LANGS[i % LANGS.len()].to_owned());
            for list in [&mut r.run_result, &mut r.test_patch_result, &mut r.fix_patch_result] {
                *list = Default::default();
            }
            r.p2p_tests = std::mem::take(&mut r.p2p_tests).into_iter().take(20).collect();
            let mut meta =
                ForgeMeta::new(if i % 5 == 4 { ValidationStatus::Rejected } else { ValidationStatus::Accepted });
            if i % 5 == 4 {
                meta.rejections.push(Rejection::new(RejectReason::NoFixedTests, ""));
            }
            meta.merged_at = Some(
                swe_forge_core::Timestamp::parse(&format!("20{:02}-{:02}-15T12:00:00Z", 18 + i % 7, 1 + i % 12))
                    .unwrap(),
            );
            r.swe_forge = Some(meta);
            r
        })
        .collect();
    let file = std::fs::File::create(path).unwrap();
    swe_forge_core::write_jsonl(std::io::BufWriter::new(file), &records).unwrap();
    let logs = path.with_extension("work").join("logs").join(&records[0].instance_id);
    std::fs::create_dir_all(&logs).unwrap();
    for phase in ["run", "test", "fix"] {
        std::fs::write(logs.join(format!("{phase}.log")), format!("hello from the {phase} log\n")).unwrap();
    }
    records
}

struct Server {
    child: Child,
    url: String,
    port: u16,
}

impl Server {
    fn start(dataset: &Path, store: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_swe-forge"))
            .args(["review", "--port", "0", "--reviewer", "alice", "--dataset"])
            .arg(dataset)
            .arg("--store")
            .arg(store)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let url = line.trim().to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "review printed {line:?}");
        let port = url.trim_end_matches('/').rsplit(':').next().unwrap().parse().unwrap();
        Server { child, url, port }
    }

    /// One raw HTTP request; returns the status code and the body.
    fn request(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        let mut req = format!("{method} {path} HTTP/1.1\r\nContent-Length: {}\r\n", body.len());
        if !headers.iter().any(|h| h.0 == "Host") {
            req += &format!("Host: 127.0.0.1:{}\r\n", self.port);
        }
        for (k, v) in headers {
            req += &format!("{k}: {v}\r\n");
        }
        req += "\r\n";
        s.write_all(req.as_bytes()).unwrap();
        s.write_all(body.as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        let status = out[9..12].parse().unwrap();
        (status, out.split_once("\r\n\r\n").unwrap().1.to_owned())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn curated(path: &Path) -> Vec<Instance> {
    read_records(path)
}

#[test]
fn review_page_in_chromium_then_curate_carries_the_decisions() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = tmp.path().join("validated.jsonl");
    let store = tmp.path().join("state.sqlite");
    let records = generate(&dataset, 5000);
    let server = Server::start(&dataset, &store);
    let go: Vec<&Instance> = records.iter().filter(|r| r.lang.as_deref() == Some("go")).collect();

    // Server-side filtering and paging stay fast on 5,000 instances (debug build).
    for path in ["/api/list?lang=go&offset=300&limit=100", "/api/list?q=serde&review=unreviewed", "/api/meta"] {
        let start = Instant::now();
        let (status, body) = server.request("GET", path, &[], "");
        assert_eq!(status, 200, "{path}: {body}");
        assert!(start.elapsed() < Duration::from_millis(750), "{path} took {:?}", start.elapsed());
    }
    let (_, body) = server.request("GET", "/api/list?lang=go&offset=300&limit=100", &[], "");
    let page: Value = serde_json::from_str(&body).unwrap();
    assert_eq!((page["total"].as_u64(), page["items"].as_array().unwrap().len()), (Some(go.len() as u64), 100));
    assert_eq!(page["items"][0]["id"], go[300].instance_id.as_str());
    // Other origins are refused.
    let (status, _) = server.request("GET", "/api/meta", &[("Host", "evil.example")], "");
    assert_eq!(status, 403);
    let review =
        format!(r#"{{"id":"{}","severe_problem":false,"issue_clarity":3,"test_adequacy":3}}"#, records[1].instance_id);
    let (status, _) = server.request("POST", "/api/review", &[("Content-Type", "text/plain")], &review);
    assert_eq!(status, 403);
    let (status, _) = server.request(
        "POST",
        "/api/review",
        &[("Content-Type", "application/json"), ("Origin", "http://evil.example")],
        &review,
    );
    assert_eq!(status, 403);

    let profile = tmp.path().join("chromium-profile");
    let mut b = Browser::launch(&profile);
    b.navigate(&server.url);
    b.wait_for("document.body.dataset.ready === '1'");
    assert_eq!(b.eval("document.querySelectorAll('#list li').length"), 100);
    // The page lists what validation accepted unless rejected instances are shown.
    assert_eq!(b.eval("document.getElementById('page-info').textContent"), "1-100 of 4000");
    let go: Vec<&Instance> = go.into_iter().filter(|r| r.status() == ValidationStatus::Accepted).collect();

    // Filter on Go, then review the first instance with the keyboard only.
    b.eval("(() => { const s = document.getElementById('f-lang'); s.value = 'go'; s.dispatchEvent(new Event('change')); })()");
    b.wait_for(&format!("document.getElementById('page-info').textContent === '1-100 of {}'", go.len()));
    b.key("j");
    b.wait_for(&format!("document.getElementById('d-title').textContent.startsWith('{}')", go[0].instance_id));
    assert_eq!(b.eval("document.querySelectorAll('#d-fix .add').length > 0"), true);
    assert_eq!(b.eval("document.getElementById('d-logs').textContent.includes('hello from the fix log')"), true);
    assert_eq!(b.eval("document.querySelectorAll('#t-table tbody tr').length > 0"), true);
    for k in ["0", "3", "2", "2", "n"] {
        b.key(k);
    }
    b.type_text("looks fine");
    b.key("Escape");
    b.key("s");
    b.wait_for("document.getElementById('save-status').textContent.startsWith('saved by alice')");
    b.wait_for(&format!(
        "document.querySelector('#list li[data-id=\"{}\"]').textContent.includes('answered')",
        go[0].instance_id
    ));
    // The questionnaire is not a decision: the instance is still undecided.
    assert_eq!(b.eval("document.getElementById('decision-state').textContent"), "· undecided");
    // The decision, with the keyboard only: d, the reason, Enter.
    b.key("d");
    b.wait_for("document.activeElement === document.getElementById('reason')");
    b.key("Enter");
    b.wait_for("document.getElementById('decision-status').textContent.includes('needs a reason')");
    b.type_text("the issue asks for something else");
    b.key("Enter");
    b.wait_for("document.getElementById('decision-status').textContent.startsWith('drop by alice')");
    b.wait_for(&format!("document.querySelector('#list li[data-id=\"{}\"] .badge.drop') !== null", go[0].instance_id));

    // A reload shows the same instance, filter and saved decision, read back from the store.
    b.reload();
    b.wait_for("document.body.dataset.ready === '1'");
    b.wait_for(&format!("document.getElementById('d-title').textContent.startsWith('{}')", go[0].instance_id));
    b.wait_for("document.getElementById('save-status').textContent.startsWith('saved by alice')");
    b.wait_for("document.getElementById('decision-status').textContent.includes('the issue asks for something else')");
    assert_eq!(b.eval("document.getElementById('f-lang').value"), "go");
    assert_eq!(b.eval("document.getElementById('notes').value"), "looks fine");
    assert_eq!(
        b.eval("[...document.querySelectorAll('.question button.chosen')].map(x => x.textContent.trim()[0]).join('')"),
        "0322"
    );

    // The next one gets a severe problem: the keep rule drops it.
    b.key("j");
    b.wait_for(&format!("document.getElementById('d-title').textContent.startsWith('{}')", go[1].instance_id));
    for k in ["1", "3", "3", "4", "s"] {
        b.key(k);
    }
    b.wait_for("document.getElementById('save-status').textContent.includes('the keep rule would drop it')");
    // A draft survives moving away and back.
    b.key("j");
    b.wait_for(&format!("document.getElementById('d-title').textContent.startsWith('{}')", go[2].instance_id));
    b.key("0");
    assert_eq!(b.eval("document.getElementById('save-status').textContent"), "unsaved");
    b.key("k");
    b.wait_for(&format!("document.getElementById('d-title').textContent.startsWith('{}')", go[1].instance_id));
    b.key("j");
    b.wait_for(&format!("document.getElementById('d-title').textContent.startsWith('{}')", go[2].instance_id));
    assert_eq!(b.eval("document.getElementById('save-status').textContent"), "unsaved");
    assert_eq!(b.eval("document.querySelector('.question[data-q=severe_problem] button.chosen').textContent"), "0 no");
    assert_eq!(
        b.eval(&format!(
            "document.querySelector('#list li[data-id=\"{}\"]').textContent.includes('draft')",
            go[2].instance_id
        )),
        true
    );
    drop(b);
    drop(server);

    // curate applies the decisions; the export carries them.
    let out = tmp.path().join("curated.jsonl");
    let kept = tmp.path().join("kept.jsonl");
    let args = |o: &PathBuf, extra: &[&str]| {
        let mut a = vec!["curate", "--dataset", dataset.to_str().unwrap(), "--store", store.to_str().unwrap()];
        a.extend(["--out", o.to_str().unwrap()]);
        a.extend(extra);
        swe_forge(&a.iter().map(|s| &**s).collect::<Vec<_>>())
    };
    let o = args(&out, &["--no-dedup"]);
    assert!(o.status.success(), "{}", text(&o));
    let all = curated(&out);
    let get = |id: &str| all.iter().find(|r| r.instance_id == id).unwrap().swe_forge.clone().unwrap();
    let first = get(&go[0].instance_id);
    let decision = first.decision.clone().unwrap();
    assert_eq!(
        (decision.verdict, decision.reason.as_str(), decision.reviewer.as_str()),
        (swe_forge_core::Verdict::Drop, "the issue asks for something else", "alice")
    );
    let rv = first.review.unwrap();
    assert_eq!((rv.reviewer.as_str(), rv.keep, rv.issue_clarity, rv.notes.as_str()), ("alice", true, 3, "looks fine"));
    let d = first.difficulty.unwrap();
    assert_eq!((d.label, d.source), (swe_forge_core::DifficultyLabel::Medium, swe_forge_core::LabelSource::Human));
    assert!(!get(&go[1].instance_id).review.unwrap().keep);
    assert!(all.iter().all(|r| r.swe_forge.as_ref().unwrap().difficulty.is_some()));
    let o = args(&kept, &["--no-dedup", "--kept-only"]);
    assert!(o.status.success(), "{}", text(&o));
    let kept = curated(&kept);
    assert_eq!(kept.len(), 4000 - 2, "accepted minus the one the keep rule drops and the one decided drop");
    assert!(!kept.iter().any(|r| r.instance_id == go[1].instance_id || r.instance_id == go[0].instance_id));
}

/// The dataset rewritten while the server runs: it is indexed again, every id still serves its
/// own record, and a review of the record as it was is refused with 409, nothing saved.
#[test]
fn a_dataset_changed_while_served_is_indexed_again_and_a_stale_review_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = tmp.path().join("validated.jsonl");
    let store = tmp.path().join("state.sqlite");
    let mut records = generate(&dataset, 20);
    let server = Server::start(&dataset, &store);
    let open = |id: &str| -> Value {
        let (status, body) = server.request("GET", &format!("/api/instance?id={id}"), &[], "");
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    };
    let (a, b) = (records[3].instance_id.clone(), records[5].instance_id.clone());
    let (a_before, b_before) = (open(&a), open(&b));

    // Rewritten in place: the first record gone (every offset moves), a's title changed.
    records.remove(0);
    records.iter_mut().find(|r| r.instance_id == a).unwrap().title = "a title changed after review began".into();
    let mut text = Vec::new();
    swe_forge_core::write_jsonl(&mut text, &records).unwrap();
    std::fs::write(&dataset, text).unwrap();

    let b_after = open(&b);
    assert_eq!(b_after["record"]["instance_id"], b.as_str(), "another record served under {b}");
    assert_eq!(b_after["digest"], b_before["digest"], "b did not change");
    let a_after = open(&a);
    assert_eq!(a_after["record"]["title"], "a title changed after review began");
    assert_ne!(a_after["digest"], a_before["digest"]);
    let (_, meta) = server.request("GET", "/api/meta", &[], "");
    assert_eq!(serde_json::from_str::<Value>(&meta).unwrap()["total"], 19);

    let post = |id: &str, digest: &Value| {
        let body = format!(
            r#"{{"id":"{id}","record_digest":{digest},"severe_problem":false,"issue_clarity":3,"test_adequacy":3}}"#
        );
        server.request("POST", "/api/review", &[("Content-Type", "application/json")], &body)
    };
    let (status, body) = post(&a, &a_before["digest"]);
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("changed") && body.contains("nothing was saved"), "{body}");
    assert!(open(&a)["review"].is_null(), "the stale review was saved");
    let (status, body) = post(&b, &b_before["digest"]);
    assert_eq!(status, 200, "{body}");
    let (status, body) = post(&a, &a_after["digest"]);
    assert_eq!(status, 200, "{body}");
    // An instance gone from the dataset since it was opened.
    let gone = open(&records[0].instance_id);
    records.remove(0);
    let mut text = Vec::new();
    swe_forge_core::write_jsonl(&mut text, &records).unwrap();
    std::fs::write(&dataset, text).unwrap();
    let (status, body) = post(gone["id"].as_str().unwrap(), &gone["digest"]);
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("no longer in"), "{body}");
}

/// A hundred clients that connect and say nothing: the server's threads stay few (no thread per
/// connection) and it still answers once they go away.
#[test]
fn many_idle_connections_do_not_grow_the_servers_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = tmp.path().join("validated.jsonl");
    generate(&dataset, 10);
    let server = Server::start(&dataset, &tmp.path().join("state.sqlite"));
    let threads = || std::fs::read_dir(format!("/proc/{}/task", server.child.id())).unwrap().count();
    let before = threads();
    let idle: Vec<TcpStream> = (0..100).map(|_| TcpStream::connect(("127.0.0.1", server.port)).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(500));
    let during = threads();
    assert!(during <= before + 4 && during < 24, "{before} threads before, {during} with 100 idle connections");
    drop(idle);
    let (status, body) = server.request("GET", "/api/meta", &[], "");
    assert_eq!(status, 200, "{body}");
}

/// A demo-shaped dataset: `demo.jsonl` with its logs in `demo-work/` (where the demo's pipeline
/// puts them), one instance rejected `pass_to_fail` with `go test -json` logs, two accepted.
fn demo_like(dir: &Path) -> (PathBuf, Vec<Instance>) {
    use swe_forge_core::{TestStatus::*, Transition};
    let t = |run, test, fix| Transition { run, test, fix };
    let mut records = Vec::new();
    for n in 1..=3u64 {
        let mut r = swe_forge_test_support::record("forge-fixtures", "gostack", n);
        r.title =
            format!("Pop on an empty stack returns ErrEmpty ({n}) <img src=x onerror=\"document.title='owned'\">");
        r.lang = Some("go".into());
        r.fix_patch =
            "diff --git a/stack.go b/stack.go\n--- a/stack.go\n+++ b/stack.go\n@@ -1 +1 @@\n-old\n+new\n".into();
        r.f2p_tests.insert("gostack::TestPopEmptyReturnsError".into(), t(None, Fail, Pass));
        r.p2p_tests.insert("gostack::TestPushThenPop".into(), t(Pass, Pass, Pass));
        r.p2p_tests.insert("gostack::Test<b>bold</b>".into(), t(Pass, Pass, Pass));
        let mut meta = ForgeMeta::new(ValidationStatus::Accepted);
        let (run, test, fix) = (&mut r.run_result, &mut r.test_patch_result, &mut r.fix_patch_result);
        run.passed_tests = vec!["gostack::TestLen".into(), "gostack::TestPushThenPop".into()];
        test.passed_tests = run.passed_tests.clone();
        test.failed_tests = vec!["gostack::TestPopEmptyReturnsError".into()];
        fix.passed_tests = vec!["gostack::TestPopEmptyReturnsError".into(), "gostack::TestPushThenPop".into()];
        if n == 2 {
            fix.failed_tests = vec!["gostack::TestLen".into()];
            meta = ForgeMeta::new(ValidationStatus::Rejected);
            meta.rejections.push(Rejection::new(RejectReason::PassToFail, "gostack::TestLen"));
        } else {
            fix.passed_tests.push("gostack::TestLen".into());
            r.p2p_tests.insert("gostack::TestLen".into(), t(Pass, Pass, Pass));
        }
        if n == 1 {
            flag_for_review(&mut r, &mut meta);
        }
        r.swe_forge = Some(meta);
        let logs = dir.join("demo-work/logs").join(&r.instance_id);
        std::fs::create_dir_all(&logs).unwrap();
        for phase in ["run", "test", "fix"] {
            let fails = n == 2 && phase == "fix";
            let mut log = String::from("swe-forge: running the tests\n");
            let ev = |test: &str, out: &str| {
                format!(
                    "{{\"Time\":\"2026-01-01T00:00:00Z\",\"Action\":\"output\",\"Package\":\"gostack\",\"Test\":\"{test}\",\"Output\":{}}}\n",
                    serde_json::to_string(out).unwrap()
                )
            };
            log += &ev("TestPushThenPop", "=== RUN   TestPushThenPop\n");
            log += &ev("TestPushThenPop", "--- PASS: TestPushThenPop (0.00s)\n");
            log += &ev("TestLen", "=== RUN   TestLen\n");
            if fails {
                let long = format!("    stack_test.go:20: Len() = 1; want 2 {}\n", "and a very long line ".repeat(40));
                log += &ev("TestLen", &long);
                log += &ev("TestLen", "--- FAIL: TestLen (0.00s)\n");
            } else {
                log += &ev("TestLen", "--- PASS: TestLen (0.00s)\n");
            }
            std::fs::write(logs.join(format!("{phase}.log")), log).unwrap();
        }
        records.push(r);
    }
    std::fs::write(dir.join("demo-work/state.sqlite"), b"").unwrap();
    let dataset = dir.join("demo.jsonl");
    swe_forge_core::write_jsonl(std::fs::File::create(&dataset).unwrap(), &records).unwrap();
    (dataset, records)
}

/// What the first screen of the first demo-shaped instance shows: a leak whose matched line is
/// HTML, an untested hunk, the gold patch 3 of 3 and two held controls, a time bomb, an issue.
fn flag_for_review(r: &mut Instance, meta: &mut ForgeMeta) {
    use swe_forge_core::{Control, Evidence, HunkAblation, Leakage, Quality, QualityFlag, Specificity};
    r.resolved_issues.push(swe_forge_core::ResolvedIssue { number: 9, title: "Pop panics".into(), body: None });
    let mut q = Quality {
        leakage: Some(Leakage {
            score: 1.0,
            threshold: 0.5,
            added_lines: 1,
            matched_lines: vec!["new <img src=x onerror=\"document.title='leaked'\">".into()],
        }),
        specificity: Some(Specificity { files: vec!["stack.go".into()], ..Default::default() }),
        hunks: Some(HunkAblation {
            hunks: 2,
            not_code: 0,
            tried: 2,
            untested: vec!["stack.go @@ -1 +1 @@".into()],
            untested_share: 0.5,
            seconds: 12.0,
        }),
        ..Default::default()
    };
    q.raise(QualityFlag::SolutionLeak);
    q.raise(QualityFlag::UntestedHunks);
    meta.quality = Some(q);
    meta.evidence = Some(Evidence {
        gold_runs: 3,
        gold_resolved: 3,
        controls: ["empty_patch", "test_patch_alone"]
            .map(|name| Control { name: name.into(), f2p_passed: vec![], resolved: false })
            .to_vec(),
        network: vec![],
        layout: ["blank_line", "offset_hunks"]
            .map(|v| swe_forge_core::LayoutRun { variant: v.into(), held: true, ..Default::default() })
            .to_vec(),
    });
    meta.warnings.push(swe_forge_core::Warning::TimeBomb.with("fix run: certificate has expired"));
}

/// The review of a demo-shaped dataset with the keyboard only: the work folder found where the
/// demo put it, the per-test table naming the `pass_to_fail` test and its log section, decisions
/// (keep, needs work) with reasons, the address naming the instance shown (a changed hash opens
/// it, back returns), a layout that leaves the logs readable at 800, 1400 and 2560 px, and
/// `curate` and `publish` carrying the decisions (found next to the dataset without `--store`). With SWE_FORGE_SCREENSHOTS=DIR the three widths are saved
/// as PNGs there, with the first screen of a flagged instance (docs/review/ holds them).
#[test]
fn keyboard_review_with_decisions_tests_and_logs_then_curate() {
    let tmp = tempfile::tempdir().unwrap();
    let (dataset, records) = demo_like(tmp.path());
    let store = tmp.path().join("demo-work/state.sqlite");
    let server = Server::start(&dataset, &store);
    let ids: Vec<&str> = records.iter().map(|r| r.instance_id.as_str()).collect();
    let (_, meta) = server.request("GET", "/api/meta", &[], "");
    let meta: Value = serde_json::from_str(&meta).unwrap();
    assert_eq!(
        (meta["logs"]["origin"].as_str(), meta["logs"]["instances_with_logs"].as_u64()),
        (Some("found"), Some(3))
    );
    assert!(meta["logs"]["warning"].is_null(), "{meta}");
    // The decision route keeps the review route's defences.
    let body = format!(r#"{{"id":"{}","record_digest":"x","verdict":"drop","reason":"r"}}"#, ids[0]);
    for headers in [
        vec![("Content-Type", "text/plain")],
        vec![("Content-Type", "application/json"), ("Origin", "http://evil.example")],
        vec![("Content-Type", "application/json"), ("Host", "evil.example:80")],
    ] {
        let (status, answer) = server.request("POST", "/api/decision", &headers, &body);
        assert_eq!(status, 403, "{headers:?}: {answer}");
    }
    let (status, answer) = server.request("POST", "/api/decision", &[("Content-Type", "application/json")], &body);
    assert_eq!(status, 409, "a decision on a record it did not see: {answer}");
    let (status, answer) = server.request(
        "POST",
        "/api/decision",
        &[("Content-Type", "application/json")],
        &format!(r#"{{"id":"{}","record_digest":"x","verdict":"maybe"}}"#, ids[0]),
    );
    assert_eq!(status, 400, "{answer}");

    let mut b = Browser::launch(&tmp.path().join("chromium-profile"));
    b.viewport(1400, 900);
    // A shared link opens its instance and test.
    b.navigate(&format!("{}#/instance/{}?rejected=show&test=gostack%3A%3ATestLen", server.url, ids[1]));
    b.wait_for("document.body.dataset.ready === '1'");
    b.wait_for(&format!("document.body.dataset.shown === '{}'", ids[1]));
    b.wait_for("!document.getElementById('test-logs').hidden");
    assert_eq!(b.eval("document.title"), "swe-forge review", "the record's HTML ran");
    assert_eq!(b.eval("document.querySelectorAll('#detail img, #detail b').length"), 0);
    // The rejection names its test, linked; the table row says p2f and pass_to_fail.
    assert_eq!(b.eval("document.querySelector('#d-rejections a.test-link').textContent"), "gostack::TestLen");
    assert_eq!(
        b.eval("[...document.querySelector('#t-table tbody tr').cells].map(c => c.textContent).join('|')"),
        "gostack::TestLenpass_to_fail|PASS|PASS|FAIL|p2f|"
    );
    let section = b.eval("document.querySelector('#tl-body pre[data-phase=fix]').textContent");
    assert!(section.as_str().unwrap().contains("Len() = 1; want 2"), "{section}");
    assert!(!section.as_str().unwrap().contains("TestPushThenPop"), "another test's lines: {section}");
    assert!(
        b.eval("document.getElementById('validation-note').textContent").as_str().unwrap().contains("pass_to_fail")
    );

    // Keyboard only from here: k/j move and the address follows.
    b.eval("document.activeElement.blur()");
    b.key("k");
    b.wait_for(&format!("document.body.dataset.shown === '{}'", ids[0]));
    assert_eq!(b.eval("location.hash"), format!("#/instance/{}?rejected=show", ids[0]));
    // The first screen, without scrolling: the signals with their evidence, the gold patch and
    // the controls, the time bomb, the upstream links; the leaked line's HTML stays text.
    let raised = b.eval(
        "[...document.querySelectorAll('#d-signals tr.raised')].map(r => r.dataset.flag + ': ' + r.cells[2].textContent).join(' | ')",
    );
    let raised = raised.as_str().unwrap();
    assert!(raised.starts_with("solution_leak: 1 of 1 added lines"), "{raised}");
    assert!(raised.contains("new <img src=x onerror="), "{raised}");
    assert!(raised.contains("untested_hunks: 1 of 2 hunks") && raised.contains("stack.go @@ -1 +1 @@"), "{raised}");
    assert_eq!(b.eval("document.querySelector('#d-signals tr[data-flag=unspecific] .state').textContent"), "clear");
    assert_eq!(
        b.eval("document.getElementById('d-evidence').textContent"),
        "gold patch resolved 3 of 3 · layout variants 2 of 2 (blank_line held, offset_hunks held) · control empty_patch: held · control test_patch_alone: held"
    );
    assert_eq!(
        b.eval("document.querySelector('#d-warnings li.time_bomb').textContent"),
        "time_bomb: fix run: certificate has expired"
    );
    assert_eq!(
        b.eval("[...document.querySelectorAll('#d-links a')].map(a => a.href).join(' ')"),
        "https://github.com/forge-fixtures/gostack/pull/1 https://github.com/forge-fixtures/gostack/issues/9"
    );
    assert_eq!(b.eval("document.title"), "swe-forge review", "the leaked line's HTML ran");
    assert_eq!(
        b.eval("document.getElementById('d-signals').getBoundingClientRect().bottom <= window.innerHeight"),
        true,
        "the quality signals are below the first screen"
    );
    if let Some(dir) = std::env::var_os("SWE_FORGE_SCREENSHOTS").map(PathBuf::from) {
        b.screenshot(&dir.join("review-quality-1400.png"));
    }
    // f: the logs of the next notable test; the logs are wrapped, never cut off on the right.
    b.key("f");
    b.wait_for("!document.getElementById('test-logs').hidden");
    // a, Enter: keep, no reason needed.
    b.key("a");
    b.wait_for("document.activeElement === document.getElementById('reason')");
    b.key("Enter");
    b.wait_for("document.getElementById('decision-status').textContent.startsWith('keep by alice')");
    b.key("j");
    b.key("j");
    b.wait_for(&format!("document.body.dataset.shown === '{}'", ids[2]));
    b.key("w");
    b.wait_for("document.activeElement === document.getElementById('reason')");
    b.type_text("TestLen is not in FAIL_TO_PASS but the issue is about it");
    b.key("Enter");
    b.wait_for("document.getElementById('decision-status').textContent.startsWith('needs work by alice')");
    // Log search: l, a word, Enter jumps to the first match.
    b.key("l");
    b.type_text("--- PASS: TestPushThenPop");
    b.wait_for("document.getElementById('log-hits').textContent === '3 matching lines'");
    b.key("Enter");
    b.wait_for("document.getElementById('log-hits').textContent === '1 of 3 matching lines'");
    b.key("Escape");

    // The address decides what is shown: an edited hash opens its instance, back returns.
    b.eval(&format!("location.hash = '#/instance/{}'", ids[1]));
    b.wait_for(&format!("document.body.dataset.shown === '{}'", ids[1]));
    b.eval("history.back()");
    b.wait_for(&format!("document.body.dataset.shown === '{}'", ids[2]));
    b.eval("history.forward()");
    b.wait_for(&format!("document.body.dataset.shown === '{}'", ids[1]));
    // A decision made right after the address changed lands on the instance the address names.
    b.eval(&format!("location.hash = '#/instance/{}'", ids[0]));
    b.wait_for(&format!("document.body.dataset.shown === '{}'", ids[0]));
    assert_eq!(
        b.eval("document.getElementById('d-title').textContent.split(':')[0]"),
        ids[0],
        "the title names another instance than the address"
    );

    // The layout from 800 to 2560 px: the panel never over the logs, the filters inside the
    // sidebar, no log line wider than its box.
    b.eval(&format!("location.hash = '#/instance/{}?test=gostack%3A%3ATestLen'", ids[1]));
    b.wait_for(&format!("document.body.dataset.shown === '{}'", ids[1]));
    b.wait_for("!document.getElementById('test-logs').hidden");
    b.eval("document.querySelector('#d-logs details[data-phase=fix]').open = true");
    let shots = std::env::var_os("SWE_FORGE_SCREENSHOTS").map(PathBuf::from);
    for width in [800u32, 1400, 2560] {
        b.viewport(width, 1000);
        b.wait_for(&format!("window.innerWidth === {width}"));
        let check = b.eval(
            "(() => {
              const r = (id) => document.getElementById(id).getBoundingClientRect();
              const over = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
              const panel = r('panel');
              const bad = [];
              for (const id of ['test-logs', 'logs-section', 'tests-section']) if (over(panel, r(id))) bad.push('panel over ' + id);
              const side = r('sidebar');
              for (const e of document.querySelectorAll('#filters > *')) {
                const b = e.getBoundingClientRect();
                if (b.right > side.right + 0.5 || b.left < side.left - 0.5) bad.push('filter ' + e.id + ' spills');
              }
              for (const pre of document.querySelectorAll('#test-logs pre, #d-logs pre.log[data-phase]')) {
                if (pre.offsetParent !== null && pre.scrollWidth > pre.clientWidth + 1) bad.push('a log is cut off on the right');
              }
              for (const e of document.querySelectorAll('#list li .id')) {
                if (e.scrollWidth > e.clientWidth + 1 || e.textContent.includes('\\u2026')) bad.push('the id ' + e.textContent + ' is cut');
              }
              if (document.querySelectorAll('#list li .id').length === 0) bad.push('no instance listed');
              if (document.documentElement.scrollWidth > window.innerWidth + 1) bad.push('the page scrolls sideways');
              // The decision and questionnaire leave most of the first screen to the instance.
              if (window.innerWidth < 1200 && r('panel').height > window.innerHeight * 0.4) bad.push('the panel takes ' + Math.round(r('panel').height) + ' px of the first screen');
              return bad.join('; ');
            })()",
        );
        assert_eq!(check, "", "at {width} px");
        if let Some(dir) = &shots {
            std::fs::create_dir_all(dir).unwrap();
            b.screenshot(&dir.join(format!("review-{width}.png")));
        }
    }
    drop(b);
    drop(server);

    // curate: keep stays, needs work and the rejected one leave the kept set, both marked.
    let out = tmp.path().join("curated.jsonl");
    let o = swe_forge(&[
        "curate",
        "--dataset",
        dataset.to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
        "--no-dedup",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("2 decided (0 dropped, 1 need work)"), "{}", text(&o));
    let all = curated(&out);
    let verdict =
        |i: usize| all[i].swe_forge.as_ref().unwrap().decision.as_ref().map(|d| (d.verdict, d.reason.clone()));
    assert_eq!(verdict(0), Some((swe_forge_core::Verdict::Keep, String::new())));
    assert_eq!(verdict(1), None);
    assert_eq!(
        verdict(2),
        Some((swe_forge_core::Verdict::NeedsWork, "TestLen is not in FAIL_TO_PASS but the issue is about it".into()))
    );
    // Without --store, curate and publish find the page's store next to the dataset, as review
    // did: the instance held back in the page is neither kept nor published.
    let kept = tmp.path().join("kept.jsonl");
    let (d, k) = (dataset.to_str().unwrap(), kept.to_str().unwrap());
    let o = swe_forge(&["curate", "--dataset", d, "--no-dedup", "--kept-only", "-o", k]);
    assert!(o.status.success(), "{}", text(&o));
    let applied = format!("2 review decisions applied (0 drop, 1 needs_work) from {}", store.display());
    assert!(text(&o).contains(&format!("curate: {applied}")), "{}", text(&o));
    assert_eq!(curated(&kept).iter().map(|r| r.instance_id.as_str()).collect::<Vec<_>>(), [ids[0]]);
    let hub = tmp.path().join("hub");
    let o = swe_forge(&["publish", "--dataset", dataset.to_str().unwrap(), "--out", hub.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains(&format!("publish: {applied}")), "{}", text(&o));
    let rows = crate::support::published_rows(&hub);
    assert_eq!(rows.iter().map(|r| r.instance_id.as_str()).collect::<Vec<_>>(), [ids[0]]);
}

/// No work folder next to the dataset: the server says so on stderr and the page warns.
#[test]
fn a_dataset_without_logs_warns() {
    let tmp = tempfile::tempdir().unwrap();
    let (dataset, records) = demo_like(tmp.path());
    std::fs::remove_dir_all(tmp.path().join("demo-work")).unwrap();
    let server = Server::start(&dataset, &tmp.path().join("reviews.sqlite"));
    let (_, meta) = server.request("GET", "/api/meta", &[], "");
    let meta: Value = serde_json::from_str(&meta).unwrap();
    assert_eq!(meta["logs"]["origin"], "none");
    assert!(meta["logs"]["warning"].as_str().unwrap().contains("--work-dir"), "{meta}");
    let mut b = Browser::launch(&tmp.path().join("chromium-profile"));
    b.navigate(&format!("{}#/instance/{}", server.url, records[0].instance_id));
    b.wait_for("document.body.dataset.ready === '1'");
    b.wait_for(&format!("document.body.dataset.shown === '{}'", records[0].instance_id));
    assert_eq!(b.eval("document.getElementById('logs-warning').hidden"), false);
    let warning = b.eval("document.querySelector('#d-logs .warning').textContent");
    assert!(warning.as_str().unwrap().contains("no run logs found"), "{warning}");
}

/// A list for hundreds of instances, at 800 and 1400 px: long ids with three quality-flag badges
/// wrap in a line or two (never a character per line), the flag filter narrows the list, rejected
/// instances are hidden by default (and `u` skips them) until shown, "advance after deciding"
/// opens the next undecided instance and is remembered, and a draft survives a reload until saved.
#[test]
fn the_list_scales_flags_rejected_advance_and_drafts_at_800_and_1400_px() {
    use swe_forge_core::{Quality, QualityFlag};
    let tmp = tempfile::tempdir().unwrap();
    let records: Vec<Instance> = (1..=5u64)
        .map(|n| {
            let mut r = swe_forge_test_support::record("kubernetes-sigs", "controller-runtime-extras", n);
            r.title = format!("instance {n}");
            let mut meta = ForgeMeta::new(if n == 2 { ValidationStatus::Rejected } else { ValidationStatus::Accepted });
            let mut q = Quality::default();
            match n {
                1 => [QualityFlag::SolutionLeak, QualityFlag::Unspecific, QualityFlag::UntestedHunks]
                    .into_iter()
                    .for_each(|f| q.raise(f)),
                2 | 3 => q.raise(QualityFlag::Unspecific),
                _ => {}
            }
            meta.quality = Some(q);
            r.swe_forge = Some(meta);
            r
        })
        .collect();
    let ids: Vec<&str> = records.iter().map(|r| r.instance_id.as_str()).collect();
    let dataset = tmp.path().join("validated.jsonl");
    swe_forge_core::write_jsonl(std::fs::File::create(&dataset).unwrap(), &records).unwrap();
    let server = Server::start(&dataset, &tmp.path().join("state.sqlite"));
    let mut b = Browser::launch(&tmp.path().join("chromium-profile"));
    let listed = "[...document.querySelectorAll('#list li')].map(li => li.dataset.id).join(' ')";
    let wait_listed = |b: &mut Browser, want: &[&str]| {
        b.wait_for(&format!("{listed} === '{}'", want.join(" ")));
    };
    b.viewport(800, 900);
    b.navigate(&server.url);
    b.wait_for("document.body.dataset.ready === '1'");
    // Accepted only by default: the rejected one is hidden and counted.
    wait_listed(&mut b, &[ids[0], ids[2], ids[3], ids[4]]);
    assert!(b.eval("document.getElementById('list-info').textContent").as_str().unwrap().contains("1 rejected hidden"));
    assert_eq!(
        b.eval(&format!(
            "[...document.querySelectorAll('#list li[data-id=\"{}\"] .badge.flag')].map(x => x.textContent).join(' ')",
            ids[0]
        )),
        "solution_leak unspecific untested_hunks"
    );
    // Ids wrap in fewer than three lines at both widths.
    for width in [800u32, 1400] {
        b.viewport(width, 900);
        b.wait_for(&format!("window.innerWidth === {width}"));
        let tall = b.eval(
            "[...document.querySelectorAll('#list li .id')].filter(e => {
               const line = parseFloat(getComputedStyle(e).lineHeight);
               return e.getBoundingClientRect().height >= 3 * line - 1;
             }).map(e => e.textContent + ': ' + Math.round(e.getBoundingClientRect().height) + ' px').join('; ')",
        );
        assert_eq!(tall, "", "ids of three lines or more at {width} px");
    }
    b.viewport(800, 900);
    b.wait_for("window.innerWidth === 800");
    // The flag filter narrows the list.
    let pick = |b: &mut Browser, flag: &str| {
        b.eval(&format!(
            "(() => {{ const s = document.getElementById('f-flag'); s.value = '{flag}'; s.dispatchEvent(new Event('change')); }})()"
        ));
    };
    pick(&mut b, "unspecific");
    wait_listed(&mut b, &[ids[0], ids[2]]);
    pick(&mut b, "none");
    wait_listed(&mut b, &[ids[3], ids[4]]);
    pick(&mut b, "");
    wait_listed(&mut b, &[ids[0], ids[2], ids[3], ids[4]]);
    // u skips the hidden rejected instance; shown, it is visited.
    b.key("j");
    b.wait_for(&format!("document.body.dataset.shown === '{}'", ids[0]));
    b.key("u");
    b.wait_for(&format!("document.body.dataset.shown === '{}'", ids[2]));
    b.key("k");
    b.wait_for(&format!("document.body.dataset.shown === '{}'", ids[0]));
    b.eval("document.getElementById('f-rejected').click()");
    wait_listed(&mut b, &ids);
    b.key("u");
    b.wait_for(&format!("document.body.dataset.shown === '{}'", ids[1]));
    b.eval("document.getElementById('f-rejected').click()");
    wait_listed(&mut b, &[ids[0], ids[2], ids[3], ids[4]]);
    // Advance after deciding: keep the first, the next undecided opens.
    b.eval(&format!("location.hash = '#/instance/{}'", ids[0]));
    b.wait_for(&format!("document.body.dataset.shown === '{}'", ids[0]));
    b.eval("document.getElementById('advance').click()");
    b.key("a");
    b.wait_for("document.activeElement === document.getElementById('reason')");
    b.key("Enter");
    b.wait_for(&format!("document.body.dataset.shown === '{}'", ids[2]));
    b.wait_for(&format!("document.querySelector('#list li[data-id=\"{}\"] .badge.keep') !== null", ids[0]));
    // A draft (an answer and notes, not saved) survives a reload, and so does the setting.
    b.eval(&format!("location.hash = '#/instance/{}'", ids[3]));
    b.wait_for(&format!("document.body.dataset.shown === '{}'", ids[3]));
    b.key("0");
    b.key("n");
    b.type_text("half-written");
    b.key("Escape");
    b.reload();
    b.wait_for("document.body.dataset.ready === '1'");
    b.wait_for(&format!("document.body.dataset.shown === '{}'", ids[3]));
    assert_eq!(b.eval("document.getElementById('notes').value"), "half-written");
    assert_eq!(b.eval("document.getElementById('save-status').textContent"), "unsaved");
    assert_eq!(b.eval("document.querySelector('.question[data-q=severe_problem] button.chosen').textContent"), "0 no");
    assert_eq!(
        b.eval(&format!("document.querySelector('#list li[data-id=\"{}\"] .badge.draft') !== null", ids[3])),
        true
    );
    assert_eq!(b.eval("document.getElementById('advance').checked"), true);
    // Saved, the draft is gone.
    b.key("3");
    b.key("3");
    b.key("s");
    b.wait_for("document.getElementById('save-status').textContent.startsWith('saved by alice')");
    assert_eq!(b.eval("Object.keys(localStorage).filter(k => k.startsWith('swe-forge-draft:')).length"), 0);
    b.reload();
    b.wait_for("document.body.dataset.ready === '1'");
    b.wait_for(&format!("document.body.dataset.shown === '{}'", ids[3]));
    b.wait_for("document.getElementById('save-status').textContent.startsWith('saved by alice')");
    assert_eq!(b.eval("document.getElementById('notes').value"), "half-written");
}
