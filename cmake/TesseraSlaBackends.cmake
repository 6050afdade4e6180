# The optional sparse backends of tessera_sla: Eigen, CHOLMOD, UMFPACK, SuperLU, hypre, MUMPS.
#
# Each is a switch TESSERA_WITH_<NAME>, ON by default when its library is found. A backend
# switched off (or not found) is not compiled: its sources are left out of tessera_sla, the
# define TESSERA_WITH_<NAME> is not set, and asking for it by name throws NotCompiled. METIS (the
# row partitioner of distributed matrices) is required.
#
#   cmake -S . -B build-minimal -DTESSERA_WITH_EIGEN=OFF -DTESSERA_WITH_CHOLMOD=OFF \
#         -DTESSERA_WITH_UMFPACK=OFF -DTESSERA_WITH_SUPERLU=OFF -DTESSERA_WITH_HYPRE=OFF \
#         -DTESSERA_WITH_MUMPS=OFF

get_filename_component(TESSERA_SLA_SRC ${CMAKE_CURRENT_LIST_DIR}/../src/sla ABSOLUTE)

find_package(Eigen3 3.3 QUIET NO_MODULE)
find_path(SUITESPARSE_INCLUDE_DIR cholmod.h PATH_SUFFIXES suitesparse)
find_library(CHOLMOD_LIBRARY cholmod)
find_library(UMFPACK_LIBRARY umfpack)
find_library(SUITESPARSECONFIG_LIBRARY suitesparseconfig)
find_path(SUPERLU_INCLUDE_DIR slu_ddefs.h PATH_SUFFIXES superlu)
find_library(SUPERLU_LIBRARY superlu)
find_path(HYPRE_INCLUDE_DIR HYPRE.h PATH_SUFFIXES hypre)
find_library(HYPRE_LIBRARY HYPRE)
find_path(MUMPS_INCLUDE_DIR dmumps_c.h PATH_SUFFIXES mumps)
find_library(DMUMPS_LIBRARY dmumps)
find_library(MUMPS_COMMON_LIBRARY mumps_common)

set(_found_eigen OFF)
if(Eigen3_FOUND)
  set(_found_eigen ON)
endif()
set(_found_cholmod OFF)
if(SUITESPARSE_INCLUDE_DIR AND CHOLMOD_LIBRARY AND SUITESPARSECONFIG_LIBRARY)
  set(_found_cholmod ON)
endif()
set(_found_umfpack OFF)
if(SUITESPARSE_INCLUDE_DIR AND UMFPACK_LIBRARY AND SUITESPARSECONFIG_LIBRARY)
  set(_found_umfpack ON)
endif()
set(_found_superlu OFF)
if(SUPERLU_INCLUDE_DIR AND SUPERLU_LIBRARY)
  set(_found_superlu ON)
endif()
set(_found_hypre OFF)
if(HYPRE_INCLUDE_DIR AND HYPRE_LIBRARY)
  set(_found_hypre ON)
endif()
set(_found_mumps OFF)
if(MUMPS_INCLUDE_DIR AND DMUMPS_LIBRARY AND MUMPS_COMMON_LIBRARY)
  set(_found_mumps ON)
endif()

option(TESSERA_WITH_EIGEN "Eigen's direct and iterative solvers (and Spectra's eigsh)" ${_found_eigen})
option(TESSERA_WITH_CHOLMOD "CHOLMOD sparse Cholesky (SuiteSparse)" ${_found_cholmod})
option(TESSERA_WITH_UMFPACK "UMFPACK sparse LU (SuiteSparse)" ${_found_umfpack})
option(TESSERA_WITH_SUPERLU "SuperLU sparse LU" ${_found_superlu})
option(TESSERA_WITH_HYPRE "hypre's BoomerAMG preconditioner (one process and distributed)" ${_found_hypre})
option(TESSERA_WITH_MUMPS "MUMPS distributed direct solve (dsolve backend mumps)" ${_found_mumps})

foreach(name EIGEN CHOLMOD UMFPACK SUPERLU HYPRE MUMPS)
  string(TOLOWER ${name} lower)
  if(TESSERA_WITH_${name} AND NOT _found_${lower})
    message(FATAL_ERROR "TESSERA_WITH_${name}=ON but the library was not found")
  endif()
endforeach()

# Sources that exist only for one backend; left out of the build when it is off.
set(TESSERA_SLA_EIGEN_SOURCES
  ${TESSERA_SLA_SRC}/backends/eigen/eigen_direct.cpp
  ${TESSERA_SLA_SRC}/backends/eigen/eigen_iterative.cpp)
set(TESSERA_SLA_CHOLMOD_SOURCES ${TESSERA_SLA_SRC}/backends/suitesparse/cholmod_backend.cpp)
set(TESSERA_SLA_UMFPACK_SOURCES ${TESSERA_SLA_SRC}/backends/suitesparse/umfpack_backend.cpp)
set(TESSERA_SLA_SUPERLU_SOURCES ${TESSERA_SLA_SRC}/backends/superlu/superlu_backend.cpp)
set(TESSERA_SLA_HYPRE_SOURCES
  ${TESSERA_SLA_SRC}/backends/hypre/hypre_support.cpp
  ${TESSERA_SLA_SRC}/backends/hypre/boomeramg.cpp
  ${TESSERA_SLA_SRC}/backends/hypre/dist_boomeramg.cpp)
set(TESSERA_SLA_MUMPS_SOURCES ${TESSERA_SLA_SRC}/backends/mumps/dist_mumps.cpp)

# tessera_link_sla_backends(target): links the switched-on backends into `target`, defines
# TESSERA_WITH_<NAME>=1 for each (for it and its users; an undefined one reads 0 in #if) and
# leaves out the sources of the switched-off ones. hypre's define and headers are set on the
# files that use it (its sources and the two preconditioner factories), so switching hypre
# rebuilds nothing else. MUMPS likewise: its define and headers are set on its source and on
# dsolve.cpp, the one file that calls it.
function(tessera_link_sla_backends target)
  find_library(METIS_LIBRARY metis REQUIRED)
  get_target_property(type ${target} TYPE)
  set(scope PUBLIC)
  if(type STREQUAL "INTERFACE_LIBRARY")
    set(scope INTERFACE)
  endif()
  foreach(name EIGEN CHOLMOD UMFPACK SUPERLU HYPRE MUMPS)
    if(NOT TESSERA_WITH_${name})
      set_source_files_properties(${TESSERA_SLA_${name}_SOURCES} PROPERTIES HEADER_FILE_ONLY ON)
      message(STATUS "tessera: sparse backend ${name} is off (TESSERA_WITH_${name}=OFF): not compiled")
    elseif(NOT name STREQUAL "HYPRE" AND NOT name STREQUAL "MUMPS")
      target_compile_definitions(${target} ${scope} TESSERA_WITH_${name}=1)
    endif()
  endforeach()
  target_compile_definitions(${target} ${scope} TESSERA_WITH_METIS=1)
  if(TESSERA_WITH_EIGEN)
    target_link_libraries(${target} ${scope} Eigen3::Eigen)
  endif()
  if(TESSERA_WITH_CHOLMOD OR TESSERA_WITH_UMFPACK)
    target_include_directories(${target} SYSTEM ${scope} ${SUITESPARSE_INCLUDE_DIR})
  endif()
  if(TESSERA_WITH_SUPERLU)
    target_include_directories(${target} SYSTEM ${scope} ${SUPERLU_INCLUDE_DIR})
  endif()
  if(TESSERA_WITH_CHOLMOD)
    target_link_libraries(${target} ${scope} ${CHOLMOD_LIBRARY})
  endif()
  if(TESSERA_WITH_UMFPACK)
    target_link_libraries(${target} ${scope} ${UMFPACK_LIBRARY})
  endif()
  if(TESSERA_WITH_CHOLMOD OR TESSERA_WITH_UMFPACK)
    target_link_libraries(${target} ${scope} ${SUITESPARSECONFIG_LIBRARY})
  endif()
  if(TESSERA_WITH_SUPERLU)
    target_link_libraries(${target} ${scope} ${SUPERLU_LIBRARY})
  endif()
  target_link_libraries(${target} ${scope} ${METIS_LIBRARY})
  if(TESSERA_WITH_HYPRE)
    target_link_libraries(${target} ${scope} ${HYPRE_LIBRARY} MPI::MPI_CXX)
    set_source_files_properties(
      ${TESSERA_SLA_HYPRE_SOURCES} ${TESSERA_SLA_SRC}/precond/native_preconditioner.cpp
      ${TESSERA_SLA_SRC}/dist/dist_preconditioner.cpp
      PROPERTIES COMPILE_DEFINITIONS TESSERA_WITH_HYPRE=1 INCLUDE_DIRECTORIES ${HYPRE_INCLUDE_DIR})
  endif()
  if(TESSERA_WITH_MUMPS)
    target_link_libraries(${target} ${scope} ${DMUMPS_LIBRARY} ${MUMPS_COMMON_LIBRARY} MPI::MPI_CXX)
    set_source_files_properties(${TESSERA_SLA_MUMPS_SOURCES} ${TESSERA_SLA_SRC}/dist/dsolve.cpp
      PROPERTIES COMPILE_DEFINITIONS TESSERA_WITH_MUMPS=1)
    # Debian puts dmumps_c.h in /usr/include, which must not be named again (#include_next)
    if(NOT MUMPS_INCLUDE_DIR IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
      set_source_files_properties(${TESSERA_SLA_MUMPS_SOURCES} PROPERTIES INCLUDE_DIRECTORIES ${MUMPS_INCLUDE_DIR})
    endif()
  endif()
endfunction()
