#!/usr/bin/env bash
# A 3-row micro sweep as a Slurm job array: `nmt-sweep --slurm FILE --submit` writes one array
# task per row (each training its row through srun --mpi=pmix over --ranks-per-row ranks, on the
# --device it is given, then averaging and scoring it), every task completes, and
# `nmt-tracker table --sweep NAME` shows the 3 rows with their scores.
# Usage: sweep_array_test.sh BUILD_DIR DATA_DIR CLUSTER_DIR PYTHON
set -euo pipefail
# shellcheck source=tests/slurm/slurm_test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/slurm_test_lib.sh"
slurm_test_init "$@"
start_tracker
write_micro_sweep_base "$work/base.yaml" 300 4
cat > "$work/micro.yaml" <<YAML
name: slurm-micro
base: base.yaml
average_last: 2
eval: {split: valid, beam: 2, sentences: 20}
rows:
  - {label: base}
  - {label: A, set: [model.heads=1, model.d_k=32, model.d_v=32]}
  - {label: C, set: [model.d_ff=128]}
YAML
"$bin/nmt-sweep" --spec "$work/micro.yaml" --sweep-dir "$work/sweep" --slurm "$work/sweep.sbatch" \
  --ranks-per-row 2 --cpus-per-task 1 --device cpu --time 10 \
  --tracker-port-file "$work/tracker.port" --submit | tee "$work/submit.txt"
grep -q -- '--launcher .srun --mpi=pmix --kill-on-bad-exit=1 --ntasks=2 --cpus-per-task=1' \
  "$work/sweep.sbatch" || fail "the row is not launched through srun with PMIx"
job=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' "$work/submit.txt")
[[ -n "$job" ]] || fail "no job id from sbatch"
slurm_jobs+=("$job")
for task in 0 1 2; do wait_job_state "${job}_$task" COMPLETED 150; done
grep -q -- "--device 'cpu'" "$work/sweep.sbatch" || fail "the rows are not given their device"
for row in 00-base 01-A 02-C; do [[ -f "$work/sweep/$row/eval.json" ]] || fail "row $row not scored"; done
"$bin/nmt-tracker" --port-file "$work/tracker.port" table --sweep slurm-micro --format csv |
  tee "$work/table.csv"
"$python" - "$work/table.csv" <<'PY' || fail "sweep table"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 3, f"{len(rows)} rows"
assert all(1 < float(r["PPL (dev)"]) < 400 for r in rows), [r["PPL (dev)"] for r in rows]
PY
echo ok
