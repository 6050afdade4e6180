#pragma once
/// @file threads.h
/// Deliberate thread-count control for LibTorch, OpenMP and the BLAS.
///
/// LibTorch defaults to one thread on some machines and OpenMP BLAS threads inside other
/// parallel work oversubscribe the cores, so tessera sets every pool explicitly, once,
/// at start-up:
///
/// @code
///   auto n = tessera::core::setup_threads(cli_threads);   // 0 = decide automatically
/// @endcode
///
/// Resolution order: an explicit request (> 0), then the `TESSERA_THREADS` environment
/// variable, then one thread per rank when launched under MPI, then all hardware threads.

namespace tessera::core {

/// Where the thread count came from.
enum class ThreadSource { Explicit, Environment, MpiDefault, Hardware };

struct ThreadConfig {
  int threads = 1;       ///< intra-op threads for ATen and OpenMP loops
  int blas_threads = 1;  ///< threads of the BLAS (OpenBLAS); `threads` unless overridden
  ThreadSource source = ThreadSource::Hardware;
};

/// Decides the thread count without changing anything (pure; for tests and `--help`).
/// `requested` > 0 wins; then `TESSERA_THREADS`; then 1 under MPI; then hardware threads.
ThreadConfig resolve_threads(int requested);

/// Resolves and applies: `at::set_num_threads`, `omp_set_num_threads` and the BLAS's own
/// thread count. `TESSERA_BLAS_THREADS` overrides the BLAS count (default: `threads`).
ThreadConfig setup_threads(int requested = 0);

/// Sets the BLAS's thread count while in scope (e.g. 1 around a supernodal factorisation
/// whose BLAS calls would otherwise fight our own threads), restoring it afterwards.
/// OpenBLAS built with OpenMP sets OpenMP's thread count too (and follows it), so the
/// OpenMP count (LibTorch's intra-op threads) is restored as well, as it was on entry.
class ScopedBlasThreads {
 public:
  explicit ScopedBlasThreads(int n);
  ~ScopedBlasThreads();
  ScopedBlasThreads(const ScopedBlasThreads&) = delete;
  ScopedBlasThreads& operator=(const ScopedBlasThreads&) = delete;

 private:
  int previous_;
  int previous_omp_;
};

/// Sets the BLAS's thread count; returns false when the BLAS does not expose it.
bool set_blas_threads(int n);

/// True when the process was started by an MPI launcher (OpenMPI, MPICH, PMIx, Slurm PMI).
bool launched_under_mpi();

/// The BLAS's current thread count, or -1 when the BLAS does not expose it.
int blas_threads();

const char* to_string(ThreadSource source);

}  // namespace tessera::core
