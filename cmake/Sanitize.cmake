# Sanitizer and fuzzing builds of the project's own code (docs/testing.md "Sanitizers and
# fuzzing"). The libraries it links (LibTorch, HDF5, SQLite, yaml-cpp...) stay uninstrumented.
#   NMT_SANITIZE  a -fsanitize= list: "address,undefined" or "thread"; empty is an ordinary build.
#                 Every project target (nmt_project_target) compiles and links with it; UBSan stops
#                 at its first report, so that a finding fails the test that made it.
#   NMT_FUZZ      also builds the harnesses of fuzz/ as libFuzzer binaries (clang only); the plain
#                 replay executables over their corpora are built either way.
set(NMT_SANITIZE "" CACHE STRING "Sanitizers for project code: address,undefined or thread; empty: none")
option(NMT_FUZZ "Build the libFuzzer binaries of fuzz/ (needs clang)" OFF)

set(NMT_SANITIZE_COMPILE_OPTIONS "")
set(NMT_SANITIZE_LINK_OPTIONS "")
if(NMT_SANITIZE)
  if(NMT_SANITIZE MATCHES "thread" AND NMT_SANITIZE MATCHES "address")
    message(FATAL_ERROR "NMT_SANITIZE=${NMT_SANITIZE}: ThreadSanitizer and AddressSanitizer do not "
                        "combine; build them in two folders (jobs/test.sh --sanitize ...)")
  endif()
  # Below -O3, sanitized code compiles much faster and its reports name the same lines: -O1 with
  # GCC; -O0 with clang, whose optimiser over the sanitizers' instrumentation of Boost.Beast's
  # templates costs more than the tests it would speed up (docs/testing.md). -g1: line tables for
  # the reports' stack traces.
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    set(_nmt_sanitize_level -O0)
  else()
    set(_nmt_sanitize_level -O1)
  endif()
  set(NMT_SANITIZE_COMPILE_OPTIONS -fsanitize=${NMT_SANITIZE} -fno-omit-frame-pointer
                                   ${_nmt_sanitize_level} -g1)
  set(NMT_SANITIZE_LINK_OPTIONS -fsanitize=${NMT_SANITIZE})
  if(NMT_SANITIZE MATCHES "undefined")
    list(APPEND NMT_SANITIZE_COMPILE_OPTIONS -fno-sanitize-recover=all)
    list(APPEND NMT_SANITIZE_LINK_OPTIONS -fno-sanitize-recover=all)
  endif()
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC's flow analysis sees through the sanitizers' instrumentation poorly: it reports values
    # in libstdc++'s own headers (std::regex, std::function) as maybe uninitialized, which the
    # ordinary build keeps as an error.
    list(APPEND NMT_SANITIZE_COMPILE_OPTIONS -Wno-maybe-uninitialized)
    # GCC warns that TSan does not model std::atomic_thread_fence (Boost.Asio uses it); the
    # warning is about the tool, not the code.
    if(NMT_SANITIZE MATCHES "thread")
      list(APPEND NMT_SANITIZE_COMPILE_OPTIONS -Wno-tsan)
    endif()
  endif()
  message(STATUS "Sanitizers for project code: ${NMT_SANITIZE}")
endif()

if(NMT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "NMT_FUZZ needs clang (libFuzzer); configure with "
                        "-DCMAKE_CXX_COMPILER=clang++-14, as jobs/fuzz.sh does")
  endif()
  # Every project target gets libFuzzer's coverage instrumentation; the harnesses link its main.
  list(APPEND NMT_SANITIZE_COMPILE_OPTIONS -fsanitize=fuzzer-no-link)
endif()

# The sanitizer flags on one project target (nmt_project_target calls this).
function(nmt_sanitize_target target)
  if(NMT_SANITIZE_COMPILE_OPTIONS)
    target_compile_options(${target} PRIVATE ${NMT_SANITIZE_COMPILE_OPTIONS})
  endif()
  if(NMT_SANITIZE_LINK_OPTIONS)
    target_link_options(${target} PRIVATE ${NMT_SANITIZE_LINK_OPTIONS})
  endif()
endfunction()

# Sets ${out} to TRUE when any of the given targets links LibTorch, directly or through the
# libraries it links (private ones included: a static library's are linked into the executable).
function(nmt_links_torch out)
  set(_pending ${ARGN})
  set(_seen "")
  while(_pending)
    list(POP_FRONT _pending _lib)
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" _lib "${_lib}")
    if(_lib IN_LIST _seen OR NOT TARGET "${_lib}")
      continue()
    endif()
    list(APPEND _seen ${_lib})
    if(_lib MATCHES "^(torch|torch_cpu|torch_cpu_library|torch_cuda|nmt_torch_cpu)$")
      set(${out} TRUE PARENT_SCOPE)
      return()
    endif()
    get_target_property(_imported ${_lib} IMPORTED)
    get_target_property(_interface ${_lib} INTERFACE_LINK_LIBRARIES)
    if(_interface)
      list(APPEND _pending ${_interface})
    endif()
    get_target_property(_type ${_lib} TYPE)
    if(NOT _imported AND NOT _type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(_private ${_lib} LINK_LIBRARIES)
      if(_private)
        list(APPEND _pending ${_private})
      endif()
    endif()
  endwhile()
  set(${out} FALSE PARENT_SCOPE)
endfunction()
