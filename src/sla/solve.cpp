// solve(A, b, options): input checks, shapes, and the differentiable solve.

#include "tessera/sla/solve.h"

#include <ATen/ATen.h>

#include <cmath>

#include "sla/autograd/solve_function.h"
#include "sla/batch_solver.h"
#include "tessera/core/error.h"

namespace tessera::sla {
namespace {

template <typename T>
bool all_finite_cpu(const T* v, int64_t n) {
  bool finite = true;
#pragma omp parallel for schedule(static) reduction(&& : finite) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) finite = finite && std::isfinite(v[i]);
  return finite;
}

/// True when no entry is NaN or Inf; one pass without a temporary on the CPU.
bool all_finite(const at::Tensor& t) {
  const at::Tensor c = t.detach();
  if (c.is_cpu() && c.is_contiguous() && c.scalar_type() == at::kDouble) return all_finite_cpu(c.data_ptr<double>(), c.numel());
  if (c.is_cpu() && c.is_contiguous() && c.scalar_type() == at::kFloat) return all_finite_cpu(c.data_ptr<float>(), c.numel());
  return at::isfinite(c).all().item<bool>();
}

void check_inputs(const SparseTensor& a, const at::Tensor& b) {
  TESSERA_CHECK(a.rows() > 0 && a.nnz() > 0, InvalidInput, "solve: empty matrix (", a.rows(), " x ", a.cols(),
                ", ", a.nnz(), " stored entries)");
  TESSERA_CHECK(a.rows() == a.cols(), DimensionMismatch, "solve: A must be square, got ", a.rows(), " x ", a.cols());
  TESSERA_CHECK(b.defined(), InvalidInput, "solve: b is undefined");
  TESSERA_CHECK(b.scalar_type() == a.dtype(), InvalidInput, "solve: b has dtype ", b.scalar_type(), " but A has ",
                a.dtype());
  TESSERA_CHECK(all_finite(a.values()), InvalidInput,
                "solve: A's values contain NaN or Inf");
  TESSERA_CHECK(all_finite(b), InvalidInput, "solve: b contains NaN or Inf");
}

}  // namespace

std::pair<at::Tensor, SolveInfo> solve(const SparseTensor& a, const at::Tensor& b, const SolveOptions& options) {
  check_inputs(a, b);
  const int64_t n = a.rows();
  const std::vector<int64_t> bs = a.batch_shape();
  const auto d = static_cast<int64_t>(bs.size());
  const bool leading_is_batch =
      d > 0 && b.dim() >= d && std::vector<int64_t>(b.sizes().begin(), b.sizes().begin() + d) == bs;
  at::Tensor b3;
  bool vector = true;
  if (leading_is_batch && b.dim() == d + 1 && b.size(-1) == n) {
    b3 = b.reshape({a.batch_size(), n, 1});                 // [*batch, n]
  } else if (leading_is_batch && b.dim() == d + 2 && b.size(-2) == n) {
    b3 = b.reshape({a.batch_size(), n, b.size(-1)});        // [*batch, n, k]
    vector = false;
  } else if (b.dim() == 1 && b.size(0) == n) {
    b3 = b.reshape({1, n, 1});                              // [n], shared by the batch
  } else if (b.dim() == 2 && b.size(0) == n) {
    b3 = b.unsqueeze(0);                                    // [n, k], shared by the batch
    vector = false;
  } else {
    TESSERA_THROW(DimensionMismatch, "solve: A is ", n, " x ", n, " with batch ", at::IntArrayRef(bs),
                  " but b has shape ", b.sizes(), "; expected [", n, "], [", n, ", k] or the batch shape before them");
  }
  TESSERA_CHECK(b3.size(2) > 0, InvalidInput, "solve: b has no right-hand sides");
  auto solver = std::make_shared<detail::BatchSolver>(a, options);   // dispatch + factorisation, once
  SolveInfo info;
  at::Tensor values = a.values().reshape({a.batch_size(), a.nnz()});
  at::Tensor x = detail::solve_autograd(values, b3, solver, info);
  std::vector<int64_t> shape = bs;
  shape.push_back(n);
  if (!vector) shape.push_back(b3.size(2));
  return {x.reshape(shape), info};
}

}  // namespace tessera::sla
