#include "dist/tensor_checks.h"

#include <numeric>

#include "tessera/core/error.h"

namespace tessera::dist::detail {

void check_comm_tensor(const at::Tensor& t, const char* op) {
  TESSERA_CHECK(t.defined(), InvalidInput, op, ": tensor is undefined");
  TESSERA_CHECK(t.device().is_cpu(), Unsupported, op, ": only CPU tensors can be communicated, got ",
                t.device());
  TESSERA_CHECK(t.is_contiguous(), InvalidInput, op, ": tensor must be contiguous");
  auto s = t.scalar_type();
  TESSERA_CHECK(s == at::kFloat || s == at::kDouble || s == at::kInt || s == at::kLong, Unsupported,
                op, ": dtype ", s, " is not one of float32, float64, int32, int64");
  TESSERA_CHECK(t.dim() >= 1, InvalidInput, op, ": tensor must have at least one dimension");
}

int64_t row_elements(const at::Tensor& t) {
  int64_t n = 1;
  for (int64_t d = 1; d < t.dim(); ++d) n *= t.size(d);
  return n;
}

std::vector<int64_t> shape_with_rows(const at::Tensor& like, int64_t rows) {
  std::vector<int64_t> shape(like.sizes().begin(), like.sizes().end());
  shape[0] = rows;
  return shape;
}

void check_counts(const std::vector<int64_t>& counts, int size, const char* op) {
  TESSERA_CHECK(static_cast<int>(counts.size()) == size, InvalidInput, op, ": ", counts.size(),
                " row counts given for ", size, " ranks");
  for (int64_t c : counts) TESSERA_CHECK(c >= 0, InvalidInput, op, ": negative row count ", c);
}

int64_t sum(const std::vector<int64_t>& counts) {
  return std::accumulate(counts.begin(), counts.end(), int64_t{0});
}

}  // namespace tessera::dist::detail
