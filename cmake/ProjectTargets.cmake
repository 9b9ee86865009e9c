# Helpers shared by every folder: warnings, the LibTorch precompiled header, executables.

set(NMT_WARNINGS -Wall -Wextra -Wpedantic -Wshadow=local -Wnon-virtual-dtor)
if(NMT_WERROR)
  list(APPEND NMT_WARNINGS -Werror)
endif()

# Project code includes headers by their path from the repository root ("trainer/distributed/...").
function(nmt_project_target target)
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
  target_compile_options(${target} PRIVATE ${NMT_WARNINGS})
  target_compile_features(${target} PUBLIC cxx_std_17)
  # PyPI's LibTorch exports copies of newer libstdc++ symbols that its build toolchain linked in
  # statically (std::filesystem, std::chrono::tzdb; pytorch/pytorch#133437). A binary that lists
  # libtorch before libstdc++ binds its own calls to those copies: std::filesystem::remove_all
  # jumped to address 0. Naming libstdc++ first binds them to the system's library.
  target_link_options(${target} PRIVATE "LINKER:--push-state,--no-as-needed,-lstdc++,--pop-state")
  nmt_sanitize_target(${target})
endfunction()

# LibTorch headers are the slowest part of the build: every target that uses them shares one
# precompiled header built once, in nmt_torch_pch.
function(nmt_use_torch_pch target)
  target_precompile_headers(${target} REUSE_FROM nmt_trainer)
endfunction()

# Executables that run LibTorch take their malloc from tcmalloc (cmake/Dependencies.cmake). Linked
# without --as-needed: nothing calls it by name, it replaces malloc and free for the process. Not
# under a sanitizer (cmake/Sanitize.cmake): ASan and TSan replace malloc themselves.
function(nmt_use_tcmalloc target)
  if(NMT_SANITIZE OR NMT_FUZZ)
    return()
  endif()
  target_link_libraries(${target} PRIVATE "-Wl,--push-state,--no-as-needed"
                                          ${NMT_TCMALLOC_LIBRARY} "-Wl,--pop-state")
endfunction()

# An executable that runs LibTorch: the shared precompiled header and tcmalloc.
function(nmt_torch_executable target)
  nmt_use_torch_pch(${target})
  nmt_use_tcmalloc(${target})
endfunction()

# Links LibTorch's CUDA half at start-up (a CUDA LibTorch): for the targets that use CUDA directly
# (NCCL training, the GPU tests); the others load it on demand (nmt_torch_cpu).
function(nmt_link_torch_cuda target)
  if(NMT_TORCH_HAS_CUDA)
    # nmt_torch_cpu first: its include folders (fmt's ahead of LibTorch's copy) come first.
    target_link_libraries(${target} PRIVATE nmt_torch_cpu torch)
  endif()
endfunction()

# nmt_link_torch_cuda for every executable defined so far in the calling directory (tests/, bench/)
# that links LibTorch; those that do not (the tracker's tests, the corpus readers') stay without.
function(nmt_link_torch_cuda_in_directory)
  get_property(_targets DIRECTORY PROPERTY BUILDSYSTEM_TARGETS)
  foreach(_target ${_targets})
    get_target_property(_type ${_target} TYPE)
    if(NOT _type STREQUAL "EXECUTABLE")
      continue()
    endif()
    get_target_property(_libs ${_target} LINK_LIBRARIES)
    set(_links_torch FALSE)
    if(_libs)
      nmt_links_torch(_links_torch ${_libs})
    endif()
    if(_links_torch)
      nmt_link_torch_cuda(${_target})
    endif()
  endforeach()
endfunction()

# An executable named like the tool (nmt-foo) whose main lives in apps/. Every tool answers --help;
# a CTest case checks that it does.
function(nmt_add_tool name source)
  add_executable(${name} ${source})
  nmt_project_target(${name})
  target_link_libraries(${name} PRIVATE ${ARGN})
  set_property(GLOBAL APPEND PROPERTY NMT_TOOLS ${name})
endfunction()
