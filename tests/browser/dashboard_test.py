#!/usr/bin/env python3
"""The dashboard of nmt-trackerd in a real headless Chromium (Debian's chromium, chromium-driver
and python3-selenium), against a real daemon on 127.0.0.1 holding runs this test makes through
the HTTP API: two experiments, a sweep of three rows with the paper's reference figures, a few
hundred points per metric, evals and an artifact.

Checks each page by what it drew: rows of the runs table, dygraphs' own state of every chart
(window.nmtCharts: series labels and rows), the sweep table's rows and reference columns, no
error in the browser console; and that a daemon with --token-file refuses the page without its
token and serves it after /?token=. Nothing waits a fixed time: every wait is for a condition,
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
    return ids


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
        self.assertEqual(severe, [], "errors in the browser console")
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
        self.assert_console_clean()

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
