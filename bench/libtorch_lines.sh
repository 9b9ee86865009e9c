#!/usr/bin/env bash
# The two LibTorch lines side by side on this machine: bench/train_throughput_bench of a build of
# each (default build/, Debian's LibTorch 1.13 on OpenBLAS, and build-current/, the pinned CUDA
# LibTorch's own CPU kernels, MKL and oneDNN), alternated ROUNDS times so that both see the same
# machine. Prints each line's matmul peak, and per config the best round's tokens/s and MFU
# against the machine's peak (the higher of the two lines' measured fp32 matmul peaks), with the
# ratio current / debian.
# Usage: bench/libtorch_lines.sh [BUILD_DEBIAN [BUILD_CURRENT]]
# Environment: ROUNDS (default 2); BENCH_ARGS, extra train_throughput_bench arguments
#              (e.g. "--threads 1 --configs configs/multi30k.yaml").
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
builds=("$(realpath -m "${1:-$root/build}")" "$(realpath -m "${2:-$root/build-current}")")
lines=(debian current)
rounds=${ROUNDS:-2}
read -r -a extra <<< "${BENCH_ARGS:-}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for build in "${builds[@]}"; do
  [[ -x "$build/bench/train_throughput_bench" ]] || { echo "no $build/bench/train_throughput_bench: build it first"; exit 1; }
done
cd "$root"  # the bench's default configs are paths from the checkout
for round in $(seq 1 "$rounds"); do
  for i in 0 1; do
    echo "round $round/$rounds: ${lines[$i]} (${builds[$i]})" >&2
    "${builds[$i]}/bench/train_throughput_bench" "${extra[@]+"${extra[@]}"}" > "$out/${lines[$i]}.$round"
  done
done
python3 - "$out" "$rounds" <<'PY'
import pathlib, re, sys
out, rounds = pathlib.Path(sys.argv[1]), int(sys.argv[2])
peak, rows = {}, {}
for line in ("debian", "current"):
    for r in range(1, rounds + 1):
        for text in (out / f"{line}.{r}").read_text().splitlines():
            m = re.match(r"matmul peak \(fp32 2048\^3, (\S+)\): ([\d.]+) GFLOP/s", text)
            if m:
                backend, gflops = m.group(1), float(m.group(2))
                peak[line] = max(peak.get(line, (backend, 0.0)), (backend, gflops), key=lambda p: p[1])
                continue
            f = text.split()
            if len(f) >= 6 and f[0].endswith(".yaml"):
                config, tokens, model_gf = f[0], float(f[3]), float(f[4])
                best = rows.setdefault(config, {}).get(line)
                if best is None or tokens > best[0]:
                    rows[config][line] = (tokens, model_gf)
machine = max(p[1] for p in peak.values())
for line, (backend, gflops) in peak.items():
    print(f"matmul peak, {line:<8} {gflops:8.1f} GFLOP/s ({backend})")
print(f"machine peak (the higher) {machine:8.1f} GFLOP/s; best of {rounds} rounds each\n")
print(f"{'config':<30}{'debian tok/s':>13}{'MFU':>7}{'current tok/s':>15}{'MFU':>7}{'current/debian':>16}")
for config, by_line in rows.items():
    d, c = by_line["debian"], by_line["current"]
    print(f"{config:<30}{d[0]:>13.0f}{100 * d[1] / machine:>6.1f}%{c[0]:>15.0f}"
          f"{100 * c[1] / machine:>6.1f}%{c[0] / d[0]:>15.2f}x")
PY
