// Magnetar console: plain JavaScript, no build step, no network beyond this service.
// Every request goes to the service's HTTP API with the token of the token field
// (sessionStorage: this tab only) as "Authorization: Bearer"; errors show Pulsar's reason.
"use strict";

const TOKEN_KEY = "magnetar.token";
const $ = (id) => document.getElementById(id);
const enc = encodeURIComponent;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value !== undefined && value !== null) node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child !== undefined && child !== null) {
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }
  return node;
}

function showError(text) {
  $("error").textContent = text;
  $("error").hidden = !text;
}

function showNotice(text) {
  $("notice").textContent = text;
  $("notice").hidden = !text;
}

class ApiError extends Error {
  constructor(status, code, message) {
    super(`${status} ${code}: ${message}`);
    this.status = status;
  }
}

// One API call; resolves to the parsed JSON (or text, or the Response for raw), rejects
// with an ApiError carrying the status, Pulsar's error name and its reason text.
async function api(method, path, { raw = false, accept = null } = {}) {
  const headers = {};
  if (accept) headers.Accept = accept;
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(path, { method, headers });
  if (!response.ok) {
    const text = await response.text();
    let code = response.statusText || "Error";
    let message = text;
    try {
      const body = JSON.parse(text);
      code = body.error || code;
      message = body.message || body.reason || text;
    } catch (_) { /* not JSON: the text is the reason */ }
    throw new ApiError(response.status, code, message);
  }
  if (raw) return response;
  const text = await response.text();
  if (!text) return null;
  try { return JSON.parse(text); } catch (_) { return text; }
}

function topicPath(topic) {
  // persistent://tenant/ns/name -> persistent/tenant/ns/name (each segment encoded)
  const [domain, rest] = topic.split("://");
  return [domain, ...rest.split("/")].map(enc).join("/");
}

const number = (value, digits = 0) =>
  Number(value || 0).toLocaleString("en-US", { maximumFractionDigits: digits });

// ---------------------------------------------------------------- tree
async function loadTenants() {
  const list = $("tenants");
  list.replaceChildren();
  try {
    const tenants = await api("GET", "/admin/v2/tenants");
    for (const tenant of tenants) {
      const namespaces = el("ul");
      list.append(el("li", {}, el("strong", {}, tenant), namespaces));
      api("GET", `/admin/v2/namespaces/${enc(tenant)}`).then((names) => {
        for (const name of names) {
          namespaces.append(el("li", {}, el("a", { href: `#/ns/${name}` }, name.split("/")[1])));
        }
      }).catch((error) => namespaces.append(el("li", { class: "muted" }, error.message)));
    }
  } catch (error) {
    list.append(el("li", { class: "muted" }, `tenants: ${error.message}`));
  }
}

// ---------------------------------------------------------------- namespace view
const STATS_AT_ONCE = 6;  // stats requests in flight while a namespace's rows fill in

function topicRow(topic) {
  const cells = ["subs", "backlog", "in", "out", "consumers"].map((name) =>
    el("td", { class: `num ${name}` }, "…"));
  const row = el("tr", { "data-topic": topic },
    el("td", {}, el("a", { href: `#/topic/${topicPath(topic)}` }, topic.split("/").pop())),
    ...cells);
  return { row, cells };
}

function fillRow(cells, stats) {
  const subs = stats ? Object.values(stats.subscriptions || {}) : [];
  const backlog = subs.reduce((sum, s) => sum + (s.msgBacklog || 0), 0);
  const consumers = subs.reduce((sum, s) => sum + (s.consumers || []).length, 0);
  const values = stats
    ? [subs.length, number(backlog), number(stats.msgRateIn, 2), number(stats.msgRateOut, 2), consumers]
    : ["?", "?", "?", "?", "?"];
  cells.forEach((cell, i) => { cell.textContent = values[i]; });
}

// The table shows at once with every topic; each row's stats come after, STATS_AT_ONCE
// requests at a time (a namespace of hundreds of topics is not one long wait).
async function fillRows(pending) {
  const next = async () => {
    for (let item = pending.shift(); item; item = pending.shift()) {
      let stats = null;
      try { stats = await api("GET", `/admin/v2/${topicPath(item.topic)}/stats`); } catch (_) { /* "?" */ }
      fillRow(item.cells, stats);
    }
  };
  await Promise.all(Array.from({ length: STATS_AT_ONCE }, next));
}

async function showNamespace(namespace) {
  const view = $("view");
  const [tenant, ns] = namespace.split("/");
  const topics = await api("GET", `/admin/v2/persistent/${enc(tenant)}/${enc(ns)}`);
  const rows = topics.map((topic) => ({ topic, ...topicRow(topic) }));
  const name = el("input", { id: "new-topic", placeholder: "topic name", required: "" });
  const create = el("form", { class: "actions", onsubmit: async (event) => {
    event.preventDefault();
    await act(`created topic ${name.value}`, () =>
      api("PUT", `/admin/v2/persistent/${enc(tenant)}/${enc(ns)}/${enc(name.value)}`));
  } }, name, el("button", { type: "submit" }, "Create topic"));
  view.replaceChildren(
    el("h2", {}, `Namespace ${namespace}`),
    el("table", { id: "topics" },
      el("tr", {}, el("th", {}, "Topic"), el("th", { class: "num" }, "Subscriptions"),
        el("th", { class: "num" }, "Backlog"), el("th", { class: "num" }, "In msg/s"),
        el("th", { class: "num" }, "Out msg/s"), el("th", { class: "num" }, "Consumers")),
      rows.length ? rows.map((r) => r.row)
        : el("tr", {}, el("td", { colspan: 6, class: "muted" }, "no topics"))),
    create);
  await fillRows(rows.slice());
}

// ---------------------------------------------------------------- topic view
async function showTopic(path) {
  const view = $("view");
  const [domain, tenant, ns, ...rest] = path.split("/").map(decodeURIComponent);
  const topic = `${domain}://${tenant}/${ns}/${rest.join("/")}`;
  const base = `/admin/v2/${topicPath(topic)}`;
  const stats = await api("GET", `${base}/stats`);
  const subs = Object.entries(stats.subscriptions || {}).sort();
  const peekOut = el("div", { id: "peek" });
  const subRows = subs.map(([name, sub]) => {
    const when = el("input", { type: "datetime-local", step: "1", "aria-label": `reset ${name} to` });
    const subBase = `${base}/subscription/${enc(name)}`;
    return el("tr", { "data-subscription": name },
      el("td", {}, name),
      el("td", {}, sub.type || ""),
      el("td", { class: "num backlog" }, number(sub.msgBacklog)),
      el("td", { class: "num" }, number(sub.msgRateOut, 2)),
      el("td", { class: "num" }, (sub.consumers || []).length),
      el("td", { class: "actions" },
        el("button", { class: "clear-backlog", onclick: () => act(`cleared the backlog of ${name}`,
          () => api("POST", `${subBase}/skip_all`)) }, "Clear backlog"),
        el("button", { class: "peek", onclick: () => peek(subBase, peekOut) }, "Peek"),
        when,
        el("button", { class: "reset-cursor", onclick: () => {
          const at = Date.parse(when.value);
          if (Number.isNaN(at)) { showError("Pick the time to reset the cursor to"); return; }
          act(`reset ${name} to ${new Date(at).toISOString()}`,
            () => api("POST", `${subBase}/resetcursor/${at}`));
        } }, "Reset cursor")));
  });
  const rates = el("canvas", { id: "chart-rates", width: 560, height: 180 });
  const backlog = el("canvas", { id: "chart-backlog", width: 560, height: 180 });
  const scope = el("p", { class: "muted", id: "chart-scope" });
  view.replaceChildren(
    el("h2", {}, topic),
    el("table", { id: "topic-stats" },
      el("tr", {}, ...["In msg/s", "Out msg/s", "In bytes/s", "Storage bytes", "Backlog bytes", "Producers"]
        .map((h) => el("th", { class: "num" }, h))),
      el("tr", {}, ...[number(stats.msgRateIn, 2), number(stats.msgRateOut, 2),
        number(stats.msgThroughputIn, 0), number(stats.storageSize), number(stats.backlogSize),
        (stats.publishers || []).length].map((v) => el("td", { class: "num" }, v)))),
    el("h2", {}, "Subscriptions"),
    el("table", { id: "subscriptions" },
      el("tr", {}, el("th", {}, "Name"), el("th", {}, "Type"), el("th", { class: "num" }, "Backlog"),
        el("th", { class: "num" }, "Out msg/s"), el("th", { class: "num" }, "Consumers"), el("th", {}, "Actions")),
      subRows.length ? subRows : el("tr", {}, el("td", { colspan: 6, class: "muted" }, "no subscriptions"))),
    peekOut,
    el("h2", {}, "Last hour"),
    el("div", { class: "charts" },
      el("figure", { class: "chart" }, el("figcaption", {}, "Rates (msg/s): in, out"), rates),
      el("figure", { class: "chart" }, el("figcaption", {}, "Backlog (messages)"), backlog)),
    scope);
  try {
    const history = await api("GET", `/console/api/history/${topicPath(topic)}`);
    const start = history.startMs;
    const end = history.endMs;
    drawChart(rates, [history.series.msgRateIn || [], history.series.msgRateOut || []], start, end);
    drawChart(backlog, [history.series.msgBacklog || []], start, end);
    scope.textContent = history.scope === "namespace"
      ? `Rates of the whole namespace ${tenant}/${ns} (CloudWatch keeps no per-topic series), one point a minute.`
      : "One point a minute; the backlog's last point is now.";
  } catch (error) {
    scope.textContent = `history: ${error.message}`;
  }
}

async function peek(subBase, out) {
  try {
    // the decoded shape: a batch entry's messages one by one, never the entry's bytes
    const entry = await api("GET", `${subBase}/position/1`, { accept: "application/json" });
    const lines = entry.messages.map((m) => {
      const index = entry.batched ? `[${m.batchIndex}] ` : "";
      const key = m.key === undefined ? "" : `key=${m.key} `;
      const body = m.text === undefined ? `(base64) ${m.payload}` : m.text;
      return `${index}${key}${body}`;
    });
    const title = entry.encrypted ? `Message ${entry.messageId} (encrypted)` : `Message ${entry.messageId}`;
    out.replaceChildren(el("h2", {}, title), el("pre", { class: "peek" }, lines.join("\n").slice(0, 4000)));
  } catch (error) {
    showError(`peek: ${error.message}`);
  }
}

// Run an action, show its outcome, then redraw the view (the new state from the API).
async function act(done, call) {
  showError("");
  try {
    await call();
    showNotice(`Done: ${done}`);
  } catch (error) {
    showNotice("");
    showError(error.message);
    return;
  }
  await route();
}

// ---------------------------------------------------------------- charts
const COLORS = ["#2456c8", "#d9822b"];

// Lines of `series` (each [[epoch ms, value], ...]) over [start, end] on `canvas`.
function drawChart(canvas, series, start, end) {
  const ctx = canvas.getContext("2d");
  const w = canvas.width;
  const h = canvas.height;
  const pad = { left: 48, right: 10, top: 10, bottom: 22 };
  ctx.clearRect(0, 0, w, h);
  const values = series.flat().map((p) => p[1]);
  const top = Math.max(1, ...values) * 1.1;
  const x = (t) => pad.left + ((t - start) / Math.max(1, end - start)) * (w - pad.left - pad.right);
  const y = (v) => h - pad.bottom - (v / top) * (h - pad.top - pad.bottom);
  ctx.strokeStyle = "#c9ced8";
  ctx.fillStyle = "#6b7385";
  ctx.font = "11px sans-serif";
  ctx.beginPath();
  ctx.moveTo(pad.left, pad.top);
  ctx.lineTo(pad.left, h - pad.bottom);
  ctx.lineTo(w - pad.right, h - pad.bottom);
  ctx.stroke();
  ctx.fillText(number(top, 2), 2, pad.top + 8);
  ctx.fillText("0", 2, h - pad.bottom);
  ctx.fillText("-60 min", pad.left, h - 6);
  ctx.fillText("now", w - pad.right - 22, h - 6);
  series.forEach((points, index) => {
    ctx.strokeStyle = COLORS[index % COLORS.length];
    ctx.fillStyle = COLORS[index % COLORS.length];
    ctx.lineWidth = 2;
    ctx.beginPath();
    points.forEach(([t, v], i) => (i ? ctx.lineTo(x(t), y(v)) : ctx.moveTo(x(t), y(v))));
    ctx.stroke();
    for (const [t, v] of points) ctx.fillRect(x(t) - 2, y(v) - 2, 4, 4);
  });
  canvas.dataset.points = String(series.reduce((sum, s) => sum + s.length, 0));
}

// ---------------------------------------------------------------- routing
async function route() {
  const hash = decodeURI(location.hash.slice(1) || "/");
  try {
    if (hash.startsWith("/ns/")) await showNamespace(hash.slice(4));
    else if (hash.startsWith("/topic/")) await showTopic(location.hash.slice(8));
    document.body.dataset.loaded = hash;
  } catch (error) {
    $("view").replaceChildren(el("h2", {}, "Not shown"), el("p", { class: "denied" }, error.message));
    showError(error.message);
    document.body.dataset.loaded = hash;
  }
}

function init() {
  $("token").value = sessionStorage.getItem(TOKEN_KEY) || "";
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, $("token").value.trim());
    showError("");
    loadTenants();
    route();
  });
  $("forget").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    $("token").value = "";
  });
  $("goto-namespace").addEventListener("submit", (event) => {
    event.preventDefault();
    location.hash = `#/ns/${$("namespace-name").value.trim()}`;
  });
  window.addEventListener("hashchange", () => { showError(""); showNotice(""); route(); });
  loadTenants();
  route();
}

init();
