# Finds every dependency; all come from Debian packages (scripts/install-deps).

find_package(Torch REQUIRED)           # libtorch-dev (PyTorch 1.13 on Debian 12; 2.x works too)
find_package(OpenMP REQUIRED)
find_package(MPI REQUIRED COMPONENTS CXX)
find_package(nlohmann_json 3 REQUIRED)
find_package(CLI11 QUIET CONFIG)
if(NOT TARGET CLI11::CLI11)
  # Debian's libcli11-dev ships the header only on some releases.
  find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${CLI11_INCLUDE_DIR})
endif()

# LibTorch's flags (e.g. -D_GLIBCXX_USE_CXX11_ABI) must reach every target.
set(CMAKE_CXX_FLAGS "${CMAKE_CXX_FLAGS} ${TORCH_CXX_FLAGS}")

find_program(MPIEXEC_EXECUTABLE NAMES mpirun mpiexec)
