//! `swe-forge review` end to end: a generated 5,000-instance dataset is served, the page is driven
//! in headless Chromium (load, filter, review with the keyboard, save, reload and see the
//! decision), the server's paging is timed, foreign requests are refused, and `swe-forge curate`
//! carries the decisions into the records.

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
    assert_eq!(b.eval("document.getElementById('page-info').textContent"), "1-100 of 5000");

    // Filter on Go, then review the first instance with the keyboard only.
    b.eval("(() => { const s = document.getElementById('f-lang'); s.value = 'go'; s.dispatchEvent(new Event('change')); })()");
    b.wait_for(&format!("document.getElementById('page-info').textContent === '1-100 of {}'", go.len()));
    b.key("j");
    b.wait_for(&format!("document.getElementById('d-title').textContent.startsWith('{}')", go[0].instance_id));
    assert_eq!(b.eval("document.querySelectorAll('#d-fix .add').length > 0"), true);
    assert_eq!(b.eval("document.getElementById('d-logs').textContent.includes('hello from the fix log')"), true);
    assert_eq!(b.eval("document.getElementById('d-tests').textContent.includes('FAIL_TO_PASS')"), true);
    for k in ["0", "3", "2", "2", "n"] {
        b.key(k);
    }
    b.type_text("looks fine");
    b.key("Escape");
    b.key("s");
    b.wait_for("document.getElementById('save-status').textContent.startsWith('saved by alice')");
    b.wait_for(&format!(
        "document.querySelector('#list li[data-id=\"{}\"]').textContent.includes('kept')",
        go[0].instance_id
    ));

    // A reload shows the same instance, filter and saved decision, read back from the store.
    b.reload();
    b.wait_for("document.body.dataset.ready === '1'");
    b.wait_for(&format!("document.getElementById('d-title').textContent.startsWith('{}')", go[0].instance_id));
    b.wait_for("document.getElementById('save-status').textContent.startsWith('saved by alice')");
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
    b.wait_for("document.getElementById('save-status').textContent.includes('(dropped)')");
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
    let rv = first.review.unwrap();
    assert_eq!((rv.reviewer.as_str(), rv.keep, rv.issue_clarity, rv.notes.as_str()), ("alice", true, 3, "looks fine"));
    let d = first.difficulty.unwrap();
    assert_eq!((d.label, d.source), (swe_forge_core::DifficultyLabel::Medium, swe_forge_core::LabelSource::Human));
    assert!(!get(&go[1].instance_id).review.unwrap().keep);
    assert!(all.iter().all(|r| r.swe_forge.as_ref().unwrap().difficulty.is_some()));
    let o = args(&kept, &["--no-dedup", "--kept-only"]);
    assert!(o.status.success(), "{}", text(&o));
    let kept = curated(&kept);
    assert_eq!(kept.len(), 4000 - 1, "accepted minus the dropped one");
    assert!(!kept.iter().any(|r| r.instance_id == go[1].instance_id));
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
