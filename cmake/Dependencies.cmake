# Finds the whole dependency stack. Every dependency that is missing stops configure with the
# Debian package that provides it; `jobs/setup.sh` installs all of them.
#
# LibTorch is found through find_package(Torch), so a cluster user can point the same build at a
# CUDA LibTorch with -DCMAKE_PREFIX_PATH=/path/to/libtorch.

set(NMT_MISSING_PACKAGES "")
macro(nmt_require found debian_package what)
  if(NOT ${found})
    list(APPEND NMT_MISSING_PACKAGES ${debian_package})
    message(SEND_ERROR "${what} not found: install the Debian package '${debian_package}' "
                       "(or run jobs/setup.sh, which installs every dependency).")
  endif()
endmacro()

find_package(Threads REQUIRED)
find_package(Torch QUIET)
nmt_require(Torch_FOUND libtorch-dev "LibTorch (TorchConfig.cmake; for CUDA pass -DCMAKE_PREFIX_PATH=<libtorch>)")

find_package(MPI QUIET COMPONENTS C)
nmt_require(MPI_C_FOUND libopenmpi-dev "Open MPI (mpicc and headers)")
find_program(NMT_MPIEXEC NAMES mpirun mpiexec HINTS ${MPIEXEC_EXECUTABLE})
nmt_require(NMT_MPIEXEC openmpi-bin "mpirun")

find_package(HDF5 QUIET COMPONENTS C)
nmt_require(HDF5_FOUND libhdf5-dev "HDF5 C library")

find_package(SQLite3 QUIET)
nmt_require(SQLite3_FOUND libsqlite3-dev "SQLite3")
find_package(SQLiteCpp QUIET)
nmt_require(SQLiteCpp_FOUND libsqlitecpp-dev "SQLiteCpp")

find_package(fmt QUIET)
nmt_require(fmt_FOUND libfmt-dev "fmt")
find_package(spdlog QUIET)
nmt_require(spdlog_FOUND libspdlog-dev "spdlog")
find_package(yaml-cpp QUIET)
nmt_require(yaml-cpp_FOUND libyaml-cpp-dev "yaml-cpp")
find_package(CLI11 QUIET)
nmt_require(CLI11_FOUND libcli11-dev "CLI11")
find_package(nlohmann_json QUIET)
nmt_require(nlohmann_json_FOUND nlohmann-json3-dev "nlohmann-json")

# Asio and Beast are header-only parts of Boost.
find_package(Boost 1.74 QUIET)
if(Boost_FOUND AND NOT EXISTS "${Boost_INCLUDE_DIRS}/boost/beast.hpp")
  set(Boost_FOUND FALSE)
endif()
nmt_require(Boost_FOUND libboost-dev "Boost headers (Asio, Beast)")

find_package(ZLIB QUIET)
nmt_require(ZLIB_FOUND zlib1g-dev "zlib")
find_package(OpenSSL QUIET)
nmt_require(OPENSSL_FOUND libssl-dev "OpenSSL (libcrypto, for SHA-256)")

find_package(PkgConfig QUIET)
nmt_require(PKG_CONFIG_FOUND pkg-config "pkg-config")
if(PKG_CONFIG_FOUND)
  pkg_check_modules(SENTENCEPIECE QUIET IMPORTED_TARGET sentencepiece)
endif()
nmt_require(SENTENCEPIECE_FOUND libsentencepiece-dev "SentencePiece")

if(NMT_BUILD_TESTS)
  find_package(GTest QUIET)
  nmt_require(GTest_FOUND "libgtest-dev libgmock-dev" "GoogleTest")
endif()
if(NMT_BUILD_BENCH)
  find_package(benchmark QUIET)
  nmt_require(benchmark_FOUND libbenchmark-dev "Google Benchmark")
endif()

if(NMT_MISSING_PACKAGES)
  string(REPLACE ";" " " _pkgs "${NMT_MISSING_PACKAGES}")
  message(FATAL_ERROR "Missing dependencies. Install them with:\n  apt-get install ${_pkgs}\n"
                      "or run jobs/setup.sh.")
endif()

message(STATUS "LibTorch ${Torch_VERSION} from ${TORCH_INSTALL_PREFIX}")
