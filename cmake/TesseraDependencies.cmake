# Finds every dependency; all come from Debian packages (scripts/install-deps).

find_package(Torch REQUIRED)           # libtorch-dev (PyTorch 1.13 on Debian 12; 2.x works too)
find_package(OpenMP REQUIRED)
find_package(MPI REQUIRED COMPONENTS CXX)
find_package(nlohmann_json 3 REQUIRED)
include(${CMAKE_CURRENT_LIST_DIR}/TesseraCli11.cmake)

# LibTorch's flags (e.g. -D_GLIBCXX_USE_CXX11_ABI) must reach every target.
set(CMAKE_CXX_FLAGS "${CMAKE_CXX_FLAGS} ${TORCH_CXX_FLAGS}")

find_program(MPIEXEC_EXECUTABLE NAMES mpirun mpiexec)
