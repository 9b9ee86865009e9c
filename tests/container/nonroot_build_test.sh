#!/usr/bin/env bash
# The build without root, as on a cluster where the user has a compiler, CMake and modules: in a
# container of a builder image that holds Debian's compilers and build tools and none of the
# project's libraries, an unprivileged user (uid 1000)
#   - fills a prefix in its home from Debian's packages of the libraries (jobs/setup.sh
#     --libraries and what they depend on), unpacked with dpkg-deb -x, never installed: the
#     stand-in for a site's modules, relocated to the prefix as a module's files would be;
#   - fetches the current LibTorch line and every CUDA piece from PyPI
#     (NMT_LIBTORCH_CUDA_LIBS=wheel jobs/fetch_libtorch.sh), nvcc included;
#   - builds with jobs/build.sh --libtorch current, the prefix given by CMAKE_PREFIX_PATH and
#     PKG_CONFIG_PATH, from the checkout mounted read-only;
#   - checks that no /usr/include or /usr/lib path is written into the build (compile and link
#     lines, CMake's cache), and runs the tools: nmt-sysinfo, nmt-preprocess, a tiny nmt-train on 2
#     MPI ranks (jobs/train_mpirun.sh, Open MPI from the prefix), nmt-translate, nmt-bleu, and
#     nmt-trackerd with nmt-tracker.
# The downloads, the fetched LibTorch and a ccache folder persist in BUILD_DIR/nonroot/ (owned by
# that user), so that a second run rebuilds from the cache.
# Usage: nonroot_build_test.sh BUILD_DIR DATA_DIR [TARGET]   TARGET: what jobs/build.sh builds
#        (NMT_BUILD_TARGET; default tools, every nmt-* executable)
# Exit status 77 (skipped, the reason printed): no container engine that can start containers, no
# base image, no apt-get download here, or no Multi30k.
set -euo pipefail
build=$(realpath "$1") data=$2 target=${3:-tools}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[[ -f "$data/val.en.gz" ]] || { echo "Multi30k not found at $data"; exit 77; }
data=$(realpath "$data")
# shellcheck source=jobs/container/engine.sh
source "$root/jobs/container/engine.sh"
container_ready || { echo "SKIPPED: $ENGINE_WHY"; exit 77; }
command -v apt-get >/dev/null && command -v apt-cache >/dev/null ||
  { echo "SKIPPED: no apt-get to download Debian's packages with"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
user_id=1000

# What a site gives every user: compilers, CMake, Ninja, pkg-config, Python with pip, ccache, and
# none of the project's libraries. Tagged by its package list, so that a change rebuilds it.
tools_packages="build-essential cmake ninja-build pkg-config python3 python3-pip ccache file"
builder=localhost/nmt-builder:$(echo "$BASE_IMAGE $tools_packages" | sha256sum | cut -c1-12)
if ! "${ENGINE[@]}" image inspect "$builder" >/dev/null 2>&1; then
  echo "== the builder image $builder"
  "${ENGINE[@]}" build "${ENGINE_LIMITS[@]}" -t "$builder" -f - "$root/jobs/container" >/dev/null <<EOF
FROM $BASE_IMAGE
RUN apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
      --no-install-recommends $tools_packages && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid $user_id builder
EOF
fi

state=$build/nonroot
mkdir -p "$state/debs" "$state/home"
work=$(mktemp -d)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT

echo "== Debian's packages of the libraries, with what they depend on, less what the image has"
"${ENGINE[@]}" run --rm "${ENGINE_LIMITS[@]}" "$builder" dpkg-query -W -f '${Package}\n' |
  sort -u >"$work/in-image"
mapfile -t libraries < <("$root/jobs/setup.sh" --libraries)
apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
  --no-replaces --no-enhances "${libraries[@]}" |
  awk '/^[a-z0-9]/ && $0 !~ /:/ {print $1}' | sort -u | comm -23 - "$work/in-image" >"$work/wanted"
# Each package once, at the version apt would install (downloads kept between runs).
(cd "$state/debs" && xargs -a "$work/wanted" apt-get download -q >/dev/null 2>"$work/download.err") ||
  { cat "$work/download.err"; fail "apt-get download"; }
echo "$(wc -l <"$work/wanted") packages, $(du -sm "$state/debs" | cut -f1) MB"
chown -R "$user_id:$user_id" "$state" "$work"

# The user's session: the checkout read-only at /src, the downloaded packages at /debs, the data
# at /data, a persistent home. Nothing runs as root inside.
cat >"$work/session.sh" <<'EOS'
set -euo pipefail
fail() { echo "FAIL: $*"; exit 1; }
prefix=$HOME/prefix
echo "== the prefix: $(ls /debs/*.deb | wc -l) packages unpacked (dpkg-deb -x) into $prefix"
rm -rf "$prefix"
for deb in /debs/*.deb; do dpkg-deb -x "$deb" "$prefix"; done
# Relocated as a module's files are: the text files that name /usr (pkg-config and CMake files,
# wrapper scripts, Open MPI's wrapper data) name the prefix, and links into /usr point into it.
grep -rlI --null -E '/usr(/|$|")' "$prefix/usr/bin" "$prefix/usr/lib/x86_64-linux-gnu/pkgconfig" \
    "$prefix/usr/share/pkgconfig" "$prefix/usr/lib/x86_64-linux-gnu/cmake" \
    "$prefix/usr/share/openmpi" 2>/dev/null |
  xargs -0 -r sed -i -E "/^#!/! { s#(^|[^A-Za-z0-9_./-])/usr/#\1$prefix/usr/#g; s#=/usr\$#=$prefix/usr#; s#\"/usr\"#\"$prefix/usr\"#g; }"
find "$prefix" -type l -lname '/*' | while read -r link; do
  ln -sfn "$prefix$(readlink "$link")" "$link"
done
# The links Debian's maintainer scripts would make (update-alternatives): mpicc, mpirun, ...
for program in "$prefix"/usr/bin/*.openmpi; do
  ln -sfn "$(basename "$program")" "${program%.openmpi}"
done
export PATH=$prefix/usr/bin:$PATH
export CMAKE_PREFIX_PATH=$prefix/usr PKG_CONFIG_PATH=$prefix/usr/lib/x86_64-linux-gnu/pkgconfig:$prefix/usr/share/pkgconfig
export LD_LIBRARY_PATH=$prefix/usr/lib/x86_64-linux-gnu:$prefix/usr/lib/x86_64-linux-gnu/openmpi/lib:$prefix/usr/lib/x86_64-linux-gnu/hdf5/serial
export OPAL_PREFIX=$prefix/usr HDF5_ROOT=$prefix/usr/lib/x86_64-linux-gnu/hdf5/serial
export PMIX_INSTALL_PREFIX=$prefix/usr/lib/x86_64-linux-gnu/pmix2
# Open MPI's transports for hardware this machine lacks (InfiniBand, PSM) need libraries of the
# packages' recommendations, which the prefix leaves out: not loading them is no error.
export OMPI_MCA_mca_base_component_show_load_errors=0
# Debian puts a few headers in its multiarch folder, which the compiler searches by default under
# /usr only (OpenSSL's opensslconf.h); a module would set CPATH the same way.
export CPATH=$prefix/usr/include/x86_64-linux-gnu
export NMT_LIBTORCH_CUDA_LIBS=wheel NMT_LIBTORCH_CACHE=$HOME/libtorch
export NMT_BUILD_DIR=$HOME/build CCACHE_DIR=$HOME/ccache NMT_SKIP_SETUP=1
echo "== jobs/build.sh --libtorch current as $(id -un) (uid $(id -u)), target $NMT_BUILD_TARGET"
start=$(date +%s)
rm -rf "$NMT_BUILD_DIR"
/src/jobs/build.sh --libtorch current -DNMT_BUILD_TESTS=OFF -DNMT_BUILD_BENCH=OFF \
  >"$HOME/build.log" 2>&1 || { tail -60 "$HOME/build.log"; fail "the build"; }
echo "built in $(($(date +%s) - start)) s (ccache: $(ccache -s | grep -E '^ *Hits|cache hit \(rate\)' | head -1 | tr -s ' '))"
echo "== no /usr/include or /usr/lib path written into the build but the compiler's own"
# The image holds only the toolchain (compilers, the C library): a path there that does not exist
# names a library of a machine where someone installed it as root.
grep -Eoh '(-I|-isystem |-L|-Wl,-rpath,|[ ;=])/usr/(include|lib)[^ ;:"]*' \
  "$NMT_BUILD_DIR/build.ninja" "$NMT_BUILD_DIR/CMakeCache.txt" |
  sed -E 's#^(-I|-isystem |-L|-Wl,-rpath,|[ ;=])##' | sort -u >"$HOME/system-paths" || true
missing=0
while read -r path; do
  [[ -e "$path" ]] || { echo "  not here: $path"; missing=$((missing + 1)); }
done <"$HOME/system-paths"
echo "$(wc -l <"$HOME/system-paths") toolchain paths: $(tr '\n' ' ' <"$HOME/system-paths")"
((missing == 0)) || fail "$missing system paths written into the build"
bin=$NMT_BUILD_DIR/apps
echo "== the tools"
"$bin/nmt-sysinfo" | grep -E '^(libtorch|libtorch_line|cuda|mpi|hdf5|sqlite) ' | tee "$HOME/sysinfo"
grep -q '^libtorch_line *current' "$HOME/sysinfo" || fail "nmt-sysinfo: not the current line"
grep -q '^cuda *runtime 13' "$HOME/sysinfo" || fail "nmt-sysinfo: LibTorch's CUDA half"
work=$(mktemp -d)
"$bin/nmt-preprocess" --out "$work/shards" --vocab-size 400 --log-level warn \
  --train /data/val.en.gz /data/val.de.gz --valid /data/val.en.gz /data/val.de.gz >/dev/null
"$bin/nmt-trackerd" --db "$work/tracker.db" --port 0 --port-file "$work/tracker.port" \
  --log-level warn &
daemon=$!
trap 'kill $daemon 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do [[ -s "$work/tracker.port" ]] && break; sleep 0.1; done
export NMT_TRACKER_URL=http://127.0.0.1:$(cat "$work/tracker.port")
/src/jobs/train_mpirun.sh 2 --data "$work/shards" --run-dir "$work/run" --experiment nonroot \
  --set model.layers=1 --set model.d_model=32 --set model.d_ff=64 --set model.heads=2 \
  --set model.d_k=16 --set model.d_v=16 --set data.max_src_tokens=400 \
  --set data.max_tgt_tokens=400 --set train.max_steps=4 --set train.validate_every=0 \
  --set checkpoint.every_steps=2 --set train.precision=fp32 --log-level warn | tee "$work/train"
grep -q "2 rank(s)" "$work/train" || fail "not a 2-rank run"
zcat /data/val.en.gz | sed -n 1,50p >"$work/src.en"
zcat /data/val.de.gz | sed -n 1,50p >"$work/ref.de"
"$bin/nmt-translate" --checkpoint "$work/run/checkpoints/step-00000004.h5" --input "$work/src.en" \
  --output "$work/hyp.de" --greedy --log-level warn
[[ $(wc -l <"$work/hyp.de") -eq 50 ]] || fail "nmt-translate: $(wc -l <"$work/hyp.de") lines"
"$bin/nmt-bleu" "$work/ref.de" -i "$work/hyp.de" -f json | grep -q '"BLEU' || fail "nmt-bleu"
"$bin/nmt-tracker" runs --experiment nonroot | tee "$work/runs"
grep -q finished "$work/runs" || fail "the run is not finished at the daemon"
echo ok
EOS

echo "== as uid $user_id in $builder"
host_trust
"${ENGINE[@]}" run --rm "${ENGINE_LIMITS[@]}" "${ENGINE_TRUST[@]}" --user "$user_id:$user_id" \
  -v "$root:/src:ro" -v "$state/debs:/debs:ro" -v "$data:/data:ro" \
  -v "$state/home:/home/builder" -v "$work/session.sh:/session.sh:ro" \
  -e HOME=/home/builder -e "NMT_BUILD_TARGET=$target" "$builder" bash /session.sh
