#!/usr/bin/env bash
# One prepared check of the GPU training path for a lent machine with an NVIDIA GPU that
# has no network and no package manager, only python3 with the torch wheel of the pinned version,
# nvcc, cmake and ninja. Nothing is built there: the binaries come built against the same LibTorch
# version, with the shared libraries they need, in one ignored folder (docs/gpu-check.md says why
# and what is in it).
#
#   jobs/gpu-check.sh --prepare [--build-dir DIR]
#       on the CPU machine: build the tools, benchmarks and CUDA test binaries against the current
#       LibTorch line (into build-gpucheck/), then assemble .gpu-carry/ (at most 64 MiB)
#   jobs/gpu-check.sh [--out DIR] [--budget SECONDS] [--torch-dir DIR] [--dry-run]
#       on the GPU machine, in the repository root, with .gpu-carry/ present: check that every
#       binary resolves its libraries, then (a) nmt-sysinfo, (b) the CUDA tests, (c) bf16 and TF32
#       matrix-multiply peaks, (d) training throughput of base and big in bf16 and base in TF32 at
#       25k tokens a batch, (e) 300 steps of Multi30k training in bf16, (f) beam-4 decoding of
#       test_2016_flickr with and without the KV cache. --dry-run stops after the library check;
#       --torch-dir replaces the python torch install (its torch/ folder, nvidia/ beside it)
#   jobs/gpu-check.sh --cpu-smoke [--build-dir DIR] [--out DIR]
#       every step above on the CPU at tiny sizes, with the binaries of a build folder (default
#       build/) and tiny shards of Multi30k ($NMT_DATA_DIR, default ../shared/data/multi30k), or
#       with a carry's binaries and shards when DIR is one (--prepare runs that)
#
# Every step runs under `timeout` within the whole run's budget (default 450 s); its output goes to
# OUT/gpu-check.log, the figures to OUT/summary.json (OUT: --out, else $OUT, else gpu-check-out/).
# Exit status: 0 when every step passed, 1 when one failed, 2 for usage errors.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/jobs/gpu_check_lib.sh"
last_rc=0

mode=gpu build_dir='' out_dir=${OUT:-} budget=450 torch_dir='' dry_run=0
while (($# > 0)); do
  case "$1" in
    --prepare) mode=prepare ;;
    --cpu-smoke) mode=cpu-smoke ;;
    --dry-run) dry_run=1 ;;
    --build-dir | --out | --budget | --torch-dir)
      (($# >= 2)) || usage_error "$1 needs a value"
      case "$1" in
        --build-dir) build_dir=$2 ;;
        --out) out_dir=$2 ;;
        --budget) budget=$2 ;;
        --torch-dir) torch_dir=$2 ;;
      esac
      shift
      ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) usage_error "unknown argument '$1'" ;;
  esac
  shift
done
[[ "$budget" =~ ^[0-9]+$ ]] || usage_error "--budget takes whole seconds, not '$budget'"
carry=$root/.gpu-carry

if [[ "$mode" == prepare ]]; then
  source "$root/jobs/gpu_check_prepare.sh"
  prepare_carry "$(realpath -m "${build_dir:-$root/build-gpucheck}")"
  exit 0
fi

out=$(realpath -m "${out_dir:-$root/gpu-check-out}")
mkdir -p "$out"
work=$out/work
rm -rf "$work" "$out/summary.json"
mkdir -p "$work/runs" "$work/logs" "$work/results"
log=$out/gpu-check.log
: > "$log"
start_time=$(date +%s)
deadline=$((start_time + budget))
device=
trap 'finish $?' EXIT

if [[ "$mode" == gpu ]]; then
  device=cuda
  [[ -f "$carry/manifest.json" ]] ||
    die "no $carry/manifest.json: run jobs/gpu-check.sh --prepare on the CPU machine and carry .gpu-carry"
  bin=$carry/bin tests_bin=$carry/bin
  shards=$carry/data/multi30k-bpe8000 raw=$carry/data/multi30k
  progress "GPU check: carry of $(json_field "$carry/manifest.json" created), budget ${budget} s"
  use_carry_libraries "$torch_dir"
  check_libraries "$bin"/* "$carry"/lib/* "$carry"/openmpi/lib/openmpi3/*.so
  if ((dry_run)); then
    progress "dry run: every binary resolves its libraries; stopping before the GPU steps"
    trap - EXIT
    exit 0
  fi
  require_gpu
  matmul_args=(--size 8192)
  tp_tokens=(25000 12500)
  tp_args=(--steps 10 --warmup 3)
  train_args=(--config "$root/configs/multi30k-quick.yaml" --set train.max_steps=300
    --set train.log_every=50 --set train.validate_every=150 --set checkpoint.every_steps=100)
  decode_limit=1000
  test_filter='*'
else
  device=cpu
  build=$(realpath -m "${build_dir:-$root/build}")
  export OMPI_MCA_ess_singleton_isolated=1  # as on the GPU machine: no orted for one process
  if [[ -x "$build/bin/nmt-train" ]]; then
    # A carry (--prepare checks its own this way, with the carry's environment): its binaries and
    # its Multi30k shards, of which the tiny model reads only a few batches.
    bin=$build/bin tests_bin=$build/bin bench_dir=$build/bin
    shards=$build/data/multi30k-bpe8000 raw=$build/data/multi30k
    progress "CPU smoke: binaries of the carry $build, tiny sizes"
    check_libraries "$bin"/*
  else
    bin=$build/apps tests_bin=$build/tests bench_dir=$build/bench
    data=$(realpath -m "${NMT_DATA_DIR:-$root/../shared/data/multi30k}")
    [[ -f "$data/val.en.gz" && -f "$data/test_2016_flickr.en.gz" ]] ||
      die "Multi30k not found in $data (set NMT_DATA_DIR)"
    progress "CPU smoke: binaries of $build, tiny sizes"
    check_libraries "$bin/nmt-sysinfo" "$bin/nmt-train" "$bench_dir"/{matmul_peak,train_throughput,beam_cache}_bench
    shards=$work/data/tiny raw=$data
    # shellcheck disable=SC2016  # expanded by the inner bash
    run_case data.tiny_shards 120 bash -c 'source "$0"; make_tiny_shards "$@"' \
      "$root/tests/scripts/tiny_shards.sh" "$bin/nmt-preprocess" "$data" "$shards" 200
  fi
  tiny_model=(--set model.layers=1 --set model.d_model=32 --set model.d_ff=64 --set model.heads=2
    --set model.d_k=16 --set model.d_v=16)
  matmul_args=(--size 128 --rounds 2)
  tp_tokens=(256)
  tp_args=(--length 16 --steps 1 --warmup 1 --peak-size 128 "${tiny_model[@]}")
  train_args=(--config "$root/configs/multi30k-quick.yaml" "${tiny_model[@]}" --threads 1
    --set train.max_steps=30 --set train.warmup_steps=10 --set train.log_every=10
    --set train.validate_every=15 --set checkpoint.every_steps=15
    --set data.max_src_tokens=600 --set data.max_tgt_tokens=600)
  decode_limit=4
  # The tests that need a GPU (they skip here): the path of the step, not the suites themselves.
  test_filter='*Cuda*:*Gpu*:*Nccl*:*Tf32*'
fi
bench_dir=${bench_dir:-$bin}

step "a. nmt-sysinfo"
run_case sysinfo.report 60 --stdout "$work/results/sysinfo.report.json" \
  "$bin/nmt-sysinfo" --json --device "$device" --matmul-size 512

step "b. tests that need CUDA (skipped without a GPU)"
for test in runtime_test trainer_test decode_test dist_training_test; do
  run_case "tests.$test" 180 "$tests_bin/$test" --gtest_filter="$test_filter" \
    --gtest_output="json:$work/results/tests.$test.json"
done

step "c. matrix-multiply peaks (bf16; fp32, which is TF32 on CUDA)"
for precision in bf16 fp32; do
  run_case "matmul.$precision" 90 --stdout "$work/results/matmul.$precision.json" \
    "$bench_dir/matmul_peak_bench" --peak --json --device "$device" --precision "$precision" \
    "${matmul_args[@]}"
done

step "d. training throughput and MFU"
for spec in base:bf16 big:bf16 base:fp32; do
  throughput_case "${spec%%:*}" "${spec##*:}"
done

step "e. Multi30k training ($device, bf16)"
run_case train.multi30k 300 "$bin/nmt-train" "${train_args[@]}" --data "$shards" \
  --run-dir "$work/train" --device "$device" --precision bf16

step "f. beam-4 decoding of test_2016_flickr, with and without the KV cache"
checkpoint=$(find "$work/train/checkpoints" -name 'step-*.h5' 2> /dev/null | sort | tail -1 || true)
if [[ -z "$checkpoint" ]]; then
  skip_case decode.beam4 "no checkpoint from step e"
else
  run_case decode.beam4 300 "$bench_dir/beam_cache_bench" --checkpoint "$checkpoint" \
    --spm-model "$shards/spm.model" --input "$raw/test_2016_flickr.en.gz" --limit "$decode_limit" \
    --device "$device" --precision bf16 --json "$work/results/decode.beam4.json"
fi
# The checkpoints stay behind (about 70 MB each): what comes back from a lent machine is OUT.
if [[ "$mode" == gpu ]]; then rm -rf "$work/train/checkpoints"; fi
