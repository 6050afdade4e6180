// LocalParamStore: the single-process parameter store (whole tensors, cached conversions).

#include "tessera/lirpa/param_store.h"

#include <ATen/ATen.h>

#include "tessera/core/error.h"

namespace tessera::lirpa {

bool LocalParamStore::contains(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return values_.count(key) > 0;
}

at::Tensor LocalParamStore::get_raw(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = values_.find(key);
  TESSERA_CHECK(it != values_.end(), InvalidInput, "no parameter named '", key, "'");
  return it->second;
}

at::Tensor LocalParamStore::get(const std::string& key, at::ScalarType dtype) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = values_.find(key);
  TESSERA_CHECK(it != values_.end(), InvalidInput, "no parameter named '", key, "'");
  if (it->second.scalar_type() == dtype) return it->second;
  auto ckey = std::make_pair(key, static_cast<int>(dtype));
  auto c = converted_.find(ckey);
  if (c != converted_.end()) return c->second;
  at::Tensor t = it->second.to(dtype).contiguous();  // float32 -> float64 is exact
  converted_.emplace(ckey, t);
  return t;
}

void LocalParamStore::put(const std::string& key, at::Tensor value) {
  std::lock_guard<std::mutex> lock(mutex_);
  values_[key] = value.contiguous();
  for (auto it = converted_.begin(); it != converted_.end();) {
    it = it->first.first == key ? converted_.erase(it) : std::next(it);
  }
}

std::vector<std::string> LocalParamStore::keys() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (auto& [k, v] : values_) out.push_back(k);
  return out;
}

}  // namespace tessera::lirpa
