#!/usr/bin/env bash
# A Slurm cluster of N nodes (2 by default, up to 4) and a login node on this one machine, for the
# tests. Every node is a set of Linux namespaces made here: its own network namespace (a veth pair
# to a bridge, its own address in a /24 test subnet), its own host name (UTS), and its own /tmp,
# /dev/shm and /etc/hosts (mount namespace); the rest of the file system is shared, as a cluster's
# shared file system is, and so are the cluster's folder, the checkout and NMT_CLUSTER_SHARE's
# folders where they lie under /tmp or /dev/shm. The login namespace holds the bridge (the subnet's switch), munged,
# slurmctld and, when a test starts one, an nmt-trackerd (on a second address, "tracker"); each node runs its own slurmd (`slurmd -N NAME`).
# The host's own network stack is never touched: the subnet exists only inside these namespaces,
# and it goes away with them.
#   cluster.sh check               exit 0 if a cluster can run here, 77 (with the reason) if not
#   cluster.sh start DIR [NODES]   starts it; writes DIR/env (source it) and DIR/nodes
#   cluster.sh stop DIR            cancels its jobs, kills every process in its namespaces,
#                                  deletes the namespaces; keeps DIR/log
#   cluster.sh setup DIR [NODES]   the CTest fixture: stops what an earlier run left in DIR, then
#                                  starts; where no cluster can run, says why and exits 0
#   cluster.sh exec DIR NODE CMD...        runs CMD on NODE (login, node1, ...)
#   cluster.sh crash DIR NODE              kills every process of NODE (its slurmd and jobs)
#   cluster.sh restart-slurmd DIR NODE     starts NODE's slurmd again after a crash (if not running)
# Needs root and Debian's slurm-wlm, munge, Open MPI and iproute2 (jobs/setup.sh installs them).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

check() {
  # Slurm's daemons, clients and PMIx plugin, munge, root: as the one-node test cluster needs.
  "$here/../slurm/slurm_cluster.sh" check || return $?
  local tool
  for tool in ip unshare nsenter tc mpirun; do
    command -v "$tool" > /dev/null || [[ -x /usr/sbin/$tool ]] ||
      { echo "skip: $tool not found (jobs/setup.sh installs it)"; return 77; }
  done
  # Namespaces can be refused in a container without CAP_SYS_ADMIN: try one of each kind.
  local probe="nmtprobe$$"
  ip netns add "$probe" 2> /dev/null || { echo "skip: cannot create a network namespace"; return 77; }
  local ok=1
  ip link add "${probe}a" type veth peer name "${probe}b" 2> /dev/null || ok=0
  ip link del "${probe}a" 2> /dev/null || true
  ip netns exec "$probe" unshare --mount --uts --propagation private \
    sh -c 'mount -t tmpfs tmpfs /tmp && hostname probe' 2> /dev/null || ok=0
  ip netns del "$probe"
  ((ok)) || { echo "skip: cannot create veth pairs or mount/UTS namespaces"; return 77; }
}

# shellcheck source=tests/scripts/test_cluster_lib.sh
source "$here/../scripts/test_cluster_lib.sh"

# A /24 in 10.200-249.x.0 that no route of this host's covers (the nodes never reach the host's
# networks anyway: their namespaces hold only the subnet and loopback).
pick_subnet() {
  local a b
  for _ in $(seq 1 50); do
    a=$((200 + RANDOM % 50)) b=$((RANDOM % 256))
    ip route show table all 2> /dev/null | grep -q "10\.$a\.$b\." || { echo "10.$a.$b"; return; }
  done
  echo "cluster: no free 10.x.y.0/24 subnet found" >&2
  return 1
}

field() { awk -v n="$2" '$1 == n { print $'"$3"' }' "$1/nodes"; }  # DIR NODE COLUMN
holder_of() { field "$1" "$2" 4; }
netns_of() { field "$1" "$2" 3; }
addr_of() { field "$1" "$2" 2; }

# Runs a command inside NODE's namespaces (network, mount, UTS) with the environment it is given.
node_exec() {  # DIR NODE CMD...
  local d=$1 node=$2 pid
  shift 2
  pid=$(holder_of "$d" "$node")
  [[ -n "$pid" ]] || { echo "cluster: no node '$node' in $d/nodes" >&2; return 2; }
  exec nsenter -t "$pid" -n -m -u --wd="$PWD" -- "$@"
}

# make_node NAME ADDRESS: a network namespace wired to the bridge, then a holder process in a new
# mount and UTS namespace (host name NAME, private /tmp and /dev/shm, the cluster's /etc/hosts)
# that keeps them alive; processes of the node are started inside it with nsenter.
make_node() {
  local name=$1 address=$2 ns="$prefix-$1" peer=
  ip netns add "$ns"
  echo "$ns" >> "$dir/netns"
  if [[ $name == login ]]; then
    ip -n "$ns" link add br0 type bridge
    ip -n "$ns" addr add "$address/24" dev br0
    # A second address on the login node for its services (the tracker): a test can take it away
    # (`ip addr del`) to make them unreachable without cutting the nodes off from each other.
    ip -n "$ns" addr add "${address%.*}.2/24" dev br0
    ip -n "$ns" link set br0 up
  else
    peer="v${prefix#nmtc}-$name"  # its end on the bridge, in the login namespace
    ip link add "$peer" type veth peer name eth0 netns "$ns"
    ip link set "$peer" netns "$prefix-login"
    ip -n "$prefix-login" link set "$peer" master br0 up
    ip -n "$ns" addr add "$address/24" dev eth0
    ip -n "$ns" link set eth0 up
  fi
  ip -n "$ns" link set lo up
  # nsenter, not `ip netns exec`: the latter remounts /sys, which hides the cgroup file system
  # slurmd needs.
  # A folder of the shared file system that lies under /tmp or /dev/shm (a checkout there) is held
  # open across the node's own tmpfs mount, then bound back at its path: the node sees it as every
  # node does, and the rest of its /tmp and /dev/shm stays its own.
  nsenter --net="/run/netns/$ns" unshare --mount --uts --propagation private bash -c '
    set -e
    name=$1 hosts=$2
    shift 2
    private() {  # MOUNT_POINT: a private tmpfs there, with the shared folders under it kept
      local fds=() keep=() folder fd
      for folder in "${@:2}"; do
        [[ $folder == "$1"/* ]] || continue
        exec {fd}< "$folder"
        fds+=("$fd") keep+=("$folder")
      done
      mount -t tmpfs -o mode=1777 tmpfs "$1"
      local i
      for i in "${!keep[@]}"; do
        mkdir -p "${keep[$i]}"
        fd=${fds[$i]}
        mount --no-canonicalize --rbind "/proc/self/fd/$fd" "${keep[$i]}"
        exec {fd}<&-
      done
    }
    hostname "$name"
    private /tmp "$@"
    private /dev/shm "$@"
    mount --bind "$hosts" /etc/hosts
    mkdir -p /tmp/pmix
    exec -a "nmt-node-$name" sleep infinity' holder "$name" "$dir/hosts" "${shared[@]}" \
    < /dev/null >> "$dir/log/node-$name.out" 2>&1 &
  local pid=$!
  wait_for 10 "node $name did not come up" \
    bash -c "[[ \$(nsenter -t $pid -u hostname) == $name ]]"
  echo "$name $address $ns $pid ${peer:-}" >> "$dir/nodes"
}

# shared: the folders every node sees as this host does although they lie under /tmp or /dev/shm,
# which each node has of its own: for each of the cluster's folder, the checkout, and the folders
# of NMT_CLUSTER_SHARE (colon-separated: the build and the data, given by the CTest fixture), its
# top folder there (/tmp/a for /tmp/a/b/c), resolved through links.
shared_folders() {
  local path top
  local -A seen=()
  shared=()
  local IFS=:
  for path in "$dir" "$here/../.." ${NMT_CLUSTER_SHARE:-}; do
    [[ -n "$path" && -e "$path" ]] || continue
    path=$(realpath "$path")
    case $path/ in
      /tmp/?*/* | /dev/shm/?*/*) ;;
      *) continue ;;
    esac
    top=$(cut -d/ -f1-3 <<< "$path")
    [[ $path == /dev/shm/* ]] && top=$(cut -d/ -f1-4 <<< "$path")
    [[ -n "${seen[$top]:-}" ]] || { seen[$top]=1; shared+=("$top"); }
  done
}

write_conf() {
  local nodes=$1 cpus
  cpus=$(nproc)
  cat > "$dir/slurm.conf" <<CONF
# Written by tests/cluster/cluster.sh: a test cluster of $nodes nodes in namespaces.
ClusterName=nmtcluster
SlurmctldHost=login($subnet.1)
SlurmctldPort=6817
SlurmdPort=6818
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmdLogFile=$dir/log/slurmd-%n.log
SlurmdTimeout=10
TmpFS=/tmp
$(slurm_conf_common "$dir")
CONF
  local i
  for i in $(seq 1 "$nodes"); do
    echo "NodeName=node$i NodeAddr=$subnet.$((10 + i)) CPUs=$cpus State=UNKNOWN" >> "$dir/slurm.conf"
  done
  echo "PartitionName=test Nodes=node[1-$nodes] Default=YES MaxTime=INFINITE State=UP" \
    "OverSubscribe=NO" >> "$dir/slurm.conf"
  # PMIx's per-job client folders on each node's own /tmp (shared ones clash between nodes).
  echo "PMIxCliTmpDirBase=/tmp/pmix" > "$dir/mpi.conf"
}

start_slurmd() {  # NODE (nothing when its slurmd runs)
  local pid p
  for p in $(ip netns pids "$(netns_of "$dir" "$1")" 2> /dev/null); do
    [[ "$(cat "/proc/$p/comm" 2> /dev/null)" == slurmd ]] && return 0
  done
  pid=$(holder_of "$dir" "$1")
  nsenter -t "$pid" -n -m -u -- slurmd -D -f "$dir/slurm.conf" -N "$1" \
    >> "$dir/log/slurmd-$1.out" 2>&1 &
  echo "slurmd $! $1" >> "$dir/pids"
}

start() {
  local nodes=${1:-2}
  [[ $nodes =~ ^[1-4]$ ]] || { echo "cluster: 1 to 4 nodes, not '$nodes'" >&2; exit 2; }
  check || exit $?
  dir=$(realpath -m "$dir")
  mkdir -p "$dir"
  shared_folders
  [[ ! -s "$dir/pids" && ! -s "$dir/netns" ]] ||
    { echo "cluster: $dir has a cluster already (stop it first)" >&2; exit 1; }
  rm -rf "$dir/munge" "$dir/state" "$dir/spool" "$dir/run" "$dir/log" "$dir/env" "$dir/nodes"
  mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/run" "$dir/log"
  for i in $(seq 1 "$nodes"); do mkdir -p "$dir/spool/slurmd-node$i"; done
  chmod 700 "$dir/munge"
  : > "$dir/pids"
  : > "$dir/netns"
  : > "$dir/nodes"
  prefix=nmtc$(printf '%04x' $((RANDOM % 65536)))
  subnet=$(pick_subnet)
  {
    echo "127.0.0.1 localhost"
    echo "$subnet.1 login"
    echo "$subnet.2 tracker"
    for i in $(seq 1 "$nodes"); do echo "$subnet.$((10 + i)) node$i"; done
  } > "$dir/hosts"
  make_node login "$subnet.1"
  for i in $(seq 1 "$nodes"); do make_node "node$i" "$subnet.$((10 + i))"; done
  write_conf "$nodes"

  mungekey --create --keyfile="$dir/munge/munge.key" 2> /dev/null ||
    { dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2> /dev/null; chmod 400 "$dir/munge/munge.key"; }
  local login
  login=$(holder_of "$dir" login)
  nsenter -t "$login" -n -m -u -- munged --foreground --force \
    --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed" > "$dir/log/munged.out" 2>&1 &
  echo "munged $! login" >> "$dir/pids"
  wait_for 10 "munged did not open its socket" test -S "$dir/munge/munge.socket"

  export SLURM_CONF=$dir/slurm.conf
  nsenter -t "$login" -n -m -u -- slurmctld -D -i -f "$SLURM_CONF" > "$dir/log/slurmctld.out" 2>&1 &
  echo "slurmctld $! login" >> "$dir/pids"
  wait_for 30 "slurmctld did not answer" nsenter -t "$login" -n -m -u -- scontrol ping
  for i in $(seq 1 "$nodes"); do start_slurmd "node$i"; done
  wait_for 60 "the nodes did not come up" bash -c \
    "[[ \$(nsenter -t $login -n -m -u -- sinfo -h -N -o %t | grep -cx idle) == $nodes ]]"
  cat > "$dir/env" <<ENV
# Written by tests/cluster/cluster.sh start: the test cluster's settings.
export SLURM_CONF=$SLURM_CONF
export NMT_CLUSTER_DIR=$dir
export NMT_CLUSTER_NODES=$nodes
export NMT_CLUSTER_SUBNET=$subnet.0/24
export NMT_CLUSTER_LOGIN_ADDR=$subnet.1
export NMT_CLUSTER_TRACKER_ADDR=$subnet.2
# Open MPI and NCCL on the cluster's network only (as on a real cluster: docs/cluster.md).
export OMPI_MCA_btl_tcp_if_include=$subnet.0/24
export OMPI_MCA_oob_tcp_if_include=$subnet.0/24
export NCCL_SOCKET_IFNAME=eth0
ENV
  echo "cluster: up in $dir: login $subnet.1 and $nodes node(s) ($(nproc) CPUs each)," \
    "namespaces $prefix-*"
}

stop() {
  [[ -f "$dir/nodes" || -f "$dir/pids" ]] || { echo "cluster: nothing started in $dir"; return 0; }
  local login
  login=$(holder_of "$dir" login 2> /dev/null || true)
  if [[ -n "$login" && -f "$dir/slurm.conf" ]] && kill -0 "$login" 2> /dev/null; then
    # Jobs first, so no task outlives its slurmd.
    local ctl=(nsenter -t "$login" -n -m -u -- env SLURM_CONF="$dir/slurm.conf" timeout 10)
    "${ctl[@]}" scancel --full --signal=KILL --user=root 2> /dev/null || true
    "${ctl[@]}" scancel --user=root 2> /dev/null || true
    for _ in $(seq 1 50); do
      [[ -z "$("${ctl[@]}" squeue -h -t R,CG 2> /dev/null)" ]] && break
      sleep 0.1
    done
  fi
  # Everything in the cluster's namespaces is the cluster's: daemons, jobs, holders.
  local ns pid
  if [[ -f "$dir/netns" ]]; then
    for ns in $(cat "$dir/netns"); do
      for pid in $(ip netns pids "$ns" 2> /dev/null); do kill -TERM "$pid" 2> /dev/null || true; done
    done
    for _ in $(seq 1 50); do
      local left=0
      for ns in $(cat "$dir/netns"); do [[ -n "$(ip netns pids "$ns" 2> /dev/null)" ]] && left=1; done
      ((left)) || break
      sleep 0.1
    done
    for ns in $(cat "$dir/netns"); do
      for pid in $(ip netns pids "$ns" 2> /dev/null); do kill -KILL "$pid" 2> /dev/null || true; done
    done
    for ns in $(tac "$dir/netns"); do ip netns del "$ns" 2> /dev/null || true; done
  fi
  rm -f "$dir/pids" "$dir/env" "$dir/netns"
  echo "cluster: stopped ($dir)"
}

# Every process of NODE but its namespace holder: a node crash, as its peers see it (sockets
# closed by the kernel, slurmd gone); the namespaces stay for restart-slurmd.
crash() {  # NODE
  local ns holder pid
  ns=$(netns_of "$dir" "$1")
  holder=$(holder_of "$dir" "$1")
  [[ -n "$ns" ]] || { echo "cluster: no node '$1'" >&2; exit 2; }
  for pid in $(ip netns pids "$ns"); do
    [[ $pid == "$holder" ]] || kill -KILL "$pid" 2> /dev/null || true
  done
}

case "${1:-}" in
  check) check ;;
  start) dir=${2:?usage: cluster.sh start DIR [NODES]}; start "${3:-2}" ;;
  stop) dir=${2:?usage: cluster.sh stop DIR}; stop ;;
  setup)
    dir=${2:?usage: cluster.sh setup DIR [NODES]}
    reason=$(check) || { echo "$reason"; exit 0; }
    stop
    start "${3:-2}"
    ;;
  exec) node_exec "${2:?usage: cluster.sh exec DIR NODE CMD...}" "${3:?node}" "${@:4}" ;;
  crash) dir=${2:?usage: cluster.sh crash DIR NODE}; crash "${3:?node}" ;;
  restart-slurmd) dir=${2:?usage: cluster.sh restart-slurmd DIR NODE}; start_slurmd "${3:?node}" ;;
  *) sed -n '2,19p' "$0"; exit 2 ;;
esac
