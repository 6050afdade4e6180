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
/// variable, then one thread per rank when launched under MPI, then the cores that the load
/// at start left free (`TESSERA_BUSY_AT_START`, set by the `tessera` launcher), then all
/// hardware threads.

#include <string>

#include "tessera/core/load_at_start.h"   // TESSERA_BUSY_AT_START

namespace tessera::core {

/// Where the thread count came from.
enum class ThreadSource { Explicit, Environment, MpiDefault, Load, Hardware };

struct ThreadConfig {
  int threads = 1;       ///< intra-op threads for ATen and OpenMP loops
  int blas_threads = 1;  ///< threads of the BLAS (OpenBLAS); `threads` unless overridden
  ThreadSource source = ThreadSource::Hardware;
  int cores = 1;         ///< hardware threads of the machine
  int busy_at_start = 0; ///< other processes running at start (`TESSERA_BUSY_AT_START`; 0: unknown or none)
};

/// Decides the thread count without changing anything (pure; for tests and `--help`).
/// `requested` > 0 wins; then `TESSERA_THREADS`; then 1 under MPI; then
/// threads_for_load(hardware threads, `TESSERA_BUSY_AT_START`).
ThreadConfig resolve_threads(int requested);

/// The same with `busy` other processes running (a sampling of the caller's, e.g.
/// busy_elsewhere() now) in place of `TESSERA_BUSY_AT_START`.
ThreadConfig resolve_threads(int requested, int busy);

/// Threads for `cores` cores when `busy` other processes were running at start: the free
/// cores (`cores - busy`) when some but not all are taken; every core otherwise. With one
/// busy process on 2 cores, one thread beats two, which share a core with it (CG 1M DOF,
/// ACAS Xu 1_1 prop_4, alpha-CROWN on a CIFAR ResNet); when every core is taken, more
/// threads get more of the machine's time (bench/RESULTS.md, "Threads on a busy machine").
int threads_for_load(int cores, int busy);

/// A count from the load (source Load) after a second sampling that found `busy_now` other
/// processes running: the fewer of the two counts, the thread count and source redone; any
/// other config as it is. setup_threads applies it with busy_elsewhere().
ThreadConfig confirm_load(ThreadConfig config, int busy_now);

/// What the last setup_threads applied (the default config before any call).
ThreadConfig applied_threads();

/// Where the thread count came from, in words, e.g. "the free cores (2 cores, 1 other
/// process running when counted)", "--threads", "TESSERA_THREADS", "one per rank under MPI"
/// (counted: at the command's start, or at Python's set_threads call).
std::string describe(const ThreadConfig& config);

/// Resolves and applies: `at::set_num_threads`, `omp_set_num_threads` and the BLAS's own
/// thread count. `TESSERA_BLAS_THREADS` overrides the BLAS count (default: `threads`). A
/// count from the load is confirmed first (confirm_load with a second busy_elsewhere()).
ThreadConfig setup_threads(int requested = 0);

/// The same with the second sampling done by `busy_now` (busy_elsewhere in setup_threads;
/// a fixed count in the tests).
ThreadConfig setup_threads(int requested, int (*busy_now)());

/// Applies a resolved config as setup_threads does (the BLAS, ATen's pool, OpenMP) and
/// records it for applied_threads(); returns it. Python's `tessera.set_threads` applies
/// resolve_threads(requested, busy_elsewhere()) with it.
ThreadConfig apply_threads(const ThreadConfig& config);

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
