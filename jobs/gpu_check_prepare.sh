# shellcheck shell=bash disable=SC2154  # globals of jobs/gpu-check.sh
# Sourced by jobs/gpu-check.sh --prepare: builds against the current LibTorch line and assembles
# .gpu-carry/, the one ignored folder a GPU machine without network or package manager gets:
#   bin/       the tools, benchmarks and CUDA test binaries, stripped
#   lib/       the CUDA module the decoding tools load on demand, every shared library they (and
#              the Open MPI components) need, except what the GPU
#              machine's torch wheel provides and glibc (see wheel_provided and system_provided)
#   openmpi/   Open MPI's components, help texts and parameter file, for a relocated singleton
#   data/      Multi30k preprocessed as jobs/quickstart.sh does it, and test_2016_flickr's raw text
#   manifest.json, MANIFEST.txt   what is in it, sizes, LibTorch version, the glibc it needs
# Uses the caller's globals: root, carry.

readonly carry_limit_bytes=$((64 * 1024 * 1024))
readonly carry_binaries=(apps/nmt-train apps/nmt-translate apps/nmt-evaluate apps/nmt-sysinfo
  bench/train_throughput_bench bench/matmul_peak_bench bench/beam_cache_bench
  tests/runtime_test tests/trainer_test tests/decode_test tests/dist_training_test)

# SONAMEs the GPU machine has without the carry. The torch wheel: LibTorch itself (torch/lib:
# libtorch*, libc10*, libshm, libcaffe2_nvrtc, its libgomp) and the CUDA libraries of its
# nvidia-* dependencies (nvidia/*/lib: cudart, cuBLAS, cuDNN, cuFFT, cuFile, cuRAND, cuSOLVER,
# cuSPARSE(Lt), CUPTI, NCCL, nvJitLink, NVRTC, NVSHMEM, NVTX); the driver's libcuda. Here they
# resolve to the fetched LibTorch and the CUDA toolkit; there, to python3's torch install.
wheel_provided() {
  [[ "$1" =~ ^(libtorch.*|libc10.*|libshm\.so|libcaffe2_nvrtc\.so|libgomp\.so\.1|libcuda\.so.*|libcudart\.so.*|libcublas(Lt)?\.so.*|libcudnn.*|libcufft.*|libcufile.*|libcurand\.so.*|libcusolver.*|libcusparse.*|libcupti\.so.*|libnccl\.so.*|libnvJitLink\.so.*|libnvrtc.*|libnvshmem.*|libnvToolsExt\.so.*|libnvidia-.*)$ ]]
}

# glibc's own libraries, which every Linux has and which must match the machine's loader: never
# carried. libstdc++ and libgcc_s are carried (2.7 MB): the GPU machine's OS is unknown, and an
# older libstdc++ than Debian bookworm's would lack symbols the binaries use.
system_provided() {
  [[ "$1" =~ ^(linux-vdso\.so\.1|ld-linux-x86-64\.so\.2|libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|libutil\.so\.1|libresolv\.so\.2|libanl\.so\.1)$ ]]
}

# Open MPI components for network fabrics (UCX, libfabric, PSM, verbs) or OpenSHMEM: not needed for
# one process on one node, and they would bring in large fabric libraries.
fabric_component() {
  [[ "$(ldd "$1")" =~ libuc[pstm]\.|libfabric|libpsm|libinfinipath|libibverbs|librdmacm|libefa|libnl-|libmunge|liboshmem ]]
}

prepare_carry() {
  local build=$1 t0=$SECONDS
  local prefix
  prefix=$("$root/jobs/fetch_libtorch.sh")
  configure_gpucheck_build "$build" "$prefix"
  echo "gpu-check: building ${#carry_binaries[@]} targets and nmt-preprocess in $build"
  local targets=() b
  for b in "${carry_binaries[@]}"; do targets+=("$(basename "$b")"); done
  cmake --build "$build" --parallel "${NMT_BUILD_JOBS:-$(nproc)}" --target "${targets[@]}" nmt-preprocess \
    nmt_cuda_runtime

  local stage=$carry.tmp
  rm -rf "$stage"
  mkdir -p "$stage"/{bin,lib,data} "$stage"/openmpi/{lib/openmpi3,share,etc,hwloc-plugins}
  for b in "${carry_binaries[@]}"; do strip -o "$stage/bin/$(basename "$b")" "$build/$b"; done
  # The CUDA module nmt-translate and nmt-evaluate load on demand (trainer/runtime/cuda_loader.h),
  # found there by its name on LD_LIBRARY_PATH.
  strip -o "$stage/lib/libnmt_cuda_runtime.so" "$build/trainer/libnmt_cuda_runtime.so"
  carry_open_mpi "$stage"
  carry_libraries "$stage" "$prefix" "$build" "$stage"/bin/* "$stage"/lib/libnmt_cuda_runtime.so \
    "$stage"/openmpi/lib/openmpi3/*.so
  carry_data "$stage" "$build"
  rm -rf "$carry"
  mv "$stage" "$carry"
  verify_carry "$prefix"
  write_manifest "$prefix"
  echo "gpu-check: prepared $carry in $((SECONDS - t0)) s; carry it to the GPU machine and run jobs/gpu-check.sh there"
}

# Its own folder for the current line (never build-current/, where others build), without build
# run paths: the carried binaries find every library through LD_LIBRARY_PATH, here and there.
configure_gpucheck_build() {
  local build=$1 prefix=$2
  if [[ -f "$build/CMakeCache.txt" ]]; then
    grep -q '^NMT_LIBTORCH_LINE:[A-Z]*=current$' "$build/CMakeCache.txt" ||
      { echo "gpu-check: $build is not configured for the current LibTorch line" >&2; exit 1; }
    grep -qE "^CMAKE_PREFIX_PATH:[A-Z]+=$prefix/torch\$" "$build/CMakeCache.txt" && return 0
  fi
  local args=(-DNMT_LIBTORCH_LINE=current "-DCMAKE_PREFIX_PATH=$prefix/torch" -DCMAKE_SKIP_BUILD_RPATH=ON)
  if ! command -v nvcc > /dev/null 2>&1; then
    [[ -x /usr/local/cuda/bin/nvcc ]] ||
      { echo "gpu-check: the current line needs the CUDA toolkit's nvcc (not on PATH)" >&2; exit 1; }
    args+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
  fi
  local generator=()
  command -v ninja > /dev/null 2>&1 && generator=(-G Ninja)
  cmake --fresh -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "${args[@]}"
}

# ompi_info says where this Open MPI keeps its components, help texts and parameter file.
ompi_path() { ompi_info --parsable --path "$1" | sed -n "s/^path:$1://p"; }

carry_open_mpi() {
  local stage=$1 component kept=0 dropped=0
  command -v ompi_info > /dev/null || { echo "gpu-check: ompi_info not found (openmpi-bin)" >&2; exit 1; }
  for component in "$(ompi_path pkglibdir)"/*.so; do
    if fabric_component "$component"; then
      dropped=$((dropped + 1))
    else
      cp "$component" "$stage/openmpi/lib/openmpi3/"
      kept=$((kept + 1))
    fi
  done
  cp -r "$(ompi_path pkgdatadir)" "$stage/openmpi/share/openmpi"
  cp "$(ompi_path sysconfdir)/openmpi-mca-params.conf" "$stage/openmpi/etc/"
  echo "hwloc looks for plugins here and finds none: its built-in discovery suffices" \
    > "$stage/openmpi/hwloc-plugins/README"
  echo "gpu-check: Open MPI: $kept components carried, $dropped fabric components left out"
}

# Every library the given ELF files need per ldd, under its SONAME, minus wheel_provided and
# system_provided; ldd lists dependencies of dependencies too. The project's own shared libraries
# (e.g. preprocess/libnmt_sentencepiece.so) are found in the build folder, which has no run paths.
carry_libraries() {
  local stage=$1 prefix=$2 build=$3
  shift 3
  local dirs=$prefix/torch/lib dir name path line
  for dir in "$prefix"/nvidia/*/lib; do dirs+=:$dir; done
  while read -r dir; do dirs+=:$dir; done < <(
    find "$build" -path "$build/CMakeFiles" -prune -o -name 'lib*.so*' -printf '%h\n' | sort -u)
  # All of ldd's answers first, before anything is copied into the folder it searches.
  local deps
  deps=$(for line in "$@"; do
    LD_LIBRARY_PATH=$stage/lib:$dirs ldd "$line" | awk '$2 == "=>" { print $1, $3 }'
  done)
  declare -A seen=()
  local missing=()
  while read -r name path; do
    [[ -n "${seen[$name]:-}" ]] && continue
    seen[$name]=1
    if [[ "$path" == "not" ]]; then missing+=("$name"); continue; fi
    wheel_provided "$name" || system_provided "$name" || [[ "$path" == "$prefix"/* ]] && continue
    cp -L "$path" "$stage/lib/$name"
  done <<< "$deps"
  if ((${#missing[@]} > 0)); then
    echo "gpu-check: libraries not found here: ${missing[*]}" >&2
    exit 1
  fi
  echo "gpu-check: $(find "$stage/lib" -type f | wc -l) shared libraries carried"
}

carry_data() {
  local stage=$1 build=$2
  local data
  data=$(realpath -m "${NMT_DATA_DIR:-$root/../shared/data/multi30k}")
  local split lang
  for split in train val test_2016_flickr; do
    for lang in en de; do
      [[ -f "$data/$split.$lang.gz" ]] ||
        { echo "gpu-check: missing $data/$split.$lang.gz (set NMT_DATA_DIR)" >&2; exit 1; }
    done
  done
  echo "gpu-check: preprocessing Multi30k (joint BPE 8000, as jobs/quickstart.sh does)"
  "$build/apps/nmt-preprocess" --config "$root/configs/preprocess/multi30k.yaml" \
    --out "$stage/data/multi30k-bpe8000" --vocab-size 8000 --log-level warn \
    --train "$data/train.en.gz" "$data/train.de.gz" --valid "$data/val.en.gz" "$data/val.de.gz" \
    --test "$data/test_2016_flickr.en.gz" "$data/test_2016_flickr.de.gz" > /dev/null
  mkdir -p "$stage/data/multi30k"
  cp "$data"/test_2016_flickr.{en,de}.gz "$stage/data/multi30k/"
}

# Here, as there: with only the carry and LibTorch on LD_LIBRARY_PATH, every carried file resolves;
# (under strace) an MPI singleton and nmt-sysinfo load nothing of this machine's Open MPI, run no
# orted, and load no library outside the carry except LibTorch's, CUDA's and glibc's; and the
# carried programs pass every step of the check on the CPU.
verify_carry() {
  local prefix=$1 dir
  local dirs=$carry/lib:$prefix/torch/lib
  for dir in "$prefix"/nvidia/*/lib; do dirs+=:$dir; done
  (
    export LD_LIBRARY_PATH=$dirs
    use_carry_mpi "$carry"
    check_libraries "$carry"/bin/* "$carry"/lib/* "$carry"/openmpi/lib/openmpi3/*.so
    "$carry/bin/nmt-sysinfo" --json --device cpu --matmul-size 64 > /dev/null
    if ! command -v strace > /dev/null; then
      echo "gpu-check: strace not found: the Open MPI relocation was not traced" >&2
      exit 0
    fi
    local trace
    trace=$(mktemp)
    strace -f -qq -e trace=openat,execve -o "$trace" \
      "$carry/bin/dist_training_test" --gtest_filter=-* > /dev/null
    strace -f -qq -e trace=openat,execve -o "$trace.2" \
      "$carry/bin/nmt-sysinfo" --json --device cpu --matmul-size 64 > /dev/null
    cat "$trace.2" >> "$trace"
    check_trace "$trace" "$prefix"
    rm -f "$trace" "$trace.2"
    # Every step of the GPU check, at tiny sizes on the CPU, with the carried binaries and
    # libraries: what a build from half-edited sources or a stale object would fail.
    local smoke
    smoke=$(mktemp -d)
    echo "gpu-check: every step with the carry's binaries on the CPU (log: $smoke/gpu-check.log)"
    "$root/jobs/gpu-check.sh" --cpu-smoke --build-dir "$carry" --out "$smoke" > /dev/null ||
      { echo "gpu-check: the carry fails its CPU smoke run: see $smoke/summary.json" >&2; exit 1; }
    rm -rf "$smoke"
  )
}

check_trace() {
  local trace=$1 prefix=$2 bad=() path
  local mpi_dirs=("$(ompi_path libdir)" "$(ompi_path pkglibdir)" "$(ompi_path pkgdatadir)"
    "$(ompi_path sysconfdir)")
  while read -r path; do
    [[ "$path" == "$carry"/* || "$path" == "$prefix"/* ]] && continue
    local d hit=
    for d in "${mpi_dirs[@]}"; do [[ "$path" == "$d"/* ]] && hit=1; done
    local name=${path##*/}
    if [[ -n "$hit" ]] ||
      { [[ "$name" =~ \.so(\.[0-9]+)*$ ]] && ! wheel_provided "$name" && ! system_provided "$name"; }; then
      bad+=("opened $path")
    fi
  done < <(grep 'openat(' "$trace" | grep -v -e ' = -1 ' -e '<unfinished' | sed -n 's/.*openat([^"]*"\([^"]*\)".*/\1/p' | sort -u)
  while read -r path; do
    [[ "$path" == "$carry"/bin/* ]] || bad+=("started $path")
  done < <(grep 'execve(' "$trace" | grep -v ' = -1 ' | sed -n 's/.*execve("\([^"]*\)".*/\1/p' | sort -u)
  if ((${#bad[@]} > 0)); then
    echo "gpu-check: the carry is not self-contained; traced:" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "gpu-check: traced an MPI singleton and nmt-sysinfo: only the carry, LibTorch, CUDA and glibc loaded; no orted"
}

write_manifest() {
  local prefix=$1
  local version glibc commit
  version=$(torch_version "$prefix/torch")
  [[ -n "$version" ]] || { echo "gpu-check: no LibTorch version found in $prefix/torch" >&2; exit 1; }
  glibc=$(find "$carry" -type f \( -name '*.so*' -o -path '*/bin/*' \) -exec objdump -T {} + 2>/dev/null |
    grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
  commit=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
  git -C "$root" diff --quiet HEAD 2>/dev/null || commit+="+uncommitted"
  local listing
  listing=$(cd "$carry" && find . -type f -printf '%s %P\n' | sort -k2)
  printf '%s\n' "$listing" > "$carry/MANIFEST.txt"
  python3 - "$carry" "$version" "$glibc" "$commit" "$carry_limit_bytes" <<'PY'
import json, os, sys, time
carry, version, glibc, commit, limit = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
files, groups = {}, {}
with open(os.path.join(carry, "MANIFEST.txt")) as f:
    for line in f:
        size, path = line.rstrip("\n").split(" ", 1)
        files[path] = int(size)
        group = path.split("/")[0] if "/" in path else "."
        groups[group] = groups.get(group, 0) + int(size)
total = sum(files.values())
manifest = {"created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "git_commit": commit,
            "libtorch_version": version, "glibc_required": glibc, "total_bytes": total,
            "limit_bytes": limit, "groups": groups, "files": files}
with open(os.path.join(carry, "manifest.json"), "w") as f:
    json.dump(manifest, f, indent=1)
for group, size in sorted(groups.items()):
    print("gpu-check: %-8s %7.2f MiB" % (group, size / 2**20))
print("gpu-check: total    %7.2f MiB of %d MiB allowed (LibTorch %s, glibc %s or newer)"
      % (total / 2**20, limit // 2**20, version, glibc))
if total > limit:
    sys.exit("gpu-check: the carry is over the limit: %d bytes > %d" % (total, limit))
PY
}
