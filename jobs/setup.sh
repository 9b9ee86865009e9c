#!/usr/bin/env bash
# Installs every Debian package the project needs. Idempotent: when all are present it only
# checks and returns (well under a second). Needs root or sudo for the first install.
# NMT_SKIP_SETUP=1 skips it (clusters without apt, where modules provide the stack).
# jobs/setup.sh --libraries prints the packages that the tools' build needs besides a compiler,
# CMake and LibTorch (what a site's modules provide instead; tests/container/nonroot_build_test.sh).
set -euo pipefail

LIBRARIES=(
  libgoogle-perftools-dev   # tcmalloc for the LibTorch tools: training steps 1.2-1.9x faster than glibc malloc
  libopenmpi-dev openmpi-bin
  libhdf5-dev
  libsqlite3-dev libsqlitecpp-dev
  libfmt-dev libspdlog-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
  libboost-dev
  libicu-dev                  # Unicode categories for nmt-bleu's intl tokenizer
  libsentencepiece-dev
  zlib1g-dev libssl-dev
  libjs-dygraphs              # the dashboard's charts, built into nmt-trackerd
)
if [[ "${1:-}" == --libraries ]]; then
  printf '%s\n' "${LIBRARIES[@]}"
  exit 0
fi

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git
  "${LIBRARIES[@]}"
  libtorch-dev
  libopenblas0-pthread   # LibTorch otherwise runs on the reference BLAS, ~35x slower
  sqlite3
  libgtest-dev libgmock-dev libbenchmark-dev
  sentencepiece
  curl python3 python3-h5py   # h5py: tests read shards back as users will
  chromium chromium-driver python3-selenium   # the dashboard's tests in a real headless browser
  clang-format                # jobs/format.sh --check, run by CI
  clang-14 libclang-rt-14-dev   # libFuzzer and its sanitizer runtimes (jobs/fuzz.sh)
  locales                     # de_DE.UTF-8 (made below): output checked under a decimal-comma locale
  python3-pip                 # fetches the current LibTorch line (jobs/fetch_libtorch.sh)
  python3-venv                # the TensorBoard the export test reads its event files with
  # A one-node Slurm cluster for the tests (tests/slurm/, started in a temporary folder, never as
  # a system service); basic-plugins holds srun's PMIx plugin (mpi_pmix_v4) used by jobs/slurm/.
  slurm-wlm slurm-wlm-basic-plugins munge
  # The simulated multi-node cluster (tests/cluster/): namespaces, veth pairs, a bridge and tc's
  # tbf (iproute2), nsenter and unshare (util-linux), a throwaway CA for the tracker's TLS
  # (openssl).
  iproute2 util-linux openssl
  # The container image and its tests (jobs/container/, tests/container/): podman with Debian's
  # runc, and mmdebstrap for a base image where no registry is reachable.
  podman runc mmdebstrap
)

if [[ "${NMT_SKIP_SETUP:-0}" == "1" ]]; then
  echo "setup: skipped (NMT_SKIP_SETUP=1)"
  exit 0
fi
if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "setup: not a Debian system; install the equivalents of: ${PACKAGES[*]}" >&2
  echo "       then re-run with NMT_SKIP_SETUP=1" >&2
  exit 1
fi

SUDO=()
if [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo)
fi
can_install() { [[ $(id -u) -eq 0 || ${#SUDO[@]} -gt 0 ]]; }

# A locale with a decimal comma, for the tests that check output does not follow the process's
# locale (they skip without it). Built from the locales package's sources; seconds, once.
ensure_test_locale() {
  locale -a 2>/dev/null | grep -ix 'de_DE\.utf-\?8' >/dev/null && return 0
  if ! can_install || [[ ! -f /usr/share/i18n/locales/de_DE ]]; then
    echo "setup: no de_DE.UTF-8 locale (needs the locales package and root); its tests will skip"
    return 0
  fi
  "${SUDO[@]}" localedef -i de_DE -c -f UTF-8 de_DE.UTF-8
  echo "setup: made the de_DE.UTF-8 locale"
}

missing=()
for pkg in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "installed" ]] || missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#PACKAGES[@]} packages present"
  ensure_test_locale
  exit 0
fi

echo "setup: installing ${#missing[@]} package(s): ${missing[*]}"
if ! can_install; then
  echo "setup: need root (or sudo) to run: apt-get install ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -q
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
ensure_test_locale
echo "setup: done"
