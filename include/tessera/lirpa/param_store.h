#pragma once
/// @file param_store.h
/// Where bound operators find their weights.
///
/// A bound operator never owns a weight tensor: it holds a key and asks the store at use
/// time. The single-process `LocalParamStore` returns the full tensor (converted to the
/// requested dtype, cached); a sharded store can gather it on request instead.
///
/// Large matrices can also be used in blocks (`get_columns`, `get_rows`): a Linear
/// operator computes `x W` one block of `weight_block_bytes()` columns at a time, so a
/// sharded store never holds a whole gathered weight. The block widths depend only on the
/// shapes and this setting, never on the store, so the same BLAS calls run on the same
/// values whether the weight is whole or sharded.
///
/// A Linear operator asks the store for its products with a weight (`times`,
/// `times_transposed`) rather than for the weight: the default fetches the blocks above; a
/// tensor-parallel store (sharded_param_store.h) multiplies by its own block and
/// communicates the partial products instead of the weight.
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

/// One operand of a product with a weight matrix W: x W, or x |W| when `absolute`.
struct WeightOperand {
  at::Tensor x;
  bool absolute = false;
};

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
  /// Shape of the tensor under `key` (never gathers).
  virtual std::vector<int64_t> shape(const std::string& key) const = 0;
  /// Columns [c0, c0 + n) of the matrix under `key`, contiguous, in `dtype`.
  virtual at::Tensor get_columns(const std::string& key, at::ScalarType dtype, int64_t c0, int64_t n) const;
  /// Rows [r0, r0 + n) of the matrix under `key`, contiguous, in `dtype`.
  virtual at::Tensor get_rows(const std::string& key, at::ScalarType dtype, int64_t r0, int64_t n) const;
  /// y_i = x_i W (or x_i |W|) for the matrix W [k, n] under `key` and each operand x_i
  /// [..., k], in `dtype`. Default: one block of W's columns at a time (y[..., J] = x W[:, J],
  /// each block fetched once for all operands).
  virtual std::vector<at::Tensor> times(const std::string& key, at::ScalarType dtype,
                                        const std::vector<WeightOperand>& operands) const;
  /// A W^T for A [..., n] (the backward of `times`). Default: one block of W's rows at a time.
  virtual at::Tensor times_transposed(const std::string& key, at::ScalarType dtype, const at::Tensor& a) const;
  /// True when `times` and `times_transposed` are collectives that autograd cannot see
  /// through (tensor parallelism): a differentiable product must record its own backward.
  virtual bool collective_products() const { return false; }
};

/// Bytes of one block of a weight matrix used blockwise (default 2 MiB; process-wide).
int64_t weight_block_bytes();
/// Sets `weight_block_bytes()` (at least 1); returns the previous value.
int64_t set_weight_block_bytes(int64_t bytes);
/// Width of the blocks along a dimension of `extent` slices of `slice_bytes` each: a
/// multiple of 64 (at least 64) with at most `weight_block_bytes()` per block, or
/// `extent` when the whole matrix fits in one block.
int64_t weight_block_width(int64_t extent, int64_t slice_bytes);

namespace detail {
/// Throws InvalidInput unless `shape` is a matrix and [start, start + n) lies in dimension `dim`.
void check_block(const std::vector<int64_t>& shape, int dim, int64_t start, int64_t n, const std::string& key);
}  // namespace detail

/// Single-process store: keeps every tensor whole; conversions are cached per dtype.
class LocalParamStore final : public ParamStore {
 public:
  bool contains(const std::string& key) const override;
  at::Tensor get(const std::string& key, at::ScalarType dtype) const override;
  at::Tensor get_raw(const std::string& key) const override;
  void put(const std::string& key, at::Tensor value) override;
  std::vector<std::string> keys() const override;
  std::vector<int64_t> shape(const std::string& key) const override;

 private:
  std::map<std::string, at::Tensor> values_;
  mutable std::map<std::pair<std::string, int>, at::Tensor> converted_;
  mutable std::mutex mutex_;
};

}  // namespace tessera::lirpa
