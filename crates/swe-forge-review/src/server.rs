//! The connections: hyper's HTTP/1.1 on tokio, bound to 127.0.0.1 only, one request per
//! connection (`Connection: close`). At most `Limits::connections` connections are served at once
//! (the others wait in the listen queue), the request head must arrive within
//! `Limits::header_timeout`, and a connection that is not done within `Limits::connection_timeout`
//! (a slow body, a reader that does not read the answer) is closed: no client holds a slot for
//! ever. The routes run on tokio's blocking pool (they read files and the state store).
//! A request that reads the dataset first checks that the file is the one indexed (`api::State`).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue, X_CONTENT_TYPE_OPTIONS};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use swe_forge_curate::{Heuristic, KeepRule};
use swe_forge_store::Store;
use tokio::sync::Semaphore;

use crate::ReviewError;
use crate::api::{self, Request, Response, State};
use crate::index::Index;

/// Largest request body accepted.
const BODY_CAP: usize = 1024 * 1024;

/// What the review server serves.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// The dataset (JSONL records).
    pub dataset: PathBuf,
    /// Where validation wrote its run logs (`<work_dir>/logs/<instance_id>/{run,test,fix}.log`).
    pub work_dir: WorkDir,
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
    /// Bounds on connections.
    pub limits: Limits,
}

/// The work folder whose logs the page shows, and how it was chosen (the page says so).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkDir {
    /// Named by the user (`--work-dir`).
    Given(PathBuf),
    /// Found next to the dataset (`find_work_dir`).
    Found(PathBuf),
    /// None: the page warns that no logs were found.
    None,
}

/// How many connections are served at once and how long each may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections served at once; more wait to be accepted.
    pub connections: usize,
    /// Longest wait for a request's head (request line and headers) once connected.
    pub header_timeout: Duration,
    /// Longest a connection may stay open: reading the request, answering, writing the answer.
    pub connection_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { connections: 64, header_timeout: Duration::from_secs(10), connection_timeout: Duration::from_secs(30) }
    }
}

/// A bound, loaded review server.
pub struct ReviewServer {
    listener: TcpListener,
    state: Arc<State>,
    limits: Limits,
}

impl ReviewServer {
    /// Reads the dataset, opens the store and listens on 127.0.0.1.
    pub fn bind(options: ServerOptions) -> Result<ReviewServer, ReviewError> {
        let index = Index::read(&options.dataset, &options.heuristic)?;
        let store = Store::open(&options.store)?;
        let latest = store.latest_reviews()?;
        let decisions = store.latest_decisions()?;
        let addr = format!("127.0.0.1:{}", options.port);
        let listen = |source| ReviewError::Listen { addr: addr.clone(), source };
        let listener = TcpListener::bind(&addr).map_err(listen)?;
        listener.set_nonblocking(true).map_err(listen)?;
        let port = listener.local_addr().map_err(listen)?.port();
        let state = State {
            dataset: options.dataset,
            work_dir_origin: match &options.work_dir {
                WorkDir::Given(_) => "given",
                WorkDir::Found(_) => "found",
                WorkDir::None => "none",
            },
            work_dir: match options.work_dir {
                WorkDir::Given(p) | WorkDir::Found(p) => Some(p),
                WorkDir::None => None,
            },
            index: Mutex::new(Arc::new(index)),
            store: Mutex::new(store),
            latest: Mutex::new(latest),
            decisions: Mutex::new(decisions),
            reviewer: options.reviewer,
            rule: options.keep_rule,
            heuristic: options.heuristic,
            port,
        };
        Ok(ReviewServer { listener, state: Arc::new(state), limits: options.limits })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.state.port))
    }

    /// Number of instances in the dataset.
    pub fn instances(&self) -> usize {
        self.state.index.lock().unwrap_or_else(|e| e.into_inner()).entries.len()
    }

    /// How many instances of the dataset have a log folder in the work folder.
    pub fn instances_with_logs(&self) -> usize {
        let index = Arc::clone(&self.state.index.lock().unwrap_or_else(|e| e.into_inner()));
        api::with_logs(&self.state, &index)
    }

    /// Serves until the future is dropped; must run inside a tokio runtime with time and IO.
    pub async fn serve(self) -> Result<(), ReviewError> {
        let addr = self.local_addr().to_string();
        let listener = tokio::net::TcpListener::from_std(self.listener)
            .map_err(|source| ReviewError::Listen { addr: addr.clone(), source })?;
        let slots = Arc::new(Semaphore::new(self.limits.connections.max(1)));
        let limits = self.limits;
        loop {
            let slot = Arc::clone(&slots).acquire_owned().await.expect("the semaphore is never closed");
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors and the like: wait a little rather than spin.
                    tracing::warn!("review server: accepting a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let state = Arc::clone(&self.state);
            tokio::spawn(async move {
                let service = service_fn(move |req| answer(Arc::clone(&state), req));
                let mut builder = http1::Builder::new();
                builder.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout).keep_alive(false);
                let conn = builder.serve_connection(TokioIo::new(stream), service);
                match tokio::time::timeout(limits.connection_timeout, conn).await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => tracing::debug!("review server: connection ended: {e}"),
                    Err(_) => tracing::debug!("review server: connection closed after {:?}", limits.connection_timeout),
                }
                drop(slot);
            });
        }
    }
}

/// Reads the request, runs its route on the blocking pool and turns the answer into HTTP.
async fn answer(state: Arc<State>, req: hyper::Request<Incoming>) -> Result<hyper::Response<Full<Bytes>>, Infallible> {
    let (parts, body) = req.into_parts();
    // A body announced larger than the cap is refused before any of it is awaited: a client
    // that announces 10^14 bytes and sends none gets its 413 at once, not at the connection's end.
    let announced = hyper::body::Body::size_hint(&body).lower();
    let response = if announced > BODY_CAP as u64 {
        Response::error(413, "request body too large")
    } else {
        match Limited::new(body, BODY_CAP).collect().await {
            Err(e) if e.is::<http_body_util::LengthLimitError>() => Response::error(413, "request body too large"),
            Err(_) => Response::error(400, "bad request"),
            Ok(body) => {
                let query = parts.uri.query().map_or_else(BTreeMap::new, |q| {
                    form_urlencoded::parse(q.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
                });
                let headers = parts
                    .headers
                    .iter()
                    .filter_map(|(k, v)| Some((k.as_str().to_owned(), v.to_str().ok()?.to_owned())))
                    .collect();
                let request = Request {
                    method: parts.method.as_str().to_owned(),
                    path: parts.uri.path().to_owned(),
                    query,
                    headers,
                    body: body.to_bytes().to_vec(),
                };
                tokio::task::spawn_blocking(move || api::route(&state, &request))
                    .await
                    .unwrap_or_else(|e| Response::error(500, &format!("the request failed: {e}")))
            }
        }
    };
    let mut out = hyper::Response::new(Full::new(Bytes::from(response.body)));
    *out.status_mut() =
        hyper::StatusCode::from_u16(response.status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    let headers = out.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(response.content_type));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    Ok(out)
}

#[cfg(test)]
mod tests;
