#pragma once
/// @file omp_wait.h
/// How OpenMP threads wait, and what tessera chooses.
///
/// libgomp (the OpenMP runtime shared by LibTorch, OpenBLAS and tessera's kernels) spins
/// 300,000 pause instructions in a barrier before it sleeps. That is the fastest on an idle
/// machine, and on a busy one the spins steal the cores the working threads need. libgomp
/// reads its policy once, when it is loaded, before any code of a LibTorch program runs, so
/// the choice is made outside: the `tessera` command is a launcher without LibTorch that
/// sets OMP_WAIT_POLICY=passive when other processes keep cores busy at start and starts
/// `tessera-main` (apps/launcher/tessera_launcher.cpp); `import tessera` does the same
/// before `import torch`; ctest sets passive for the test programs, which run two at a
/// time. A user's own `OMP_WAIT_POLICY` or `GOMP_SPINCOUNT` is always kept. Figures:
/// bench/RESULTS.md, "Threads on a busy machine".

#include <string>

/// The OpenMP wait policy tessera starts libgomp with when the machine is busy at start
/// (and for the tests); on an idle machine libgomp's own default is kept.
#define TESSERA_BUSY_OMP_WAIT_POLICY "passive"

/// Set to 1 beside OMP_WAIT_POLICY when that value is tessera's choice, not the user's.
#define TESSERA_OMP_WAIT_MARKER "TESSERA_OMP_WAIT_DEFAULT"

namespace tessera::core {

/// What libgomp was started with, in words: e.g. "OMP_WAIT_POLICY=passive (tessera: the
/// machine was busy at start)", "GOMP_SPINCOUNT=10000 (environment)", "libgomp default
/// (300000 spins)".
std::string omp_wait_description();

}  // namespace tessera::core
