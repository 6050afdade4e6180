#pragma once
/// @file sparse_tensor_list.h
/// A batch of sparse matrices with different patterns (e.g. one mesh per sample). The
/// operations map over the list, each differentiable as for one matrix; the list converts
/// to and from one block-diagonal SparseTensor (differentiably: the block-diagonal values
/// are the concatenation of the blocks' values).
///
/// @code
///   tessera::sla::SparseTensorList list({tessera::sla::poisson2d(8), tessera::sla::poisson2d(12)});
///   auto [xs, infos] = list.solve({b8, b12});
///   at::Tensor ld = list.logdet().first;                   // [2]
///   SparseTensor big = list.to_block_diagonal();           // 208 x 208
///   auto back = SparseTensorList::from_block_diagonal(big, {64, 144});
/// @endcode

#include <ATen/core/Tensor.h>

#include <utility>
#include <vector>

#include "tessera/sla/determinant.h"
#include "tessera/sla/eigsh.h"
#include "tessera/sla/solve.h"
#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla {

class SparseTensorList {
 public:
  SparseTensorList() = default;
  /// Items must share dtype and batch shape (they may differ in size and pattern).
  explicit SparseTensorList(std::vector<SparseTensor> items);

  size_t size() const { return items_.size(); }
  const SparseTensor& operator[](size_t i) const { return items_.at(i); }
  const std::vector<SparseTensor>& items() const { return items_; }

  /// One block-diagonal matrix (rows and cols the sums); values = cat of the values.
  SparseTensor to_block_diagonal() const;
  /// Splits a block-diagonal matrix into blocks of the given square sizes. Throws
  /// InvalidInput when sizes do not add up or an entry lies outside the blocks.
  static SparseTensorList from_block_diagonal(const SparseTensor& a, const std::vector<int64_t>& sizes);

  /// y_i = A_i x_i.
  std::vector<at::Tensor> matvec(const std::vector<at::Tensor>& x) const;
  /// x_i = A_i^{-1} b_i (each with its own dispatch and factorisation).
  std::pair<std::vector<at::Tensor>, std::vector<SolveInfo>> solve(const std::vector<at::Tensor>& b,
                                                                   const SolveOptions& options = {}) const;
  /// eigsh of each matrix.
  std::vector<EigshResult> eigsh(const EigshOptions& options = {}) const;
  /// log det of each matrix, stacked [size()] (with batch shape after it when batched).
  std::pair<at::Tensor, std::vector<DetInfo>> logdet(const DetOptions& options = {}) const;

 private:
  void check_count(size_t n, const char* op) const;
  std::vector<SparseTensor> items_;
};

}  // namespace tessera::sla
