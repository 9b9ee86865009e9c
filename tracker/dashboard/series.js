// The series math of the dashboard's charts, apart from drawing: which chart a metric key goes
// to, TensorBoard's debiased smoothing, the x of a point on the step, time or tokens axis, and
// the merge of a chart's series into one table for dygraphs.
"use strict";

window.nmt = window.nmt || {};

(function (nmt) {
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

  // TensorBoard's smoothing: an exponential moving average whose start is debiased (divided by
  // the weight the average has gathered), so the first points are not pulled towards zero.
  nmt.ema = function (values, weight) {
    if (!(weight > 0)) return values.slice();
    let last = 0;
    let gathered = 0;
    return values.map((v) => {
      if (!Number.isFinite(v)) return v;
      last = last * weight + (1 - weight) * v;
      gathered = gathered * weight + (1 - weight);
      return last / gathered;
    });
  };

  // The value of a step-ordered series at `step`, interpolated between its points; null outside.
  function interpolate(points, step) {
    let lo = 0;
    let hi = points.length - 1;
    if (hi < 0 || step < points[0].step || step > points[hi].step) return null;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (points[mid].step <= step) lo = mid;
      else hi = mid - 1;
    }
    const a = points[lo];
    const b = points[Math.min(lo + 1, points.length - 1)];
    if (a.step === step || b.step === a.step) return a.value;
    return a.value + ((b.value - a.value) * (step - a.step)) / (b.step - a.step);
  }

  // One series ready to draw: xs ascending with raw value, bucket min and max, and smoothed value.
  // `s` is {points, start, tokens}; `tokens` the run's train/tokens points for the tokens axis.
  nmt.prepareSeries = function (s, xMode, smoothing) {
    const first = s.points.length > 0 ? s.points[0].time : 0;
    const origin = typeof s.start === "number" ? s.start : first;
    const out = { xs: [], raw: [], low: [], high: [], smooth: [] };
    for (const p of s.points) {
      let x = p.step;
      if (xMode === "time") x = p.time - origin;
      else if (xMode === "tokens") x = interpolate(s.tokens || [], p.step);
      if (typeof x !== "number" || !Number.isFinite(x) || typeof p.value !== "number") continue;
      out.xs.push(x);
      out.raw.push(p.value);
      out.low.push(typeof p.min === "number" ? p.min : p.value);
      out.high.push(typeof p.max === "number" ? p.max : p.value);
    }
    out.smooth = nmt.ema(out.raw, smoothing);
    return out;
  };

  // One table for dygraphs: rows [x, value or null, ...] sorted by x, the values smoothed.
  nmt.mergeSeries = function (prepared) {
    const rows = new Map();
    prepared.forEach((s, column) => {
      s.xs.forEach((x, i) => {
        let row = rows.get(x);
        if (!row) {
          row = [x].concat(prepared.map(() => null));
          rows.set(x, row);
        }
        row[column + 1] = s.smooth[i];
      });
    });
    return [...rows.values()].sort((a, b) => a[0] - b[0]);
  };

  // The last index of ascending `xs` at or before x, or -1.
  nmt.indexAtOrBefore = function (xs, x) {
    let lo = 0;
    let hi = xs.length - 1;
    if (hi < 0 || xs[0] > x) return -1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (xs[mid] <= x) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
})(window.nmt);
