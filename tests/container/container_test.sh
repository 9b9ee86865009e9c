#!/usr/bin/env bash
# The project in a container, as users run it: a runtime image of the build folder
# (jobs/container/build.sh --from-build), then, inside containers of it:
#   nmt-sysinfo (the current LibTorch line, its CUDA half loadable, Open MPI);
#   nmt-preprocess of Multi30k's val split into shards;
#   a tiny training on 2 MPI ranks through jobs/train_mpirun.sh, recording to a tracker;
#   nmt-average of its checkpoints, nmt-translate of 200 sources, nmt-bleu against their references;
#   nmt-trackerd in a container of its own, its port published on the host's loopback: the training
#   container records there, and the host's nmt-tracker reads the run, its status and its loss.
# Usage: container_test.sh BUILD_DIR DATA_DIR
# Exit status 77 (skipped, the reason printed): no container engine that can start a container
# here, no base image to be had, or no Multi30k.
set -euo pipefail
build=$(realpath "$1") data=$2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[[ -f "$data/val.en.gz" ]] || { echo "Multi30k not found at $data"; exit 77; }
data=$(realpath "$data")
# shellcheck source=jobs/container/engine.sh
source "$root/jobs/container/engine.sh"
container_ready || { echo "SKIPPED: $ENGINE_WHY"; exit 77; }

work=$(mktemp -d)
chmod 755 "$work"
tag=localhost/nmt-transformer:test-$$
names=()
cleanup() {
  local name
  for name in "${names[@]+"${names[@]}"}"; do "${ENGINE[@]}" rm -f "$name" >/dev/null 2>&1 || true; done
  "${ENGINE[@]}" rmi -f "$tag" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$root/jobs/container/build.sh" --from-build "$build" --tag "$tag" >/dev/null ||
  fail "the runtime image did not build"

# in_container ARGS...: a command in a fresh container of the image, the work folder at /work and
# the data read-only at /data.
in_container() {
  "${ENGINE[@]}" run --rm "${ENGINE_LIMITS[@]}" -v "$work:/work" -v "$data:/data:ro" "$@"
}

echo "== nmt-sysinfo"
in_container "$tag" nmt-sysinfo >"$work/sysinfo.txt" 2>&1 || { cat "$work/sysinfo.txt"; fail "nmt-sysinfo"; }
cat "$work/sysinfo.txt"
grep -q '^libtorch_line *current$' "$work/sysinfo.txt" || fail "not the current LibTorch line"
grep -q '^cuda *runtime 13' "$work/sysinfo.txt" || fail "LibTorch's CUDA half did not load in the image"
grep -q '^mpi *Open MPI' "$work/sysinfo.txt" || fail "no Open MPI in the image"

echo "== nmt-trackerd in its own container, published on the host's loopback"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
names+=("nmt-trackerd-test-$$")
# Inside its container the daemon listens on every address, which it does only with a token.
head -c 24 /dev/urandom | base64 >"$work/token"
"${ENGINE[@]}" run -d --name "nmt-trackerd-test-$$" "${ENGINE_LIMITS[@]}" -v "$work:/work" \
  -p "127.0.0.1:$port:8642" "$tag" \
  nmt-trackerd --db /work/tracker.db --bind 0.0.0.0 --port 8642 --token-file /work/token >/dev/null
url=http://127.0.0.1:$port
export NMT_TRACKER_URL=$url NMT_TRACKER_TOKEN_FILE=$work/token
for _ in $(seq 1 150); do
  "$build/apps/nmt-tracker" runs >/dev/null 2>&1 && break
  [[ $("${ENGINE[@]}" inspect -f '{{.State.Running}}' "nmt-trackerd-test-$$") == true ]] || break
  sleep 0.2
done
"$build/apps/nmt-tracker" runs >/dev/null ||
  { "${ENGINE[@]}" logs "nmt-trackerd-test-$$"; fail "the host does not reach the daemon at $url"; }

echo "== preprocessing, 2 MPI ranks training, averaging, translation and BLEU in the container"
# The training container shares the host's network, so that it reaches the daemon's published port.
in_container --network host -e "NMT_TRACKER_URL=$url" -e NMT_TRACKER_TOKEN_FILE=/work/token "$tag" bash -euo pipefail -c '
  nmt-preprocess --out /work/shards --vocab-size 400 --log-level warn \
    --train /data/val.en.gz /data/val.de.gz --valid /data/val.en.gz /data/val.de.gz >/dev/null
  train_mpirun.sh 2 --data /work/shards --run-dir /work/run --experiment container-test \
    --set model.layers=1 --set model.d_model=32 --set model.d_ff=64 --set model.heads=2 \
    --set model.d_k=16 --set model.d_v=16 --set data.max_src_tokens=400 \
    --set data.max_tgt_tokens=400 --set train.max_steps=6 --set train.log_every=3 \
    --set train.validate_every=0 --set checkpoint.every_steps=3 --set train.precision=fp32 \
    --log-level warn
  nmt-average --run-dir /work/run --last 2 --output /work/averaged.h5 --log-level warn
  zcat /data/val.en.gz | sed -n 1,200p >/work/src.en
  zcat /data/val.de.gz | sed -n 1,200p >/work/ref.de
  nmt-translate --checkpoint /work/averaged.h5 --input /work/src.en --output /work/hyp.de \
    --greedy --log-level warn
  nmt-bleu /work/ref.de -i /work/hyp.de -m bleu chrf -f json >/work/bleu.json
' >"$work/pipeline.txt" 2>&1 || { cat "$work/pipeline.txt"; fail "the pipeline in the container"; }
cat "$work/pipeline.txt"
grep -q "2 rank(s)" "$work/pipeline.txt" || fail "not a 2-rank run"
ls "$work/run/checkpoints/step-00000006.h5" "$work/averaged.h5" >/dev/null || fail "checkpoints"
[[ $(wc -l <"$work/hyp.de") -eq 200 ]] || fail "expected 200 translations, got $(wc -l <"$work/hyp.de")"
python3 - "$work/bleu.json" <<'PY' || fail "nmt-bleu's report"
import json, sys
report = json.load(open(sys.argv[1]))
text = json.dumps(report)
assert "BLEU" in text and "chrF" in text, text
PY

echo "== the run, as the host's nmt-tracker reads it from the daemon"
"$build/apps/nmt-tracker" runs --experiment container-test
"$build/apps/nmt-tracker" runs --experiment container-test --json >"$work/runs.json"
run_id=$(python3 - "$work/runs.json" <<'PY'
import json, sys
answer = json.load(open(sys.argv[1]))
runs = answer["runs"] if isinstance(answer, dict) else answer
assert len(runs) == 1, f"{len(runs)} runs of the experiment"
assert runs[0]["status"] == "finished", runs[0]["status"]
assert runs[0]["world_size"] == 2, runs[0]["world_size"]
print(runs[0]["run_id"])
PY
) || fail "the run at the daemon: $(cat "$work/runs.json")"
"$build/apps/nmt-tracker" metrics "$run_id" train/loss --csv >"$work/loss.csv"
[[ $(grep -c . "$work/loss.csv") -ge 3 ]] || fail "no loss curve at the daemon: $(cat "$work/loss.csv")"
ls -la "$work/tracker.db" >/dev/null || fail "the daemon's database is not in the bound folder"
echo ok
