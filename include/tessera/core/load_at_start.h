#pragma once
/// @file load_at_start.h
/// How busy the machine is when a tessera process starts: the other processes running.
///
/// Header-only, for the `tessera` launcher (which links no tessera library) and for
/// core::setup_threads, which samples again once LibTorch is loaded: a process that started
/// beside this one (the other end of a pipeline, `tessera ... | python3 ...`) has settled by
/// then, a process that keeps a core busy has not.

#include <climits>
#include <cstdio>

#include <unistd.h>

/// Set by the launcher to the number of other processes it saw running at start, when there
/// were any (core::threads_for_load turns it into the default thread count).
#define TESSERA_BUSY_AT_START "TESSERA_BUSY_AT_START"

namespace tessera::core {

/// Runnable tasks other than this one (the "running" count of /proc/loadavg, less one), the
/// fewest of five samples 2 ms apart: a process that keeps a core busy is in every sample, a
/// passing one is not. 0 when /proc cannot be read. A sample of 0 ends the sampling (the
/// fewest cannot go lower): an idle machine answers at once, not 8 ms later.
inline int busy_elsewhere() {
  int fewest = INT_MAX;
  for (int i = 0; i < 5 && fewest > 0; ++i) {
    if (i > 0) usleep(2000);
    std::FILE* f = std::fopen("/proc/loadavg", "r");
    if (f == nullptr) return 0;
    double one, five, fifteen;
    int running = 0, total = 0;
    const int fields = std::fscanf(f, "%lf %lf %lf %d/%d", &one, &five, &fifteen, &running, &total);
    std::fclose(f);
    if (fields != 5) return 0;
    fewest = running - 1 < fewest ? running - 1 : fewest;
  }
  return fewest > 0 ? fewest : 0;
}

}  // namespace tessera::core
