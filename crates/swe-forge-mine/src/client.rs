//! The GitHub HTTP client: octocrab underneath (one instance per token), with our own policy on
//! top, because mining needs it and octocrab's retry layer does not provide it:
//!
//! - every request is counted ([`RequestStats`]), so costs can be measured and tested;
//! - `X-RateLimit-Remaining: 0` parks a token until `X-RateLimit-Reset`; a 403/429 with
//!   `Retry-After` (secondary limit) parks it for that long; the next free token takes over, and
//!   when none is free the client sleeps until the first one is (at most `max_wait`);
//! - 5xx answers, connection failures and bodies that do not parse are retried with backoff,
//!   except a connection that fails before the API ever answered (name lookup, refused, connect
//!   timeout of [`CONNECT_TIMEOUT`]): that is no network, and fails at once ([`MineError::Unreachable`]);
//! - a token GitHub refuses (401) is set aside with a warning naming its position in the list
//!   (`token #2 of 3`), and the next one takes over; only when every token is refused does the
//!   client fail ([`MineError::TokensRefused`]);
//! - GET responses with an `ETag` are kept in an on-disk cache and revalidated with
//!   `If-None-Match`, so a re-run costs 304s, which GitHub does not charge.
//!
//! **Invariant:** a token is only ever placed in an `Authorization` header by octocrab. It is not
//! in any error, log event, cache file or statistic, and [`Token`]'s `Debug` hides it.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::header::{ACCEPT, ETAG, IF_NONE_MATCH};
use http::{HeaderMap, Method, StatusCode};
use octocrab::Octocrab;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::MineError;

/// Longest wait for a TCP (and TLS) connection to the API.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A GitHub token. Its `Debug` output never shows the secret.
#[derive(Clone)]
pub struct Token(String);

impl Token {
    /// Wraps a token string (surrounding whitespace removed).
    pub fn new(s: &str) -> Token {
        Token(s.trim().to_owned())
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(***)")
    }
}

/// Tokens from `GITHUB_TOKEN` (several may be separated by commas or whitespace) and from files
/// (one token per line, `#` comments allowed). Duplicates are dropped. A token with characters
/// that cannot go into an HTTP header is refused, without being shown.
pub fn load_tokens(env_value: Option<&str>, files: &[PathBuf]) -> Result<Vec<Token>, MineError> {
    let mut out: Vec<Token> = Vec::new();
    let mut push = |s: &str, source: &str| -> Result<(), MineError> {
        for t in s.split(|c: char| c == ',' || c.is_whitespace()).filter(|t| !t.is_empty()) {
            if !t.chars().all(|c| c.is_ascii_graphic()) {
                return Err(MineError::Invalid {
                    what: "token",
                    message: format!("a token from {source} has characters that cannot be sent in a header"),
                });
            }
            if !out.iter().any(|o| o.0 == t) {
                out.push(Token::new(t));
            }
        }
        Ok(())
    };
    if let Some(v) = env_value {
        push(v, "GITHUB_TOKEN")?;
    }
    for f in files {
        let text = std::fs::read_to_string(f).map_err(MineError::io(f))?;
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
            push(line, &f.display().to_string())?;
        }
    }
    Ok(out)
}

/// How the client talks to GitHub.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// API root, `https://api.github.com` (GraphQL is `<api_url>/graphql`).
    pub api_url: String,
    /// Tokens to rotate; none means anonymous requests.
    pub tokens: Vec<Token>,
    /// Folder of the ETag cache; none disables it.
    pub cache_dir: Option<PathBuf>,
    /// Retries of one request after 5xx answers, connection errors and malformed bodies.
    pub max_retries: u32,
    /// First backoff delay; doubled on every retry.
    pub backoff: Duration,
    /// Longest total wait for a rate limit to reset before giving up.
    pub max_wait: Duration,
    /// Timeout of one request.
    pub timeout: Duration,
}

impl ClientOptions {
    /// Defaults for `api_url` and `tokens`.
    pub fn new(api_url: &str, tokens: Vec<Token>) -> ClientOptions {
        ClientOptions {
            api_url: api_url.trim_end_matches('/').to_owned(),
            tokens,
            cache_dir: None,
            max_retries: 5,
            backoff: Duration::from_secs(2),
            max_wait: Duration::from_secs(3600),
            timeout: Duration::from_secs(120),
        }
    }
}

/// What the client sent and how GitHub answered.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestStats {
    /// HTTP requests sent, every attempt counted.
    pub requests: u64,
    /// ...of which GraphQL.
    pub graphql: u64,
    /// ...of which REST.
    pub rest: u64,
    /// 304 answers served from the cache.
    pub not_modified: u64,
    /// Answers refused by a rate limit (403/429).
    pub rate_limited: u64,
    /// 5xx answers and connection failures.
    pub server_errors: u64,
    /// Bodies that did not parse.
    pub malformed: u64,
    /// Times the client moved to another token.
    pub token_switches: u64,
    /// Seconds slept waiting for limits and backoffs.
    pub waited_secs: u64,
}

struct TokenState {
    /// Unix time before which this token must not be used.
    parked_until: i64,
    /// GitHub refused it (401): never used again. Holds the status and GitHub's message.
    refused: Option<String>,
}

struct State {
    current: usize,
    tokens: Vec<TokenState>,
    stats: RequestStats,
}

/// A GitHub client with rotation, rate-limit handling, retries and an ETag cache.
pub struct Client {
    octos: Vec<Octocrab>,
    opts: ClientOptions,
    state: Mutex<State>,
    /// Whether the API ever answered: before, a failed connection means no network.
    reached: AtomicBool,
}

/// A successful answer.
pub struct Answer {
    /// HTTP status (2xx, or 304 when served from the cache).
    pub status: StatusCode,
    /// Body text.
    pub body: String,
}

#[derive(Serialize, Deserialize)]
struct CacheEntry {
    path: String,
    accept: String,
    etag: String,
    body: String,
}

enum Attempt {
    Done(Answer),
    /// Try again after this many seconds (0: at once, with another token).
    Retry(u64),
}

/// Why one exchange failed: tried again with backoff, except a first connection that could not
/// be made.
#[derive(Debug, thiserror::Error)]
enum Failed {
    /// No connection could be made (name lookup, refused, connect timeout): the cause.
    #[error("{0}")]
    Unreachable(String),
    /// The request could not be made.
    #[error("{0}")]
    Request(octocrab::Error),
    /// The connection failed.
    #[error("connection: {0}")]
    Connection(octocrab::Error),
    /// The answer's body could not be read.
    #[error("reading body: {0}")]
    Body(octocrab::Error),
    /// A 5xx, with GitHub's message.
    #[error("{status}: {message}")]
    Server { status: StatusCode, message: String },
}

impl Client {
    /// Builds one octocrab client per token. Must be called inside a tokio runtime.
    pub fn new(opts: ClientOptions) -> Result<Client, MineError> {
        let mut octos = Vec::new();
        let build = |token: Option<&Token>| -> Result<Octocrab, MineError> {
            let mut b = Octocrab::builder()
                .base_uri(opts.api_url.as_str())
                .map_err(|e| MineError::Client(format!("bad API url {}: {e}", opts.api_url)))?
                .set_connect_timeout(Some(CONNECT_TIMEOUT))
                .set_read_timeout(Some(opts.timeout))
                .set_write_timeout(Some(opts.timeout));
            if let Some(t) = token {
                b = b.personal_token(t.0.clone());
            }
            b.build().map_err(|e| MineError::Client(e.to_string()))
        };
        if opts.tokens.is_empty() {
            octos.push(build(None)?);
        }
        for t in &opts.tokens {
            octos.push(build(Some(t))?);
        }
        if let Some(dir) = &opts.cache_dir {
            std::fs::create_dir_all(dir).map_err(MineError::io(dir))?;
        }
        let tokens = octos.iter().map(|_| TokenState { parked_until: 0, refused: None }).collect();
        Ok(Client {
            octos,
            opts,
            state: Mutex::new(State { current: 0, tokens, stats: RequestStats::default() }),
            reached: AtomicBool::new(false),
        })
    }

    /// Requests sent so far.
    pub fn stats(&self) -> RequestStats {
        self.state.lock().expect("state lock").stats.clone()
    }

    /// A GraphQL query; `parse` turns the body into the caller's type and may refuse it (then the
    /// request is retried as malformed).
    pub async fn graphql<T, E: std::fmt::Display>(
        &self,
        query: &str,
        variables: serde_json::Value,
        parse: impl Fn(&str) -> Result<T, E>,
    ) -> Result<T, MineError> {
        let body = serde_json::json!({ "query": query, "variables": variables });
        self.call(Method::POST, "/graphql", "application/json", Some(body), parse).await
    }

    /// A GET of `path` (with query) accepting `accept`, through the ETag cache.
    pub async fn get<T, E: std::fmt::Display>(
        &self,
        path: &str,
        accept: &str,
        parse: impl Fn(&str) -> Result<T, E>,
    ) -> Result<T, MineError> {
        self.call(Method::GET, path, accept, None, parse).await
    }

    async fn call<T, E: std::fmt::Display>(
        &self,
        method: Method,
        path: &str,
        accept: &str,
        body: Option<serde_json::Value>,
        parse: impl Fn(&str) -> Result<T, E>,
    ) -> Result<T, MineError> {
        let method_name: &'static str = if method == Method::POST { "POST" } else { "GET" };
        let api_err =
            |message: String| MineError::Api { method: method_name, path: path.to_owned(), status: None, message };
        let cache_file = (method == Method::GET).then(|| self.cache_file(path, accept)).flatten();
        let mut failures = 0u32;
        let mut waited = Duration::ZERO;
        loop {
            let cached = cache_file.as_deref().and_then(read_cache);
            let token = self.pick_token(&mut waited).await?;
            let attempt = self.attempt(token, &method, path, accept, body.as_ref(), cached.as_ref()).await;
            let delay = match attempt {
                Ok(Attempt::Done(answer)) => {
                    if answer.status == StatusCode::NOT_MODIFIED || !answer.status.is_success() {
                        // 304 without a cache entry cannot happen: we only send If-None-Match with one.
                        if let Some(c) = cached.filter(|_| answer.status == StatusCode::NOT_MODIFIED) {
                            match parse(&c.body) {
                                Ok(v) => return Ok(v),
                                Err(e) => return Err(api_err(format!("cached body does not parse: {e}"))),
                            }
                        }
                        return Err(MineError::Api {
                            method: method_name,
                            path: path.to_owned(),
                            status: Some(answer.status.as_u16()),
                            message: format!("{}: {}", answer.status, github_message(&answer.body)),
                        });
                    }
                    match parse(&answer.body) {
                        Ok(v) => return Ok(v),
                        Err(e) => {
                            self.count(|s| s.malformed += 1);
                            tracing::warn!(path, error = %e, "malformed answer, retrying");
                            failures += 1;
                            if failures > self.opts.max_retries {
                                return Err(api_err(format!("malformed answer after {failures} tries: {e}")));
                            }
                            self.backoff(failures)
                        }
                    }
                }
                Ok(Attempt::Retry(secs)) => Duration::from_secs(secs),
                Err(Failed::Unreachable(e)) if !self.reached.load(Ordering::Relaxed) => {
                    return Err(MineError::Unreachable { api_url: self.opts.api_url.clone(), message: e });
                }
                Err(e) => {
                    failures += 1;
                    if failures > self.opts.max_retries {
                        return Err(api_err(format!("giving up after {failures} tries: {e}")));
                    }
                    tracing::warn!(path, error = %e, "request failed, retrying");
                    self.backoff(failures)
                }
            };
            if !delay.is_zero() {
                waited += delay;
                if waited > self.opts.max_wait {
                    return Err(api_err(format!("waited {}s, more than the limit", waited.as_secs())));
                }
                self.count(|s| s.waited_secs += delay.as_secs());
                tokio::time::sleep(delay).await;
            }
        }
    }

    fn backoff(&self, failures: u32) -> Duration {
        self.opts.backoff.saturating_mul(1 << failures.saturating_sub(1).min(6))
    }

    /// One HTTP exchange. `Err` is a failure (connection, 5xx) to retry with backoff, unless no
    /// connection was ever made.
    async fn attempt(
        &self,
        token: usize,
        method: &Method,
        path: &str,
        accept: &str,
        body: Option<&serde_json::Value>,
        cached: Option<&CacheEntry>,
    ) -> Result<Attempt, Failed> {
        let octo = &self.octos[token];
        let mut builder = http::Request::builder().method(method.clone()).uri(path).header(ACCEPT, accept);
        if let Some(c) = cached {
            builder = builder.header(IF_NONE_MATCH, c.etag.as_str());
        }
        let request = octo.build_request(builder, body).map_err(Failed::Request)?;
        self.count(|s| {
            s.requests += 1;
            if path == "/graphql" { s.graphql += 1 } else { s.rest += 1 }
        });
        let response = match octo.execute(request).await {
            Ok(r) => r,
            Err(e) => {
                self.count(|s| s.server_errors += 1);
                if let Some(cause) = connect_failure(&e) {
                    return Err(Failed::Unreachable(cause));
                }
                return Err(Failed::Connection(e));
            }
        };
        self.reached.store(true, Ordering::Relaxed);
        let status = response.status();
        let headers = response.headers().clone();
        let text = octo.body_to_string(response).await.map_err(Failed::Body)?;
        let now = unix_now();
        let remaining = header_u64(&headers, "x-ratelimit-remaining");
        let reset = header_u64(&headers, "x-ratelimit-reset").map(|r| r as i64);
        let retry_after = header_u64(&headers, "retry-after");
        if status == StatusCode::UNAUTHORIZED {
            let why = format!("{status}: {}", github_message(&text));
            let n = self.octos.len();
            tracing::warn!("GitHub refused token #{} of {n} ({why}); going on without it", token + 1);
            self.state.lock().expect("state lock").tokens[token].refused = Some(why);
            return Ok(Attempt::Retry(0));
        }
        if status == StatusCode::FORBIDDEN || status == StatusCode::TOO_MANY_REQUESTS {
            let park_until = match (retry_after, remaining, reset) {
                (Some(secs), _, _) => Some(now + secs as i64),
                (None, Some(0), Some(reset)) => Some(reset.max(now + 1)),
                // A secondary limit without Retry-After: GitHub asks for at least a minute.
                (None, _, _) if text.contains("secondary rate limit") => Some(now + 60),
                _ => None,
            };
            if let Some(until) = park_until {
                self.count(|s| s.rate_limited += 1);
                tracing::warn!(path, wait_secs = until - now, "rate limited");
                self.park(token, until);
                return Ok(Attempt::Retry(0));
            }
            return Ok(Attempt::Done(Answer { status, body: text }));
        }
        if let (Some(0), Some(reset)) = (remaining, reset) {
            // This answer is good, but the token is spent until reset.
            self.park(token, reset);
        }
        if status.is_server_error() {
            self.count(|s| s.server_errors += 1);
            return Err(Failed::Server { status, message: github_message(&text) });
        }
        if status == StatusCode::NOT_MODIFIED {
            self.count(|s| s.not_modified += 1);
            return Ok(Attempt::Done(Answer { status, body: String::new() }));
        }
        if status.is_success()
            && let (Some(etag), Some(file)) =
                (headers.get(ETAG).and_then(|v| v.to_str().ok()), self.cache_file(path, accept))
            && method == Method::GET
        {
            write_cache(
                &file,
                &CacheEntry {
                    path: path.to_owned(),
                    accept: accept.to_owned(),
                    etag: etag.to_owned(),
                    body: text.clone(),
                },
            );
        }
        Ok(Attempt::Done(Answer { status, body: text }))
    }

    fn park(&self, token: usize, until: i64) {
        let mut st = self.state.lock().expect("state lock");
        let t = &mut st.tokens[token];
        t.parked_until = t.parked_until.max(until);
    }

    /// The current token if free, else the next free one; sleeps when all are parked. Refused
    /// tokens are never picked; when every token is refused, says which and why.
    async fn pick_token(&self, waited: &mut Duration) -> Result<usize, MineError> {
        loop {
            let wait = {
                let mut st = self.state.lock().expect("state lock");
                let now = unix_now();
                let n = st.tokens.len();
                if st.tokens.iter().all(|t| t.refused.is_some()) {
                    let which: Vec<String> = st
                        .tokens
                        .iter()
                        .enumerate()
                        .map(|(i, t)| format!("token #{} of {n} ({})", i + 1, t.refused.as_deref().unwrap_or_default()))
                        .collect();
                    return Err(MineError::TokensRefused(which.join(", ")));
                }
                let start = st.current;
                let usable = |t: &TokenState| t.refused.is_none();
                let free = (0..n)
                    .map(|k| (start + k) % n)
                    .find(|&i| usable(&st.tokens[i]) && st.tokens[i].parked_until <= now);
                if let Some(i) = free {
                    if i != st.current {
                        st.current = i;
                        st.stats.token_switches += 1;
                    }
                    return Ok(i);
                }
                let first = st.tokens.iter().filter(|t| usable(t)).map(|t| t.parked_until).min().unwrap_or(now);
                (first - now).max(1) as u64
            };
            let wait = Duration::from_secs(wait);
            *waited += wait;
            if *waited > self.opts.max_wait {
                return Err(MineError::Client(format!("every token is rate limited for {}s more", wait.as_secs())));
            }
            tracing::warn!(wait_secs = wait.as_secs(), "every token is rate limited, waiting");
            self.count(|s| s.waited_secs += wait.as_secs());
            tokio::time::sleep(wait).await;
        }
    }

    fn count(&self, f: impl FnOnce(&mut RequestStats)) {
        f(&mut self.state.lock().expect("state lock").stats);
    }

    fn cache_file(&self, path: &str, accept: &str) -> Option<PathBuf> {
        let dir = self.opts.cache_dir.as_ref()?;
        let mut h = Sha256::new();
        h.update(self.opts.api_url.as_bytes());
        h.update(b"\n");
        h.update(path.as_bytes());
        h.update(b"\n");
        h.update(accept.as_bytes());
        let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        Some(dir.join(&hex[..2]).join(format!("{hex}.json")))
    }
}

/// What failed when no connection could be made: a name that does not resolve, a refused
/// connection or the connect timeout (hyper's connect errors, anywhere in the cause chain).
fn connect_failure(e: &octocrab::Error) -> Option<String> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    let mut connect = false;
    let mut last = String::new();
    while let Some(c) = cause {
        connect |= c.downcast_ref::<hyper_util::client::legacy::Error>().is_some_and(|h| h.is_connect());
        last = c.to_string();
        cause = c.source();
    }
    connect.then_some(last)
}

fn read_cache(file: &Path) -> Option<CacheEntry> {
    serde_json::from_slice(&std::fs::read(file).ok()?).ok()
}

/// Written through the fs crate's atomic writer; a failure only costs the cache entry.
fn write_cache(file: &Path, entry: &CacheEntry) {
    let bytes = serde_json::to_vec(entry).expect("cache entries serialize");
    let write = || -> Result<(), Box<dyn std::error::Error>> {
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir)?;
        }
        Ok(swe_forge_fs::write_file(file, &bytes)?)
    };
    if let Err(e) = write() {
        tracing::warn!(file = %file.display(), error = %e, "cannot write the HTTP cache");
    }
}

fn header_u64(headers: &HeaderMap, name: &str) -> Option<u64> {
    headers.get(name)?.to_str().ok()?.trim().parse().ok()
}

fn unix_now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// GitHub's `message` field, or the start of the body.
fn github_message(body: &str) -> String {
    #[derive(Deserialize)]
    struct M {
        message: String,
    }
    serde_json::from_str::<M>(body).map(|m| m.message).unwrap_or_else(|_| body.chars().take(200).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_from_the_environment_and_files() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tokens");
        std::fs::write(
            &file,
            "# team tokens
ghp_b

  ghp_c  
ghp_a
",
        )
        .unwrap();
        let tokens = load_tokens(Some("ghp_a, ghp_b"), &[file]).unwrap();
        let raw: Vec<&str> = tokens.iter().map(|t| t.0.as_str()).collect();
        assert_eq!(raw, ["ghp_a", "ghp_b", "ghp_c"]);
        assert_eq!(format!("{tokens:?}"), "[Token(***), Token(***), Token(***)]");
        let err = load_tokens(Some("ghp_\u{7}bell"), &[]).unwrap_err().to_string();
        assert!(!err.contains("bell"), "{err}");
        assert!(load_tokens(None, &[]).unwrap().is_empty());
    }
}
