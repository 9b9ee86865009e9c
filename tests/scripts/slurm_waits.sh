# Sourced by the Slurm test libraries (tests/slurm/slurm_test_lib.sh, tests/cluster/
# cluster_test_lib.sh): a job's fields and states, a run's progress, parameters compared. They run
# Slurm's client commands through `slurm CMD...`, which each library defines (on this host, or on
# the test cluster's login node), and fail through its `fail`.

job_field() {  # JOB FIELD: one field of `scontrol show job`
  slurm scontrol show job -o "$1" 2> /dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1
}

wait_job_state() {  # JOB STATE SECONDS
  local state=''
  for _ in $(seq 1 $(($3 * 5))); do
    state=$(job_field "$1" JobState)
    [[ "$state" == "$2" ]] && return 0
    case $state in FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE)
      [[ "$2" == "$state" ]] || fail "job $1 is $state, expected $2" ;;
    esac
    sleep 0.2
  done
  fail "job $1 is ${state:-unknown}, not $2, after $3 s"
}

wait_step() {  # RUN_DIR STEP SECONDS: until metrics.jsonl has a step >= STEP
  for _ in $(seq 1 $(($3 * 5))); do
    if [[ -f "$1/metrics.jsonl" ]] &&
      awk -v s="$2" -F'"step": ' 'NF > 1 && $2 + 0 >= s { found = 1 } END { exit !found }' \
        "$1/metrics.jsonl"; then
      return 0
    fi
    sleep 0.2
  done
  fail "$1 did not reach step $2 within $3 s"
}

# compare_params A.h5 B.h5 TOLERANCE: every model parameter equal (0: bit for bit).
compare_params() { "$python" "$(dirname "${BASH_SOURCE[0]}")/../slurm/compare_params.py" "$@"; }
