// The runs page (#/runs): every run with its experiment, sweep, status, times, attempts, world
// size, params, last metrics and latest evals per split (GET
// /api/runs?params=*&metrics=*&evals=*). Shown by default: the params that vary among the runs,
// the key metrics and every eval figure; the column chooser shows or hides any of them. Sorted by
// a click on a header, filtered here in the page, and runs picked with check boxes for the
// compare page. The check box, id and name columns stay pinned while the rest scrolls sideways.
"use strict";

(function (nmt) {
  const { el, fmtValue, fmtTime, fmtDuration, durationOf, statusCell, runLink } = nmt;

  // Kept across visits and refreshes, so that a refresh never undoes what the user chose.
  const view = {
    sort: { column: "run_id", descending: true },
    filters: { experiment: "", sweep: "", status: "", param: "", name: "" },
    selected: new Set(),
    columns: {}, // column id -> shown, where the user chose
    showAll: false, // past ROW_LIMIT rows, only on request
  };
  // Rows drawn until the user asks for all: a thousand rows of twenty-odd columns take half a
  // second to lay out, and the sort and filters bring the wanted runs to the top anyway.
  const ROW_LIMIT = 200;

  // A daemon from before a query parameter refuses it by name: ask again without it.
  async function fetchRuns() {
    for (const query of ["?params=*&metrics=*&evals=*", "?params=*&metrics=*", ""]) {
      try {
        return (await nmt.api("/api/runs" + query)).runs || [];
      } catch (e) {
        if (e.status !== 400 || !["params", "metrics", "evals"].includes(e.field)) throw e;
      }
    }
    return [];
  }

  const keysOf = (runs, field) => [...new Set(runs.flatMap((r) => Object.keys(r[field] || {})))]
    .sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));

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
    return new Set([...values.keys()].filter((k) => values.get(k).size > 1));
  }

  // Every column, with `group` (base, param, metric, eval) and `shown` (the user's choice, else
  // the default); the id and name columns are always shown.
  function allColumns(runs) {
    const base = [
      { id: "run_id", label: "id", value: (r) => r.run_id, cell: (r) => runLink(r, r.run_id), pinned: true },
      {
        id: "name", label: "name", value: (r) => r.name, pinned: true,
        cell: (r) => el("a", { href: "#/run/" + encodeURIComponent(r.run_id), title: fmtValue(r.name) },
          fmtValue(r.name)),
      },
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
    const varying = varyingParams(runs);
    const params = keysOf(runs, "params").filter((k) => !k.startsWith("reference.")).map((key) => ({
      id: "param:" + key, group: "param", label: key, value: (r) => (r.params || {})[key],
      byDefault: varying.has(key),
    }));
    const metrics = keysOf(runs, "last_metrics").map((key) => ({
      id: "metric:" + key, group: "metric", label: key, value: (r) => (r.last_metrics || {})[key],
      byDefault: nmt.KEY_METRICS.includes(key),
    }));
    const metricLabels = new Set(metrics.map((m) => m.label));
    const evals = keysOf(runs, "last_evals").map((key) => ({
      id: "eval:" + key, group: "eval", label: metricLabels.has(key) ? key + " (eval)" : key,
      value: (r) => (r.last_evals || {})[key], byDefault: true, className: "eval",
    }));
    return base.map((c) => Object.assign({ group: "base", byDefault: true }, c))
      .concat(params, metrics, evals)
      .map((c) => Object.assign(c, { shown: c.pinned || (view.columns[c.id] ?? c.byDefault) }));
  }

  const columns = (runs) => allColumns(runs).filter((c) => c.shown);

  // Missing values sort last in either direction; numbers as numbers, text in natural order.
  function compareValues(a, b, descending) {
    const am = nmt.missing(a), bm = nmt.missing(b);
    if (am || bm) return am === bm ? 0 : am ? 1 : -1;
    const order = typeof a === "number" && typeof b === "number"
      ? a - b : String(a).localeCompare(String(b), undefined, { numeric: true });
    return descending ? -order : order;
  }

  // A run's value for a filter's key: a param, a last metric or a latest eval ("eval:test/bleu"
  // or plain "test/bleu").
  function valueFor(run, key) {
    const evalKey = key.startsWith("eval:") ? key.slice(5) : key;
    for (const [field, k] of [["params", key], ["last_metrics", key], ["last_evals", evalKey]]) {
      if (run[field] && k in run[field]) return { found: true, value: run[field][k] };
    }
    return { found: false };
  }

  // "key=value" keeps the runs whose param, metric or eval equals value (as text or as a number);
  // "key>value", "key>=value", "key<value", "key<=value" compare numbers; "key" alone keeps the
  // runs that have a param, metric or eval whose name contains it.
  function filterMatches(run, filter) {
    const m = /^(.*?)(<=|>=|=|<|>)(.*)$/.exec(filter);
    if (!m) {
      return ["params", "last_metrics", "last_evals"].some((field) =>
        Object.keys(run[field] || {}).some((k) => k.includes(filter)));
    }
    const key = m[1].trim(), op = m[2], wanted = m[3].trim();
    const { found, value } = valueFor(run, key);
    if (!found) return false;
    if (op === "=") return String(value) === wanted || (wanted !== "" && Number(wanted) === value);
    const number = Number(wanted);
    if (wanted === "" || !Number.isFinite(number) || typeof value !== "number") return false;
    return op === "<" ? value < number : op === "<=" ? value <= number
      : op === ">" ? value > number : value >= number;
  }

  function visibleRuns(runs) {
    const f = view.filters;
    const param = f.param.trim();
    return runs.filter((r) =>
      (!f.experiment || r.experiment === f.experiment) &&
      (!f.sweep || r.sweep === f.sweep) &&
      (!f.status || r.status === f.status) &&
      (!f.name || String(r.name ?? "").includes(f.name)) &&
      (!param || filterMatches(r, param)));
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
    const pin = (c) => (c.pinned ? " pin" : "") + (c.className ? " " + c.className : "");
    const header = el("tr", {}, el("th", { className: "pin" }, ""), cols.map((c) => {
      const sorted = c.id === sortBy.id ? (descending ? " sorted-desc" : " sorted-asc") : "";
      return el("th", {
        className: "sortable" + sorted + pin(c),
        title: c.group === "eval" ? "latest eval of the split" : "",
        dataset: { column: c.id },
        onclick: () => {
          view.sort = { column: c.id, descending: c.id === sortBy.id ? !descending : false };
          redraw();
        },
      }, c.label);
    }));
    const drawn = view.showAll ? shown : shown.slice(0, ROW_LIMIT);
    const body = drawn.map((r) => el("tr", { dataset: { runId: r.run_id } },
      el("td", { className: "pin" }, el("input", {
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
        return el("td", { className: (typeof v === "number" ? "num" : "") + pin(c) },
          c.cell ? c.cell(r) : fmtValue(v));
      })));
    const tableNode = el("table", { id: "runs-table" }, el("thead", {}, header), el("tbody", {}, body));
    // The scrolling box stays in place, so that a sort or a refresh keeps the sideways scroll.
    if (!box.scroller) {
      box.scroller = el("div", { className: "table-scroll runs-scroll" });
      box.count = el("p", { className: "muted" });
      box.replaceChildren(box.scroller, box.count);
    }
    box.scroller.replaceChildren(tableNode);
    box.count.replaceChildren(`${shown.length} of ${runs.length} runs`, ...(drawn.length === shown.length
      ? [] : [`, the first ${drawn.length} shown `, el("button", {
        type: "button",
        id: "show-all-runs",
        onclick: () => {
          view.showAll = true;
          redraw();
        },
      }, `show all ${shown.length}`)]));
    pinColumns(tableNode);
    updateCompare(compareButton, runs);
  }

  // position: sticky needs each pinned column's left edge: the widths of the pinned columns
  // before it, as laid out.
  function pinColumns(tableNode) {
    const first = tableNode.querySelector("thead tr");
    if (!first) return;
    let left = 0;
    const lefts = [];
    for (const th of first.children) {
      if (!th.classList.contains("pin")) break;
      lefts.push(left);
      left += th.getBoundingClientRect().width;
    }
    for (const row of tableNode.querySelectorAll("tr")) {
      lefts.forEach((x, i) => {
        if (row.children[i]) row.children[i].style.left = x + "px";
      });
      if (row.children[lefts.length - 1]) row.children[lefts.length - 1].classList.add("pin-last");
    }
  }

  // Check boxes for every column but id and name, grouped; a choice is kept in the view state.
  function columnChooser(runs, onChange) {
    const groups = [["base", "run"], ["param", "params"], ["metric", "metrics"], ["eval", "evals"]];
    const cols = allColumns(runs).filter((c) => !c.pinned);
    const chooser = el("details", { className: "column-chooser" }, el("summary", {}, "Columns"),
      groups.filter(([g]) => cols.some((c) => c.group === g)).map(([g, title]) =>
        el("fieldset", {}, el("legend", {}, title), cols.filter((c) => c.group === g).map((c) =>
          el("label", {}, el("input", {
            type: "checkbox",
            className: "column-choice",
            checked: c.shown,
            dataset: { column: c.id },
            onchange: (event) => {
              view.columns[c.id] = event.target.checked;
              onChange();
            },
          }), " ", c.label)))));
    chooser.open = view.chooserOpen === true;
    chooser.ontoggle = () => {
      view.chooserOpen = chooser.open;
    };
    return chooser;
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
    const box = el("div");
    const compareButton = el("button", { type: "button", id: "compare-button" }, "Compare selected");
    const redraw = () => drawTable(box, runs, compareButton);
    const drawFilters = () => filters.replaceChildren(
      select("experiment", "experiment", distinct(runs, "experiment"), redraw),
      select("sweep", "sweep", distinct(runs, "sweep"), redraw),
      select("status", "status", distinct(runs, "status"), redraw),
      textFilter("name", "name", "part of a name", redraw),
      textFilter("param", "filter", "key=value, key>value or key", redraw),
      columnChooser(runs, redraw),
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
        filters.querySelector(".column-chooser").replaceWith(columnChooser(runs, redraw));
        redraw();
        return running();
      });
    }
  };
})(window.nmt);
