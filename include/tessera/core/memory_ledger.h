#pragma once
/// @file memory_ledger.h
/// Current and peak bytes of this process's CPU tensors, measured at the allocator.
///
/// `MemoryLedger::install()` wraps LibTorch's CPU allocator once at start-up; from then
/// on every CPU tensor allocation and free is counted. Phases record the baseline before
/// a piece of work and the peak inside it:
///
/// @code
///   tessera::core::MemoryLedger::install();
///   tessera::core::MemoryPhase phase("crown");
///   run_crown(...);
///   auto record = phase.finish();  // record.baseline_bytes, record.peak_bytes
/// @endcode
///
/// Only allocations made after `install()` are counted; tensors that existed before are
/// invisible to the ledger (their frees are not subtracted either).
///
/// A cap turns the ledger into a limit: an allocation that would take `current_bytes()`
/// above it throws `ResourceExhausted` (naming the cap, the bytes held and the request)
/// instead of allocating, as LibTorch's own allocator throws when memory runs out:
///
/// @code
///   tessera::core::MemoryLedger::set_cap(tessera::core::parse_byte_size("500M"));
/// @endcode

#include <cstdint>
#include <string>

#include "tessera/core/error.h"

namespace tessera {
/// A resource limit the user set would be exceeded: an allocation above the memory
/// ledger's cap (`--memory-cap`). The `tessera` tool exits with code 5 (kExitResource).
class ResourceExhausted : public Error {
 public:
  ResourceExhausted(const std::string& message, const char* file, int line)
      : Error("ResourceExhausted", message, file, line) {}
};
}  // namespace tessera

namespace tessera::core {

class MemoryLedger {
 public:
  /// Wraps the current CPU allocator (idempotent, thread-safe). Throws `Unsupported`
  /// when the installed allocator cannot be wrapped (it has no raw deleter).
  static void install();
  static bool installed();

  /// Bytes currently held by tensors allocated since `install()`.
  static int64_t current_bytes();
  /// Highest `current_bytes()` since install or the last `reset_peak()`.
  static int64_t peak_bytes();
  /// Sets the peak to the current value.
  static void reset_peak();
  /// Number of allocations counted so far.
  static int64_t allocation_count();

  /// Cap on `current_bytes()` (0: none). Allocations that would exceed it throw
  /// `ResourceExhausted`; tensors already held are kept. Needs `install()`.
  static void set_cap(int64_t bytes);
  static int64_t cap();

  /// Bytes a new allocation may take at most: what is left under the cap when one is set,
  /// else the machine's physical memory. For checking sizes announced by a file before
  /// allocating them.
  static int64_t allocation_budget();
};

/// "123", "500K", "500M", "2G", "1T" (suffixes case-insensitive, powers of 1024, an
/// optional trailing "B" or "iB"): the byte count. Throws `InvalidInput` otherwise.
int64_t parse_byte_size(const std::string& text);

/// What one phase used: bytes held when it began and the highest value inside it.
struct PhaseRecord {
  std::string name;
  int64_t baseline_bytes = 0;
  int64_t peak_bytes = 0;
  int64_t end_bytes = 0;
  /// peak_bytes - baseline_bytes: what the phase itself added at its worst moment.
  int64_t peak_increase() const { return peak_bytes - baseline_bytes; }
};

/// Scoped phase record. Nested phases are allowed: an inner phase does not lower the
/// peak seen by the outer one.
class MemoryPhase {
 public:
  explicit MemoryPhase(std::string name);
  ~MemoryPhase();
  MemoryPhase(const MemoryPhase&) = delete;
  MemoryPhase& operator=(const MemoryPhase&) = delete;

  int64_t baseline_bytes() const { return baseline_; }
  /// Peak since the phase began (so far).
  int64_t peak_bytes() const;
  /// Ends the phase (idempotent) and returns its record.
  PhaseRecord finish();

 private:
  std::string name_;
  int64_t baseline_ = 0;
  int64_t outer_peak_ = 0;
  bool finished_ = false;
  PhaseRecord record_;
};

}  // namespace tessera::core
