#pragma once
/// @file dsparse_tensor.h
/// A sparse matrix distributed by rows over the ranks of a communicator, with halo
/// exchange for products and its transpose for gradients.
///
/// Each rank holds its owned rows in local numbering (owned columns, then halo columns;
/// see HaloPlan). Vectors are distributed the same way: rank r holds the entries of
/// `partition.rows_of(r)`, in ascending global order.
///
/// @code
///   auto comm = tessera::dist::world();
///   auto part = tessera::sla::RowPartition::contiguous(A.rows(), comm->size());
///   auto dA = tessera::sla::DSparseTensor::from_global(comm, part, A);
///   at::Tensor x = dA.scatter(global_x);           // this rank's entries
///   at::Tensor y = dA.matvec(x);                   // differentiable in dA.values() and x
///   y.pow(2).sum().backward();                     // every rank calls backward
/// @endcode
///
/// Values are a single (unbatched) vector per rank (DSparseTensorBatch holds several on one
/// pattern). Every rank must take part in every product and in every backward pass (they
/// are collective). Beyond products and dsolve: deigsh, dslogdet, dnonlinear_solve.

#include <ATen/core/Tensor.h>

#include <memory>

#include "tessera/dist/communicator.h"
#include "tessera/sla/dist/halo_plan.h"
#include "tessera/sla/dist/partition.h"
#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla {

class DSparseTensor {
 public:
  /// Each rank passes only its own rows: `local_rows` is [owned x n] with GLOBAL column
  /// indices, rows in the order of partition.rows_of(rank). No global matrix is formed.
  static DSparseTensor from_local_rows(std::shared_ptr<dist::Communicator> comm,
                                       const RowPartition& partition, const SparseTensor& local_rows);
  /// Every rank holds the same global matrix and keeps its rows; the local values are an
  /// index_select of `global.values()`, so gradients reach the global values.
  static DSparseTensor from_global(std::shared_ptr<dist::Communicator> comm,
                                   const RowPartition& partition, const SparseTensor& global);
  /// Rank `root` holds the global matrix (others pass an empty SparseTensor); each rank
  /// receives its rows. Local values are new leaves.
  static DSparseTensor scatter_from_root(std::shared_ptr<dist::Communicator> comm,
                                         const RowPartition& partition, const SparseTensor& global,
                                         int root = 0);

  int64_t rows() const { return partition_.rows(); }
  int64_t owned_rows() const { return plan_->owned; }
  const RowPartition& partition() const { return partition_; }
  const HaloPlan& plan() const { return *plan_; }
  const std::shared_ptr<dist::Communicator>& comm() const { return comm_; }
  /// Global nnz (collective).
  int64_t global_nnz() const;
  /// This rank's stored values [nnz_local] in the order of its local rows (autograd leaf or
  /// derived from the global values).
  const at::Tensor& values() const { return values_; }
  /// Row (local) and column (local numbering) of every local value.
  const at::Tensor& local_rows_index() const { return local_row_; }
  const at::Tensor& local_cols_index() const { return plan_->local_col_idx; }
  /// The diagonal block [owned x owned] (owned columns only): block-Jacobi's block.
  const SparseTensor& interior() const { return interior_; }
  /// Same distribution and pattern, other local values.
  DSparseTensor with_values(const at::Tensor& values) const;

  /// y = A x on owned rows: starts the halo exchange, multiplies the interior block
  /// while messages travel, then adds the halo block. x [owned] or [owned, k].
  at::Tensor matvec(const at::Tensor& x_owned) const;
  /// y = A^T x: local transposed products, halo contributions sent back to their owners.
  at::Tensor rmatvec(const at::Tensor& x_owned) const;
  /// Owned part of the main diagonal.
  at::Tensor diagonal() const;

  /// This rank's entries of a global vector given on every rank (or on `root` only when
  /// from_root is true: broadcast first).
  at::Tensor scatter(const at::Tensor& global, bool from_root = false, int root = 0) const;
  /// The global vector on every rank (all-gather, then global order).
  at::Tensor gather_all(const at::Tensor& owned) const;

 private:
  DSparseTensor() = default;
  static DSparseTensor build(std::shared_ptr<dist::Communicator> comm, const RowPartition& partition,
                             const at::Tensor& local_row, const at::Tensor& global_col,
                             const at::Tensor& values, int64_t owned);
  void split_blocks();

  std::shared_ptr<dist::Communicator> comm_;
  RowPartition partition_;
  std::shared_ptr<const HaloPlan> plan_;
  at::Tensor values_;     // [nnz_local]
  at::Tensor local_row_;  // int64 [nnz_local]
  SparseTensor interior_; // owned x owned
  SparseTensor exterior_; // owned x halo
  at::Tensor interior_entries_, exterior_entries_;  // positions in values_
};

}  // namespace tessera::sla
