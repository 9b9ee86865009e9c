// Learning curves for the dashboard, drawn with dygraphs. The daemon downsamples each series
// (max_points about a chart's width); here the series of one chart are merged into one table,
// one column per series, against step or seconds since the run started. Charts are updated in
// place while a run trains, so a zoom (drag; double-click resets) survives the refresh.
// Titles are set with textContent: dygraphs writes its title and axis-label options as HTML, so
// no text from the API goes there (its legend escapes series labels itself).
"use strict";

window.nmt = window.nmt || {};

(function (nmt) {
  // Series fetched per request; about the pixel width of a chart.
  nmt.MAX_POINTS = 1000;

  // How the run page groups its metric keys into charts; the first group whose test matches takes
  // a key, and keys no group takes get a chart each.
  const METRIC_GROUPS = [
    { id: "loss", title: "Loss", test: (k) => /(^|\/)loss$/.test(k) },
    { id: "ppl", title: "Perplexity", test: (k) => /(^|\/)(ppl|perplexity)$/.test(k) },
    { id: "bleu", title: "BLEU", test: (k) => /(^|\/)bleu$/.test(k) },
    { id: "lr", title: "Learning rate", test: (k) => /(^|\/)(lr|learning_rate)$/.test(k) },
    {
      id: "rank_tokens_per_s",
      title: "Tokens/s per rank",
      test: (k) => /(^|\/)rank\d+\/tokens_per_s$/.test(k),
    },
    { id: "tokens_per_s", title: "Tokens/s", test: (k) => /(^|\/)tokens_per_s$/.test(k) },
  ];

  const byNaturalOrder = (a, b) => a.localeCompare(b, undefined, { numeric: true });

  // [{id, title, keys}] in METRIC_GROUPS order, then one group per remaining key.
  nmt.groupMetricKeys = function (keys) {
    const groups = METRIC_GROUPS.map((g) => ({ id: g.id, title: g.title, keys: [] }));
    const others = [];
    for (const key of [...keys].sort(byNaturalOrder)) {
      const index = METRIC_GROUPS.findIndex((g) => g.test(key));
      if (index >= 0) {
        groups[index].keys.push(key);
      } else {
        others.push({ id: "key:" + key, title: key, keys: [key] });
      }
    }
    return groups.filter((g) => g.keys.length > 0).concat(others);
  };

  // One table for dygraphs: rows [x, [min, value, max] or null, ...] sorted by x. `series` is
  // [{points, start}]; `start` (seconds) is the origin of the time axis, else the first point.
  nmt.mergeSeries = function (series, xMode) {
    const rows = new Map();
    series.forEach((s, column) => {
      const first = s.points.length > 0 ? s.points[0].time : 0;
      const origin = typeof s.start === "number" ? s.start : first;
      for (const p of s.points) {
        const x = xMode === "time" ? p.time - origin : p.step;
        if (typeof x !== "number" || !Number.isFinite(x) || typeof p.value !== "number") {
          continue;
        }
        let row = rows.get(x);
        if (!row) {
          row = [x].concat(series.map(() => null));
          rows.set(x, row);
        }
        const low = typeof p.min === "number" ? p.min : p.value;
        const high = typeof p.max === "number" ? p.max : p.value;
        row[column + 1] = [low, p.value, high];
      }
    });
    return [...rows.values()].sort((a, b) => a[0] - b[0]);
  };

  // The charts of one page, under `container`, with a step/time toggle. `fetchSeries(runId, key)`
  // answers a promise of points. setGroups() says what to draw:
  // [{id, title, series: [{label, runId, key, start}]}].
  class CurveView {
    constructor(container, fetchSeries) {
      this.fetchSeries = fetchSeries;
      this.groups = [];
      this.points = new Map(); // "runId key" -> points
      this.charts = new Map(); // group id -> {box, plot, legend, graph}
      const toggle = document.createElement("select");
      toggle.className = "x-axis";
      for (const [value, label] of [
        ["step", "x: step"],
        ["time", "x: seconds since start"],
      ]) {
        const option = document.createElement("option");
        option.value = value;
        option.textContent = label;
        toggle.append(option);
      }
      toggle.value = nmt.xMode || "step";
      toggle.addEventListener("change", () => {
        nmt.xMode = toggle.value;
        this.draw();
      });
      this.grid = document.createElement("div");
      this.grid.className = "charts";
      container.append(toggle, this.grid);
    }

    setGroups(groups) {
      this.groups = groups;
    }

    // Fetches every series of every group (the browser queues what exceeds its connections).
    async refresh() {
      const wanted = new Map();
      for (const g of this.groups) {
        for (const s of g.series) {
          wanted.set(s.runId + " " + s.key, s);
        }
      }
      const fetched = await Promise.all(
        [...wanted.entries()].map(async ([id, s]) => [id, await this.fetchSeries(s.runId, s.key)])
      );
      this.points = new Map(fetched);
    }

    draw() {
      const xMode = nmt.xMode || "step";
      const seen = new Set();
      for (const g of this.groups) {
        seen.add(g.id);
        const chart = this.chartFor(g);
        const series = g.series.map((s) => ({
          points: this.points.get(s.runId + " " + s.key) || [],
          start: s.start,
        }));
        const rows = nmt.mergeSeries(series, xMode);
        const labels = [xMode === "time" ? "seconds" : "step"].concat(g.series.map((s) => s.label));
        this.drawChart(g.id, chart, labels, rows, xMode);
      }
      for (const [id, chart] of this.charts) {
        if (!seen.has(id)) {
          this.dropChart(id, chart);
        }
      }
    }

    chartFor(group) {
      let chart = this.charts.get(group.id);
      if (!chart) {
        chart = { box: document.createElement("div"), graph: null };
        chart.box.className = "chart-box";
        chart.box.dataset.chart = group.id;
        const title = document.createElement("h3");
        title.textContent = group.title;
        chart.plot = document.createElement("div");
        chart.plot.className = "chart";
        chart.legend = document.createElement("div");
        chart.legend.className = "chart-legend";
        chart.box.append(title, chart.plot, chart.legend);
        this.grid.append(chart.box);
        this.charts.set(group.id, chart);
      }
      return chart;
    }

    drawChart(id, chart, labels, rows, xMode) {
      if (rows.length === 0) {
        // dygraphs refuses an empty table; say so instead.
        if (chart.graph) {
          chart.graph.destroy();
          chart.graph = null;
          delete window.nmtCharts[id];
        }
        chart.plot.textContent = "no points yet";
        return;
      }
      const options = {
        file: rows,
        labels: labels,
        xlabel: xMode === "time" ? "seconds since start" : "step",
      };
      if (chart.graph) {
        if (chart.xMode !== xMode) {
          options.dateWindow = null; // a zoom on the other axis means nothing on this one
        }
        chart.xMode = xMode;
        chart.graph.updateOptions(options);
        return;
      }
      chart.xMode = xMode;
      chart.plot.textContent = "";
      chart.graph = new Dygraph(chart.plot, rows, {
        labels: labels,
        xlabel: options.xlabel,
        customBars: true, // downsampled buckets carry their min and max
        connectSeparatedPoints: true,
        legend: "always",
        labelsDiv: chart.legend,
        labelsSeparateLines: false,
        strokeWidth: 1.4,
        highlightSeriesOpts: { strokeWidth: 2.2 },
        labelsKMB: true,
      });
      window.nmtCharts[id] = chart.graph;
    }

    dropChart(id, chart) {
      if (chart.graph) {
        chart.graph.destroy();
      }
      chart.box.remove();
      this.charts.delete(id);
      delete window.nmtCharts[id];
    }

    destroy() {
      for (const [id, chart] of this.charts) {
        this.dropChart(id, chart);
      }
    }
  }

  nmt.CurveView = CurveView;
})(window.nmt);
