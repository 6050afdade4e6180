#include "tessera/sla/dist/dsparse_tensor_list.h"

#include "tessera/core/error.h"
#include "tessera/sla/dist/dsolve.h"

namespace tessera::sla {

DSparseTensorList::DSparseTensorList(std::vector<DSparseTensor> items) : items_(std::move(items)) {
  for (const auto& item : items_) {
    TESSERA_CHECK(item.comm() == items_.front().comm(), InvalidInput,
                  "every matrix of a DSparseTensorList must use the same communicator");
  }
}

void DSparseTensorList::check_count(size_t n, const char* op) const {
  TESSERA_CHECK(n == items_.size(), DimensionMismatch, op, ": ", n, " vectors for ", items_.size(),
                " matrices");
}

std::vector<at::Tensor> DSparseTensorList::matvec(const std::vector<at::Tensor>& x) const {
  check_count(x.size(), "DSparseTensorList::matvec");
  std::vector<at::Tensor> y;
  for (size_t i = 0; i < items_.size(); ++i) y.push_back(items_[i].matvec(x[i]));
  return y;
}

std::vector<at::Tensor> DSparseTensorList::rmatvec(const std::vector<at::Tensor>& x) const {
  check_count(x.size(), "DSparseTensorList::rmatvec");
  std::vector<at::Tensor> y;
  for (size_t i = 0; i < items_.size(); ++i) y.push_back(items_[i].rmatvec(x[i]));
  return y;
}

std::pair<std::vector<at::Tensor>, std::vector<SolveInfo>> DSparseTensorList::solve(
    const std::vector<at::Tensor>& b, const SolveOptions& options) const {
  check_count(b.size(), "DSparseTensorList::solve");
  std::vector<at::Tensor> xs;
  std::vector<SolveInfo> infos;
  for (size_t i = 0; i < items_.size(); ++i) {
    auto [x, info] = dsolve(items_[i], b[i], options);
    xs.push_back(x);
    infos.push_back(info);
  }
  return {xs, infos};
}

}  // namespace tessera::sla
