# Sourced by the multi-node test scripts (tests/cluster/*_test.sh): the cluster the CTest fixture
# started (tests/cluster/cluster.sh), commands run on its nodes, tiny data and configs on the
# shared file system, a tracker daemon on the login node, links cut and shaped, job submission,
# and cleanup of exactly what the test started (its jobs, its daemon, its folder).
# cluster_test_init BUILD_DIR DATA_DIR CLUSTER_DIR PYTHON   (exits 77 when a test cannot run here)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cluster_jobs=()
tracker_pid=''
shaped=()
cut_links=()

cluster_test_init() {
  build=$1 data=$2 cluster=$3 python=$4
  "$root/tests/cluster/cluster.sh" check > /dev/null || { "$root/tests/cluster/cluster.sh" check; exit 77; }
  [[ -f "$data/val.en.gz" ]] || { echo "skip: Multi30k not found at $data"; exit 77; }
  [[ -f "$cluster/env" ]] || { echo "FAIL: no test cluster in $cluster (the cluster fixture)"; exit 1; }
  # shellcheck source=/dev/null
  source "$cluster/env"
  bin=$build/apps
  # On the cluster's shared file system (not /tmp, which each node has of its own).
  mkdir -p "$cluster/work"
  work=$(mktemp -d "$cluster/work/$(basename "$0" .sh).XXXXXX")
  trap cluster_test_cleanup EXIT
  export NMT_BUILD_DIR=$build NMT_DEVICE=cpu NMT_SLURM_LOG_DIR=$work/slurm
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  # shellcheck source=tests/scripts/tiny_shards.sh
  source "$root/tests/scripts/tiny_shards.sh"
  make_tiny_shards "$bin/nmt-preprocess" "$data" "$work/shards"
  export NMT_DATA=$work/shards
  nodes_idle 60
}

# Every node idle (an earlier test may have crashed, drained or cut one): a node that is down is
# resumed; fails once SECONDS pass with no node's state, no job of the queue and no file of the
# work folder changing.
nodes_idle() {
  local progress_probe=(cluster_state)
  wait_progressing "$1" "the cluster's nodes are not all idle" all_nodes_idle
}
node_states() { ctl sinfo -h -N -o '%N %t' 2> /dev/null | sort -u; }
cluster_state() { node_states; ctl squeue -h -o '%i %T' 2> /dev/null; }
all_nodes_idle() {
  local states
  states=$(node_states) || true
  [[ -n "$states" && -z "$(grep -v ' idle$' <<< "$states")" ]] && return 0
  { grep -E ' (down|drain|drng|drained)\*?$' <<< "$states" || true; } | while read -r node _; do
    ctl scontrol update nodename="$node" state=resume 2> /dev/null || true
  done
  return 1
}

cluster_test_cleanup() {  # [STATUS]: the test's exit status, when a trap ran something first
  local status=${1:-$?}
  local job link
  for link in "${cut_links[@]}"; do link_up "$link" 2> /dev/null || true; done
  [[ ${tracker_gone:-0} == 1 ]] && tracker_back 2> /dev/null
  for link in "${shaped[@]}"; do unshape "$link" 2> /dev/null || true; done
  for job in "${cluster_jobs[@]}"; do ctl scancel --full --signal=KILL "$job" 2> /dev/null || true; done
  for job in "${cluster_jobs[@]}"; do ctl scancel "$job" 2> /dev/null || true; done
  [[ -n "$tracker_pid" ]] && kill "$tracker_pid" 2> /dev/null
  if [[ $status -ne 0 && $status -ne 77 ]]; then
    echo "--- job output (status $status) ---"
    tail -n 25 "$work"/slurm/*.out "$work"/*.log 2> /dev/null || true
  fi
  [[ -n "${KEEP:-}" ]] && { echo "kept $work"; return; }
  for _ in $(seq 1 100); do [[ -z "$(ctl squeue -h -t R,CG 2> /dev/null)" ]] && break; sleep 0.2; done
  rm -rf "$work"
}

fail() { echo "FAIL: $*"; exit 1; }
elapsed() { echo $(($(date +%s%N) / 1000000 - $1)); }  # ms since START (ms)
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# on NODE CMD...: runs CMD on a node of the cluster (login, node1, ...), in the current folder.
on() { "$root/tests/cluster/cluster.sh" exec "$cluster" "$@"; }
# ctl CMD...: a Slurm client command (sbatch, squeue, scontrol...) on the login node.
ctl() { on login "$@"; }

node_field() { awk -v n="$1" '$1 == n { print $'"$2"' }' "$cluster/nodes"; }  # NODE COLUMN
node_addr() { node_field "$1" 2; }
node_netns() { node_field "$1" 3; }
bridge_port() { node_field "$1" 5; }  # the node's veth end on the bridge (login namespace)
login_netns() { node_netns login; }

# A link cut at the switch: the node's port on the bridge goes down (its own eth0 loses carrier;
# nothing is reset, packets just stop).
link_down() { ip -n "$(login_netns)" link set "$(bridge_port "$1")" down; cut_links+=("$1"); }
link_up() { ip -n "$(login_netns)" link set "$(bridge_port "$1")" up; }
# The tracker's address taken off the login node and given back: connections to it time out.
tracker_away() { ip -n "$(login_netns)" addr del "$NMT_CLUSTER_TRACKER_ADDR/24" dev br0; tracker_gone=1; }
tracker_back() { ip -n "$(login_netns)" addr add "$NMT_CLUSTER_TRACKER_ADDR/24" dev br0; tracker_gone=0; }

# shape NODE RATE: both directions of NODE's link limited to RATE (tc's tbf, e.g. 1gbit).
shape() {
  local burst=16kb
  ip netns exec "$(node_netns "$1")" tc qdisc replace dev eth0 root tbf rate "$2" burst "$burst" \
    latency 20ms
  ip netns exec "$(login_netns)" tc qdisc replace dev "$(bridge_port "$1")" root tbf rate "$2" \
    burst "$burst" latency 20ms
  shaped+=("$1")
}
unshape() {
  ip netns exec "$(node_netns "$1")" tc qdisc del dev eth0 root 2> /dev/null || true
  ip netns exec "$(login_netns)" tc qdisc del dev "$(bridge_port "$1")" root 2> /dev/null || true
}

# Bytes through NODE's link (received plus sent), as its bridge port counts them.
link_bytes() {
  local port
  port=$(bridge_port "$1")
  echo $(($(ip netns exec "$(login_netns)" cat "/sys/class/net/$port/statistics/rx_bytes") +
    $(ip netns exec "$(login_netns)" cat "/sys/class/net/$port/statistics/tx_bytes")))
}

# tiny_config FILE MAX_STEPS [EXTRA YAML LINES]: a model that trains a step in tens of
# milliseconds; the only checkpoints are the final one and those a stop signal writes, unless the
# extra lines say otherwise. fp32: runs are compared with each other, and precision auto can resolve
# differently in two runs on a CPU where it times bf16 against fp32.
tiny_config() {
  cat > "$1" <<YAML
model: {layers: 1, d_model: 32, d_ff: 64, heads: 2, d_k: 16, d_v: 16, dropout: 0.1, vocab_size: 400}
data: {dir: $work/shards, max_src_tokens: 300, max_tgt_tokens: 300}
train: {max_steps: $2, warmup_steps: 4, validate_every: 0, log_every: 5, threads: 1, update_batches: 4,
  precision: fp32}
checkpoint: {every_steps: ${CHECKPOINT_EVERY:-100000}, keep_last: 50}
dist: {hang_timeout_s: ${HANG_TIMEOUT_S:-15}}
${3:-}
YAML
}

# tiny_job STEPS: the tiny config of STEPS steps in $work/tiny.yaml (with CHECKPOINT_EVERY and
# HANG_TIMEOUT_S as tiny_config takes them); sets steps, and final: the last checkpoint, relative to
# a run directory.
tiny_job() {
  steps=$1
  final=$(checkpoint_of "$steps")
  tiny_config "$work/tiny.yaml" "$steps"
}

# A hostfile of the cluster's nodes for mpirun, SLOTS slots each: "node1 slots=2" ...
hostfile() {  # FILE NODES SLOTS
  : > "$1"
  local i
  for i in $(seq 1 "$2"); do echo "node$i slots=$3" >> "$1"; done
}

# mpirun_train NODE HOSTFILE RANKS [nmt-train arguments...]: jobs/train_mpirun.sh started on NODE,
# its remote ranks through the cluster's launch agent, as on a cluster with ssh between nodes.
mpirun_train() {
  local node=$1 hosts=$2 ranks=$3
  shift 3
  on "$node" env NMT_HOSTFILE="$hosts" NMT_THREADS_PER_RANK=1 \
    NMT_MPIRUN_ARGS="--mca plm_rsh_agent $root/tests/cluster/launch_agent.sh ${MPIRUN_EXTRA:-}" \
    "$root/jobs/train_mpirun.sh" "$ranks" "$@"
}

# A token, and nmt-trackerd on the login node's service address (port 8686) requiring it; with
# TLS=1, over TLS with a certificate for that address (a throwaway CA in $work/tls). Sets
# tracker_url.
start_tracker() {
  (umask 077 && head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/token")
  local args=(--db "$work/tracker.db" --bind "$NMT_CLUSTER_TRACKER_ADDR" --port 8686
    --token-file "$work/token" --log-level warn)
  local scheme=http
  if [[ ${TLS:-0} == 1 ]]; then
    make_tls_certs "$work/tls" "$NMT_CLUSTER_TRACKER_ADDR"
    args+=(--tls-cert "$work/tls/server.crt" --tls-key "$work/tls/server.key")
    scheme=https
    export NMT_TRACKER_CA_FILE=$work/tls/ca.crt
  fi
  # Not through `on` (a function runs in a subshell): $! is then the daemon itself.
  "$root/tests/cluster/cluster.sh" exec "$cluster" login "$bin/nmt-trackerd" "${args[@]}" \
    > "$work/trackerd.log" 2>&1 &
  tracker_pid=$!
  tracker_url=$scheme://$NMT_CLUSTER_TRACKER_ADDR:8686
  wait_progressing 30 "nmt-trackerd did not answer at $tracker_url" tracker_answers
}

# The daemon start_tracker started answers its health check; fails the test when it has exited.
tracker_answers() {
  kill -0 "$tracker_pid" 2> /dev/null || { cat "$work/trackerd.log"; fail "nmt-trackerd exited"; }
  on login curl -s ${NMT_TRACKER_CA_FILE:+--cacert "$NMT_TRACKER_CA_FILE"} \
    "$tracker_url/api/health" > /dev/null 2>&1
}

# make_tls_certs DIR IP: a CA valid for a day and a server certificate for IP signed by it.
make_tls_certs() {
  mkdir -p "$1"
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=nmt test CA" \
    -keyout "$1/ca.key" -out "$1/ca.crt" 2> /dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=tracker" -keyout "$1/server.key" \
    -out "$1/server.csr" 2> /dev/null
  printf 'subjectAltName=IP:%s,DNS:tracker\n' "$2" > "$1/san.ext"
  openssl x509 -req -in "$1/server.csr" -CA "$1/ca.crt" -CAkey "$1/ca.key" -CAcreateserial \
    -days 1 -extfile "$1/san.ext" -out "$1/server.crt" 2> /dev/null
}

# tracker_get PATH: the daemon's JSON answer to GET PATH, asked from the login node.
tracker_get() {
  on login curl -sf ${NMT_TRACKER_CA_FILE:+--cacert "$NMT_TRACKER_CA_FILE"} \
    -H "Authorization: Bearer $(cat "$work/token")" "$tracker_url$1"
}

# The one run of EXPERIMENT in the tracker, as JSON (GET /api/runs/ID).
tracked_run() {
  local id
  id=$(tracker_get "/api/runs?experiment=$1" |
    "$python" -c 'import json,sys; r=json.load(sys.stdin)["runs"]; assert len(r)==1, r; print(r[0]["run_id"])') ||
    fail "no single tracked run of experiment $1"
  tracker_get "/api/runs/$id"
}

# submit SCRIPT RUN_DIR CONFIG [sbatch arguments...]: one of jobs/slurm's batch scripts, through
# jobs/slurm/submit.sh on the login node, resized for this machine (ranks of one CPU, no GPU);
# prints the job id.
submit() {
  local script=$1 run_dir=$2 config=$3 id
  shift 3
  id=$(on login env NMT_RUN_DIR="$run_dir" NMT_CONFIG="$config" "$root/jobs/slurm/submit.sh" \
    "$root/jobs/slurm/$script" --parsable --gpus-per-task=0 --cpus-per-task=1 --time=10 "$@")
  id=${id%%;*}
  cluster_jobs+=("$id")
  echo "$id"
}

slurm() { ctl "$@"; }  # Slurm's clients, on the login node
# shellcheck source=tests/scripts/slurm_waits.sh
source "$root/tests/scripts/slurm_waits.sh"

# Every checkpoint of RUN_DIR loads with its checksums verified (nmt-average reads them all).
checkpoints_intact() {
  local files=("$1"/checkpoints/step-*.h5)
  [[ -f "${files[0]}" ]] || return 0
  "$bin/nmt-average" --inputs "${files[@]}" --output "$work/verify-$(basename "$1").h5" \
    --log-level warn > /dev/null || fail "a checkpoint of $1 does not load"
  rm -f "$work/verify-$(basename "$1").h5"
}

# The nmt-train processes running on NODE (its network namespace's processes named nmt-train).
node_ranks() {
  local pid
  for pid in $(ip netns pids "$(node_netns "$1")" 2> /dev/null); do
    [[ "$(cat "/proc/$pid/comm" 2> /dev/null)" == nmt-train ]] && echo "$pid"
  done
  return 0
}

# wait_ranks_gone SECONDS NODE...: until no nmt-train runs on the NODEs; prints the milliseconds
# it took, fails after SECONDS.
wait_ranks_gone() {
  local seconds=$1 start node left
  shift
  start=$(now_ms)
  while (($(now_ms) - start < seconds * 1000)); do
    left=''
    for node in "$@"; do left+=$(node_ranks "$node"); done
    [[ -z "$left" ]] && { elapsed "$start"; return 0; }
    sleep 0.1
  done
  fail "nmt-train still running on $* after $seconds s"
}

# start_mpirun_job NAME HOSTFILE RANKS [nmt-train arguments...]: a 2-node training in the
# background (mpirun on node1); each rank's output goes to $work/NAME.out/1/rank.N/stderr (written
# by Open MPI's daemon on the rank's own node, so a cut link loses none of it). Sets job_pid.
start_mpirun_job() {
  local name=$1 hosts=$2 ranks=$3
  shift 3
  MPIRUN_EXTRA="--output-filename $work/$name.out" mpirun_train node1 "$hosts" "$ranks" \
    --config "$work/tiny.yaml" --data "$work/shards" --run-dir "$work/$name" "$@" \
    > "$work/$name.log" 2>&1 &
  job_pid=$!
}

# All the ranks' output of an mpirun job started by start_mpirun_job.
rank_output() { cat "$work/$1.out"/*/rank.*/std* 2> /dev/null; }
