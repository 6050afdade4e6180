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

# Sparse backends: Eigen, SuiteSparse (CHOLMOD, UMFPACK), SuperLU, Spectra, METIS, hypre.
function(tessera_link_sla_backends target)
  find_package(Eigen3 3.3 REQUIRED NO_MODULE)
  find_path(SUITESPARSE_INCLUDE_DIR cholmod.h PATH_SUFFIXES suitesparse REQUIRED)
  find_library(CHOLMOD_LIBRARY cholmod REQUIRED)
  find_library(UMFPACK_LIBRARY umfpack REQUIRED)
  find_library(SUITESPARSECONFIG_LIBRARY suitesparseconfig REQUIRED)
  find_path(SUPERLU_INCLUDE_DIR slu_ddefs.h PATH_SUFFIXES superlu REQUIRED)
  find_library(SUPERLU_LIBRARY superlu REQUIRED)
  find_library(METIS_LIBRARY metis REQUIRED)
  get_target_property(type ${target} TYPE)
  set(scope PUBLIC)
  if(type STREQUAL "INTERFACE_LIBRARY")
    set(scope INTERFACE)
  endif()
  target_include_directories(${target} SYSTEM ${scope}
    ${SUITESPARSE_INCLUDE_DIR} ${SUPERLU_INCLUDE_DIR})
  target_link_libraries(${target} ${scope} Eigen3::Eigen
    ${CHOLMOD_LIBRARY} ${UMFPACK_LIBRARY} ${SUITESPARSECONFIG_LIBRARY} ${SUPERLU_LIBRARY}
    ${METIS_LIBRARY})
  target_compile_definitions(${target} ${scope}
    TESSERA_WITH_EIGEN=1 TESSERA_WITH_CHOLMOD=1 TESSERA_WITH_UMFPACK=1 TESSERA_WITH_SUPERLU=1
    TESSERA_WITH_METIS=1)
  # hypre (libhypre-dev, built with MPI): optional; BoomerAMG throws NotCompiled without it.
  # The define is set on the two files that use it, so adding hypre rebuilds nothing else.
  find_path(HYPRE_INCLUDE_DIR HYPRE.h PATH_SUFFIXES hypre)
  find_library(HYPRE_LIBRARY HYPRE)
  if(HYPRE_INCLUDE_DIR AND HYPRE_LIBRARY)
    target_link_libraries(${target} ${scope} ${HYPRE_LIBRARY} MPI::MPI_CXX)
    set_source_files_properties(
      ${TESSERA_ROOT}/src/sla/backends/hypre/boomeramg.cpp
      ${TESSERA_ROOT}/src/sla/precond/native_preconditioner.cpp
      PROPERTIES COMPILE_DEFINITIONS TESSERA_WITH_HYPRE=1 INCLUDE_DIRECTORIES ${HYPRE_INCLUDE_DIR})
  else()
    message(STATUS "hypre not found: the BoomerAMG preconditioner is not compiled in")
  endif()
endfunction()

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
