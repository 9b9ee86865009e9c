# Sourced by the test clusters' scripts (tests/slurm/slurm_cluster.sh, one node on this host;
# tests/cluster/cluster.sh, nodes in namespaces): what their daemons share.

# wait_for SECONDS DESCRIPTION COMMAND...: until COMMAND succeeds (every 0.1 s); after SECONDS,
# says what did not happen, where the logs are ($dir/log), and fails.
wait_for() {
  local seconds=$1 what=$2
  shift 2
  for _ in $(seq 1 $((seconds * 10))); do "$@" > /dev/null 2>&1 && return 0; sleep 0.1; done
  echo "$(basename "$0"): $what within $seconds s; logs in $dir/log" >&2
  return 1
}

# slurm_conf_common DIR: the slurm.conf lines both test clusters share (their own munge socket,
# state, spool and logs under DIR; root runs everything; no accounting, so no sacct, and finished
# jobs stay visible to `scontrol show job` for an hour; requeued jobs start again after 5 s
# (cred_expire) instead of 120; tasks get 30 s between SIGTERM and SIGKILL).
slurm_conf_common() {
  cat <<CONF
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$1/munge/munge.socket,cred_expire=5
StateSaveLocation=$1/state
SlurmdSpoolDir=$1/spool/slurmd-%n
SlurmctldPidFile=$1/run/slurmctld.pid
SlurmctldLogFile=$1/log/slurmctld.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1
MpiDefault=none
ReturnToService=2
KillWait=30
JobRequeue=1
MinJobAge=3600
MaxJobCount=10000
InactiveLimit=0
FirstJobId=$((RANDOM % 900 * 1000 + 1000))
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
CONF
}
