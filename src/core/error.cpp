#include "tessera/core/error.h"

namespace tessera {
namespace {

// Shortens an absolute source path to its part inside the project (src/..., apps/...).
std::string project_relative(const char* file) {
  std::string path(file);
  for (const char* root : {"/src/", "/include/", "/apps/", "/tests/", "/python/", "/bench/"}) {
    auto pos = path.rfind(root);
    if (pos != std::string::npos) return path.substr(pos + 1);
  }
  return path;
}

std::string format_what(const std::string& kind, const std::string& message,
                        const char* file, int line) {
  return kind + ": " + message + " (" + project_relative(file) + ":" + std::to_string(line) + ")";
}

}  // namespace

Error::Error(const std::string& kind, const std::string& message, const char* file, int line)
    : std::runtime_error(format_what(kind, message, file, line)),
      kind_(kind),
      message_(message),
      file_(file),
      line_(line) {}

}  // namespace tessera
