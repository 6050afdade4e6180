// `tessera serve --socket PATH`: a process that keeps LibTorch loaded and runs the commands
// the `tessera` launcher sends it (TESSERA_SERVER=PATH), each in a process forked from it.
//
// Loading LibTorch (relocating and initialising Debian's libtorch_cpu and its 286 objects)
// is ~1 s of CPU per process here, most of an ACAS Xu instance decided at once
// (history/2026-12-02-verify-startup.md). A fork of a process that has done it costs
// milliseconds, and the child is a fresh tessera-main in all else: the server itself runs no
// ATen operator and no OpenMP region (libgomp's thread pool is not fork-safe), sets no
// threads and installs no ledger; the command process takes the caller's standard streams,
// folder and environment and runs run_command_line as main would.
//
// Per connection: a handler process (fork) greets the launcher with the server's load-time
// environment, receives its streams and command line, forks the command process and waits
// for it and for the launcher at once: the command's exit status goes back to the launcher;
// a launcher that goes away (killed, timed out) takes its command with it (SIGTERM to the
// command's process group, SIGKILL 2 s later). Commands run concurrently, independent of
// each other and of the server (stopping the server ends no running command).
//
// libgomp reads its wait policy when it loads, so one server has one policy: unless the
// caller set OMP_WAIT_POLICY or GOMP_SPINCOUNT, the server starts a twin with
// OMP_WAIT_POLICY=passive at PATH.passive, which the launcher uses when the machine is busy
// (tessera_launcher.cpp), as it would set for a fresh process.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "cli_checks.h"
#include "command_line.h"
#include "serve_protocol.h"
#include "tessera/core/error.h"
#include "tessera/core/omp_wait.h"
#include "tessera/core/threads.h"

namespace tessera::app {
namespace {

namespace ts = tessera::serve;

std::string& served_by_label() {
  static std::string label;
  return label;
}

struct ServeOptions {
  std::string socket;       // where to listen
  double idle_exit = 0;     // end after this many seconds without a connection (0: never)
  bool twin = false;        // this is the passive twin (started by the server)
};

volatile sig_atomic_t g_stop = 0;
std::string g_server;  // "the server at PATH (pid N)": set in the server, kept by its command processes
void on_stop_signal(int) { g_stop = 1; }

// The command process: the launcher's streams, folder and environment, then the command line
// as tessera-main would run it. Never returns.
[[noreturn]] void run_command(const std::vector<int>& fds, const std::vector<std::string>& request, int argc,
                              pid_t handler) {
  setpgid(0, 0);                     // its own group: the handler ends it and whatever it starts
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // and a handler that dies takes it along
  if (getppid() != handler) std::_Exit(1);  // ... also one that died before the line above
  for (int i = 0; i < 3; ++i) dup2(fds[i], i);  // dup2 clears close-on-exec on 0, 1, 2
  for (int fd : fds)
    if (fd > 2) close(fd);
  if (chdir(request[0].c_str()) != 0) {
    std::fprintf(stderr, "tessera serve: cannot enter the caller's folder %s\n", request[0].c_str());
    std::_Exit(2);
  }
  clearenv();
  for (size_t i = 2 + static_cast<size_t>(argc); i < request.size(); ++i) putenv(strdup(request[i].c_str()));
  std::vector<char*> argv;
  for (int i = 0; i < argc; ++i) argv.push_back(strdup(request[2 + i].c_str()));
  argv.push_back(nullptr);
  served_by_label() = g_server;
  const int code = run_command_line(argc, argv.data());
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(code);
}

// The exit status of `pid` as a shell reports it (128 + signal when a signal ended it).
int32_t status_of(int wstatus) {
  if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
  return 1;
}

// Ends the command's process group: SIGTERM, then SIGKILL after 2 s.
void end_command(pid_t pid) {
  kill(-pid, SIGTERM);
  for (int i = 0; i < 200; ++i) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) return;
    usleep(10000);
  }
  kill(-pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

// One connection, in its own process. Returns the handler's exit code.
int handle(int conn) {
  if (!ts::send_strings(conn, {ts::kHello, ts::load_time_environment(environ)})) return 1;
  // the launcher answers at once or has gone its own way (another environment)
  pollfd wait_request{conn, POLLIN, 0};
  if (poll(&wait_request, 1, 10000) != 1) return 1;
  const auto fds = ts::receive_fds(conn, 3);
  if (!fds) return 1;
  const auto request = ts::receive_strings(conn);
  if (!request || request->size() < 2) return 1;
  char* end = nullptr;
  const long argc = std::strtol((*request)[1].c_str(), &end, 10);
  if (*end != '\0' || argc < 1 || static_cast<size_t>(argc) + 2 > request->size()) return 1;
  const pid_t handler = getpid(), pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    close(conn);
    run_command(*fds, *request, static_cast<int>(argc), handler);
  }
  setpgid(pid, pid);  // as the command does itself: the group exists before any kill(-pid)
  for (int fd : *fds) close(fd);
  // wait for the command and watch the launcher: a pidfd is readable when the process ends
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  for (;;) {
    pollfd p[2] = {{conn, POLLIN, 0}, {pidfd, POLLIN, 0}};
    const int ready = poll(p, pidfd >= 0 ? 2 : 1, pidfd >= 0 ? -1 : 10);
    int wstatus = 0;
    if (waitpid(pid, &wstatus, WNOHANG) == pid) {
      const int32_t status = status_of(wstatus);
      ts::write_all(conn, &status, sizeof status);
      return 0;
    }
    if (ready > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      // the launcher sends nothing more: readable means it has gone
      end_command(pid);
      return 0;
    }
  }
}

// Refuses a path where a server answers; removes a stale socket file.
void claim_socket_path(const std::string& path, const sockaddr_un& addr) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return;
  TESSERA_CHECK(S_ISSOCK(st.st_mode), InvalidInput, "tessera serve: ", path, " exists and is not a socket");
  const int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const bool answered = probe >= 0 && connect(probe, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  if (probe >= 0) close(probe);
  TESSERA_CHECK(!answered, InvalidInput, "tessera serve: a server already listens at ", path);
  unlink(path.c_str());
}

// The passive twin: this program again, serving PATH.passive with OpenMP threads that sleep.
pid_t start_twin(const ServeOptions& o) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  prctl(PR_SET_PDEATHSIG, SIGTERM);  // ends with the server that started it
  setenv("OMP_WAIT_POLICY", TESSERA_BUSY_OMP_WAIT_POLICY, 1);
  setenv(TESSERA_OMP_WAIT_MARKER, "1", 1);
  const std::string path = o.socket + ts::kPassiveSuffix, idle = std::to_string(o.idle_exit);
  const char* argv[] = {"tessera-main", "serve", "--socket", path.c_str(), "--idle-exit", idle.c_str(), "--twin", nullptr};
  execv("/proc/self/exe", const_cast<char* const*>(argv));
  std::fprintf(stderr, "tessera serve: cannot start the passive twin: %s\n", std::strerror(errno));
  std::_Exit(1);
}

int serve(const ServeOptions& o) {
  TESSERA_CHECK(!core::launched_under_mpi(), InvalidInput,
                "tessera serve: not under mpirun (a server runs one-process commands)");
  const auto addr = ts::socket_address(o.socket);
  TESSERA_CHECK(addr.has_value(), InvalidInput, "tessera serve: --socket '", o.socket, "' is empty or longer than ",
                sizeof(sockaddr_un::sun_path) - 1 - std::strlen(ts::kPassiveSuffix), " characters");
  if (!o.twin) {
    const auto twin_addr = ts::socket_address(o.socket + ts::kPassiveSuffix);
    TESSERA_CHECK(twin_addr.has_value(), InvalidInput, "tessera serve: --socket '", o.socket, "' is too long");
  }
  claim_socket_path(o.socket, *addr);
  const int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  TESSERA_CHECK(listener >= 0, InvalidInput, "tessera serve: socket: ", std::strerror(errno));
  if (bind(listener, reinterpret_cast<const sockaddr*>(&*addr), sizeof *addr) != 0 || listen(listener, 128) != 0) {
    const int err = errno;
    close(listener);
    TESSERA_CHECK(false, InvalidInput, "tessera serve: cannot listen at ", o.socket, ": ", std::strerror(err));
  }
  struct sigaction stop {};
  stop.sa_handler = on_stop_signal;  // no SA_RESTART: poll returns
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaction(s, &stop, nullptr);
  signal(SIGCHLD, SIG_IGN);  // handlers are reaped by the kernel
  signal(SIGPIPE, SIG_IGN);
  const bool with_twin = !o.twin && std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr;
  const pid_t twin = with_twin ? start_twin(o) : -1;
  std::fprintf(stderr, "tessera serve: listening at %s (pid %d; OpenMP: %s)%s\n", o.socket.c_str(), getpid(),
               core::omp_wait_description().c_str(),
               with_twin ? (std::string("; passive twin at ") + o.socket + ts::kPassiveSuffix).c_str() : "");
  g_server = "the server at " + o.socket + " (pid " + std::to_string(getpid()) + ")";
  auto last = std::chrono::steady_clock::now();
  while (!g_stop) {
    pollfd p{listener, POLLIN, 0};
    const int ready = poll(&p, 1, o.idle_exit > 0 ? 200 : -1);
    if (ready <= 0) {
      const double idle = std::chrono::duration<double>(std::chrono::steady_clock::now() - last).count();
      if (o.idle_exit > 0 && idle >= o.idle_exit) break;
      continue;
    }
    const int conn = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) usleep(10000);  // no spinning
      continue;
    }
    last = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
      close(listener);
      for (int s : {SIGTERM, SIGINT, SIGHUP, SIGCHLD, SIGPIPE}) signal(s, SIG_DFL);
      std::_Exit(handle(conn));
    }
    close(conn);
  }
  close(listener);
  unlink(o.socket.c_str());
  if (twin > 0) kill(twin, SIGTERM);
  std::fprintf(stderr, "tessera serve: stopped (%s)\n", g_stop ? "signal" : "idle");
  return 0;
}

}  // namespace

const std::string& served_by() { return served_by_label(); }

void add_serve_command(CLI::App& app, CommandBody& body, bool& server) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "keep LibTorch loaded and run the commands of `tessera` launchers that have TESSERA_SERVER=PATH, each in "
      "a forked process (saves ~1 s of start-up per command)");
  cmd->add_option("--socket", o->socket, "Unix socket path to listen at (a passive twin listens at PATH.passive)")
      ->required();
  cmd->add_option("--idle-exit", o->idle_exit, "end after this many seconds without a command (0: never)")
      ->check(kNonNegative);
  cmd->add_flag("--twin", o->twin, "internal: this is the passive twin (no twin of its own)")->group("");
  cmd->callback([o, &body, &server] {
    server = true;
    body = [o] { return serve(*o); };
  });
}

}  // namespace tessera::app
