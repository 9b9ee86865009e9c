// The sweep page (#/sweep/<name>): the sweep's table as GET /api/sweeps/{name}/table lays it out
// (whatever columns it sends: varying params, results, the paper's reference figures beside
// ours), and the curves of its rows overlaid: validation perplexity, then training loss.
"use strict";

(function (nmt) {
  const { el, fmtValue, statusCell, runLink, runLabel } = nmt;
  const CURVE_KEYS = ["valid/ppl", "train/loss"];

  // Columns are {"name", "kind"}; a daemon from before kinds sends bare names.
  function normalizeColumns(columns) {
    return (columns || []).map((c) => (typeof c === "string"
      ? { name: c, kind: /^ref(erence)?[._]/.test(c) ? "reference" : "value" }
      : { name: String(c.name), kind: String(c.kind || "value") }));
  }

  function drawTable(box, answer) {
    const columns = normalizeColumns(answer.columns);
    const rows = answer.rows || [];
    const header = el("tr", {},
      el("th", {}, "row"), el("th", {}, "run"), el("th", {}, "status"),
      columns.map((c) => el("th", {
        className: c.kind === "reference" ? "reference" : "",
        title: c.kind,
        dataset: { kind: c.kind },
      }, c.name)));
    const body = rows.map((r) => el("tr", { dataset: { runId: r.run_id } },
      el("td", {}, fmtValue(nmt.missing(r.row_label) ? r.row_index : r.row_label)),
      el("td", {}, runLink(r, runLabel(r))),
      el("td", {}, statusCell(r.status)),
      columns.map((c) => {
        const v = (r.values || {})[c.name];
        const classes = [c.kind === "reference" ? "reference" : "", typeof v === "number" ? "num" : ""];
        return el("td", { className: classes.join(" ").trim() }, fmtValue(v));
      })));
    box.replaceChildren(rows.length === 0
      ? el("p", { className: "muted" }, "no runs in this sweep")
      : el("div", { className: "table-scroll" },
        el("table", { id: "sweep-table" }, el("thead", {}, header), el("tbody", {}, body))));
  }

  // Each row's run (for its metric keys and start time), then one chart per key of CURVE_KEYS
  // that any row has, one series per row.
  async function sweepGroups(answer) {
    const runs = await Promise.all((answer.rows || []).map((r) => nmt.api(`/api/runs/${r.run_id}`)));
    return CURVE_KEYS.map((key) => ({
      id: "sweep:" + key,
      title: key,
      series: runs.filter((run) => (run.metric_keys || []).includes(key)).map((run) => ({
        label: `${fmtValue(run.row_label ?? run.name)} #${run.run_id}`,
        runId: run.run_id,
        key,
        start: run.started_at,
      })),
    })).filter((g) => g.series.length > 0);
  }

  nmt.pages.sweep = async function (name, gen) {
    if (name === "") throw new Error("no sweep named: #/sweep/<name>");
    const path = `/api/sweeps/${encodeURIComponent(name)}/table`;
    let answer = await nmt.api(path);
    if (gen !== nmt.generation()) return;
    const tableBox = el("div");
    const curveBox = el("section", {}, el("h2", {}, "Curves"));
    document.getElementById("main").append(el("h1", {}, "Sweep ", name), tableBox, curveBox);
    const curves = nmt.newCurves(curveBox);
    const draw = async () => {
      drawTable(tableBox, answer);
      curves.setGroups(await sweepGroups(answer));
      await curves.refresh();
      if (gen === nmt.generation()) curves.draw();
    };
    await draw();
    const running = () => (answer.rows || []).some((r) => r.status === "running");
    if (running()) {
      nmt.poll(gen, async () => {
        answer = await nmt.api(path);
        await draw();
        return running();
      });
    }
  };
})(window.nmt);
