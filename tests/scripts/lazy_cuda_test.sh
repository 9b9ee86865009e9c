#!/usr/bin/env bash
# On a CUDA LibTorch, the decoding tools link LibTorch's CPU half only and load the CUDA half when
# a device is selected on a machine with an NVIDIA driver (trainer/runtime/cuda_loader.h):
# nmt-translate does not need libtorch_cuda.so, nmt-train (NCCL) does; a CPU translation loads no
# CUDA; NMT_LOAD_CUDA=always loads it (as an NVIDIA driver would) and, without a GPU, the
# translation is the same. Loading it costs over 100 MB of resident memory, which
# is what CPU decoding saves. Skips (77) on a CPU-only LibTorch, where there is nothing to load.
# Usage: lazy_cuda_test.sh BUILD_DIR DATA_DIR
set -euo pipefail
build=$1
[[ -f "$build/trainer/libnmt_cuda_runtime.so" ]] || { echo "a CPU-only LibTorch: nothing to load"; exit 77; }
# shellcheck source=tests/scripts/tiny_shards.sh
source "$(dirname "${BASH_SOURCE[0]}")/tiny_shards.sh"
tiny_translation_test_init "$@"
needs() { readelf -d "$1" | grep -q "NEEDED.*\[$2\]"; }
needs "$bin/nmt-translate" libtorch_cpu.so || fail "nmt-translate does not link libtorch_cpu.so"
needs "$bin/nmt-translate" libtorch_cuda.so && fail "nmt-translate links libtorch_cuda.so"
needs "$bin/nmt-evaluate" libtorch_cuda.so && fail "nmt-evaluate links libtorch_cuda.so"
needs "$bin/nmt-train" libtorch_cuda.so || fail "nmt-train does not link libtorch_cuda.so"

printf 'A man is riding a bike.\nTwo women walk.\n' > "$work/in.txt"
translate() {  # translate OUT_PREFIX [ENV...]: peak RSS (kB) in OUT_PREFIX.rss
  local out=$1
  shift
  env "$@" /usr/bin/time -f '%M' -o "$out.rss" "$bin/nmt-translate" \
    --checkpoint "$work/run/checkpoints/step-00000002.h5" --input "$work/in.txt" --greedy \
    --threads 1 --device auto --log-level debug > "$out.txt" 2> "$out.log"
}
translate "$work/cpu" -u NMT_LOAD_CUDA
translate "$work/loaded" NMT_LOAD_CUDA=always
if [[ ! -e /proc/driver/nvidia/version && ! -e /dev/nvidiactl ]]; then
  grep -q "loaded LibTorch's CUDA support" "$work/cpu.log" && fail "CUDA was loaded without a GPU"
  cmp -s "$work/cpu.txt" "$work/loaded.txt" || fail "the translations differ with CUDA loaded"
  cpu_kb=$(cat "$work/cpu.rss") loaded_kb=$(cat "$work/loaded.rss")
  ((loaded_kb - cpu_kb > 100000)) ||
    fail "loading CUDA took only $((loaded_kb - cpu_kb)) kB more ($cpu_kb vs $loaded_kb kB)"
fi
grep -q "loaded LibTorch's CUDA support (.*), CUDA runtime [0-9]" "$work/loaded.log" || fail "NMT_LOAD_CUDA=always loaded nothing: $(cat "$work/loaded.log")"
[[ $(wc -l < "$work/loaded.txt") -eq 2 ]] || fail "expected 2 lines: $(cat "$work/loaded.txt")"
echo "PASS: CPU decoding $(cat "$work/cpu.rss") kB peak, with CUDA loaded $(cat "$work/loaded.rss") kB"
