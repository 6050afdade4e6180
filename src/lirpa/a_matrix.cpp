// A matrices: dense rows and signed unit rows.

#include "tessera/lirpa/a_matrix.h"

#include <ATen/ATen.h>

#include "tessera/core/error.h"

namespace tessera::lirpa {

DenseA::DenseA(at::Tensor a) : a_(std::move(a)) {
  TESSERA_CHECK(a_.defined() && a_.dim() >= 1, InvalidInput, "DenseA needs a tensor [S, ...]");
}

int64_t DenseA::rows() const { return a_.size(0); }

std::vector<int64_t> DenseA::node_shape() const {
  auto s = a_.sizes().vec();
  return {s.begin() + 1, s.end()};
}

at::Tensor DenseA::dense(at::ScalarType dtype) const { return a_.to(dtype); }

at::Tensor DenseA::contract(const at::Tensor& v) const {
  // sum_i A[s, i] v[i]
  at::Tensor full = v.to(a_.scalar_type()).expand(node_shape()).reshape({-1});
  return at::matmul(a_.reshape({a_.size(0), -1}), full);
}

at::Tensor DenseA::concretize_lower(const at::Tensor& l, const at::Tensor& u) const {
  // min_x A x = A c - |A| r with c = (l+u)/2, r = (u-l)/2
  at::Tensor a2 = a_.reshape({a_.size(0), -1});
  at::Tensor lf = l.to(a_.scalar_type()).reshape({-1});
  at::Tensor uf = u.to(a_.scalar_type()).reshape({-1});
  at::Tensor center = (lf + uf) / 2;
  at::Tensor radius = (uf - lf) / 2;
  return at::matmul(a2, center) - at::matmul(a2.abs(), radius);
}

APtr DenseA::reshaped(const std::vector<int64_t>& shape) const {
  std::vector<int64_t> full{a_.size(0)};
  full.insert(full.end(), shape.begin(), shape.end());
  return make(a_.reshape(full));
}

UnitRowsA::UnitRowsA(std::vector<int64_t> shape, at::Tensor index, at::Tensor sign)
    : shape_(std::move(shape)), index_(std::move(index)), sign_(std::move(sign)) {
  TESSERA_CHECK(index_.numel() == sign_.numel(), DimensionMismatch,
                "UnitRowsA: ", index_.numel(), " indices but ", sign_.numel(), " signs");
}

APtr UnitRowsA::identity(const std::vector<int64_t>& shape, bool both_signs) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  at::Tensor idx = at::arange(n, at::kLong);
  at::Tensor sign = at::ones({n}, at::kDouble);
  if (both_signs) {
    idx = at::cat({idx, idx});
    sign = at::cat({sign, -sign});
  }
  return std::make_shared<UnitRowsA>(shape, idx, sign);
}

int64_t UnitRowsA::rows() const { return index_.numel(); }

at::Tensor UnitRowsA::dense(at::ScalarType dtype) const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  at::Tensor out = at::zeros({rows(), n}, at::TensorOptions().dtype(dtype));
  // out[s, index_s] = sign_s
  out.scatter_(1, index_.unsqueeze(1), sign_.to(dtype).unsqueeze(1));
  std::vector<int64_t> full{rows()};
  full.insert(full.end(), shape_.begin(), shape_.end());
  return out.reshape(full);
}

at::Tensor UnitRowsA::contract(const at::Tensor& v) const {
  at::Tensor full = v.expand(shape_).reshape({-1});
  return full.index_select(0, index_) * sign_.to(v.scalar_type());
}

at::Tensor UnitRowsA::concretize_lower(const at::Tensor& l, const at::Tensor& u) const {
  // sign = +1: l[i]; sign = -1: -u[i]
  at::Tensor lf = l.reshape({-1}).index_select(0, index_);
  at::Tensor uf = u.reshape({-1}).index_select(0, index_);
  at::Tensor s = sign_.to(l.scalar_type());
  return at::where(s > 0, lf, -uf);
}

APtr UnitRowsA::reshaped(const std::vector<int64_t>& shape) const {
  return std::make_shared<UnitRowsA>(shape, index_, sign_);
}

APtr add_a(const APtr& a, const APtr& b, at::ScalarType dtype) {
  if (!a) return b;
  if (!b) return a;
  at::Tensor da = a->dense(dtype);
  return DenseA::make(da + b->dense(dtype).reshape(da.sizes()));  // A = A_a + A_b
}

}  // namespace tessera::lirpa
