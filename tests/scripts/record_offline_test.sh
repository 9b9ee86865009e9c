#!/usr/bin/env bash
# nmt-evaluate --record and nmt-average --record while the daemon is away, against a real
# nmt-trackerd:
#   1. a tiny run trained against the daemon (by its port file); the daemon stopped: nmt-evaluate
#      (the port file gone) and nmt-average (a URL nobody listens on) exit 0, each warning with its
#      own spool file in the run directory and `nmt-tracker sync RUN`; the daemon started again on
#      the same database: sync delivers the eval (BLEU and perplexity as nmt-evaluate --json printed
#      them) and both artifacts and removes the spools; a second sync changes nothing in the
#      database;
#   2. a copy of the run under a uid the daemon does not know: nmt-evaluate --record spools,
#      warning that sync registers the run, and sync registers it with the eval;
#   3. the daemon up: both tools deliver at once and leave no spool.
# Usage: record_offline_test.sh BUILD_DIR PYTHON DATA_DIR
set -euo pipefail
# shellcheck source=tests/scripts/tiny_shards.sh
source "$(dirname "${BASH_SOURCE[0]}")/tiny_shards.sh"
tracked_test_init "$@"

port_file=$work/tracker.port
make_tiny_shards "$bin/nmt-preprocess" "$data" "$work/shards"
start_local_tracker "$bin/nmt-trackerd" "$work/tracker.db" "$port_file"
run=$work/run
"$bin/nmt-train" --data "$work/shards" --run-dir "$run" --log-level warn \
  "${tiny_model_settings[@]}" --set train.threads=1 --set train.validate_every=0 \
  --set checkpoint.every_steps=2 --set train.max_steps=6 --experiment record-test \
  --tracker-port-file "$port_file" > "$work/train.out" 2>&1 || fail "training: $(tail -3 "$work/train.out")"
checkpoint=$run/$(checkpoint_of 6)

# evaluate NAME CHECKPOINT BEAM: nmt-evaluate --record --json; stdout in $work/NAME.json, stderr in
# $work/NAME.err.
evaluate() {
  "$bin/nmt-evaluate" --checkpoint "$2" --split valid --beam "$3" --sentences 10 --threads 1 \
    --record --json > "$work/$1.json" 2> "$work/$1.err"
}
average() {  # average NAME [FLAGS...]: nmt-average --record of the run's last 3 checkpoints
  local name=$1
  shift
  mkdir -p "$work/$name"
  "$bin/nmt-average" --run-dir "$run" --last 3 --output "$work/$name/averaged.h5" --record "$@" \
    > "$work/$name.out" 2> "$work/$name.err"
}
tool_spools() { compgen -G "$1/tracker-spool-2*.jsonl" || true; }
# spooled NAME RUN_DIR: sets spool to the spool file in RUN_DIR that NAME's warning names, which
# must hold something, and checks that the warning says to sync RUN_DIR.
spooled() {
  spool=$(grep -o "$2/tracker-spool-[^ ]*\.jsonl" "$work/$1.err" | head -1 || true)
  [[ -n "$spool" && -s "$spool" ]] || fail "$1: no spool file named, or it is empty: $(cat "$work/$1.err")"
  grep -q "nmt-tracker sync $2\`" "$work/$1.err" ||
    fail "$1: the warning does not say to sync $2: $(cat "$work/$1.err")"
}

echo "== the daemon stopped: nmt-evaluate and nmt-average spool and exit 0"
stop_local_tracker
tracker_pid=
[[ ! -e "$port_file" ]] || fail "the stopped daemon left its port file"
rc=0
evaluate offline "$checkpoint" 1 || rc=$?
((rc == 0)) || fail "nmt-evaluate --record with the daemon down: exit $rc: $(tail -5 "$work/offline.err")"
spooled offline "$run"
eval_spool=$spool
grep -q '"run_id":null' "$eval_spool" || fail "the spool's entries name a run: $(cat "$eval_spool")"
dead_port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
average averaged --tracker-url "http://127.0.0.1:$dead_port" || fail "nmt-average --record with the daemon down: $(tail -5 "$work/averaged.err")"
spooled averaged "$run"
average_spool=$spool
[[ "$eval_spool" != "$average_spool" && $(tool_spools "$run" | wc -l) == 2 ]] ||
  fail "not one spool per tool: $(tool_spools "$run")"
[[ ! -e "$run/checkpoints/tracker-spool-rank0.jsonl" ]] || fail "a spool beside the checkpoints"

echo "== the daemon back on the same database: sync delivers, once"
start_local_tracker "$bin/nmt-trackerd" "$work/tracker.db" "$port_file"
url=http://127.0.0.1:$(cat "$port_file")
sync() { "$bin/nmt-tracker" --url "$url" --log-level warn sync "$@"; }
sync "$run" > "$work/sync1.out" || fail "sync: $(cat "$work/sync1.out")"
cat "$work/sync1.out"
grep -q ", 1 evals, " "$work/sync1.out" || fail "sync did not deliver the eval: $(cat "$work/sync1.out")"
[[ -z "$(tool_spools "$run")" ]] || fail "delivered spools left: $(tool_spools "$run")"

# check_run RUN_DIR EVALS...: the daemon's run of RUN_DIR's uid has exactly the evals of the
# nmt-evaluate --json outputs EVALS (equal figures), the checkpoints they scored, and each average
# of $work/*/averaged.h5 named in AVERAGES (space-separated) with its step and count.
check_run() {
  "$python" - "$url" "${averages:-}" "$@" <<'PY'
import json, os, sys, urllib.request
url, averages, run_dir, outputs = sys.argv[1], sys.argv[2].split(), sys.argv[3], sys.argv[4:]
get = lambda path: json.load(urllib.request.urlopen(url + path))
uid = json.load(open(os.path.join(run_dir, "run.json")))["uid"]
runs = get(f"/api/runs?uid={uid}")["runs"]
assert len(runs) == 1, f"{len(runs)} runs of uid {uid}"
run = get(f"/api/runs/{runs[0]['run_id']}")
evals = run["evals"]
assert len(evals) == len(outputs), f"{len(evals)} evals, expected {len(outputs)}: {evals}"
artifacts = {(a["kind"], a["path"]): a for a in run["artifacts"]}
for output in outputs:
    printed = json.load(open(output))
    signature = f"nmt-evaluate|beam:{printed['beam']}|"
    match = [e for e in evals if e["signature"].startswith(signature)
             and e["step"] == printed["step"] and e["split"] == printed["split"]
             and e["bleu"] == printed["bleu"] and e["perplexity"] == printed["perplexity"]]
    assert len(match) == 1, f"no eval equal to {printed}: {evals}"
    scored = os.path.abspath(printed["checkpoint"])
    assert ("checkpoint", scored) in artifacts, f"{scored} not an artifact: {sorted(artifacts)}"
for average in averages:
    a = artifacts.get(("averaged", average))
    assert a and a["step"] == 6 and a["averaged_from"] == 3, f"average {average}: {a}"
print(f"run {runs[0]['run_id']}: {len(evals)} evals, {len(run['artifacts'])} artifacts")
PY
}
averages="$work/averaged/averaged.h5" check_run "$run" "$work/offline.json" ||
  fail "the synced run"
dump() { "$python" -c 'import sqlite3, sys; print("\n".join(sqlite3.connect(sys.argv[1]).iterdump()))' "$work/tracker.db"; }
dump > "$work/dump1.sql"
sync "$run" > "$work/sync2.out" || fail "second sync: $(cat "$work/sync2.out")"
grep -q ", 0 evals, " "$work/sync2.out" || fail "the second sync sent evals: $(cat "$work/sync2.out")"
dump > "$work/dump2.sql"
diff "$work/dump1.sql" "$work/dump2.sql" > "$work/dump.diff" ||
  fail "the second sync changed the database: $(head -20 "$work/dump.diff")"

echo "== a run the daemon does not know: spooled, and sync registers it"
copy=$work/copy
cp -r "$run" "$copy"
rm -f "$copy/run.lock"
"$python" - "$copy" <<'PY'
import json, os, sys
path = os.path.join(sys.argv[1], "run.json")
identity = json.load(open(path))
identity["uid"], identity["run_dir"] = "c" * 32, sys.argv[1]
json.dump(identity, open(path, "w"))
PY
evaluate unknown "$copy/$(checkpoint_of 6)" 1 ||
  fail "nmt-evaluate --record of an unknown run: $(tail -5 "$work/unknown.err")"
spooled unknown "$copy"
grep -q "registers the run" "$work/unknown.err" || fail "no word of registering: $(cat "$work/unknown.err")"
sync "$copy" > "$work/sync3.out" || fail "sync of the copy: $(cat "$work/sync3.out")"
check_run "$copy" "$work/unknown.json" || fail "the copy's run"
[[ -z "$(tool_spools "$copy")" ]] || fail "delivered spools left: $(tool_spools "$copy")"

echo "== the daemon up: delivered at once, no spool"
evaluate online "$checkpoint" 2 || fail "nmt-evaluate --record: $(tail -5 "$work/online.err")"
grep -q "recorded in run" "$work/online.err" || fail "not recorded: $(cat "$work/online.err")"
average online_average || fail "nmt-average --record: $(tail -5 "$work/online_average.err")"
[[ -z "$(tool_spools "$run")" ]] || fail "spools left: $(tool_spools "$run")"
averages="$work/averaged/averaged.h5 $work/online_average/averaged.h5" \
  check_run "$run" "$work/offline.json" "$work/online.json" || fail "the run after online records"
echo "PASS"
