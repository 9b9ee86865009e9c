#!/usr/bin/env bash
# Fetches the current LibTorch line (pinned in jobs/libtorch-current.txt) into an ignored cache and
# prints its prefix (the folder holding torch/ and nvidia/, laid out as in site-packages, so the
# wheel's own run paths, $ORIGIN/../../nvidia/..., find the CUDA libraries fetched beside it).
# Idempotent: a complete cache for the same pin is reused at once.
#
# Environment (all optional):
#   NMT_LIBTORCH_CACHE      cache folder (default .cache/libtorch in the checkout)
#   NMT_LIBTORCH_CUDA_LIBS  toolkit (default): the CUDA libraries come from the machine's CUDA 13.0
#                           toolkit (with cuDNN and NCCL, as on this project's machines), and only
#                           those it lacks (cuSPARSELt, NVSHMEM, cuFile) from PyPI; checked after
#                           the fetch. wheel: every CUDA library from the wheel's dependencies
#                           (~2.6 GB instead of ~0.73 GB; for a toolkit without cuDNN or NCCL, or
#                           an older one; nvcc is still needed to configure; these dependencies
#                           are not hash-pinned)
# Progress and timings go to stderr; stdout is the prefix alone.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pins=$root/jobs/libtorch-current.txt
cache=$(realpath -m "${NMT_LIBTORCH_CACHE:-$root/.cache/libtorch}")
cuda_libs=${NMT_LIBTORCH_CUDA_LIBS:-toolkit}
say() { echo "fetch_libtorch: $*" >&2; }

torch_pin=$(sed -n 's/^torch==\([^ ]*\).*/\1/p' "$pins")
[[ -n "$torch_pin" ]] || { say "no torch==VERSION line in $pins"; exit 1; }
case "$cuda_libs" in
  toolkit | wheel) ;;
  *) say "NMT_LIBTORCH_CUDA_LIBS must be toolkit or wheel, not '$cuda_libs'"; exit 1 ;;
esac
# The stamp names the exact pins (not the comments), so changing a pin refetches.
stamp_value="$(grep -v -e '^#' -e '^[[:space:]]*$' "$pins" | sha256sum | cut -c1-16)-$cuda_libs"
prefix=$cache/$torch_pin-$cuda_libs
if [[ -f "$prefix/.complete" && "$(cat "$prefix/.complete")" == "$stamp_value" ]]; then
  echo "$prefix"
  exit 0
fi

python=
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -m pip --version >/dev/null 2>&1; then python=$candidate; break; fi
done
[[ -n "$python" ]] || { say "needs pip (apt-get install python3-pip, or run jobs/setup.sh)"; exit 1; }

mkdir -p "$cache"
work=$(mktemp -d "$cache/.fetch-XXXXXX")
trap 'rm -rf "$work"' EXIT
# The wheels are the same C++ distribution for every Python; ask for one tag so that the hashes
# pinned above match whatever interpreter runs pip.
# pip does not widen an explicit --platform to older manylinux tags: list those the wheels use.
wheel_tags=(--only-binary=:all: --python-version 3.11 --implementation cp --abi cp311)
for platform in manylinux_2_28 manylinux_2_27 manylinux_2_25 manylinux_2_24 manylinux_2_18 \
  manylinux_2_17 manylinux2014 manylinux2010 manylinux_2_12 manylinux1 manylinux_2_5; do
  wheel_tags+=(--platform "${platform}_x86_64")
done
start=$(date +%s)
say "downloading torch $torch_pin ($cuda_libs CUDA libraries) into $work"
if [[ "$cuda_libs" == toolkit ]]; then
  "$python" -m pip download --quiet --no-deps --require-hashes -r "$pins" "${wheel_tags[@]}" \
    -d "$work/wheels" >&2
else
  "$python" -m pip download --quiet "torch==$torch_pin" "${wheel_tags[@]}" -d "$work/wheels" >&2
fi
downloaded=$(du -sm "$work/wheels" | cut -f1)
fetched=$(date +%s)
say "downloaded ${downloaded} MB in $((fetched - start)) s"

# Only what a C++ build links and loads: torch's headers, libraries and CMake files, and the
# NVIDIA libraries (no Python modules, no Triton).
"$python" - "$work/wheels" "$work/tree" <<'PY'
import pathlib, sys, zipfile
wheels, tree = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
keep_torch = ("torch/lib/", "torch/include/", "torch/share/")
for wheel in sorted(wheels.glob("*.whl")):
    name = wheel.name.lower()
    if not (name.startswith("torch-") or name.startswith("nvidia_")):
        continue
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            wanted = member.startswith(keep_torch) if name.startswith("torch-") else (
                member.startswith("nvidia/") and "/lib/" in member)
            if wanted and not member.endswith("/"):
                archive.extract(member, tree)
PY
[[ -f "$work/tree/torch/share/cmake/Torch/TorchConfig.cmake" ]] ||
  { say "the torch wheel held no share/cmake/Torch/TorchConfig.cmake"; exit 1; }
# Toolkit mode: every library LibTorch's CUDA part needs is either fetched here or known to the
# dynamic linker (ldconfig); otherwise the build would fail at link time, less helpfully.
if [[ "$cuda_libs" == toolkit ]]; then
  missing=()
  known=$(/sbin/ldconfig -p)
  for lib in "$work/tree/torch/lib/libtorch_cuda.so" "$work/tree/torch/lib/libc10_cuda.so"; do
    for needed in $(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
      [[ -e "$work/tree/torch/lib/$needed" ]] && continue
      compgen -G "$work/tree/nvidia/*/lib/$needed" >/dev/null && continue
      grep -qF "$needed " <<<"$known" || missing+=("$needed")
    done
  done
  if ((${#missing[@]} > 0)); then
    say "the system has no ${missing[*]} (the CUDA 13.0 toolkit with cuDNN and NCCL is expected);"
    say "install them, or fetch every CUDA library from PyPI: NMT_LIBTORCH_CUDA_LIBS=wheel $0"
    exit 1
  fi
fi
echo "$stamp_value" >"$work/tree/.complete"
rm -rf "$prefix"
mv "$work/tree" "$prefix"
say "extracted $(du -sm "$prefix" | cut -f1) MB in $(($(date +%s) - fetched)) s: $prefix"
echo "$prefix"
