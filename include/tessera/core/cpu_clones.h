#pragma once
/// @file cpu_clones.h
/// Kernels compiled for several x86-64 levels in one binary. With gcc on x86-64,
/// `TESSERA_CPU_CLONES` before a function makes three clones of it (x86-64-v4: AVX-512;
/// x86-64-v3: AVX2 + FMA; the baseline) and the loader picks the one the processor runs;
/// elsewhere it is empty. `TESSERA_CPU_CLONES_X86` is defined where the clones are made.
///
/// @code
///   TESSERA_CPU_CLONES double row_sum(const double* x, int64_t n);
/// @endcode

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TESSERA_CPU_CLONES_X86 1
#define TESSERA_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TESSERA_CPU_CLONES
#endif
