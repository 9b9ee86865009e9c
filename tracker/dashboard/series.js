// The series math of the dashboard's charts, apart from drawing: which chart a metric key goes
// to, TensorBoard's debiased smoothing, the x of a point on the step, time or tokens axis, and
// the merge of a chart's series into one table for dygraphs; and the fetch of many series in few
// requests (GET /api/series).
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

  // GET /api/series answers at most this many runs per request (tracker/api/limits.h); its key
  // lists are kept short enough for a URL. A page's series go in requests of about
  // SERIES_PER_GROUP series each (a group of panels): the daemon reads the next group while
  // it writes the answer of one, and the browser parses one while the next is on its way.
  const SERIES_MAX_RUNS = 50;
  const SERIES_MAX_KEYS_TEXT = 2000;
  const SERIES_PER_GROUP = 50;

  // With ?series=single in the page's URL, one request per series (GET /api/runs/{run}/metrics),
  // so that the benchmark can time both ways.
  nmt.SERIES_BATCHED = new URLSearchParams(location.search).get("series") !== "single";

  // `keys` in lists of at most `count` whose comma-joined text fits a URL.
  function keyChunks(keys, count) {
    const chunks = [];
    let chunk = [];
    let length = 0;
    for (const key of keys) {
      if (chunk.length > 0 && (length + key.length + 1 > SERIES_MAX_KEYS_TEXT ||
        chunk.length === count)) {
        chunks.push(chunk);
        chunk = [];
        length = 0;
      }
      chunk.push(key);
      length += key.length + 1;
    }
    return chunk.length > 0 ? chunks.concat([chunk]) : chunks;
  }

  // The points of each {runId, key} in `pairs`, fetched by GET /api/series per group of keys
  // (and of runs, past SERIES_MAX_RUNS); a key holding a comma, which no key list can name, by its
  // own series route. Each answer's part, a Map "runId key" -> points, goes to arrived(part) as it
  // comes (a pair the daemon did not answer has no points), so charts can be drawn meanwhile.
  nmt.fetchSeriesOf = async function (pairs, maxPoints, arrived) {
    const runs = [...new Set(pairs.map((p) => p.runId))];
    const keys = [...new Set(pairs.map((p) => p.key))].sort(byNaturalOrder);
    const perRequest = Math.min(SERIES_MAX_RUNS, runs.length);
    const keysPerRequest = Math.max(1, Math.floor(SERIES_PER_GROUP / perRequest));
    const requests = [];
    for (const chunk of keyChunks(keys.filter((k) => !k.includes(",")), keysPerRequest)) {
      for (let i = 0; i < runs.length; i += perRequest) {
        const query = new URLSearchParams({ runs: runs.slice(i, i + perRequest).join(","),
          keys: chunk.join(","), max_points: String(maxPoints) });
        const asked = runs.slice(i, i + perRequest).flatMap((run) => chunk.map((key) => run + " " + key));
        requests.push(nmt.api("/api/series?" + query.toString()).then((answer) => {
          const part = new Map(asked.map((id) => [id, []]));
          for (const s of answer.series) part.set(s.run_id + " " + s.key, s.points);
          arrived(part);
        }));
      }
    }
    requests.push(nmt.fetchSeriesOneByOne(pairs.filter((p) => p.key.includes(",")), maxPoints, arrived));
    await Promise.all(requests);
  };

  // The same as fetchSeriesOf, one request per series (GET /api/runs/{run}/metrics); the browser
  // queues what exceeds its connections.
  nmt.fetchSeriesOneByOne = async function (pairs, maxPoints, arrived) {
    await Promise.all(pairs.map(async (p) => {
      const query = new URLSearchParams({ key: p.key, max_points: String(maxPoints) });
      const answer = await nmt.api(`/api/runs/${encodeURIComponent(p.runId)}/metrics?${query}`);
      arrived(new Map([[p.runId + " " + p.key, answer.points || []]]));
    }));
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
