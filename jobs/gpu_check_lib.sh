# shellcheck shell=bash disable=SC2154  # globals of jobs/gpu-check.sh
# Sourced by jobs/gpu-check.sh: the step runner, the carry's library environment and its checks,
# and the JSON summary. Uses the caller's globals: root, carry, mode, device, budget, out, work, log,
# start_time, deadline.

usage_error() { echo "gpu-check: $* (see jobs/gpu-check.sh --help)" >&2; exit 2; }

elapsed() { date -u -d "@$(($(date +%s) - ${start_time:-$(date +%s)}))" +%M:%S; }

progress() {
  local line
  line="[$(elapsed)] $*"
  echo "$line"
  if [[ -n "${log:-}" ]]; then echo "$line" >> "$log"; fi
}

step() { progress "== $*"; }

# A fatal error before or between the steps: said on stderr and in the log; the EXIT trap still
# writes the summary, with this message as its error.
die() {
  echo "gpu-check: ERROR: $*" >&2
  if [[ -n "${log:-}" ]]; then echo "gpu-check: ERROR: $*" >> "$log"; fi
  if [[ -n "${work:-}" && -d "${work:-}" ]]; then printf '%s\n' "$*" > "$work/fatal"; fi
  exit 1
}

json_field() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# run_case NAME LIMIT [--stdout FILE] COMMAND...: runs COMMAND under `timeout` (LIMIT seconds, or
# what is left of the budget), its output in work/logs/NAME.log and appended to the log, stdout to
# FILE when given. Records "rc start end limit" in work/runs/NAME; the summary judges it. Sets
# last_rc; never fails itself, so one broken step does not stop the others.
run_case() {
  local name=$1 limit=$2 stdout=
  shift 2
  if [[ "${1:-}" == --stdout ]]; then stdout=$2; shift 2; fi
  local left=$((deadline - $(date +%s)))
  if ((left < 5)); then skip_case "$name" "out of time (budget ${budget} s)"; last_rc=125; return 0; fi
  ((limit <= left)) || limit=$left
  local case_log=$work/logs/$name.log t0 t1
  printf '$ %s\n' "$*" > "$case_log"
  t0=$(date +%s.%N)
  last_rc=0
  if [[ -n "$stdout" ]]; then
    timeout -k 10 "$limit" "$@" > "$stdout" 2>> "$case_log" || last_rc=$?
  else
    timeout -k 10 "$limit" "$@" >> "$case_log" 2>&1 || last_rc=$?
  fi
  t1=$(date +%s.%N)
  echo "$last_rc $t0 $t1 $limit" > "$work/runs/$name"
  { echo "---- $name (exit status $last_rc)"; cat "$case_log"; } >> "$log"
  local seconds
  seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  case "$last_rc" in
    0) progress "   $name: done in $seconds s" ;;
    124 | 137) progress "   $name: TIMED OUT after $limit s (log: $case_log)" ;;
    *)
      progress "   $name: FAILED with exit status $last_rc after $seconds s; its last lines:"
      tail -n 6 "$case_log" | sed 's/^/      /' | tee -a "$log"
      ;;
  esac
}

skip_case() {
  echo "skip $*" > "$work/runs/$1"
  progress "   $1: skipped (${*:2})"
}

# d: one model in one precision, one process each (the peak memory is per process). At the paper's
# 25k tokens a side; a GPU that runs out of memory gets one more try at half of that.
throughput_case() {
  local model=$1 precision=$2 name="throughput.$1.$2"
  local args=("${tp_args[@]}")
  local tokens
  for tokens in "${tp_tokens[@]}"; do
    run_case "$name" 180 "$bench_dir/train_throughput_bench" --configs "$root/configs/$model.yaml" \
      --device "$device" --precision "$precision" --tokens "$tokens" "${args[@]}" \
      --json "$work/results/$name.json"
    if ((last_rc == 0)) || ! grep -qi 'out of memory' "$work/logs/$name.log"; then break; fi
    progress "   $name: out of memory at $tokens tokens a side"
  done
}

# The carried Open MPI, relocated: its installation paths point into the carry (Open MPI 4.1's
# installdirs "env" component reads OPAL_*), components only from there, no per-user or system
# parameter files, and no orted: a singleton (one process, no mpirun) runs isolated. hwloc's
# plugins (PCI, OpenCL, GL, libxml; they would pull in X11 and ICU) are looked for in an empty
# folder; its built-in Linux discovery is all one process needs.
use_carry_mpi() {
  local mpi=$1/openmpi
  export OPAL_PREFIX=$mpi OPAL_EXEC_PREFIX=$mpi OPAL_BINDIR=$mpi/bin OPAL_LIBDIR=$1/lib \
    OPAL_PKGLIBDIR=$mpi/lib/openmpi3 OPAL_DATAROOTDIR=$mpi/share OPAL_DATADIR=$mpi/share \
    OPAL_PKGDATADIR=$mpi/share/openmpi OPAL_SYSCONFDIR=$mpi/etc
  export OMPI_MCA_mca_base_component_path=$mpi/lib/openmpi3
  export OMPI_MCA_mca_base_param_files=$mpi/etc/openmpi-mca-params.conf
  export OMPI_MCA_mca_base_param_file_path=$mpi/share/openmpi/amca-param-sets
  export OMPI_MCA_ess_singleton_isolated=1
  export HWLOC_PLUGINS_PATH=$mpi/hwloc-plugins
}

# The version of the torch/ folder of an install or of a LibTorch (its CMake package version, else
# python's version.py without the local tag), or nothing.
torch_version() {
  local cmake=$1/share/cmake/Torch/TorchConfigVersion.cmake
  if [[ -f "$cmake" ]]; then
    sed -n 's/^set(PACKAGE_VERSION "\(.*\)")/\1/p' "$cmake"
  elif [[ -f "$1/version.py" ]]; then
    sed -n "s/^__version__ = '\([^'+]*\).*/\1/p" "$1/version.py"
  fi
}

# LD_LIBRARY_PATH: the carry first, then LibTorch and its CUDA libraries from the torch install
# (python3's, or --torch-dir): torch/lib and the nvidia/*/lib folders of the wheel's dependencies.
use_carry_libraries() {
  local torch=$1
  if [[ -z "$torch" ]]; then
    command -v python3 > /dev/null || die "python3 not found (it should hold torch); or pass --torch-dir"
    torch=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>> "$log") ||
      die "python3 cannot import torch (see $log); pass --torch-dir DIR (the torch/ folder)"
  fi
  torch=$(realpath -m "$torch")
  [[ -d "$torch/lib" ]] || die "$torch/lib not found: --torch-dir is the torch/ folder of an install"
  local want have
  want=$(json_field "$carry/manifest.json" libtorch_version)
  have=$(torch_version "$torch")
  [[ -z "$have" || "$have" == "$want" ]] ||
    die "the carry was built against LibTorch $want but $torch is torch $have: pin $have in jobs/libtorch-current.txt and prepare again"
  local paths=$carry/lib:$torch/lib dir
  for dir in "$(dirname "$torch")"/nvidia/*/lib; do [[ -d "$dir" ]] && paths+=:$dir; done
  export LD_LIBRARY_PATH=$paths${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  use_carry_mpi "$carry"
  progress "torch ${have:-(version unknown)} at $torch; LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  local need system
  need=$(json_field "$carry/manifest.json" glibc_required)
  system=$(getconf GNU_LIBC_VERSION | awk '{print $2}')
  [[ "$(printf '%s\n%s\n' "$need" "$system" | sort -V | head -1)" == "$need" ]] ||
    die "the carried binaries need glibc $need or newer; this machine has $system"
}

# Every ELF file given resolves all its shared libraries with the current LD_LIBRARY_PATH.
check_libraries() {
  local file missing=() line
  for file in "$@"; do
    [[ -f "$file" ]] || die "$file not found (build it, or prepare the carry again)"
    [[ "$(head -c 4 "$file" | od -An -c | tr -d ' ')" == '177ELF' ]] || continue
    while read -r line; do missing+=("$(basename "$file"): ${line%% *}"); done < <(
      ldd "$file" 2>&1 | awk '/not found/ { print $1 }')
  done
  if ((${#missing[@]} > 0)); then
    printf '  %s\n' "${missing[@]}" | sort -u >> "$log"
    die "shared libraries not found (binary: library):$(printf '\n  %s' "${missing[@]}" | sort -u)"
  fi
  progress "libraries: all $# binaries resolve every shared library"
}

# LibTorch must see a GPU before the steps start, or every step would fail for the same reason.
require_gpu() {
  local info=$work/results/gpu-probe.json
  "$bin/nmt-sysinfo" --json --device auto --matmul-size 0 > "$info" 2>> "$log" ||
    die "nmt-sysinfo failed (see $log)"
  local gpus
  gpus=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["cuda"]["devices"]))' "$info")
  if ((gpus == 0)); then
    local smi="nvidia-smi not found"
    command -v nvidia-smi > /dev/null && smi=$(nvidia-smi -L 2>&1 | head -3 | tr '\n' ' ')
    die "LibTorch sees no GPU (CUDA built: $(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["cuda"]; print(c["built"], "runtime", c["runtime"] or "none")' "$info"); $smi)"
  fi
}

# The EXIT trap: summary.json from work/, printed as a table; the exit status says whether every
# step passed.
finish() {
  local rc=$1
  trap - EXIT
  [[ -n "${work:-}" && -d "$work" ]] || exit "$rc"
  local verdict=0
  python3 "$root/jobs/gpu_check_summary.py" --work "$work" --out "$out/summary.json" \
    --mode "$mode" --device "$device" --budget "$budget" --started "$start_time" \
    --carry "$carry" | tee -a "$log" || verdict=$?
  ((rc != 0)) || rc=$verdict
  progress "summary: $out/summary.json, log: $log (exit status $rc)"
  exit "$rc"
}
