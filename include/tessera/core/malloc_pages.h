#pragma once
/// @file malloc_pages.h
/// Which pages glibc's malloc backs tessera's memory with, and what tessera chooses.
///
/// A bound pass, an AMG set-up or a direct solve allocates tensors of megabytes that live
/// for one step: glibc maps each block above its mmap threshold afresh and the kernel zeroes
/// and maps it 4 KiB page by page on first touch (CROWN on a CIFAR ResNet: ~80,000 page
/// faults, a fifth of the run). With the glibc tunable `glibc.malloc.hugetlb=1` malloc asks
/// for transparent huge pages (madvise) on its maps and heap, so one fault maps 2 MiB. glibc
/// reads its tunables once, when the program is loaded, so the choice is made outside: the
/// `tessera` launcher (apps/launcher/tessera_launcher.cpp) adds it to GLIBC_TUNABLES before
/// it starts `tessera-main`, unless the user's GLIBC_TUNABLES names `glibc.malloc.hugetlb`
/// already (then that value is kept). Python processes are started by python: export
/// GLIBC_TUNABLES=glibc.malloc.hugetlb=1 before starting it for the same effect. On a
/// kernel whose transparent huge pages are `never`, the setting does nothing. Figures:
/// bench/RESULTS.md, "Huge pages for malloc".

#include <string>

/// The tunable tessera adds to GLIBC_TUNABLES (glibc 2.35 and later; older glibc ignores it).
#define TESSERA_MALLOC_TUNABLE "glibc.malloc.hugetlb=1"

/// Set to 1 when the launcher added TESSERA_MALLOC_TUNABLE (the user did not choose).
#define TESSERA_MALLOC_MARKER "TESSERA_MALLOC_DEFAULT"

namespace tessera::core {

/// What malloc was started with, in words: e.g. "glibc.malloc.hugetlb=1 (tessera)",
/// "glibc.malloc.hugetlb=0 (environment)", "glibc default (4 KiB pages)"; followed by
/// ", GLIBC_TUNABLES=<the whole list>" when the list holds other tunables too.
std::string malloc_pages_description();

}  // namespace tessera::core
