#pragma once
// The non-differentiable engine behind solve(): prepares one solver per batch element
// (a direct backend's factorisation, or an iterative backend's prepared solver) and solves
// with A or A^T.
// The forward pass and the adjoint solve of the backward pass share one BatchSolver, so the
// factorisation is computed once.

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "tessera/sla/backends/direct_backend.h"
#include "tessera/sla/backends/iterative_backend.h"
#include "tessera/sla/solve.h"

namespace tessera::sla::detail {

class BatchSolver {
 public:
  BatchSolver(const SparseTensor& a, const SolveOptions& options);

  /// b [Bb, n, k] with Bb in {1, B}; returns float64 [B, n, k] solving A x = b (or A^T x = b).
  /// `info` gets the worst status, the largest residual and iteration count.
  at::Tensor solve(const at::Tensor& b, bool transpose, SolveInfo& info);

  const SparseTensor& matrix() const { return a_; }

 private:
  struct Element {
    std::unique_ptr<Factorization> factor;      // direct backends
    std::unique_ptr<IterativeSolver> iterative; // iterative backends (native, eigen)
    Method method = Method::Auto;               // the method that ran (after any fallback)
    std::string message;
  };
  void prepare_direct(int64_t index, Element& e);
  at::Tensor solve_element(int64_t index, const at::Tensor& b, bool transpose, SolveInfo& info);
  at::Tensor solve_iterative(Element& e, const at::Tensor& b, bool transpose, SolveInfo& info);

  SparseTensor a_;        // detached, float64
  SolveOptions options_;
  SolverChoice choice_;
  std::vector<Element> elements_;
};

/// Folds one outcome into an aggregate: the worst status, the max residual and iterations.
void merge_info(SolveInfo& total, const SolveInfo& part);

}  // namespace tessera::sla::detail
