// The review page: a list filtered and paged by the server, one instance at a time, and the
// questionnaire. Everything from the dataset is put on the page as text (never as HTML).
"use strict";

const PAGE = 100;
const QUESTIONS = ["severe_problem", "issue_clarity", "test_adequacy", "time_to_fix"];
const TIME = ["<15m", "15m-1h", "1h-4h", ">4h"];
const DIFF_LINES = 4000;

const state = {
  meta: null,
  filters: { q: "", lang: "", repo: "", status: "", difficulty: "", review: "" },
  offset: 0,
  total: 0,
  items: [],
  index: -1,        // position of the open instance in `items`
  id: null,
  answers: null,    // answers shown in the form
  saved: null,      // the latest saved review of the open instance
  digest: null,     // the digest of the open record: a save names it, and the server refuses it when the record changed
  drafts: new Map(),
  active: 0,        // highlighted question
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

// ---- URL hash: filters, page and open instance survive a reload ----
function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  for (const k of Object.keys(state.filters)) state.filters[k] = p.get(k) || "";
  state.offset = parseInt(p.get("offset") || "0", 10) || 0;
  return p.get("id");
}
function writeHash() {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(state.filters)) if (v) p.set(k, v);
  if (state.offset) p.set("offset", state.offset);
  if (state.id) p.set("id", state.id);
  history.replaceState(null, "", "#" + p.toString());
}

// ---- meta and filters ----
async function loadMeta() {
  state.meta = await api("/api/meta");
  $("dataset").textContent = `${state.meta.dataset || ""} · ${state.meta.total} instances`;
  const review = state.meta.facets.review || [];
  const done = review.filter(([k]) => k !== "unreviewed").reduce((a, [, n]) => a + n, 0);
  $("progress").textContent = `${done} reviewed`;
  for (const sel of document.querySelectorAll("#filters select")) {
    const facet = sel.dataset.facet;
    const first = sel.options[0];
    sel.replaceChildren(first);
    for (const [value, n] of state.meta.facets[facet] || []) {
      sel.append(el("option", { value, text: `${value} (${n})` }));
    }
    if (facet === "review" && !(state.meta.facets.review || []).some(([k]) => k === "reviewed")) {
      sel.append(el("option", { value: "reviewed", text: "reviewed" }));
    }
    sel.value = state.filters[facet];
  }
  $("q").value = state.filters.q;
}

function onFilterChange() {
  for (const sel of document.querySelectorAll("#filters select")) state.filters[sel.dataset.facet] = sel.value;
  state.filters.q = $("q").value.trim();
  state.offset = 0;
  loadList(null);
}

// ---- the list ----
async function loadList(openId) {
  const p = new URLSearchParams({ offset: state.offset, limit: PAGE });
  for (const [k, v] of Object.entries(state.filters)) if (v) p.set(k, v);
  const page = await api("/api/list?" + p.toString());
  state.total = page.total;
  state.items = page.items;
  state.index = state.items.findIndex((it) => it.id === state.id);
  renderList();
  writeHash();
  if (openId !== null && openId !== undefined) {
    const i = state.items.findIndex((it) => it.id === openId);
    if (i >= 0) return open(i);
    if (openId === "first" && state.items.length) return open(0);
    if (openId === "last" && state.items.length) return open(state.items.length - 1);
    if (openId !== "first" && openId !== "last") {
      return openById(openId).catch((e) => { $("empty").textContent = `${openId}: ${e.message}`; });
    }
  }
}

function renderList() {
  const list = $("list");
  list.replaceChildren();
  state.items.forEach((it, i) => {
    const badges = [el("span", { class: `badge ${it.difficulty}`, text: it.difficulty })];
    if (state.drafts.has(it.id)) badges.push(el("span", { class: "badge draft", text: "draft" }));
    if (it.review !== "unreviewed") badges.push(el("span", { class: `badge ${it.review}`, text: it.review }));
    const li = el("li", { "data-id": it.id },
      el("span", { class: "id", text: it.id }),
      el("span", {}, ...badges),
      el("span", { class: "title", text: `${it.lang} · ${it.status} · ${it.title}` }));
    if (it.id === state.id) li.classList.add("current");
    li.addEventListener("click", () => open(i));
    list.append(li);
  });
  const last = Math.min(state.offset + state.items.length, state.total);
  $("list-info").textContent = `${state.total} match`;
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

// ---- one instance ----
function stash() {
  if (state.id && state.answers && JSON.stringify(state.answers) !== JSON.stringify(answersOf(state.saved))) {
    state.drafts.set(state.id, { ...state.answers });
  } else if (state.id) {
    state.drafts.delete(state.id);
  }
}

async function open(i) {
  if (i < 0 || i >= state.items.length) return;
  stash();
  renderList();
  await openById(state.items[i].id);
}

let opening = 0;
async function openById(id) {
  const ticket = ++opening;
  const d = await api("/api/instance?id=" + encodeURIComponent(id));
  if (ticket !== opening) return; // a later j/k won
  state.id = id;
  state.digest = d.digest;
  state.saved = d.review;
  state.answers = state.drafts.get(id) || answersOf(d.review);
  state.active = firstUnanswered();
  state.index = state.items.findIndex((it) => it.id === id);
  renderDetail(d);
  renderAnswers();
  for (const li of document.querySelectorAll("#list li")) li.classList.toggle("current", li.dataset.id === id);
  const cur = document.querySelector("#list li.current");
  if (cur) cur.scrollIntoView({ block: "nearest" });
  writeHash();
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

function renderDetail(d) {
  const r = d.record;
  const sf = r.swe_forge || {};
  $("empty").hidden = true;
  $("detail").hidden = false;
  $("d-title").textContent = `${d.id}: ${r.title || ""}`;
  const diff = sf.difficulty;
  const h = d.heuristic;
  const parts = [`${r.org}/${r.repo} #${r.number}`, r.lang || "", sf.status || "candidate"];
  if (diff) parts.push(`difficulty ${diff.label} (${diff.source})`);
  const n = (count, noun) => `${count} ${noun}${count === 1 ? "" : "s"}`;
  if (h) parts.push(`heuristic ${h.label}, score ${h.score}: ${n(h.features.fix_files, "file")}, ${n(h.features.fix_hunks, "hunk")}, ` +
    `${h.features.fix_lines_added}+/${h.features.fix_lines_removed}- lines, ${n(h.features.fixed_tests, "fixed test")}`);
  if (sf.duplicate_of) parts.push(`duplicate of ${sf.duplicate_of.of}`);
  if (sf.rejections && sf.rejections.length) parts.push("rejected: " + sf.rejections.map((x) => x.reason).join(", "));
  $("d-meta").textContent = parts.filter(Boolean).join(" · ");

  const issue = $("d-issue");
  issue.replaceChildren();
  for (const is of r.resolved_issues || []) {
    issue.append(el("h3", { text: `#${is.number} ${is.title}` }), el("pre", { class: "text", text: is.body || "(no text)" }));
  }
  issue.append(el("details", {}, el("summary", { text: "pull request text" }),
    el("pre", { class: "text", text: `${r.title}\n\n${r.body || ""}` })));

  const tests = $("d-tests");
  tests.replaceChildren();
  const f2p = Object.keys(r.f2p_tests || {}).concat(Object.keys(r.s2p_tests || {}), Object.keys(r.n2p_tests || {}));
  const lists = [["FAIL_TO_PASS", f2p, true], ["PASS_TO_PASS", Object.keys(r.p2p_tests || {}), false],
    ["flaky", Object.keys(sf.flaky || {}), true]];
  for (const [name, names, openByDefault] of lists) {
    const det = el("details", { class: "tests" }, el("summary", { text: `${name} (${names.length})` }),
      el("ul", {}, ...names.slice(0, 2000).map((n) => el("li", { text: n }))));
    det.open = openByDefault && names.length > 0 && names.length <= 50;
    tests.append(det);
  }

  $("d-fix").replaceChildren(renderDiff(r.fix_patch || ""));
  $("d-test").replaceChildren(renderDiff(r.test_patch || ""));

  const logs = $("d-logs");
  logs.replaceChildren();
  for (const phase of ["run", "test", "fix"]) {
    const text = d.logs[phase];
    logs.append(el("details", {}, el("summary", { text: `${phase}.log${text == null ? " (not available)" : ""}` }),
      text == null ? null : el("pre", { text })));
  }

  const hist = $("history-list");
  hist.replaceChildren(...d.history.map((x) => el("li", {
    text: `${x.created_at} ${x.reviewer}: severe ${x.severe_problem ? "yes" : "no"}, clarity ${x.issue_clarity}, ` +
      `adequacy ${x.test_adequacy}, ${x.time_to_fix || "no time"}${x.keep ? " (kept)" : " (dropped)"}${x.notes ? ": " + x.notes : ""}`,
  })));
  $("main").scrollTop = 0;
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
  const st = $("save-status");
  if (dirty) { st.textContent = "unsaved"; st.className = "unsaved"; }
  else if (state.saved) {
    st.textContent = `saved by ${state.saved.reviewer} at ${state.saved.created_at} (${state.saved.keep ? "kept" : "dropped"})`;
    st.className = "saved";
  } else { st.textContent = "not reviewed"; st.className = ""; }
  $("q-state").textContent = state.saved ? (state.saved.keep ? "· kept" : "· dropped") : "";
}

function answer(q, v) {
  state.answers[q] = v;
  const i = QUESTIONS.indexOf(q);
  if (i >= 0 && i < QUESTIONS.length - 1) state.active = i + 1;
  renderAnswers();
}

function answerKey(digit) {
  const q = QUESTIONS[state.active];
  if (q === "severe_problem" && digit <= 1) return answer(q, digit);
  if ((q === "issue_clarity" || q === "test_adequacy") && digit <= 3) return answer(q, digit);
  if (q === "time_to_fix" && digit >= 1 && digit <= 4) return answer(q, TIME[digit - 1]);
}

async function save() {
  if (!state.id) return;
  const a = state.answers;
  const st = $("save-status");
  if (a.severe_problem === null || a.issue_clarity === null || a.test_adequacy === null) {
    state.active = firstUnanswered();
    renderAnswers();
    st.textContent = "answer the severe problem, clarity and adequacy questions first";
    st.className = "error";
    return;
  }
  const body = {
    id: state.id,
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
    state.saved = res.review;
    state.drafts.delete(state.id);
    const it = state.items[state.index];
    if (it && it.id === state.id) { it.review = res.review.keep ? "kept" : "dropped"; }
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
  if (state.index < 0 || state.items[state.index]?.id !== state.id) {
    return open(delta > 0 ? 0 : state.items.length - 1);
  }
  const i = state.index + delta;
  if (i >= 0 && i < state.items.length) return open(i);
  stash();
  await changePage(delta, delta > 0 ? "first" : "last");
}

async function nextUnreviewed() {
  for (let i = state.index + 1; i < state.items.length; i++) {
    if (state.items[i].review === "unreviewed") return open(i);
  }
  if (await changePage(1, null)) {
    const i = state.items.findIndex((it) => it.review === "unreviewed");
    if (i >= 0) return open(i);
  }
}

function onKey(e) {
  const t = e.target;
  const typing = t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement;
  if (typing) {
    if (e.key === "Escape") t.blur();
    if (t === $("notes") && e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); save(); }
    return;
  }
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const k = e.key;
  if (k === "j") step(1);
  else if (k === "k") step(-1);
  else if (k === "u") nextUnreviewed();
  else if (k === "s") save();
  else if (k >= "0" && k <= "9") answerKey(parseInt(k, 10));
  else if (k === "]") { state.active = Math.min(QUESTIONS.length - 1, state.active + 1); renderAnswers(); }
  else if (k === "[") { state.active = Math.max(0, state.active - 1); renderAnswers(); }
  else if (k === "n") { $("notes").focus(); }
  else if (k === "/") { $("q").focus(); }
  else if (k === "?") { $("help").hidden = !$("help").hidden; }
  else if (k === "Escape") { $("help").hidden = true; }
  else return;
  e.preventDefault();
}

async function init() {
  const openId = readHash();
  $("reviewer").value = localStorage.getItem("swe-forge-reviewer") || "";
  await loadMeta();
  if (!$("reviewer").value) $("reviewer").value = state.meta.reviewer || "";
  $("reviewer").addEventListener("change", () => localStorage.setItem("swe-forge-reviewer", $("reviewer").value.trim()));
  for (const sel of document.querySelectorAll("#filters select")) sel.addEventListener("change", onFilterChange);
  let timer = null;
  $("q").addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(onFilterChange, 200); });
  $("filters").addEventListener("submit", (e) => { e.preventDefault(); onFilterChange(); });
  $("prev-page").addEventListener("click", () => changePage(-1, null));
  $("next-page").addEventListener("click", () => changePage(1, null));
  $("save").addEventListener("click", save);
  $("help-button").addEventListener("click", () => { $("help").hidden = !$("help").hidden; });
  $("notes").addEventListener("input", () => { if (state.answers) { state.answers.notes = $("notes").value; renderAnswers(); } });
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
  await loadList(openId);
  document.body.dataset.ready = "1";
}

init().catch((e) => {
  document.body.dataset.ready = "error";
  $("empty").textContent = "error: " + e.message;
});
