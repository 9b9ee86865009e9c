#!/usr/bin/env bash
# The main job: the whole pipeline on Multi30k English->German, on this machine.
#   set-up and build of the tools it runs (when needed: the same folder and configuration,
#   warnings as errors, as jobs/test.sh's, which then builds only the tests and benchmarks)
#   -> tracker daemon -> preprocess -> train -> average the last
#   checkpoints -> beam-decode test_2016_flickr (the averaging, beam and length penalty are the
#   config's decode section) -> BLEU and chrF -> recorded in the tracker ->
#   error analysis (nmt-analyze), recorded as the run's "analysis" artifact.
# Environment (all optional):
#   NMT_DATA_DIR          Multi30k directory (default ../shared/data/multi30k beside the checkout)
#   NMT_WORK_DIR          data, runs and the tracker database (default runs/ in the checkout)
#   NMT_TRACKER_PORT_FILE an existing tracker's port file, instead of starting one here
#   NMT_QUICKSTART_STOP_TRACKER=1  stop the tracker started here when the script ends (default:
#                         it keeps running, see below)
#   NMT_QUICKSTART_CONFIG run config (default configs/multi30k-quick.yaml)
#   NMT_QUICKSTART_SET    extra "--set key=value" arguments for nmt-train (the CTest uses it)
#   NMT_RANKS             MPI ranks training (default 1; jobs/train_mpirun.sh: the cores shared
#                         out as threads; the updates do not depend on it, train.update_batches)
#   NMT_VOCAB_SIZE        joint BPE size (default: the config's model.vocab_size, else 8000)
#   NMT_AVERAGE_LAST      checkpoints to average (default: the config's decode.average_last)
#   NMT_LIBTORCH_LINE     current (the default: build-current/, the pinned CUDA LibTorch, whose CPU
#                         kernels trained 1.45-1.48x faster here than Debian's; bench/libtorch_lines.sh)
#                         or debian (build/); --libtorch LINE on the command line says the same
# The tracker started here keeps running after a successful end (in its own session, so closing the
# terminal does not stop it either), so that the summary's queries and the dashboard work at once:
# the summary prints its URL, pid, how to stop it, and how to start it again later on the same
# database and port (the URL, and so NMT_TRACKER_URL, stays the same). On a failure or an
# interrupt, or with NMT_QUICKSTART_STOP_TRACKER=1, it is stopped when the script ends.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
data=$(realpath -m "${NMT_DATA_DIR:-$root/../shared/data/multi30k}")
work=$(realpath -m "${NMT_WORK_DIR:-$root/runs}")
config=${NMT_QUICKSTART_CONFIG:-$root/configs/multi30k-quick.yaml}
# The config's model.vocab_size names the BPE size it was chosen with (training takes the shards').
config_vocab=$(sed -n 's/^  vocab_size: *\([0-9][0-9]*\).*/\1/p' "$config" | head -1)
vocab=${NMT_VOCAB_SIZE:-${config_vocab:-8000}}
source "$root/jobs/libtorch_line.sh"
if (($# > 0)); then
  parse_libtorch_line "$@"
  ((${#NMT_REST_ARGS[@]} == 0)) || { echo "quickstart: unknown arguments: ${NMT_REST_ARGS[*]}" >&2; exit 2; }
  line=$NMT_LIBTORCH_LINE
else
  line=${NMT_LIBTORCH_LINE:-current}
fi
shards=$work/data/multi30k-bpe$vocab
run_name=quickstart-$(date +%Y%m%d-%H%M%S)
run_dir=$work/$run_name
start_time=$(date +%s)

stage() { printf '\n== %s  (%s elapsed)\n' "$*" "$(date -u -d @$(( $(date +%s) - start_time )) +%M:%S)"; }
fail() { echo "quickstart: FAILED at $*" >&2; exit 1; }

stage "1/9 set-up"
"$root/jobs/setup.sh" || fail "set-up"
stage "2/9 build (LibTorch line $line)"
# The tools it runs, first; the test command builds the tests and benchmarks beside them.
NMT_BUILD_TARGET=tools "$root/jobs/build.sh" --libtorch "$line" || fail "build"
bin=${NMT_BUILD_DIR:-$root/$(libtorch_build_dir "$line")}/apps
for split in train val test_2016_flickr; do
  for lang in en de; do
    [[ -f "$data/$split.$lang.gz" ]] || fail "data: missing $data/$split.$lang.gz (set NMT_DATA_DIR)"
  done
done
mkdir -p "$run_dir"

stage "3/9 tracker"
if [[ -n "${NMT_TRACKER_PORT_FILE:-}" ]]; then
  port_file=$NMT_TRACKER_PORT_FILE
  echo "using the tracker of $port_file"
else
  port_file=$run_dir/tracker.port
  setsid "$bin/nmt-trackerd" --db "$work/tracker.db" --port 0 --port-file "$port_file" \
    --log-file "$run_dir/trackerd.log" --log-level warn < /dev/null >> "$run_dir/trackerd.out" 2>&1 &
  tracker_pid=$!
  trap 'kill -TERM $tracker_pid 2>/dev/null; wait $tracker_pid 2>/dev/null' EXIT
  trap 'exit 130' INT TERM  # through the EXIT trap
  # Until it writes its port, or ends; 60 s at most (a loaded machine starts it slowly).
  for _ in $(seq 1 600); do
    [[ -s "$port_file" ]] && break
    kill -0 "$tracker_pid" 2> /dev/null || break
    sleep 0.1
  done
  [[ -s "$port_file" ]] || fail "tracker: nmt-trackerd did not start (see $run_dir/trackerd.log)"
  echo "nmt-trackerd on 127.0.0.1:$(cat "$port_file"), database $work/tracker.db"
fi
tracker_port=$(cat "$port_file")
tracker_url=http://127.0.0.1:$tracker_port
tracker=("$bin/nmt-tracker" --port-file "$port_file")

stage "4/9 preprocess Multi30k (joint BPE $vocab, HDF5 shards)"
if [[ -f "$shards/manifest.json" ]]; then
  echo "reusing $shards"
else
  "$bin/nmt-preprocess" --config "$root/configs/preprocess/multi30k.yaml" --out "$shards" \
    --vocab-size "$vocab" \
    --train "$data/train.en.gz" "$data/train.de.gz" \
    --valid "$data/val.en.gz" "$data/val.de.gz" \
    --test "$data/test_2016_flickr.en.gz" "$data/test_2016_flickr.de.gz" || fail "preprocess"
fi

ranks=${NMT_RANKS:-1}
[[ $ranks =~ ^[1-9][0-9]*$ ]] || fail "set-up: NMT_RANKS=$ranks is not a positive number"
train=("$bin/nmt-train")
((ranks == 1)) || train=(env "NMT_BUILD_DIR=$(dirname "$bin")" "$root/jobs/train_mpirun.sh" "$ranks")
stage "5/9 train ($(basename "$config"), $ranks process(es))"
train_start=$(date +%s)
# shellcheck disable=SC2086
"${train[@]}" --config "$config" --data "$shards" --run-dir "$run_dir/train" \
  --tracker-port-file "$port_file" --experiment quickstart --set "tracker.run_name=$run_name" \
  ${NMT_QUICKSTART_SET:-} | tee "$run_dir/train.txt" || fail "train"
train_seconds=$(( $(date +%s) - train_start ))

# The averaging, beam and length penalty are the config's decode section (the tools read it from
# the checkpoints); NMT_AVERAGE_LAST overrides the averaging.
stage "6/9 average the last ${NMT_AVERAGE_LAST:-decode.average_last} checkpoints"
"$bin/nmt-average" --run-dir "$run_dir/train" ${NMT_AVERAGE_LAST:+--last "$NMT_AVERAGE_LAST"} \
  --record --tracker-port-file "$port_file" \
  --output "$run_dir/averaged.h5" || fail "average"

stage "7/9 translate test_2016_flickr (decode.beam and decode.alpha)"
zcat "$data/test_2016_flickr.en.gz" > "$run_dir/test.en"
zcat "$data/test_2016_flickr.de.gz" > "$run_dir/test.de"
"$bin/nmt-translate" --checkpoint "$run_dir/averaged.h5" --input "$run_dir/test.en" \
  --output "$run_dir/test.hyp.de" || fail "translate"

stage "8/9 score and record"
"$bin/nmt-bleu" "$run_dir/test.de" -i "$run_dir/test.hyp.de" -m bleu chrf --json > "$run_dir/scores.json" \
  || fail "score"
read -r bleu chrf signature < <(python3 - "$run_dir/scores.json" <<'PY'
import json, sys
scores = {m["name"]: m for m in json.load(open(sys.argv[1]))}
print(scores["BLEU"]["score"], scores["chrF2"]["score"], scores["BLEU"]["signature"])
PY
) || fail "score: unreadable $run_dir/scores.json"
# The run directory's run.json names its tracked run (by uid; names are labels only).
run_id=$("${tracker[@]}" runs --experiment quickstart --json | python3 -c "
import json, sys
uid = json.load(open('$run_dir/train/run.json'))['uid']
print([r['run_id'] for r in json.load(sys.stdin)['runs'] if r['uid'] == uid][0])") \
  || fail "record: the run of $run_dir/train/run.json not found in the tracker"
"${tracker[@]}" log-eval "$run_id" --split test --bleu "$bleu" --chrf "$chrf" --signature "$signature" \
  --checkpoint "$run_dir/averaged.h5" > /dev/null || fail "record"
params=$(grep -o '[0-9]* parameters' "$run_dir/train.txt" | tail -1 | cut -d' ' -f1)

stage "9/9 error analysis (test_2016_flickr)"
"$bin/nmt-analyze" --src "$run_dir/test.en" --ref "$run_dir/test.de" --hyp "$run_dir/test.hyp.de" \
  --name "$run_name" --out "$run_dir/analysis" --record-run "$run_id" --port-file "$port_file" \
  || fail "analysis"

# The tracker part of the summary: where it is, and queries that work after this script ends.
if [[ -n "${tracker_pid:-}" && "${NMT_QUICKSTART_STOP_TRACKER:-0}" != 1 ]]; then
  trap - EXIT INT TERM  # leave it running
  tracker_state="nmt-trackerd pid $tracker_pid, still running; stop it: kill $tracker_pid"
elif [[ -n "${tracker_pid:-}" ]]; then
  tracker_state="stopped with this script (NMT_QUICKSTART_STOP_TRACKER=1): start it again first"
else
  tracker_state="the tracker of $port_file"
fi
restart="$bin/nmt-trackerd --db $work/tracker.db --port $tracker_port --log-file $run_dir/trackerd.log --log-level warn &"
# nmt-tracker finds the daemon from NMT_TRACKER_URL: the queries below need no --url.
query=("$bin/nmt-tracker")
url_line="export NMT_TRACKER_URL=$tracker_url"
dashboard=$(curl -s -o /dev/null -w '%{http_code}' "$tracker_url/" 2>/dev/null || true)

{
  cat <<SUMMARY

================================ quickstart summary ================================
  BLEU (test_2016_flickr, detokenized, cased, sacreBLEU 13a):  $bleu
  chrF2:                                                       $chrf
  signature:     $signature
  parameters:    $params
  training time: ${train_seconds} s ($(basename "$config"))      total: $(( $(date +%s) - start_time )) s
  outputs:       $run_dir   (train/, averaged.h5, test.hyp.de, scores.json, analysis/)
  analysis:      $run_dir/analysis/analysis.md   (worst sentences, length buckets, repetitions)
  tracker db:    $work/tracker.db   (run $run_id, experiment "quickstart")
  tracker:       $tracker_url   ($tracker_state)
SUMMARY
  if [[ "$dashboard" == 200 ]]; then echo "  dashboard:     $tracker_url/"; fi
  if [[ -n "${tracker_pid:-}" ]]; then echo "  start again:   $restart   (once stopped)"; fi
  echo "  query:         $url_line"
  echo "                 ${query[*]} show $run_id"
  echo "                 ${query[*]} metrics $run_id train/loss --csv"
  echo "                 ${query[*]} plot $run_id --metric train/loss --out $run_dir/train-loss.svg"
  echo "====================================================================================="
}
