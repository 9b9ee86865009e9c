// The run page (#/run/<id>): provenance, learning curves grouped by kind (loss, perplexity,
// BLEU, learning rate, tokens/s, per-rank tokens/s), evals with their signatures, params,
// attempts, artifacts and the resolved config; and the compare page (#/compare/<id>,<id>,...):
// one chart per metric key with one series per run, and the params that differ.
"use strict";

(function (nmt) {
  const { el, fmtTime, fmtDuration, durationOf, statusCell, runLink, runLabel, factsList, table } = nmt;
  const main = () => document.getElementById("main");

  function parseRunId(text) {
    if (!/^\d+$/.test(text)) throw new Error(`"${text}" is not a run id: runs are #/run/<number>`);
    return Number(text);
  }

  const fetchRun = (id) => nmt.api(`/api/runs/${id}`);

  function sweepLink(name) {
    return nmt.missing(name) ? "-" : el("a", { href: "#/sweep/" + encodeURIComponent(name) }, name);
  }

  function drawHead(box, run) {
    box.replaceChildren(
      el("h1", {}, runLabel(run), " ", statusCell(run.status)),
      factsList([
        ["experiment", run.experiment],
        ["sweep", sweepLink(run.sweep)],
        ["row", nmt.missing(run.row_label) ? run.row_index : run.row_label],
        ["uid", run.uid],
        ["started", fmtTime(run.started_at)],
        ["ended", fmtTime(run.ended_at)],
        ["duration", fmtDuration(durationOf(run))],
        ["attempt", run.attempt],
        ["git revision", run.git_revision],
        ["config hash", run.config_hash],
        ["host", run.host],
        ["world size", run.world_size],
        ["Slurm job", run.slurm_job_id],
        ["Slurm array", run.slurm_array_id],
      ].concat(nmt.missing(run.deleted_at) ? [] : [["deleted", fmtTime(run.deleted_at)]])));
  }

  const field = (name) => ({ label: name.replace(/_/g, " "), value: (row) => row[name] });
  const timeField = (name, label) => ({ label, value: (row) => fmtTime(row[name]) });

  function section(title, items, columns, id) {
    return [el("h2", {}, title), items.length === 0
      ? el("p", { className: "muted" }, "none")
      : el("div", { className: "table-scroll" }, table(columns, items, { id }))];
  }

  function drawDetails(box, run) {
    const params = Object.entries(run.params || {})
      .sort(([a], [b]) => a.localeCompare(b, undefined, { numeric: true }))
      .map(([key, value]) => ({ key, value }));
    const attempts = Array.isArray(run.attempts) ? run.attempts : [];
    box.replaceChildren(
      ...section("Evals", run.evals || [], ["split", "step", "checkpoint", "bleu", "chrf",
        "perplexity", "signature"].map(field).concat([timeField("created_at", "time")]), "evals"),
      ...section("Params", params, [field("key"), field("value")], "params"),
      ...section("Attempts", attempts, [field("attempt"),
        { label: "status", value: (a) => statusCell(a.status) },
        timeField("started_at", "started"), timeField("ended_at", "ended"), field("host"),
        field("world_size"), field("slurm_job_id"), field("slurm_array_id")], "attempts"),
      ...section("Artifacts", run.artifacts || [], ["kind", "path", "step", "averaged_from"]
        .map(field).concat([timeField("created_at", "time")]), "artifacts"),
      el("h2", {}, "Config"),
      nmt.missing(run.config) ? el("p", { className: "muted" }, "none")
        : el("pre", { className: "config" }, run.config));
  }

  function runGroups(run) {
    return nmt.groupMetricKeys(run.metric_keys || []).map((g) => ({
      id: g.id,
      title: g.title,
      series: g.keys.map((key) => ({ label: key, runId: run.run_id, key, start: run.started_at })),
    }));
  }

  nmt.pages.run = async function (arg, gen) {
    const id = parseRunId(arg);
    let run = await fetchRun(id);
    if (gen !== nmt.generation()) return;
    const head = el("div");
    const curveBox = el("section", {}, el("h2", {}, "Learning curves"));
    const details = el("div");
    main().append(head, curveBox, details);
    const curves = nmt.newCurves(curveBox);
    const draw = async () => {
      drawHead(head, run);
      drawDetails(details, run);
      curves.setGroups(runGroups(run));
      await curves.refresh();
      if (gen === nmt.generation()) curves.draw();
    };
    await draw();
    if (run.status === "running") {
      nmt.poll(gen, async () => {
        run = await fetchRun(id);
        await draw();
        return run.status === "running";
      });
    }
  };

  // ---- compare ------------------------------------------------------------------------------

  function differingParams(runs) {
    const keys = new Set(runs.flatMap((r) => Object.keys(r.params || {})));
    return [...keys].filter((key) =>
      new Set(runs.map((r) => JSON.stringify((r.params || {})[key] ?? null))).size > 1)
      .sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  }

  function drawComparison(box, runs) {
    const params = differingParams(runs);
    const runColumns = runs.map((r) => ({ label: runLabel(r), value: (key) => (r.params || {})[key] }));
    box.replaceChildren(
      el("h1", {}, `Compare ${runs.length} runs`),
      table([
        { label: "run", value: (r) => runLink(r, runLabel(r)) },
        { label: "experiment", value: (r) => r.experiment },
        { label: "sweep", value: (r) => sweepLink(r.sweep) },
        { label: "status", value: (r) => statusCell(r.status) },
        { label: "started", value: (r) => fmtTime(r.started_at) },
        { label: "duration", value: (r) => fmtDuration(durationOf(r)) },
      ], runs, { id: "compare-runs" }),
      el("h2", {}, "Params that differ"),
      params.length === 0 ? el("p", { className: "muted" }, "none: every param is the same")
        : table([{ label: "param", value: (key) => key }].concat(runColumns), params,
          { id: "compare-params" }));
  }

  function compareGroups(runs) {
    const keys = [...new Set(runs.flatMap((r) => r.metric_keys || []))]
      .sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
    return keys.map((key) => ({
      id: "key:" + key,
      title: key,
      series: runs.filter((r) => (r.metric_keys || []).includes(key))
        .map((r) => ({ label: runLabel(r), runId: r.run_id, key, start: r.started_at })),
    }));
  }

  nmt.pages.compare = async function (arg, gen) {
    const ids = [...new Set(arg.split(",").filter((s) => s !== "").map(parseRunId))];
    if (ids.length === 0) throw new Error("no runs to compare: #/compare/<id>,<id>,...");
    let runs = await Promise.all(ids.map(fetchRun));
    if (gen !== nmt.generation()) return;
    const head = el("div");
    const curveBox = el("section", {}, el("h2", {}, "Learning curves"));
    main().append(head, curveBox);
    const curves = nmt.newCurves(curveBox);
    const draw = async () => {
      drawComparison(head, runs);
      curves.setGroups(compareGroups(runs));
      await curves.refresh();
      if (gen === nmt.generation()) curves.draw();
    };
    await draw();
    const running = () => runs.some((r) => r.status === "running");
    if (running()) {
      nmt.poll(gen, async () => {
        runs = await Promise.all(ids.map(fetchRun));
        await draw();
        return running();
      });
    }
  };
})(window.nmt);
