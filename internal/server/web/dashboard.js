// The corral dashboard: polls the API with the token kept in this
// browser's local storage (or given once as #token=... in the address).
"use strict";

// log: the shown job's log as fetched so far: its attempt, and the
// offset where the next fetch starts (only what is new is fetched).
const state = { token: "", detail: "", log: { job: "", attempt: "", offset: 0, text: "" } };

// logTail is the lines of a log the detail shows when first opened.
const logTail = 2000;

function init() {
  const m = /token=([^&]+)/.exec(location.hash);
  if (m) {
    localStorage.setItem("corral-token", decodeURIComponent(m[1]));
    history.replaceState(null, "", location.pathname);
  }
  state.token = localStorage.getItem("corral-token") || "";
  document.getElementById("login").addEventListener("submit", (e) => {
    e.preventDefault();
    state.token = document.getElementById("token").value.trim();
    localStorage.setItem("corral-token", state.token);
    refresh();
  });
  document.getElementById("detail-close").addEventListener("click", () => {
    state.detail = "";
    document.getElementById("detail").hidden = true;
  });
  refresh();
  setInterval(refresh, 2000);
}

async function api(path, text) {
  const resp = await fetch(path, { headers: { Authorization: "Bearer " + state.token } });
  if (resp.status === 401) {
    throw new Error("unauthorized");
  }
  if (!resp.ok) {
    let msg = resp.statusText;
    try { msg = (await resp.json()).error; } catch (_) { /* not JSON */ }
    throw new Error(msg);
  }
  return text ? resp.text() : resp.json();
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "onclick") { e.addEventListener("click", v); } else { e.setAttribute(k, v); }
  }
  for (const c of children) {
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

async function refresh() {
  const status = document.getElementById("status");
  const login = document.getElementById("login");
  if (!state.token) {
    login.hidden = false;
    status.textContent = "paste a token to see the machine";
    return;
  }
  try {
    const [who, gpus, jobs, acct] = await Promise.all([
      api("/v1/whoami"),
      api("/v1/gpus"),
      api("/v1/jobs?state=pending&state=preempted&state=running"),
      api("/v1/acct"),
    ]);
    login.hidden = true;
    document.getElementById("who").textContent = who.tenant + (who.admin ? " (admin)" : "");
    renderGPUs(gpus.gpus);
    renderQueue(jobs.jobs);
    renderUsage(gpus.gpus, jobs.jobs, acct.sums);
    if (state.detail) { await renderDetail(state.detail); }
    status.textContent = "updated " + new Date().toLocaleTimeString();
  } catch (err) {
    if (err.message === "unauthorized") {
      login.hidden = false;
      status.textContent = "the token was refused";
    } else {
      status.textContent = "error: " + err.message;
    }
  }
}

function renderGPUs(gpus) {
  const grid = document.getElementById("gpus");
  grid.replaceChildren(...gpus.map((g) => {
    const used = Math.min(g.used, 1);
    const cls = "gpu" + (g.jobs && g.jobs.length ? " busy" : "") + (g.healthy ? "" : " unhealthy");
    const slices = (g.jobs || []).map((u) => el("span", u.other ? { class: "slice other" } : {
      class: "slice", title: u.tenant + ", rank " + u.rank, onclick: () => showDetail(u.job),
    }, (u.other ? "another tenant's job" : u.job + "/" + u.rank) + (u.mig ? " " + u.mig : (u.share < 1 ? " " + u.share : ""))));
    return el("div", { class: cls, "data-gpu": g.index },
      el("div", { class: "title" }, el("span", {}, "GPU " + g.index), el("span", { class: "muted" }, g.model + (g.mig ? " MIG" : ""))),
      el("div", { class: "bar" }, el("div", { style: "width:" + Math.round(used * 100) + "%" })),
      el("div", { class: "slices" }, ...(slices.length ? slices : [el("span", { class: "muted" }, g.healthy ? "free" : "unhealthy")])));
  }));
}

function demand(r) {
  if (r.gpus) { return String(r.gpus); }
  if (r.mig) { return "mig " + r.mig; }
  if (r.share) { return "share " + r.share; }
  return "0";
}

function renderQueue(jobs) {
  const body = document.querySelector("#queue tbody");
  body.replaceChildren(...jobs.map((j) => el("tr", { "data-job": j.id, onclick: () => showDetail(j.id) },
    el("td", {}, j.id), el("td", {}, j.request.name || "-"), el("td", {}, j.tenant),
    el("td", { class: "state-" + j.state }, j.state), el("td", {}, j.request.priority || 0),
    el("td", {}, j.request.tasks || 1), el("td", {}, demand(j.request)), el("td", {}, j.reason || ""))));
  if (!jobs.length) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: 8, class: "muted" }, "no jobs wait or run")));
  }
}

function renderUsage(gpus, jobs, sums) {
  const rows = {};
  const row = (t) => rows[t] || (rows[t] = { now: 0, waiting: 0, runs: 0, seconds: 0 });
  for (const g of gpus) { for (const u of g.jobs || []) { row(u.other ? "other tenants" : u.tenant).now += u.share; } }
  for (const j of jobs) { if (j.state !== "running") { row(j.tenant).waiting++; } }
  for (const s of sums || []) { row(s.tenant).runs += s.jobs; row(s.tenant).seconds += s.gpu_seconds; }
  const body = document.querySelector("#usage tbody");
  body.replaceChildren(...Object.keys(rows).sort().map((t) => el("tr", {},
    el("td", {}, t), el("td", {}, rows[t].now.toFixed(2)), el("td", {}, rows[t].waiting),
    el("td", {}, rows[t].runs), el("td", {}, (rows[t].seconds / 3600).toFixed(4)))));
}

function showDetail(id) {
  state.detail = id;
  renderDetail(id).catch((err) => { document.getElementById("status").textContent = "error: " + err.message; });
}

async function renderDetail(id) {
  const j = await api("/v1/jobs/" + encodeURIComponent(id));
  const ex = await api("/v1/jobs/" + encodeURIComponent(id) + "/explain");
  let log = "(no output yet)";
  if (j.attempts > 0) {
    try { log = await fetchLog(id); } catch (_) { /* not started */ }
  }
  document.getElementById("detail").hidden = false;
  document.getElementById("detail-id").textContent = j.id;
  const fields = [["tenant", j.tenant], ["state", j.state + (j.reason ? " (" + j.reason + ")" : "")],
    ["command", (j.request.command || []).join(" ")], ["GPUs", (j.tasks || []).map((t) => (t.gpus || []).join(",")).join(" | ") || "-"],
    ["attempts", j.attempts], ["submitted", j.submitted], ["exit code", j.exit_code === undefined ? "-" : j.exit_code]];
  document.getElementById("detail-fields").replaceChildren(...fields.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
  document.getElementById("detail-explain").textContent = [ex.summary, ...(ex.reasons || [])].join("\n");
  document.getElementById("detail-log").textContent = log || "(empty)";
}

// fetchLog returns the job's log: its last logTail lines when first
// shown or when a new attempt began, then only what was appended since.
async function fetchLog(id) {
  const l = state.log;
  const fresh = l.job !== id;
  const query = fresh ? "?tail=" + logTail : "?offset=" + l.offset;
  const resp = await fetch("/v1/jobs/" + encodeURIComponent(id) + "/logs" + query,
    { headers: { Authorization: "Bearer " + state.token } });
  if (!resp.ok) {
    throw new Error(resp.statusText);
  }
  const attempt = resp.headers.get("X-Log-Attempt") || "";
  if (!fresh && attempt !== l.attempt) { // a new attempt: a new log
    state.log = { job: "", attempt: "", offset: 0, text: "" };
    return fetchLog(id);
  }
  const text = await resp.text();
  if (!fresh && state.log.offset !== l.offset) { // another fetch appended this already
    return state.log.text;
  }
  state.log = { job: id, attempt, offset: Number(resp.headers.get("X-Log-Offset")) || 0,
    text: fresh ? text : l.text + text };
  return state.log.text;
}

init();
