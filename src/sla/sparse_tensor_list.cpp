// SparseTensorList: block-diagonal conversion and the operations mapped over the list.

#include "tessera/sla/sparse_tensor_list.h"

#include <ATen/ATen.h>

#include "tessera/core/error.h"

namespace tessera::sla {

SparseTensorList::SparseTensorList(std::vector<SparseTensor> items) : items_(std::move(items)) {
  for (size_t i = 1; i < items_.size(); ++i) {
    TESSERA_CHECK(items_[i].dtype() == items_[0].dtype() && items_[i].batch_shape() == items_[0].batch_shape(),
                  InvalidInput, "SparseTensorList: item ", i, " has dtype ", items_[i].dtype(), " and batch ",
                  at::IntArrayRef(items_[i].batch_shape()), " but item 0 has ", items_[0].dtype(), " and ",
                  at::IntArrayRef(items_[0].batch_shape()));
  }
}

void SparseTensorList::check_count(size_t n, const char* op) const {
  TESSERA_CHECK(n == items_.size(), DimensionMismatch, "SparseTensorList::", op, ": ", n,
                " operands for ", items_.size(), " matrices");
}

SparseTensor SparseTensorList::to_block_diagonal() const {
  TESSERA_CHECK(!items_.empty(), InvalidInput, "SparseTensorList::to_block_diagonal: the list is empty");
  std::vector<at::Tensor> row_ptrs{at::zeros({1}, at::kLong)}, cols, values;
  int64_t rows = 0, ncols = 0, nnz = 0;
  for (const SparseTensor& a : items_) {
    at::Tensor rp = a.row_ptr().to(at::kCPU, at::kLong);
    row_ptrs.push_back(rp.narrow(0, 1, a.rows()) + nnz);          // row_ptr shifted by the entries before
    cols.push_back(a.col_idx().to(at::kCPU, at::kLong) + ncols);  // columns shifted by the block's offset
    values.push_back(a.values());
    rows += a.rows();
    ncols += a.cols();
    nnz += a.nnz();
  }
  const int64_t last = items_[0].values().dim() - 1;
  at::Tensor v = at::cat(values, last);   // differentiable: each block's gradient is its slice
  const auto device = items_[0].values().device();
  return SparseTensor::from_csr(at::cat(row_ptrs).to(device), at::cat(cols).to(device), v, rows, ncols);
}

SparseTensorList SparseTensorList::from_block_diagonal(const SparseTensor& a, const std::vector<int64_t>& sizes) {
  int64_t total = 0;
  for (int64_t s : sizes) {
    TESSERA_CHECK(s > 0, InvalidInput, "from_block_diagonal: block sizes must be positive");
    total += s;
  }
  TESSERA_CHECK(total == a.rows() && total == a.cols(), InvalidInput, "from_block_diagonal: block sizes add up to ",
                total, " but the matrix is ", a.rows(), " x ", a.cols());
  at::Tensor rp = a.row_ptr().to(at::kCPU, at::kLong), ci = a.col_idx().to(at::kCPU, at::kLong);
  const int64_t last = a.values().dim() - 1;
  std::vector<SparseTensor> items;
  int64_t offset = 0;
  for (int64_t s : sizes) {
    const int64_t begin = rp[offset].item<int64_t>(), end = rp[offset + s].item<int64_t>();
    at::Tensor cols = ci.narrow(0, begin, end - begin) - offset;
    TESSERA_CHECK(cols.numel() == 0 || (cols.min().item<int64_t>() >= 0 && cols.max().item<int64_t>() < s),
                  InvalidInput, "from_block_diagonal: rows ", offset, "..", offset + s - 1,
                  " have entries outside their diagonal block");
    at::Tensor local_rp = rp.narrow(0, offset, s + 1) - begin;
    const auto device = a.values().device();
    items.push_back(SparseTensor::from_csr(local_rp.to(device), cols.to(device),
                                           a.values().narrow(last, begin, end - begin), s, s));
    offset += s;
  }
  return SparseTensorList(std::move(items));
}

std::vector<at::Tensor> SparseTensorList::matvec(const std::vector<at::Tensor>& x) const {
  check_count(x.size(), "matvec");
  std::vector<at::Tensor> y;
  for (size_t i = 0; i < items_.size(); ++i) y.push_back(sla::matvec(items_[i], x[i]));   // y_i = A_i x_i
  return y;
}

std::pair<std::vector<at::Tensor>, std::vector<SolveInfo>> SparseTensorList::solve(const std::vector<at::Tensor>& b,
                                                                                   const SolveOptions& options) const {
  check_count(b.size(), "solve");
  std::pair<std::vector<at::Tensor>, std::vector<SolveInfo>> out;
  for (size_t i = 0; i < items_.size(); ++i) {
    auto [x, info] = sla::solve(items_[i], b[i], options);   // x_i = A_i^{-1} b_i
    out.first.push_back(x);
    out.second.push_back(info);
  }
  return out;
}

std::vector<EigshResult> SparseTensorList::eigsh(const EigshOptions& options) const {
  std::vector<EigshResult> out;
  for (const SparseTensor& a : items_) out.push_back(sla::eigsh(a, options));
  return out;
}

std::pair<at::Tensor, std::vector<DetInfo>> SparseTensorList::logdet(const DetOptions& options) const {
  TESSERA_CHECK(!items_.empty(), InvalidInput, "SparseTensorList::logdet: the list is empty");
  std::vector<at::Tensor> values;
  std::vector<DetInfo> infos;
  for (const SparseTensor& a : items_) {
    auto [ld, info] = sla::logdet(a, options);
    values.push_back(ld);
    infos.push_back(info);
  }
  return {at::stack(values), infos};
}

}  // namespace tessera::sla
