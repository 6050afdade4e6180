#include "tessera/core/memory_ledger.h"

#include <unistd.h>

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "tessera/core/error.h"

namespace tessera::core {
namespace {

std::atomic<int64_t> g_current{0};
std::atomic<int64_t> g_peak{0};
std::atomic<int64_t> g_count{0};
std::atomic<int64_t> g_cap{0};

// Throws when `n` more bytes would take the ledger above its cap (checked before the
// allocation, so a refused request changes nothing).
void check_cap(size_t n) {
  const int64_t cap = g_cap.load(std::memory_order_relaxed);
  if (cap <= 0) return;
  const int64_t held = g_current.load(std::memory_order_relaxed);
  TESSERA_CHECK(held + static_cast<int64_t>(n) <= cap, ResourceExhausted, "memory cap of ", cap,
                " bytes (", cap / (1 << 20), " MiB) exceeded: ", held, " bytes held, ", n,
                " more requested (--memory-cap)");
}

void raise_peak(int64_t value) {
  int64_t seen = g_peak.load(std::memory_order_relaxed);
  while (value > seen && !g_peak.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

// The wrapped allocator keeps data pointer == context (so raw_allocate keeps working) and
// remembers each block's size in a side table, freed through the base allocator's deleter.
class LedgerAllocator final : public c10::Allocator {
 public:
  explicit LedgerAllocator(c10::Allocator* base) : base_(base), base_delete_(base->raw_deleter()) {}

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
  c10::DataPtr allocate(size_t n) override { return allocate_tracked(n); }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
#else
  c10::DataPtr allocate(size_t n) const override { return allocate_tracked(n); }
#endif

  c10::DeleterFnPtr raw_deleter() const override { return &LedgerAllocator::release; }

  static LedgerAllocator* self;

 private:
  c10::DataPtr allocate_tracked(size_t n) const {
    check_cap(n);
    void* data = base_->raw_allocate(n);
    if (data != nullptr) {
      std::lock_guard<std::mutex> lock(mutex_);
      sizes_[data] = n;
    }
    int64_t now = g_current.fetch_add(static_cast<int64_t>(n), std::memory_order_relaxed) +
                  static_cast<int64_t>(n);
    raise_peak(now);
    g_count.fetch_add(1, std::memory_order_relaxed);
    return {data, data, &LedgerAllocator::release, c10::Device(c10::DeviceType::CPU)};
  }

  static void release(void* data) {
    if (data == nullptr) return;
    size_t n = 0;
    {
      std::lock_guard<std::mutex> lock(self->mutex_);
      auto it = self->sizes_.find(data);
      if (it != self->sizes_.end()) {
        n = it->second;
        self->sizes_.erase(it);
      }
    }
    g_current.fetch_sub(static_cast<int64_t>(n), std::memory_order_relaxed);
    self->base_delete_(data);
  }

  c10::Allocator* base_;
  c10::DeleterFnPtr base_delete_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<void*, size_t> sizes_;
};

LedgerAllocator* LedgerAllocator::self = nullptr;
std::once_flag g_install_once;

}  // namespace

void MemoryLedger::install() {
  std::call_once(g_install_once, [] {
    c10::Allocator* base = c10::GetCPUAllocator();
    TESSERA_CHECK(base != nullptr && base->raw_deleter() != nullptr, Unsupported,
                  "the CPU allocator in this process has no raw deleter; the memory ledger "
                  "cannot wrap it");
    // Never freed: tensors may outlive every other static object.
    LedgerAllocator::self = new LedgerAllocator(base);
    c10::SetCPUAllocator(LedgerAllocator::self, /*priority=*/100);
  });
}

bool MemoryLedger::installed() { return LedgerAllocator::self != nullptr; }
int64_t MemoryLedger::current_bytes() { return g_current.load(std::memory_order_relaxed); }
int64_t MemoryLedger::peak_bytes() { return g_peak.load(std::memory_order_relaxed); }
void MemoryLedger::reset_peak() { g_peak.store(current_bytes(), std::memory_order_relaxed); }
int64_t MemoryLedger::allocation_count() { return g_count.load(std::memory_order_relaxed); }

void MemoryLedger::set_cap(int64_t bytes) {
  TESSERA_CHECK(bytes >= 0, InvalidInput, "memory cap must be >= 0 bytes, got ", bytes);
  TESSERA_CHECK(bytes == 0 || installed(), InvalidInput,
                "a memory cap needs the memory ledger: call MemoryLedger::install() first");
  g_cap.store(bytes, std::memory_order_relaxed);
}

int64_t MemoryLedger::cap() { return g_cap.load(std::memory_order_relaxed); }

int64_t MemoryLedger::allocation_budget() {
  const int64_t physical = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  const int64_t capped = cap();
  if (capped == 0) return physical;
  return std::min(physical, std::max<int64_t>(0, capped - current_bytes()));
}

int64_t parse_byte_size(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  std::string suffix = text.substr(digits);
  for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.size() == 3 && suffix.substr(1) == "IB") suffix.resize(1);  // "MiB" -> "M"
  if (suffix.size() == 2 && suffix[1] == 'B') suffix.resize(1);          // "MB" -> "M"
  static const std::string kUnits = "BKMGT";  // 1024^0 .. 1024^4
  const size_t unit = suffix.empty() ? 0 : kUnits.find(suffix);
  TESSERA_CHECK(digits > 0 && digits <= 15 && suffix.size() <= 1 && unit != std::string::npos,
                InvalidInput, "'", text, "' is not a byte size (e.g. 123456, 500K, 500M, 2G)");
  int64_t bytes = std::stoll(text.substr(0, digits));
  for (size_t i = 0; i < unit; ++i) {
    TESSERA_CHECK(bytes <= (int64_t{1} << 52), InvalidInput, "byte size '", text, "' is too large");
    bytes *= 1024;
  }
  return bytes;
}

MemoryPhase::MemoryPhase(std::string name)
    : name_(std::move(name)),
      baseline_(MemoryLedger::current_bytes()),
      outer_peak_(MemoryLedger::peak_bytes()) {
  MemoryLedger::reset_peak();  // peak inside the phase starts from its baseline
}

MemoryPhase::~MemoryPhase() { finish(); }

int64_t MemoryPhase::peak_bytes() const {
  return finished_ ? record_.peak_bytes : MemoryLedger::peak_bytes();
}

PhaseRecord MemoryPhase::finish() {
  if (!finished_) {
    record_.name = name_;
    record_.baseline_bytes = baseline_;
    record_.peak_bytes = MemoryLedger::peak_bytes();
    record_.end_bytes = MemoryLedger::current_bytes();
    raise_peak(outer_peak_);  // an enclosing phase keeps its own, higher peak
    finished_ = true;
  }
  return record_;
}

}  // namespace tessera::core
