#!/usr/bin/env bash
# nmt-translate against CTranslate2 on the same checkpoint: exported with nmt-export, both decode
# test_2016_flickr.en (1,000 lines) on the CPU with the same thread count (the CPUs this process
# may run on; CTranslate2's intra_threads), whole process timed, in alternating rounds (ours,
# theirs, ours, theirs), each tool at its best batch size of a few tried (nmt-translate
# --batch-tokens, CTranslate2 sentences per batch), for beam 4 (alpha 0.6) and greedy, in fp32,
# bf16 and int8, then all again beside two busy processes. Prints per row sentences/s, BLEU
# (nmt-bleu against test_2016_flickr.de), peak RSS (/usr/bin/time) and the ratios ours/theirs.
# A precision a tool lacks on this CPU prints n/a (nmt-translate without --precision int8;
# CTranslate2 has bfloat16 only where the CPU runs it). How CTranslate2's options map to
# nmt-translate's, and what differs (length penalty, per-batch length cap): bench/ct2_decode.py.
# A benchmark: it prints figures, asserts none. Run it on an otherwise idle machine.
#   bench/decode_vs_ctranslate2.sh [--quick] [--build DIR] [--data DIR] [--venv DIR] CHECKPOINT
#     --quick   one round, one batch size per tool (a smoke test; figures are rougher)
#     --build   build folder with apps/ (default: build-current beside this script's checkout)
#     --data    Multi30k folder (default: ../shared/data/multi30k beside the checkout)
#     --venv    virtual environment with ctranslate2 + sentencepiece, made if absent
#               (default: BUILD/ct2-venv, the one the CTest nmt-export_ctranslate2 makes)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build-current data=$root/../shared/data/multi30k venv='' quick=0 checkpoint=''
while (($#)); do
  case $1 in
    --quick) quick=1 ;;
    --build) build=$2; shift ;;
    --data) data=$2; shift ;;
    --venv) venv=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) checkpoint=$1 ;;
  esac
  shift
done
[[ -n $checkpoint ]] || { echo "usage: $0 [--quick] [--build DIR] [--data DIR] [--venv DIR] CHECKPOINT" >&2; exit 2; }
[[ -f $checkpoint ]] || { echo "$checkpoint: no such checkpoint" >&2; exit 2; }
build=$(realpath "$build") venv=$(realpath -m "${venv:-$build/ct2-venv}")
bin=$build/apps
for tool in nmt-export nmt-translate nmt-bleu nmt-sysinfo; do
  [[ -x $bin/$tool ]] || { echo "$bin/$tool not built" >&2; exit 2; }
done
for f in test_2016_flickr.en.gz test_2016_flickr.de.gz; do
  [[ -f $data/$f ]] || { echo "$data/$f not found (--data DIR)" >&2; exit 2; }
done
[[ -x /usr/bin/time ]] || { echo "/usr/bin/time not found (apt-get install time)" >&2; exit 2; }

work=$(mktemp -d)
busy=()
stop_busy() {
  for pid in "${busy[@]}"; do kill "$pid" 2> /dev/null || true; done
  for pid in "${busy[@]}"; do wait "$pid" 2> /dev/null || true; done
  busy=()
}
trap 'stop_busy; rm -rf "$work"' EXIT
# The tools as they are now: a rebuild during the run must not change what is measured.
mkdir "$work/bin"
cp "$bin/nmt-export" "$bin/nmt-translate" "$bin/nmt-bleu" "$work/bin/"
echo "nmt-translate built $(date -u -r "$bin/nmt-translate" '+%F %T') UTC" >&2
"$build/apps/nmt-sysinfo" --kernels  # the CPU and its kernel paths
bin=$work/bin

if [[ ! -f $venv/.nmt-ctranslate2-ready ]]; then
  echo "installing ctranslate2 and sentencepiece into $venv"
  [[ -x $venv/bin/python ]] || python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet 'ctranslate2>=4,<5' sentencepiece
  touch "$venv/.nmt-ctranslate2-ready"
fi
threads=$(python3 -c 'import os; print(len(os.sched_getaffinity(0)))')
gunzip -c "$data/test_2016_flickr.en.gz" > "$work/src.en"
gunzip -c "$data/test_2016_flickr.de.gz" > "$work/ref.de"
lines=$(wc -l < "$work/src.en")
"$bin/nmt-export" --format ctranslate2 "$checkpoint" "$work/ct2" --log-level warn
ct2_types=$("$venv/bin/python" -c \
  'import ctranslate2; print(" ".join(sorted(ctranslate2.get_supported_compute_types("cpu"))))')
ours_int8=0
"$bin/nmt-translate" --help 2>&1 | grep -q 'int8' && ours_int8=1

if ((quick)); then
  rounds=1 ours_batches=(1000) ct2_batches=(32)
else
  rounds=2 ours_batches=(500 1000 2000 4000) ct2_batches=(16 32 64)
fi
# Precisions: LABEL OURS_FLAG CT2_COMPUTE_TYPE ("" where a tool lacks it).
precisions=("fp32 fp32 float32")
if [[ " $ct2_types " == *" bfloat16 "* ]]; then precisions+=("bf16 bf16 bfloat16"); else precisions+=("bf16 bf16 -"); fi
if ((ours_int8)); then precisions+=("int8 int8 int8"); else precisions+=("int8 - int8"); fi
strategies=("beam4" "greedy")

results=$work/results.tsv  # load decode precision tool batch round seconds rss_kb hypothesis
: > "$results"
# run_one LOAD DECODE PRECISION TOOL BATCH ROUND FLAG: one whole-process decode, timed.
run_one() {
  local load=$1 decode=$2 precision=$3 tool=$4 batch=$5 round=$6 flag=$7
  local hyp=$work/$load-$decode-$precision-$tool-$batch-$round.de timing=$work/time.txt cmd
  if [[ $tool == ours ]]; then
    cmd=("$bin/nmt-translate" --checkpoint "$checkpoint" --input "$work/src.en" --output "$hyp"
      --precision "$flag" --threads "$threads" --batch-tokens "$batch" --log-level warn)
    [[ $decode == greedy ]] && cmd+=(--greedy) || cmd+=(--beam 4 --alpha 0.6)
  else
    cmd=("$venv/bin/python" "$root/bench/ct2_decode.py" "$work/ct2" "$work/src.en" "$hyp"
      --compute-type "$flag" --threads "$threads" --batch "$batch")
    [[ $decode == greedy ]] && cmd+=(--beam 1) || cmd+=(--beam 4 --alpha 0.6)
  fi
  if ! /usr/bin/time -f '%e %M' -o "$timing" "${cmd[@]}" > "$work/run.log" 2>&1; then
    echo "  $tool $decode $precision batch $batch failed: $(tail -2 "$work/run.log")" >&2
    return 0
  fi
  read -r seconds rss < "$timing"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$load" "$decode" "$precision" "$tool" "$batch" \
    "$round" "$seconds" "$rss" "$hyp" >> "$results"
}

measure() {  # LOAD
  local load=$1 spec label ours_flag ct2_flag decode round batch
  for decode in "${strategies[@]}"; do
    for spec in "${precisions[@]}"; do
      read -r label ours_flag ct2_flag <<< "$spec"
      for ((round = 1; round <= rounds; ++round)); do
        echo "  $load $decode $label round $round" >&2
        if [[ $ours_flag != - ]]; then
          for batch in "${ours_batches[@]}"; do
            run_one "$load" "$decode" "$label" ours "$batch" "$round" "$ours_flag"
          done
        fi
        if [[ $ct2_flag != - ]]; then
          for batch in "${ct2_batches[@]}"; do
            run_one "$load" "$decode" "$label" ct2 "$batch" "$round" "$ct2_flag"
          done
        fi
      done
    done
  done
}

echo "$lines sentences, $threads threads each; CTranslate2 $("$venv/bin/python" -c \
  'import ctranslate2; print(ctranslate2.__version__)') (CPU compute types: $ct2_types)"
read -r load1 _ < /proc/loadavg
if awk -v l="$load1" -v t="$threads" 'BEGIN { exit !(l > t / 2) }'; then
  echo "warning: load average $load1 on $threads CPUs: the 'idle' rows are not idle"
fi
measure idle
for _ in 1 2; do
  sh -c 'while :; do :; done' &
  busy+=($!)
done
measure busy2
stop_busy

# BLEU of each best run, then the table.
python3 - "$results" "$bin/nmt-bleu" "$work/ref.de" "$lines" <<'PY'
import collections, subprocess, sys
results, bleu_tool, ref, lines = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
runs = collections.defaultdict(list)
for row in open(results):
    load, decode, precision, tool, batch, rnd, seconds, rss, hyp = row.rstrip("\n").split("\t")
    runs[(load, decode, precision, tool)].append((lines / float(seconds), int(rss), batch, hyp))

def best(key):
    return max(runs[key]) if runs.get(key) else None

def bleu(hyp):
    out = subprocess.run([bleu_tool, ref, "-i", hyp, "-b"], capture_output=True, text=True)
    return out.stdout.strip() or "?"

def fmt(v, spec):
    return "n/a" if v is None else format(v, spec)

header = ("| load | decode | precision | ours sent/s (batch tokens) | CT2 sent/s (batch sents) "
          "| ours/CT2 | ours BLEU | CT2 BLEU | ours RSS MB | CT2 RSS MB | RSS ours/CT2 |")
print(header)
print("|" + " --- |" * (header.count("|") - 1))
keys = sorted({k[:3] for k in runs}, key=lambda k: (k[0] != "idle", k[1] != "beam4",
                                                     ["fp32", "bf16", "int8"].index(k[2])))
for load, decode, precision in keys:
    ours, ct2 = best((load, decode, precision, "ours")), best((load, decode, precision, "ct2"))
    ratio = ours[0] / ct2[0] if ours and ct2 else None
    rss_ratio = ours[1] / ct2[1] if ours and ct2 else None
    print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        "idle" if load == "idle" else "2 busy", decode, precision,
        "%.1f (%s)" % (ours[0], ours[2]) if ours else "n/a",
        "%.1f (%s)" % (ct2[0], ct2[2]) if ct2 else "n/a", fmt(ratio, ".2f"),
        bleu(ours[3]) if ours else "n/a", bleu(ct2[3]) if ct2 else "n/a",
        fmt(ours[1] / 1024 if ours else None, ".0f"), fmt(ct2[1] / 1024 if ct2 else None, ".0f"),
        fmt(rss_ratio, ".2f")))
# Slowdown beside two busy processes, per tool: idle sent/s over busy sent/s.
for decode in ("beam4", "greedy"):
    for precision in ("fp32", "bf16", "int8"):
        parts = []
        for tool in ("ours", "ct2"):
            idle, busy = best(("idle", decode, precision, tool)), best(("busy2", decode, precision, tool))
            if idle and busy:
                parts.append("%s %.2fx" % (tool, idle[0] / busy[0]))
        if parts:
            print("slowdown with 2 busy processes, %s %s: %s" % (decode, precision, ", ".join(parts)))
PY
