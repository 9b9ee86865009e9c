#!/usr/bin/env bash
# nmt-tracker export --format tensorboard, read back by the real TensorBoard: a real nmt-trackerd
# (answering pages of 7 points, so the export pages), a run with metric points (one replaced, one
# past float's range) and evals (one without a step), exported to a directory that TensorBoard's
# own EventAccumulator loads; every tag, step, wall time and value (float32) must equal what the
# daemon has. A copy with one flipped CRC byte must lose events in the same reader (it checks the
# CRCs, so the comparison above means something). A second export replaces the first.
# TensorBoard comes from PyPI into a virtual environment made once per build folder (VENV_DIR);
# exit 77 (skipped) only when pip cannot reach the package index.
# Usage: tracker_tensorboard_export_test.sh NMT_TRACKER NMT_TRACKERD PYTHON VENV_DIR
set -euo pipefail
tracker_cli=$(realpath "$1") trackerd=$(realpath "$2") python=$3 venv=$4
# shellcheck source=tests/scripts/tiny_shards.sh
source "$(dirname "${BASH_SOURCE[0]}")/tiny_shards.sh"
work=$(mktemp -d)
tracker_pid=
trap 'stop_local_tracker; rm -rf "$work"' EXIT
fail() { echo "FAILED: $*"; exit 1; }

# TensorBoard in $venv, installed once.
# shellcheck source=tests/scripts/pip_venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/pip_venv.sh"
pip_venv_install "$python" "$venv" tensorboard tensorboard.backend.event_processing.event_accumulator tensorboard
tb_python=$venv/bin/python
cd "$work"

"$tracker_cli" --url http://127.0.0.1:9 export 1 --format tensorboard > /dev/null 2> err.txt &&
  fail "--format tensorboard without --out succeeded"
grep -q -- "--out DIR" err.txt || fail "no word of --out DIR: $(cat err.txt)"

# The daemon answers pages of 7 points, so that every series takes several pages.
printf '#!/bin/sh\nexec "%s" "$@" --max-response-points 7\n' "$trackerd" > trackerd-paged
chmod +x trackerd-paged
start_local_tracker "$work/trackerd-paged" tracker.db tracker.port || exit 1
url=http://127.0.0.1:$(cat tracker.port)

run_id=$("$python" - "$url" <<'PY'
import json, sys, urllib.request
url = sys.argv[1]
def post(path, body):
    req = urllib.request.Request(url + path, json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))
run = post("/api/runs", {"experiment": "tb-export", "name": "tb-run"})["run_id"]
t0 = 1733400000.125
loss = [{"key": "train/loss", "step": s * 10, "value": 7.123456789 / (s + 1) + 1e-9 * s,
         "time": t0 + s * 0.5} for s in range(25)]
lr = [{"key": "train/lr", "step": s, "value": 0.1 * s + 1e-12, "time": t0 + s * 3.25}
      for s in range(1, 12)]
odd = [{"key": "odd values", "step": 1 << 40, "value": -1e39, "time": t0 + 99},
       {"key": "odd values", "step": 3, "value": 3.0000001192092896, "time": t0 + 98}]
post(f"/api/runs/{run}/metrics", {"rank": 0, "sequence": 1, "points": loss + lr})
post(f"/api/runs/{run}/metrics", {"rank": 1, "sequence": 1, "points": odd})
# A point at a step the series has replaces it; the export must have the new value.
post(f"/api/runs/{run}/metrics", {"rank": 0, "sequence": 2, "points": [
    {"key": "train/loss", "step": 50, "value": 0.5, "time": t0 + 1000}]})
print(run)
PY
)
cli() { "$tracker_cli" --port-file tracker.port "$@"; }
cli log-eval "$run_id" --split valid --step 100 --bleu 12.34 --chrf 40.5 > /dev/null
cli log-eval "$run_id" --split test --step 240 --bleu 25.123456789 --perplexity 4.56 > /dev/null
cli log-eval "$run_id" --split final --bleu 26.0 > /dev/null

cli export tb-run --format tensorboard --out tb > out.txt 2> err.txt ||
  fail "export: $(cat err.txt)"
grep -q "38 metric points, 3 evals" err.txt || fail "summary line: $(cat err.txt)"
mapfile -t files < <(ls -A tb)
[[ ${#files[@]} -eq 1 && ${files[0]} == events.out.tfevents.*.nmt-tracker ]] ||
  fail "tb/ holds ${files[*]}, not one events.out.tfevents.*.nmt-tracker"

check() {  # DIR: TensorBoard's reading of DIR equals the daemon's run
  "$tb_python" - "$url" "$run_id" "$1" <<'PY'
import json, sys, urllib.parse, urllib.request
import numpy as np
from tensorboard.backend.event_processing import event_accumulator as ea
url, run, logdir = sys.argv[1:]
base = f"{url}/api/runs/{run}"
detail = json.load(urllib.request.urlopen(base))
expected = {}  # tag -> [(step, wall_time, float32 value)]
for key in detail["metric_keys"]:
    after, points = -(1 << 63), []
    while True:  # the daemon's pages, as any client reads them
        q = urllib.parse.urlencode({"key": key, "after_step": after})
        page = json.load(urllib.request.urlopen(f"{base}/metrics?{q}"))["points"]
        if not page:
            break
        points += page
        after = page[-1]["step"]
    expected[key] = [(p["step"], p["time"], p["value"]) for p in points]
for e in detail["evals"]:
    for figure, field in (("bleu", "bleu"), ("chrf", "chrf"), ("ppl", "perplexity")):
        if e.get(field) is not None:
            expected.setdefault(f"eval/{e['split']}/{figure}", []).append(
                (e.get("step") or 0, e["created_at"], e[field]))
assert len(expected["train/loss"]) == 25 and len(expected["train/lr"]) == 11, expected
assert dict((s, v) for s, _, v in expected["train/loss"])[50] == 0.5
assert sorted(expected) == ["eval/final/bleu", "eval/test/bleu", "eval/test/ppl",
                            "eval/valid/bleu", "eval/valid/chrf", "odd values", "train/loss",
                            "train/lr"], sorted(expected)

acc = ea.EventAccumulator(logdir, size_guidance={ea.SCALARS: 0})
acc.Reload()
tags = sorted(acc.Tags()["scalars"])
assert tags == sorted(expected), f"TensorBoard tags {tags} != {sorted(expected)}"
with np.errstate(over="ignore"):
    for tag, points in expected.items():
        got = [(s.step, s.wall_time, s.value) for s in acc.Scalars(tag)]
        want = sorted((s, t, float(np.float32(v))) for s, t, v in points)
        assert sorted(got) == want, f"{tag}: TensorBoard {got} != daemon {want}"
print(f"{sum(len(p) for p in expected.values())} scalars in {len(expected)} tags match")
PY
}
check tb || fail "TensorBoard's reading of the export"

# The reader checks CRCs: one flipped byte in the 3rd record's data CRC loses that record and
# every one after it, and check() must notice.
mkdir corrupt
"$python" - "tb/${files[0]}" "corrupt/${files[0]}" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
at = 0
for _ in range(3):
    (length,) = struct.unpack_from("<Q", data, at)
    crc_at = at + 12 + length
    at = crc_at + 4
data[crc_at] ^= 0x01
open(sys.argv[2], "wb").write(data)
PY
if check corrupt > corrupt.txt 2>&1; then fail "a file with a wrong CRC read back in full"; fi

# A second export replaces the first (TensorBoard would show every point twice); files that
# nmt-tracker did not write stay.
touch tb/events.out.tfevents.1.elsewhere.other
sleep 1.1
cli export "$run_id" --format tensorboard --out tb 2> err2.txt || fail "second export: $(cat err2.txt)"
grep -q "removed the earlier export .*${files[0]}" err2.txt || fail "no removal: $(cat err2.txt)"
[[ ! -e tb/${files[0]} && -e tb/events.out.tfevents.1.elsewhere.other ]] ||
  fail "after the second export: $(ls -A tb)"
exports=(tb/events.out.tfevents.*.nmt-tracker)
[[ ${#exports[@]} -eq 1 && -f ${exports[0]} ]] || fail "not one export: $(ls -A tb)"
rm tb/events.out.tfevents.1.elsewhere.other
check tb || fail "TensorBoard's reading of the second export"
echo "PASSED"
