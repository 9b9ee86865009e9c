#!/usr/bin/env python3
"""The JSON summary of one jobs/gpu-check.sh run, from what its steps left in its work folder.

work/runs/NAME      "rc start end limit" of each case (or "skip REASON")
work/results/*.json the figures the programs wrote (nmt-sysinfo, gtest, the benchmarks)
work/train/         the training run (metrics.jsonl)
work/fatal          the error that stopped the run, if one did

Every step is in the summary with a status: ok, failed, skipped or "not run" (the run stopped
before it). Prints a short table; exits 1 unless every step is ok.
"""

import argparse
import json
import math
import os
import sys
import time

STEPS = ["sysinfo", "tests", "matmul", "throughput", "train", "decode"]


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_cases(work):
    """{step: {case: {"status", "rc", "seconds", "limit"}}} from work/runs."""
    cases = {}
    runs = os.path.join(work, "runs")
    for name in sorted(os.listdir(runs)) if os.path.isdir(runs) else []:
        step, _, case = name.partition(".")
        with open(os.path.join(runs, name)) as f:
            fields = f.read().split()
        if fields[0] == "skip":
            entry = {"status": "skipped", "reason": " ".join(fields[2:])}
        else:
            rc, t0, t1, limit = int(fields[0]), float(fields[1]), float(fields[2]), int(fields[3])
            status = "ok" if rc == 0 else "timed out" if rc in (124, 137) else "failed"
            entry = {"status": status, "rc": rc, "seconds": round(t1 - t0, 2), "limit": limit}
        cases.setdefault(step, {})[case] = entry
    return cases


def positive(*values):
    return all(isinstance(v, (int, float)) and math.isfinite(v) and v > 0 for v in values)


def sysinfo(work, cases):
    info = load_json(os.path.join(work, "results", "sysinfo.report.json"))
    if not info:
        return {}, "no nmt-sysinfo JSON"
    cuda = info.get("cuda", {})
    devices = cuda.get("devices", [])
    out = {"libtorch": info.get("libtorch"), "libtorch_line": info.get("libtorch_line"),
           "device": info.get("device"), "cuda_runtime": cuda.get("runtime"),
           "cudnn": cuda.get("cudnn"), "nccl": cuda.get("nccl"),
           "gpus": [d.get("name") for d in devices], "mpi": info.get("mpi"),
           "cpu_matmul_gflops": info.get("matmul_gflops")}
    return out, None if positive(info.get("matmul_gflops")) else "no matmul figure"


def tests(work, cases):
    totals = {"tests": 0, "passed": 0, "failed": 0, "skipped": 0}
    binaries = {}
    for name in cases:
        report = load_json(os.path.join(work, "results", "tests.%s.json" % name))
        counts = {"tests": 0, "passed": 0, "failed": 0, "skipped": 0, "failed_names": []}
        for suite in (report or {}).get("testsuites", []):
            for test in suite.get("testsuite", []):
                counts["tests"] += 1
                full = "%s.%s" % (suite.get("name"), test.get("name"))
                if test.get("failures"):
                    counts["failed"] += 1
                    counts["failed_names"].append(full)
                elif test.get("result") == "SKIPPED":
                    counts["skipped"] += 1
                else:
                    counts["passed"] += 1
        counts["report"] = report is not None
        binaries[name] = counts
        for key in totals:
            totals[key] += counts[key]
    out = dict(totals, binaries=binaries)
    if totals["failed"]:
        return out, "%d tests failed" % totals["failed"]
    if totals["tests"] == 0:
        return out, "no tests ran"
    missing = [n for n, c in binaries.items() if not c["report"]]
    return out, "no gtest report from " + ", ".join(missing) if missing else None


def matmul(work, cases):
    out = {}
    for case in cases:
        figure = load_json(os.path.join(work, "results", "matmul.%s.json" % case)) or {}
        out[case] = {"tflops": figure.get("tflops"), "math": figure.get("math"), "n": figure.get("n")}
    bad = [c for c, f in out.items() if not positive(f["tflops"])]
    return {"peaks": out}, "no figure for " + ", ".join(bad) if bad else None


def throughput(work, cases):
    runs = []
    for case in cases:
        model, _, precision = case.partition(".")
        figures = load_json(os.path.join(work, "results", "throughput.%s.json" % case)) or {}
        result = (figures.get("results") or [{}])[0]
        peak = figures.get("peak", {})
        runs.append({"model": model, "precision": precision, "peak_math": peak.get("math"),
                     "peak_tflops": peak.get("tflops"),
                     "tokens_per_side": result.get("tokens_per_side"),
                     "parameters": result.get("parameters"),
                     "seconds_per_step": result.get("seconds_per_step"),
                     "tokens_per_second": result.get("tokens_per_second"),
                     "model_tflops": result.get("model_tflops"), "mfu": result.get("mfu"),
                     "peak_memory_gib": (result.get("peak_memory_bytes") or 0) / 2**30,
                     "fused_adam": result.get("fused_adam")})
    bad = [r["model"] + "." + r["precision"] for r in runs
           if not positive(r["tokens_per_second"], r["mfu"], r["peak_tflops"])]
    return {"runs": runs}, "no figures for " + ", ".join(bad) if bad else None


def train(work, cases):
    metrics = {}
    try:
        with open(os.path.join(work, "train", "metrics.jsonl")) as f:
            for line in f:
                row = json.loads(line)
                metrics.setdefault(row["key"], []).append((row["step"], row["value"]))
    except (OSError, ValueError):
        return {}, "no metrics.jsonl from the training run"
    loss = sorted(metrics.get("train/loss", []))
    ppl = sorted(metrics.get("valid/ppl", []))
    speed = sorted(metrics.get("train/tokens_per_s", []))
    if len(loss) < 2:
        return {}, "fewer than two logged training losses"
    out = {"first_step": loss[0][0], "first_loss": loss[0][1], "last_step": loss[-1][0],
           "last_loss": loss[-1][1], "loss_fell": loss[-1][1] < loss[0][1],
           "valid_step": ppl[-1][0] if ppl else None, "valid_ppl": ppl[-1][1] if ppl else None,
           "tokens_per_second": speed[-1][1] if speed else None,
           "seconds": cases.get("multi30k", {}).get("seconds")}
    if not out["loss_fell"]:
        return out, "the training loss did not fall"
    if not positive(out["valid_ppl"], out["tokens_per_second"]):
        return out, "no validation perplexity or tokens/s"
    return out, None


def decode(work, cases):
    figures = load_json(os.path.join(work, "results", "decode.beam4.json"))
    if not figures:
        return {}, "no beam_cache_bench JSON"
    out = {"sentences": figures.get("sentences"), "beam": figures.get("beam"),
           "precision": figures.get("precision"),
           "kv_cache_sentences_per_second": figures["kv_cache"]["sentences_per_second"],
           "recompute_sentences_per_second": figures["recompute"]["sentences_per_second"],
           "speedup": figures.get("speedup")}
    ok = positive(out["kv_cache_sentences_per_second"], out["recompute_sentences_per_second"])
    return out, None if ok else "no decoding speed"


def summarize(args):
    work = args.work
    cases = read_cases(work)
    fatal_path = os.path.join(work, "fatal")
    fatal = open(fatal_path).read().strip() if os.path.exists(fatal_path) else None
    summary = {"mode": args.mode, "device": args.device, "status": "ok", "error": fatal,
               "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(args.started)),
               "seconds": round(time.time() - args.started, 1), "budget_seconds": args.budget,
               "steps": {}}
    carry = load_json(os.path.join(args.carry, "manifest.json")) if args.mode == "gpu" else None
    if carry:
        summary["carry"] = {k: carry.get(k) for k in ("created", "git_commit", "libtorch_version",
                                                       "total_bytes")}
    for name, judge in zip(STEPS, [sysinfo, tests, matmul, throughput, train, decode]):
        step_cases = cases.get(name, {})
        entry = {"status": "not run", "cases": step_cases}
        if step_cases:
            figures, problem = judge(work, step_cases)
            entry.update(figures)
            statuses = {c["status"] for c in step_cases.values()}
            if statuses == {"ok"} and not problem:
                entry["status"] = "ok"
            else:
                entry["status"] = "skipped" if statuses == {"skipped"} else "failed"
                bad = ["%s %s" % (n, c["status"]) for n, c in step_cases.items() if c["status"] != "ok"]
                entry["problem"] = "; ".join(bad + ([problem] if problem else []))
            entry["seconds"] = round(sum(c.get("seconds", 0) for c in step_cases.values()), 1)
        summary["steps"][name] = entry
        if entry["status"] != "ok":
            summary["status"] = "failed"
    # Cases outside the six steps prepare their inputs (the smoke's tiny shards).
    setup = {"%s.%s" % (step, name): case for step, named in cases.items() if step not in STEPS
             for name, case in named.items()}
    if setup:
        summary["setup"] = setup
    if fatal or any(c["status"] != "ok" for c in setup.values()):
        summary["status"] = "failed"
    with open(args.out, "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    return summary


def print_table(summary):
    print("%-11s %-8s %8s  %s" % ("step", "status", "seconds", "figures / problem"))
    for name, s in summary["steps"].items():
        if s["status"] != "ok":
            note = s.get("problem", "")
        elif name == "sysinfo":
            note = "%s, %s" % (s.get("libtorch"), ", ".join(s.get("gpus") or []) or s.get("device"))
        elif name == "tests":
            note = "%s passed, %s failed, %s skipped" % (s.get("passed"), s.get("failed"),
                                                         s.get("skipped"))
        elif name == "matmul":
            note = ", ".join("%s %.1f TFLOP/s" % (f["math"], f["tflops"] or 0)
                             for f in s.get("peaks", {}).values())
        elif name == "throughput":
            note = "; ".join("%s %s %.0f tok/s MFU %.1f%%" % (r["model"], r["precision"],
                                                              r["tokens_per_second"] or 0,
                                                              100 * (r["mfu"] or 0))
                             for r in s.get("runs", []))
        elif name == "train":
            note = "loss %.3f (step %s) -> %.3f (step %s), valid ppl %.2f" % (
                s.get("first_loss") or 0, s.get("first_step"), s.get("last_loss") or 0,
                s.get("last_step"), s.get("valid_ppl") or 0)
        else:
            note = "%.1f / %.1f sentences/s (KV cache / recompute)" % (
                s.get("kv_cache_sentences_per_second") or 0,
                s.get("recompute_sentences_per_second") or 0)
        print("%-11s %-8s %8s  %s" % (name, s["status"], s.get("seconds", "-"), note))
    for name, case in summary.get("setup", {}).items():
        if case["status"] != "ok":
            print("%-11s %-8s" % (name, case["status"]))
    if summary["error"]:
        print("stopped: " + summary["error"])
    print("overall: " + summary["status"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--mode", required=True)
    parser.add_argument("--device", default="")
    parser.add_argument("--budget", type=int, required=True)
    parser.add_argument("--started", type=float, required=True)
    parser.add_argument("--carry", default="")
    summary = summarize(parser.parse_args())
    print_table(summary)
    return 0 if summary["status"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
