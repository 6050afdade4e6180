// `tessera`: a small launcher (no LibTorch) that starts the command-line tool proper,
// `tessera-main` in the same folder, choosing how its OpenMP threads wait.
//
// libgomp (the OpenMP runtime of LibTorch, OpenBLAS and tessera's kernels) reads its wait
// policy once, from the environment, when it is loaded: before main and before any
// constructor of a LibTorch program, so only a process that starts the program can choose
// it. By default a waiting thread spins 300,000 times before it sleeps. That is the
// fastest on an idle machine (ACAS Xu 1_1 prop_4: 1.53 s, against 2.29 s with threads that
// sleep at once), and the slowest beside another busy process, whose core the spinning
// threads fight for (4.57 s against 1.67 s; a 1M-DOF CG solve 16.0 s against 12.3 s;
// bench/RESULTS.md, "Threads on a busy machine"). So when other processes keep cores busy
// at start, this launcher sets OMP_WAIT_POLICY=passive; on an idle machine it leaves
// libgomp's default. A user's own OMP_WAIT_POLICY or GOMP_SPINCOUNT is always kept. Then it
// replaces itself with `tessera-main` (same process, same arguments).

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tessera/core/omp_wait.h"

namespace {

// Runnable tasks other than this one (the "running" count of /proc/loadavg, less one), the
// fewest of five samples 2 ms apart: a process that keeps a core busy is in every sample,
// a passing one is not. 0 when /proc cannot be read. A sample of 0 ends the sampling (the
// fewest cannot go lower): an idle machine starts at once, not 8 ms later.
int busy_elsewhere() {
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
    fewest = std::min(fewest, running - 1);
  }
  return std::max(0, fewest);
}

}  // namespace

int main(int argc, char** argv) {
  (void)argc;
  if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr &&
      busy_elsewhere() > 0) {
    setenv("OMP_WAIT_POLICY", TESSERA_BUSY_OMP_WAIT_POLICY, 1);
    setenv(TESSERA_OMP_WAIT_MARKER, "1", 1);
  }
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    std::fprintf(stderr, "tessera: cannot find this program's folder (/proc/self/exe: %s)\n", std::strerror(errno));
    return 127;
  }
  self[n] = '\0';
  std::string main_program(self);
  main_program = main_program.substr(0, main_program.rfind('/') + 1) + "tessera-main";
  execv(main_program.c_str(), argv);
  std::fprintf(stderr, "tessera: cannot start %s: %s\n", main_program.c_str(), std::strerror(errno));
  return 127;
}
