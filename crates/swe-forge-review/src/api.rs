//! The routes of the review page: its assets, the list and facets, one instance with its per-test
//! table, logs (cut into per-test sections) and review history, saving a review (the
//! questionnaire) and saving a decision (keep, drop, needs work, with a reason). Requests from other origins are refused: the `Host` header
//! must name the loopback address the server listens on (against DNS rebinding) and a POST must be
//! JSON from the page's own origin. Records go onto the page as JSON, never as HTML.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use swe_forge_core::{Instance, TimeToFix, Verdict};
use swe_forge_curate::{Heuristic, KeepRule, heuristic_label};
use swe_forge_store::{DecisionRow, ReviewRow, Store};

use crate::index::{Entry, Index, Stamp, digest, read_range};
use crate::rows::review_from_row;

const PAGE_HTML: &str = include_str!("../assets/review.html");
const PAGE_JS: &str = include_str!("../assets/review.js");
const PAGE_CSS: &str = include_str!("../assets/review.css");

/// Logs longer than this are cut: their head and tail are sent with a marker between.
const LOG_CAP: usize = 512 * 1024;
const LOG_HEAD: usize = 64 * 1024;
/// Largest page of the list.
const PAGE_CAP: usize = 500;
/// Rows of the tests table sent with an instance, at most; the others come from `/api/tests`.
pub(crate) const TESTS_SENT: usize = 2_000;

/// What every request sees.
pub(crate) struct State {
    pub dataset: PathBuf,
    pub work_dir: Option<PathBuf>,
    /// How `work_dir` was chosen: `given` (`--work-dir`), `found` (next to the dataset), `none`.
    pub work_dir_origin: &'static str,
    /// The dataset's index; read again when the file changes (`State::current`).
    pub index: Mutex<Arc<Index>>,
    pub store: Mutex<Store>,
    pub latest: Mutex<BTreeMap<String, ReviewRow>>,
    pub decisions: Mutex<BTreeMap<String, DecisionRow>>,
    pub reviewer: String,
    pub rule: KeepRule,
    pub heuristic: Heuristic,
    pub port: u16,
}

impl State {
    /// The index of the dataset as the file is now: read again when its stamp changed.
    pub fn current(&self) -> Result<Arc<Index>, Response> {
        self.reindexed(false)
    }

    fn reindexed(&self, force: bool) -> Result<Arc<Index>, Response> {
        let mut index = self.index.lock().unwrap_or_else(|e| e.into_inner());
        let stamp = Stamp::of(&self.dataset).map_err(|e| {
            Response::error(503, &format!("the dataset {} cannot be read: {e}", self.dataset.display()))
        })?;
        if force || stamp != index.stamp {
            let again = Index::read(&self.dataset, &self.heuristic)
                .map_err(|e| Response::error(503, &format!("the dataset changed and cannot be read again yet: {e}")))?;
            tracing::info!("{} changed: {} instances now", self.dataset.display(), again.entries.len());
            *index = Arc::new(again);
        }
        Ok(Arc::clone(&index))
    }

    /// The line of `id` as the file holds it now, with the index it was found by: its bytes have
    /// the digest of the index's entry. A dataset changed under the index is read again first.
    fn record(&self, id: &str) -> Result<(Arc<Index>, Vec<u8>), Response> {
        for attempt in 0..3 {
            let index = self.reindexed(attempt > 0)?;
            let Some(e) = index.get(id) else { return Err(Response::error(404, "no such instance")) };
            if let Ok(raw) = read_range(&self.dataset, e.offset, e.len)
                && digest(&raw) == e.digest
            {
                return Ok((index, raw));
            }
        }
        Err(Response::error(
            409,
            &format!("{} is being rewritten: the record of {id} keeps moving; try again", self.dataset.display()),
        ))
    }
}

/// A request, as the routes see it.
pub(crate) struct Request {
    pub method: String,
    pub path: String,
    pub query: BTreeMap<String, String>,
    /// Header names lowercased.
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

/// What a route answers.
pub(crate) struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Response {
    fn json(status: u16, v: &Value) -> Response {
        Response { status, content_type: "application/json; charset=utf-8", body: v.to_string().into_bytes() }
    }

    pub fn error(status: u16, message: &str) -> Response {
        Response::json(status, &json!({ "error": message }))
    }

    fn asset(content_type: &'static str, text: &str) -> Response {
        Response { status: 200, content_type, body: text.as_bytes().to_vec() }
    }
}

pub(crate) fn route(state: &State, req: &Request) -> Response {
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
        ("GET", "/api/tests") => tests(state, &req.query),
        ("POST", "/api/review" | "/api/decision") => {
            let same_origin = req.headers.get("origin").is_none_or(|o| {
                o == &format!("http://127.0.0.1:{}", state.port) || o == &format!("http://localhost:{}", state.port)
            });
            let is_json = req.headers.get("content-type").is_some_and(|c| c.starts_with("application/json"));
            if !same_origin || !is_json {
                return Response::error(403, "reviews are accepted from the review page only");
            }
            if req.path == "/api/decision" { decide(state, &req.body) } else { save(state, &req.body) }
        }
        (
            _,
            "/" | "/app.js" | "/app.css" | "/api/meta" | "/api/list" | "/api/instance" | "/api/tests" | "/api/review"
            | "/api/decision",
        ) => Response::error(405, "method not allowed"),
        _ => Response::error(404, "not found"),
    }
}

/// Whether the questionnaire was answered.
fn review_state(r: Option<&ReviewRow>) -> &'static str {
    if r.is_some() { "answered" } else { "unanswered" }
}

/// The decision in force: the explicit one, else `undecided` (the questionnaire's keep rule is
/// shown beside it, never as a decision).
fn decision_state(d: Option<&DecisionRow>) -> &str {
    d.map_or("undecided", |d| d.verdict.as_str())
}

fn decision_json(d: &DecisionRow) -> Value {
    json!({ "verdict": d.verdict, "reason": d.reason, "reviewer": d.reviewer, "created_at": d.created_at })
}

/// How many instances have a log folder under the work folder.
pub(crate) fn with_logs(state: &State, index: &Index) -> usize {
    let Some(w) = &state.work_dir else { return 0 };
    index.entries.iter().filter(|e| safe_id(&e.id) && w.join("logs").join(&e.id).is_dir()).count()
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
        "keep": review_from_row(r, rule).keep,
    })
}

fn meta(state: &State) -> Response {
    let index = match state.current() {
        Ok(index) => index,
        Err(response) => return response,
    };
    let latest = state.latest.lock().unwrap_or_else(|e| e.into_inner());
    let decisions = state.decisions.lock().unwrap_or_else(|e| e.into_inner());
    let mut facets: BTreeMap<&str, BTreeMap<&str, u64>> = BTreeMap::new();
    for e in &index.entries {
        *facets.entry("lang").or_default().entry(&e.lang).or_default() += 1;
        *facets.entry("repo").or_default().entry(&e.repo).or_default() += 1;
        *facets.entry("status").or_default().entry(e.status).or_default() += 1;
        *facets.entry("difficulty").or_default().entry(e.difficulty).or_default() += 1;
        *facets.entry("decision").or_default().entry(decision_state(decisions.get(&e.id))).or_default() += 1;
        *facets.entry("review").or_default().entry(review_state(latest.get(&e.id))).or_default() += 1;
        let flag = facets.entry("flag").or_default();
        if e.flags.is_empty() {
            *flag.entry(NO_FLAG).or_default() += 1;
        }
        for f in &e.flags {
            *flag.entry(f).or_default() += 1;
        }
    }
    let found = with_logs(state, &index);
    let logs = json!({
        "work_dir": state.work_dir.as_ref().map(|w| w.display().to_string()),
        "origin": state.work_dir_origin,
        "instances_with_logs": found,
        "warning": (found == 0).then(|| match &state.work_dir {
            Some(w) => format!(
                "no run logs found: {} has no logs/<instance_id>/ folder for any instance of this dataset; \
                 give the folder validate wrote with --work-dir",
                w.display()
            ),
            None => "no run logs found: no work folder next to the dataset holds logs/ (validate writes them to \
                     <out>.work/logs/, or to the pipeline's [validate] work_dir); give it with --work-dir"
                .to_owned(),
        }),
    });
    let facets: BTreeMap<&str, Vec<(&str, u64)>> =
        facets.into_iter().map(|(k, v)| (k, v.into_iter().collect())).collect();
    Response::json(
        200,
        &json!({
            "dataset": state.dataset.file_name().map(|n| n.to_string_lossy().into_owned()),
            "total": index.entries.len(),
            "reviewer": state.reviewer,
            "keep_rule": state.rule,
            "time_to_fix": TimeToFix::ALL.iter().map(|t| t.as_str()).collect::<Vec<_>>(),
            "verdicts": Verdict::ALL.iter().map(|v| v.as_str()).collect::<Vec<_>>(),
            "facets": facets,
            "logs": logs,
        }),
    )
}

/// The `flag` facet's value for an instance no quality flag was raised on.
const NO_FLAG: &str = "none";

/// Whether the list shows an entry: `rejected=hide` leaves out what validation rejected, unless
/// a validation status is asked for.
fn shown(e: &Entry, rejected: Option<&str>, status: Option<&str>) -> bool {
    rejected != Some("hide") || status.is_some() || e.status != "rejected"
}

fn list(state: &State, q: &BTreeMap<String, String>) -> Response {
    let latest = state.latest.lock().unwrap_or_else(|e| e.into_inner());
    let decisions = state.decisions.lock().unwrap_or_else(|e| e.into_inner());
    let want = |key: &str| q.get(key).map(String::as_str).filter(|v| !v.is_empty());
    let text = want("q").map(str::to_lowercase);
    let offset: usize = want("offset").and_then(|v| v.parse().ok()).unwrap_or(0);
    let limit: usize = want("limit").and_then(|v| v.parse().ok()).unwrap_or(100).clamp(1, PAGE_CAP);
    let index = match state.current() {
        Ok(index) => index,
        Err(response) => return response,
    };
    let (mut total, mut hidden) = (0usize, 0usize);
    let mut items = Vec::new();
    for e in &index.entries {
        let review = latest.get(&e.id);
        let rstate = review_state(review);
        let decision = decisions.get(&e.id);
        let dstate = decision_state(decision);
        let keep = want("flag").is_none_or(|v| if v == NO_FLAG { e.flags.is_empty() } else { e.flags.contains(&v) })
            && want("lang").is_none_or(|v| v == e.lang)
            && want("repo").is_none_or(|v| v == e.repo)
            && want("status").is_none_or(|v| v == e.status)
            && want("difficulty").is_none_or(|v| v == e.difficulty)
            && want("review").is_none_or(|v| {
                v == rstate
                    || (v == "reviewed" && (review.is_some() || decision.is_some()))
                    || (v == "unreviewed" && review.is_none() && decision.is_none())
            })
            && want("decision").is_none_or(|v| v == dstate)
            && text.as_deref().is_none_or(|t| e.id.to_lowercase().contains(t) || e.title.to_lowercase().contains(t));
        if !keep {
            continue;
        }
        if !shown(e, want("rejected"), want("status")) {
            hidden += 1;
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
                "flags": e.flags,
                "digest": e.digest,
                "fix_lines": e.fix_lines,
                "fixed_tests": e.fixed_tests,
                "review": rstate,
                "decision": dstate,
                "keep_rule": review.map(|r| review_from_row(r, &state.rule).keep),
                "reviewer": decision.map(|d| d.reviewer.as_str()).or(review.map(|r| r.reviewer.as_str())),
            }));
        }
        total += 1;
    }
    Response::json(
        200,
        &json!({ "total": total, "hidden_rejected": hidden, "offset": offset, "limit": limit, "items": items }),
    )
}

fn instance(state: &State, id: &str) -> Response {
    let (index, raw) = match state.record(id) {
        Ok(found) => found,
        Err(response) => return response,
    };
    let digest = index.get(id).map(|e| e.digest.clone());
    // Without its per-test lists: the table stands for them (a record may list a million tests).
    let record = match crate::table::slim_record(&raw) {
        Ok(v) => v,
        Err(err) => return Response::error(500, &format!("the record of {id} is not JSON: {err}")),
    };
    let inst: Option<Instance> = serde_json::from_slice(&raw).ok();
    drop(raw);
    let heuristic = inst.as_ref().map(|inst| {
        let (features, score, label) = heuristic_label(inst, &state.heuristic);
        json!({ "label": label, "score": (score * 100.0).round() / 100.0, "features": features })
    });
    let overview = inst.as_ref().map(crate::overview::overview);
    let rows = inst.as_ref().map(crate::table::rows).unwrap_or_default();
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    let mut logs = serde_json::Map::new();
    let mut log_paths = serde_json::Map::new();
    for phase in swe_forge_core::Phase::ALL {
        let path = state
            .work_dir
            .as_ref()
            .filter(|_| safe_id(id))
            .map(|w| swe_forge_core::RunLogs::new(w, id).log(phase.as_str()));
        let text = path.as_deref().and_then(read_log);
        logs.insert(phase.as_str().into(), text.map_or(Value::Null, |t| crate::logs::view(t, &names).to_json()));
        log_paths.insert(phase.as_str().into(), path.map_or(Value::Null, |p| Value::String(p.display().to_string())));
    }
    let decisions = state.store.lock().unwrap_or_else(|e| e.into_inner()).decision_history(id);
    let decisions = match decisions {
        Ok(d) => d,
        Err(err) => return Response::error(500, &err.to_string()),
    };
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
            "digest": digest,
            "record": record,
            "heuristic": heuristic,
            "overview": overview,
            "tests": rows.iter().take(TESTS_SENT).map(crate::table::Row::to_json).collect::<Vec<_>>(),
            "test_counts": crate::table::counts(&rows),
            "logs": logs,
            "log_paths": log_paths,
            "review": latest.map(|r| review_json(&state.rule, r)),
            "decision": decisions.last().map(decision_json),
            "decisions": decisions.iter().map(decision_json).collect::<Vec<_>>(),
            "history": history.iter().map(|r| review_json(&state.rule, r)).collect::<Vec<_>>(),
        }),
    )
}

/// A page of an instance's tests table: `q` in the name, `category` (or `:changed`,
/// `:rejected`), `limit` rows (at most [`TESTS_SENT`]) from `offset` on.
fn tests(state: &State, q: &BTreeMap<String, String>) -> Response {
    let get = |key: &str| q.get(key).map(String::as_str).unwrap_or_default();
    let id = get("id");
    let raw = match state.record(id) {
        Ok((_, raw)) => raw,
        Err(response) => return response,
    };
    let inst: Instance = match serde_json::from_slice(&raw) {
        Ok(inst) => inst,
        Err(err) => return Response::error(500, &format!("the record of {id} cannot be read: {err}")),
    };
    drop(raw);
    let rows = crate::table::rows(&inst);
    let offset = get("offset").parse().unwrap_or(0);
    let limit = get("limit").parse().unwrap_or(TESTS_SENT).clamp(1, TESTS_SENT);
    Response::json(200, &crate::table::page(&rows, get("q"), get("category"), offset, limit))
}

fn safe_id(id: &str) -> bool {
    swe_forge_core::path_component_problem(id).is_none() && !id.starts_with('.')
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
    let Some(reviewed) = v.get("record_digest").and_then(Value::as_str) else {
        return Response::error(
            400,
            "record_digest (the digest of the record reviewed, from /api/instance) is required",
        );
    };
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
    let reviewer = reviewer_of(state, &v);
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
    if let Err(response) = unchanged(state, id, reviewed, "review it") {
        return response;
    }
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

/// Who saves: the `reviewer` of the request (trimmed, at most 100 characters), else the server's.
fn reviewer_of(state: &State, v: &Value) -> String {
    v.get("reviewer")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .unwrap_or(&state.reviewer)
        .chars()
        .take(100)
        .collect()
}

/// Checked last, on the file as it is now: a review or decision is saved only against the record
/// it is about (`digest`, from `/api/instance`); a 409 naming what to `redo` otherwise.
fn unchanged(state: &State, id: &str, digest: &str, redo: &str) -> Result<(), Response> {
    let name = state.dataset.display();
    let index = match state.record(id) {
        Ok((index, _)) => index,
        Err(response) if response.status == 404 => {
            let message =
                format!("{id} is no longer in {name}: the dataset changed since the page showed it; nothing was saved");
            return Err(Response::error(409, &message));
        }
        Err(response) => return Err(response),
    };
    if index.get(id).is_none_or(|e| e.digest != digest) {
        let message = format!(
            "the record of {id} changed in {name} since the page showed it: reload it and {redo} again; nothing was saved"
        );
        return Err(Response::error(409, &message));
    }
    Ok(())
}

fn decide(state: &State, body: &[u8]) -> Response {
    let v: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => return Response::error(400, &format!("not JSON: {e}")),
    };
    let id = v.get("id").and_then(Value::as_str).unwrap_or_default();
    let Some(reviewed) = v.get("record_digest").and_then(Value::as_str) else {
        return Response::error(
            400,
            "record_digest (the digest of the record decided on, from /api/instance) is required",
        );
    };
    let Some(verdict) = v.get("verdict").and_then(Value::as_str).and_then(Verdict::parse) else {
        return Response::error(400, "verdict must be keep, drop or needs_work");
    };
    let reason: String =
        v.get("reason").and_then(Value::as_str).unwrap_or_default().trim().chars().take(2_000).collect();
    if verdict != Verdict::Keep && reason.is_empty() {
        return Response::error(400, &format!("a {} decision needs a reason", verdict.as_str()));
    }
    let reviewer = reviewer_of(state, &v);
    if let Err(response) = unchanged(state, id, reviewed, "decide") {
        return response;
    }
    let row = DecisionRow {
        instance_id: id.to_owned(),
        reviewer,
        verdict: verdict.as_str().to_owned(),
        reason,
        created_at: String::new(),
    };
    let saved = state.store.lock().unwrap_or_else(|e| e.into_inner()).save_decision(&row);
    match saved {
        Ok(saved) => {
            let out = decision_json(&saved);
            state.decisions.lock().unwrap_or_else(|e| e.into_inner()).insert(saved.instance_id.clone(), saved);
            Response::json(200, &json!({ "decision": out }))
        }
        Err(e) => Response::error(500, &e.to_string()),
    }
}
