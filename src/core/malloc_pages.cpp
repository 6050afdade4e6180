#include "tessera/core/malloc_pages.h"

#include <cstdlib>
#include <string>

namespace tessera::core {

std::string malloc_pages_description() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const std::string all = tunables != nullptr ? tunables : "";
  // the last glibc.malloc.hugetlb=VALUE in the colon-separated list (glibc takes the last)
  const std::string key = "glibc.malloc.hugetlb=";
  std::string setting;
  for (size_t begin = 0; begin <= all.size();) {
    size_t end = all.find(':', begin);
    if (end == std::string::npos) end = all.size();
    const std::string item = all.substr(begin, end - begin);
    if (item.compare(0, key.size(), key) == 0) setting = item;
    begin = end + 1;
  }
  if (setting.empty()) return "glibc default (4 KiB pages)";
  const char* marker = std::getenv(TESSERA_MALLOC_MARKER);
  const bool ours = marker != nullptr && std::string(marker) == "1" && setting == TESSERA_MALLOC_TUNABLE;
  std::string out = setting + (ours ? " (tessera)" : " (environment)");
  if (all != setting) out += ", GLIBC_TUNABLES=" + all;  // the user's other tunables beside it
  return out;
}

}  // namespace tessera::core
