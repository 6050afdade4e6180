// LocalParamStore: the single-process parameter store (whole tensors, cached conversions).

#include "tessera/lirpa/param_store.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <atomic>

#include "tessera/core/error.h"

namespace tessera::lirpa {
namespace detail {

void check_block(const std::vector<int64_t>& shape, int dim, int64_t start, int64_t n, const std::string& key) {
  TESSERA_CHECK(shape.size() == 2, InvalidInput, "parameter '", key, "' is not a matrix");
  TESSERA_CHECK(start >= 0 && n >= 0 && start + n <= shape[dim], InvalidInput, "block [", start, ", ",
                start + n, ") is outside dimension ", dim, " of parameter '", key, "' (", shape[dim], ")");
}

}  // namespace detail
namespace {

std::atomic<int64_t> g_weight_block_bytes{int64_t{2} << 20};

}  // namespace

int64_t weight_block_bytes() { return g_weight_block_bytes.load(); }

int64_t set_weight_block_bytes(int64_t bytes) {
  TESSERA_CHECK(bytes >= 1, InvalidInput, "weight block bytes must be positive, got ", bytes);
  return g_weight_block_bytes.exchange(bytes);
}

int64_t weight_block_width(int64_t extent, int64_t slice_bytes) {
  const int64_t budget = weight_block_bytes();
  if (extent * slice_bytes <= budget) return std::max<int64_t>(extent, 1);
  const int64_t width = std::max<int64_t>(budget / std::max<int64_t>(slice_bytes, 1) / 64 * 64, 64);
  return std::min(width, extent);
}

at::Tensor ParamStore::get_columns(const std::string& key, at::ScalarType dtype, int64_t c0, int64_t n) const {
  detail::check_block(shape(key), 1, c0, n, key);
  return get(key, dtype).narrow(1, c0, n).contiguous();
}

at::Tensor ParamStore::get_rows(const std::string& key, at::ScalarType dtype, int64_t r0, int64_t n) const {
  detail::check_block(shape(key), 0, r0, n, key);
  return get(key, dtype).narrow(0, r0, n).contiguous();
}

// y_i = x_i W one block J of W's columns at a time: y[..., J] = x W[:, J]. Each block is a
// separate product with an unchanged sum over k, so a sharded store only ever gathers one
// block, once for all operands.
std::vector<at::Tensor> ParamStore::times(const std::string& key, at::ScalarType dtype,
                                          const std::vector<WeightOperand>& operands) const {
  const std::vector<int64_t> w_shape = shape(key);  // [k, n]
  TESSERA_CHECK(w_shape.size() == 2, InvalidInput, "parameter '", key, "' is not a matrix");
  const int64_t width = weight_block_width(w_shape[1], w_shape[0] * at::elementSize(dtype));
  std::vector<at::Tensor> ys;
  if (width >= w_shape[1]) {
    at::Tensor w = get(key, dtype);
    for (const WeightOperand& o : operands) ys.push_back(at::matmul(o.x, o.absolute ? w.abs() : w));
    return ys;
  }
  for (const WeightOperand& o : operands) {
    std::vector<int64_t> out_shape = o.x.sizes().vec();
    out_shape.back() = w_shape[1];
    ys.push_back(at::empty(out_shape, o.x.options()));
  }
  for (int64_t c0 = 0; c0 < w_shape[1]; c0 += width) {
    const int64_t n = std::min(width, w_shape[1] - c0);
    at::Tensor w = get_columns(key, dtype, c0, n);
    for (size_t i = 0; i < operands.size(); ++i) {
      const WeightOperand& o = operands[i];
      ys[i].narrow(-1, c0, n).copy_(at::matmul(o.x, o.absolute ? w.abs() : w));  // y_J = x W_J
    }
  }
  return ys;
}

// A_x = A W^T one block I of W's rows at a time: A_x[..., I] = A W[I, :]^T.
at::Tensor ParamStore::times_transposed(const std::string& key, at::ScalarType dtype, const at::Tensor& a) const {
  const std::vector<int64_t> w_shape = shape(key);  // [k, n]
  TESSERA_CHECK(w_shape.size() == 2, InvalidInput, "parameter '", key, "' is not a matrix");
  const int64_t width = weight_block_width(w_shape[0], w_shape[1] * at::elementSize(dtype));
  if (width >= w_shape[0]) return at::matmul(a, get(key, dtype).t());
  std::vector<int64_t> out_shape = a.sizes().vec();
  out_shape.back() = w_shape[0];
  at::Tensor ax = at::empty(out_shape, a.options());
  for (int64_t r0 = 0; r0 < w_shape[0]; r0 += width) {
    const int64_t n = std::min(width, w_shape[0] - r0);
    ax.narrow(-1, r0, n).copy_(at::matmul(a, get_rows(key, dtype, r0, n).t()));  // A_x,I = A W_I^T
  }
  return ax;
}

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

std::vector<int64_t> LocalParamStore::shape(const std::string& key) const {
  return get_raw(key).sizes().vec();
}

std::vector<std::string> LocalParamStore::keys() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (auto& [k, v] : values_) out.push_back(k);
  return out;
}

}  // namespace tessera::lirpa
