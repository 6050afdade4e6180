#pragma once
/// @file omp_wait.h
/// How long OpenMP threads spin before they sleep, and what tessera chooses: not at all.
///
/// libgomp (the OpenMP runtime shared by LibTorch, OpenBLAS and tessera's kernels) spins
/// 300,000 pause instructions in a barrier by default before it sleeps. On a busy machine
/// those spins steal the cores the working threads need. tessera asks for the passive
/// policy (threads sleep at once; measured in bench/RESULTS.md, "Threads on a busy
/// machine"). libgomp reads its policy once, when it is loaded, before any code of a
/// LibTorch program runs, so the choice is made outside: the `tessera` command is a
/// launcher without LibTorch that sets OMP_WAIT_POLICY and starts `tessera-main`
/// (apps/launcher/tessera_launcher.cpp); `import tessera` sets it before `import torch`;
/// ctest sets it for the test programs. A user's own
/// `OMP_WAIT_POLICY` or `GOMP_SPINCOUNT` is always kept. A program of your own that links
/// tessera keeps libgomp's default unless it is started with one of them set.

#include <string>

/// The OpenMP wait policy tessera starts libgomp with (libgomp's default: spin 300,000
/// times, then sleep). Measured choice: bench/RESULTS.md, "Threads on a busy machine".
#define TESSERA_DEFAULT_OMP_WAIT_POLICY "passive"

/// Set to 1 beside OMP_WAIT_POLICY when that value is tessera's default, not the user's.
#define TESSERA_OMP_WAIT_MARKER "TESSERA_OMP_WAIT_DEFAULT"

namespace tessera::core {

/// What libgomp was started with, in words: e.g. "OMP_WAIT_POLICY=passive (tessera default)",
/// "GOMP_SPINCOUNT=10000 (environment)", "libgomp default (300000 spins)".
std::string omp_wait_description();

}  // namespace tessera::core
