#!/usr/bin/env python3
"""The dashboard of nmt-trackerd in a real headless Chromium (Debian's chromium, chromium-driver
and python3-selenium), against a real daemon on 127.0.0.1 holding runs this test makes through
the HTTP API: two experiments, a sweep of three rows with the paper's reference figures, a few
hundred points per metric, evals and an artifact.

Checks each page by what it drew: rows of the runs table, dygraphs' own state of every chart
(window.nmtCharts: series labels, rows and values), the sweep table's rows and reference columns,
no error in the browser console; evals on the runs page (columns, sort, filter) and the compare
page (latest per split, history), the runs table's pinned name column at 1400 px and its column
chooser, the smoothing slider (TensorBoard's EMA, raw drawn behind), log-y per panel, axis ticks
in human units, the hover read-out, the all-zero panel collapsed, the tokens axis, Markdown and
SVG artifacts shown without running markup; and that a daemon with --token-file refuses the page
without its token and serves it after /?token=. Nothing waits a fixed time: every wait is for a condition,
with a generous bound. Screenshots of each page go to $NMT_TEST_OUTPUT_DIR, else --output-dir.

  dashboard_test.py --trackerd build/apps/nmt-trackerd [--output-dir DIR]

Exit status 77 (skipped) when Chromium, its driver or Selenium is missing.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request
from pathlib import Path

SKIP = 77
WAIT_S = 60  # bound of every wait for the page; conditions, not sleeps
TRAIN_POINTS = 300  # points of each train/* series of the main run
VALID_EVERY = 10  # valid/ppl and valid/bleu every tenth step

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError:
    webdriver = None

OPTIONS = None  # parsed command line, set in main()


def find_browser():
    """(chromium, chromedriver) paths, or a reason why the test cannot run."""
    if webdriver is None:
        return None, "python3-selenium is not installed (apt-get install python3-selenium)"
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver") or (
        "/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else None)
    if not chromium or not driver:
        return None, "chromium or chromedriver is missing (apt-get install chromium chromium-driver)"
    return (chromium, driver), None


class Daemon:
    """A real nmt-trackerd on 127.0.0.1 with its own database and port file in `folder`."""

    def __init__(self, trackerd, folder, token=None):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        port_file = self.folder / "port"
        args = [trackerd, "--db", str(self.folder / "tracker.db"), "--port", "0",
                "--port-file", str(port_file), "--log-level", "warn"]
        self.token = token
        if token:
            token_file = self.folder / "token"
            token_file.write_text(token + "\n")
            token_file.chmod(0o600)
            args += ["--token-file", str(token_file)]
        self.log = open(self.folder / "daemon.log", "wb")
        self.process = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + WAIT_S
        while not port_file.exists() or not port_file.read_text().strip():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"nmt-trackerd did not start; see {self.folder / 'daemon.log'}")
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{int(port_file.read_text())}"

    def request(self, method, path, body=None, token=True):
        """(status, decoded JSON or text) of one API call."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        if self.token and token:
            req.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(req, timeout=WAIT_S) as answer:
                status, text = answer.status, answer.read().decode()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read().decode()
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text

    def call(self, method, path, body=None):
        status, answer = self.request(method, path, body)
        if status != 200:
            raise RuntimeError(f"{method} {path} answered {status}: {answer}")
        return answer

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


def post_metrics(daemon, run_id, rank, series, t0):
    """`series`: {key: [(step, value)]}; one batch per key, times t0 + step/100 s."""
    for sequence, (key, points) in enumerate(sorted(series.items()), start=1):
        daemon.call("POST", f"/api/runs/{run_id}/metrics", {
            "rank": rank, "sequence": sequence,
            "points": [{"key": key, "step": s, "value": v, "time": t0 + s / 100.0}
                       for s, v in points]})


def make_runs(daemon):
    """The data set: returns {label: run_id} and what the checks expect."""
    ids = {}
    config = "model:\n  d_model: 512\n  heads: 8\ntrain:\n  max_steps: 3000\n"
    ids["main"] = daemon.call("POST", "/api/runs", {
        "experiment": "wmt-base", "name": "base-main", "config": config,
        "git_revision": "abc123def456", "host": "node07", "world_size": 2,
        "slurm_job_id": "4242", "params": {"model.d_model": 512, "train.lr_scale": 1.0,
                                           "data.vocab_size": 37000}})["run_id"]
    # A name with markup: the page must show it as text, never run it.
    ids["other"] = daemon.call("POST", "/api/runs", {
        "experiment": "wmt-base", "name": "<img src=x onerror=\"window.nmtInjected=1\">other",
        "world_size": 1, "params": {"model.d_model": 256, "train.lr_scale": 2.0,
                                    "data.vocab_size": 37000}})["run_id"]
    for label, run_id, points, scale in (("main", ids["main"], TRAIN_POINTS, 1.0),
                                         ("other", ids["other"], 200, 1.3)):
        t0 = time.time()
        steps = [10 * (i + 1) for i in range(points)]
        train = {"train/loss": [(s, scale * (9.0 / (1 + s / 300.0) + 1.2)) for s in steps],
                 "train/lr": [(s, 7e-4 * min(s / 400.0, (400.0 / s) ** 0.5)) for s in steps],
                 "train/rank0/tokens_per_s": [(s, 25000.0 + (s % 70)) for s in steps]}
        valid = [s for s in steps if (s // 10) % VALID_EVERY == 0]
        train["valid/ppl"] = [(s, scale * (4.0 + 300.0 / s)) for s in valid]
        train["valid/bleu"] = [(s, 30.0 - 100.0 / s) for s in valid]
        post_metrics(daemon, run_id, 0, train, t0)
        if label == "main":
            post_metrics(daemon, run_id, 1,
                         {"train/rank1/tokens_per_s": [(s, 24000.0 + (s % 50)) for s in steps]}, t0)
    daemon.call("POST", f"/api/runs/{ids['main']}/evals", {
        "split": "test", "step": 3000, "checkpoint": "checkpoints/averaged.h5", "bleu": 27.3,
        "chrf": 55.1, "signature": "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:nmt-bleu-2.4.0"})
    daemon.call("POST", f"/api/runs/{ids['main']}/evals", {
        "split": "valid", "step": 1500, "checkpoint": "checkpoints/step-1500.h5", "bleu": 22.0,
        "chrf": 50.5, "perplexity": 6.1, "signature": "sig"})
    daemon.call("POST", f"/api/runs/{ids['other']}/evals", {
        "split": "test", "step": 2000, "checkpoint": "checkpoints/averaged.h5", "bleu": 25.1,
        "chrf": 53.0, "signature": "sig"})
    daemon.call("POST", f"/api/runs/{ids['main']}/artifacts", {
        "kind": "checkpoint", "path": "runs/base-main/checkpoints/averaged.h5", "step": 3000,
        "averaged_from": 5})
    daemon.call("PUT", f"/api/runs/{ids['main']}/status", {"status": "finished"})

    # The sweep: three Table 3 rows whose heads vary, each with the paper's reference figures.
    rows = [("A1", 1, 5.29, 24.9), ("A2", 4, 5.00, 25.5), ("A3", 16, 4.91, 25.8)]
    for index, (row, heads, ppl, bleu) in enumerate(rows):
        run_id = daemon.call("POST", "/api/runs", {
            "experiment": "table3", "name": f"table3-{row}", "sweep": "t3", "row_label": row,
            "row_index": index, "world_size": 1,
            "params": {"model.heads": heads, "model.d_model": 512, "model.parameter_count": 65e6,
                       "data.vocab_size": 37000,
                       "reference.ppl": ppl, "reference.bleu": bleu,
                       "reference.params": 65}})["run_id"]
        ids[row] = run_id
        steps = [10 * (i + 1) for i in range(50)]
        post_metrics(daemon, run_id, 0, {
            "valid/ppl": [(s, ppl + 50.0 / s) for s in steps],
            "train/loss": [(s, 4.0 + 10.0 / s) for s in steps]}, time.time())
        daemon.call("POST", f"/api/runs/{run_id}/evals", {
            "split": "valid", "perplexity": ppl + 0.1, "bleu": bleu - 0.4, "signature": "sig"})
        daemon.call("PUT", f"/api/runs/{run_id}/status",
                    {"status": "running" if row == "A3" else "finished"})
    ids["curves"] = make_curves_run(daemon)
    return ids


CURVE_POINTS = 200  # points of each series of the curves run


def noisy_loss(i):
    """train/loss of the curves run: a decay with a jump between neighbouring log lines."""
    return 2.0 + 3.0 / (1 + i / 20.0) + (1.5 if i % 2 else 0.0)


def make_curves_run(daemon):
    """A run for the chart controls: a noisy loss, a perplexity from about 500 down (log-y), an
    all-zero skipped_updates, a learning rate, a series with negative values (no log-y), the
    cumulative token count (the tokens axis) and a test eval of the best BLEU."""
    run_id = daemon.call("POST", "/api/runs", {
        "experiment": "curves", "name": "curves", "world_size": 1,
        "params": {"model.d_model": 512, "data.vocab_size": 37000}})["run_id"]
    steps = [100 * (i + 1) for i in range(CURVE_POINTS)]
    post_metrics(daemon, run_id, 0, {
        "train/loss": [(s, noisy_loss(i)) for i, s in enumerate(steps)],
        "train/ppl": [(s, 5.0 + 500.0 / (1 + i)) for i, s in enumerate(steps)],
        "train/skipped_updates": [(s, 0.0) for s in steps],
        "train/lr": [(s, 7e-4 * min(s / 4000.0, (4000.0 / s) ** 0.5)) for s in steps],
        "train/grad_delta": [(s, (-1.0) ** i * 0.5) for i, s in enumerate(steps)],
        "train/tokens": [(s, 25000.0 * s) for s in steps]}, time.time())
    daemon.call("POST", f"/api/runs/{run_id}/evals", {
        "split": "test", "step": steps[-1], "checkpoint": "checkpoints/averaged.h5", "bleu": 31.4,
        "chrf": 59.2, "signature": "sig"})
    daemon.call("PUT", f"/api/runs/{run_id}/status", {"status": "finished"})
    return run_id


def ema(values, weight):
    """TensorBoard's debiased exponential moving average, the reference for the page's."""
    out, last, gathered = [], 0.0, 0.0
    for v in values:
        last = last * weight + (1 - weight) * v
        gathered = gathered * weight + (1 - weight)
        out.append(last / gathered)
    return out


def output_dir():
    folder = Path(os.environ.get("NMT_TEST_OUTPUT_DIR") or OPTIONS.output_dir)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class DashboardTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        (chromium, driver_path), _ = find_browser()
        cls.folder = tempfile.TemporaryDirectory(prefix="nmt-dashboard-test-")
        cls.daemon = Daemon(OPTIONS.trackerd, Path(cls.folder.name) / "daemon")
        cls.ids = make_runs(cls.daemon)
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1400,1000",
                     f"--user-data-dir={Path(cls.folder.name) / 'chromium'}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        cls.driver = webdriver.Chrome(service=Service(executable_path=driver_path),
                                      options=options)
        cls.driver.set_page_load_timeout(WAIT_S)

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.daemon.stop()
        cls.folder.cleanup()

    # ---- helpers ----

    def open(self, route, daemon=None):
        """Loads the dashboard at `route` and waits until the page says it has drawn it."""
        url = (daemon or self.daemon).url + "/" + route
        self.driver.get("about:blank")  # a fresh page: no state left from the previous one
        self.driver.get(url)
        self.wait_loaded(route)

    def wait_loaded(self, route):
        def loaded(driver):
            error = driver.find_element(By.ID, "error")
            if error.is_displayed():
                raise AssertionError(f"the page shows an error: {error.text}")
            return driver.execute_script("return window.nmtLoaded") == route
        WebDriverWait(self.driver, WAIT_S).until(loaded, f"page {route} never finished loading")

    def charts(self):
        """[{id, labels, rows, xlabel}] of every chart drawn, from dygraphs itself."""
        return self.driver.execute_script("""
            return Object.entries(window.nmtCharts || {}).map(([id, g]) => ({
              id: id, labels: g.getLabels(), rows: g.numRows(), xlabel: g.getOption('xlabel')}));
        """)

    def chart_with(self, label):
        found = [c for c in self.charts() if label in c["labels"]]
        self.assertEqual(len(found), 1, f"one chart with series {label}: {self.charts()}")
        return found[0]

    # Pages of running runs redraw themselves every few seconds, so the DOM is read in one script
    # (atomic in the page) and an element is found again if a redraw replaced it before an action.

    def texts(self, css):
        return self.driver.execute_script(
            "return [...document.querySelectorAll(arguments[0])].map(e => e.textContent);", css)

    def row_ids(self, table_id):
        return self.driver.execute_script(
            "return [...document.querySelectorAll(arguments[0])].map(e => e.dataset.runId);",
            f"#{table_id} tbody tr")

    def headers(self, table_id):
        return self.texts(f"#{table_id} thead th")

    def act(self, css, action):
        """action(element) on the element `css` finds, found again while a redraw stales it."""
        WebDriverWait(self.driver, WAIT_S, ignored_exceptions=(StaleElementReferenceException,)) \
            .until(lambda d: action(d.find_element(By.CSS_SELECTOR, css)) or True)

    def screenshot(self, name):
        path = output_dir() / f"{name}.png"
        self.driver.save_screenshot(str(path))
        print(f"screenshot: {path}", file=sys.stderr)

    def assert_console_clean(self):
        severe = [e for e in self.driver.get_log("browser") if e.get("level") == "SEVERE"]
        self.assertEqual(severe, [], f"errors in the browser console: {severe}")
        self.assertIsNone(self.driver.execute_script("return window.nmtInjected"),
                          "markup in a run name was run as HTML")

    # ---- the pages ----

    def test_runs_page_lists_sorts_filters_and_picks(self):
        self.open("#/runs")
        listed = {str(r["run_id"]) for r in self.daemon.call("GET", "/api/runs")["runs"]}
        self.assertTrue({str(i) for i in self.ids.values()} <= listed)
        self.assertEqual(sorted(self.row_ids("runs-table")), sorted(listed))  # every run, once
        names = self.texts("#runs-table tbody td:nth-child(3)")
        self.assertIn('<img src=x onerror="window.nmtInjected=1">other', names)
        headers = self.headers("runs-table")
        for column in ("experiment", "sweep", "status", "started", "duration", "attempts",
                       "world size", "model.heads", "model.d_model", "train/loss", "valid/ppl"):
            self.assertIn(column, headers)
        self.assertNotIn("data.vocab_size", headers, "a param equal in every run is not a column")
        self.assertNotIn("reference.ppl", headers, "reference figures are the sweep page's")
        # Sort by name, ascending: the markup name ('<' sorts first) leads.
        self.act('#runs-table th[data-column="name"]', lambda e: e.click())
        first = self.texts("#runs-table tbody tr:first-child td:nth-child(3)")
        self.assertTrue(first[0].startswith("<img"), first)
        self.screenshot("runs")
        self.act('select[name="experiment"]', lambda e: Select(e).select_by_value("wmt-base"))
        self.assertEqual(sorted(self.row_ids("runs-table")),
                         sorted([str(self.ids["main"]), str(self.ids["other"])]))
        self.act('input[name="param"]', lambda e: e.send_keys("model.d_model=256"))
        self.assertEqual(self.row_ids("runs-table"), [str(self.ids["other"])])
        self.act('input[name="param"]', lambda e: e.clear())
        # clear() sends no input event: a blank (an empty filter) brings both runs back.
        self.act('input[name="param"]', lambda e: e.send_keys(" "))
        for run_id in self.row_ids("runs-table"):
            self.act(f'#runs-table tr[data-run-id="{run_id}"] input.pick', lambda e: e.click())
        self.act("#compare-button", lambda e: e.click())
        self.wait_loaded(f"#/compare/{self.ids['main']},{self.ids['other']}")
        self.assert_console_clean()

    def test_run_page_draws_every_curve(self):
        self.open(f"#/run/{self.ids['main']}")
        loss = self.chart_with("train/loss")
        self.assertEqual(loss["labels"], ["step", "train/loss"])
        self.assertEqual(loss["rows"], TRAIN_POINTS)
        ranks = self.chart_with("train/rank0/tokens_per_s")
        self.assertEqual(ranks["labels"],
                         ["step", "train/rank0/tokens_per_s", "train/rank1/tokens_per_s"])
        self.assertEqual(ranks["rows"], TRAIN_POINTS)
        self.assertEqual(self.chart_with("train/lr")["rows"], TRAIN_POINTS)
        self.assertEqual(self.chart_with("valid/ppl")["rows"], TRAIN_POINTS // VALID_EVERY)
        self.assertEqual(self.chart_with("valid/bleu")["rows"], TRAIN_POINTS // VALID_EVERY)
        page = self.driver.execute_script("return document.getElementById('main').innerText")
        for text in ("abc123def456", "node07", "4242", "nrefs:1|case:mixed|eff:no|tok:13a",
                     "runs/base-main/checkpoints/averaged.h5", "d_model: 512"):
            self.assertIn(text, page)
        self.screenshot("run")
        # Against time: the same points, another axis.
        Select(self.driver.find_element(By.CSS_SELECTOR, "select.x-axis")).select_by_value("time")
        WebDriverWait(self.driver, WAIT_S).until(
            lambda d: self.chart_with("train/loss")["xlabel"] == "seconds since start")
        self.assertEqual(self.chart_with("train/loss")["rows"], TRAIN_POINTS)
        Select(self.driver.find_element(By.CSS_SELECTOR, "select.x-axis")).select_by_value("step")
        # Drag across the loss chart zooms in; a double click zooms out again.
        plot = self.driver.find_element(By.CSS_SELECTOR, '[data-chart="loss"] .chart')
        zoomed = "return window.nmtCharts['loss'].isZoomed('x')"
        ActionChains(self.driver).move_to_element_with_offset(plot, -150, 0).click_and_hold() \
            .move_by_offset(250, 0).release().perform()
        WebDriverWait(self.driver, WAIT_S).until(lambda d: d.execute_script(zoomed))
        ActionChains(self.driver).double_click(plot).perform()
        WebDriverWait(self.driver, WAIT_S).until(lambda d: not d.execute_script(zoomed))
        self.assert_console_clean()

    def test_run_page_follows_a_running_run(self):
        run_id = self.daemon.call("POST", "/api/runs", {
            "experiment": "live", "name": "live", "params": {"data.vocab_size": 37000}})["run_id"]
        t0 = time.time()
        post_metrics(self.daemon, run_id, 0, {"train/loss": [(s, 5.0) for s in range(1, 11)]}, t0)
        self.open(f"#/run/{run_id}")
        self.assertEqual(self.chart_with("train/loss")["rows"], 10)
        self.daemon.call("POST", f"/api/runs/{run_id}/metrics", {
            "rank": 0, "sequence": 99,
            "points": [{"key": "train/loss", "step": s, "value": 4.0} for s in range(11, 31)]})
        # The page polls while the run runs: wait for the new points to be drawn.
        WebDriverWait(self.driver, WAIT_S).until(
            lambda d: self.chart_with("train/loss")["rows"] == 30, "new points never drawn")
        self.daemon.call("PUT", f"/api/runs/{run_id}/status", {"status": "finished"})
        WebDriverWait(self.driver, WAIT_S).until(
            lambda d: "finished" in self.texts("h1")[0])
        self.assert_console_clean()

    def test_compare_overlays_two_runs(self):
        route = f"#/compare/{self.ids['main']},{self.ids['other']}"
        self.open(route)
        # All its series in one GET /api/series.
        self.assertEqual(self.series_requests(), {"/api/series": 1})
        charts = self.charts()
        shared = ["train/loss", "train/lr", "train/rank0/tokens_per_s", "valid/ppl", "valid/bleu"]
        for key in shared:
            chart = [c for c in charts if c["id"] == "key:" + key]
            self.assertEqual(len(chart), 1, f"a chart for {key}: {charts}")
            self.assertEqual(len(chart[0]["labels"]), 3, f"two series in {chart[0]}")
            self.assertEqual(chart[0]["rows"], TRAIN_POINTS if key.startswith("train") else
                             TRAIN_POINTS // VALID_EVERY)
        loss = [c for c in charts if c["id"] == "key:train/loss"][0]
        self.assertEqual(loss["labels"][1:], [
            f"base-main #{self.ids['main']}",
            f'<img src=x onerror="window.nmtInjected=1">other #{self.ids["other"]}'])
        # A key only one run has is still drawn, with its one series.
        rank1 = [c for c in charts if c["id"] == "key:train/rank1/tokens_per_s"]
        self.assertEqual([c["labels"][1:] for c in rank1], [[f"base-main #{self.ids['main']}"]])
        params = self.texts("#compare-params tbody tr td:first-child")
        self.assertIn("model.d_model", params)
        self.assertNotIn("data.vocab_size", params)
        self.screenshot("compare")
        # Every series of every chart has its points.
        drawn = self.driver.execute_script(self.SERIES_DRAWN)
        self.assertTrue(all(n > 0 for chart in drawn.values() for n in chart), drawn)
        self.assert_console_clean()
        # The same page fetching one series per request (?series=single, for the benchmark)
        # draws the same.
        self.driver.get("about:blank")
        self.driver.get(self.daemon.url + "/?series=single" + route)
        self.wait_loaded(route)
        requests = self.series_requests()
        self.assertEqual(list(requests), ["/api/runs/{run}/metrics"])
        self.assertGreaterEqual(requests["/api/runs/{run}/metrics"], sum(map(len, drawn.values())))
        self.assertEqual(self.driver.execute_script(self.SERIES_DRAWN), drawn)

    # Chart id -> the number of points drawn of each of its series (its non-null values).
    SERIES_DRAWN = """
        const out = {};
        for (const [id, g] of Object.entries(window.nmtCharts || {})) {
          out[id] = g.getLabels().slice(1).map((_, i) => {
            let n = 0;
            for (let row = 0; row < g.numRows(); row += 1) n += g.getValue(row, i + 1) !== null;
            return n;
          });
        }
        return out;"""

    def series_requests(self):
        """{route: count} of the series requests the page made to draw itself: those started by
        window.nmtLoadedAt. A refresh of a running run comes later, however slow the machine."""
        paths = self.driver.execute_script(
            "return performance.getEntriesByType('resource')"
            ".filter(e => e.startTime <= window.nmtLoadedAt)"
            ".map(e => new URL(e.name).pathname);")
        counts = {}
        for path in paths:
            route = "/api/series" if path == "/api/series" else (
                "/api/runs/{run}/metrics" if path.startswith("/api/runs/") and
                path.endswith("/metrics") else None)
            if route:
                counts[route] = counts.get(route, 0) + 1
        return counts

    def test_sweep_page_shows_table_and_curves(self):
        self.open("#/sweep/t3")
        self.assertEqual(self.row_ids("sweep-table"), [str(self.ids[r]) for r in ("A1", "A2", "A3")])
        kinds = self.driver.execute_script(
            "return [...document.querySelectorAll('#sweep-table thead th')]"
            ".map(th => [th.textContent, th.dataset.kind || null]);")
        reference = [name for name, kind in kinds if kind == "reference"]
        self.assertIn("reference.ppl", reference, kinds)
        self.assertIn("reference.bleu", reference, kinds)
        column = [name for name, _ in kinds].index("reference.ppl") + 1
        cells = self.texts(f"#sweep-table tbody td:nth-child({column})")
        self.assertEqual(cells, ["5.29", "5", "4.91"])
        self.assertIn("model.heads", [name for name, _ in kinds])
        ppl = [c for c in self.charts() if c["id"] == "sweep:valid/ppl"]
        self.assertEqual(len(ppl), 1, self.charts())
        self.assertEqual(len(ppl[0]["labels"]), 4)  # x and one series per row
        self.assertEqual(ppl[0]["rows"], 50)
        self.screenshot("sweep")
        self.assert_console_clean()

    # ---- evals, the runs table's layout, the chart controls, artifacts ----

    def needs_last_evals(self):
        status, body = self.daemon.request("GET", "/api/runs?params=*&metrics=*&evals=*")
        if status == 400:
            self.skipTest(f"NEEDS THE last_evals API (GET /api/runs?evals=*): the daemon says {body}")

    def test_runs_page_shows_and_sorts_evals(self):
        self.needs_last_evals()
        self.open("#/runs")
        headers = self.headers("runs-table")
        for column in ("test/bleu", "test/chrf", "valid/bleu (eval)", "valid/ppl (eval)"):
            self.assertIn(column, headers, "eval columns are shown by default")
        # Ascending by test BLEU: other 25.1, main 27.3, curves 31.4, then the runs without one.
        self.act('#runs-table th[data-column="eval:test/bleu"]', lambda e: e.click())
        order = [str(self.ids[k]) for k in ("other", "main", "curves")]
        self.assertEqual(self.row_ids("runs-table")[:3], order)
        column = headers.index("test/bleu") + 1
        self.assertEqual(self.texts(f"#runs-table tbody td:nth-child({column})")[:3],
                         ["25.1", "27.3", "31.4"])
        self.act('#runs-table th[data-column="eval:test/bleu"]', lambda e: e.click())
        self.assertEqual(self.row_ids("runs-table")[:3], order[::-1])
        self.screenshot("runs-evals")
        # Filtered like any param or metric.
        self.act('input[name="param"]', lambda e: e.send_keys("test/bleu>26"))
        self.assertEqual(sorted(self.row_ids("runs-table")),
                         sorted([str(self.ids["main"]), str(self.ids["curves"])]))
        self.assert_console_clean()

    def test_runs_table_fits_the_window_with_the_name_pinned(self):
        self.open("#/runs")
        self.driver.execute_script("document.querySelector('.column-chooser').open = true")
        # Show every column: the table is then wider than the window.
        for column in self.driver.execute_script(
                "return [...document.querySelectorAll('input.column-choice')]"
                ".filter(b => !b.checked).map(b => b.dataset.column)"):
            self.act(f'input.column-choice[data-column="{column}"]', lambda e: e.click())
        self.assertIn("data.vocab_size", self.headers("runs-table"))
        layout = self.driver.execute_script("""
            const box = document.querySelector('.runs-scroll');
            const name = () => document.querySelector('#runs-table tbody td:nth-child(3)');
            const before = name().getBoundingClientRect().left;
            box.scrollLeft = 400;
            return {page: document.documentElement.scrollWidth, window: window.innerWidth,
                    box: box.scrollWidth, shown: box.clientWidth, scrolled: box.scrollLeft,
                    before: before, after: name().getBoundingClientRect().left};""")
        self.assertLessEqual(layout["page"], layout["window"], f"the page scrolls sideways: {layout}")
        self.assertGreater(layout["box"], layout["shown"], f"the table needs scrolling: {layout}")
        self.assertEqual(layout["scrolled"], 400, layout)
        # Unpinned, it would move by the 400 px scrolled; collapsed borders shift it half a pixel.
        self.assertLess(abs(layout["after"] - layout["before"]), 2, f"the name column moved: {layout}")
        self.screenshot("runs-all-columns")
        # A sort redraws the rows; the sideways scroll stays where it was.
        self.driver.execute_script(
            "document.querySelector('#runs-table th[data-column=\"world_size\"]').click()")
        self.assertEqual(self.driver.execute_script(
            "return document.querySelector('.runs-scroll').scrollLeft"), 400)
        # A column hidden stays hidden when the page comes back (the view state keeps it).
        self.act('input.column-choice[data-column="experiment"]', lambda e: e.click())
        self.assertNotIn("experiment", self.headers("runs-table"))
        self.driver.execute_script("location.hash = '#/run/' + arguments[0]", self.ids["main"])
        self.wait_loaded(f"#/run/{self.ids['main']}")
        self.driver.execute_script("location.hash = '#/runs'")
        self.wait_loaded("#/runs")
        self.assertNotIn("experiment", self.headers("runs-table"))
        self.assertIn("data.vocab_size", self.headers("runs-table"))
        self.act('input.column-choice[data-column="experiment"]', lambda e: e.click())
        self.assert_console_clean()

    def test_runs_page_draws_the_first_rows_until_asked(self):
        daemon = Daemon(OPTIONS.trackerd, Path(self.folder.name) / "many-daemon")
        try:
            for i in range(205):
                daemon.call("POST", "/api/runs", {"experiment": "many", "name": f"run-{i:03d}"})
            self.open("#/runs", daemon)
            self.assertEqual(len(self.row_ids("runs-table")), 200)
            self.assertEqual(self.row_ids("runs-table")[0], "205", "the newest first, by id")
            self.act("#show-all-runs", lambda e: e.click())
            self.assertEqual(len(self.row_ids("runs-table")), 205)
            self.assert_console_clean()
        finally:
            daemon.stop()

    def test_compare_shows_latest_evals_and_history(self):
        self.open(f"#/compare/{self.ids['main']},{self.ids['other']}")
        headers = self.headers("compare-evals")
        self.assertEqual(headers, ["run", "test/bleu", "test/chrf", "valid/bleu", "valid/chrf",
                                   "valid/ppl"])
        rows = self.driver.execute_script(
            "return [...document.querySelectorAll('#compare-evals tbody tr')]"
            ".map(tr => [...tr.children].slice(1).map(td => td.textContent));")
        self.assertEqual(rows, [["27.3", "55.1", "22", "50.5", "6.1"],
                                ["25.1", "53", "-", "-", "-"]])
        history = self.driver.execute_script(
            "return [...document.querySelectorAll('#compare-eval-history tbody tr')]"
            ".map(tr => [...tr.children].slice(1, 4).map(td => td.textContent));")
        self.assertEqual(history, [["valid", "1500", "checkpoints/step-1500.h5"],
                                   ["test", "3000", "checkpoints/averaged.h5"],
                                   ["test", "2000", "checkpoints/averaged.h5"]])
        self.screenshot("compare-evals")
        self.assert_console_clean()

    def chart_values(self, chart_id, column=1):
        return self.driver.execute_script("""
            const g = window.nmtCharts[arguments[0]];
            const out = [];
            for (let i = 0; i < g.numRows(); i++) out.push(g.getValue(i, arguments[1]));
            return out;""", chart_id, column)

    def canvases(self, chart_id):
        return self.driver.execute_script(
            "return [...document.querySelectorAll(`[data-chart='${arguments[0]}'] canvas`)]"
            ".map(c => c.toDataURL()).join();", chart_id)

    def set_smoothing(self, weight):
        self.driver.execute_script("""
            const s = document.querySelector('input.smoothing');
            s.value = arguments[0];
            s.dispatchEvent(new Event('input'));""", str(weight))

    def test_smoothing_draws_the_ema_with_the_raw_series_behind(self):
        self.open(f"#/run/{self.ids['curves']}")
        raw = [noisy_loss(i) for i in range(CURVE_POINTS)]
        values = self.chart_values("loss")
        self.assertEqual(len(values), CURVE_POINTS)
        self.assertEqual(values, raw, "smoothing 0 draws the raw values")
        self.assertEqual(self.driver.execute_script("return window.nmtRawDrawn['loss']"), 0)
        before = self.canvases("loss")
        self.set_smoothing(0.9)
        WebDriverWait(self.driver, WAIT_S).until(
            lambda d: self.chart_values("loss")[5] != raw[5], "smoothing never drawn")
        smoothed = self.chart_values("loss")
        for got, want in zip(smoothed, ema(raw, 0.9)):
            self.assertAlmostEqual(got, want, places=9)
        self.assertEqual(smoothed[0], raw[0], "the debiased EMA starts at the first value")
        # The raw series is still drawn, every point, faintly behind.
        self.assertEqual(self.driver.execute_script("return window.nmtRawDrawn['loss']"),
                         CURVE_POINTS)
        self.assertNotEqual(self.canvases("loss"), before, "the drawn path did not change")
        self.screenshot("run-smoothed")
        self.set_smoothing(0)
        WebDriverWait(self.driver, WAIT_S).until(
            lambda d: self.chart_values("loss") == raw)
        self.assert_console_clean()

    def y_ticks(self, chart_id):
        return self.texts(f"[data-chart='{chart_id}'] .dygraph-axis-label-y")

    def test_log_y_per_panel_and_human_ticks(self):
        self.open(f"#/run/{self.ids['curves']}")
        linear = self.y_ticks("ppl")
        self.assertFalse(self.driver.execute_script(
            "return window.nmtCharts['ppl'].getOption('logscale')"))
        self.act("[data-chart='ppl'] input.log-y", lambda e: e.click())
        WebDriverWait(self.driver, WAIT_S).until(lambda d: d.execute_script(
            "return window.nmtCharts['ppl'].getOption('logscale')"))
        logarithmic = self.y_ticks("ppl")
        self.assertNotEqual(logarithmic, linear)
        # On a log axis the ticks grow by factors (10, 20, 50, 100, ...), not by a fixed step.
        numbers = sorted(float(t.replace("k", "e3")) for t in logarithmic if t)
        self.assertTrue({10.0, 100.0} <= set(numbers), logarithmic)
        self.assertGreaterEqual(numbers[-1] / numbers[0], 50, logarithmic)
        # The other panels keep a linear axis; one with negative values is never offered log-y.
        self.assertFalse(self.driver.execute_script(
            "return window.nmtCharts['loss'].getOption('logscale')"))
        self.assertFalse(self.driver.execute_script(
            "return document.querySelector(\"[data-chart='key:train/grad_delta'] .log-y-label\")"
            ".checkVisibility()"))
        self.assertTrue(self.driver.execute_script(
            "return document.querySelector(\"[data-chart='loss'] .log-y-label\").checkVisibility()"))
        self.screenshot("run-log-y")
        self.act("[data-chart='ppl'] input.log-y", lambda e: e.click())
        self.assert_console_clean()

    def test_axis_ticks_in_human_units(self):
        self.open(f"#/run/{self.ids['curves']}")
        # A learning rate reads 5e-4, never "500µ" or "3.5m" (SI prefixes read as units).
        lr = self.y_ticks("lr")
        self.assertTrue(lr)
        for tick in lr:
            self.assertRegex(tick, r"^-?(0|[0-9]+(\.[0-9]+)?(e-?[0-9]+)?)$", lr)
        self.assertTrue(any("e-" in t for t in lr), lr)
        # Counts keep their SI prefixes: 500M tokens.
        self.assertIn("500M", self.y_ticks("key:train/tokens"))
        self.assert_console_clean()

    def test_hover_reads_every_series_at_the_step(self):
        self.open(f"#/run/{self.ids['main']}")
        plot = self.driver.find_element(By.CSS_SELECTOR,
                                        "[data-chart='rank_tokens_per_s'] .chart")
        ActionChains(self.driver).move_to_element_with_offset(plot, 40, 0).perform()
        readout = "[data-chart='rank_tokens_per_s'] .chart-readout"
        WebDriverWait(self.driver, WAIT_S).until(lambda d: d.execute_script(
            f"return document.querySelector(\"{readout}\").dataset.x") not in ("", None))
        step = int(float(self.driver.execute_script(
            f"return document.querySelector(\"{readout}\").dataset.x")))
        self.assertTrue(self.texts(f"{readout} .readout-x")[0].startswith("step "))
        rows = self.driver.execute_script(
            f"return [...document.querySelectorAll(\"{readout} .readout-row\")]"
            ".map(r => [r.dataset.series, r.querySelector('.readout-value').textContent]);")
        self.assertEqual(rows, [["train/rank0/tokens_per_s", str(25000 + step % 70)],
                                ["train/rank1/tokens_per_s", str(24000 + step % 50)]])
        self.assertGreater(step, 10 * TRAIN_POINTS // 4, "the hover was right of the middle")
        self.assert_console_clean()

    def test_all_zero_panel_collapses_and_tokens_axis(self):
        self.open(f"#/run/{self.ids['curves']}")
        box = "[data-chart='key:train/skipped_updates']"
        self.assertEqual(self.driver.execute_script(
            f"return document.querySelector(\"{box}\").dataset.collapsed"), "true")
        self.assertIn(f"all zero ({CURVE_POINTS} points)", self.texts(box)[0])
        self.assertNotIn("key:train/skipped_updates", [c["id"] for c in self.charts()])
        self.assertEqual(self.driver.execute_script(
            "return document.querySelector(\"[data-chart='loss']\").dataset.collapsed"), "false")
        # This run logs train/tokens, so the x axis may be tokens seen.
        Select(self.driver.find_element(By.CSS_SELECTOR, "select.x-axis")).select_by_value("tokens")
        WebDriverWait(self.driver, WAIT_S).until(
            lambda d: self.chart_with("train/loss")["xlabel"] == "tokens")
        xs = self.driver.execute_script(
            "const g = window.nmtCharts['loss']; return [g.getValue(0, 0), g.getValue(1, 0)];")
        self.assertEqual(xs, [25000 * 100, 25000 * 200])
        Select(self.driver.find_element(By.CSS_SELECTOR, "select.x-axis")).select_by_value("step")
        # The main run does not: no tokens axis is offered there.
        self.open(f"#/run/{self.ids['main']}")
        options = self.driver.execute_script(
            "return [...document.querySelectorAll('select.x-axis option')].map(o => o.value);")
        self.assertEqual(options, ["step", "time"])
        self.assert_console_clean()

    MARKDOWN = "\n".join([
        "# Analysis of <b>run</b>", "", "Some *emphasis*, **bold** and `code`.",
        "<img src=x onerror=\"window.nmtInjected=1\">", "",
        "- first [link](https://example.org/a)", "- second [bad](javascript:window.nmtInjected=2)",
        "", "| split | BLEU |", "| --- | ---: |", "| test | 27.3 |", "", "```",
        "<script>window.nmtInjected=3</script>", "```", ""])

    def check_markdown(self, css):
        got = self.driver.execute_script("""
            const box = document.querySelector(arguments[0]);
            return {h1: [...box.querySelectorAll('h1')].map(e => e.textContent),
                    em: [...box.querySelectorAll('em')].map(e => e.textContent),
                    strong: [...box.querySelectorAll('strong')].map(e => e.textContent),
                    code: [...box.querySelectorAll('p code, pre code')].map(e => e.textContent),
                    links: [...box.querySelectorAll('a')].map(a => [a.textContent, a.href]),
                    items: [...box.querySelectorAll('li')].map(e => e.textContent),
                    cells: [...box.querySelectorAll('td')].map(e => e.textContent),
                    markup: box.querySelectorAll('img, script, b').length,
                    text: box.textContent};""", css)
        self.assertEqual(got["h1"], ["Analysis of <b>run</b>"])
        self.assertEqual(got["em"], ["emphasis"])
        self.assertEqual(got["strong"], ["bold"])
        self.assertEqual(got["code"], ["code", "<script>window.nmtInjected=3</script>"])
        self.assertEqual(got["links"], [["link", "https://example.org/a"]])
        self.assertEqual(got["items"], ["first link", "second [bad](javascript:window.nmtInjected=2)"])
        self.assertEqual(got["cells"], ["test", "27.3"])
        self.assertEqual(got["markup"], 0, "markup in the text became elements")
        self.assertIn('<img src=x onerror="window.nmtInjected=1">', got["text"])
        self.assertIsNone(self.driver.execute_script("return window.nmtInjected"))

    def test_markdown_renderer_is_safe(self):
        self.open("#/runs")
        self.driver.execute_script("""
            const box = nmt.renderMarkdown(arguments[0]);
            box.id = 'markdown-check';
            document.getElementById('main').append(box);""", self.MARKDOWN)
        self.check_markdown("#markdown-check")
        self.assert_console_clean()

    def test_markdown_and_svg_artifacts_are_viewed(self):
        """NEEDS THE ARTIFACT CONTENT API: artifacts with "has_content" and
        GET /api/runs/{id}/artifacts/{artifact_id}/content. The upload below sends the content in
        the artifact's POST body ("content"; the daemon serves it with the content type of the
        path's extension); adapt upload_artifact() to the daemon's contract if it differs."""
        run_id = self.ids["curves"]
        svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20">'
               '<script>window.nmtInjected=4</script><rect width="40" height="20" fill="teal"/></svg>')
        md_id = self.upload_artifact(run_id, "report", "analysis.md", self.MARKDOWN)
        svg_id = self.upload_artifact(run_id, "figure", "curves.svg", svg)
        artifacts = {a["artifact_id"]: a for a in
                     self.daemon.call("GET", f"/api/runs/{run_id}")["artifacts"]}
        if not artifacts[md_id].get("has_content"):
            self.skipTest("NEEDS THE ARTIFACT CONTENT API: the daemon lists no has_content")
        self.open(f"#/run/{run_id}")
        self.act(f"button.view-artifact[data-artifact-id='{md_id}']", lambda e: e.click())
        WebDriverWait(self.driver, WAIT_S).until(lambda d: d.execute_script(
            "return document.getElementById('artifact-view').dataset.shown") == "markdown")
        self.check_markdown("#artifact-view .markdown")
        self.screenshot("artifact-markdown")
        self.act(f"button.view-artifact[data-artifact-id='{svg_id}']", lambda e: e.click())
        WebDriverWait(self.driver, WAIT_S).until(lambda d: d.execute_script(
            "const img = document.querySelector('#artifact-view img.artifact-svg');"
            "return img !== null && img.complete && img.naturalWidth === 40;"))
        self.assertIsNone(self.driver.execute_script("return window.nmtInjected"))
        self.screenshot("artifact-svg")
        self.assert_console_clean()

    def upload_artifact(self, run_id, kind, path, content):
        return self.daemon.call("POST", f"/api/runs/{run_id}/artifacts", {
            "kind": kind, "path": path, "content": content})["artifact_id"]

    def test_token_protected_daemon_needs_the_token(self):
        token = "dashboard-test-token-0123456789"
        daemon = Daemon(OPTIONS.trackerd, Path(self.folder.name) / "token-daemon", token)
        try:
            run_id = daemon.call("POST", "/api/runs", {"experiment": "secret", "name": "hidden"})[
                "run_id"]
            status, body = daemon.request("GET", "/", token=False)
            self.assertEqual(status, 401)
            self.assertNotIn("app.js", str(body))
            self.assertIn("token", str(body))
            self.driver.get(daemon.url + "/#/runs")
            self.assertIsNone(self.driver.execute_script("return window.nmt || null"),
                              "the app ran without the token")
            self.driver.get_log("browser")  # the refused page's own 401 is expected
            self.driver.get(daemon.url + "/?token=" + token)
            WebDriverWait(self.driver, WAIT_S).until(
                lambda d: d.execute_script("return window.nmtLoaded") is not None,
                "the page never loaded after /?token=")
            self.assertEqual(self.row_ids("runs-table"), [str(run_id)])
            self.screenshot("token-login")
            self.assert_console_clean()
        finally:
            daemon.stop()

    def test_run_page_shows_each_attempts_directory_and_provenance(self):
        run = {"experiment": "provenance", "name": "moved", "uid": "c0ffee00c0ffee00",
               "params": {"data.vocab_size": 37000}}  # as every run here: no params column
        first = {"command_line": "nmt-train --run-dir /scratch/a", "gpu": "NVIDIA H100",
                 "git.dirty": "false", "world_size": 8}
        run_id = self.daemon.call("POST", "/api/runs", dict(
            run, attempt=1, run_dir="/scratch/a", provenance=first))["run_id"]
        self.daemon.call("POST", "/api/runs", dict(
            run, attempt=2, run_dir="/home/me/b",
            provenance=dict(first, gpu="NVIDIA H200", command_line="nmt-train --resume")))
        self.open(f"#/run/{run_id}")
        self.assertIn("run dir", self.headers("attempts"))
        self.assertIn("/scratch/a", self.texts("#attempts tbody tr:first-child td"))
        self.assertIn("/home/me/b", self.texts("#attempts tbody tr:last-child td"))
        rows = [r.split("\t") for r in self.driver.execute_script("""
            return [...document.querySelectorAll('#provenance tbody tr')]
              .map(r => [...r.cells].map(c => c.textContent).join('\\t'));""")]
        self.assertEqual(rows, [
            ["command_line", "nmt-train --resume", "attempt 1: nmt-train --run-dir /scratch/a"],
            ["git.dirty", "false", "-"],
            ["gpu", "NVIDIA H200", "attempt 1: NVIDIA H100"],
            ["world_size", "8", "-"]])
        self.screenshot("run-provenance")
        self.assert_console_clean()


def main():
    global OPTIONS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trackerd", required=True, help="the nmt-trackerd executable")
    parser.add_argument("--output-dir", default="Testing/browser-screenshots",
                        help="screenshots, unless $NMT_TEST_OUTPUT_DIR says where")
    OPTIONS, rest = parser.parse_known_args()
    _, reason = find_browser()
    if reason:
        print(f"SKIP: {reason}", file=sys.stderr)
        return SKIP
    print(f"screenshots go to {output_dir()}", file=sys.stderr)
    result = unittest.main(argv=[sys.argv[0]] + rest, exit=False, verbosity=2).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
