# Use ccache when present. Precompiled headers need the sloppiness settings below, or every
# translation unit that uses the LibTorch PCH misses the cache.
find_program(NMT_CCACHE ccache)
if(NMT_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER
      ${CMAKE_COMMAND} -E env "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime"
      ${NMT_CCACHE})
  set(CMAKE_C_COMPILER_LAUNCHER ${NMT_CCACHE})
  message(STATUS "ccache: ${NMT_CCACHE}")
endif()
