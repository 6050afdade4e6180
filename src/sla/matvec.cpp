// matvec / rmatvec: shape handling around the autograd CSR products.

#include <ATen/ATen.h>

#include "sla/autograd/csr_functions.h"
#include "tessera/core/error.h"
#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla {
namespace {

struct Normalised {
  at::Tensor x3;                    // [Bx, n, k]
  std::vector<int64_t> out_prefix;  // batch shape of the result
  bool vector = true;               // x had no k dimension
};

/// x [n] / [n, k] (shared) or [*batch, n] / [*batch, n, k] -> [Bx, n, k].
Normalised normalise(const SparseTensor& a, const at::Tensor& x, int64_t n, const char* op) {
  TESSERA_CHECK(x.defined(), InvalidInput, op, ": x is undefined");
  TESSERA_CHECK(x.scalar_type() == a.dtype(), InvalidInput, op, ": x has dtype ", x.scalar_type(),
                " but A has ", a.dtype());
  const std::vector<int64_t> bs = a.batch_shape();
  const auto d = static_cast<int64_t>(bs.size());
  Normalised out;
  out.out_prefix = bs;
  auto leading_is_batch = [&] {
    return x.dim() >= d && std::vector<int64_t>(x.sizes().begin(), x.sizes().begin() + d) == bs;
  };
  if (d > 0 && x.dim() == d + 1 && leading_is_batch() && x.size(-1) == n) {
    out.x3 = x.reshape({a.batch_size(), n, 1});
  } else if (d > 0 && x.dim() == d + 2 && leading_is_batch() && x.size(-2) == n) {
    out.x3 = x.reshape({a.batch_size(), n, x.size(-1)});
    out.vector = false;
  } else if (x.dim() == 1 && x.size(0) == n) {
    out.x3 = x.reshape({1, n, 1});
  } else if (x.dim() == 2 && x.size(0) == n) {
    out.x3 = x.unsqueeze(0);
    out.vector = false;
  } else {
    TESSERA_THROW(DimensionMismatch, op, ": A is ", a.rows(), " x ", a.cols(), " with batch ", at::IntArrayRef(bs),
                  " but x has shape ", x.sizes(), "; expected [", n, "], [", n, ", k] or the batch shape before them");
  }
  return out;
}

at::Tensor restore(const Normalised& norm, const at::Tensor& y, int64_t m) {
  std::vector<int64_t> shape = norm.out_prefix;
  shape.push_back(m);
  if (!norm.vector) shape.push_back(y.size(2));
  return y.reshape(shape);
}

}  // namespace

at::Tensor matvec(const SparseTensor& a, const at::Tensor& x) {
  Normalised norm = normalise(a, x, a.cols(), "matvec");
  at::Tensor v = a.values().reshape({a.batch_size(), a.nnz()});
  return restore(norm, detail::matvec_autograd(a, v, norm.x3), a.rows());
}

at::Tensor rmatvec(const SparseTensor& a, const at::Tensor& x) {
  Normalised norm = normalise(a, x, a.rows(), "rmatvec");
  at::Tensor v = a.values().reshape({a.batch_size(), a.nnz()});
  return restore(norm, detail::rmatvec_autograd(a, v, norm.x3), a.cols());
}

}  // namespace tessera::sla
