#pragma once
/// @file error.h
/// Typed exceptions and the TESSERA_CHECK macro.
///
/// Every error thrown by tessera is a `tessera::Error` carrying the file and line
/// where the check failed. Numerical outcomes (not converged, singular) are never
/// thrown: they are reported in a `SolveInfo` or a verdict.
///
/// @code
///   TESSERA_CHECK(a.size(0) == b.size(0), DimensionMismatch,
///                 "A has ", a.size(0), " rows but b has ", b.size(0));
/// @endcode

#include <sstream>
#include <stdexcept>
#include <string>

namespace tessera {

/// Base of every tessera exception: a message plus where it was raised.
class Error : public std::runtime_error {
 public:
  Error(const std::string& kind, const std::string& message, const char* file, int line);

  const std::string& kind() const noexcept { return kind_; }
  const std::string& message() const noexcept { return message_; }
  const char* file() const noexcept { return file_; }
  int line() const noexcept { return line_; }

 private:
  std::string kind_;
  std::string message_;
  const char* file_;
  int line_;
};

#define TESSERA_DEFINE_ERROR(Name)                                          \
  class Name : public Error {                                               \
   public:                                                                  \
    Name(const std::string& message, const char* file, int line)            \
        : Error(#Name, message, file, line) {}                              \
  }

/// A value the caller passed is not acceptable (NaN, negative size, empty matrix...).
TESSERA_DEFINE_ERROR(InvalidInput);
/// Shapes of operands do not agree.
TESSERA_DEFINE_ERROR(DimensionMismatch);
/// The request is valid but not supported (operator, dtype, device, method).
TESSERA_DEFINE_ERROR(Unsupported);
/// A backend or feature that was named explicitly is not compiled into this build.
TESSERA_DEFINE_ERROR(NotCompiled);
/// A file (MatrixMarket, ONNX, VNN-LIB, YAML) is malformed; the message names file and line.
TESSERA_DEFINE_ERROR(ParseError);
/// A collective or launch problem across processes.
TESSERA_DEFINE_ERROR(DistributedError);

#undef TESSERA_DEFINE_ERROR

namespace detail {

template <typename... Args>
std::string concat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

}  // namespace detail
}  // namespace tessera

/// Throws `tessera::Kind` with the concatenated message when `cond` is false.
#define TESSERA_CHECK(cond, Kind, ...)                                                  \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      throw ::tessera::Kind(::tessera::detail::concat(__VA_ARGS__), __FILE__, __LINE__); \
    }                                                                                   \
  } while (0)

/// Throws `tessera::Kind` unconditionally.
#define TESSERA_THROW(Kind, ...) \
  throw ::tessera::Kind(::tessera::detail::concat(__VA_ARGS__), __FILE__, __LINE__)
