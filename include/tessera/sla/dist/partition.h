#pragma once
/// @file partition.h
/// Which rank owns which rows of a distributed sparse matrix.
///
/// @code
///   auto p = tessera::sla::RowPartition::contiguous(n, comm->size());   // blocks of rows
///   auto q = tessera::sla::RowPartition::metis(A, comm->size());       // graph partition
///   at::Tensor mine = p.rows_of(comm->rank());                         // sorted global ids
/// @endcode

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace tessera::sla {
class SparseTensor;

class RowPartition {
 public:
  RowPartition() = default;
  /// Contiguous blocks whose sizes differ by at most one (first n mod P blocks larger).
  static RowPartition contiguous(int64_t rows, int parts);
  /// Contiguous blocks of the given sizes (sum = rows).
  static RowPartition from_counts(const std::vector<int64_t>& counts);
  /// Any assignment: `owner` is int64 [rows] with values in [0, parts).
  static RowPartition from_owner(const at::Tensor& owner, int parts);
  /// METIS k-way partition of the graph of A + A^T (diagonal ignored); parts = 1 is
  /// contiguous. A must be square.
  static RowPartition metis(const SparseTensor& a, int parts);
  /// Recursive coordinate bisection: coords [rows, d] float; splits the longest extent
  /// at the weighted median until `parts` parts (any positive count, not only powers of 2).
  static RowPartition coordinate_bisection(const at::Tensor& coords, int parts);

  int64_t rows() const { return rows_; }
  int parts() const { return parts_; }
  bool is_contiguous() const { return !owner_.defined(); }
  /// Owner rank of each global row id (int64 in, int64 out).
  at::Tensor owner_of(const at::Tensor& global_rows) const;
  /// Sorted global ids of the rows owned by `part`.
  at::Tensor rows_of(int part) const;
  /// Number of rows owned by every part.
  std::vector<int64_t> counts() const;

 private:
  int64_t rows_ = 0;
  int parts_ = 0;
  std::vector<int64_t> offsets_;  // contiguous: part p owns [offsets_[p], offsets_[p + 1])
  at::Tensor owner_;              // general: owner of every row (undefined when contiguous)
};

}  // namespace tessera::sla
