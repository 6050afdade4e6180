#pragma once
/// @file dsparse_tensor_list.h
/// A list of distributed sparse matrices with different patterns (e.g. one mesh per
/// sample), each distributed over the same communicator; products and solves map over
/// the list and stay differentiable.
///
/// @code
///   tessera::sla::DSparseTensorList list({dA, dB});
///   auto ys = list.matvec({xa, xb});
///   auto [xs, infos] = list.solve({ba, bb}, options);
/// @endcode

#include <ATen/core/Tensor.h>

#include <utility>
#include <vector>

#include "tessera/sla/dist/dsparse_tensor.h"
#include "tessera/sla/solve_options.h"

namespace tessera::sla {

class DSparseTensorList {
 public:
  DSparseTensorList() = default;
  explicit DSparseTensorList(std::vector<DSparseTensor> items);

  size_t size() const { return items_.size(); }
  const DSparseTensor& operator[](size_t i) const { return items_.at(i); }

  /// y_i = A_i x_i (collective for every i).
  std::vector<at::Tensor> matvec(const std::vector<at::Tensor>& x) const;
  /// y_i = A_i^T x_i.
  std::vector<at::Tensor> rmatvec(const std::vector<at::Tensor>& x) const;
  /// x_i = A_i^{-1} b_i with the distributed Krylov solve; differentiable.
  std::pair<std::vector<at::Tensor>, std::vector<SolveInfo>> solve(const std::vector<at::Tensor>& b,
                                                                   const SolveOptions& options = {}) const;

 private:
  void check_count(size_t n, const char* op) const;
  std::vector<DSparseTensor> items_;
};

}  // namespace tessera::sla
