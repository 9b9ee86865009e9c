# Sourced by jobs/test.sh and jobs/fuzz.sh: the one configuration of build-asan/, where the
# LibTorch-free libraries are built once with clang-14 under ASan and UBSan and with libFuzzer's
# coverage (NMT_FUZZ), for both their tests (jobs/test.sh --sanitize address,undefined) and the
# fuzz harnesses (jobs/fuzz.sh). Against Debian's LibTorch, which no target built there links.

# configure_clang_asan_build BUILD CXX CC: configures BUILD unless it is configured so already; a
# folder configured otherwise (another compiler, no NMT_FUZZ) is configured afresh.
configure_clang_asan_build() {
  local build=$1 cxx=$2 cc=$3 cache=$1/CMakeCache.txt
  if [[ -f "$cache" ]] && grep -qx 'NMT_FUZZ:BOOL=ON' "$cache" &&
    grep -qx 'NMT_SANITIZE:STRING=address,undefined' "$cache"; then
    return 0
  fi
  rm -rf "$cache" "$build/CMakeFiles"
  local generator=()
  command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
  # Warnings are the GCC builds' business (-Werror there); clang does not know some of them.
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_CXX_FLAGS=-Wno-unknown-warning-option -DNMT_WERROR=OFF -DNMT_BUILD_BENCH=OFF \
    -DNMT_FUZZ=ON -DNMT_SANITIZE=address,undefined >/dev/null
}
