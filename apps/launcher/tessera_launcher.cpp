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
// libgomp's default. A user's own OMP_WAIT_POLICY or GOMP_SPINCOUNT is always kept. It also
// passes the count of those processes on (TESSERA_BUSY_AT_START): unless `--threads`,
// TESSERA_THREADS or MPI says otherwise, tessera-main then takes the free cores as its
// thread count when some but not all are taken (core::threads_for_load). Then it replaces
// itself with `tessera-main` (same process, same arguments).
//
// It also asks glibc's malloc for transparent huge pages (glibc.malloc.hugetlb=1 added to
// GLIBC_TUNABLES, which glibc reads when the program is loaded): the short-lived tensors of
// megabytes that bound passes and solver set-ups allocate then cost one page fault per 2 MiB
// instead of one per 4 KiB (include/tessera/core/malloc_pages.h). A GLIBC_TUNABLES that names
// glibc.malloc.hugetlb already is kept.
//
// When TESSERA_SERVER names the socket of a running `tessera serve`, the command runs there
// instead: in a process forked from one that has LibTorch loaded already, with this
// process's standard streams, folder and environment, and this process ends with its exit
// status (start-up ~1 s of loading LibTorch saved per command; serve_command.cpp). A server
// is used only when its load-time environment equals this one (serve_protocol.h); under
// mpirun, for `serve` itself, or when no server answers, tessera-main starts as above.

#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "serve_protocol.h"
#include "tessera/core/load_at_start.h"
#include "tessera/core/malloc_pages.h"
#include "tessera/core/omp_wait.h"

namespace {

// Adds TESSERA_MALLOC_TUNABLE to GLIBC_TUNABLES unless the user's list sets glibc.malloc.hugetlb.
void ask_for_huge_pages() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const std::string list = tunables != nullptr ? tunables : "";
  if (list.find("glibc.malloc.hugetlb=") != std::string::npos) return;
  const std::string with = (list.empty() ? "" : list + ":") + TESSERA_MALLOC_TUNABLE;
  setenv("GLIBC_TUNABLES", with.c_str(), 1);
  setenv(TESSERA_MALLOC_MARKER, "1", 1);
}

// These two repeat core::launched_under_mpi and command_line.cpp's first_command_word: the
// launcher links no tessera library (nor LibTorch), so it keeps its own copies.
bool under_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(name) != nullptr) return true;
  return false;
}

// The subcommand word (the first argument that is neither an option nor a global option's value).
std::string command_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads" || arg == "--memory-cap") { ++i; continue; }
    if (!arg.empty() && arg[0] != '-') return arg;
  }
  return "";
}

// Runs the command on the server at TESSERA_SERVER (its passive twin when this launcher chose
// passive threads) and gives its exit status; nothing when no usable server answers (then
// nothing has been sent: the caller starts tessera-main itself).
std::optional<int> run_on_server(int argc, char** argv) {
  namespace ts = tessera::serve;
  const char* base = std::getenv("TESSERA_SERVER");
  if (base == nullptr || *base == '\0' || under_mpi() || command_word(argc, argv) == "serve") return std::nullopt;
  std::string path = base;
  const char* marker = std::getenv(TESSERA_OMP_WAIT_MARKER);
  if (marker != nullptr && std::string(marker) == "1") path += ts::kPassiveSuffix;
  const auto addr = ts::socket_address(path);
  if (!addr) return std::nullopt;
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof *addr) != 0) return close(fd), std::nullopt;
  // a server that does not greet within 10 s (stopped, or its queue full) is not used
  timeval greet{10, 0}, forever{0, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &greet, sizeof greet);
  const auto hello = ts::receive_strings(fd);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &forever, sizeof forever);
  if (!hello || hello->size() != 2 || (*hello)[0] != ts::kHello || (*hello)[1] != ts::load_time_environment(environ))
    return close(fd), std::nullopt;  // another protocol or other load-time settings: start our own
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) == nullptr) return close(fd), std::nullopt;
  std::vector<std::string> request{cwd, std::to_string(argc)};
  for (int i = 0; i < argc; ++i) request.emplace_back(argv[i]);
  for (char** e = environ; *e; ++e) request.emplace_back(*e);
  if (!ts::send_fds(fd, {0, 1, 2}) || !ts::send_strings(fd, request)) return close(fd), std::nullopt;
  // from here the command is the server's: its status, or an error (never a second run)
  int32_t status = 0;
  if (!ts::read_all(fd, &status, sizeof status)) {
    std::fprintf(stderr, "tessera: the server at %s ended without the command's exit status\n", path.c_str());
    return 1;
  }
  close(fd);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  // `serve` starts with libgomp's default and a passive twin of its own (serve_command.cpp);
  // its commands carry their own launcher's count
  const int busy = command_word(argc, argv) == "serve" ? 0 : tessera::core::busy_elsewhere();
  if (busy > 0) {
    if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr) {
      setenv("OMP_WAIT_POLICY", TESSERA_BUSY_OMP_WAIT_POLICY, 1);
      setenv(TESSERA_OMP_WAIT_MARKER, "1", 1);
    }
    // the default thread count becomes the free cores (core::threads_for_load)
    setenv(TESSERA_BUSY_AT_START, std::to_string(busy).c_str(), 1);
  } else {
    unsetenv(TESSERA_BUSY_AT_START);
  }
  ask_for_huge_pages();  // before the server's load-time environment is compared
  if (const std::optional<int> status = run_on_server(argc, argv)) return *status;
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
