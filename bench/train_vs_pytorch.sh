#!/usr/bin/env bash
# Training throughput against PyTorch: bench/train_throughput_bench (the trainer's update) and
# bench/torch_twin.py (the same model, recipe and batch shapes written as a PyTorch user would),
# eager and under torch.compile, with the same threads, in alternating rounds (ours, eager,
# compiled, ours, ...), each a fresh process. Prints the CPU, the kernel paths (nmt-sysinfo),
# tokens/s (source + target) per round and the ratios of the medians: ours/eager and
# ours/compiled. bf16 runs where the CPU has native bf16 (nmt-sysinfo's kernel paths), else n/a.
# A benchmark: it prints figures, asserts none. Run it on an otherwise idle machine.
#   bench/train_vs_pytorch.sh [--build DIR] [--venv DIR] [--config FILE] [--tokens N]
#       [--length N] [--steps K] [--rounds R] [--threads T] [--precision fp32|bf16|both]
#       [--no-compile]
#     --build      build folder with bench/ and apps/ (default: build-current beside this checkout)
#     --venv       virtual environment with torch (the pinned version, jobs/libtorch-current.txt)
#                  and pyyaml, made if absent (default: BUILD/torch-venv)
#     --config     run config whose model section both sides build (default configs/multi30k.yaml)
#     --tokens     padded tokens per side per batch (default 2048: the config's max_src_tokens)
#     --length     tokens per sentence (default 24)
#     --steps      timed steps per process (default 5; 2 untimed first)
#     --rounds     rounds (default 3)
#     --threads    threads per process (default: the CPUs this process may run on)
#     --precision  fp32, bf16 or both (default both: bf16 only where native)
#     --no-compile leave torch.compile out (its first step compiles for minutes on 2 cores)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build-current venv='' config=$root/configs/multi30k.yaml tokens=2048 length=24
steps=5 rounds=3 threads=0 precisions=both compile=1
while (($#)); do
  case $1 in
    --build) build=$2; shift ;;
    --venv) venv=$2; shift ;;
    --config) config=$2; shift ;;
    --tokens) tokens=$2; shift ;;
    --length) length=$2; shift ;;
    --steps) steps=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --threads) threads=$2; shift ;;
    --precision) precisions=$2; shift ;;
    --no-compile) compile=0 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
build=$(realpath "$build") venv=$(realpath -m "${venv:-$build/torch-venv}") config=$(realpath "$config")
bench=$build/bench/train_throughput_bench sysinfo=$build/apps/nmt-sysinfo
for tool in "$bench" "$sysinfo"; do [[ -x $tool ]] || { echo "$tool not built" >&2; exit 2; }; done
((threads > 0)) || threads=$(nproc)

# The twin's PyTorch: the pinned torch wheel without its CUDA dependencies (nothing here runs on a
# GPU); the CUDA libraries its libtorch_cuda.so loads come from the LibTorch tree this build uses,
# whose nvidia/ folder has the wheels' layout (jobs/fetch_libtorch.sh), and the CUDA toolkit.
torch_pin=$(sed -n 's/^torch==\([^ ]*\).*/\1/p' "$root/jobs/libtorch-current.txt")
if [[ ! -f $venv/.nmt-torch-ready ]]; then
  echo "installing torch $torch_pin (no CUDA wheels) and pyyaml into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --no-deps "torch==$torch_pin"
  "$venv/bin/pip" install --quiet pyyaml numpy sympy networkx jinja2 fsspec filelock \
    typing-extensions
  torch_dir=$(sed -n 's/^Torch_DIR:PATH=//p' "$build/CMakeCache.txt")
  tree=$(realpath -m "$torch_dir/../../../..")  # .../torch/share/cmake/Torch -> the tree
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  [[ -d $tree/nvidia ]] && ln -sfn "$tree/nvidia" "$site/nvidia"
  "$venv/bin/python" -c 'import torch' || { echo "torch does not import in $venv" >&2; exit 1; }
  touch "$venv/.nmt-torch-ready"
fi
python=$venv/bin/python

echo "CPU: $("$sysinfo" --json --matmul-size 0 | "$python" -c 'import json,sys; print(json.load(sys.stdin)["cpu"])')"
"$sysinfo" --kernels --threads "$threads"
echo "PyTorch $("$python" -c 'import torch; print(torch.__version__, torch.backends.cpu.get_cpu_capability())'); $threads threads each; $config, $tokens tokens a side, length $length, $steps steps a process"

native_bf16=$("$sysinfo" --json --matmul-size 0 | "$python" -c \
  'import json,sys; print(int(json.load(sys.stdin)["kernels"]["bf16_native"]))')
case $precisions in
  both) list=(fp32); ((native_bf16)) && list+=(bf16) ;;
  fp32 | bf16) list=("$precisions") ;;
  *) echo "--precision must be fp32, bf16 or both" >&2; exit 2 ;;
esac
[[ $precisions == both ]] && ((!native_bf16)) && echo "bf16: n/a (no native bf16 on this CPU)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sides=(ours eager)
((compile)) && sides+=(compile)
for precision in "${list[@]}"; do
  for ((round = 1; round <= rounds; ++round)); do
    for side in "${sides[@]}"; do
      if [[ $side == ours ]]; then
        "$bench" --configs "$config" --tokens "$tokens" --length "$length" --steps "$steps" \
          --warmup 2 --threads "$threads" --precision "$precision" --json "$work/ours.json" \
          > /dev/null
        rate=$("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["tokens_per_second"])' "$work/ours.json")
      else
        flag=()
        [[ $side == compile ]] && flag=(--compile)
        rate=$("$python" "$root/bench/torch_twin.py" --config "$config" --tokens "$tokens" \
          --length "$length" --steps "$steps" --warmup 2 --threads "$threads" \
          --precision "$precision" "${flag[@]}" | tail -1 |
          "$python" -c 'import json,sys; print(json.load(sys.stdin)["tokens_per_second"])')
      fi
      printf '%s\t%s\t%s\t%s\n' "$precision" "$side" "$round" "$rate" >> "$work/rates.tsv"
      printf '  %s %-8s round %d: %8.0f tokens/s\n' "$precision" "$side" "$round" "$rate"
    done
  done
done
"$python" - "$work/rates.tsv" <<'PY'
import collections, statistics, sys
rates = collections.defaultdict(list)
for line in open(sys.argv[1]):
    precision, side, _, rate = line.split("\t")
    rates[precision, side].append(float(rate))
print(f"{'precision':<10}{'ours':>10}{'eager':>10}{'compiled':>10}{'ours/eager':>12}{'ours/compiled':>15}")
for precision in dict.fromkeys(p for p, _ in rates):
    median = {side: statistics.median(rates[precision, side]) for p, side in rates if p == precision}
    ratio = lambda side: f"{median['ours'] / median[side]:.2f}" if side in median else "n/a"
    cell = lambda side: f"{median[side]:.0f}" if side in median else "n/a"
    print(f"{precision:<10}{cell('ours'):>10}{cell('eager'):>10}{cell('compile'):>10}"
          f"{ratio('eager'):>12}{ratio('compile'):>15}")
PY
