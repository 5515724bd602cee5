//! A local HTTP server that answers like GitHub, for tests and the request-count benchmark
//! (github.com is not reachable from the machines that build swe-forge).
//!
//! [`ReplayServer`] is a tiny HTTP/1.1 server on 127.0.0.1 (one request per connection) that
//! records every request and answers through a handler. [`FakeGithub`] is such a handler for one
//! repository: GraphQL search pages with cursors, batched issue lookups, and REST `.diff` answers
//! with ETags and 304s, in the shapes GitHub documents; [`Fault`]s inject a secondary rate limit
//! with `Retry-After`, a 502, a malformed body or a spent token at chosen requests.
//!
//! Test support only: the miner's tests and the binary's use it as a dev-dependency.

use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use regex::Regex;

use swe_forge_core::PatchShape;

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct SeenRequest {
    /// `GET`, `POST`.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Headers, names lowercased.
    pub headers: Vec<(String, String)>,
    /// Body text.
    pub body: String,
}

impl SeenRequest {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// An answer.
#[derive(Debug, Clone)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Body.
    pub body: String,
    /// Wait before answering.
    pub delay: Duration,
}

impl Reply {
    /// A 200 JSON answer.
    pub fn json(body: impl Into<String>) -> Reply {
        Reply {
            status: 200,
            headers: vec![("content-type".into(), "application/json; charset=utf-8".into())],
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    /// An answer with a status and body.
    pub fn status(status: u16, body: impl Into<String>) -> Reply {
        Reply {
            status,
            headers: vec![("content-type".into(), "application/json; charset=utf-8".into())],
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    /// Adds a header.
    pub fn header(mut self, k: &str, v: &str) -> Reply {
        self.headers.push((k.to_owned(), v.to_owned()));
        self
    }
}

type Handler = Arc<dyn Fn(&SeenRequest) -> Reply + Send + Sync>;

/// The server. Stops when dropped.
pub struct ReplayServer {
    url: String,
    seen: Arc<Mutex<Vec<SeenRequest>>>,
    stop: Arc<AtomicBool>,
}

impl ReplayServer {
    /// Starts a server on a free port of 127.0.0.1.
    pub fn start(handler: impl Fn(&SeenRequest) -> Reply + Send + Sync + 'static) -> ReplayServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let url = format!("http://{}", listener.local_addr().expect("local addr"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Handler = Arc::new(handler);
        let (seen2, stop2) = (seen.clone(), stop.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let (handler, seen) = (handler.clone(), seen2.clone());
                std::thread::spawn(move || serve(stream, &handler, &seen));
            }
        });
        ReplayServer { url, seen, stop }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<SeenRequest> {
        self.seen.lock().expect("lock").clone()
    }
}

impl Drop for ReplayServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.url.trim_start_matches("http://"));
    }
}

fn serve(stream: TcpStream, handler: &Handler, seen: &Mutex<Vec<SeenRequest>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return,
    });
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" || h == "\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
    }
    let len: usize = headers.iter().find(|(k, _)| k == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let mut body = vec![0; len];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let req = SeenRequest { method, path, headers, body: String::from_utf8_lossy(&body).into_owned() };
    seen.lock().expect("lock").push(req.clone());
    let reply = handler(&req);
    if !reply.delay.is_zero() {
        std::thread::sleep(reply.delay);
    }
    let mut out = format!("HTTP/1.1 {} {}\r\n", reply.status, reason(reply.status));
    for (k, v) in &reply.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str(&format!("content-length: {}\r\nconnection: close\r\n\r\n", reply.body.len()));
    let mut stream = stream;
    let _ = stream.write_all(out.as_bytes()).and_then(|()| stream.write_all(reply.body.as_bytes()));
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        304 => "Not Modified",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        502 => "Bad Gateway",
        _ => "Status",
    }
}

/// GitHub's answer to a secondary rate limit (403 with `Retry-After`).
pub const SECONDARY_LIMIT_BODY: &str = r#"{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID 0400:3A8C:1B4F0E2:1C7E0A1:66A1B2C3.","documentation_url":"https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits","status":"403"}"#;

/// GitHub's answer to a spent primary rate limit (403, `X-RateLimit-Remaining: 0`).
pub const PRIMARY_LIMIT_BODY: &str = r#"{"message":"API rate limit exceeded for user ID 1.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-the-primary-rate-limit","status":"403"}"#;

/// GitHub GraphQL's answer (status 200) when the token's points are spent.
pub const GRAPHQL_RATE_LIMITED_BODY: &str = r#"{"errors":[{"type":"RATE_LIMITED","code":"graphql_rate_limit","message":"API rate limit exceeded for user ID 1."}]}"#;

/// GitHub GraphQL's 502 when a query runs too long.
pub const BAD_GATEWAY_BODY: &str = r#"{"data":null,"errors":[{"message":"Something went wrong while executing your query. This may be the result of a timeout, or it could be a GitHub bug. Please include `0400:3A8C:1B4F0E2:1C7E0A1:66A1B2C3` when reporting this issue."}]}"#;

/// A pull request of a [`FakeGithub`] repository.
#[derive(Debug, Clone)]
pub struct FakePr {
    /// PR number.
    pub number: u64,
    /// Title.
    pub title: String,
    /// Body.
    pub body: Option<String>,
    /// Merged (else closed without merging).
    pub merged: bool,
    /// Draft.
    pub draft: bool,
    /// Author login; `...[bot]` logins are `Bot`s.
    pub author: String,
    /// Base branch.
    pub base_ref: String,
    /// Base commit.
    pub base_sha: String,
    /// Head commit.
    pub head_sha: String,
    /// The `.diff` GitHub serves.
    pub diff: String,
    /// Issues GitHub links as closed: (repository, number, title, body).
    pub closing: Vec<(String, u64, String, Option<String>)>,
    /// Commit messages.
    pub commits: Vec<String>,
    /// Opening time.
    pub created_at: String,
    /// Closing time.
    pub closed_at: String,
}

impl FakePr {
    /// A merged PR with the given diff and nothing else.
    pub fn merged(number: u64, diff: &str) -> FakePr {
        FakePr {
            number,
            title: format!("PR {number}"),
            body: None,
            merged: true,
            draft: false,
            author: "octocat".into(),
            base_ref: "main".into(),
            base_sha: "0".repeat(40),
            head_sha: format!("{number:040x}"),
            diff: diff.to_owned(),
            closing: Vec::new(),
            commits: Vec::new(),
            created_at: "2024-01-10T08:30:00Z".into(),
            closed_at: "2024-01-15T12:00:00Z".into(),
        }
    }
}

/// A fault to inject at a matching request.
#[derive(Debug, Clone)]
pub enum Fault {
    /// 403 secondary rate limit with `Retry-After: secs`.
    SecondaryLimit(u64),
    /// 403 primary limit: `X-RateLimit-Remaining: 0` and a reset `secs` from now.
    PrimaryLimit(u64),
    /// GraphQL's spent limit: status 200, a `RATE_LIMITED` error, `X-RateLimit-Remaining: 0` and
    /// a reset `secs` from now.
    GraphqlRateLimited(u64),
    /// 502 with GitHub's GraphQL timeout body.
    BadGateway,
    /// A 200 whose body is cut in the middle.
    Malformed,
    /// Answer normally, slowly.
    Delay(Duration),
}

/// Which requests a fault hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// GraphQL listing pages.
    Search,
    /// Issue lookups.
    Issues,
    /// REST diffs.
    Diff,
    /// Any request.
    Any,
}

/// One repository served the way GitHub's APIs serve it.
pub struct FakeGithub {
    /// `owner/name`.
    pub repo: String,
    prs: Vec<FakePr>,
    issues: BTreeMap<(String, u64), (String, Option<String>)>,
    faults: Mutex<VecDeque<(Target, Fault)>>,
    /// Answer every request this slowly.
    pub delay: Duration,
    /// The token each request carried (by its position in the token list), for rotation tests.
    tokens_seen: Mutex<Vec<String>>,
}

impl FakeGithub {
    /// A repository with these PRs (listed in the given order).
    pub fn new(repo: &str, prs: Vec<FakePr>) -> FakeGithub {
        FakeGithub {
            repo: repo.to_owned(),
            prs,
            issues: BTreeMap::new(),
            faults: Mutex::new(VecDeque::new()),
            delay: Duration::ZERO,
            tokens_seen: Mutex::new(Vec::new()),
        }
    }

    /// Adds an issue that lookups can find.
    pub fn issue(mut self, repo: &str, number: u64, title: &str, body: Option<&str>) -> FakeGithub {
        self.issues.insert((repo.to_owned(), number), (title.to_owned(), body.map(str::to_owned)));
        self
    }

    /// Queues a fault for the next request of `target` (faults fire in order).
    pub fn fault(self, target: Target, fault: Fault) -> FakeGithub {
        self.faults.lock().expect("lock").push_back((target, fault));
        self
    }

    /// The `Authorization` headers seen, in order.
    pub fn authorizations(&self) -> Vec<String> {
        self.tokens_seen.lock().expect("lock").clone()
    }

    /// Answers one request.
    pub fn answer(&self, req: &SeenRequest) -> Reply {
        self.tokens_seen.lock().expect("lock").push(req.header("authorization").unwrap_or_default().to_owned());
        let target = if req.path == "/graphql" {
            if req.body.contains("search(") { Target::Search } else { Target::Issues }
        } else {
            Target::Diff
        };
        let fault = {
            let mut faults = self.faults.lock().expect("lock");
            match faults.front() {
                Some((t, _)) if *t == target || *t == Target::Any => faults.pop_front().map(|f| f.1),
                _ => None,
            }
        };
        let mut reply = match fault {
            Some(Fault::SecondaryLimit(secs)) => {
                return Reply::status(403, SECONDARY_LIMIT_BODY).header("retry-after", &secs.to_string());
            }
            Some(Fault::PrimaryLimit(secs)) => {
                let reset =
                    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
                        + secs;
                return Reply::status(403, PRIMARY_LIMIT_BODY)
                    .header("x-ratelimit-limit", "5000")
                    .header("x-ratelimit-remaining", "0")
                    .header("x-ratelimit-reset", &reset.to_string());
            }
            Some(Fault::GraphqlRateLimited(secs)) => {
                let reset =
                    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
                        + secs;
                return Reply::json(GRAPHQL_RATE_LIMITED_BODY)
                    .header("x-ratelimit-limit", "5000")
                    .header("x-ratelimit-remaining", "0")
                    .header("x-ratelimit-reset", &reset.to_string());
            }
            Some(Fault::BadGateway) => return Reply::status(502, BAD_GATEWAY_BODY),
            Some(Fault::Malformed) => {
                let mut r = self.route(req, target);
                let cut = r.body.len() / 2;
                r.body.truncate(cut);
                return r;
            }
            Some(Fault::Delay(d)) => {
                let mut r = self.route(req, target);
                r.delay = d;
                r
            }
            None => self.route(req, target),
        };
        if reply.delay.is_zero() {
            reply.delay = self.delay;
        }
        reply
            .header("x-ratelimit-limit", "5000")
            .header("x-ratelimit-remaining", "4999")
            .header("x-ratelimit-reset", "4102444800")
            .header("x-github-request-id", "0400:3A8C:1B4F0E2:1C7E0A1:66A1B2C3")
    }

    fn route(&self, req: &SeenRequest, target: Target) -> Reply {
        match target {
            Target::Search => self.search(req),
            Target::Issues => self.lookup(req),
            _ => self.diff(req),
        }
    }

    fn search(&self, req: &SeenRequest) -> Reply {
        let v: serde_json::Value = serde_json::from_str(&req.body).unwrap_or_default();
        let vars = &v["variables"];
        let first = vars["first"].as_u64().unwrap_or(30) as usize;
        let start = vars["after"].as_str().and_then(decode_cursor).unwrap_or(0);
        let q = vars["q"].as_str().unwrap_or_default();
        if !q.contains(&format!("repo:{}", self.repo)) {
            return Reply::json(
                r#"{"data":{"rateLimit":{"cost":1,"remaining":4999,"resetAt":"2099-01-01T00:00:00Z"},"search":{"issueCount":0,"pageInfo":{"hasNextPage":false,"endCursor":null},"nodes":[]}}}"#,
            );
        }
        // `closed:A..B` (RFC 3339 bounds, `*` open) selects on the closing time, as on GitHub.
        let range = Regex::new(r"closed:(\S+)\.\.(\S+)").expect("regex");
        let in_window = |p: &&FakePr| match range.captures(q) {
            Some(c) => {
                (&c[1] == "*" || p.closed_at.as_str() >= &c[1]) && (&c[2] == "*" || p.closed_at.as_str() <= &c[2])
            }
            None => true,
        };
        let matching: Vec<&FakePr> = self.prs.iter().filter(in_window).collect();
        let end = (start + first).min(matching.len());
        let nodes: Vec<serde_json::Value> = matching[start.min(end)..end].iter().map(|p| self.node(p)).collect();
        let body = serde_json::json!({
            "data": {
                "rateLimit": { "cost": 1, "remaining": 4999, "resetAt": "2099-01-01T00:00:00Z" },
                "search": {
                    "issueCount": matching.len(),
                    "pageInfo": { "hasNextPage": end < matching.len(), "endCursor": if end > start { Some(encode_cursor(end)) } else { None } },
                    "nodes": nodes,
                }
            }
        });
        Reply::json(body.to_string())
    }

    fn node(&self, p: &FakePr) -> serde_json::Value {
        let owner = self.repo.split('/').next().unwrap_or_default();
        let files: Vec<serde_json::Value> = file_diffs(&p.diff)
            .iter()
            .map(|f| {
                let shape = PatchShape::of(f);
                let path = shape.files.first().cloned().unwrap_or_default();
                serde_json::json!({ "path": path, "additions": shape.added, "deletions": shape.removed })
            })
            .collect();
        let (adds, dels) = files.iter().fold((0, 0), |(a, d), f| {
            (a + f["additions"].as_u64().unwrap_or(0), d + f["deletions"].as_u64().unwrap_or(0))
        });
        let bot = p.author.ends_with("[bot]");
        serde_json::json!({
            "number": p.number,
            "title": p.title,
            "body": p.body,
            "url": format!("https://github.com/{}/pull/{}", self.repo, p.number),
            "isDraft": p.draft,
            "merged": p.merged,
            "createdAt": p.created_at,
            "mergedAt": if p.merged { Some(p.closed_at.clone()) } else { None },
            "closedAt": p.closed_at,
            "author": { "__typename": if bot { "Bot" } else { "User" }, "login": p.author },
            "baseRefName": p.base_ref,
            "baseRefOid": p.base_sha,
            "headRefOid": p.head_sha,
            "baseRepository": { "nameWithOwner": self.repo, "owner": { "login": owner } },
            "mergeCommit": if p.merged { Some(serde_json::json!({ "oid": format!("{:040x}", p.number + 0xabc) })) } else { None },
            "additions": adds,
            "deletions": dels,
            "changedFiles": files.len(),
            "files": { "totalCount": files.len(), "nodes": files },
            "commits": { "totalCount": p.commits.len(), "nodes": p.commits.iter().map(|m| serde_json::json!({ "commit": { "message": m } })).collect::<Vec<_>>() },
            "closingIssuesReferences": { "nodes": p.closing.iter().map(|(r, n, t, b)| serde_json::json!({ "number": n, "title": t, "body": b, "repository": { "nameWithOwner": r } })).collect::<Vec<_>>() },
        })
    }

    fn lookup(&self, req: &SeenRequest) -> Reply {
        let v: serde_json::Value = serde_json::from_str(&req.body).unwrap_or_default();
        let query = v["query"].as_str().unwrap_or_default();
        let repo_re = Regex::new(r#"(r[0-9]+): repository\(owner: "([^"]*)", name: "([^"]*)"\)"#).expect("regex");
        let issue_re = Regex::new(r"(i[0-9]+): issueOrPullRequest\(number: ([0-9]+)\)").expect("regex");
        let mut data = serde_json::Map::new();
        let mut errors = Vec::new();
        let mut current: Option<(String, String)> = None;
        for line in query.lines() {
            if let Some(c) = repo_re.captures(line) {
                current = Some((c[1].to_owned(), format!("{}/{}", &c[2], &c[3])));
                data.insert(c[1].to_owned(), serde_json::Value::Object(serde_json::Map::new()));
                continue;
            }
            let (Some((alias, repo)), Some(i)) = (current.as_ref(), issue_re.captures(line)) else { continue };
            let n: u64 = i[2].parse().unwrap_or(0);
            let value = if let Some((t, b)) = self.issues.get(&(repo.clone(), n)) {
                serde_json::json!({ "__typename": "Issue", "number": n, "title": t, "body": b })
            } else if *repo == self.repo && self.prs.iter().any(|p| p.number == n) {
                serde_json::json!({ "__typename": "PullRequest" })
            } else {
                errors.push(serde_json::json!({ "type": "NOT_FOUND", "path": [alias, &i[1]], "message": format!("Could not resolve to an issue or pull request with the number of {n}.") }));
                serde_json::Value::Null
            };
            if let Some(serde_json::Value::Object(obj)) = data.get_mut(alias) {
                obj.insert(i[1].to_owned(), value);
            }
        }
        let mut body = serde_json::json!({ "data": data });
        if !errors.is_empty() {
            body["errors"] = serde_json::Value::Array(errors);
        }
        Reply::json(body.to_string())
    }

    fn diff(&self, req: &SeenRequest) -> Reply {
        let prefix = format!("/repos/{}/pulls/", self.repo);
        let Some(n) = req.path.strip_prefix(&prefix).and_then(|n| n.parse::<u64>().ok()) else {
            return Reply::status(
                404,
                r#"{"message":"Not Found","documentation_url":"https://docs.github.com/rest","status":"404"}"#,
            );
        };
        let Some(p) = self.prs.iter().find(|p| p.number == n) else {
            return Reply::status(
                404,
                r#"{"message":"Not Found","documentation_url":"https://docs.github.com/rest/pulls/pulls#get-a-pull-request","status":"404"}"#,
            );
        };
        let etag = format!("W/\"{:016x}\"", fnv(&p.diff));
        if req.header("if-none-match") == Some(etag.as_str()) {
            return Reply {
                status: 304,
                headers: vec![("etag".into(), etag)],
                body: String::new(),
                delay: Duration::ZERO,
            };
        }
        Reply {
            status: 200,
            headers: vec![("content-type".into(), "text/plain; charset=utf-8".into()), ("etag".into(), etag)],
            body: p.diff.clone(),
            delay: Duration::ZERO,
        }
    }
}

/// A diff cut at its `diff --git` lines, one piece per file (text before the first is dropped).
fn file_diffs(diff: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in diff.split_inclusive('\n') {
        if line.starts_with("diff --git ") {
            out.push(String::new());
        }
        if let Some(piece) = out.last_mut() {
            piece.push_str(line);
        }
    }
    out
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// GitHub's cursor format: base64 of `cursor:N`.
fn encode_cursor(n: usize) -> String {
    let bytes = format!("cursor:{n}").into_bytes();
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let v = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64[((v >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn decode_cursor(s: &str) -> Option<usize> {
    let mut bits = 0u32;
    let mut n = 0;
    let mut out = Vec::new();
    for c in s.bytes().filter(|&c| c != b'=') {
        bits = (bits << 6) | B64.iter().position(|&x| x == c)? as u32;
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
            bits &= (1 << n) - 1;
        }
    }
    String::from_utf8(out).ok()?.strip_prefix("cursor:")?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_look_like_githubs() {
        assert_eq!(encode_cursor(50), "Y3Vyc29yOjUw");
        assert_eq!(decode_cursor("Y3Vyc29yOjUw"), Some(50));
        for n in [1, 7, 100, 999, 12345] {
            assert_eq!(decode_cursor(&encode_cursor(n)), Some(n));
        }
    }
}
