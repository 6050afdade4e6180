// Short OpenMP spin-waiting for every tessera executable, decided before any library
// initialises.
//
// libgomp (the OpenMP runtime of LibTorch, OpenBLAS and our kernels) reads its wait
// policy once, from the environment, in its own initialiser; by default an idle team
// thread spins for GOMP_SPINCOUNT = 300,000 pauses before it sleeps. On a machine where
// another process keeps a core busy, the spinning threads take the time slices the
// working threads need (ACAS Xu 1_1 prop_4: 27.4 s with two threads against 1.5 s with one,
// issue #27). No API changes the policy after libgomp has started, and setenv() from main()
// or from a constructor comes too late. An ELF pre-initialisation function runs before
// every shared library's initialiser (LibTorch's ~0.8 s of static registration included)
// but after relocation; when the user has chosen no policy, it re-executes the program
// once with `GOMP_SPINCOUNT` set (the second image skips this, since the variable is then
// present). The cost is one more dynamic-loader pass (tens of milliseconds).
//
// Opt out by setting OMP_WAIT_POLICY or GOMP_SPINCOUNT yourself. Only executables link
// this file (CMake: tessera_link_startup): a shared library cannot carry .preinit_array.

#include <unistd.h>

#include <cstddef>
#include <cstring>

#include "tessera/core/omp_wait.h"

namespace {

bool starts_with(const char* entry, const char* prefix) {
  return std::strncmp(entry, prefix, std::strlen(prefix)) == 0;
}

// Called by the dynamic loader with the process's argv and environment. libc is not yet
// initialised: use only the arguments and plain system calls (no getenv, no allocation).
void set_default_omp_wait(int /*argc*/, char** argv, char** envp) {
  constexpr std::size_t kMaxEnv = 4096;
  static char* env[kMaxEnv + 3];
  std::size_t n = 0;
  for (char** e = envp; e != nullptr && *e != nullptr; ++e) {
    if (starts_with(*e, "OMP_WAIT_POLICY=") || starts_with(*e, "GOMP_SPINCOUNT=")) return;
    if (n == kMaxEnv) return;  // an unusual environment: leave it alone
    env[n++] = *e;
  }
  static char spin[] = "GOMP_SPINCOUNT=" TESSERA_DEFAULT_GOMP_SPINCOUNT;
  static char marker[] = TESSERA_OMP_WAIT_MARKER "=1";
  env[n++] = spin;
  env[n++] = marker;
  env[n] = nullptr;
  execve("/proc/self/exe", argv, env);
  // execve returned: /proc is not mounted or the binary is gone. Carry on with libgomp's
  // own default; nothing is lost but the shorter spin.
}

}  // namespace

__attribute__((section(".preinit_array"), used))
static void (*const tessera_omp_wait_preinit)(int, char**, char**) = set_default_omp_wait;
