#!/usr/bin/env bash
# jobs/gpu-check.sh --cpu-smoke: every step of the GPU check at tiny sizes on the CPU, so that the
# script cannot rot between GPU loans. Checks its JSON summary: every step present and ok, its
# figures positive, the training loss falling.
# Usage: gpu_check_smoke_test.sh SOURCE_DIR BUILD_DIR PYTHON DATA_DIR
set -euo pipefail
source_dir=$1 build=$2 python=$3 data=$4
[[ -f "$data/val.en.gz" ]] || { echo "Multi30k not found at $data"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

NMT_DATA_DIR=$data "$source_dir/jobs/gpu-check.sh" --cpu-smoke --build-dir "$build" --out "$work"

"$python" - "$work/summary.json" <<'PY'
import json, math, sys
s = json.load(open(sys.argv[1]))
def positive(*values):
    return all(isinstance(v, (int, float)) and math.isfinite(v) and v > 0 for v in values)
steps = s["steps"]
assert list(steps) == ["sysinfo", "tests", "matmul", "throughput", "train", "decode"], list(steps)
for name, step in steps.items():
    assert step["status"] == "ok", (name, step.get("problem"))
    assert step["cases"] and all(c["status"] == "ok" for c in step["cases"].values()), name
assert s["status"] == "ok" and s["mode"] == "cpu-smoke" and s["error"] is None
assert positive(steps["sysinfo"]["cpu_matmul_gflops"])
t = steps["tests"]
assert t["tests"] > 0 and t["failed"] == 0 and t["tests"] == t["passed"] + t["skipped"], t
assert set(t["binaries"]) == {"runtime_test", "trainer_test", "decode_test",
                              "dist_training_test"}
assert set(steps["matmul"]["peaks"]) == {"bf16", "fp32"}
assert all(positive(p["tflops"], p["n"]) for p in steps["matmul"]["peaks"].values())
runs = {(r["model"], r["precision"]): r for r in steps["throughput"]["runs"]}
assert set(runs) == {("base", "bf16"), ("big", "bf16"), ("base", "fp32")}, set(runs)
for r in runs.values():
    assert positive(r["tokens_per_second"], r["model_tflops"], r["mfu"], r["peak_tflops"],
                    r["tokens_per_side"], r["parameters"]), r
tr = steps["train"]
assert tr["loss_fell"] and tr["last_step"] > tr["first_step"], tr
assert positive(tr["first_loss"], tr["last_loss"], tr["valid_ppl"], tr["tokens_per_second"])
d = steps["decode"]
assert positive(d["kv_cache_sentences_per_second"], d["recompute_sentences_per_second"],
                d["speedup"], d["sentences"]), d
print("gpu-check smoke summary: every step ok")
PY
