#!/usr/bin/env bash
# Open MPI's launch agent for the test cluster (tests/cluster/cluster.sh), in ssh's place:
#   mpirun --mca plm_rsh_agent tests/cluster/launch_agent.sh --hostfile HOSTS ...
# mpirun calls it as `AGENT HOST COMMAND...` to start its daemon (orted) on HOST; as ssh would,
# it runs COMMAND through a shell on that node: inside the node's namespaces (network, mount, UTS),
# found in $NMT_CLUSTER_DIR/nodes by node name or address.
set -euo pipefail
dir=${NMT_CLUSTER_DIR:?launch_agent.sh: NMT_CLUSTER_DIR is not set (source the cluster env file)}
# ssh's options that Open MPI may pass before the host name carry nothing for a namespace.
while [[ $# -gt 0 && $1 == -* ]]; do shift; done
host=${1:?usage: launch_agent.sh HOST COMMAND...}
shift
holder=$(awk -v h="$host" '$1 == h || $2 == h { print $4 }' "$dir/nodes")
[[ -n "$holder" ]] || { echo "launch_agent.sh: no node '$host' in $dir/nodes" >&2; exit 255; }
exec nsenter -t "$holder" -n -m -u --wd=/ -- /bin/sh -c "$*"
