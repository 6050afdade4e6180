#pragma once
/// @file param_store.h
/// Where bound operators find their weights.
///
/// A bound operator never owns a weight tensor: it holds a key and asks the store at use
/// time. The single-process `LocalParamStore` returns the full tensor (converted to the
/// requested dtype, cached); a sharded store can gather it on request instead.
///
/// @code
///   auto store = std::make_shared<tessera::lirpa::LocalParamStore>();
///   store->put("fc1.weight", w);
///   at::Tensor w64 = store->get("fc1.weight", at::kDouble);
/// @endcode

#include <ATen/core/Tensor.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace tessera::lirpa {

/// Abstract access to named constant tensors (weights, biases, folded constants).
class ParamStore {
 public:
  virtual ~ParamStore() = default;
  /// True when `key` names a stored tensor.
  virtual bool contains(const std::string& key) const = 0;
  /// The full tensor under `key` in `dtype`; throws InvalidInput for an unknown key.
  virtual at::Tensor get(const std::string& key, at::ScalarType dtype) const = 0;
  /// The tensor as stored (its original dtype).
  virtual at::Tensor get_raw(const std::string& key) const = 0;
  /// Adds or replaces `key`.
  virtual void put(const std::string& key, at::Tensor value) = 0;
  /// Every key, sorted.
  virtual std::vector<std::string> keys() const = 0;
};

/// Single-process store: keeps every tensor whole; conversions are cached per dtype.
class LocalParamStore final : public ParamStore {
 public:
  bool contains(const std::string& key) const override;
  at::Tensor get(const std::string& key, at::ScalarType dtype) const override;
  at::Tensor get_raw(const std::string& key) const override;
  void put(const std::string& key, at::Tensor value) override;
  std::vector<std::string> keys() const override;

 private:
  std::map<std::string, at::Tensor> values_;
  mutable std::map<std::pair<std::string, int>, at::Tensor> converted_;
  mutable std::mutex mutex_;
};

}  // namespace tessera::lirpa
