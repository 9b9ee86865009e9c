// The runs page (#/runs): every run with its experiment, sweep, status, times, attempts, world
// size, the params that vary among the runs and their last key metrics (GET
// /api/runs?params=*&metrics=*). Sorted by a click on a header, filtered here in the page, and
// runs picked with check boxes for the compare page.
"use strict";

(function (nmt) {
  const { el, fmtValue, fmtTime, fmtDuration, durationOf, statusCell, runLink } = nmt;

  // Kept across visits and refreshes, so that a refresh never undoes what the user chose.
  const view = {
    sort: { column: "run_id", descending: true },
    filters: { experiment: "", sweep: "", status: "", param: "", name: "" },
    selected: new Set(),
  };

  async function fetchRuns() {
    try {
      return (await nmt.api("/api/runs?params=*&metrics=*")).runs || [];
    } catch (e) {
      // A daemon from before these query parameters refuses them by name: list runs without.
      if (e.status !== 400 || (e.field !== "params" && e.field !== "metrics")) throw e;
      return (await nmt.api("/api/runs")).runs || [];
    }
  }

  // The params whose values are not the same in every listed run. The paper's reference figures
  // (reference.*, sent by nmt-sweep) are left to the sweep page.
  function varyingParams(runs) {
    const values = new Map();
    for (const run of runs) {
      for (const key of Object.keys(run.params || {})) {
        if (!key.startsWith("reference.")) values.set(key, new Set());
      }
    }
    for (const [key, seen] of values) {
      for (const run of runs) seen.add(JSON.stringify((run.params || {})[key] ?? null));
    }
    return [...values.keys()].filter((k) => values.get(k).size > 1)
      .sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  }

  function columns(runs) {
    const base = [
      { id: "run_id", label: "id", value: (r) => r.run_id, cell: (r) => runLink(r, r.run_id) },
      { id: "name", label: "name", value: (r) => r.name, cell: (r) => runLink(r, r.name) },
      { id: "experiment", label: "experiment", value: (r) => r.experiment },
      { id: "sweep", label: "sweep", value: (r) => r.sweep },
      { id: "row_label", label: "row", value: (r) => r.row_label },
      { id: "status", label: "status", value: (r) => r.status, cell: (r) => statusCell(r.status) },
      { id: "started_at", label: "started", value: (r) => r.started_at, cell: (r) => fmtTime(r.started_at) },
      { id: "duration_s", label: "duration", value: durationOf, cell: (r) => fmtDuration(durationOf(r)) },
      {
        id: "attempts",
        label: "attempts",
        value: (r) => (typeof r.attempts === "number" ? r.attempts : r.attempt),
      },
      { id: "world_size", label: "world size", value: (r) => r.world_size },
    ];
    const params = varyingParams(runs).map((key) => ({
      id: "param:" + key, label: key, value: (r) => (r.params || {})[key],
    }));
    const metrics = nmt.KEY_METRICS
      .filter((key) => runs.some((r) => r.last_metrics && key in r.last_metrics))
      .map((key) => ({ id: "metric:" + key, label: key, value: (r) => r.last_metrics[key] }));
    return base.concat(params, metrics);
  }

  // Missing values sort last in either direction; numbers as numbers, text in natural order.
  function compareValues(a, b, descending) {
    const am = nmt.missing(a), bm = nmt.missing(b);
    if (am || bm) return am === bm ? 0 : am ? 1 : -1;
    const order = typeof a === "number" && typeof b === "number"
      ? a - b : String(a).localeCompare(String(b), undefined, { numeric: true });
    return descending ? -order : order;
  }

  // "key=value" keeps the runs whose param equals value (as text or as a number); "key" alone the
  // runs that have a param whose name contains it.
  function paramMatches(run, filter) {
    const params = run.params || {};
    const eq = filter.indexOf("=");
    if (eq < 0) return Object.keys(params).some((k) => k.includes(filter));
    const key = filter.slice(0, eq).trim(), wanted = filter.slice(eq + 1).trim();
    if (!(key in params)) return false;
    const value = params[key];
    return String(value) === wanted || (wanted !== "" && Number(wanted) === value);
  }

  function visibleRuns(runs) {
    const f = view.filters;
    const param = f.param.trim();
    return runs.filter((r) =>
      (!f.experiment || r.experiment === f.experiment) &&
      (!f.sweep || r.sweep === f.sweep) &&
      (!f.status || r.status === f.status) &&
      (!f.name || String(r.name ?? "").includes(f.name)) &&
      (!param || paramMatches(r, param)));
  }

  function select(name, label, values, onChange) {
    const node = el("select", { name }, el("option", { value: "" }, "all"),
      values.map((v) => el("option", { value: v }, v)));
    node.value = values.includes(view.filters[name]) ? view.filters[name] : "";
    node.onchange = () => {
      view.filters[name] = node.value;
      onChange();
    };
    return el("label", {}, label + " ", node);
  }

  function textFilter(name, label, placeholder, onChange) {
    const node = el("input", { type: "search", name, placeholder, value: view.filters[name] });
    node.oninput = () => {
      view.filters[name] = node.value;
      onChange();
    };
    return el("label", {}, label + " ", node);
  }

  const distinct = (runs, field) =>
    [...new Set(runs.map((r) => r[field]).filter((v) => !nmt.missing(v)))].map(String).sort();

  function drawTable(box, runs, compareButton) {
    const cols = columns(runs);
    const shown = visibleRuns(runs);
    const { column, descending } = view.sort;
    const sortBy = cols.find((c) => c.id === column) || cols[0];
    shown.sort((a, b) => compareValues(sortBy.value(a), sortBy.value(b), descending) ||
      a.run_id - b.run_id);
    const redraw = () => drawTable(box, runs, compareButton);
    const header = el("tr", {}, el("th", {}, ""), cols.map((c) => {
      const sorted = c.id === sortBy.id ? (descending ? " sorted-desc" : " sorted-asc") : "";
      return el("th", {
        className: "sortable" + sorted,
        dataset: { column: c.id },
        onclick: () => {
          view.sort = { column: c.id, descending: c.id === sortBy.id ? !descending : false };
          redraw();
        },
      }, c.label);
    }));
    const body = shown.map((r) => el("tr", { dataset: { runId: r.run_id } },
      el("td", {}, el("input", {
        type: "checkbox",
        className: "pick",
        checked: view.selected.has(r.run_id),
        onchange: (event) => {
          if (event.target.checked) view.selected.add(r.run_id);
          else view.selected.delete(r.run_id);
          updateCompare(compareButton, runs);
        },
      })),
      cols.map((c) => {
        const v = c.value(r);
        return el("td", { className: typeof v === "number" ? "num" : "" },
          c.cell ? c.cell(r) : fmtValue(v));
      })));
    box.replaceChildren(el("table", { id: "runs-table" }, el("thead", {}, header), el("tbody", {}, body)),
      el("p", { className: "muted" }, `${shown.length} of ${runs.length} runs`));
    updateCompare(compareButton, runs);
  }

  function updateCompare(button, runs) {
    const known = new Set(runs.map((r) => r.run_id));
    const picked = [...view.selected].filter((id) => known.has(id)).sort((a, b) => a - b);
    button.disabled = picked.length < 2;
    button.textContent = `Compare selected (${picked.length})`;
    button.onclick = () => {
      location.hash = "#/compare/" + picked.join(",");
    };
  }

  nmt.pages.runs = async function (arg, gen) {
    let runs = await fetchRuns();
    if (gen !== nmt.generation()) return;
    const filters = el("div", { className: "filters" });
    const box = el("div", { className: "table-scroll" });
    const compareButton = el("button", { type: "button", id: "compare-button" }, "Compare selected");
    const redraw = () => drawTable(box, runs, compareButton);
    const drawFilters = () => filters.replaceChildren(
      select("experiment", "experiment", distinct(runs, "experiment"), redraw),
      select("sweep", "sweep", distinct(runs, "sweep"), redraw),
      select("status", "status", distinct(runs, "status"), redraw),
      textFilter("name", "name", "part of a name", redraw),
      textFilter("param", "param", "key=value or key", redraw),
      compareButton);
    drawFilters();
    document.getElementById("main").append(el("h1", {}, "Runs"), filters, box);
    redraw();
    const running = () => runs.some((r) => r.status === "running");
    if (running()) {
      nmt.poll(gen, async () => {
        runs = await fetchRuns();
        if (gen !== nmt.generation()) return false;
        // The text boxes keep their focus: only the selects are rebuilt, with their choices.
        for (const name of ["experiment", "sweep", "status"]) {
          const old = filters.querySelector(`select[name="${name}"]`).parentNode;
          old.replaceWith(select(name, name, distinct(runs, name), redraw));
        }
        redraw();
        return running();
      });
    }
  };
})(window.nmt);
