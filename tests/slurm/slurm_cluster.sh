#!/usr/bin/env bash
# A one-node Slurm cluster in a folder, for the tests: its own munged (own key and socket), its own
# slurmctld and slurmd (free ports, state, spool and logs under DIR), so it never touches a Slurm
# or munge this machine already runs, and stops exactly the processes it started, by pid.
#   slurm_cluster.sh start DIR   starts it; writes DIR/env (source it: SLURM_CONF and friends)
#   slurm_cluster.sh stop DIR    cancels its jobs, stops its daemons, keeps DIR (logs)
#   slurm_cluster.sh check       exit 0 if a cluster can run here, 77 (with the reason) if not
#   slurm_cluster.sh setup DIR   the CTest fixture: stops what an earlier run left in DIR, then
#                                starts; where no cluster can run, says why and exits 0 (the
#                                tests then skip)
# Needs root (slurmd runs jobs as their users) and Debian's slurm-wlm, munge and Open MPI
# (jobs/setup.sh installs them). The node has this machine's CPUs; the configuration keeps
# finished jobs visible to `scontrol show job` for an hour (no slurmdbd, so no sacct), requeues
# jobs after 5 s instead of 120 (cred_expire), and gives tasks 30 s between SIGTERM and SIGKILL.
set -euo pipefail

check() {
  [[ $(id -u) -eq 0 ]] || { echo "skip: a test cluster needs root"; return 77; }
  local tool
  for tool in munged mungekey slurmctld slurmd sbatch srun scontrol sinfo squeue scancel python3; do
    command -v "$tool" > /dev/null || [[ -x /usr/sbin/$tool ]] ||
      { echo "skip: $tool not found (jobs/setup.sh installs slurm-wlm and munge)"; return 77; }
  done
  [[ -e /usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmix.so || -n "$(srun --mpi=list 2>&1 | grep pmix)" ]] ||
    { echo "skip: Slurm's PMIx plugin is missing (slurm-wlm-basic-plugins)"; return 77; }
}

free_ports() {  # two TCP ports nobody listens on now
  python3 - <<'PY'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

# shellcheck source=tests/scripts/test_cluster_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/test_cluster_lib.sh"

write_conf() {
  local node=$1 ctld_port=$2 d_port=$3 cpus
  cpus=$(nproc)
  cat > "$dir/slurm.conf" <<CONF
# Written by tests/slurm/slurm_cluster.sh: a one-node test cluster.
ClusterName=nmttest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmdPidFile=$dir/run/slurmd.pid
SlurmdLogFile=$dir/log/slurmd.log
TmpFS=$dir/tmp
$(slurm_conf_common "$dir")
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
  # PMIx's per-job folders under DIR, so two test clusters (or a real one) never share them.
  echo "PMIxCliTmpDirBase=$dir/tmp" > "$dir/mpi.conf"
}

start() {
  check || exit $?
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  [[ ! -s "$dir/pids" ]] || { echo "slurm_cluster: $dir has a cluster already (stop it first)" >&2; exit 1; }
  rm -rf "$dir/munge" "$dir/state" "$dir/spool" "$dir/run" "$dir/tmp" "$dir/log" "$dir/env"
  mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/run" "$dir/tmp" "$dir/log"
  chmod 700 "$dir/munge"
  : > "$dir/pids"
  local node ports
  node=$(hostname -s)
  read -r -a ports <<< "$(free_ports)"
  write_conf "$node" "${ports[0]}" "${ports[1]}"

  mungekey --create --keyfile="$dir/munge/munge.key" 2> /dev/null ||
    { dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2> /dev/null; chmod 400 "$dir/munge/munge.key"; }
  munged --foreground --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed" > "$dir/log/munged.out" 2>&1 &
  echo "munged $!" >> "$dir/pids"
  wait_for 10 "munged did not open its socket" test -S "$dir/munge/munge.socket"

  export SLURM_CONF=$dir/slurm.conf
  slurmctld -D -i -f "$SLURM_CONF" > "$dir/log/slurmctld.out" 2>&1 &
  echo "slurmctld $!" >> "$dir/pids"
  wait_for 30 "slurmctld did not answer" scontrol ping
  slurmd -D -f "$SLURM_CONF" -N "$node" > "$dir/log/slurmd.out" 2>&1 &
  echo "slurmd $!" >> "$dir/pids"
  wait_for 30 "the node did not come up" bash -c "sinfo -h -N -o %t | grep -qx idle"
  cat > "$dir/env" <<ENV
# Written by tests/slurm/slurm_cluster.sh start: the test cluster's client settings.
export SLURM_CONF=$SLURM_CONF
export NMT_SLURM_DIR=$dir
export NMT_SLURM_NODE=$node
ENV
  echo "slurm_cluster: up in $dir (node $node, $(nproc) CPUs, slurmctld port ${ports[0]})"
}

stop() {
  [[ -f "$dir/pids" ]] || { echo "slurm_cluster: nothing started in $dir"; return 0; }
  local name pid
  if [[ -f "$dir/slurm.conf" ]]; then  # jobs first, so no task outlives its slurmd
    SLURM_CONF=$dir/slurm.conf timeout 10 scancel --full --signal=KILL --user=root 2> /dev/null || true
    SLURM_CONF=$dir/slurm.conf timeout 10 scancel --user=root 2> /dev/null || true
    for _ in $(seq 1 100); do
      [[ -z "$(SLURM_CONF=$dir/slurm.conf timeout 5 squeue -h -t R,CG 2> /dev/null)" ]] && break
      sleep 0.1
    done
  fi
  # Stop in reverse order of start, each by the pid recorded when it was started.
  tac "$dir/pids" | while read -r name pid; do
    kill -0 "$pid" 2> /dev/null || continue
    [[ "$(cat "/proc/$pid/comm" 2> /dev/null)" == "$name" ]] || continue  # the pid was reused
    kill -TERM "$pid" 2> /dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2> /dev/null && kill -KILL "$pid" 2> /dev/null || true
  done
  rm -f "$dir/pids" "$dir/env"
  echo "slurm_cluster: stopped ($dir)"
}

case "${1:-}" in
  start) dir=${2:?usage: slurm_cluster.sh start DIR}; start ;;
  stop) dir=${2:?usage: slurm_cluster.sh stop DIR}; stop ;;
  check) check ;;
  setup)
    dir=${2:?usage: slurm_cluster.sh setup DIR}
    reason=$(check) || { echo "$reason"; exit 0; }
    stop
    start
    ;;
  *) sed -n '2,14p' "$0"; exit 2 ;;
esac
