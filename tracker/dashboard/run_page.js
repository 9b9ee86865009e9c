// The run page (#/run/<id>): provenance, learning curves grouped by kind (loss, perplexity,
// BLEU, learning rate, tokens/s, per-rank tokens/s), evals with their signatures, params,
// attempts, artifacts (Markdown and SVG ones viewable in the page) and the resolved config.
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

  // The newest attempt's provenance, one row per key; where an earlier attempt had another value
  // (another GPU, a moved directory's command line), it is named beside.
  function provenanceRows(attempts) {
    const recorded = attempts.filter((a) => a.provenance && Object.keys(a.provenance).length > 0);
    if (recorded.length === 0) return [];
    const newest = recorded[recorded.length - 1];
    return Object.keys(newest.provenance).sort().map((key) => ({
      key,
      value: newest.provenance[key],
      earlier: recorded.slice(0, -1)
        .filter((a) => a.provenance[key] !== undefined && a.provenance[key] !== newest.provenance[key])
        .map((a) => `attempt ${a.attempt}: ${a.provenance[key]}`).join("; "),
    }));
  }

  function drawDetails(box, run, viewer) {
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
        timeField("started_at", "started"), timeField("ended_at", "ended"),
        timeField("last_contact_at", "last contact"), field("host"),
        field("world_size"), field("slurm_job_id"), field("slurm_array_id"), field("run_dir")],
      "attempts"),
      ...section("Provenance", provenanceRows(attempts), [field("key"), field("value"),
        { label: "earlier attempts", value: (row) => row.earlier }], "provenance"),
      ...section("Artifacts", run.artifacts || [], ["kind", "path", "step", "averaged_from"]
        .map(field).concat([timeField("created_at", "time"),
          { label: "", value: (a) => (a.has_content ? viewButton(viewer, run, a) : "") }]), "artifacts"),
      viewer,
      el("h2", {}, "Config"),
      nmt.missing(run.config) ? el("p", { className: "muted" }, "none")
        : el("pre", { className: "config" }, run.config));
  }

  // ---- artifacts ----------------------------------------------------------------------------

  const contentPath = (run, a) =>
    `/api/runs/${encodeURIComponent(run.run_id)}/artifacts/${encodeURIComponent(a.artifact_id)}/content`;

  // An SVG through <img>, where its scripts never run; Markdown through the renderer of
  // markdown.js (text only, never markup); anything else as plain text.
  async function viewArtifact(viewer, run, a) {
    const path = contentPath(run, a);
    const title = el("h3", {}, a.path);
    viewer.dataset.artifactId = a.artifact_id;
    viewer.dataset.shown = "";
    if (/\.svg$/i.test(a.path)) {
      viewer.replaceChildren(title, el("img", { className: "artifact-svg", src: path, alt: a.path }));
      viewer.dataset.shown = "svg";
      viewer.scrollIntoView({ block: "start" });
      return;
    }
    viewer.replaceChildren(title, el("p", { className: "muted" }, "loading"));
    const answer = await fetch(path, { credentials: "same-origin", cache: "no-store" });
    if (!answer.ok) throw new Error(`${path}: ${answer.status} ${answer.statusText}`);
    const type = answer.headers.get("Content-Type") || "";
    let body;
    if (type.startsWith("image/svg+xml")) {
      body = el("img", { className: "artifact-svg", src: path, alt: a.path });
      viewer.dataset.shown = "svg";
    } else if (type.startsWith("text/markdown") || /\.(md|markdown)$/i.test(a.path)) {
      body = nmt.renderMarkdown(await answer.text());
      viewer.dataset.shown = "markdown";
    } else {
      body = el("pre", { className: "config" }, await answer.text());
      viewer.dataset.shown = "text";
    }
    viewer.replaceChildren(title, body);
    viewer.scrollIntoView({ block: "start" });
  }

  function viewButton(viewer, run, a) {
    return el("button", {
      type: "button",
      className: "view-artifact",
      dataset: { artifactId: a.artifact_id },
      onclick: () => viewArtifact(viewer, run, a).catch((e) => {
        viewer.replaceChildren(el("p", { className: "muted" }, String(e.message || e)));
      }),
    }, "view");
  }

  function runGroups(run) {
    return nmt.groupMetricKeys(run.metric_keys || []).map((g) => ({
      id: g.id,
      title: g.title,
      series: g.keys.map((key) => ({ label: key, runId: run.run_id, key, start: run.started_at,
        tokens: (run.metric_keys || []).includes(nmt.TOKENS_KEY) })),
    }));
  }

  nmt.pages.run = async function (arg, gen) {
    const id = parseRunId(arg);
    let run = await fetchRun(id);
    if (gen !== nmt.generation()) return;
    const head = el("div");
    const curveBox = el("section", {}, el("h2", {}, "Learning curves"));
    const details = el("div");
    const viewer = el("div", { id: "artifact-view" }); // kept across refreshes
    main().append(head, curveBox, details);
    const curves = nmt.newCurves(curveBox);
    const draw = async () => {
      drawHead(head, run);
      drawDetails(details, run, viewer);
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

  Object.assign(nmt, { parseRunId, fetchRun, sweepLink });
})(window.nmt);
