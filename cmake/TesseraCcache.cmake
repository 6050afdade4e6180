# Compiler cache: when `ccache` is installed (Debian package `ccache`, listed in
# scripts/install-deps), every C and C++ compilation goes through it. Off with
# -DTESSERA_CCACHE=OFF. The precompiled ATen headers (TESSERA_PCH) are cacheable only with
# sloppiness pch_defines,time_macros, so the launcher sets CCACHE_SLOPPINESS itself: the
# setting holds whether the build runs through `make` or `cmake --build`.
option(TESSERA_CCACHE "Compile through ccache when it is installed" ON)
find_program(TESSERA_CCACHE_PROGRAM ccache)
if(TESSERA_CCACHE AND TESSERA_CCACHE_PROGRAM)
  set(_tessera_ccache_launcher ${CMAKE_COMMAND} -E env
      CCACHE_SLOPPINESS=pch_defines,time_macros ${TESSERA_CCACHE_PROGRAM})
  set(CMAKE_C_COMPILER_LAUNCHER ${_tessera_ccache_launcher})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${_tessera_ccache_launcher})
  message(STATUS "tessera: compiling through ${TESSERA_CCACHE_PROGRAM}")
elseif(TESSERA_CCACHE)
  message(STATUS "tessera: ccache not found, compiling without a cache")
endif()
