#!/usr/bin/env bash
# nmt-sweep end to end on a micro sweep (3 rows, tiny model, a few steps) with a real nmt-trackerd:
#   1. --dry-run lists one line per row, label first;
#   2. the sweep runs every row (train, average, evaluate) and `nmt-tracker table` shows 3 rows
#      with the varied columns and real perplexity, BLEU and parameter figures;
#   3. a sweep killed (SIGKILL, with the tools it started) during its second row, then re-run, skips the
#      finished first row (its eval.json untouched) and resumes the second from its checkpoint;
#   4. SIGTERM to a running sweep is passed on to its row: nmt-train checkpoints and stops
#      ("preempted"), no other row starts, and nmt-sweep exits 75.
# Usage: sweep_test.sh BUILD_DIR DATA_DIR
set -euo pipefail
# shellcheck source=tests/scripts/tiny_shards.sh
source "$(dirname "${BASH_SOURCE[0]}")/tiny_shards.sh"
build=$1 data=$2
[[ -f "$data/val.en.gz" ]] || { echo "Multi30k not found at $data"; exit 77; }
bin=$build/apps
work=$(mktemp -d)
tracker_pid=
sweep_pid=''
cleanup() {
  [[ -n "$sweep_pid" ]] && { pkill -9 -P "$sweep_pid"; kill -9 "$sweep_pid"; } 2>/dev/null
  stop_local_tracker
  rm -rf "$work"
}
trap cleanup EXIT
[[ -n "${KEEP:-}" ]] && trap - EXIT

make_tiny_shards "$bin/nmt-preprocess" "$data" "$work/shards"
start_local_tracker "$bin/nmt-trackerd" "$work/tracker.db" "$work/port"

write_micro_sweep_base "$work/base.yaml" 600 2
write_spec() {  # name max_steps
  cat > "$work/$1.yaml" <<YAML
name: $1
base: base.yaml
set: [train.max_steps=$2]
average_last: 2
eval: {split: valid, beam: 2, sentences: 40}
rows:
  - {label: base, reference: {ppl: 4.92, bleu: 25.8, params: 65}}
  - {label: A, set: [model.heads=1, model.d_k=32, model.d_v=32]}
  - {label: C, set: [model.d_ff=128]}
YAML
}
sweep=("$bin/nmt-sweep" --tracker-port-file "$work/port" --threads 1)
tracker=("$bin/nmt-tracker" --port-file "$work/port")

# 1. dry run
write_spec micro 8
"${sweep[@]}" --spec "$work/micro.yaml" --sweep-dir "$work/micro" --dry-run | tee "$work/dry.txt"
[[ $(wc -l < "$work/dry.txt") -eq 3 ]] || { echo "FAIL: dry run lists $(wc -l < "$work/dry.txt") rows"; exit 1; }
grep -q '^A .*model.heads=1 model.d_k=32 model.d_v=32' "$work/dry.txt" || { echo "FAIL: dry-run line"; exit 1; }

# 2. the whole sweep, then the table
"${sweep[@]}" --spec "$work/micro.yaml" --sweep-dir "$work/micro" --log-level warn
"${tracker[@]}" table --sweep micro --format csv | tee "$work/table.csv"
python3 - "$work/table.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 3, f"{len(rows)} rows"
cols = rows[0].keys()
for c in ("h", "d_k", "d_v", "d_ff", "PPL (dev)", "BLEU (dev)", "params ×10^6", "paper PPL"):
    assert c in cols, f"no column {c}: {list(cols)}"
ppl = [float(r["PPL (dev)"]) for r in rows]
bleu = [float(r["BLEU (dev)"]) for r in rows]
assert all(0 <= b <= 100 for b in bleu), bleu
assert rows[0]["paper PPL"] == "4.92", rows[0]["paper PPL"]
assert all(1 < p < 400 for p in ppl), ppl            # a real perplexity (vocabulary 400)
assert [r["h"] for r in rows] == ["2", "1", "2"], [r["h"] for r in rows]
params = [float(r["params ×10^6"]) for r in rows]
assert params[0] == params[1] < params[2], params    # A keeps h x d_k; C's wider FFN adds
print("table ok:", ppl, params)
PY

# 3. interrupted sweep: kill it while row 1 trains, then re-run
write_spec resumed 400
"${sweep[@]}" --spec "$work/resumed.yaml" --sweep-dir "$work/resumed" > "$work/first.log" 2>&1 &
sweep_pid=$!
# Up to 240 s: row 0 (400 steps, averaging, beam-search evaluation) runs first, slowly on a
# loaded machine.
wait_for_checkpoint "$work/resumed/01-A/train" "$sweep_pid" 2400
# As a node loss would: the sweep and the tools it started (its children) die at once.
kill -STOP "$sweep_pid" 2>/dev/null || true
pkill -9 -P "$sweep_pid" || true
kill -9 "$sweep_pid" 2>/dev/null || true
wait "$sweep_pid" 2>/dev/null || true
sweep_pid=
[[ -f "$work/resumed/00-base/eval.json" ]] || { cat "$work/first.log"; echo "FAIL: row 0 did not finish first"; exit 1; }
[[ ! -f "$work/resumed/01-A/eval.json" ]] || { echo "FAIL: row 1 finished before the kill"; exit 1; }
before=$(stat -c '%Y %i' "$work/resumed/00-base/eval.json")
"${sweep[@]}" --spec "$work/resumed.yaml" --sweep-dir "$work/resumed" > "$work/second.log" 2>&1
grep -q 'row 0 (base): done already, skipped' "$work/second.log" || { cat "$work/second.log"; echo "FAIL: row 0 not skipped"; exit 1; }
grep -q 'row 1 (A): resuming' "$work/second.log" || { cat "$work/second.log"; echo "FAIL: row 1 not resumed"; exit 1; }
grep -q 'resumed from .*step-0' "$work/resumed/01-A/log.txt" || { echo "FAIL: nmt-train did not resume"; exit 1; }
[[ "$(stat -c '%Y %i' "$work/resumed/00-base/eval.json")" == "$before" ]] || { echo "FAIL: row 0 redone"; exit 1; }
for row in 00-base 01-A 02-C; do [[ -f "$work/resumed/$row/eval.json" ]] || { echo "FAIL: $row"; exit 1; }; done
[[ $("${tracker[@]}" table --sweep resumed --format csv | wc -l) -eq 4 ]] || { echo "FAIL: resumed table"; exit 1; }

# 4. SIGTERM to the local queue
# step_20_logged SWEEP: row 0 of sweep SWEEP has logged step 20 (the sweep trains it first, slowly
# on a loaded machine; wait_while_running cuts the wait short if the sweep ends).
step_20_logged() { grep -qs '"step": 20,' "$work/$1/00-base/train/metrics.jsonl"; }
write_spec stopped 4000
"${sweep[@]}" --spec "$work/stopped.yaml" --sweep-dir "$work/stopped" > "$work/stopped.log" 2>&1 &
sweep_pid=$!
wait_while_running "$sweep_pid" 300 step_20_logged stopped ||
  { cat "$work/stopped.log"; echo "FAIL: row 0 did not reach step 20"; exit 1; }
kill -TERM "$sweep_pid"
status=0
wait "$sweep_pid" || status=$?
sweep_pid=
[[ $status -eq 75 ]] || { cat "$work/stopped.log"; echo "FAIL: nmt-sweep exit $status after SIGTERM, not 75"; exit 1; }
grep -q 'stopped (preempted' "$work/stopped/00-base/log.txt" || { tail "$work/stopped/00-base/log.txt"; echo "FAIL: row 0 did not checkpoint"; exit 1; }
[[ ! -e "$work/stopped/01-A" ]] || { echo "FAIL: row 1 started after the stop"; exit 1; }

# 5. Ctrl-C: SIGINT to the whole foreground process group, as a terminal sends it. The rows run in
# their own group, so they get the stop once (through nmt-sweep) and still checkpoint.
write_spec interrupted 4000
set -m  # the sweep as a job of its own: its own process group, SIGINT not ignored
"${sweep[@]}" --spec "$work/interrupted.yaml" --sweep-dir "$work/interrupted" > "$work/interrupted.log" 2>&1 &
sweep_pid=$!
set +m
wait_while_running "$sweep_pid" 300 step_20_logged interrupted ||
  { cat "$work/interrupted.log"; echo "FAIL: row 0 did not reach step 20"; exit 1; }
kill -INT -- "-$sweep_pid"
status=0
wait "$sweep_pid" || status=$?
sweep_pid=
[[ $status -eq 130 ]] || { cat "$work/interrupted.log"; echo "FAIL: nmt-sweep exit $status after Ctrl-C, not 130"; exit 1; }
grep -q 'stopped (interrupted' "$work/interrupted/00-base/log.txt" || { tail "$work/interrupted/00-base/log.txt"; echo "FAIL: row 0 did not checkpoint on Ctrl-C"; exit 1; }
echo "ok"
