#pragma once
// The conversation between the `tessera` launcher and `tessera serve` over a Unix socket
// (header-only, no LibTorch: the launcher includes it).
//
//   server -> client  hello: {"tessera-serve 1", the server's load-time environment}
//   client -> server  its standard input, output and error (SCM_RIGHTS), then
//                     {cwd, argc, argv..., environment...}
//   server -> client  the command's exit status (4 bytes) when it has ended
//
// A message is a count then length-prefixed strings (uint32 each). The load-time environment
// is what the libraries read when they are loaded (libgomp's wait policy and thread count,
// OpenBLAS's, the allocator's tunables, the loader's): a server started with other values
// would run the command differently from a fresh process, so the launcher uses a server only
// when they are the same as its own (after its own choice of the wait policy).

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace tessera::serve {

inline constexpr const char* kHello = "tessera-serve 1";
/// The twin server whose OpenMP threads sleep at once (OMP_WAIT_POLICY=passive) listens at
/// the socket path with this suffix; the launcher picks it when the machine is busy.
inline constexpr const char* kPassiveSuffix = ".passive";
/// Refuse messages above this size (a request is a command line and an environment).
inline constexpr uint32_t kMaxMessageBytes = 4u << 20;

/// "NAME=value\n" for each variable read when the libraries load that is set in `env`.
inline std::string load_time_environment(char** env) {
  static const std::array<const char*, 18> names{
      "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_PLACES", "OMP_DYNAMIC",
      "OMP_STACKSIZE", "GOMP_STACKSIZE", "GOMP_CPU_AFFINITY", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
      "GLIBC_TUNABLES", "MALLOC_ARENA_MAX", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_BIND_NOW",
      "TESSERA_OMP_WAIT_DEFAULT", "TESSERA_MALLOC_DEFAULT"};
  std::string out;
  for (const char* name : names) {
    const size_t n = std::strlen(name);
    for (char** e = env; e && *e; ++e) {
      if (std::strncmp(*e, name, n) == 0 && (*e)[n] == '=') {
        out += *e;
        out += '\n';
        break;
      }
    }
  }
  return out;
}

inline bool write_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n, size -= static_cast<size_t>(n);
  }
  return true;
}

inline bool read_all(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n, size -= static_cast<size_t>(n);
  }
  return true;
}

inline bool send_strings(int fd, const std::vector<std::string>& strings) {
  std::string buf;
  auto put = [&](uint32_t v) { buf.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(static_cast<uint32_t>(strings.size()));
  for (const std::string& s : strings) put(static_cast<uint32_t>(s.size())), buf += s;
  return buf.size() <= kMaxMessageBytes && write_all(fd, buf.data(), buf.size());
}

inline std::optional<std::vector<std::string>> receive_strings(int fd) {
  uint32_t count = 0, total = 0;
  if (!read_all(fd, &count, sizeof count) || count > kMaxMessageBytes / 4) return std::nullopt;
  std::vector<std::string> out(count);
  for (std::string& s : out) {
    uint32_t size = 0;
    if (!read_all(fd, &size, sizeof size) || size > kMaxMessageBytes - total) return std::nullopt;
    total += size;
    s.resize(size);
    if (size > 0 && !read_all(fd, s.data(), size)) return std::nullopt;
  }
  return out;
}

/// Sends file descriptors (one byte of payload carries them).
inline bool send_fds(int socket, const std::vector<int>& fds) {
  char byte = 'F';
  iovec iov{&byte, 1};
  std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()));
  msghdr msg{};
  msg.msg_iov = &iov, msg.msg_iovlen = 1;
  msg.msg_control = control.data(), msg.msg_controllen = control.size();
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET, c->cmsg_type = SCM_RIGHTS, c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
  std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  ssize_t n;
  do n = ::sendmsg(socket, &msg, MSG_NOSIGNAL); while (n < 0 && errno == EINTR);
  return n == 1;
}

/// Receives exactly `count` file descriptors (close-on-exec), or none.
inline std::optional<std::vector<int>> receive_fds(int socket, size_t count) {
  char byte = 0;
  iovec iov{&byte, 1};
  std::vector<char> control(CMSG_SPACE(sizeof(int) * count));
  msghdr msg{};
  msg.msg_iov = &iov, msg.msg_iovlen = 1;
  msg.msg_control = control.data(), msg.msg_controllen = control.size();
  ssize_t n;
  do n = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC); while (n < 0 && errno == EINTR);
  cmsghdr* c = n == 1 ? CMSG_FIRSTHDR(&msg) : nullptr;
  if (c == nullptr || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
      c->cmsg_len != CMSG_LEN(sizeof(int) * count)) {
    return std::nullopt;
  }
  std::vector<int> fds(count);
  std::memcpy(fds.data(), CMSG_DATA(c), sizeof(int) * count);
  return fds;
}

/// A Unix socket address for `path`, or nothing when the path is too long for one.
inline std::optional<sockaddr_un> socket_address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) return std::nullopt;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

}  // namespace tessera::serve
