#include "tessera/core/threads.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <omp.h>

#include <cstdlib>
#include <string>
#include <thread>

#include "tessera/core/error.h"

namespace tessera::core {
namespace {

// Parses a positive thread count from an environment variable; 0 when unset.
int env_thread_count(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return 0;
  char* end = nullptr;
  long n = std::strtol(value, &end, 10);
  TESSERA_CHECK(end != value && *end == '\0' && n > 0 && n <= 4096, InvalidInput, name,
                "='", value, "' is not a positive thread count");
  return static_cast<int>(n);
}

// OpenBLAS exposes its pool through plain C symbols; look them up at run time so the
// build does not depend on which BLAS the alternatives system selected.
using SetThreadsFn = void (*)(int);
using GetThreadsFn = int (*)();

SetThreadsFn blas_setter() {
  static auto fn = reinterpret_cast<SetThreadsFn>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  return fn;
}

GetThreadsFn blas_getter() {
  static auto fn = reinterpret_cast<GetThreadsFn>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  return fn;
}

}  // namespace

bool launched_under_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

ThreadConfig resolve_threads(int requested) {
  TESSERA_CHECK(requested >= 0, InvalidInput, "thread count must be >= 0, got ", requested);
  ThreadConfig config;
  if (requested > 0) {
    config.threads = requested;
    config.source = ThreadSource::Explicit;
  } else if (int env = env_thread_count("TESSERA_THREADS"); env > 0) {
    config.threads = env;
    config.source = ThreadSource::Environment;
  } else if (launched_under_mpi()) {
    config.threads = 1;  // one thread per rank: ranks already fill the cores
    config.source = ThreadSource::MpiDefault;
  } else {
    config.threads = std::max(1u, std::thread::hardware_concurrency());
    config.source = ThreadSource::Hardware;
  }
  int blas_env = env_thread_count("TESSERA_BLAS_THREADS");
  config.blas_threads = blas_env > 0 ? blas_env : config.threads;
  return config;
}

ThreadConfig setup_threads(int requested) {
  ThreadConfig config = resolve_threads(requested);
  // The BLAS first: OpenBLAS built with OpenMP sets OpenMP's count as well, which the next
  // two lines then set to the intra-op count.
  set_blas_threads(config.blas_threads);
  at::set_num_threads(config.threads);  // ATen intra-op pool
  omp_set_num_threads(config.threads);  // our own OpenMP loops
  return config;
}

bool set_blas_threads(int n) {
  if (auto set = blas_setter()) {
    set(n);
    return true;
  }
  return false;
}

int blas_threads() {
  auto get = blas_getter();
  return get ? get() : -1;
}

ScopedBlasThreads::ScopedBlasThreads(int n) : previous_(blas_threads()), previous_omp_(omp_get_max_threads()) {
  set_blas_threads(n);
}

ScopedBlasThreads::~ScopedBlasThreads() {
  if (previous_ > 0) set_blas_threads(previous_);
  omp_set_num_threads(previous_omp_);  // the caller's intra-op threads, whatever the BLAS did
}

const char* to_string(ThreadSource source) {
  switch (source) {
    case ThreadSource::Explicit: return "explicit";
    case ThreadSource::Environment: return "TESSERA_THREADS";
    case ThreadSource::MpiDefault: return "mpi-default";
    case ThreadSource::Hardware: return "hardware";
  }
  return "unknown";
}

}  // namespace tessera::core
