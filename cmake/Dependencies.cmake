# Finds the whole dependency stack. Every dependency that is missing stops configure with the
# Debian package that provides it; `jobs/setup.sh` installs all of them.
#
# LibTorch is found through find_package(Torch). Two lines are built and tested (jobs/build.sh
# --libtorch): Debian's libtorch-dev 1.13 (CPU) and the current CUDA LibTorch pinned in
# jobs/libtorch-current.txt; a cluster user can point the same build at any other LibTorch with
# -DCMAKE_PREFIX_PATH=/path/to/libtorch.

set(NMT_MISSING_PACKAGES "")
macro(nmt_require found debian_package what)
  if(NOT ${found})
    list(APPEND NMT_MISSING_PACKAGES ${debian_package})
    message(SEND_ERROR "${what} not found: install the Debian package '${debian_package}' "
                       "(or run jobs/setup.sh, which installs every dependency).")
  endif()
endmacro()

find_package(Threads REQUIRED)
set(NMT_LIBTORCH_LINE "debian" CACHE STRING
    "LibTorch line: debian (libtorch-dev) or current (jobs/libtorch-current.txt, via jobs/build.sh)")
set_property(CACHE NMT_LIBTORCH_LINE PROPERTY STRINGS debian current)
# A CUDA LibTorch's config enables CUDA and compiles a GPU probe unless told which architectures to
# build for; nothing here compiles CUDA sources, so name the lent machines' H200 (sm_90).
if(NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST} AND NOT DEFINED TORCH_CUDA_ARCH_LIST)
  set(TORCH_CUDA_ARCH_LIST "9.0")
endif()
# It also enables CUDA, and under CMP0104's NEW behaviour CMake then sets CMAKE_CUDA_ARCHITECTURES,
# which LibTorch's config ignores with a warning.
cmake_policy(SET CMP0104 OLD)
find_package(Torch QUIET)
nmt_require(Torch_FOUND libtorch-dev "LibTorch (TorchConfig.cmake; for CUDA pass -DCMAKE_PREFIX_PATH=<libtorch>)")
set(NMT_TORCH_HAS_CUDA OFF)
if(TORCH_CUDA_LIBRARIES OR TARGET torch_cuda)
  set(NMT_TORCH_HAS_CUDA ON)
endif()
# The CUDA headers that LibTorch's CUDA headers include (cuda.h, and CUDA 13's CCCL: nv/target),
# from the toolkit its config found: a toolkit from PyPI or a module is on no default include path.
# CMake 3.25's CUDAToolkit module predates the CCCL folder, so it is added here.
set(NMT_CUDA_INCLUDE_DIRS "")
if(NMT_TORCH_HAS_CUDA)
  foreach(_dir ${CUDAToolkit_INCLUDE_DIRS})
    list(APPEND NMT_CUDA_INCLUDE_DIRS "${_dir}")
    if(IS_DIRECTORY "${_dir}/cccl")
      list(APPEND NMT_CUDA_INCLUDE_DIRS "${_dir}/cccl")
    endif()
  endforeach()
  # NCCL's header (c10d's NCCL process group includes it): the toolkit's, else the one of the NCCL
  # wheel beside a LibTorch from PyPI (nvidia/nccl next to torch/).
  find_path(NMT_NCCL_INCLUDE_DIR nccl.h
            HINTS ${CUDAToolkit_INCLUDE_DIRS} "${TORCH_INSTALL_PREFIX}/../nvidia/nccl/include")
  if(NMT_NCCL_INCLUDE_DIR)
    list(APPEND NMT_CUDA_INCLUDE_DIRS "${NMT_NCCL_INCLUDE_DIR}")
  endif()
  list(REMOVE_DUPLICATES NMT_CUDA_INCLUDE_DIRS)
  if(TARGET torch_cuda AND NMT_CUDA_INCLUDE_DIRS)
    target_include_directories(torch_cuda SYSTEM INTERFACE ${NMT_CUDA_INCLUDE_DIRS})
  endif()
endif()
# nmt_torch_cpu: what the project's LibTorch code compiles and links against. On a CUDA LibTorch it
# is the CPU half alone (the same headers and definitions as `torch`): the tools that decode load
# the CUDA half when a device asks for it (trainer/runtime/cuda_loader.h), which keeps ~230 MB of
# CUDA libraries out of every CPU process. The tools and tests that use CUDA directly link `torch`
# too (nmt_link_torch_cuda).
add_library(nmt_torch_cpu INTERFACE)
if(NMT_TORCH_HAS_CUDA)
  target_link_libraries(nmt_torch_cpu INTERFACE torch_cpu_library)
  target_include_directories(nmt_torch_cpu SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
  target_compile_definitions(nmt_torch_cpu INTERFACE
                             $<TARGET_PROPERTY:torch_cuda,INTERFACE_COMPILE_DEFINITIONS>)
  target_compile_options(nmt_torch_cpu INTERFACE ${TORCH_CXX_FLAGS})
else()
  target_link_libraries(nmt_torch_cpu INTERFACE torch)
endif()
if(NOT NMT_LIBTORCH_LINE STREQUAL "debian" AND NOT NMT_LIBTORCH_LINE STREQUAL "current")
  message(FATAL_ERROR "NMT_LIBTORCH_LINE must be debian or current, not '${NMT_LIBTORCH_LINE}'")
elseif(Torch_FOUND AND NMT_LIBTORCH_LINE STREQUAL "current")
  file(STRINGS "${PROJECT_SOURCE_DIR}/jobs/libtorch-current.txt" _nmt_pin REGEX "^torch==")
  string(REGEX REPLACE "^torch==([^ ]+).*" "\\1" _nmt_pin "${_nmt_pin}")
  if(NOT Torch_VERSION VERSION_EQUAL _nmt_pin OR NOT NMT_TORCH_HAS_CUDA)
    message(FATAL_ERROR "NMT_LIBTORCH_LINE=current expects the CUDA LibTorch ${_nmt_pin} pinned in "
                        "jobs/libtorch-current.txt, found ${Torch_VERSION} (CUDA: "
                        "${NMT_TORCH_HAS_CUDA}) in ${TORCH_INSTALL_PREFIX}. Build it with "
                        "jobs/build.sh --libtorch current.")
  endif()
endif()

find_package(MPI QUIET COMPONENTS C)
nmt_require(MPI_C_FOUND libopenmpi-dev "Open MPI (mpicc and headers)")
find_program(NMT_MPIEXEC NAMES mpirun mpiexec HINTS ${MPIEXEC_EXECUTABLE})
nmt_require(NMT_MPIEXEC openmpi-bin "mpirun")

# tcmalloc (gperftools) for the LibTorch tools: glibc's malloc maps and unmaps every large tensor
# (page faults on each step) and its bins search showed up in profiles; with tcmalloc a training
# step of configs/multi30k*.yaml on 2 cores took 0.53-0.86x the time (bench/allocator_bench.sh).
find_library(NMT_TCMALLOC_LIBRARY NAMES tcmalloc_minimal)
nmt_require(NMT_TCMALLOC_LIBRARY libgoogle-perftools-dev "tcmalloc (libtcmalloc_minimal)")
find_package(HDF5 QUIET COMPONENTS C)
nmt_require(HDF5_FOUND libhdf5-dev "HDF5 C library")

find_package(SQLite3 QUIET)
nmt_require(SQLite3_FOUND libsqlite3-dev "SQLite3")
find_package(SQLiteCpp QUIET)
nmt_require(SQLiteCpp_FOUND libsqlitecpp-dev "SQLiteCpp")

find_package(fmt QUIET)
nmt_require(fmt_FOUND libfmt-dev "fmt")
# A LibTorch 2.x distribution ships fmt headers of its own (torch/include/fmt: fmt 12 in 2.11). Its
# include folder precedes /usr/include on every command line, so they would shadow the fmt that
# libfmt.so and spdlog are built with. The targets that compile against LibTorch (nmt_torch_cpu)
# see that fmt first instead, through a folder that holds only a link to it. The others have no
# LibTorch folder to be shadowed by and are left as they are: their command lines are then the same
# in the build folders of both LibTorch lines, and ccache compiles each of them once.
set(NMT_FMT_FIRST_DIR "")
if(Torch_FOUND AND fmt_FOUND)
  get_target_property(_nmt_fmt_includes fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
  find_path(NMT_FMT_INCLUDE_DIR fmt/format.h PATHS ${_nmt_fmt_includes} /usr/include
            NO_DEFAULT_PATH)
endif()
# (Debian's LibTorch lives in /usr/include itself: there the two are the same folder.)
if(NMT_FMT_INCLUDE_DIR AND EXISTS "${TORCH_INSTALL_PREFIX}/include/fmt"
   AND NOT "${TORCH_INSTALL_PREFIX}/include" STREQUAL "${NMT_FMT_INCLUDE_DIR}")
  set(NMT_FMT_FIRST_DIR "${CMAKE_BINARY_DIR}/fmt-first")
  file(MAKE_DIRECTORY "${NMT_FMT_FIRST_DIR}")
  file(CREATE_LINK "${NMT_FMT_INCLUDE_DIR}/fmt" "${NMT_FMT_FIRST_DIR}/fmt" SYMBOLIC)
  target_include_directories(nmt_torch_cpu SYSTEM BEFORE INTERFACE ${NMT_FMT_FIRST_DIR})
  message(STATUS "fmt: ${NMT_FMT_INCLUDE_DIR}/fmt ahead of LibTorch's bundled copy")
endif()
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
find_package(OpenSSL QUIET COMPONENTS Crypto SSL)
nmt_require(OPENSSL_FOUND libssl-dev "OpenSSL (libcrypto for SHA-256, libssl for the tracker's TLS)")

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

message(STATUS "LibTorch ${Torch_VERSION} (line ${NMT_LIBTORCH_LINE}, CUDA ${NMT_TORCH_HAS_CUDA}) "
               "from ${TORCH_INSTALL_PREFIX}")
