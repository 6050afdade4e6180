#pragma once
/// @file dsparse_tensor_batch.h
/// Several matrices with one distributed pattern: values [B, nnz_local] on each rank over
/// the rows, halo plan and partition of one DSparseTensor (built once). Products, solves,
/// eigsh and logdet map over the batch element by element and stay differentiable in the
/// values (and in the right-hand sides): the distributed counterpart of a SparseTensor with
/// batched values.
///
/// @code
///   auto batch = tessera::sla::DSparseTensorBatch::from_global(comm, part, A_batched);  // values [B, nnz]
///   at::Tensor y = batch.matvec(x);                        // x, y [B, owned]
///   auto [xs, infos] = batch.solve(b, options);            // b [B, owned]
/// @endcode

#include <ATen/core/Tensor.h>

#include <utility>
#include <vector>

#include "tessera/sla/determinant.h"
#include "tessera/sla/dist/dsparse_tensor.h"
#include "tessera/sla/eigsh.h"
#include "tessera/sla/solve_options.h"

namespace tessera::sla {

class DSparseTensorBatch {
 public:
  /// `values` [B, nnz_local]: the local values of B matrices on `pattern`'s distribution.
  DSparseTensorBatch(const DSparseTensor& pattern, const at::Tensor& values);
  /// Every rank holds the same global matrix with batched values ([B, nnz] or [*batch, nnz],
  /// flattened to B); each rank keeps its rows' values, a differentiable selection of the
  /// global values. One halo plan for the whole batch.
  static DSparseTensorBatch from_global(std::shared_ptr<dist::Communicator> comm, const RowPartition& partition,
                                        const SparseTensor& global);

  int64_t batch_size() const { return values_.size(0); }
  const at::Tensor& values() const { return values_; }
  const DSparseTensor& pattern() const { return pattern_; }
  /// Matrix b of the batch (shares the halo plan).
  DSparseTensor operator[](int64_t b) const;

  /// y_b = A_b x_b; x [B, owned] or [B, owned, k].
  at::Tensor matvec(const at::Tensor& x) const;
  /// y_b = A_b^T x_b.
  at::Tensor rmatvec(const at::Tensor& x) const;
  /// x_b = A_b^{-1} b_b by dsolve; b [B, owned] or [B, owned, k]; one SolveInfo per element.
  std::pair<at::Tensor, std::vector<SolveInfo>> solve(const at::Tensor& b, const SolveOptions& options = {}) const;
  /// deigsh of every element: eigenvalues [B, k], eigenvectors [B, owned, k].
  std::pair<std::pair<at::Tensor, at::Tensor>, std::vector<EigshInfo>> eigsh(const EigshOptions& options = {}) const;
  /// dslogdet of every element: sign [B], log|det| [B].
  std::pair<std::pair<at::Tensor, at::Tensor>, std::vector<DetInfo>> slogdet(const DetOptions& options = {}) const;

 private:
  void check_batch(const at::Tensor& t, const char* op) const;
  DSparseTensor pattern_;
  at::Tensor values_;  // [B, nnz_local]
};

}  // namespace tessera::sla
