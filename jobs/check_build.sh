#!/usr/bin/env bash
# Checks, before a launcher starts any rank, that a build can run the requested device. Never
# builds: the job scripts run what jobs/build.sh (or a cluster's own build) made.
#   jobs/check_build.sh CALLER BUILD_DIR [DEVICE]
# CALLER names the script in the messages. Fails (exit 1, naming NMT_BUILD_DIR) when
# BUILD_DIR/apps has no nmt-train; for a DEVICE other than cpu, also when it has no nmt-sysinfo,
# when nmt-sysinfo does not run on this host (a library it cannot find), or when DEVICE is cuda or
# cuda:N and the build's LibTorch has no CUDA (auto then only warns: it trains on the CPU).
# CUDA support is read from nmt-sysinfo (the LibTorch the binaries are linked against answers
# `cuda.built`), so it holds for any build, the pinned line's or a cluster's own; no GPU is needed.
set -euo pipefail
(($# >= 2)) || { sed -n '2,10p' "$0" >&2; exit 2; }
caller=$1 build=$2 device=${3:-}
bin=$build/apps
missing() {
  echo "$caller: no $1 in $bin: set NMT_BUILD_DIR to the build folder holding apps/nmt-train" \
    "(jobs/build.sh --libtorch current makes build-current/; job scripts never build)" >&2
  exit 1
}
[[ -x "$bin/nmt-train" ]] || missing nmt-train
[[ -z "$device" || "$device" == cpu ]] && exit 0
[[ -x "$bin/nmt-sysinfo" ]] || missing nmt-sysinfo
if ! info=$("$bin/nmt-sysinfo" --json --matmul-size 0 --device cpu --log-level error 2>&1); then
  echo "$caller: $bin/nmt-sysinfo does not run on $(hostname): ${info:0:600}" >&2
  echo "$caller: set NMT_BUILD_DIR to a build made for this host (or load the modules it was" \
    "built with)" >&2
  exit 1
fi
# nlohmann::json writes the keys in order: "built" is the first line of the "cuda" object.
if grep -A1 '"cuda": {' <<< "$info" | grep -q '"built": true'; then
  exit 0
fi
case $device in
  cuda | cuda:*)
    echo "$caller: NMT_DEVICE=$device but the build in $build has no CUDA (its LibTorch is a" \
      "CPU build): set NMT_BUILD_DIR to a build against a CUDA LibTorch (jobs/build.sh" \
      "--libtorch current, or jobs/build.sh -DCMAKE_PREFIX_PATH=<CUDA libtorch>), or set" \
      "NMT_DEVICE=cpu" >&2
    exit 1
    ;;
  *) echo "$caller: NMT_DEVICE=$device with the CPU-only build in $build: training runs on the CPU" >&2 ;;
esac
