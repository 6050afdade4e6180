#include "tessera/core/threads.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>

#include "tessera/core/error.h"

namespace tessera::core {
namespace {

// Parses a count in [least, 4096] from an environment variable (`what` names it in the
// error); 0 when unset.
int env_count(const char* name, long least, const char* what) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return 0;
  char* end = nullptr;
  long n = std::strtol(value, &end, 10);
  TESSERA_CHECK(end != value && *end == '\0' && n >= least && n <= 4096, InvalidInput, name,
                "='", value, "' is not ", what);
  return static_cast<int>(n);
}

int env_thread_count(const char* name) { return env_count(name, 1, "a positive thread count"); }

// The BLAS's threads: TESSERA_BLAS_THREADS, else the intra-op count.
int blas_count(int threads) {
  const int blas_env = env_thread_count("TESSERA_BLAS_THREADS");
  return blas_env > 0 ? blas_env : threads;
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

ThreadConfig& applied() {
  static ThreadConfig config;
  return config;
}

}  // namespace

int threads_for_load(int cores, int busy) {
  return busy > 0 && busy < cores ? cores - busy : std::max(1, cores);
}

bool launched_under_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

ThreadConfig resolve_threads(int requested) {
  return resolve_threads(requested, env_count(TESSERA_BUSY_AT_START, 0, "a count of processes"));
}

ThreadConfig resolve_threads(int requested, int busy) {
  TESSERA_CHECK(requested >= 0, InvalidInput, "thread count must be >= 0, got ", requested);
  TESSERA_CHECK(busy >= 0, InvalidInput, "a count of busy processes must be >= 0, got ", busy);
  ThreadConfig config;
  config.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  config.busy_at_start = busy;
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
    config.threads = threads_for_load(config.cores, config.busy_at_start);
    config.source = config.threads < config.cores ? ThreadSource::Load : ThreadSource::Hardware;
  }
  config.blas_threads = blas_count(config.threads);
  return config;
}

ThreadConfig confirm_load(ThreadConfig config, int busy_now) {
  if (config.source != ThreadSource::Load) return config;
  config.busy_at_start = std::min(config.busy_at_start, std::max(0, busy_now));
  config.threads = threads_for_load(config.cores, config.busy_at_start);
  config.source = config.threads < config.cores ? ThreadSource::Load : ThreadSource::Hardware;
  config.blas_threads = blas_count(config.threads);
  return config;
}

ThreadConfig setup_threads(int requested) { return setup_threads(requested, busy_elsewhere); }

ThreadConfig setup_threads(int requested, int (*busy_now)()) {
  ThreadConfig config = resolve_threads(requested);
  // the launcher sampled before LibTorch loaded (~0.5 s ago; a served command's only ms ago):
  // a process that started beside this one then (a pipeline's other end) has settled by now,
  // a busy one has not
  if (config.source == ThreadSource::Load) config = confirm_load(config, busy_now());
  return apply_threads(config);
}

ThreadConfig apply_threads(const ThreadConfig& config) {
  // The BLAS first: OpenBLAS built with OpenMP sets OpenMP's count as well, which the next
  // two lines then set to the intra-op count.
  set_blas_threads(config.blas_threads);
  at::set_num_threads(config.threads);  // ATen intra-op pool
  omp_set_num_threads(config.threads);  // our own OpenMP loops
  applied() = config;
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

ThreadConfig applied_threads() { return applied(); }

std::string describe(const ThreadConfig& config) {
  const std::string others = std::to_string(config.busy_at_start) + " other process" +
                             (config.busy_at_start == 1 ? "" : "es") + " running when counted";
  const std::string cores = std::to_string(config.cores) + " core" + (config.cores == 1 ? "" : "s");
  switch (config.source) {
    case ThreadSource::Explicit: return "--threads";
    case ThreadSource::Environment: return "TESSERA_THREADS";
    case ThreadSource::MpiDefault: return "one per rank under MPI";
    case ThreadSource::Load: return "the free cores (" + cores + ", " + others + ")";
    case ThreadSource::Hardware:
      return config.busy_at_start > 0 ? "every core (" + cores + ", " + others + ": none free)" : "every core (" + cores + ")";
  }
  return "unknown";
}

const char* to_string(ThreadSource source) {
  switch (source) {
    case ThreadSource::Explicit: return "explicit";
    case ThreadSource::Environment: return "TESSERA_THREADS";
    case ThreadSource::MpiDefault: return "mpi-default";
    case ThreadSource::Load: return "load";
    case ThreadSource::Hardware: return "hardware";
  }
  return "unknown";
}

}  // namespace tessera::core
