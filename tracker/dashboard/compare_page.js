// The compare page (#/compare/<id>,<id>,...): the runs, their latest evals (one column per split
// and figure), the eval history per checkpoint and step, the params that differ, and one chart
// per metric key with one series per run.
"use strict";

(function (nmt) {
  const { el, fmtTime, fmtDuration, durationOf, statusCell, runLink, runLabel, table } = nmt;
  const FIGURES = [["bleu", "bleu"], ["chrf", "chrf"], ["perplexity", "ppl"]];
  const byNaturalOrder = (a, b) => a.localeCompare(b, undefined, { numeric: true });

  function differingParams(runs) {
    const keys = new Set(runs.flatMap((r) => Object.keys(r.params || {})));
    return [...keys].filter((key) =>
      new Set(runs.map((r) => JSON.stringify((r.params || {})[key] ?? null))).size > 1)
      .sort(byNaturalOrder);
  }

  // Evals of a run in the order they were made: by step (none first), then by creation.
  function evalsInOrder(run) {
    const order = (e) => (typeof e.step === "number" ? e.step : -Infinity);
    return [...(run.evals || [])].sort((a, b) => order(a) - order(b) ||
      (a.created_at || 0) - (b.created_at || 0) || (a.eval_id || 0) - (b.eval_id || 0));
  }

  // {"test/bleu": 34.9, ...}: per split the latest eval's figures (as the runs page's
  // last_evals), computed from the run's evals.
  function latestEvals(run) {
    const latest = {};
    for (const e of evalsInOrder(run)) {
      for (const [field, name] of FIGURES) {
        if (typeof e[field] === "number") latest[`${e.split}/${name}`] = e[field];
      }
    }
    return latest;
  }

  function evalSections(runs) {
    const latest = new Map(runs.map((r) => [r.run_id, latestEvals(r)]));
    const keys = [...new Set([...latest.values()].flatMap((l) => Object.keys(l)))].sort(byNaturalOrder);
    const history = runs.flatMap((r) => evalsInOrder(r).map((e) => Object.assign({ run: r }, e)));
    if (keys.length === 0) return [el("h2", {}, "Evals"), el("p", { className: "muted" }, "none")];
    return [
      el("h2", {}, "Evals (latest per split)"),
      el("div", { className: "table-scroll" }, table(
        [{ label: "run", value: (r) => runLink(r, runLabel(r)) }].concat(keys.map((key) => ({
          label: key, value: (r) => latest.get(r.run_id)[key],
        }))), runs, { id: "compare-evals" })),
      el("h2", {}, "Eval history"),
      el("div", { className: "table-scroll" }, table([
        { label: "run", value: (e) => runLink(e.run, runLabel(e.run)) },
        { label: "split", value: (e) => e.split },
        { label: "step", value: (e) => e.step },
        { label: "checkpoint", value: (e) => e.checkpoint },
        { label: "bleu", value: (e) => e.bleu },
        { label: "chrf", value: (e) => e.chrf },
        { label: "ppl", value: (e) => e.perplexity },
        { label: "time", value: (e) => fmtTime(e.created_at) },
      ], history, { id: "compare-eval-history" })),
    ];
  }

  function drawComparison(box, runs) {
    const params = differingParams(runs);
    const runColumns = runs.map((r) => ({ label: runLabel(r), value: (key) => (r.params || {})[key] }));
    box.replaceChildren(
      el("h1", {}, `Compare ${runs.length} runs`),
      table([
        { label: "run", value: (r) => runLink(r, runLabel(r)) },
        { label: "experiment", value: (r) => r.experiment },
        { label: "sweep", value: (r) => nmt.sweepLink(r.sweep) },
        { label: "status", value: (r) => statusCell(r.status) },
        { label: "started", value: (r) => fmtTime(r.started_at) },
        { label: "duration", value: (r) => fmtDuration(durationOf(r)) },
      ], runs, { id: "compare-runs" }),
      ...evalSections(runs),
      el("h2", {}, "Params that differ"),
      params.length === 0 ? el("p", { className: "muted" }, "none: every param is the same")
        : el("div", { className: "table-scroll" },
          table([{ label: "param", value: (key) => key }].concat(runColumns), params,
            { id: "compare-params" })));
  }

  function compareGroups(runs) {
    const keys = [...new Set(runs.flatMap((r) => r.metric_keys || []))].sort(byNaturalOrder);
    return keys.map((key) => ({
      id: "key:" + key,
      title: key,
      series: runs.filter((r) => (r.metric_keys || []).includes(key)).map((r) => ({
        label: runLabel(r), runId: r.run_id, key, start: r.started_at,
        tokens: (r.metric_keys || []).includes(nmt.TOKENS_KEY),
      })),
    }));
  }

  nmt.pages.compare = async function (arg, gen) {
    const ids = [...new Set(arg.split(",").filter((s) => s !== "").map(nmt.parseRunId))];
    if (ids.length === 0) throw new Error("no runs to compare: #/compare/<id>,<id>,...");
    let runs = await Promise.all(ids.map(nmt.fetchRun));
    if (gen !== nmt.generation()) return;
    const head = el("div");
    const curveBox = el("section", {}, el("h2", {}, "Learning curves"));
    document.getElementById("main").append(head, curveBox);
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
        runs = await Promise.all(ids.map(nmt.fetchRun));
        await draw();
        return running();
      });
    }
  };
})(window.nmt);
