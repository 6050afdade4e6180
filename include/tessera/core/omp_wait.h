#pragma once
/// @file omp_wait.h
/// How long OpenMP threads spin before they sleep, and what tessera's executables choose.
///
/// libgomp (the OpenMP runtime shared by LibTorch, OpenBLAS and tessera's kernels) spins
/// 300,000 pause instructions in a barrier by default before it sleeps. On a busy machine
/// those spins steal the cores the working threads need. Every tessera executable (the
/// CLI, tests, examples, benchmarks) therefore starts libgomp with a shorter spin when the
/// user has set neither `OMP_WAIT_POLICY` nor `GOMP_SPINCOUNT` (src/startup/
/// omp_wait_preinit.cpp). A program of your own that links tessera keeps libgomp's default
/// unless it links the `tessera_startup` object library or sets one of the two variables
/// before it starts; Python: set them before `import torch`.

#include <string>

/// The spin count tessera's executables start libgomp with (libgomp's default: 300000).
/// Measured choice: bench/RESULTS.md, section "Threads on a busy machine".
#define TESSERA_DEFAULT_GOMP_SPINCOUNT "10000"

/// Set to 1 beside GOMP_SPINCOUNT when that value is tessera's default, not the user's.
#define TESSERA_OMP_WAIT_MARKER "TESSERA_OMP_WAIT_DEFAULT"

namespace tessera::core {

/// What libgomp was started with, in words: e.g. "GOMP_SPINCOUNT=10000 (tessera default)",
/// "OMP_WAIT_POLICY=passive (environment)", "libgomp default (300000 spins)".
std::string omp_wait_description();

}  // namespace tessera::core
