#!/usr/bin/env bash
# Builds the project's container image with podman or docker, whichever is present
# (NMT_CONTAINER_ENGINE=podman|docker picks one), from a Debian bookworm base: debian:bookworm
# where a registry is reachable, else one made from Debian's packages (jobs/container/engine.sh).
#
# Usage: jobs/container/build.sh [--tag TAG] [--cuda pypi|nvidia] [--ccache DIR]
#          the image from source: the Dockerfile at the top of the checkout (default tag
#          nmt-transformer). --cuda: the CUDA toolkit from PyPI (default: no NVIDIA repository
#          needed) or from NVIDIA's Debian 12 repository. --ccache DIR: compile through a ccache
#          folder of the host (podman: mounted into the build step), so that a rebuild after a
#          change recompiles only what changed.
#        jobs/container/build.sh --from-build BUILD [--tag TAG]
#          a runtime image from a folder jobs/build.sh built (default tag nmt-transformer:runtime):
#          its tools, the libraries they load that no Debian package provides (LibTorch, CUDA:
#          copied), the Debian packages that provide the others (installed), jobs/ and configs/.
#          Minutes instead of a whole build; what the container test uses.
# Both images lay the project out alike: the tools in /opt/nmt/build-current/apps and the job
# scripts in /opt/nmt/jobs, both on PATH. Prints the image's name on stdout; progress on stderr.
# Exit status: 0 built; 1 failed; 2 usage; 77 no container engine can run here (the reason printed).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=jobs/container/engine.sh
source "$root/jobs/container/engine.sh"
say() { echo "container: $*" >&2; }
usage() { sed -n '2,20p' "$0" >&2; exit 2; }

tag= cuda=pypi from_build= ccache_dir=
while (($# > 0)); do
  case "$1" in
    --tag) tag=${2:?--tag needs a name}; shift ;;
    --cuda) cuda=${2:?--cuda needs pypi or nvidia}; shift ;;
    --from-build) from_build=${2:?--from-build needs a build folder}; shift ;;
    --ccache) ccache_dir=${2:?--ccache needs a folder}; shift ;;
    -h | --help) usage ;;
    *) say "unknown argument '$1'"; usage ;;
  esac
  shift
done
[[ "$cuda" == pypi || "$cuda" == nvidia ]] || { say "--cuda must be pypi or nvidia, not '$cuda'"; exit 2; }

container_ready || { say "$ENGINE_WHY"; exit 77; }
start=$(date +%s)

# The Debian package that owns a library (the name alone, without the architecture), by the path
# ldd printed or the file it leads to, with or without /usr (Debian merged /lib into /usr/lib, and
# dpkg knows each file by the path its package gave); nothing when no package owns it.
owning_package() {
  local path candidates=("$1" "$(realpath "$1")")
  for path in "${candidates[@]}"; do
    candidates+=("${path#/usr}" "/usr$path")
  done
  for path in "${candidates[@]}"; do
    dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1 && return 0
  done
  return 0
}

# place FILE TARGET: the file FILE leads to, at TARGET: a hard link where both are on one file
# system (gigabytes of libraries, not copied twice), else a copy.
place() {
  local file
  file=$(realpath "$1")
  ln -f "$file" "$2" 2>/dev/null || cp "$file" "$2"
}

# stage_runtime BUILD CONTEXT: the runtime image's files under CONTEXT/opt/nmt and the Debian
# packages it installs in CONTEXT/packages.
stage_runtime() {
  local build=$1 context=$2 tools=() lib resolved name package
  local opt=$context/opt/nmt
  mkdir -p "$opt/build-current/apps" "$opt/lib"
  mapfile -t tools < <(find "$build/apps" -maxdepth 1 -name 'nmt-*' -type f -executable | sort)
  ((${#tools[@]} > 0)) || { say "no nmt-* tools in $build/apps: build it first (jobs/build.sh)"; return 1; }
  cp "${tools[@]}" "$opt/build-current/apps/"
  # The modules the tools open at run time (SentencePiece's shim; the CUDA half, when a GPU is
  # there: trainer/runtime/cuda_loader.h): in the image they are found by name, through the library
  # path.
  local modules=()
  # They lie one folder down (preprocess/, trainer/); deeper ones belong to other builds inside
  # this one (the non-root test's).
  mapfile -t modules < <(find "$build" -mindepth 2 -maxdepth 2 -name 'libnmt_*.so' -type f)
  local loaded=("${tools[@]}" "${modules[@]}")
  declare -A packages=([openmpi-bin]=1)  # mpirun, which the job scripts start
  local copied=0
  while read -r name resolved; do
    package=$(owning_package "$resolved")
    if [[ -n "$package" ]]; then
      packages[$package]=1
      continue
    fi
    # Not from a Debian package (LibTorch's, the CUDA toolkit's): copied, with the libraries of
    # the same family beside it, which it opens at run time (cuDNN's engines, NVRTC's builtins).
    local dir stem
    dir=$(dirname "$(realpath "$resolved")")
    stem=${name%%.so*}
    place "$resolved" "$opt/lib/$name"
    for lib in "$dir/$stem"[-_]*.so*; do
      [[ -e "$lib" && ! -e "$opt/lib/$(basename "$lib")" ]] && place "$lib" "$opt/lib/$(basename "$lib")"
    done
    copied=$((copied + 1))
  done < <(for binary in "${loaded[@]}"; do ldd "$binary"; done |
    awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u)
  ((${#modules[@]} == 0)) || cp "${modules[@]}" "$opt/lib/"
  cp -r "$root/jobs" "$root/configs" "$opt/"
  printf '%s\n' "${!packages[@]}" | sort >"$context/packages"
  say "staged ${#tools[@]} tools, $copied libraries from outside Debian ($(du -sm "$opt/lib" |
    cut -f1) MB) and $(wc -l <"$context/packages") Debian packages"
}

build_args=(--build-arg "BASE_IMAGE=$BASE_IMAGE")
if [[ -n "$from_build" ]]; then
  [[ -d "$from_build/apps" ]] || { say "$from_build/apps: not a build folder"; exit 2; }
  tag=${tag:-nmt-transformer:runtime}
  context=$(mktemp -d "${TMPDIR:-/tmp}/nmt-image.XXXXXX")
  trap 'rm -rf "$context"' EXIT
  stage_runtime "$(realpath "$from_build")" "$context"
  cp "$root/jobs/container/Containerfile.runtime" "$context/Containerfile"
  build_args+=(--build-arg "RUNTIME_PACKAGES=$(tr '\n' ' ' <"$context/packages")")
  "${ENGINE[@]}" build "${ENGINE_LIMITS[@]}" "${build_args[@]}" -t "$tag" -f "$context/Containerfile" \
    "$context" >&2
else
  tag=${tag:-nmt-transformer}
  build_args+=(--build-arg "CUDA_SOURCE=$cuda" --build-arg "NMT_BUILD_JOBS=$(nproc)")
  volumes=()
  if [[ -n "$ccache_dir" ]]; then
    mkdir -p "$ccache_dir"
    [[ "${ENGINE[0]}" == podman ]] ||
      { say "--ccache needs podman (docker build mounts no host folder)"; exit 2; }
    volumes=(--volume "$(realpath "$ccache_dir"):/root/.cache/ccache")
  fi
  host_trust
  [[ "${ENGINE[0]}" == podman ]] && volumes+=("${ENGINE_TRUST[@]}")
  "${ENGINE[@]}" build "${ENGINE_LIMITS[@]}" "${volumes[@]+"${volumes[@]}"}" "${build_args[@]}" \
    -t "$tag" -f "$root/Dockerfile" "$root" >&2
fi
size=$("${ENGINE[@]}" image inspect --format '{{.Size}}' "$tag")
say "built $tag in $(($(date +%s) - start)) s: $((size / 1000000)) MB (${ENGINE[0]}, base $BASE_IMAGE)"
echo "$tag"
