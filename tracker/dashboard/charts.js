// Learning curves for the dashboard, drawn with dygraphs. The daemon downsamples each series
// (max_points about a chart's width); here the series of one chart are merged into one table,
// one column per series, against step, seconds since the run started, or tokens seen (when the
// runs log the cumulative count train/tokens). Charts are updated in place while a run trains,
// so a zoom (drag; double-click resets) survives the refresh.
// Smoothing is TensorBoard's debiased exponential moving average; the raw series stays drawn
// faintly behind the smoothed one, and a downsampled bucket's min and max are shaded. Both are
// drawn here on dygraphs' underlay, with the y range widened to hold them: dygraphs' own
// customBars costs about six times the drawing time of plain series.
// A panel whose values are all zero (train/skipped_updates, mostly) collapses to one line.
// Titles and read-outs are set with textContent: dygraphs writes its title and axis-label options
// as HTML, so no text from the API goes there.
"use strict";

window.nmt = window.nmt || {};

(function (nmt) {
  // The most points of a series fetched for a chart; a chart asks for about its width in pixels.
  nmt.MAX_POINTS = 1000;
  const MIN_POINTS = 200;
  const CHART_MIN_WIDTH = 520; // .charts in style.css: columns of at least this many pixels
  const Y_AXIS_WIDTH = 80; // the y axis' labels (axisLabelWidth below) and padding
  // The cumulative token count that the "tokens" x axis reads; offered only when every run drawn
  // logs it (the trainer logs train/tokens_per_s, a rate, which is no axis).
  nmt.TOKENS_KEY = "train/tokens";
  // What the user chose, kept across pages: x axis, smoothing weight, log-y per panel id.
  nmt.chartPrefs = nmt.chartPrefs || { xMode: "step", smoothing: 0, logY: {} };

  const COLORS = ["#1f5fbf", "#d1495b", "#2a9d8f", "#e9a03b", "#7b4bb7", "#5c6b7a", "#c2569b",
    "#3f8f3f", "#9c6b30", "#1b998b"];
  const X_MODES = [["step", "x: step"], ["time", "x: seconds since start"], ["tokens", "x: tokens"]];
  const X_LABELS = { step: "step", time: "seconds since start", tokens: "tokens" };

  function node(tag, className, text) {
    const n = document.createElement(tag);
    if (className) n.className = className;
    if (text !== undefined) n.textContent = text;
    return n;
  }

  function fmtSeconds(v) {
    const a = Math.abs(v);
    if (a < 120) return nmt.fmtAxis(v) + "s";
    if (a < 7200) return nmt.fmtAxis(v / 60) + "m";
    return nmt.fmtAxis(v / 3600) + "h";
  }

  const fmtX = (xMode) => (xMode === "time" ? fmtSeconds : nmt.fmtCount);

  // The canvas position of a point as graph.toDomCoords() computes it (x linear, y linear or
  // logarithmic), without its cost per call: the underlay places every point of every series.
  function domCoords(graph) {
    const area = graph.getArea();
    const [x0, x1] = graph.xAxisRange();
    const [y0, y1] = graph.yAxisRange();
    const log = graph.getOption("logscale");
    const scale = log ? Math.log10 : (v) => v;
    const top = scale(y1);
    const span = top - scale(y0);
    return {
      x: (x) => area.x + ((x - x0) / (x1 - x0)) * area.w,
      y: (y) => area.y + ((top - scale(y)) / span) * area.h,
    };
  }

  // The charts of one page, under `container`, with the x-axis choice and the smoothing slider.
  // setGroups() says what to draw:
  // [{id, title, series: [{label, runId, key, start, tokens (bool: the run logs TOKENS_KEY)}]}].
  class CurveView {
    constructor(container) {
      this.groups = [];
      this.points = new Map(); // "runId key" -> points
      this.charts = new Map(); // group id -> {box, plot, readout, graph, ...}
      window.nmtRawDrawn = {};
      window.nmtCurveMs = { refresh: 0, draw: 0 }; // the last refresh() and draw(), for the benchmark
      this.xSelect = node("select", "x-axis");
      this.xSelect.addEventListener("change", () => {
        nmt.chartPrefs.xMode = this.xSelect.value;
        this.draw();
      });
      this.slider = node("input", "smoothing");
      Object.assign(this.slider, { type: "range", min: "0", max: "0.99", step: "0.01" });
      this.slider.value = String(nmt.chartPrefs.smoothing);
      this.sliderValue = node("output", "smoothing-value", String(nmt.chartPrefs.smoothing));
      this.slider.addEventListener("input", () => {
        nmt.chartPrefs.smoothing = Number(this.slider.value);
        this.sliderValue.textContent = this.slider.value;
        this.draw();
      });
      const smoothing = node("label", "smoothing-label", "smoothing ");
      smoothing.append(this.slider, " ", this.sliderValue);
      const controls = node("div", "chart-controls");
      controls.append(this.xSelect, smoothing);
      this.grid = node("div", "charts");
      container.append(controls, this.grid);
    }

    setGroups(groups) {
      this.groups = groups;
    }

    // Fetches every series of every group, and train/tokens of the runs that log it: a request
    // per group of panels (nmt.fetchSeriesOf), or one per series with ?series=single.
    async refresh() {
      const started = performance.now();
      try {
        await this.fetchAll();
      } finally {
        window.nmtCurveMs.refresh = performance.now() - started;
      }
    }

    // A chart is drawn as soon as its series are in (the next draw() leaves it as it is), so
    // drawing the first charts overlaps fetching the others.
    async fetchAll() {
      const wanted = new Map();
      const needs = new Map(); // group id -> the series it draws, and the token counts they use
      for (const g of this.groups) {
        const ids = [];
        for (const s of g.series) {
          wanted.set(s.runId + " " + s.key, s);
          ids.push(s.runId + " " + s.key);
          if (s.tokens) {
            wanted.set(s.runId + " " + nmt.TOKENS_KEY, { runId: s.runId, key: nmt.TOKENS_KEY });
            ids.push(s.runId + " " + nmt.TOKENS_KEY);
          }
        }
        needs.set(g.id, ids);
      }
      for (const g of this.groups) this.chartFor(g); // in the groups' order, whichever comes first
      const points = new Map();
      const settings = this.settings();
      const early = new Set();
      const arrived = (part) => {
        for (const [id, list] of part) points.set(id, list);
        if (this.destroyed) return;
        for (const g of this.groups) {
          if (!early.has(g.id) && needs.get(g.id).every((id) => points.has(id))) {
            this.drawGroup(g, points, settings);
            early.add(g.id);
          }
        }
      };
      const get = nmt.SERIES_BATCHED ? nmt.fetchSeriesOf : nmt.fetchSeriesOneByOne;
      if (wanted.size > 0) await get([...wanted.values()], this.maxPoints(), arrived);
      this.points = points;
      this.drawnEarly = early;
      this.drawnWith = settings;
    }

    // About one point per pixel of a chart's plot area (its width less the y axis): what the
    // chart can show.
    maxPoints() {
      const width = this.grid.clientWidth || nmt.MAX_POINTS;
      const columns = Math.max(1, Math.floor(width / CHART_MIN_WIDTH));
      const plot = Math.ceil(width / columns) - Y_AXIS_WIDTH;
      return Math.max(MIN_POINTS, Math.min(nmt.MAX_POINTS, plot));
    }

    // The x axes every drawn series can use: tokens only when each run logs its token count.
    xModes() {
      const all = this.groups.flatMap((g) => g.series);
      const tokens = all.length > 0 && all.every((s) => s.tokens);
      return X_MODES.filter(([mode]) => mode !== "tokens" || tokens);
    }

    draw() {
      const started = performance.now();
      this.drawAll();
      window.nmtCurveMs.draw = performance.now() - started;
    }

    // The x axis and smoothing to draw with; the x-axis menu offers what the groups allow.
    settings() {
      const modes = this.xModes();
      if (this.xSelect.options.length !== modes.length) {
        this.xSelect.replaceChildren(...modes.map(([value, label]) => {
          const option = node("option", "", label);
          option.value = value;
          return option;
        }));
      }
      const wanted = nmt.chartPrefs.xMode;
      const xMode = modes.some(([m]) => m === wanted) ? wanted : "step";
      this.xSelect.value = xMode;
      return { xMode, smoothing: nmt.chartPrefs.smoothing };
    }

    // Every chart; those the last refresh drew with the same settings are left as they are.
    drawAll() {
      const settings = this.settings();
      const same = this.drawnWith && this.drawnWith.xMode === settings.xMode &&
        this.drawnWith.smoothing === settings.smoothing;
      const seen = new Set();
      for (const g of this.groups) {
        seen.add(g.id);
        if (!(same && this.drawnEarly && this.drawnEarly.has(g.id))) {
          this.drawGroup(g, this.points, settings);
        }
      }
      this.drawnEarly = null;
      for (const [id, chart] of this.charts) {
        if (!seen.has(id)) this.dropChart(id, chart);
      }
    }

    drawGroup(g, points, { xMode, smoothing }) {
      const chart = this.chartFor(g);
      chart.series = g.series.map((s) => nmt.prepareSeries({
        points: points.get(s.runId + " " + s.key) || [],
        start: s.start,
        tokens: points.get(s.runId + " " + nmt.TOKENS_KEY),
      }, xMode, smoothing));
      chart.labels = g.series.map((s) => s.label);
      chart.smoothing = smoothing;
      chart.xMode = xMode;
      this.drawChart(g, chart);
    }

    chartFor(group) {
      let chart = this.charts.get(group.id);
      if (!chart) {
        chart = { box: node("div", "chart-box"), graph: null };
        chart.box.dataset.chart = group.id;
        chart.head = node("div", "chart-head");
        chart.title = node("h3", "", group.title);
        chart.logLabel = node("label", "log-y-label", " log y");
        chart.logBox = node("input", "log-y");
        chart.logBox.type = "checkbox";
        chart.logLabel.prepend(chart.logBox);
        chart.logBox.addEventListener("change", () => {
          const log = chart.logBox.checked;
          nmt.chartPrefs.logY[group.id] = log;
          chart.userZoomY = false; // a zoom on the other scale means nothing on this one
          if (chart.graph) chart.graph.updateOptions(this.yOptions(chart, log));
        });
        chart.head.append(chart.title, chart.logLabel);
        chart.plot = node("div", "chart");
        // dygraphs resets its zoom on a double click; the y range is this view's again.
        chart.plot.addEventListener("dblclick", () => {
          chart.userZoomY = false;
          if (chart.graph) chart.graph.updateOptions(this.yOptions(chart, chart.logBox.checked));
        });
        chart.readout = node("div", "chart-readout");
        chart.box.append(chart.head, chart.plot, chart.readout);
        this.grid.append(chart.box);
        this.charts.set(group.id, chart);
      }
      return chart;
    }

    // The hover read-out: every series' value at x (its last point at or before x), smoothed and
    // raw; without x, at each series' last point.
    showReadout(chart, x) {
      const rows = chart.labels.map((label, i) => {
        const s = chart.series[i];
        const at = x === undefined ? s.xs.length - 1 : nmt.indexAtOrBefore(s.xs, x);
        const row = node("div", "readout-row");
        row.dataset.series = label;
        const swatch = node("span", "swatch");
        swatch.style.background = COLORS[i % COLORS.length];
        const value = node("span", "readout-value", at < 0 ? "-" : nmt.fmtNumber(s.smooth[at]));
        row.append(swatch, node("span", "readout-label", label + " "), value);
        if (at >= 0 && chart.smoothing > 0) {
          row.append(node("span", "readout-raw", " raw " + nmt.fmtNumber(s.raw[at])));
        }
        return row;
      });
      const where = x === undefined ? "last" : `${X_LABELS[chart.xMode]} ${fmtX(chart.xMode)(x)}`;
      const head = node("div", "readout-x", where);
      chart.readout.dataset.x = x === undefined ? "" : String(x);
      chart.readout.replaceChildren(head, ...rows);
    }

    // Behind the drawn series: each downsampled bucket's min-max band, and with smoothing the
    // raw series, faint. Counts the raw points it drew, for the tests.
    drawUnderlay(chart, id, ctx, area, graph) {
      const dom = domCoords(graph);
      let drawn = 0;
      ctx.save();
      ctx.beginPath();
      ctx.rect(area.x, area.y, area.w, area.h);
      ctx.clip();
      chart.series.forEach((s, i) => {
        ctx.fillStyle = ctx.strokeStyle = COLORS[i % COLORS.length];
        if (s.low.some((v, j) => v !== s.high[j])) {
          ctx.globalAlpha = 0.15;
          ctx.beginPath();
          s.xs.forEach((x, j) => {
            if (j === 0) ctx.moveTo(dom.x(x), dom.y(s.high[j]));
            else ctx.lineTo(dom.x(x), dom.y(s.high[j]));
          });
          for (let j = s.xs.length - 1; j >= 0; j -= 1) {
            ctx.lineTo(dom.x(s.xs[j]), dom.y(s.low[j]));
          }
          ctx.closePath();
          ctx.fill();
        }
        if (chart.smoothing > 0) {
          ctx.globalAlpha = 0.28;
          ctx.lineWidth = 1;
          ctx.beginPath();
          s.xs.forEach((x, j) => {
            if (j === 0) ctx.moveTo(dom.x(x), dom.y(s.raw[j]));
            else ctx.lineTo(dom.x(x), dom.y(s.raw[j]));
            drawn += 1;
          });
          ctx.stroke();
        }
      });
      ctx.restore();
      window.nmtRawDrawn[id] = drawn;
    }

    // The y range that holds the drawn values, the bands and the raw series, padded as dygraphs
    // pads its own; left to the user while they have zoomed in on y.
    yOptions(chart, log) {
      if (chart.userZoomY) return { logscale: log };
      let lo = Infinity;
      let hi = -Infinity;
      for (const s of chart.series) {
        for (const list of [s.low, s.high, s.smooth]) {
          for (const v of list) {
            if (v < lo) lo = v;
            if (v > hi) hi = v;
          }
        }
      }
      const pad = hi > lo ? (hi - lo) * 0.05 : Math.abs(hi) * 0.1 || 1;
      const ratio = Math.pow(hi / lo, 0.05);
      chart.range = log ? [lo / ratio, hi * ratio] : [lo - pad, hi + pad];
      return { logscale: log, valueRange: chart.range };
    }

    drawChart(group, chart) {
      const id = group.id;
      const values = chart.series.flatMap((s) => s.low.concat(s.high));
      const collapse = values.length > 0 && values.every((v) => v === 0);
      chart.box.classList.toggle("collapsed", collapse);
      chart.box.dataset.collapsed = String(collapse);
      if (values.length === 0 || collapse) {
        // dygraphs refuses an empty table; an all-zero panel says so in one line.
        if (chart.graph) {
          chart.graph.destroy();
          chart.graph = null;
          delete window.nmtCharts[id];
        }
        const points = chart.series.reduce((n, s) => n + s.xs.length, 0);
        chart.plot.textContent = collapse ? `all zero (${points} points)` : "no points yet";
        chart.readout.replaceChildren();
        chart.logLabel.hidden = true;
        return;
      }
      const positive = values.every((v) => v > 0) && chart.series.every((s) => s.smooth.every((v) => v > 0));
      chart.logLabel.hidden = !positive;
      chart.logBox.checked = positive && nmt.chartPrefs.logY[id] === true;
      const options = Object.assign(this.yOptions(chart, chart.logBox.checked), {
        file: nmt.mergeSeries(chart.series),
        labels: [X_LABELS[chart.xMode]].concat(chart.labels),
        xlabel: X_LABELS[chart.xMode],
        colors: chart.labels.map((_, i) => COLORS[i % COLORS.length]),
        axes: {
          x: { axisLabelFormatter: fmtX(chart.xMode) },
          y: { axisLabelFormatter: nmt.fmtAxis, axisLabelWidth: 60 },
        },
      });
      this.showReadout(chart);
      if (chart.graph) {
        if (chart.drawnXMode !== chart.xMode) {
          options.dateWindow = null; // a zoom on the other axis means nothing on this one
        }
        chart.drawnXMode = chart.xMode;
        chart.graph.updateOptions(options);
        return;
      }
      chart.drawnXMode = chart.xMode;
      chart.plot.textContent = "";
      chart.graph = new Dygraph(chart.plot, options.file, Object.assign(options, {
        connectSeparatedPoints: true,
        legend: "never",
        strokeWidth: 1.6,
        highlightSeriesOpts: { strokeWidth: 2.2 },
        underlayCallback: (ctx, area, graph) => this.drawUnderlay(chart, id, ctx, area, graph),
        highlightCallback: (event, x) => this.showReadout(chart, x),
        // A drag that changed the y range is the user's zoom: kept until a double click.
        zoomCallback: (minX, maxX, yRanges) => {
          const r = yRanges && yRanges[0];
          const span = chart.range ? Math.abs(chart.range[1] - chart.range[0]) : 0;
          if (r && chart.range && (Math.abs(r[0] - chart.range[0]) > 1e-6 * span ||
            Math.abs(r[1] - chart.range[1]) > 1e-6 * span)) chart.userZoomY = true;
        },
        unhighlightCallback: () => this.showReadout(chart),
      }));
      window.nmtCharts[id] = chart.graph;
    }

    dropChart(id, chart) {
      if (chart.graph) chart.graph.destroy();
      chart.box.remove();
      this.charts.delete(id);
      delete window.nmtCharts[id];
      delete window.nmtRawDrawn[id];
    }

    destroy() {
      this.destroyed = true;
      for (const [id, chart] of this.charts) this.dropChart(id, chart);
    }
  }

  nmt.CurveView = CurveView;
})(window.nmt);
