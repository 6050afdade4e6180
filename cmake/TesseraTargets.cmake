# Helpers that declare tessera's targets with the same settings everywhere.

set(TESSERA_ROOT ${CMAKE_CURRENT_SOURCE_DIR})

# Precompiles the ATen headers for a target: they cost ~8 s per translation unit otherwise.
function(tessera_use_pch target)
  if(TESSERA_PCH)
    target_precompile_headers(${target} PRIVATE <ATen/ATen.h>)
  endif()
endfunction()

# The OpenMP wait policy of a busy machine, from the one place it is defined
# (include/tessera/core/omp_wait.h): the tests, which run two at a time, get it from ctest.
file(STRINGS ${TESSERA_ROOT}/include/tessera/core/omp_wait.h TESSERA_WAIT_LINE
     REGEX "^#define TESSERA_BUSY_OMP_WAIT_POLICY ")
string(REGEX REPLACE ".*\"([a-z]+)\".*" "\\1" TESSERA_BUSY_OMP_WAIT_POLICY "${TESSERA_WAIT_LINE}")

# tessera_add_layer(name): library tessera_<name> from src/<name>/**.cpp with the public
# headers in include/. Adding a source file needs no CMake edit.
function(tessera_add_layer name)
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${TESSERA_ROOT}/src/${name}/*.cpp)
  if(NOT sources)
    # A layer with no sources yet is a header-only interface library.
    add_library(tessera_${name} INTERFACE)
    target_include_directories(tessera_${name} INTERFACE ${TESSERA_ROOT}/include)
    return()
  endif()
  add_library(tessera_${name} STATIC ${sources})
  target_include_directories(tessera_${name}
    PUBLIC ${TESSERA_ROOT}/include
    PRIVATE ${TESSERA_ROOT}/src)
  target_compile_options(tessera_${name} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  tessera_use_pch(tessera_${name})
endfunction()

# tessera_link_layer(name deps...): PUBLIC (or INTERFACE for a header-only layer) links.
function(tessera_link_layer name)
  get_target_property(type tessera_${name} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    target_link_libraries(tessera_${name} INTERFACE ${ARGN})
  else()
    target_link_libraries(tessera_${name} PUBLIC ${ARGN})
  endif()
endfunction()

# Sparse backends (TESSERA_WITH_* switches) and tessera_link_sla_backends.
include(TesseraSlaBackends)

# Model and property input: ONNX (protobuf), YAML configs.
function(tessera_link_lirpa_inputs target)
  find_package(Protobuf REQUIRED)
  find_package(ONNX REQUIRED)
  find_package(yaml-cpp REQUIRED)
  get_target_property(type ${target} TYPE)
  set(scope PUBLIC)
  if(type STREQUAL "INTERFACE_LIBRARY")
    set(scope INTERFACE)
  endif()
  target_link_libraries(${target} ${scope} onnx_proto ${Protobuf_LIBRARIES} yaml-cpp)
  target_include_directories(${target} SYSTEM ${scope} ${Protobuf_INCLUDE_DIRS})
endfunction()
