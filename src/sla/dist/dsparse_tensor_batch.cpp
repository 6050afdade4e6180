// Batched values on one distributed pattern: every operation maps over the batch with the
// shared halo plan (DSparseTensor::with_values) and stacks the results.

#include "tessera/sla/dist/dsparse_tensor_batch.h"

#include <ATen/ATen.h>

#include "tessera/core/error.h"
#include "tessera/sla/dist/deigsh.h"
#include "tessera/sla/dist/dlogdet.h"
#include "tessera/sla/dist/dsolve.h"

namespace tessera::sla {

DSparseTensorBatch::DSparseTensorBatch(const DSparseTensor& pattern, const at::Tensor& values)
    : pattern_(pattern), values_(values) {
  TESSERA_CHECK(values.dim() == 2 && values.size(1) == pattern.values().numel(), DimensionMismatch,
                "DSparseTensorBatch: values must be [B, ", pattern.values().numel(), "] on rank ",
                pattern.comm()->rank(), ", got ", values.sizes());
}

DSparseTensorBatch DSparseTensorBatch::from_global(std::shared_ptr<dist::Communicator> comm,
                                                   const RowPartition& partition, const SparseTensor& global) {
  const int64_t nnz = global.nnz();
  at::Tensor values = global.values().reshape({-1, nnz});
  // which global entries each rank keeps: distribute their positions 0..nnz-1 (exact in float64)
  DSparseTensor positions = DSparseTensor::from_global(
      comm, partition, global.with_values(at::arange(nnz, at::TensorOptions().dtype(at::kDouble))));
  at::Tensor entries = positions.values().to(at::kLong);
  DSparseTensor pattern = positions.with_values(values.select(0, 0).detach().index_select(0, entries));
  return DSparseTensorBatch(pattern, values.index_select(1, entries));   // differentiable selection
}

DSparseTensor DSparseTensorBatch::operator[](int64_t b) const { return pattern_.with_values(values_.select(0, b)); }

void DSparseTensorBatch::check_batch(const at::Tensor& t, const char* op) const {
  TESSERA_CHECK(t.defined() && t.dim() >= 2 && t.size(0) == batch_size(), DimensionMismatch, op, ": expected [",
                batch_size(), ", owned, ...], got ", t.defined() ? t.sizes() : at::IntArrayRef{});
}

at::Tensor DSparseTensorBatch::matvec(const at::Tensor& x) const {
  check_batch(x, "DSparseTensorBatch::matvec");
  std::vector<at::Tensor> y;
  for (int64_t b = 0; b < batch_size(); ++b) y.push_back((*this)[b].matvec(x.select(0, b)));   // y_b = A_b x_b
  return at::stack(y, 0);
}

at::Tensor DSparseTensorBatch::rmatvec(const at::Tensor& x) const {
  check_batch(x, "DSparseTensorBatch::rmatvec");
  std::vector<at::Tensor> y;
  for (int64_t b = 0; b < batch_size(); ++b) y.push_back((*this)[b].rmatvec(x.select(0, b)));  // y_b = A_b^T x_b
  return at::stack(y, 0);
}

std::pair<at::Tensor, std::vector<SolveInfo>> DSparseTensorBatch::solve(const at::Tensor& rhs,
                                                                        const SolveOptions& options) const {
  check_batch(rhs, "DSparseTensorBatch::solve");
  std::vector<at::Tensor> xs;
  std::vector<SolveInfo> infos;
  for (int64_t b = 0; b < batch_size(); ++b) {
    auto [x, info] = dsolve((*this)[b], rhs.select(0, b), options);   // x_b = A_b^{-1} b_b
    xs.push_back(x);
    infos.push_back(info);
  }
  return {at::stack(xs, 0), infos};
}

std::pair<std::pair<at::Tensor, at::Tensor>, std::vector<EigshInfo>> DSparseTensorBatch::eigsh(
    const EigshOptions& options) const {
  std::vector<at::Tensor> values, vectors;
  std::vector<EigshInfo> infos;
  for (int64_t b = 0; b < batch_size(); ++b) {
    EigshResult r = deigsh((*this)[b], options);
    values.push_back(r.eigenvalues);
    vectors.push_back(r.eigenvectors);
    infos.push_back(r.info);
  }
  return {{at::stack(values, 0), at::stack(vectors, 0)}, infos};
}

std::pair<std::pair<at::Tensor, at::Tensor>, std::vector<DetInfo>> DSparseTensorBatch::slogdet(
    const DetOptions& options) const {
  std::vector<at::Tensor> signs, logs;
  std::vector<DetInfo> infos;
  for (int64_t b = 0; b < batch_size(); ++b) {
    SlogdetResult r = dslogdet((*this)[b], options);
    signs.push_back(r.sign);
    logs.push_back(r.logabsdet);
    infos.push_back(r.info);
  }
  return {{at::stack(signs, 0), at::stack(logs, 0)}, infos};
}

}  // namespace tessera::sla
