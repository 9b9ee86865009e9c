#!/usr/bin/env bash
# The launchers refuse at once, before any rank starts, naming the variable to set: a build folder
# without nmt-train (jobs/train_mpirun.sh, jobs/slurm/train.sh), and a build whose LibTorch has no
# CUDA while NMT_DEVICE asks for cuda. The CPU-only build is a folder whose nmt-sysinfo answers as
# a CPU LibTorch's does ("cuda": {"built": false}); the real build's own answer is checked too.
# Neither starts mpirun or srun, and neither builds anything.
# Usage: job_scripts_refuse_test.sh BUILD_DIR
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

expect_refusal() {  # NAME PATTERN COMMAND...: exit 1 at once, the message matching PATTERN
  local name=$1 pattern=$2 status=0
  shift 2
  timeout 60 "$@" > "$work/$name.out" 2>&1 || status=$?
  ((status == 1)) || { cat "$work/$name.out"; fail "$name: exit status $status, not 1"; }
  grep -Eq "$pattern" "$work/$name.out" || { cat "$work/$name.out"; fail "$name: no '$pattern'"; }
  ! grep -Eq "ORTE|PMIx|srun: |\[nmt-train|Building CXX|ninja" "$work/$name.out" || fail "$name: started something"
  echo "$name: $(head -1 "$work/$name.out")"
}

mkdir -p "$work/empty/apps"
expect_refusal mpirun-no-build "no nmt-train in .*set NMT_BUILD_DIR" \
  env NMT_BUILD_DIR="$work/empty" "$root/jobs/train_mpirun.sh" 2 --config x
expect_refusal sbatch-no-build "no nmt-train in .*set NMT_BUILD_DIR" \
  env NMT_BUILD_DIR="$work/empty" SLURM_JOB_ID=1 NMT_DATA="$work" NMT_ROOT="$root" \
  bash "$root/jobs/slurm/train.sh"

# A CPU-only build: the real nmt-train, an nmt-sysinfo that answers as a CPU LibTorch does.
mkdir -p "$work/cpu/apps"
ln -s "$build/apps/nmt-train" "$work/cpu/apps/nmt-train"
cat > "$work/cpu/apps/nmt-sysinfo" <<'SH'
#!/bin/sh
printf '{\n  "cuda": {\n    "built": false,\n    "available": false\n  }\n}\n'
SH
chmod +x "$work/cpu/apps/nmt-sysinfo"
expect_refusal mpirun-cpu-build "NMT_DEVICE=cuda but the build .* has no CUDA.*NMT_BUILD_DIR" \
  env NMT_BUILD_DIR="$work/cpu" NMT_DEVICE=cuda "$root/jobs/train_mpirun.sh" 2 --config x
expect_refusal sbatch-cpu-build "NMT_DEVICE=cuda but the build .* has no CUDA.*NMT_BUILD_DIR" \
  env NMT_BUILD_DIR="$work/cpu" NMT_DEVICE=cuda SLURM_JOB_ID=1 NMT_DATA="$work" \
  NMT_ROOT="$root" bash "$root/jobs/slurm/train.sh"

# The build under test passes the check for cpu, and for cuda exactly when its LibTorch has CUDA.
"$root/jobs/check_build.sh" test "$build" cpu || fail "the build fails the cpu check"
if "$build/apps/nmt-sysinfo" --json --matmul-size 0 --device cpu --log-level error |
  grep -A1 '"cuda": {' | grep -q '"built": true'; then
  "$root/jobs/check_build.sh" test "$build" cuda || fail "a CUDA build fails the cuda check"
  echo "this build has CUDA: the cuda check passes"
else
  ! "$root/jobs/check_build.sh" test "$build" cuda 2> /dev/null || fail "a CPU build passes the cuda check"
  echo "this build has no CUDA: the cuda check refuses"
fi
echo ok
