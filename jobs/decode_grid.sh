#!/usr/bin/env bash
# Chooses a run's decode: section on its validation split, as the recipe's other settings are
# chosen: first how many of the newest checkpoints to average (at the config's beam and alpha),
# then the beam and the length penalty on that average, each point scored by nmt-evaluate's BLEU.
# Prints every point and the chosen section; the test split is never read.
# Usage: jobs/decode_grid.sh RUN_DIR [--last "5 10 20"] [--beam "4 6"] [--alpha "0.6 1.0 1.4"]
#          [--min-gain 0.2] [--split valid] [--precision auto] [--out DIR] [--record]
#   RUN_DIR    a training run directory (checkpoints/, config.yaml)
#   --out      where the averages and results go (default RUN_DIR/decode-grid)
#   --min-gain BLEU a point must gain over the choice so far to replace it (default 0.2: on a
#              dev set of about 1,000 sentences smaller gaps are noise), so near-ties keep the
#              first K listed, the config's beam and alpha
#   --precision of every decode (default auto; auto is decided per process by a short timing
#              probe, which other load on the machine can tip: give bf16 or fp32 there)
#   --record   also record every point as an eval of the run in its tracker
# Environment: NMT_BUILD_DIR (default build-current/, the current LibTorch line), NMT_THREADS.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage() { sed -n '2,17p' "$0" >&2; exit 2; }
(($# >= 1)) || usage
run_dir=$1
shift
lasts="5 10 20" beams="4 6" alphas="0.6 1.0 1.4" min_gain=0.2 split=valid precision=auto out=""
record=()
while (($# > 0)); do
  (($# >= 2)) || [[ $1 == --record ]] || usage
  case "$1" in
    --last) lasts=$2 ;;
    --beam) beams=$2 ;;
    --alpha) alphas=$2 ;;
    --min-gain) min_gain=$2 ;;
    --split) split=$2 ;;
    --precision) precision=$2 ;;
    --out) out=$2 ;;
    --record) record=(--record --run-dir "$run_dir"); shift; continue ;;
    *) usage ;;
  esac
  shift 2
done
out=${out:-$run_dir/decode-grid}
bin=${NMT_BUILD_DIR:-$root/build-current}/apps
[[ -x "$bin/nmt-evaluate" ]] || { echo "decode_grid: no $bin/nmt-evaluate (jobs/build.sh)" >&2; exit 1; }
[[ -f "$run_dir/config.yaml" ]] || { echo "decode_grid: $run_dir has no config.yaml" >&2; exit 1; }
mkdir -p "$out"
results=$out/results.tsv
printf 'average_last\tbeam\talpha\tbleu\tperplexity\n' > "$results"

score() {  # K [BEAM ALPHA]: one point (without them: the checkpoint's decode: section),
  # appended to the results; prints "BLEU BEAM ALPHA"
  local json flags=()
  (($# == 3)) && flags=(--beam "$2" --alpha "$3")
  json=$("$bin/nmt-evaluate" --checkpoint "$out/averaged-$1.h5" --split "$split" "${flags[@]}" \
    --precision "$precision" --threads "${NMT_THREADS:-0}" --json --log-level warn "${record[@]}") \
    || { echo "decode_grid: nmt-evaluate failed (average of $1 ${flags[*]})" >&2; exit 1; }
  python3 -c 'import json, sys; r = json.loads(sys.argv[1]); print(r["bleu"], r["beam"], r["alpha"], r["perplexity"])' \
    "$json" | { read -r bleu b a ppl; printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$b" "$a" "$bleu" "$ppl" \
      >> "$results"; echo "$bleu $b $a"; }
}
better() {  # BLEU BEST: BLEU beats BEST by at least --min-gain (any BLEU beats the first BEST, -1)
  python3 -c 'import sys; b, best, gain = map(float, sys.argv[1:]); sys.exit(0 if best < 0 or b >= best + gain else 1)' \
    "$1" "$2" "$min_gain"
}

kept=$(find "$run_dir/checkpoints" -maxdepth 1 -name 'step-*.h5' 2> /dev/null | wc -l)
best_bleu=-1 best_last=""
for k in $lasts; do
  if ((k > kept)); then
    echo "average of $k: skipped, the run keeps $kept checkpoints (checkpoint.keep_last)"
    continue
  fi
  "$bin/nmt-average" --run-dir "$run_dir" --last "$k" --output "$out/averaged-$k.h5" \
    --log-level warn || { echo "decode_grid: nmt-average --last $k failed" >&2; exit 1; }
  # At the run's own beam and alpha, as nmt-evaluate reads them from the checkpoint.
  point=$(score "$k")
  read -r bleu beam alpha <<< "$point"
  echo "average of $k, beam $beam, alpha $alpha: BLEU $bleu"
  if better "$bleu" "$best_bleu"; then best_bleu=$bleu best_last=$k; fi
done
[[ -n "$best_last" ]] || { echo "decode_grid: no --last value fits the $kept checkpoints" >&2; exit 1; }
best_beam=$beam best_alpha=$alpha
for b in $beams; do
  for a in $alphas; do
    [[ $b == "$beam" && $a == "$alpha" ]] && continue  # scored above
    point=$(score "$best_last" "$b" "$a")
    read -r bleu _ _ <<< "$point"
    echo "average of $best_last, beam $b, alpha $a: BLEU $bleu"
    if better "$bleu" "$best_bleu"; then best_bleu=$bleu best_beam=$b best_alpha=$a; fi
  done
done
echo "results: $results"
echo "chosen on $split (BLEU $best_bleu):"
echo "decode:"
echo "  average_last: $best_last"
echo "  beam: $best_beam"
echo "  alpha: $best_alpha"
