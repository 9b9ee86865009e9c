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
#                           (~2.6 GB instead of ~0.73 GB; for a machine without the CUDA
#                           toolkit, or with one without cuDNN or NCCL, or an older one; these
#                           dependencies are not hash-pinned), and the CUDA compiler with the
#                           headers (jobs/cuda-compiler-pypi.txt, hash-pinned): PREFIX/nvidia/cu13
#                           is then a CUDA toolkit folder (bin/nvcc, include, lib) that
#                           jobs/build.sh configures against, so nothing of CUDA is needed on
#                           the machine
# Progress and timings go to stderr; stdout is the prefix alone.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pins=$root/jobs/libtorch-current.txt
compiler_pins=$root/jobs/cuda-compiler-pypi.txt
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
pinned_files=("$pins")
[[ "$cuda_libs" == wheel ]] && pinned_files+=("$compiler_pins")
stamp_value="$(cat "${pinned_files[@]}" | grep -v -e '^#' -e '^[[:space:]]*$' | sha256sum |
  cut -c1-16)-$cuda_libs"
# Wheel mode's layout has a version of its own: a change to what it lays out refetches too.
[[ "$cuda_libs" == wheel ]] && stamp_value+=-layout2
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
  "$python" -m pip download --quiet --no-deps --require-hashes -r "$compiler_pins" \
    "${wheel_tags[@]}" -d "$work/wheels" >&2
fi
downloaded=$(du -sm "$work/wheels" | cut -f1)
fetched=$(date +%s)
say "downloaded ${downloaded} MB in $((fetched - start)) s"

# Only what a C++ build links and loads: torch's headers, libraries and CMake files, and the
# NVIDIA libraries (no Python modules, no Triton); in wheel mode also the NVIDIA wheels' compiler,
# headers and NVVM, which make nvidia/cu13 a toolkit folder.
"$python" - "$work/wheels" "$work/tree" "$cuda_libs" <<'PY'
import os, pathlib, stat, sys, zipfile
wheels, tree, mode = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
keep_torch = ("torch/lib/", "torch/include/", "torch/share/")
keep_nvidia = ("lib", "include", "bin", "nvvm") if mode == "wheel" else ("lib",)
for wheel in sorted(wheels.glob("*.whl")):
    name = wheel.name.lower()
    if not (name.startswith("torch-") or name.startswith("nvidia_")):
        continue
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            member = info.filename
            parts = member.split("/")
            wanted = member.startswith(keep_torch) if name.startswith("torch-") else (
                parts[0] == "nvidia" and len(parts) > 3 and parts[2] in keep_nvidia)
            if wanted and not member.endswith("/"):
                archive.extract(info, tree)
                # zipfile drops the mode bits: the compiler's programs stay executable, by all.
                if (info.external_attr >> 16) & stat.S_IXUSR:
                    os.chmod(tree / member, 0o755)
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
# Wheel mode: the toolkit folders' libraries under their unversioned names too (libcudart.so, as a
# toolkit has them), which CMake's CUDA and cuDNN searches and the linker look for, and lib64 beside
# lib, where nvcc links its own (libcudadevrt.a, libcudart_static.a) from.
if [[ "$cuda_libs" == wheel ]]; then
  for lib in "$work"/tree/nvidia/*/lib/lib*.so.*; do
    unversioned=${lib%%.so.*}.so
    [[ -e "$unversioned" ]] || ln -s "$(basename "$lib")" "$unversioned"
  done
  ln -s lib "$work/tree/nvidia/cu13/lib64"
fi
echo "$stamp_value" >"$work/tree/.complete"
rm -rf "$prefix"
mv "$work/tree" "$prefix"
say "extracted $(du -sm "$prefix" | cut -f1) MB in $(($(date +%s) - fetched)) s: $prefix"
echo "$prefix"
