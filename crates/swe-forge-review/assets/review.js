// The review page: a list filtered and paged by the server, one instance at a time with its
// per-test table and logs, an explicit decision (keep / drop / needs work, with a reason) and the
// questionnaire. Everything from the dataset is put on the page as text (never as HTML).
// The address names what is shown: #/instance/<id>?<filters>&test=<test id>; back and forward,
// a shared link or an edited address open that instance.
"use strict";

const PAGE = 100;
const QUESTIONS = ["severe_problem", "issue_clarity", "test_adequacy", "time_to_fix"];
const TIME = ["<15m", "15m-1h", "1h-4h", ">4h"];
const DIFF_LINES = 4000;
const TEST_ROWS = 300;
const FILTERS = ["q", "lang", "repo", "status", "difficulty", "decision", "review", "flag", "rejected"];
const FACET_TEXT = { keep: "keep", drop: "drop", needs_work: "needs work", none: "no quality flag" };
const VERDICT_TEXT = { keep: "keep", drop: "drop", needs_work: "needs work" };

const state = {
  meta: null,
  filters: Object.fromEntries(FILTERS.map((k) => [k, ""])),
  offset: 0,
  total: 0,
  items: [],
  index: -1,        // position of the open instance in `items`
  id: null,         // the instance shown
  pending: null,    // the instance being opened: nothing is saved until it is shown
  detail: null,     // the answer of /api/instance for the instance shown
  answers: null,
  saved: null,
  decision: null,   // the decision in force
  verdict: null,    // the verdict being written (reason row open)
  digest: null,
  hidden: 0,        // rejected instances the list leaves out
  active: 0,
  test: null,       // the test whose logs are shown
  testCursor: -1,   // keyboard position in the table
  hits: [],
  hit: -1,
};

const $ = (id) => document.getElementById(id);
function el(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === "class") e.className = v; else if (k === "text") e.textContent = v; else e.setAttribute(k, v);
  }
  for (const c of children) if (c != null) e.append(c);
  return e;
}

async function api(path, options) {
  const res = await fetch(path, options);
  const body = await res.json();
  if (!res.ok) throw new Error(body.error || res.statusText);
  return body;
}

// ---- the address ----
function parseHash() {
  let h = location.hash.slice(1);
  let path = "";
  let query = h;
  if (h.startsWith("/")) {
    const q = h.indexOf("?");
    path = q < 0 ? h : h.slice(0, q);
    query = q < 0 ? "" : h.slice(q + 1);
  }
  const p = new URLSearchParams(query);
  const m = path.match(/^\/instance\/(.+)$/);
  let id = m ? decodeURIComponent(m[1]) : p.get("id"); // `#id=` is the older form
  const filters = Object.fromEntries(FILTERS.map((k) => [k, p.get(k) || ""]));
  return { id: id || null, filters, offset: parseInt(p.get("offset") || "0", 10) || 0, test: p.get("test") };
}
function hashFor(id, test) {
  const p = new URLSearchParams();
  for (const k of FILTERS) if (state.filters[k]) p.set(k, state.filters[k]);
  if (state.offset) p.set("offset", state.offset);
  if (id && test) p.set("test", test);
  const q = p.toString();
  return (id ? "#/instance/" + encodeURIComponent(id) : "#/") + (q ? "?" + q : "");
}
function writeHash(push) {
  const h = hashFor(state.id, state.test);
  if (location.hash === h) return;
  if (push) history.pushState(null, "", h); else history.replaceState(null, "", h);
}
async function onHash() {
  const want = parseHash();
  const filtersChanged = FILTERS.some((k) => want.filters[k] !== state.filters[k]) || want.offset !== state.offset;
  if (filtersChanged) {
    state.filters = want.filters;
    state.offset = want.offset;
    syncFilterInputs();
    await loadList(want.id, want.test);
    return;
  }
  if (want.id && want.id !== state.id && want.id !== state.pending) {
    stash();
    await openById(want.id, want.test).catch((e) => showError(want.id, e));
  } else if (want.id && want.id === state.id && want.test !== state.test) {
    selectTest(want.test, false);
  }
}

// ---- meta and filters ----
async function loadMeta() {
  state.meta = await api("/api/meta");
  $("dataset").textContent = `${state.meta.dataset || ""} · ${state.meta.total} instances`;
  const decided = (state.meta.facets.decision || []).filter(([k]) => k !== "undecided").reduce((a, [, n]) => a + n, 0);
  $("progress").textContent = `${decided} decided`;
  const w = state.meta.logs && state.meta.logs.warning;
  $("logs-warning").hidden = !w;
  $("logs-warning").textContent = w ? "no run logs: see the Run logs section" : "";
  $("logs-warning").title = w || "";
  for (const sel of document.querySelectorAll("#filters select")) {
    const facet = sel.dataset.facet;
    const first = sel.options[0];
    sel.replaceChildren(first);
    for (const [value, n] of state.meta.facets[facet] || []) {
      sel.append(el("option", { value, text: `${FACET_TEXT[value] || value} (${n})` }));
    }
    if (facet === "review") {
      for (const v of ["reviewed", "unreviewed"]) sel.append(el("option", { value: v, text: `${v} (answered or decided)` }));
    }
  }
  syncFilterInputs();
}
function syncFilterInputs() {
  for (const sel of document.querySelectorAll("#filters select")) sel.value = state.filters[sel.dataset.facet];
  $("q").value = state.filters.q;
  $("f-rejected").checked = state.filters.rejected === "show";
}

function onFilterChange() {
  for (const sel of document.querySelectorAll("#filters select")) state.filters[sel.dataset.facet] = sel.value;
  state.filters.q = $("q").value.trim();
  state.filters.rejected = $("f-rejected").checked ? "show" : "";
  state.offset = 0;
  loadList(null);
}

// ---- the list ----
// One page of the list as filtered; instances validation rejected are left out unless shown.
function fetchPage(offset) {
  const p = new URLSearchParams({ offset, limit: PAGE });
  for (const [k, v] of Object.entries(state.filters)) if (v && k !== "rejected") p.set(k, v);
  if (state.filters.rejected !== "show") p.set("rejected", "hide");
  return api("/api/list?" + p.toString());
}

async function loadList(openId, test) {
  const page = await fetchPage(state.offset);
  state.total = page.total;
  state.hidden = page.hidden_rejected || 0;
  state.items = page.items;
  state.index = state.items.findIndex((it) => it.id === state.id);
  renderList();
  writeHash(false);
  if (openId !== null && openId !== undefined) {
    const i = state.items.findIndex((it) => it.id === openId);
    if (i >= 0) return open(i, false, test);
    if (openId === "first" && state.items.length) return open(0, true);
    if (openId === "last" && state.items.length) return open(state.items.length - 1, true);
    if (openId !== "first" && openId !== "last") {
      return openById(openId, test).catch((e) => showError(openId, e));
    }
  }
}
function showError(id, e) {
  state.pending = null;
  $("empty").hidden = false;
  $("detail").hidden = true;
  state.id = null;
  $("empty").textContent = `${id}: ${e.message}`;
}

function badgesOf(it) {
  const badges = [el("span", { class: `badge ${it.difficulty}`, text: it.difficulty })];
  if (it.status === "rejected") badges.push(el("span", { class: "badge rejected", text: "rejected" }));
  for (const f of it.flags || []) badges.push(el("span", { class: "badge flag", title: "quality flag", text: f }));
  if (readDraft(it.id, it.digest)) badges.push(el("span", { class: "badge draft", text: "draft" }));
  if (it.decision !== "undecided") badges.push(el("span", { class: `badge ${it.decision}`, text: VERDICT_TEXT[it.decision] }));
  else if (it.review === "answered") badges.push(el("span", { class: "badge", text: "answered" }));
  return badges;
}

function renderList() {
  const list = $("list");
  list.replaceChildren();
  state.items.forEach((it, i) => {
    const li = el("li", { "data-id": it.id },
      el("span", { class: "id", text: it.id }),
      el("span", { class: "badges" }, ...badgesOf(it)),
      el("span", { class: "title", text: `${it.lang} · ${it.status} · ${it.title}` }));
    if (it.id === state.id) li.classList.add("current");
    li.addEventListener("click", () => open(i, true));
    list.append(li);
  });
  const last = Math.min(state.offset + state.items.length, state.total);
  $("list-info").textContent = `${state.total} match` + (state.hidden ? ` · ${state.hidden} rejected hidden` : "");
  $("page-info").textContent = state.total ? `${state.offset + 1}-${last} of ${state.total}` : "nothing";
  $("prev-page").disabled = state.offset === 0;
  $("next-page").disabled = last >= state.total;
}

async function changePage(delta, openWhich) {
  const next = state.offset + delta * PAGE;
  if (next < 0 || next >= state.total) return false;
  state.offset = next;
  await loadList(openWhich);
  return true;
}

// ---- drafts: unsaved answers, kept in the browser by instance and record digest ----
const draftKey = (id, digest) => `swe-forge-draft:${id}:${digest}`;
function readDraft(id, digest) {
  try {
    const v = localStorage.getItem(draftKey(id, digest));
    return v ? JSON.parse(v) : null;
  } catch (e) {
    return null;
  }
}
// Writes the shown instance's answers as its draft when they differ from the saved ones, else
// clears the draft; the list's badge follows.
function stash() {
  if (!state.id || !state.answers) return;
  const key = draftKey(state.id, state.digest);
  const dirty = JSON.stringify(state.answers) !== JSON.stringify(answersOf(state.saved));
  let had = false;
  try {
    had = localStorage.getItem(key) !== null;
    if (dirty) localStorage.setItem(key, JSON.stringify(state.answers)); else localStorage.removeItem(key);
  } catch (e) {
    return; // storage full or refused: the answers stay on the page
  }
  if (had !== dirty) renderList();
}

// ---- one instance ----

async function open(i, push, test) {
  if (i < 0 || i >= state.items.length) return;
  stash();
  state.index = i; // a key pressed before it is shown moves on from here
  renderList();
  await openById(state.items[i].id, test || null, push);
}

let opening = 0;
async function openById(id, test, push) {
  const ticket = ++opening;
  state.pending = id;
  const at = state.items.findIndex((it) => it.id === id);
  if (at >= 0) state.index = at;
  document.body.dataset.loading = id;
  try {
    const d = await api("/api/instance?id=" + encodeURIComponent(id));
    if (ticket !== opening) return; // a later j/k or address won
    state.id = id;
    state.detail = d;
    state.digest = d.digest;
    state.saved = d.review;
    state.decision = d.decision;
    state.verdict = null;
    state.answers = { ...answersOf(d.review), ...(readDraft(id, d.digest) || {}) };
    state.active = firstUnanswered();
    state.index = state.items.findIndex((it) => it.id === id);
    state.test = null;
    state.testCursor = -1;
    renderDetail(d);
    renderAnswers();
    renderDecision();
    for (const li of document.querySelectorAll("#list li")) li.classList.toggle("current", li.dataset.id === id);
    const cur = document.querySelector("#list li.current");
    if (cur) cur.scrollIntoView({ block: "nearest" });
    if (test) selectTest(test, false); else writeHash(!!push);
  } finally {
    if (ticket === opening) {
      state.pending = null;
      delete document.body.dataset.loading;
      document.body.dataset.shown = state.id || "";
    }
  }
}

function answersOf(r) {
  if (!r) return { severe_problem: null, issue_clarity: null, test_adequacy: null, time_to_fix: null, notes: "" };
  return {
    severe_problem: r.severe_problem ? 1 : 0,
    issue_clarity: r.issue_clarity,
    test_adequacy: r.test_adequacy,
    time_to_fix: r.time_to_fix || null,
    notes: r.notes || "",
  };
}

function testLink(name) {
  const a = el("a", { href: hashFor(state.id, name), class: "test-link", "data-test": name, text: name });
  a.addEventListener("click", (e) => { e.preventDefault(); selectTest(name, true); });
  return a;
}

function renderDetail(d) {
  const r = d.record;
  const sf = r.swe_forge || {};
  $("empty").hidden = true;
  $("detail").hidden = false;
  $("d-title").textContent = `${d.id}: ${r.title || ""}`;
  const diff = sf.difficulty;
  const h = d.heuristic;
  const parts = [`${r.org}/${r.repo} #${r.number}`, r.lang || "", `validation: ${sf.status || "candidate"}`];
  if (diff) parts.push(`difficulty ${diff.label} (${diff.source})`);
  const n = (count, noun) => `${count} ${noun}${count === 1 ? "" : "s"}`;
  if (h) parts.push(`heuristic ${h.label}, score ${h.score}: ${n(h.features.fix_files, "file")}, ${n(h.features.fix_hunks, "hunk")}, ` +
    `${h.features.fix_lines_added}+/${h.features.fix_lines_removed}- lines, ${n(h.features.fixed_tests, "fixed test")}`);
  if (sf.duplicate_of) parts.push(`duplicate of ${sf.duplicate_of.of}`);
  $("d-meta").textContent = parts.filter(Boolean).join(" · ");

  // Each rejection, its tests named and linked to their logs.
  const names = new Set(d.tests.map((t) => t.name));
  const rej = $("d-rejections");
  rej.replaceChildren();
  for (const x of sf.rejections || []) {
    const li = el("li", {}, el("strong", { text: x.reason }));
    const pieces = (x.detail || "").split(", ");
    if (x.detail) li.append(": ");
    pieces.forEach((p, i) => {
      if (i) li.append(", ");
      li.append(names.has(p.trim()) ? testLink(p.trim()) : p);
    });
    rej.append(li);
  }

  renderOverview(d.overview);

  const issue = $("d-issue");
  issue.replaceChildren();
  for (const is of r.resolved_issues || []) {
    issue.append(el("h3", { text: `#${is.number} ${is.title}` }), el("pre", { class: "text", text: is.body || "(no text)" }));
  }
  issue.append(el("details", {}, el("summary", { text: "pull request text" }),
    el("pre", { class: "text", text: `${r.title}\n\n${r.body || ""}` })));

  renderTests(d);
  $("d-fix").replaceChildren(renderDiff(r.fix_patch || ""));
  $("d-test").replaceChildren(renderDiff(r.test_patch || ""));
  renderLogs(d);
  $("test-logs").hidden = true;

  const hist = $("history-list");
  hist.replaceChildren(...d.history.map((x) => el("li", {
    text: `${x.created_at} ${x.reviewer}: severe ${x.severe_problem ? "yes" : "no"}, clarity ${x.issue_clarity}, ` +
      `adequacy ${x.test_adequacy}, ${x.time_to_fix || "no time"}${x.notes ? ": " + x.notes : ""}`,
  })));
  $("decision-list").replaceChildren(...d.decisions.map((x) => el("li", {
    text: `${x.created_at} ${x.reviewer}: ${VERDICT_TEXT[x.verdict]}${x.reason ? ": " + x.reason : ""}`,
  })));
  $("main").scrollTop = 0;
  $("content").scrollTop = 0;
}

// ---- the first screen: links, warnings, evidence, quality signals (all written as text) ----
function renderOverview(o) {
  const links = $("d-links");
  links.replaceChildren();
  const warnings = $("d-warnings");
  warnings.replaceChildren();
  const ev = $("d-evidence");
  ev.replaceChildren();
  const body = $("d-signals").tBodies[0];
  body.replaceChildren();
  if (!o) return;
  const link = (x) => el("a", { href: x.url, target: "_blank", rel: "noopener noreferrer", text: x.text });
  links.append("upstream: ", link(o.links.pr));
  for (const i of o.links.issues) links.append(" · fixes ", link(i));
  for (const w of o.warnings) {
    warnings.append(el("li", { class: `warning ${w.kind}` }, el("strong", { text: w.kind }), ": " + w.text));
  }
  const e = o.evidence;
  if (e) {
    ev.append(el("strong", { class: e.complete ? "ok" : "bad", text: `gold patch resolved ${e.gold_resolved} of ${e.gold_runs}` }));
    if (e.layout.length) {
      const held = e.layout.filter((l) => l.held).length;
      const what = e.layout.map((l) => l.held ? `${l.variant} held` : `${l.variant}: ${l.detail || "did not hold"}`).join(", ");
      ev.append(" · ", el("span", { class: held === e.layout.length ? "ok" : "bad", text: `layout variants ${held} of ${e.layout.length} (${what})` }));
    } else {
      ev.append(" · ", el("span", { class: "muted", text: "no layout variant graded" }));
    }
    if (e.unstable.length) ev.append(" · ", el("span", { class: "bad", text: `${e.unstable.length} tests left out as unstable: ${e.unstable.join(", ")}` }));
    for (const c of e.controls) {
      const what = c.held ? "held" : (c.resolved ? "RESOLVED" : `passed ${c.f2p_passed.join(", ")}`);
      ev.append(" · ", el("span", { class: c.held ? "ok" : "bad", text: `control ${c.name}: ${what}` }));
    }
    if (e.network.length) ev.append(" · ", el("span", { class: "bad", text: `${e.network.length} log lines reach for the network` }));
  } else {
    ev.append(el("span", { class: "muted", text: "no evidence block: the gold patch and the controls were not run through evaluation" }));
  }
  if (!o.signals) {
    body.append(el("tr", {}, el("td", { class: "muted", colspan: "3", text: "no quality signals on this record (validate or curate computes them)" })));
    return;
  }
  for (const s of o.signals) {
    const details = el("td", { class: "details" }, s.summary || s.meaning);
    if (s.details.length) {
      const list = el("ul");
      for (const x of s.details) list.append(el("li", {}, el("code", { text: x })));
      details.append(list);
    }
    body.append(el("tr", { class: s.state.replace(" ", "_"), "data-flag": s.flag },
      el("th", { text: s.flag }), el("td", { class: "state", text: s.state }), details));
  }
}

// ---- the tests table ----
// A record of many tests comes with its first rows and the counts of all (`test_counts`); a
// filter then asks the server for the matching rows (`/api/tests`), kept in `state.served`.
function allSent(d) {
  return !d.test_counts || d.test_counts.total <= d.tests.length;
}
function renderTests(d) {
  const cats = new Map();
  if (d.test_counts) for (const [c, k] of Object.entries(d.test_counts.by_category)) cats.set(c, k);
  else for (const t of d.tests) cats.set(t.category, (cats.get(t.category) || 0) + 1);
  state.served = null;
  const sel = $("t-cat");
  const keep = sel.value;
  const total = d.test_counts ? d.test_counts.total : d.tests.length;
  sel.replaceChildren(el("option", { value: "", text: `every category (${total})` }),
    el("option", { value: ":changed", text: "changed status" }),
    el("option", { value: ":rejected", text: "named by a rejection" }),
    ...[...cats].sort().map(([c, k]) => el("option", { value: c, text: `${c} (${k})` })));
  sel.value = [...sel.options].some((o) => o.value === keep) ? keep : "";
  $("t-counts").textContent = [...cats].sort().map(([c, k]) => `${c} ${k}`).join(" · ");
  filterTests();
}
function visibleTests() {
  const d = state.detail;
  if (!d) return [];
  const q = $("t-filter").value.trim().toLowerCase();
  const cat = $("t-cat").value;
  if (!allSent(d) && (q || cat)) return state.served && state.served.key === `${q}\n${cat}` ? state.served.items : [];
  return d.tests.filter((t) => (!q || t.name.toLowerCase().includes(q)) &&
    (!cat || (cat === ":changed" ? !(t.run === t.test && t.test === t.fix) :
      cat === ":rejected" ? t.rejections.length > 0 : t.category === cat)));
}
async function fetchTests(d, q, cat) {
  const key = `${q}\n${cat}`;
  if (state.served && state.served.key === key) return;
  state.served = { key, items: [], total: 0 };
  const page = await api(`/api/tests?id=${encodeURIComponent(d.id)}&q=${encodeURIComponent(q)}&category=${encodeURIComponent(cat)}&limit=${TEST_ROWS}`);
  if (state.detail !== d || !state.served || state.served.key !== key) return;
  state.served = { key, items: page.items, total: page.total };
  filterTests();
}
function filterTests() {
  const d = state.detail;
  const q = $("t-filter").value.trim().toLowerCase();
  const cat = $("t-cat").value;
  if (d && !allSent(d) && (q || cat) && !(state.served && state.served.key === `${q}\n${cat}`)) {
    fetchTests(d, q, cat).catch((e) => { $("t-more").textContent = `the tests could not be read: ${e.message}`; });
  }
  const rows = visibleTests();
  const body = $("t-table").tBodies[0];
  body.replaceChildren();
  const fmt = (v) => (v == null ? "-" : `${Math.round(v * 100)}%`);
  rows.slice(0, TEST_ROWS).forEach((t, i) => {
    const tr = el("tr", { "data-test": t.name },
      el("td", {}, testLink(t.name), ...t.rejections.map((r) => el("span", { class: "badge rejected", text: r }))),
      el("td", { class: `st-${t.run}`, text: t.run }),
      el("td", { class: `st-${t.test}`, text: t.test }),
      el("td", { class: `st-${t.fix}`, text: t.fix }),
      el("td", { class: `cat-${t.category}`, text: t.category }),
      el("td", { text: t.flaky ? `${fmt(t.flaky.run)} / ${fmt(t.flaky.test)} / ${fmt(t.flaky.fix)}` : "" }));
    if (t.rejections.length) tr.classList.add("named");
    if (t.name === state.test || i === state.testCursor) tr.classList.add("selected");
    body.append(tr);
  });
  const served = d && !allSent(d) && (q || cat) ? state.served : null;
  const matching = served ? served.total : d && !allSent(d) ? d.test_counts.total : rows.length;
  $("t-more").textContent = matching > Math.min(rows.length, TEST_ROWS) ? `${matching - Math.min(rows.length, TEST_ROWS)} more tests: filter to see them` :
    rows.length ? "" : (state.detail && state.detail.tests.length ? "no test matches" : "no test results in this record");
}
function moveTestCursor(delta) {
  const rows = visibleTests().slice(0, TEST_ROWS);
  if (!rows.length) return;
  state.testCursor = Math.max(0, Math.min(rows.length - 1, state.testCursor + delta));
  filterTests();
  const tr = $("t-table").tBodies[0].rows[state.testCursor];
  if (tr) tr.scrollIntoView({ block: "nearest" });
}
function nextNotableTest() {
  const d = state.detail;
  if (!d) return;
  const notable = d.tests.filter((t) => t.rejections.length || !(t.run === t.test && t.test === t.fix));
  if (!notable.length) return;
  const i = notable.findIndex((t) => t.name === state.test);
  selectTest(notable[(i + 1) % notable.length].name, true);
}

// The logs of one test: its sections in each phase, then the full logs with its lines marked.
function selectTest(name, scroll) {
  const d = state.detail;
  if (!d || !name) return;
  state.test = name;
  writeHash(false);
  filterTests();
  $("tl-name").textContent = name;
  const body = $("tl-body");
  body.replaceChildren();
  let any = false;
  for (const phase of ["run", "test", "fix"]) {
    const log = d.logs[phase];
    const t = d.tests.find((x) => x.name === name) || (state.served && state.served.items.find((x) => x.name === name));
    const status = t ? t[phase] : "";
    const label = { run: "base run", test: "test run", fix: "fix run" }[phase];
    if (!log) { body.append(el("div", { class: "section-head", text: `${label} (${phase}.log): ${status}; no log` })); continue; }
    const ranges = log.sections[name] || [];
    const lines = log.text.split("\n");
    body.append(el("div", { class: "section-head", text: `${label} (${phase}.log): ${status}` +
      (ranges.length ? `, lines ${ranges.map(([a, b]) => (b - a > 1 ? `${a + 1}-${b}` : `${a + 1}`)).join(", ")}` : ": no line names this test") }));
    if (!ranges.length) continue;
    any = true;
    const pre = el("pre", { class: "log section", "data-phase": phase });
    for (const [a, b] of ranges) {
      for (let i = a; i < b; i++) pre.append(el("span", { class: "line", text: lines[i] }));
      if (b < lines.length) pre.append(el("span", { class: "line", text: "…" }));
    }
    const jump = el("a", { href: "#", text: `show in ${phase}.log` });
    jump.addEventListener("click", (e) => { e.preventDefault(); jumpToLine(phase, ranges[0][0]); });
    body.append(pre, jump);
  }
  if (!any && Object.values(d.logs).every((l) => l == null)) body.append(el("p", { class: "warning", text: noLogsText(d) }));
  $("test-logs").hidden = false;
  for (const phase of ["run", "test", "fix"]) markSelected(phase);
  if (scroll) $("test-logs").scrollIntoView({ block: "start" });
}
function markSelected(phase) {
  const pre = document.querySelector(`#d-logs pre[data-phase=${phase}]`);
  const log = state.detail.logs[phase];
  if (!pre || !log) return;
  for (const l of pre.querySelectorAll(".line.sel")) l.classList.remove("sel");
  for (const [a, b] of log.sections[state.test] || []) {
    for (let i = a; i < b; i++) if (pre.children[i]) pre.children[i].classList.add("sel");
  }
}
function jumpToLine(phase, line) {
  const det = document.querySelector(`#d-logs details[data-phase=${phase}]`);
  if (det) det.open = true;
  const pre = document.querySelector(`#d-logs pre[data-phase=${phase}]`);
  const target = pre && pre.children[line];
  if (target) { target.scrollIntoView({ block: "center" }); }
}

// ---- the logs ----
function noLogsText(d) {
  const w = state.meta.logs;
  const where = d.log_paths && d.log_paths.fix ? ` (looked for ${d.log_paths.fix})` : "";
  return (w && w.warning ? w.warning : "this instance has no run logs in the work folder") + where;
}
function renderLogs(d) {
  const logs = $("d-logs");
  logs.replaceChildren();
  if (["run", "test", "fix"].every((p) => d.logs[p] == null)) logs.append(el("p", { class: "warning", text: noLogsText(d) }));
  for (const phase of ["run", "test", "fix"]) {
    const log = d.logs[phase];
    const det = el("details", { "data-phase": phase },
      el("summary", { text: `${phase}.log${log == null ? " (not available)" : log.format === "go-json" ? " (go test -json, decoded)" : ""}` }));
    if (log) {
      const pre = el("pre", { class: "log", "data-phase": phase });
      const frag = document.createDocumentFragment();
      for (const line of log.text.split("\n")) frag.append(el("span", { class: "line", text: line }));
      pre.append(frag);
      det.append(pre);
      if (log.raw != null) {
        const raw = el("details", {}, el("summary", { text: "as written (JSON lines)" }), el("pre", { class: "log", text: log.raw }));
        det.append(raw);
      }
    }
    det.open = phase === "fix" && log != null;
    logs.append(det);
  }
  searchLogs();
}
function searchLogs() {
  const q = $("log-search").value.toLowerCase();
  state.hits = [];
  state.hit = -1;
  for (const l of document.querySelectorAll("#d-logs pre.log .line.hit")) l.classList.remove("hit", "current");
  if (q.length >= 2) {
    for (const l of document.querySelectorAll("#d-logs pre.log[data-phase] .line")) {
      if (l.textContent.toLowerCase().includes(q)) { l.classList.add("hit"); state.hits.push(l); }
    }
  }
  $("log-hits").textContent = q.length >= 2 ? `${state.hits.length} matching lines` : "";
}
function nextHit() {
  if (!state.hits.length) return;
  if (state.hit >= 0) state.hits[state.hit].classList.remove("current");
  state.hit = (state.hit + 1) % state.hits.length;
  const l = state.hits[state.hit];
  l.classList.add("current");
  const det = l.closest("details");
  if (det) det.open = true;
  l.scrollIntoView({ block: "center" });
  $("log-hits").textContent = `${state.hit + 1} of ${state.hits.length} matching lines`;
}

function renderDiff(text) {
  const pre = el("pre", { class: "diff" });
  const lines = text.split("\n");
  const frag = document.createDocumentFragment();
  const shown = lines.slice(0, DIFF_LINES);
  for (const line of shown) {
    let cls = "";
    if (line.startsWith("diff --git")) cls = "file";
    else if (line.startsWith("@@")) cls = "hunk";
    else if (line.startsWith("+") && !line.startsWith("+++")) cls = "add";
    else if (line.startsWith("-") && !line.startsWith("---")) cls = "del";
    frag.append(cls ? el("span", { class: cls, text: line }) : line + "\n");
  }
  pre.append(frag);
  if (lines.length > DIFF_LINES) {
    const more = el("button", { text: `show all ${lines.length} lines` });
    more.addEventListener("click", () => pre.replaceWith(renderAll(text)));
    return el("div", {}, pre, more);
  }
  if (!text) pre.textContent = "(empty)";
  return pre;
}
function renderAll(text) {
  const pre = el("pre", { class: "diff" });
  pre.textContent = text;
  return pre;
}

// ---- the decision ----
function renderDecision() {
  const d = state.decision;
  const sf = (state.detail && state.detail.record.swe_forge) || {};
  for (const b of document.querySelectorAll("#verdicts button")) {
    b.classList.toggle("chosen", !!d && d.verdict === b.dataset.verdict);
    b.classList.toggle("pending", state.verdict === b.dataset.verdict);
  }
  $("decision-state").replaceChildren(d ? el("span", { class: `badge ${d.verdict}`, text: VERDICT_TEXT[d.verdict] }) : "· undecided");
  const st = $("decision-status");
  if (d) { st.textContent = `${VERDICT_TEXT[d.verdict]} by ${d.reviewer} at ${d.created_at}${d.reason ? ": " + d.reason : ""}`; st.className = "saved"; }
  else { st.textContent = "no decision yet"; st.className = ""; }
  const note = $("validation-note");
  const status = sf.status || "candidate";
  note.hidden = status === "accepted";
  note.textContent = status === "rejected"
    ? `Validation rejected this instance (${(sf.rejections || []).map((x) => x.reason).join(", ")}): it stays out of the dataset whatever you decide.`
    : `Not validated (${status}): only instances validation accepted are published.`;
}

function startDecision(verdict) {
  if (!state.id || state.pending) return;
  state.verdict = verdict;
  $("reason-row").hidden = false;
  const r = $("reason");
  r.value = state.decision && state.decision.verdict === verdict ? state.decision.reason : "";
  r.placeholder = verdict === "keep" ? "reason (optional; Enter saves, Esc cancels)" : "reason (needed; Enter saves, Esc cancels)";
  renderDecision();
  r.focus();
}
function cancelDecision() {
  state.verdict = null;
  $("reason-row").hidden = true;
  renderDecision();
}

async function saveDecision() {
  const st = $("decision-status");
  if (!state.id || !state.verdict) return;
  if (state.pending) { st.textContent = `not saved: ${state.pending} is still opening`; st.className = "error"; return; }
  const reason = $("reason").value.trim();
  if (state.verdict !== "keep" && !reason) {
    st.textContent = `a ${VERDICT_TEXT[state.verdict]} decision needs a reason`;
    st.className = "error";
    $("reason").focus();
    return;
  }
  const id = state.id;
  const body = { id, record_digest: state.digest, reviewer: $("reviewer").value.trim(), verdict: state.verdict, reason };
  try {
    const res = await api("/api/decision", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    if (state.id !== id) return;
    state.decision = res.decision;
    state.detail.decisions.push(res.decision);
    state.verdict = null;
    $("reason-row").hidden = true;
    $("reason").blur();
    const it = state.items.find((x) => x.id === id);
    if (it) it.decision = res.decision.verdict;
    renderList();
    renderDecision();
    $("decision-list").append(el("li", { text: `${res.decision.created_at} ${res.decision.reviewer}: ${VERDICT_TEXT[res.decision.verdict]}${res.decision.reason ? ": " + res.decision.reason : ""}` }));
    loadMeta().catch(() => {});
    if ($("advance").checked) await nextUndecided();
  } catch (e) {
    st.textContent = "not saved: " + e.message;
    st.className = "error";
  }
}

// ---- the questionnaire ----
function firstUnanswered() {
  const i = QUESTIONS.findIndex((q) => state.answers[q] === null);
  return i < 0 ? 0 : i;
}

function renderAnswers() {
  document.querySelectorAll(".question").forEach((div, i) => {
    const q = div.dataset.q;
    div.classList.toggle("active", i === state.active);
    for (const b of div.querySelectorAll("button")) {
      const v = q === "time_to_fix" ? b.dataset.v : parseInt(b.dataset.v, 10);
      b.classList.toggle("chosen", state.answers[q] === v);
    }
  });
  if (document.activeElement !== $("notes")) $("notes").value = state.answers.notes;
  const dirty = JSON.stringify(state.answers) !== JSON.stringify(answersOf(state.saved));
  stash();
  const st = $("save-status");
  const rule = (s) => `the keep rule would ${s.keep ? "keep" : "drop"} it`;
  if (dirty) { st.textContent = "unsaved"; st.className = "unsaved"; }
  else if (state.saved) {
    st.textContent = `saved by ${state.saved.reviewer} at ${state.saved.created_at} (${rule(state.saved)})`;
    st.className = "saved";
  } else { st.textContent = "not answered"; st.className = ""; }
  $("q-state").textContent = state.saved ? `· answered (${rule(state.saved)})` : "";
  const short = { severe_problem: "severe", issue_clarity: "clarity", test_adequacy: "tests", time_to_fix: "time" };
  $("q-answers").textContent = QUESTIONS.map((q) => `${short[q] || q}: ${state.answers[q] ?? "–"}`).join(" · ");
}

function answer(q, v) {
  state.answers[q] = v;
  const i = QUESTIONS.indexOf(q);
  if (i >= 0 && i < QUESTIONS.length - 1) state.active = i + 1;
  renderAnswers();
}

function answerKey(digit) {
  if (!state.answers) return;
  const q = QUESTIONS[state.active];
  if (q === "severe_problem" && digit <= 1) return answer(q, digit);
  if ((q === "issue_clarity" || q === "test_adequacy") && digit <= 3) return answer(q, digit);
  if (q === "time_to_fix" && digit >= 1 && digit <= 4) return answer(q, TIME[digit - 1]);
}

async function save() {
  if (!state.id) return;
  const a = state.answers;
  const st = $("save-status");
  if (state.pending) { st.textContent = `not saved: ${state.pending} is still opening`; st.className = "error"; return; }
  if (a.severe_problem === null || a.issue_clarity === null || a.test_adequacy === null) {
    state.active = firstUnanswered();
    renderAnswers();
    st.textContent = "answer the severe problem, clarity and adequacy questions first";
    st.className = "error";
    return;
  }
  const id = state.id;
  const body = {
    id,
    record_digest: state.digest,
    reviewer: $("reviewer").value.trim(),
    severe_problem: a.severe_problem === 1,
    issue_clarity: a.issue_clarity,
    test_adequacy: a.test_adequacy,
    time_to_fix: a.time_to_fix,
    notes: a.notes,
  };
  try {
    const res = await api("/api/review", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    if (state.id !== id) return;
    state.saved = res.review;
    const it = state.items.find((x) => x.id === id);
    if (it) it.review = "answered";
    renderList();
    renderAnswers();
    loadMeta().catch(() => {});
  } catch (e) {
    st.textContent = "not saved: " + e.message;
    st.className = "error";
  }
}

// ---- navigation ----
async function step(delta) {
  if (!state.items.length) return;
  if (state.index < 0 || state.items[state.index]?.id !== (state.pending || state.id)) {
    return open(delta > 0 ? 0 : state.items.length - 1, true);
  }
  const i = state.index + delta;
  if (i >= 0 && i < state.items.length) return open(i, true);
  stash();
  await changePage(delta, delta > 0 ? "first" : "last");
}

// The next undecided instance of the list as filtered (rejected ones only when shown): after the
// one shown on this page, then on the pages after it, then from the first page.
async function nextUndecided() {
  const undecided = (it) => it.decision === "undecided" && it.id !== state.id;
  for (let i = state.index + 1; i < state.items.length; i++) {
    if (undecided(state.items[i])) return open(i, true);
  }
  const pages = Math.ceil(state.total / PAGE);
  const here = Math.floor(state.offset / PAGE);
  for (let k = 1; k <= pages; k++) {
    const page = (here + k) % pages;
    const items = page === here ? state.items : (await fetchPage(page * PAGE)).items;
    const found = items.find(undecided);
    if (!found) continue;
    if (page !== here) {
      state.offset = page * PAGE;
      await loadList(null);
    }
    return open(state.items.findIndex((it) => it.id === found.id), true);
  }
  $("list-info").textContent = `${state.total} match · no undecided instance left`;
}

function onKey(e) {
  const t = e.target;
  const typing = (t instanceof HTMLInputElement && t.type !== "checkbox") || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement;
  if (typing) {
    if (t === $("reason")) {
      if (e.key === "Enter") { e.preventDefault(); saveDecision(); }
      else if (e.key === "Escape") { cancelDecision(); t.blur(); }
      return;
    }
    if (t === $("t-filter")) {
      if (e.key === "ArrowDown" || e.key === "ArrowUp") { e.preventDefault(); moveTestCursor(e.key === "ArrowDown" ? 1 : -1); return; }
      if (e.key === "Enter") {
        e.preventDefault();
        const row = visibleTests()[Math.max(0, state.testCursor)];
        if (row) selectTest(row.name, true);
        return;
      }
    }
    if (t === $("log-search") && e.key === "Enter") { e.preventDefault(); nextHit(); return; }
    if (e.key === "Escape") t.blur();
    if (t === $("notes") && e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); save(); }
    return;
  }
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const k = e.key;
  if (k === "j") step(1);
  else if (k === "k") step(-1);
  else if (k === "u") nextUndecided();
  else if (k === "a") startDecision("keep");
  else if (k === "d") startDecision("drop");
  else if (k === "w") startDecision("needs_work");
  else if (k === "s") save();
  else if (k >= "0" && k <= "9") answerKey(parseInt(k, 10));
  else if (k === "]") { state.active = Math.min(QUESTIONS.length - 1, state.active + 1); renderAnswers(); }
  else if (k === "[") { state.active = Math.max(0, state.active - 1); renderAnswers(); }
  else if (k === "n") { $("notes").focus(); }
  else if (k === "t") { $("t-filter").focus(); $("tests-section").scrollIntoView({ block: "start" }); }
  else if (k === "f") { nextNotableTest(); }
  else if (k === "l") { $("log-search").focus(); $("logs-section").scrollIntoView({ block: "start" }); }
  else if (k === "/") { $("q").focus(); }
  else if (k === "?") { $("help").hidden = !$("help").hidden; }
  else if (k === "Escape") { $("help").hidden = true; }
  else return;
  e.preventDefault();
}

async function init() {
  const want = parseHash();
  state.filters = want.filters;
  state.offset = want.offset;
  $("reviewer").value = localStorage.getItem("swe-forge-reviewer") || "";
  await loadMeta();
  if (!$("reviewer").value) $("reviewer").value = state.meta.reviewer || "";
  $("reviewer").addEventListener("change", () => localStorage.setItem("swe-forge-reviewer", $("reviewer").value.trim()));
  for (const sel of document.querySelectorAll("#filters select")) sel.addEventListener("change", onFilterChange);
  $("f-rejected").addEventListener("change", onFilterChange);
  $("advance").checked = localStorage.getItem("swe-forge-advance") === "1";
  $("advance").addEventListener("change", () => localStorage.setItem("swe-forge-advance", $("advance").checked ? "1" : "0"));
  let timer = null;
  $("q").addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(onFilterChange, 200); });
  $("filters").addEventListener("submit", (e) => { e.preventDefault(); onFilterChange(); });
  $("prev-page").addEventListener("click", () => changePage(-1, null));
  $("next-page").addEventListener("click", () => changePage(1, null));
  $("save").addEventListener("click", save);
  $("q-all").addEventListener("click", () => {
    const open = $("questionnaire").classList.toggle("expanded");
    $("q-all").setAttribute("aria-expanded", String(open));
    $("q-all").textContent = open ? "active question only" : "all questions";
  });
  $("save-decision").addEventListener("click", saveDecision);
  for (const b of document.querySelectorAll("#verdicts button")) b.addEventListener("click", () => startDecision(b.dataset.verdict));
  $("help-button").addEventListener("click", () => { $("help").hidden = !$("help").hidden; });
  $("notes").addEventListener("input", () => { if (state.answers) { state.answers.notes = $("notes").value; renderAnswers(); } });
  $("t-filter").addEventListener("input", () => { state.testCursor = -1; filterTests(); });
  $("t-cat").addEventListener("change", () => { state.testCursor = -1; filterTests(); });
  let searchTimer = null;
  $("log-search").addEventListener("input", () => { clearTimeout(searchTimer); searchTimer = setTimeout(searchLogs, 150); });
  document.querySelectorAll(".question").forEach((div, i) => {
    div.addEventListener("click", () => { state.active = i; renderAnswers(); });
    for (const b of div.querySelectorAll("button")) {
      b.addEventListener("click", (e) => {
        e.stopPropagation();
        if (!state.answers) return;
        const q = div.dataset.q;
        answer(q, q === "time_to_fix" ? b.dataset.v : parseInt(b.dataset.v, 10));
      });
    }
  });
  document.addEventListener("keydown", onKey);
  window.addEventListener("popstate", () => { onHash().catch(() => {}); });
  window.addEventListener("hashchange", () => { onHash().catch(() => {}); });
  await loadList(want.id, want.test);
  document.body.dataset.ready = "1";
}

init().catch((e) => {
  document.body.dataset.ready = "error";
  $("empty").textContent = "error: " + e.message;
});
