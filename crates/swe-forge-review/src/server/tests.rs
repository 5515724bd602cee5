//! The connection bounds, on an in-process server with short limits: a client that sends its
//! request a byte at a time is cut off, and connections beyond the bound wait for a free slot; and
//! a record of many tests is answered with its first rows and counts.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use super::*;

fn server(limits: Limits) -> (tempfile::TempDir, SocketAddr) {
    serve(PathBuf::from(swe_forge_test_support::DEVSET), limits)
}

fn serve(dataset: PathBuf, limits: Limits) -> (tempfile::TempDir, SocketAddr) {
    let tmp = tempfile::tempdir().unwrap();
    let options = ServerOptions {
        dataset,
        work_dir: WorkDir::None,
        store: tmp.path().join("state.sqlite"),
        reviewer: "alice".into(),
        keep_rule: KeepRule::default(),
        port: 0,
        heuristic: Heuristic::CALIBRATED,
        limits,
    };
    let server = ReviewServer::bind(options).unwrap();
    let addr = server.local_addr();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        runtime.block_on(server.serve()).unwrap();
    });
    (tmp, addr)
}

fn get_meta(addr: SocketAddr) -> (Duration, String) {
    let started = Instant::now();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(s, "GET /api/meta HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    (started.elapsed(), out)
}

/// The JSON body of `GET path`.
fn get_json(addr: SocketAddr, path: &str) -> serde_json::Value {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let at = out.windows(4).position(|w| w == b"\r\n\r\n").expect("a header");
    assert!(out.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&out[..at]));
    serde_json::from_slice(&out[at + 4..]).unwrap()
}

/// Whether the server closed `s` within `within` (reads until EOF or error).
fn closed_within(s: &mut TcpStream, within: Duration) -> bool {
    s.set_read_timeout(Some(within)).unwrap();
    let mut buf = [0; 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                return false;
            }
            Err(_) => return true,
        }
    }
}

#[test]
fn a_client_that_trickles_its_request_is_cut_off() {
    let limits =
        Limits { connections: 4, header_timeout: Duration::from_secs(1), connection_timeout: Duration::from_secs(2) };
    let (_tmp, addr) = server(limits);
    let mut slow = TcpStream::connect(addr).unwrap();
    let started = Instant::now();
    // One byte every 100 ms: each read succeeds, the request never completes.
    let trickle = format!("GET /api/meta HTTP/1.1\r\nHost: {addr}\r\nX-Slow: {}", "a".repeat(200));
    let mut cut = false;
    for b in trickle.bytes() {
        if slow.write_all(&[b]).is_err() || closed_within(&mut slow, Duration::from_millis(100)) {
            cut = true;
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "still connected after 10 s");
    }
    assert!(cut, "the trickling client was never cut off");
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(900) && took < Duration::from_secs(4), "cut off after {took:?}");
    let (_, answer) = get_meta(addr);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[test]
fn connections_beyond_the_bound_wait_for_a_free_slot() {
    let limits =
        Limits { connections: 2, header_timeout: Duration::from_secs(1), connection_timeout: Duration::from_secs(2) };
    let (_tmp, addr) = server(limits);
    let (took, answer) = get_meta(addr);
    assert!(answer.starts_with("HTTP/1.1 200") && took < Duration::from_secs(1), "{took:?} {answer}");
    // Two clients that connect and say nothing hold both slots until the header timeout.
    let mut idle: Vec<TcpStream> = (0..2).map(|_| TcpStream::connect(addr).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(200));
    let (took, answer) = get_meta(addr);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(took >= Duration::from_millis(500), "answered in {took:?} while both slots were held");
    assert!(took < Duration::from_secs(3), "answered only after {took:?}");
    for s in &mut idle {
        assert!(closed_within(s, Duration::from_secs(3)), "an idle connection was never closed");
    }
}

#[test]
fn a_body_announced_over_the_cap_is_refused_at_once() {
    // Connections live a minute here: an answer only at the connection's end is no answer.
    let limits =
        Limits { connections: 4, header_timeout: Duration::from_secs(10), connection_timeout: Duration::from_secs(60) };
    let (_tmp, addr) = server(limits);
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(s, "POST /api/review HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 100000000000000\r\n\r\n").unwrap();
    let mut buf = [0u8; 12];
    s.read_exact(&mut buf).expect("no answer before the body");
    assert_eq!(&buf, b"HTTP/1.1 413");
}

/// A record of 100,000 tests (issue #60's probe had 10^6: 3.7 GB and no answer): the instance
/// comes with the first rows of its table and every count, the record without its per-test
/// lists; the other rows are found through `/api/tests`.
#[test]
fn a_record_of_many_tests_is_sent_with_its_first_rows_and_the_rest_in_pages() {
    let tmp = tempfile::tempdir().unwrap();
    let mut r = swe_forge_test_support::record("o", "r", 1);
    let n = 100_000;
    let pass = swe_forge_core::Transition {
        run: swe_forge_core::TestStatus::Pass,
        test: swe_forge_core::TestStatus::Pass,
        fix: swe_forge_core::TestStatus::Pass,
    };
    for i in 0..n {
        let name = format!("pkg::Test{i:06}");
        r.p2p_tests.insert(name.clone(), pass);
        r.run_result.passed_tests.push(name.clone());
        r.test_patch_result.passed_tests.push(name.clone());
        r.fix_patch_result.passed_tests.push(name);
    }
    let dataset = tmp.path().join("many.jsonl");
    std::fs::write(&dataset, format!("{}\n", serde_json::to_string(&r).unwrap())).unwrap();
    let limits = Limits {
        connections: 4,
        header_timeout: Duration::from_secs(10),
        connection_timeout: Duration::from_secs(120),
    };
    let (_tmp, addr) = serve(dataset, limits);
    let id = &r.instance_id;

    let d = get_json(addr, &format!("/api/instance?id={id}"));
    assert_eq!(d["tests"].as_array().unwrap().len(), crate::api::TESTS_SENT);
    assert_eq!(d["test_counts"]["total"], n);
    assert_eq!(d["test_counts"]["by_category"]["p2p"], n);
    assert_eq!(d["record"]["instance_id"], id.as_str());
    assert!(d["record"].get("p2p_tests").is_none() && d["record"].get("run_result").is_none(), "lists sent");

    let page = get_json(addr, &format!("/api/tests?id={id}&q=test099999"));
    assert_eq!((page["total"].as_u64(), page["items"][0]["name"].as_str()), (Some(1), Some("pkg::Test099999")));
    let page = get_json(addr, &format!("/api/tests?id={id}&category=p2p&offset=99990&limit=100000"));
    assert_eq!((page["total"].as_u64(), page["items"].as_array().unwrap().len()), (Some(n), 10));
}

/// The list's flag filter and `rejected=hide` (the page's default): a flag narrows the list to
/// the instances it was raised on, `none` to those with none, and rejected instances are left out
/// and counted unless a validation status is asked for.
#[test]
fn the_list_filters_by_quality_flag_and_hides_rejected_instances_on_request() {
    use swe_forge_core::{ForgeMeta, Quality, QualityFlag, ValidationStatus};
    let tmp = tempfile::tempdir().unwrap();
    let records: Vec<_> = (1..=3)
        .map(|n| {
            let mut r = swe_forge_test_support::record("o", "r", n);
            let mut meta = ForgeMeta::new(if n == 2 { ValidationStatus::Rejected } else { ValidationStatus::Accepted });
            if n != 3 {
                let mut q = Quality::default();
                q.raise(QualityFlag::Unspecific);
                meta.quality = Some(q);
            }
            r.swe_forge = Some(meta);
            r
        })
        .collect();
    let dataset = tmp.path().join("d.jsonl");
    swe_forge_core::write_jsonl(std::fs::File::create(&dataset).unwrap(), &records).unwrap();
    let (_tmp, addr) = serve(dataset, Limits::default());
    let ids = |path: &str| -> (Vec<String>, u64) {
        let page = get_json(addr, path);
        let ids = page["items"].as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap().to_owned()).collect();
        (ids, page["hidden_rejected"].as_u64().unwrap())
    };
    assert_eq!(ids("/api/list"), (vec!["o__r-1".into(), "o__r-2".into(), "o__r-3".into()], 0));
    assert_eq!(ids("/api/list?flag=unspecific"), (vec!["o__r-1".into(), "o__r-2".into()], 0));
    assert_eq!(ids("/api/list?flag=unspecific&rejected=hide"), (vec!["o__r-1".into()], 1));
    assert_eq!(ids("/api/list?flag=none&rejected=hide"), (vec!["o__r-3".into()], 0));
    assert_eq!(ids("/api/list?status=rejected&rejected=hide"), (vec!["o__r-2".into()], 0));
    let page = get_json(addr, "/api/list?flag=unspecific");
    assert_eq!(page["items"][0]["flags"], serde_json::json!(["unspecific"]));
    let meta = get_json(addr, "/api/meta");
    assert_eq!(meta["facets"]["flag"], serde_json::json!([["none", 1], ["unspecific", 2]]));
}
