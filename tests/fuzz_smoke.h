#pragma once
// The fuzz smoke run of `make test`: the committed fuzz corpora (fuzz/corpus/<target>,
// fuzz/regressions/<target>) and seeded mutations of them, fed to the normal build's
// parsers. A few thousand inputs per target, the same ones every run (the mutations are
// drawn from a fixed seed); under `make sanitize` they run with ASan and UBSan. The long
// runs with coverage feedback are `make fuzz` (fuzz/run.sh).

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/memory_ledger.h"

namespace tessera::test {

/// For the life of the object, a cap of 1 GiB above what is held, as the fuzz targets set:
/// a size that a mutated input announces meets the parsers' checks instead of the machine.
class FuzzMemoryCap {
 public:
  FuzzMemoryCap() : previous_((core::MemoryLedger::install(), core::MemoryLedger::cap())) {
    core::MemoryLedger::set_cap(core::MemoryLedger::current_bytes() + (int64_t{1} << 30));
  }
  ~FuzzMemoryCap() { core::MemoryLedger::set_cap(previous_); }
  FuzzMemoryCap(const FuzzMemoryCap&) = delete;
  FuzzMemoryCap& operator=(const FuzzMemoryCap&) = delete;

 private:
  int64_t previous_;
};

/// One corpus input: its path and its bytes.
struct FuzzInput {
  std::string path;
  std::string bytes;
};

/// The files of fuzz/corpus/<target> and fuzz/regressions/<target>, sorted by path.
inline std::vector<FuzzInput> fuzz_corpus(const std::string& target) {
  namespace fs = std::filesystem;
  std::vector<FuzzInput> inputs;
  for (const char* dir : {"corpus", "regressions"}) {
    const fs::path d = fs::path(TESSERA_SOURCE_DIR) / "fuzz" / dir / target;
    if (!fs::is_directory(d)) continue;
    for (const auto& e : fs::directory_iterator(d)) {
      if (!e.is_regular_file()) continue;
      std::ifstream in(e.path(), std::ios::binary);
      inputs.push_back({e.path().string(), std::string(std::istreambuf_iterator<char>(in), {})});
    }
  }
  std::sort(inputs.begin(), inputs.end(), [](const FuzzInput& a, const FuzzInput& b) { return a.path < b.path; });
  return inputs;
}

/// `s` changed by one to four edits, each drawn from `rng`: a bit flipped; a byte set to a
/// character that matters to the parsers; a run deleted, duplicated, or copied in from
/// `donor`; the end cut off; a number replaced by an extreme one.
inline std::string mutate(std::string s, const std::string& donor, std::mt19937_64& rng) {
  static const std::string kSpecial = std::string(" ()-+.0123456789eE_:;,[]{}#%\"\n\t\r\xff") + '\0';
  static const char* kNumbers[] = {"0", "-1", "99999999999999999999", "1e308", "-1e-320", "nan", "inf", "4294967297"};
  const auto below = [&rng](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    const size_t at = below(s.size() + 1), run = 1 + below(std::min<size_t>(64, s.size() - std::min(at, s.size()) + 1));
    switch (rng() % 7) {
      case 0:  // flip a bit
        if (!s.empty()) s[below(s.size())] ^= static_cast<char>(1u << (rng() % 8));
        break;
      case 1:  // a parser's special character
        if (!s.empty()) s[below(s.size())] = kSpecial[below(kSpecial.size())];
        break;
      case 2:  // delete a run
        s.erase(std::min(at, s.size()), run);
        break;
      case 3:  // duplicate a run
        s.insert(std::min(at, s.size()), s.substr(std::min(at, s.size()), run));
        break;
      case 4:  // a run of another input
        if (!donor.empty()) {
          const size_t from = below(donor.size());
          s.insert(std::min(at, s.size()), donor.substr(from, run));
        }
        break;
      case 5:  // cut the end off
        s.resize(below(s.size() + 1));
        break;
      default: {  // the number at (or after) `at` made extreme
        const size_t begin = s.find_first_of("0123456789", std::min(at, s.size()));
        if (begin == std::string::npos) break;
        const size_t end = s.find_first_not_of("0123456789.eE-+", begin);
        s.replace(begin, (end == std::string::npos ? s.size() : end) - begin, kNumbers[below(std::size(kNumbers))]);
      }
    }
  }
  return s;
}

/// Calls `check(bytes, name)` on every corpus input of `target` as it is and on
/// `per_input` mutations of each (the donor of a mutation is the next input); returns the
/// number of calls. The seed is fixed, so the inputs are the same in every run.
template <class Check>
int fuzz_smoke(const std::string& target, int per_input, Check check) {
  const FuzzMemoryCap cap;
  const std::vector<FuzzInput> corpus = fuzz_corpus(target);
  std::mt19937_64 rng(27);
  int calls = 0;
  for (size_t i = 0; i < corpus.size(); ++i) {
    check(corpus[i].bytes, corpus[i].path);
    ++calls;
    const std::string& donor = corpus[(i + 1) % corpus.size()].bytes;
    for (int m = 0; m < per_input; ++m, ++calls)
      check(mutate(corpus[i].bytes, donor, rng), corpus[i].path + " mutation " + std::to_string(m));
  }
  return calls;
}

}  // namespace tessera::test
