# Sourced by jobs/container/build.sh and the container tests: the one place that knows how to run
# a container engine on this machine and where the project's images come from.
#
#   container_engine            sets ENGINE (an array: the engine and its global options) for
#                               podman or docker, whichever is present ($NMT_CONTAINER_ENGINE picks
#                               one); returns 1 with ENGINE_WHY set when neither can run a container
#   container_limits            sets ENGINE_LIMITS, the resource-limit options every `run` and
#                               `build` of ENGINE passes (see below)
#   container_ready             the three above in order: ENGINE, BASE_IMAGE and ENGINE_LIMITS set,
#                               or 1 with ENGINE_WHY set (callers skip, exit 77, naming it)
#   host_trust                  sets ENGINE_TRUST, the options that give a container (a run, or a
#                               podman build's steps) the host's CA bundle in place of its own
#   ensure_base_image           sets BASE_IMAGE to a Debian bookworm image ENGINE has: debian:bookworm
#                               if it is there or can be pulled, else one made from Debian's
#                               packages with mmdebstrap (no registry needed), tagged
#                               localhost/nmt-base:bookworm
#
# Podman: Debian's default runtime, crun, fails to start containers on machines where the caller
# may not raise its resource limits (`setrlimit RLIMIT_NOFILE: Operation not permitted`); runc, also
# Debian's, is used when it is installed. Podman gives a container limits of its own choosing (the
# open files and processes of `--ulimit host`, or its defaults), and the runtime, which may not raise
# them above its own, fails with `error setting rlimit type N: operation not permitted` where they
# exceed what the caller holds. ENGINE_LIMITS passes the first of these that starts a container
# here: `--ulimit host`; the caller's own hard limits for open files and processes, the processes
# capped at the kernel's pid_max.

container_engine() {
  ENGINE=()
  ENGINE_WHY=
  local wanted=${NMT_CONTAINER_ENGINE:-}
  local candidates=(podman docker)
  [[ -n "$wanted" ]] && candidates=("$wanted")
  local name
  for name in "${candidates[@]}"; do
    command -v "$name" >/dev/null 2>&1 || continue
    if [[ "$name" == podman ]]; then
      ENGINE=(podman)
      command -v runc >/dev/null 2>&1 && ENGINE+=(--runtime runc)
    else
      ENGINE=(docker)
    fi
    if ! "${ENGINE[@]}" info >/dev/null 2>&1; then
      ENGINE_WHY="'${ENGINE[*]} info' fails: $("${ENGINE[@]}" info 2>&1 | tail -1)"
      ENGINE=()
      continue
    fi
    return 0
  done
  [[ -n "$ENGINE_WHY" ]] || ENGINE_WHY="no container engine (podman or docker) on PATH"
  return 1
}

# container_limits IMAGE: ENGINE_LIMITS for runs and builds, probed by starting IMAGE once.
container_limits() {
  local image=$1 files processes pid_max
  ENGINE_LIMITS=()
  [[ "${ENGINE[0]}" == podman ]] || return 0
  files=$(ulimit -Hn)
  processes=$(ulimit -Hu)
  pid_max=$(cat /proc/sys/kernel/pid_max 2>/dev/null || echo "$processes")
  [[ "$processes" == unlimited ]] || ((processes <= pid_max)) || processes=$pid_max
  [[ "$processes" == unlimited ]] && processes=$pid_max
  [[ "$files" == unlimited ]] && files=1048576
  local -a tries=("--ulimit host" "--ulimit nofile=$files:$files --ulimit nproc=$processes:$processes")
  local try error
  for try in "${tries[@]}"; do
    # shellcheck disable=SC2086  # each try is a list of options
    if error=$("${ENGINE[@]}" run --rm $try "$image" true 2>&1); then
      read -r -a ENGINE_LIMITS <<<"$try"
      return 0
    fi
  done
  ENGINE_WHY="${ENGINE[*]} cannot start a container from $image: ${error##*$'\n'}"
  return 1
}

ensure_base_image() {
  BASE_IMAGE=${NMT_BASE_IMAGE:-}
  if [[ -n "$BASE_IMAGE" ]]; then
    "${ENGINE[@]}" image inspect "$BASE_IMAGE" >/dev/null 2>&1 ||
      timeout 120 "${ENGINE[@]}" pull "$BASE_IMAGE" >/dev/null 2>&1 ||
      { ENGINE_WHY="NMT_BASE_IMAGE=$BASE_IMAGE: not here and cannot be pulled"; return 1; }
    return 0
  fi
  local name
  for name in localhost/nmt-base:bookworm docker.io/library/debian:bookworm; do
    if "${ENGINE[@]}" image inspect "$name" >/dev/null 2>&1; then
      BASE_IMAGE=$name
      return 0
    fi
  done
  if timeout 60 "${ENGINE[@]}" pull docker.io/library/debian:bookworm >/dev/null 2>&1; then
    BASE_IMAGE=docker.io/library/debian:bookworm
    return 0
  fi
  command -v mmdebstrap >/dev/null 2>&1 ||
    { ENGINE_WHY="no registry reachable and no mmdebstrap (apt-get install mmdebstrap)"; return 1; }
  local tarball start
  tarball=$(mktemp --suffix=.tar)
  start=$(date +%s)
  echo "container: no registry reachable; making a Debian bookworm base with mmdebstrap" >&2
  if ! mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm "$tarball" >&2; then
    rm -f "$tarball"
    ENGINE_WHY="mmdebstrap could not make a bookworm base (needs root and a Debian mirror)"
    return 1
  fi
  "${ENGINE[@]}" import "$tarball" localhost/nmt-base:bookworm >/dev/null
  rm -f "$tarball"
  echo "container: base image localhost/nmt-base:bookworm in $(($(date +%s) - start)) s" >&2
  BASE_IMAGE=localhost/nmt-base:bookworm
}

# Where the host reaches PyPI or a mirror through a proxy that signs with a site CA, a container
# needs the same trust store: the host's bundle (pip's, else OpenSSL's, else Debian's) is bound over
# the container's, read-only and for that container only (a build does not keep it in the image).
host_trust() {
  ENGINE_TRUST=()
  local bundle
  for bundle in "${PIP_CERT:-}" "${SSL_CERT_FILE:-}" /etc/ssl/certs/ca-certificates.crt; do
    if [[ -n "$bundle" && -f "$bundle" ]]; then
      ENGINE_TRUST=(--volume "$(realpath "$bundle"):/etc/ssl/certs/ca-certificates.crt:ro")
      return 0
    fi
  done
}

container_ready() {
  container_engine && ensure_base_image && container_limits "$BASE_IMAGE"
}
