# Sourced by the Slurm test libraries (tests/slurm/slurm_test_lib.sh, tests/cluster/
# cluster_test_lib.sh): a job's fields and states, a run's progress, parameters compared. They run
# Slurm's client commands through `slurm CMD...`, which each library defines (on this host, or on
# the test cluster's login node), and fail through its `fail`.
# The waits are bounded by progress, not by the clock: their SECONDS is the longest they wait while
# nothing moves, so a loaded machine makes them longer, never failed.

job_field() {  # JOB FIELD: one field of `scontrol show job`
  slurm scontrol show job -o "$1" 2> /dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1
}

# What counts as progress: a file under the test's work folder ($work, which both libraries set)
# that appears, grows or is written, and a change in the output of progress_probe, a command a
# caller may set (as a local array) for what else it watches. Prints one line for the files, then
# the probe's output.
progress_probe=()
progress_fingerprint() {
  { find "${work:?}" -type f -printf '%p %s %T@\n' 2> /dev/null || true; } | cksum
  ((${#progress_probe[@]} == 0)) || "${progress_probe[@]}" || true
}

# wait_progressing SECONDS DESCRIPTION COMMAND...: runs COMMAND every 0.2 s until it succeeds;
# fails, naming DESCRIPTION, once SECONDS have passed without progress (progress_fingerprint, read
# about once a second). COMMAND runs in this shell, so it may fail the test itself.
wait_progressing() {
  local quiet_limit=$1 what=$2 started=$SECONDS checked=$SECONDS quiet_since=$SECONDS seen now
  local last=''
  shift 2
  seen=$(progress_fingerprint)
  until "$@"; do
    if ((SECONDS > checked)); then
      checked=$SECONDS
      now=$(progress_fingerprint)
      if [[ "$now" != "$seen" ]]; then
        seen=$now quiet_since=$SECONDS
      elif ((SECONDS - quiet_since > quiet_limit)); then
        ((${#progress_probe[@]} == 0)) || last="; last seen: ${now#*$'\n'}"
        fail "$what: no progress for $quiet_limit s ($((SECONDS - started)) s in all)$last"
      fi
    fi
    sleep 0.2
  done
}

# job_progress JOB: the job's state and restart count, which wait_job_state watches for progress.
job_progress() {
  slurm scontrol show job -o "$1" 2> /dev/null | tr ' ' '\n' | grep -E '^(JobState|Restarts)=' |
    paste -sd ' '
}

# job_in_state JOB STATE: true once the job is in STATE; fails the test when it ended in another.
job_in_state() {
  local state
  state=$(job_field "$1" JobState) || true
  [[ "$state" == "$2" ]] && return 0
  case $state in FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE)
    fail "job $1 is $state, expected $2" ;;
  esac
  return 1
}

# wait_job_state JOB STATE SECONDS: until the job is in STATE. Progress is the work folder's, or a
# change of the job's state or restart count.
wait_job_state() {
  local progress_probe=(job_progress "$1")
  wait_progressing "$3" "job $1 did not become $2" job_in_state "$1" "$2"
}

# step_reached RUN_DIR STEP: metrics.jsonl has a step >= STEP.
step_reached() {
  [[ -f "$1/metrics.jsonl" ]] &&
    awk -v s="$2" -F'"step": ' 'NF > 1 && $2 + 0 >= s { found = 1 } END { exit !found }' \
      "$1/metrics.jsonl"
}

wait_step() {  # RUN_DIR STEP SECONDS: until metrics.jsonl has a step >= STEP
  wait_progressing "$3" "$1 did not reach step $2" step_reached "$1" "$2"
}

# compare_params A.h5 B.h5 TOLERANCE: every model parameter equal (0: bit for bit).
compare_params() { "$python" "$(dirname "${BASH_SOURCE[0]}")/../slurm/compare_params.py" "$@"; }
