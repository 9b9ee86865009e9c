// The dashboard's single-page app: routes in the URL hash (#/runs, #/run/<id>,
// #/compare/<id>,<id>,..., #/sweep/<name>), each page read from the JSON API of tracker/API.md
// and refreshed every few seconds while one of its runs is running. Text from the API reaches the
// page only through textContent (el() below): run names and params may hold anything.
// Hooks for the browser tests and the benchmark: window.nmtCharts (chart id -> Dygraph),
// window.nmtLoaded (the hash of the page once its first fetches and drawing are done) and
// window.nmtRenderMs (how long those took), window.nmtLoadedAt (performance.now() then: since the
// navigation began).
"use strict";

(function (nmt) {
  const POLL_MS = 5000;
  const KEY_METRICS = ["train/loss", "valid/ppl", "valid/bleu"];
  const main = document.getElementById("main");
  let generation = 0; // bumped per page shown; stale answers of an older page are dropped
  let pollTimer = null;
  let curves = null;
  window.nmtCharts = {};
  window.nmtLoaded = null;

  // ---- DOM and formatting -------------------------------------------------------------------

  // An element with properties (className, href, onclick, dataset...) and children; strings become
  // text nodes, never markup.
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(props || {})) {
      if (name === "dataset") {
        Object.assign(node.dataset, value);
      } else {
        node[name] = value;
      }
    }
    for (const child of children.flat(Infinity)) {
      if (child !== null && child !== undefined) {
        node.append(child instanceof Node ? child : String(child));
      }
    }
    return node;
  }

  const missing = (v) => v === null || v === undefined || v === "";

  function fmtValue(v) {
    if (missing(v)) return "-";
    if (typeof v === "number") return nmt.fmtNumber(v);
    if (typeof v === "boolean") return v ? "true" : "false";
    return typeof v === "object" ? JSON.stringify(v) : String(v);
  }

  function fmtTime(seconds) {
    if (typeof seconds !== "number") return "-";
    const d = new Date(seconds * 1000);
    const pad = (n) => String(n).padStart(2, "0");
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
      `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }

  function fmtDuration(seconds) {
    if (typeof seconds !== "number" || !Number.isFinite(seconds)) return "-";
    const s = Math.max(0, Math.round(seconds));
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    if (h > 0) return `${h}h ${String(m).padStart(2, "0")}m`;
    return m > 0 ? `${m}m ${String(r).padStart(2, "0")}s` : `${r}s`;
  }

  function durationOf(run) {
    if (typeof run.duration_s === "number") return run.duration_s;
    if (typeof run.started_at !== "number") return null;
    const end = typeof run.ended_at === "number" ? run.ended_at : Date.now() / 1000;
    return end - run.started_at;
  }

  const statusCell = (status) => el("span", { className: "status-" + status }, fmtValue(status));
  const runLink = (run, text) =>
    el("a", { href: "#/run/" + encodeURIComponent(run.run_id) }, fmtValue(text));
  const runLabel = (run) => `${fmtValue(run.name)} #${run.run_id}`;

  // A two-column table of [label, value] pairs; values may be nodes.
  function factsList(pairs) {
    return el("dl", { className: "facts" },
      pairs.map(([k, v]) => [el("dt", {}, k), el("dd", {}, v instanceof Node ? v : fmtValue(v))]));
  }

  // A plain table: columns [{label, value(row), className?}].
  function table(columns, rows, props) {
    return el("table", props || {},
      el("thead", {}, el("tr", {}, columns.map((c) => el("th", { className: c.className || "" }, c.label)))),
      el("tbody", {}, rows.map((row) => el("tr", {}, columns.map((c) => {
        const v = c.value(row);
        const numeric = typeof v === "number";
        return el("td", { className: (c.className || "") + (numeric ? " num" : "") },
          v instanceof Node ? v : fmtValue(v));
      })))));
  }

  // ---- the API --------------------------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, message, field) {
      super(message);
      this.status = status;
      this.field = field;
    }
  }

  async function api(path) {
    const answer = await fetch(path, { credentials: "same-origin", cache: "no-store" });
    let body = null;
    try {
      body = await answer.json();
    } catch (e) {
      body = null;
    }
    if (!answer.ok) {
      if (answer.status === 401) {
        throw new ApiError(401, "This daemon needs its token: open /?token=<token> once in this browser.");
      }
      const message = body && body.error ? body.error : `${answer.status} ${answer.statusText}`;
      throw new ApiError(answer.status, `${path}: ${message}`, body && body.field);
    }
    return body;
  }

  // ---- pages, routing and live refresh --------------------------------------------------------

  function showError(error) {
    const box = document.getElementById("error");
    box.textContent = error && error.message ? error.message : String(error);
    box.hidden = false;
  }

  function newCurves(container) {
    curves = new nmt.CurveView(container);
    return curves;
  }

  // Calls `refresh` every POLL_MS while it answers true and the page is still shown; a hidden tab
  // skips its turns.
  function poll(gen, refresh) {
    pollTimer = setTimeout(async () => {
      if (gen !== generation) return;
      let again = true;
      if (!document.hidden) {
        try {
          again = await refresh();
          document.getElementById("error").hidden = true;
        } catch (e) {
          showError(e);
        }
        document.getElementById("status-line").textContent = "updated " + fmtTime(Date.now() / 1000);
      }
      if (again && gen === generation) poll(gen, refresh);
    }, POLL_MS);
  }

  function parseRoute(hash) {
    const [page, ...rest] = hash.replace(/^#\/?/, "").split("/");
    let arg = rest.join("/");
    try {
      arg = decodeURIComponent(arg);
    } catch (e) {
      // keep it as written; the page reports what it cannot find
    }
    return { page: page || "runs", arg };
  }

  async function render() {
    const gen = ++generation;
    clearTimeout(pollTimer);
    if (curves) curves.destroy();
    curves = null;
    window.nmtCharts = {};
    window.nmtLoaded = null;
    main.replaceChildren();
    document.getElementById("error").hidden = true;
    const route = parseRoute(location.hash);
    const page = nmt.pages[route.page];
    const menu = document.getElementById("sweep-nav");
    menu.value = route.page === "sweep" ? route.arg : "";
    if (menu.selectedIndex < 0) menu.value = "";
    const started = performance.now();
    try {
      if (!page) throw new Error(`no page "${route.page}": try #/runs`);
      await page(route.arg, gen);
      if (gen === generation) {
        window.nmtLoadedAt = performance.now();
        window.nmtRenderMs = window.nmtLoadedAt - started;
        window.nmtLoaded = location.hash;
      }
    } catch (e) {
      if (gen === generation) showError(e);
    }
  }

  // The sweep menu in the header: GET /api/sweeps, or the sweeps named by the runs on a daemon
  // without that route.
  async function loadSweepMenu() {
    const select = document.getElementById("sweep-nav");
    let names;
    try {
      names = (await api("/api/sweeps")).sweeps.map((s) => s.sweep);
    } catch (e) {
      if (e.status !== 404) throw e;
      const runs = (await api("/api/runs")).runs;
      names = [...new Set(runs.map((r) => r.sweep).filter((s) => !missing(s)))].sort();
    }
    select.replaceChildren(el("option", { value: "" }, "(choose)"),
      names.map((n) => el("option", { value: n }, n)));
    const route = parseRoute(location.hash);
    select.value = route.page === "sweep" && names.includes(route.arg) ? route.arg : "";
    select.onchange = () => {
      if (select.value) location.hash = "#/sweep/" + encodeURIComponent(select.value);
    };
  }

  Object.assign(nmt, { el, fmtValue, fmtTime, fmtDuration, durationOf, statusCell, runLink,
    runLabel, factsList, table, api, poll, newCurves, missing, KEY_METRICS,
    generation: () => generation });
  nmt.pages = nmt.pages || {};

  window.addEventListener("hashchange", render);
  window.addEventListener("DOMContentLoaded", () => {
    render();
    loadSweepMenu().catch(showError);
  });
})(window.nmt);
