#!/usr/bin/env bash
# Every command README.md prints, run or shown to be run. The commands of its bash blocks and of its
# results table are read from README.md itself:
# - the ones that take seconds run here as printed, from a scratch directory laid out like a
#   checkout after the quickstart (jobs/, configs/, build-current/, runs/data/multi30k-bpe4000 with
#   tiny shards, a tracker whose port is in runs/tracker.port); a training command gets a tiny
#   model and a few steps appended;
# - the quickstart, the Slurm submission and the test command itself are run by the CTest tests
#   named below (or by .ci/run), and this test checks that those exist and run them.
# A README command that is neither fails the test, so the README cannot print a command that CI
# never runs. The results table's parameter counts are checked against nmt-train --count-params.
# Usage: readme_commands_test.sh BUILD_DIR DATA_DIR
set -euo pipefail
build=$(cd "$1" && pwd) data=$2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
readme=$root/README.md
# shellcheck source=tests/scripts/tiny_shards.sh
source "$root/tests/scripts/tiny_shards.sh"
[[ -f "$data/val.en.gz" ]] || { echo "Multi30k not found at $data"; exit 77; }
work=$(mktemp -d)
tracker_pid=
trap 'stop_local_tracker; rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}

# The commands: each line of a ```bash block (its trailing comment dropped), and the first cell of
# each row of the results table that holds a command.
mapfile -t commands < <(
  awk '/^```bash$/ { inside = 1; next } /^```$/ { inside = 0 } inside' "$readme" |
    sed 's/[[:space:]]\+#[^$]*$//; s/[[:space:]]\+$//' | grep -v '^$'
  sed -n '/^### Results to expect/,/^## /p' "$readme" | grep -o '^| `[^`]*`' | sed 's/^| `//; s/`$//'
)
((${#commands[@]} >= 6)) || fail "only ${#commands[@]} commands found in README.md"

# The scratch checkout.
co=$work/checkout
mkdir -p "$co/runs/data"
ln -s "$root/jobs" "$co/jobs"
ln -s "$root/configs" "$co/configs"
ln -s "$build" "$co/build-current"
make_tiny_shards "$build/apps/nmt-preprocess" "$data" "$co/runs/data/multi30k-bpe4000" 200
start_local_tracker "$build/apps/nmt-trackerd" "$work/tracker.db" "$co/runs/tracker.port"
# The quickstart's run, as the tracker commands expect it: experiment quickstart, with a loss curve.
train_tiny_model "$build/apps/nmt-train" "$co/runs/data/multi30k-bpe4000" "$work/quick-run" \
  --tracker-port-file "$co/runs/tracker.port" --experiment quickstart --set train.log_every=1
tiny=(--set model.layers=1 --set model.d_model=32 --set model.d_ff=64 --set model.heads=2
  --set model.d_k=16 --set model.d_v=16 --set data.max_src_tokens=400
  --set data.max_tgt_tokens=400 --set train.max_steps=4 --set train.validate_every=2
  --set checkpoint.every_steps=2 --log-level warn)

# A CTest test of this build that runs SCRIPT with a line matching PATTERN.
run_by_test() {
  local test=$1 script=$2 pattern=$3
  local listed
  listed=$(cd "$build" && ctest -N -R "^${test}\$")
  grep -Eq "Test +#[0-9]+: ${test}\$" <<< "$listed" ||
    fail "'$command': the test $test is not registered in $build"
  grep -Eq -- "$pattern" "$root/$script" || fail "'$command': $script does not run $pattern"
  echo "ok (run by the test $test): $command"
}
# The parameter count of CONFIG, as README.md writes it (3,659,776), is in README.md.
check_params() {
  local counted
  counted=$("$build/apps/nmt-train" --config "$root/$1" --count-params --log-level warn | tail -1 |
    sed ':a; s/\B[0-9]\{3\}\>/,&/; ta')
  grep -q "\b$counted\b" "$readme" || fail "README.md does not state $1's $counted parameters"
}

for command in "${commands[@]}"; do
  case "$command" in
    "jobs/quickstart.sh")
      run_by_test quickstart_end_to_end tests/scripts/quickstart_e2e_test.sh 'jobs/quickstart.sh"'
      check_params configs/multi30k-quick.yaml
      ;;
    "NMT_RANKS=2 NMT_QUICKSTART_CONFIG=configs/multi30k.yaml jobs/quickstart.sh")
      run_by_test quickstart_end_to_end_np2 tests/CMakeLists.txt 'NMT_RANKS=2'
      check_params configs/multi30k.yaml
      ;;
    "jobs/test.sh --libtorch current")
      # The command itself, with ctest arguments after it or none (the busy-process labels).
      grep -qE "^stage \"tests, current LibTorch\" $command( .*)?\$" "$root/.ci/run" ||
        fail "'$command': .ci/run does not run it"
      echo "ok (run by .ci/run): $command"
      ;;
    jobs/train_mpirun.sh\ *)
      (cd "$co" && NMT_BUILD_DIR=$build eval "$command" '"${tiny[@]}"') > "$work/mpirun.out" 2>&1 ||
        { cat "$work/mpirun.out"; fail "'$command' failed"; }
      run_dir=$(sed 's/.*--run-dir \([^ ]*\).*/\1/' <<< "$command")
      [[ -f "$co/$run_dir/checkpoints/step-00000004.h5" ]] || fail "'$command' wrote no checkpoint"
      echo "ok (ran): $command"
      ;;
    *jobs/slurm/submit.sh\ jobs/slurm/base-1node.sbatch)
      run_by_test slurm_train_job tests/slurm/slurm_test_lib.sh 'jobs/slurm/submit.sh'
      grep -q 'jobs/slurm/base-1node.sbatch' "$root/tests/slurm/slurm_test_lib.sh" ||
        fail "'$command': the Slurm tests do not submit base-1node.sbatch"
      ;;
    "export NMT_TRACKER_URL="* | build-current/apps/nmt-tracker\ *)
      # In one shell, in order, as a user types them; RUN is the quickstart run's id.
      run_id=$(cd "$co" && build-current/apps/nmt-tracker --url "http://127.0.0.1:$(cat runs/tracker.port)" \
        runs --experiment quickstart --json | sed -n 's/.*"run_id": *\([0-9]*\).*/\1/p' | head -1)
      [[ -n "$run_id" ]] || fail "the tracker holds no quickstart run"
      echo "${command//RUN/$run_id}" >> "$work/tracker-commands.sh"
      ;;
    *) fail "README.md prints a command no test runs: '$command' (run it here, or name the test that does)" ;;
  esac
done

# The tracker block, as one shell session.
[[ -s "$work/tracker-commands.sh" ]] || fail "no tracker commands found in README.md"
(cd "$co" && set -e && source "$work/tracker-commands.sh") > "$work/tracker.out" 2>&1 ||
  { cat "$work/tracker.out"; fail "the README's tracker commands failed"; }
grep -q "quick-run" "$work/tracker.out" || { cat "$work/tracker.out"; fail "nmt-tracker runs did not list the run"; }
if grep -q 'curves.svg' "$work/tracker-commands.sh"; then
  grep -q '<svg' "$co/curves.svg" && grep -q 'train/loss' "$co/curves.svg" ||
    fail "nmt-tracker plot wrote no train/loss curve to curves.svg"
fi
if grep -q 'run.csv' "$work/tracker-commands.sh"; then
  head -1 "$co/run.csv" | grep -q '^record,key,step,value' && grep -q ',train/loss,' "$co/run.csv" ||
    fail "nmt-tracker export wrote no train/loss points to run.csv"
fi
sed 's/^/ok (ran): /' "$work/tracker-commands.sh"
echo "ok: ${#commands[@]} README commands"
