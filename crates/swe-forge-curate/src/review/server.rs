//! The review page's server: plain HTTP/1.1 over `std::net`, bound to 127.0.0.1 only, one thread
//! per connection, `Connection: close`. The dataset is indexed once at start (a summary and the
//! byte range of every line); lists are filtered and paged on the server, and an instance's full
//! record is read from its byte range when it is opened, so 5,000 instances stay fast and small.
//! Reviews are appended to the state store as they are saved.
//!
//! Requests from other origins are refused: the `Host` header must name the loopback address the
//! server listens on (against DNS rebinding) and a POST must be JSON from the page's own origin.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use swe_forge_core::{Instance, TimeToFix};
use swe_forge_store::{ReviewRow, Store};

use crate::CurateError;
use crate::difficulty::{Heuristic, heuristic_label};
use crate::review::KeepRule;

const PAGE_HTML: &str = include_str!("../../assets/review.html");
const PAGE_JS: &str = include_str!("../../assets/review.js");
const PAGE_CSS: &str = include_str!("../../assets/review.css");

/// Logs longer than this are cut: their head and tail are sent with a marker between.
const LOG_CAP: usize = 512 * 1024;
const LOG_HEAD: usize = 64 * 1024;
/// Largest request body accepted.
const BODY_CAP: usize = 1024 * 1024;
/// Largest page of the list.
const PAGE_CAP: usize = 500;

/// What the review server serves.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// The dataset (JSONL records).
    pub dataset: PathBuf,
    /// Where validation wrote its run logs (`<work_dir>/logs/<instance_id>/{run,test,fix}.log`).
    pub work_dir: Option<PathBuf>,
    /// The state store that keeps reviews.
    pub store: PathBuf,
    /// Reviewer name used when the page sends none.
    pub reviewer: String,
    /// The rule that decides, from a review, whether an instance is kept.
    pub keep_rule: KeepRule,
    /// Port on 127.0.0.1 (0: any free port).
    pub port: u16,
    /// The heuristic used for records that carry no difficulty label yet.
    pub heuristic: Heuristic,
}

/// A bound, loaded review server.
pub struct ReviewServer {
    listener: TcpListener,
    state: Arc<State>,
}

struct Entry {
    id: String,
    repo: String,
    lang: String,
    status: &'static str,
    difficulty: &'static str,
    title: String,
    fix_lines: u64,
    fixed_tests: u64,
    offset: u64,
    len: usize,
}

struct State {
    dataset: PathBuf,
    work_dir: Option<PathBuf>,
    entries: Vec<Entry>,
    by_id: HashMap<String, usize>,
    store: Mutex<Store>,
    latest: Mutex<BTreeMap<String, ReviewRow>>,
    reviewer: String,
    rule: KeepRule,
    heuristic: Heuristic,
    port: u16,
}

impl ReviewServer {
    /// Reads the dataset, opens the store and listens on 127.0.0.1.
    pub fn bind(options: ServerOptions) -> Result<ReviewServer, CurateError> {
        let entries = index(&options.dataset, &options.heuristic)?;
        let by_id = entries.iter().enumerate().map(|(i, e)| (e.id.clone(), i)).collect();
        let store = Store::open(&options.store)?;
        let latest = store.latest_reviews()?;
        let addr = format!("127.0.0.1:{}", options.port);
        let listener = TcpListener::bind(&addr).map_err(|source| CurateError::Listen { addr: addr.clone(), source })?;
        let port = listener.local_addr().map_err(|source| CurateError::Listen { addr, source })?.port();
        let state = State {
            dataset: options.dataset,
            work_dir: options.work_dir,
            entries,
            by_id,
            store: Mutex::new(store),
            latest: Mutex::new(latest),
            reviewer: options.reviewer,
            rule: options.keep_rule,
            heuristic: options.heuristic,
            port,
        };
        Ok(ReviewServer { listener, state: Arc::new(state) })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.state.port))
    }

    /// Number of instances in the dataset.
    pub fn instances(&self) -> usize {
        self.state.entries.len()
    }

    /// Serves until the process ends.
    pub fn serve(self) {
        for conn in self.listener.incoming() {
            let Ok(stream) = conn else { continue };
            let state = Arc::clone(&self.state);
            std::thread::spawn(move || {
                if let Err(e) = handle(&state, stream) {
                    tracing::debug!("review server: connection ended: {e}");
                }
            });
        }
    }
}

/// Reads the dataset once: a summary and the byte range of every record.
fn index(path: &Path, heuristic: &Heuristic) -> Result<Vec<Entry>, CurateError> {
    let file = File::open(path).map_err(CurateError::io(path))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut entries = Vec::new();
    let mut offset = 0u64;
    let mut line = String::new();
    let mut number = 0usize;
    loop {
        line.clear();
        let n = reader.read_line(&mut line).map_err(CurateError::io(path))?;
        if n == 0 {
            break;
        }
        number += 1;
        let start = offset;
        offset += n as u64;
        if line.trim().is_empty() {
            continue;
        }
        let inst = swe_forge_core::read_jsonl(line.as_bytes()).map_err(|e| CurateError::Dataset {
            path: path.to_owned(),
            line: number,
            message: e.to_string(),
        })?;
        let Some(inst) = inst.into_iter().next() else { continue };
        entries.push(summary(&inst, heuristic, start, n));
    }
    Ok(entries)
}

fn summary(inst: &Instance, heuristic: &Heuristic, offset: u64, len: usize) -> Entry {
    let (features, _, guessed) = heuristic_label(inst, heuristic);
    let difficulty = inst.swe_forge.as_ref().and_then(|m| m.difficulty.as_ref()).map_or(guessed, |d| d.label);
    Entry {
        id: inst.instance_id.clone(),
        repo: format!("{}/{}", inst.org, inst.repo),
        lang: inst.lang.clone().unwrap_or_else(|| "unknown".into()),
        status: match inst.status() {
            swe_forge_core::ValidationStatus::Candidate => "candidate",
            swe_forge_core::ValidationStatus::Accepted => "accepted",
            swe_forge_core::ValidationStatus::Rejected => "rejected",
        },
        difficulty: difficulty.as_str(),
        title: inst.title.chars().take(200).collect(),
        fix_lines: features.fix_lines_added + features.fix_lines_removed,
        fixed_tests: features.fixed_tests,
        offset,
        len,
    }
}

struct Request {
    method: String,
    path: String,
    query: BTreeMap<String, String>,
    headers: BTreeMap<String, String>,
    body: Vec<u8>,
}

struct Response {
    status: u16,
    content_type: &'static str,
    body: Vec<u8>,
}

impl Response {
    fn json(status: u16, v: &Value) -> Response {
        Response { status, content_type: "application/json; charset=utf-8", body: v.to_string().into_bytes() }
    }

    fn error(status: u16, message: &str) -> Response {
        Response::json(status, &json!({ "error": message }))
    }

    fn asset(content_type: &'static str, text: &str) -> Response {
        Response { status: 200, content_type, body: text.as_bytes().to_vec() }
    }
}

fn handle(state: &State, mut stream: TcpStream) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let response = match read_request(&mut stream) {
        Ok(Some(req)) => route(state, &req),
        Ok(None) => return Ok(()),
        Err(status) => Response::error(status, "bad request"),
    };
    let reason = match response.status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Payload Too Large",
        _ => "Internal Server Error",
    };
    let head = format!(
        "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
        response.status,
        response.content_type,
        response.body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(&response.body)?;
    stream.flush()
}

/// Reads one request; Ok(None) when the peer closed without sending one.
fn read_request(stream: &mut TcpStream) -> Result<Option<Request>, u16> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    let mut read_line = |line: &mut String| -> Result<usize, u16> {
        line.clear();
        let n = (&mut reader).take(16 * 1024).read_line(line).map_err(|_| 400u16)?;
        Ok(n)
    };
    if read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else { return Err(400) };
    let (method, target) = (method.to_owned(), target.to_owned());
    let mut headers = BTreeMap::new();
    for _ in 0..100 {
        if read_line(&mut line)? == 0 {
            return Err(400);
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
        }
    }
    let len: usize = headers.get("content-length").map_or(Ok(0), |v| v.parse().map_err(|_| 400u16))?;
    if len > BODY_CAP {
        return Err(413);
    }
    let mut body = vec![0; len];
    reader.read_exact(&mut body).map_err(|_| 400u16)?;
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let query = query
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect();
    Ok(Some(Request { method, path: percent_decode(path), query, headers, body }))
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match u8::from_str_radix(std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz"), 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn route(state: &State, req: &Request) -> Response {
    let host_ok = req
        .headers
        .get("host")
        .is_some_and(|h| h == &format!("127.0.0.1:{}", state.port) || h == &format!("localhost:{}", state.port));
    if !host_ok {
        return Response::error(403, "unexpected Host header");
    }
    match (req.method.as_str(), req.path.as_str()) {
        ("GET", "/") => Response::asset("text/html; charset=utf-8", PAGE_HTML),
        ("GET", "/app.js") => Response::asset("text/javascript; charset=utf-8", PAGE_JS),
        ("GET", "/app.css") => Response::asset("text/css; charset=utf-8", PAGE_CSS),
        ("GET", "/api/meta") => meta(state),
        ("GET", "/api/list") => list(state, &req.query),
        ("GET", "/api/instance") => instance(state, req.query.get("id").map(String::as_str).unwrap_or_default()),
        ("POST", "/api/review") => {
            let same_origin = req.headers.get("origin").is_none_or(|o| {
                o == &format!("http://127.0.0.1:{}", state.port) || o == &format!("http://localhost:{}", state.port)
            });
            let is_json = req.headers.get("content-type").is_some_and(|c| c.starts_with("application/json"));
            if !same_origin || !is_json {
                return Response::error(403, "reviews are accepted from the review page only");
            }
            save(state, &req.body)
        }
        (_, "/" | "/app.js" | "/app.css" | "/api/meta" | "/api/list" | "/api/instance" | "/api/review") => {
            Response::error(405, "method not allowed")
        }
        _ => Response::error(404, "not found"),
    }
}

fn review_state(rule: &KeepRule, r: Option<&ReviewRow>) -> &'static str {
    match r {
        None => "unreviewed",
        Some(r) if rule.keeps(r) => "kept",
        Some(_) => "dropped",
    }
}

fn review_json(rule: &KeepRule, r: &ReviewRow) -> Value {
    json!({
        "reviewer": r.reviewer,
        "created_at": r.created_at,
        "severe_problem": r.severe_problem,
        "issue_clarity": r.issue_clarity,
        "test_adequacy": r.test_adequacy,
        "time_to_fix": r.time_to_fix,
        "notes": r.notes,
        "keep": rule.keeps(r),
    })
}

fn meta(state: &State) -> Response {
    let latest = state.latest.lock().unwrap_or_else(|e| e.into_inner());
    let mut facets: BTreeMap<&str, BTreeMap<&str, u64>> = BTreeMap::new();
    for e in &state.entries {
        *facets.entry("lang").or_default().entry(&e.lang).or_default() += 1;
        *facets.entry("repo").or_default().entry(&e.repo).or_default() += 1;
        *facets.entry("status").or_default().entry(e.status).or_default() += 1;
        *facets.entry("difficulty").or_default().entry(e.difficulty).or_default() += 1;
        *facets.entry("review").or_default().entry(review_state(&state.rule, latest.get(&e.id))).or_default() += 1;
    }
    let facets: BTreeMap<&str, Vec<(&str, u64)>> =
        facets.into_iter().map(|(k, v)| (k, v.into_iter().collect())).collect();
    Response::json(
        200,
        &json!({
            "dataset": state.dataset.file_name().map(|n| n.to_string_lossy().into_owned()),
            "total": state.entries.len(),
            "reviewer": state.reviewer,
            "keep_rule": state.rule,
            "time_to_fix": TimeToFix::ALL.iter().map(|t| t.as_str()).collect::<Vec<_>>(),
            "facets": facets,
        }),
    )
}

fn list(state: &State, q: &BTreeMap<String, String>) -> Response {
    let latest = state.latest.lock().unwrap_or_else(|e| e.into_inner());
    let want = |key: &str| q.get(key).map(String::as_str).filter(|v| !v.is_empty());
    let text = want("q").map(str::to_lowercase);
    let offset: usize = want("offset").and_then(|v| v.parse().ok()).unwrap_or(0);
    let limit: usize = want("limit").and_then(|v| v.parse().ok()).unwrap_or(100).clamp(1, PAGE_CAP);
    let mut total = 0usize;
    let mut items = Vec::new();
    for e in &state.entries {
        let review = latest.get(&e.id);
        let rstate = review_state(&state.rule, review);
        let keep = want("lang").is_none_or(|v| v == e.lang)
            && want("repo").is_none_or(|v| v == e.repo)
            && want("status").is_none_or(|v| v == e.status)
            && want("difficulty").is_none_or(|v| v == e.difficulty)
            && want("review").is_none_or(|v| v == rstate || (v == "reviewed" && review.is_some()))
            && text.as_deref().is_none_or(|t| e.id.to_lowercase().contains(t) || e.title.to_lowercase().contains(t));
        if !keep {
            continue;
        }
        if total >= offset && items.len() < limit {
            items.push(json!({
                "id": e.id,
                "repo": e.repo,
                "lang": e.lang,
                "status": e.status,
                "difficulty": e.difficulty,
                "title": e.title,
                "fix_lines": e.fix_lines,
                "fixed_tests": e.fixed_tests,
                "review": rstate,
                "reviewer": review.map(|r| r.reviewer.as_str()),
            }));
        }
        total += 1;
    }
    Response::json(200, &json!({ "total": total, "offset": offset, "limit": limit, "items": items }))
}

fn instance(state: &State, id: &str) -> Response {
    let Some(&i) = state.by_id.get(id) else { return Response::error(404, "no such instance") };
    let e = &state.entries[i];
    let raw = match read_range(&state.dataset, e.offset, e.len) {
        Ok(r) => r,
        Err(err) => return Response::error(500, &format!("reading {}: {err}", state.dataset.display())),
    };
    let record: Value = match serde_json::from_slice(&raw) {
        Ok(v) => v,
        Err(err) => return Response::error(500, &format!("the dataset changed while served: {err}")),
    };
    let inst: Option<Instance> = serde_json::from_value(record.clone()).ok();
    let heuristic = inst.as_ref().map(|inst| {
        let (features, score, label) = heuristic_label(inst, &state.heuristic);
        json!({ "label": label, "score": (score * 100.0).round() / 100.0, "features": features })
    });
    let mut logs = serde_json::Map::new();
    for phase in swe_forge_core::Phase::ALL {
        let text = state
            .work_dir
            .as_ref()
            .filter(|_| safe_id(id))
            .and_then(|w| read_log(&swe_forge_core::RunLogs::new(w, id).log(phase.as_str())));
        logs.insert(phase.as_str().into(), text.map_or(Value::Null, Value::String));
    }
    let history = state.store.lock().unwrap_or_else(|e| e.into_inner()).review_history(id);
    let history = match history {
        Ok(h) => h,
        Err(err) => return Response::error(500, &err.to_string()),
    };
    let latest = history.last();
    Response::json(
        200,
        &json!({
            "id": id,
            "record": record,
            "heuristic": heuristic,
            "logs": logs,
            "review": latest.map(|r| review_json(&state.rule, r)),
            "history": history.iter().map(|r| review_json(&state.rule, r)).collect::<Vec<_>>(),
        }),
    )
}

fn safe_id(id: &str) -> bool {
    swe_forge_core::path_component_problem(id).is_none() && !id.starts_with('.')
}

fn read_range(path: &Path, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
    let mut f = File::open(path)?;
    f.seek(SeekFrom::Start(offset))?;
    let mut buf = vec![0; len];
    f.read_exact(&mut buf)?;
    Ok(buf)
}

/// A log's text, its middle cut out when it is longer than `LOG_CAP`.
fn read_log(path: &Path) -> Option<String> {
    let mut f = File::open(path).ok()?;
    let size = f.metadata().ok()?.len() as usize;
    if size <= LOG_CAP {
        let mut buf = Vec::with_capacity(size);
        f.read_to_end(&mut buf).ok()?;
        return Some(String::from_utf8_lossy(&buf).into_owned());
    }
    let mut head = vec![0; LOG_HEAD];
    f.read_exact(&mut head).ok()?;
    let tail_len = LOG_CAP - LOG_HEAD;
    f.seek(SeekFrom::Start((size - tail_len) as u64)).ok()?;
    let mut tail = vec![0; tail_len];
    f.read_exact(&mut tail).ok()?;
    Some(format!(
        "{}\n\n[... {} bytes left out; the whole log is {} ...]\n\n{}",
        String::from_utf8_lossy(&head),
        size - LOG_CAP,
        path.display(),
        String::from_utf8_lossy(&tail)
    ))
}

fn save(state: &State, body: &[u8]) -> Response {
    let v: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => return Response::error(400, &format!("not JSON: {e}")),
    };
    let id = v.get("id").and_then(Value::as_str).unwrap_or_default();
    if !state.by_id.contains_key(id) {
        return Response::error(404, "no such instance");
    }
    let score = |key: &str| v.get(key).and_then(Value::as_u64).filter(|s| *s <= 3).map(|s| s as u8);
    let (Some(severe), Some(clarity), Some(adequacy)) =
        (v.get("severe_problem").and_then(Value::as_bool), score("issue_clarity"), score("test_adequacy"))
    else {
        return Response::error(400, "severe_problem (true/false), issue_clarity and test_adequacy (0-3) are required");
    };
    let time_to_fix = match v.get("time_to_fix").and_then(Value::as_str).filter(|s| !s.is_empty()) {
        None => None,
        Some(t) if TimeToFix::parse(t).is_some() => Some(t.to_owned()),
        Some(t) => return Response::error(400, &format!("unknown time_to_fix {t:?}")),
    };
    let reviewer = v
        .get("reviewer")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .unwrap_or(&state.reviewer)
        .chars()
        .take(100)
        .collect();
    let row = ReviewRow {
        instance_id: id.to_owned(),
        reviewer,
        severe_problem: severe,
        issue_clarity: clarity,
        test_adequacy: adequacy,
        time_to_fix,
        notes: v.get("notes").and_then(Value::as_str).unwrap_or_default().chars().take(20_000).collect(),
        created_at: String::new(),
    };
    let saved = state.store.lock().unwrap_or_else(|e| e.into_inner()).save_review(&row);
    match saved {
        Ok(saved) => {
            let out = review_json(&state.rule, &saved);
            state.latest.lock().unwrap_or_else(|e| e.into_inner()).insert(saved.instance_id.clone(), saved);
            Response::json(200, &json!({ "review": out }))
        }
        Err(e) => Response::error(500, &e.to_string()),
    }
}
