#!/usr/bin/env bash
# The paper's WMT14 recipe end to end (Vaswani et al. 2017, sections 5 and 6.1), for one language
# pair and model, on the data jobs/wmt14/get-data.sh fetched:
#   preprocess  nmt-preprocess, configs/preprocess/wmt14-PAIR.yaml, in the raw folder
#   train       nmt-train with configs/MODEL.yaml (updates of ~25k source + ~25k target tokens;
#               base 100k steps, big 300k; checkpoints every 1,500 or 600 steps, the paper's
#               10 minutes), on 1 node x 8 GPUs
#               through jobs/train_mpirun.sh or on Slurm through jobs/slurm/ (sbatch --wait)
#   average     nmt-average: the config's decode.average_last (base 5, big 20)
#   decode      newstest2014 (full) as sacreBLEU reads it (sgm2text.py), nmt-translate with the
#               config's beam (4) and alpha (0.6), outputs up to input length + 50
#   score       nmt-bleu on the raw reference (BLEU and chrF2, sacreBLEU's signature);
#               nmt-evaluate on newstest2013: dev perplexity and BLEU (recorded with --record
#               when a tracker is set)
#   record      the test score into the run's tracked run (nmt-tracker log-eval)
#   table       every run's results beside the paper's Table 2 (results.py table)
# Each stage reuses what an earlier one left: existing shards, a run's checkpoints (training
# resumes), so the script can be run again after a break or a preemption.
#
#   jobs/wmt14/run.sh PAIR MODEL [STAGE...]      PAIR en-de|en-fr, MODEL base|big
#   e.g. jobs/wmt14/run.sh en-de base                       # everything, 8 ranks via mpirun
#        NMT_WMT14_LAUNCHER=slurm jobs/wmt14/run.sh en-de big
#        jobs/wmt14/run.sh en-de big average decode score record table
# Environment (all optional):
#   NMT_WMT14_RAW          the raw data, get-data.sh's DIR (default data/wmt14)
#   NMT_WMT14_SHARDS       the shards (default data/wmt14-PAIR: the configs' data.dir)
#   NMT_WMT14_WORK         the runs (default runs/wmt14); this one is WORK/PAIR-MODEL
#   NMT_WMT14_RUN_NAME     its folder and tracked name instead of PAIR-MODEL
#   NMT_WMT14_CONFIG       run config (default configs/MODEL.yaml)
#   NMT_WMT14_CONFIG_SET   run-config overrides, key=value words ("model.layers=1 train.warmup_steps=60");
#                          they travel in the run's config, so averaging and decoding see them too
#   NMT_WMT14_STEPS        train.max_steps (default: the config's)
#   NMT_WMT14_PREPROCESS_SET   nmt-preprocess overrides, key=value words ("vocab.size=8000")
#   NMT_WMT14_PREPROCESS_ARGS  more nmt-preprocess arguments, e.g. an extra corpus (nmt-preprocess
#                          runs in the raw folder: give absolute paths)
#                          ("--train /data/news-commentary-v14.de-en.tsv.gz --tsv-columns 1,0")
#   NMT_WMT14_LAUNCHER     mpirun (default: jobs/train_mpirun.sh, this node or NMT_HOSTFILE's) or slurm
#   NMT_WMT14_RANKS        mpirun: ranks, one per GPU (default 8)
#   NMT_WMT14_NODES        slurm: nodes (default 1: MODEL-1node.sbatch; big on more nodes:
#                          big-multinode.sbatch, the update grown with the GPUs, docs/cluster.md)
#   NMT_WMT14_SBATCH_ARGS  slurm: more sbatch arguments, split on spaces (e.g. "--partition=gpu")
#   NMT_DEVICE             training device (the launchers read it; mpirun's default: the config's
#                          train.device, auto; Slurm's: cuda)
#   NMT_WMT14_DECODE_DEVICE  decoding and dev scoring device (default auto: a GPU when there is one)
#   NMT_WMT14_THREADS      CPU threads of decoding and scoring (default 0: all cores)
#   NMT_WMT14_DEV_SENTENCES  newstest2013 sentences nmt-evaluate translates (default 0: all)
#   NMT_BUILD_DIR          the build whose apps/ run (default build-current/; never built here)
#   NMT_TRACKER_URL (with NMT_TRACKER_TOKEN_FILE, NMT_TRACKER_CA_FILE) or NMT_TRACKER_PORT_FILE:
#                          the nmt-trackerd that records the run and its evals; without one the
#                          results are only in the run folder (results.json), and the script says so
# Exit status: 0 done; 1 a stage failed (named); 2 usage; nmt-train's 75/130 after a graceful stop.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
here=$root/jobs/wmt14
all_stages=(preprocess train average decode score record table)

usage() { sed -n '2,/^[^#]/{/^#/p}' "$0"; exit 2; }
(($# >= 2)) || usage
pair=$1 model=$2
shift 2
[[ "$pair" == en-de || "$pair" == en-fr ]] || { echo "run.sh: PAIR must be en-de or en-fr" >&2; usage; }
[[ "$model" == base || "$model" == big ]] || { echo "run.sh: MODEL must be base or big" >&2; usage; }
stages=("$@")
((${#stages[@]} > 0)) || stages=("${all_stages[@]}")
for s in "${stages[@]}"; do
  [[ " ${all_stages[*]} " == *" $s "* ]] || { echo "run.sh: unknown stage $s (${all_stages[*]})" >&2; exit 2; }
done
wants() { [[ " ${stages[*]} " == *" $1 "* ]]; }

tgt=${pair#en-}
raw=$(realpath -m "${NMT_WMT14_RAW:-$root/data/wmt14}")
shards=$(realpath -m "${NMT_WMT14_SHARDS:-$root/data/wmt14-$pair}")
work=$(realpath -m "${NMT_WMT14_WORK:-$root/runs/wmt14}")
name=${NMT_WMT14_RUN_NAME:-$pair-$model}
run=$work/$name
train_dir=$run/train
config=$(realpath -m "${NMT_WMT14_CONFIG:-$root/configs/$model.yaml}")
build=$(realpath -m "${NMT_BUILD_DIR:-$root/build-current}")
bin=$build/apps
launcher=${NMT_WMT14_LAUNCHER:-mpirun}
decode_device=${NMT_WMT14_DECODE_DEVICE:-auto}
threads=${NMT_WMT14_THREADS:-0}
test_pair=${pair/-/}  # deen, fren: the file names of newstest2014
test_pair=${test_pair:2}${test_pair:0:2}
test_src=$raw/test-full/newstest2014-$test_pair-src.en.sgm
test_ref=$raw/test-full/newstest2014-$test_pair-ref.$tgt.sgm
start=$(date +%s)

stage() { printf '\n== wmt14 %s %s: %s  (%s elapsed)\n' "$pair" "$model" "$*" \
  "$(date -u -d @$(($(date +%s) - start)) +%H:%M:%S)"; }
fail() { echo "run.sh: FAILED at $*" >&2; exit 1; }

# key=value words -> --set key=value arguments.
set_args() {  # VARIABLE_CONTENT -> sets the array `sets`
  sets=()
  local word words
  read -r -a words <<< "$1"
  for word in "${words[@]+"${words[@]}"}"; do
    [[ "$word" == *=* ]] || fail "set-up: '$word' is not key=value"
    sets+=(--set "$word")
  done
}
set_args "${NMT_WMT14_CONFIG_SET:-}"
train_sets=("${sets[@]+"${sets[@]}"}")
if [[ -n "${NMT_WMT14_STEPS:-}" ]]; then
  [[ $NMT_WMT14_STEPS =~ ^[1-9][0-9]*$ ]] || fail "set-up: NMT_WMT14_STEPS=$NMT_WMT14_STEPS"
  train_sets+=(--set "train.max_steps=$NMT_WMT14_STEPS")
fi
set_args "${NMT_WMT14_PREPROCESS_SET:-}"
preprocess_sets=("${sets[@]+"${sets[@]}"}")

# The tracker: a URL in the environment (the tools read it themselves) or a port file.
tracker_flags=() tracker_cli=()
if [[ -n "${NMT_TRACKER_PORT_FILE:-}" ]]; then
  tracker_flags=(--tracker-port-file "$NMT_TRACKER_PORT_FILE")
  tracker_cli=(--port-file "$NMT_TRACKER_PORT_FILE")
fi
tracked() { [[ -n "${NMT_TRACKER_PORT_FILE:-}${NMT_TRACKER_URL:-}" ]]; }

for tool in nmt-preprocess nmt-train nmt-average nmt-translate nmt-bleu nmt-evaluate nmt-tracker; do
  [[ -x "$bin/$tool" ]] || fail "set-up: $bin/$tool is missing (NMT_BUILD_DIR=$build; build it with jobs/build.sh)"
done
mkdir -p "$run"
echo "run.sh: WMT14 $pair, $model ($config${NMT_WMT14_CONFIG_SET:+, overrides: $NMT_WMT14_CONFIG_SET})"
echo "run.sh: raw data $raw, shards $shards, run $run, stages: ${stages[*]}"

if wants preprocess; then
  stage "preprocess (configs/preprocess/wmt14-$pair.yaml)"
  if [[ -f "$shards/manifest.json" ]]; then
    echo "reusing $shards (remove it to preprocess again)"
  else
    [[ -f "$test_src" ]] || fail "preprocess: no $test_src: fetch the data first (jobs/wmt14/get-data.sh $pair $raw)"
    # The config's corpus paths are relative to the raw folder.
    # shellcheck disable=SC2086  # NMT_WMT14_PREPROCESS_ARGS is a list of words
    (cd "$raw" && "$bin/nmt-preprocess" --config "$root/configs/preprocess/wmt14-$pair.yaml" \
      --out "$shards" "${preprocess_sets[@]+"${preprocess_sets[@]}"}" ${NMT_WMT14_PREPROCESS_ARGS:-}) \
      2>&1 | tee "$run/preprocess.txt" || fail "preprocess"
  fi
fi

if wants train; then
  [[ -f "$shards/manifest.json" ]] || fail "train: no shards in $shards (run the preprocess stage)"
  train_args=(--config "$config" --data "$shards" --run-dir "$train_dir" --experiment wmt14
              --set "tracker.run_name=$name" "${train_sets[@]+"${train_sets[@]}"}")
  case $launcher in
    mpirun)
      ranks=${NMT_WMT14_RANKS:-8}
      [[ $ranks =~ ^[1-9][0-9]*$ ]] || fail "set-up: NMT_WMT14_RANKS=$ranks"
      stage "train ($(basename "$config"), $ranks rank(s) via jobs/train_mpirun.sh)"
      ls "$train_dir"/checkpoints/step-*.h5 > /dev/null 2>&1 && train_args+=(--resume)
      status=0
      # tee ignores Ctrl-C, so that train_mpirun.sh's graceful stop (a checkpoint, exit 130) can
      # still write its output.
      NMT_BUILD_DIR=$build "$root/jobs/train_mpirun.sh" "$ranks" "${train_args[@]}" \
        "${tracker_flags[@]+"${tracker_flags[@]}"}" 2>&1 |
        (trap '' INT TERM; exec tee -a "$run/train.txt") || status=$?
      ((status == 0)) || { echo "run.sh: training stopped with status $status; run this again to resume" >&2; exit "$status"; }
      ;;
    slurm)
      nodes=${NMT_WMT14_NODES:-1}
      [[ $nodes =~ ^[1-9][0-9]*$ ]] || fail "set-up: NMT_WMT14_NODES=$nodes"
      script=$root/jobs/slurm/$model-1node.sbatch
      sbatch_args=(--wait)
      if ((nodes > 1)); then
        [[ $model == big ]] || fail "set-up: base runs on one node (the paper's 8 GPUs); NMT_WMT14_NODES=$nodes is for big"
        script=$root/jobs/slurm/big-multinode.sbatch
        sbatch_args+=(--nodes="$nodes")
      fi
      # shellcheck disable=SC2206  # NMT_WMT14_SBATCH_ARGS is a list of words
      sbatch_args+=(${NMT_WMT14_SBATCH_ARGS:-})
      stage "train ($(basename "$config") via $(basename "$script"), $nodes node(s); sbatch --wait)"
      # train.sh always passes --resume; its NMT_TRAIN_ARGS is split on spaces.
      status=0
      NMT_DATA=$shards NMT_CONFIG=$config NMT_RUN_DIR=$train_dir NMT_BUILD_DIR=$build \
        NMT_TRAIN_ARGS="--experiment wmt14 --set tracker.run_name=$name ${train_sets[*]:-}" \
        "$root/jobs/slurm/submit.sh" "$script" "${sbatch_args[@]}" || status=$?
      # A job that requeued itself (time limit) or was preempted ends sbatch --wait before the
      # training is done: the average stage checks the step reached.
      ((status == 0)) || fail "train: the Slurm job ended with status $status (its output: runs/slurm/); submit again to resume"
      ;;
    *) fail "set-up: NMT_WMT14_LAUNCHER=$launcher (mpirun or slurm)" ;;
  esac
fi

if wants average; then
  stage "average the last decode.average_last checkpoints"
  [[ -f "$train_dir/config.yaml" ]] || fail "average: no training in $train_dir"
  max_steps=$(sed -n '/^train:/,/^[a-z]/s/^  max_steps: *//p' "$train_dir/config.yaml")
  newest=$(find "$train_dir/checkpoints" -name 'step-*.h5' | sort | tail -1)
  [[ -n "$newest" ]] || fail "average: no checkpoints in $train_dir/checkpoints"
  step=$(basename "$newest" .h5)
  step=$((10#${step#step-}))
  ((step >= max_steps)) ||
    echo "run.sh: WARNING: the newest checkpoint is step $step of train.max_steps $max_steps (early stopping, or training not finished: resume it with the train stage)" >&2
  "$bin/nmt-average" --run-dir "$train_dir" --output "$run/averaged.h5" 2>&1 | tee "$run/average.txt" ||
    fail "average"
fi

if wants decode; then
  stage "decode newstest2014 (full): beam and alpha of the config's decode section, length <= input + 50"
  [[ -f "$run/averaged.h5" ]] || fail "decode: no $run/averaged.h5 (run the average stage)"
  for sgm in "$test_src" "$test_ref"; do [[ -f "$sgm" ]] || fail "decode: no $sgm"; done
  python3 "$here/sgm2text.py" "$test_src" > "$run/newstest2014.src" || fail "decode: $test_src"
  python3 "$here/sgm2text.py" "$test_ref" > "$run/newstest2014.ref" || fail "decode: $test_ref"
  # --long-inputs split: a sentence longer than the model's positions is translated whole.
  "$bin/nmt-translate" --checkpoint "$run/averaged.h5" --input "$run/newstest2014.src" \
    --output "$run/newstest2014.hyp" --max-len-offset 50 --long-inputs split \
    --device "$decode_device" --threads "$threads" 2>&1 | tee "$run/decode.txt" || fail "decode"
  [[ $(wc -l < "$run/newstest2014.hyp") -eq $(wc -l < "$run/newstest2014.src") ]] ||
    fail "decode: $(wc -l < "$run/newstest2014.hyp") translations of $(wc -l < "$run/newstest2014.src") sentences"
fi

if wants score; then
  stage "score: nmt-bleu on newstest2014, nmt-evaluate on newstest2013"
  [[ -f "$run/newstest2014.hyp" ]] || fail "score: no translations (run the decode stage)"
  "$bin/nmt-bleu" "$run/newstest2014.ref" -i "$run/newstest2014.hyp" -m bleu chrf --json \
    > "$run/scores.json" || fail "score: nmt-bleu"
  record_flags=()
  if tracked; then record_flags=(--record "${tracker_flags[@]+"${tracker_flags[@]}"}"); fi
  "$bin/nmt-evaluate" --checkpoint "$run/averaged.h5" --data "$shards" --split valid \
    --sentences "${NMT_WMT14_DEV_SENTENCES:-0}" --device "$decode_device" --threads "$threads" \
    --json "${record_flags[@]+"${record_flags[@]}"}" > "$run/dev.json" 2> "$run/dev.txt" ||
    { cat "$run/dev.txt" >&2; fail "score: nmt-evaluate on newstest2013"; }
  read -r bleu chrf signature < <(python3 "$here/results.py" write "$run" "$pair" "$model" \
    "${NMT_WMT14_CONFIG_SET:-}") || fail "score: results.json"
  echo "newstest2014: BLEU $bleu, chrF2 $chrf ($signature)"
  echo "newstest2013: $(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("BLEU %.2f, perplexity %.2f (%d parameters, step %d)" % (d["bleu"], d["perplexity"], d["parameters"], d["step"]))' "$run/dev.json")"
  tracked && echo "newstest2013's scores recorded in the tracker by nmt-evaluate"
fi

if wants record; then
  stage "record the test score in the tracker"
  [[ -f "$run/results.json" ]] || fail "record: no $run/results.json (run the score stage)"
  if ! tracked; then
    echo "no tracker (NMT_TRACKER_URL or NMT_TRACKER_PORT_FILE): nothing recorded; the results are in $run/results.json"
  else
    uid=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["uid"])' "$train_dir/run.json") ||
      fail "record: no run identity in $train_dir/run.json"
    run_id=$("$bin/nmt-tracker" "${tracker_cli[@]+"${tracker_cli[@]}"}" runs --uid "$uid" --json |
      python3 -c 'import json, sys; print(json.load(sys.stdin)["runs"][0]["run_id"])') ||
      fail "record: the run $uid ($train_dir) is not in the tracker"
    read -r bleu chrf signature step < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r["test"]["bleu"], r["test"]["chrf"], r["test"]["signature"], r.get("steps", 0))' "$run/results.json")
    "$bin/nmt-tracker" "${tracker_cli[@]+"${tracker_cli[@]}"}" log-eval "$run_id" --split test \
      --bleu "$bleu" --chrf "$chrf" --signature "$signature" \
      --checkpoint "$run/averaged.h5" --step "$step" > /dev/null || fail "record"
    echo "recorded in the tracker: run $run_id ($name), test BLEU $bleu"
  fi
fi

if wants table; then
  stage "table"
  python3 "$here/results.py" table "$work" | tee "$work/table.md" || fail "table"
fi
