#!/usr/bin/env python3
"""What the dashboard's pages cost, at 1,000 runs x 20 metrics x 10,000 points.

Starts a real nmt-trackerd on 127.0.0.1 with a fresh database, ingests the runs through the HTTP
API (untimed: one 10,000-point batch per series, the batches encoded once and sent by 4
connections), each run with a test and a valid eval, then times the requests each page makes,
as the page makes them:
  - the runs page: GET /api/runs?params=*&metrics=*&evals=*;
  - a run page: GET /api/runs/{id} and its 20 series at max_points=1000 (6 at a time, like a
    browser's connections to one host);
  - a compare page of 10 runs: their 10 runs and 200 series;
and the same series in one request, GET /api/series?runs=...&keys=*&max_points=1000.
Each figure is the median of --repeats, beside the 1 s budget (ratio) and, for the series, beside
the same series fetched whole (10,000 points each: what downsampling saves), or one by one. With
Chromium, chromium-driver and python3-selenium present, also the runs page, the run page and the
compare page in a headless browser: from navigation until the table and charts are drawn (the
page's performance.now() when it says it is done); the run and compare pages both ways, their
series in one request (as the dashboard fetches them) and one request per series (?series=single),
side by side.
Prints figures; asserts nothing about time.

The filled database (about 15 GB at full scale, several minutes to fill) is kept with --db FILE:
a later run given the same FILE and sizes skips the ingest (a FILE.json beside it records them).

  bench/dashboard_bench.py --trackerd build/apps/nmt-trackerd [--runs 1000] [--metrics 20]
                           [--points 10000] [--compare 10] [--repeats 5] [--no-browser]
                           [--db FILE]
"""

import argparse
import concurrent.futures
import http.client
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BUDGET_S = 1.0
BROWSER_CONNECTIONS = 6  # what Chromium opens to one host over HTTP/1.1
KEYS = ["train/loss", "train/lr", "train/tokens_per_s", "train/rank0/tokens_per_s",
        "train/rank1/tokens_per_s", "train/grad_norm", "train/batch_tokens", "valid/loss",
        "valid/ppl", "valid/bleu", "train/nll", "train/ppl", "train/ms_per_step",
        "train/skipped_updates", "train/window_updates", "train/window_tgt_tokens",
        "train/rank0/allreduce_fraction", "train/rank1/allreduce_fraction", "train/tokens",
        "valid/nll"]


class Client:
    """Keep-alive HTTP connections to the daemon, one per thread."""

    def __init__(self, port):
        self.port = port
        self.local = threading.local()

    def request(self, method, path, body=None):
        headers = {"Content-Type": "application/json"} if body is not None else {}
        for attempt in range(2):
            if attempt == 1 or not hasattr(self.local, "connection"):
                self.local.connection = http.client.HTTPConnection("127.0.0.1", self.port,
                                                                   timeout=600)
            try:
                self.local.connection.request(method, path, body=body, headers=headers)
                answer = self.local.connection.getresponse()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                # The daemon closes a connection idle past its --idle-timeout: open another.
                # (A repeated metrics batch is stored once: same run, rank and sequence.)
                self.local.connection.close()
                if attempt == 1:
                    raise
        data = answer.read()
        if answer.status != 200:
            raise RuntimeError(f"{method} {path} answered {answer.status}: {data[:300]!r}")
        return data

    def json(self, method, path, body=None):
        payload = None if body is None else json.dumps(body).encode()
        return json.loads(self.request(method, path, payload))


def start_daemon(trackerd, folder, db):
    port_file = folder / "port"
    process = subprocess.Popen([trackerd, "--db", str(db), "--port", "0",
                                "--port-file", str(port_file), "--log-level", "warn"])
    deadline = time.monotonic() + 60
    while not port_file.exists() or not port_file.read_text().strip():
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("nmt-trackerd did not start")
        time.sleep(0.05)
    return process, int(port_file.read_text())


def ingest(client, args):
    """The runs with params, series and two evals each; one batch per series."""
    t0 = time.time()
    bodies = []
    for sequence, key in enumerate(KEYS[:args.metrics], start=1):
        points = [{"key": key, "step": 10 * (i + 1), "value": 5.0 / (1 + i / 500.0) + (i % 7) * 0.01,
                   "time": t0 + i * 0.5} for i in range(args.points)]
        rank = 1 if "rank1" in key else 0
        bodies.append(json.dumps({"rank": rank, "sequence": sequence, "points": points}).encode())
    run_ids = []
    for i in range(args.runs):
        run_ids.append(client.json("POST", "/api/runs", {
            "experiment": f"exp{i % 4}", "name": f"run-{i:03d}", "sweep": f"sweep{i % 5}",
            "row_label": f"R{i}", "row_index": i, "world_size": 2,
            "params": {"model.heads": [1, 4, 8, 16][i % 4], "model.d_model": 512,
                       "train.lr_scale": 0.5 + (i % 3) * 0.5, "model.dropout": 0.1,
                       "reference.ppl": 4.9}})["run_id"])
        for split, bleu in (("valid", 24.0 + (i % 13) * 0.1), ("test", 25.0 + (i % 17) * 0.1)):
            client.json("POST", f"/api/runs/{run_ids[-1]}/evals", {
                "split": split, "step": 10 * args.points, "checkpoint": "checkpoints/averaged.h5",
                "bleu": bleu, "chrf": 50.0 + bleu / 2, "perplexity": 4.5, "signature": "sig"})
    jobs = [(run_id, body) for run_id in run_ids for body in bodies]
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda job: client.request("POST", f"/api/runs/{job[0]}/metrics", job[1]),
                      jobs))
    seconds = time.monotonic() - start
    for i, run_id in enumerate(run_ids):
        if i % 10 != 0:  # a tenth of them still running, as the page sees while training
            client.json("PUT", f"/api/runs/{run_id}/status", {"status": "finished"})
    total = len(jobs) * args.points
    print(f"ingested {total:,} points ({args.runs} runs x {args.metrics} metrics x "
          f"{args.points:,}) in {seconds:.1f} s, {total / seconds:,.0f} points/s (untimed setup)")
    return run_ids


def timed(repeats, action):
    """Median seconds of `repeats` calls of action()."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def fetch_all(client, paths):
    with concurrent.futures.ThreadPoolExecutor(BROWSER_CONNECTIONS) as pool:
        return [len(body) for body in pool.map(lambda p: client.request("GET", p), paths)]


def series_paths(run_ids, args, max_points):
    suffix = f"&max_points={max_points}" if max_points else ""
    return [f"/api/runs/{run_id}/metrics?key={key}{suffix}"
            for run_id in run_ids for key in KEYS[:args.metrics]]


def report(label, seconds, baseline=None, baseline_label=""):
    line = f"  {label:<58} {seconds * 1000:8.1f} ms  {seconds / BUDGET_S:5.2f} of the 1 s budget"
    if baseline is not None:
        line += f"  ({baseline * 1000:.1f} ms {baseline_label}: {baseline / seconds:.1f}x)"
    print(line)


def time_requests(client, run_ids, args):
    runs_path = "/api/runs?params=*&metrics=*&evals=*"
    size = len(client.request("GET", runs_path))
    print(f"\nrequests, median of {args.repeats} (answer sizes from the first call):")
    report(f"runs page: GET {runs_path} ({size / 1e3:.0f} kB)",
           timed(args.repeats, lambda: client.request("GET", runs_path)))
    one = run_ids[len(run_ids) // 2]
    report("run page: GET /api/runs/{id}",
           timed(args.repeats, lambda: client.request("GET", f"/api/runs/{one}")))
    compare = run_ids[:args.compare]
    for label, ids in (("run page", [one]), (f"compare page, {len(compare)} runs", compare)):
        paths = series_paths(ids, args, 1000)
        whole = series_paths(ids, args, None)
        down = timed(args.repeats, lambda: fetch_all(client, paths))
        full = timed(args.repeats, lambda: fetch_all(client, whole))
        report(f"{label}: {len(paths)} series at max_points=1000", down, full,
               f"for the whole {args.points:,}-point series")
        many = f"/api/series?runs={','.join(map(str, ids))}&keys=*&max_points=1000"
        report(f"{label}: the same in 1 request, GET /api/series",
               timed(args.repeats, lambda: client.request("GET", many)), down,
               f"for {len(paths)} requests")
    detail = [f"/api/runs/{run_id}" for run_id in compare]
    report(f"compare page, {len(compare)} runs: runs and series together",
           timed(args.repeats, lambda: fetch_all(client, detail + series_paths(compare, args, 1000))))
    many = f"/api/series?runs={','.join(map(str, compare))}&keys=*&max_points=1000"
    report(f"compare page, {len(compare)} runs: runs and GET /api/series together",
           timed(args.repeats, lambda: fetch_all(client, detail + [many])))


def page_seconds(driver, port, route, search, repeats):
    """Median (since navigation, fetching and drawing) seconds of the page at `route`."""
    from selenium.webdriver.support.ui import WebDriverWait
    totals, renders, fetches, draws = [], [], [], []
    for _ in range(repeats):
        driver.get("about:blank")
        driver.get(f"http://127.0.0.1:{port}/{search}{route}")
        WebDriverWait(driver, 120).until(
            lambda d: d.execute_script("return window.nmtLoaded") == route)
        total, render, curves = driver.execute_script(
            "return [window.nmtLoadedAt, window.nmtRenderMs, window.nmtCurveMs];")
        totals.append(total / 1000.0)
        renders.append(render / 1000.0)
        if curves:
            fetches.append(curves["refresh"] / 1000.0)
            draws.append(curves["draw"] / 1000.0)
    if fetches:
        print(f"  {route + search:<58} charts: fetching (drawing each chart once its series are "
              f"in) {statistics.median(fetches) * 1000:.1f} ms, then drawing the rest "
              f"{statistics.median(draws) * 1000:.1f} ms")
    return statistics.median(totals), statistics.median(renders)


def time_browser(port, run_ids, args, folder):
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.support.ui import WebDriverWait
    except ImportError:
        print("\nbrowser: skipped (python3-selenium is not installed)")
        return
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver_path:
        print("\nbrowser: skipped (chromium or chromedriver is missing)")
        return
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1400,1000", f"--user-data-dir={folder / 'chromium'}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    print(f"\nheadless Chromium, from navigation to charts drawn, median of {args.repeats}:")
    try:
        one = run_ids[len(run_ids) // 2]
        compare = run_ids[:args.compare]
        compare_route = "#/compare/" + ",".join(map(str, compare))
        compare_label = f"compare page, {len(compare)} runs ({args.metrics} charts x {len(compare)} series)"
        # (label, route, the same page fetching one series per request, or None)
        pages = ((f"runs page ({len(run_ids)} runs)", "#/runs", False),
                 (f"run page ({args.metrics} series)", f"#/run/{one}", True),
                 (compare_label, compare_route, True))
        for label, route, both_ways in pages:
            total, render = page_seconds(driver, port, route, "", args.repeats)
            if not both_ways:
                report(label, total)
            else:
                single, single_render = page_seconds(driver, port, route, "?series=single",
                                                     args.repeats)
                report(label, total, single, "one request per series")
            print(f"  {'':<58} of which fetching and drawing: {render * 1000:.1f} ms" +
                  (f" ({single_render * 1000:.1f} ms one request per series)" if both_ways else ""))
    finally:
        driver.quit()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trackerd", required=True, help="the nmt-trackerd executable")
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--metrics", type=int, default=20, choices=range(1, len(KEYS) + 1))
    parser.add_argument("--compare", type=int, default=10, help="runs on the compare page")
    parser.add_argument("--points", type=int, default=10000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-browser", action="store_true", help="skip the Chromium timing")
    parser.add_argument("--db", type=Path,
                        help="keep the filled database here and reuse it when its sizes match")
    args = parser.parse_args()
    if args.compare < 2 or args.runs < args.compare or args.points < 1 or args.repeats < 1:
        parser.error("--compare must be at least 2, --runs at least --compare, --points and "
                     "--repeats at least 1")
    with tempfile.TemporaryDirectory(prefix="nmt-dashboard-bench-") as tmp:
        folder = Path(tmp)
        db = args.db or folder / "tracker.db"
        sizes = {"runs": args.runs, "metrics": args.metrics, "points": args.points}
        record = db.with_name(db.name + ".json")
        cached = db.exists() and record.exists() and json.loads(record.read_text()) == sizes
        if db.exists() and not cached:
            parser.error(f"{db} exists but was not filled by this bench with {sizes}: remove it")
        process, port = start_daemon(os.path.abspath(args.trackerd), folder, db)
        try:
            client = Client(port)
            if cached:
                run_ids = [r["run_id"] for r in client.json("GET", "/api/runs")["runs"]]
                print(f"reusing {db} ({len(run_ids)} runs x {args.metrics} metrics x "
                      f"{args.points:,} points)")
            else:
                run_ids = ingest(client, args)
                if args.db:
                    record.write_text(json.dumps(sizes))
            time_requests(client, run_ids, args)
            if not args.no_browser:
                time_browser(port, run_ids, args, folder)
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
