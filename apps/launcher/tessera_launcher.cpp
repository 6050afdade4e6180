// `tessera`: a small launcher (no LibTorch) that starts the command-line tool proper,
// `tessera-main` in the same folder, with OpenMP threads that sleep instead of spinning.
//
// libgomp (the OpenMP runtime of LibTorch, OpenBLAS and tessera's kernels) reads its wait
// policy once, from the environment, when it is loaded; by default an idle thread spins
// 300,000 times before it sleeps, and on a machine where another process keeps a core
// busy the spinning threads take the time slices the working threads need (ACAS Xu 1_1
// prop_4: 27.4 s with two threads against 1.5 s with one, issue #27). Nothing in a
// LibTorch program runs early enough to change it: libgomp is initialised before main and
// before any constructor of ours, and re-executing the program itself loads LibTorch's
// hundreds of libraries twice. So this launcher, which loads none of them, sets
// OMP_WAIT_POLICY=passive (unless the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT) and
// replaces itself with `tessera-main` (same process, same arguments).

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tessera/core/omp_wait.h"

int main(int argc, char** argv) {
  (void)argc;
  if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr) {
    setenv("OMP_WAIT_POLICY", TESSERA_DEFAULT_OMP_WAIT_POLICY, 1);
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
