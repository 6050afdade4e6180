// MatrixMarket writer: coordinate (general or symmetric lower triangle) and array files.

#include <ATen/ATen.h>

#include <cstdio>
#include <memory>

#include "tessera/core/error.h"
#include "tessera/sla/matrix_market.h"

namespace tessera::sla {
namespace {

using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

File open_for_writing(const std::string& path) {
  File f(std::fopen(path.c_str(), "w"), &std::fclose);
  TESSERA_CHECK(f != nullptr, InvalidInput, "cannot write MatrixMarket file '", path, "'");
  return f;
}

}  // namespace

void write_matrix_market(const std::string& path, const SparseTensor& a, bool symmetric) {
  TESSERA_CHECK(a.batch_size() == 1 && a.values().dim() == 1, Unsupported,
                "write_matrix_market writes one matrix, not a batch");
  CsrMatrix m = a.to_csr_matrix();
  at::Tensor row = a.row_indices().cpu(), col = m.col_idx;
  at::Tensor keep = symmetric ? (row >= col).nonzero().flatten() : at::arange(a.nnz(), at::kLong);
  if (symmetric) {
    TESSERA_CHECK(a.rows() == a.cols(), InvalidInput, "symmetric storage needs a square matrix");
    const SparseTensor t = a.transpose();
    TESSERA_CHECK(at::equal(t.col_idx().cpu(), a.col_idx().cpu()) &&
                      at::equal(t.values().detach().cpu(), a.values().detach().cpu()),
                  InvalidInput, "write_matrix_market(symmetric): the matrix is not symmetric");
  }
  File f = open_for_writing(path);
  std::fprintf(f.get(), "%%%%MatrixMarket matrix coordinate real %s\n", symmetric ? "symmetric" : "general");
  std::fprintf(f.get(), "%% written by tessera\n");
  std::fprintf(f.get(), "%lld %lld %lld\n", static_cast<long long>(a.rows()), static_cast<long long>(a.cols()),
               static_cast<long long>(keep.size(0)));
  const int64_t* r = row.data_ptr<int64_t>();
  const int64_t* c = col.data_ptr<int64_t>();
  const double* v = m.values.data_ptr<double>();
  const int64_t* k = keep.data_ptr<int64_t>();
  for (int64_t e = 0; e < keep.size(0); ++e) {
    const int64_t p = k[e];
    std::fprintf(f.get(), "%lld %lld %.17g\n", static_cast<long long>(r[p] + 1), static_cast<long long>(c[p] + 1),
                 v[p]);
  }
  TESSERA_CHECK(std::ferror(f.get()) == 0, InvalidInput, "error while writing '", path, "'");
}

void write_dense_matrix_market(const std::string& path, const at::Tensor& dense) {
  TESSERA_CHECK(dense.dim() == 1 || dense.dim() == 2, InvalidInput, "write_dense_matrix_market: [rows] or [rows, cols]");
  at::Tensor d = dense.detach().to(at::kCPU, at::kDouble);
  if (d.dim() == 1) d = d.unsqueeze(1);
  at::Tensor column_major = d.t().contiguous();   // the file lists column after column
  File f = open_for_writing(path);
  std::fprintf(f.get(), "%%%%MatrixMarket matrix array real general\n");
  std::fprintf(f.get(), "%lld %lld\n", static_cast<long long>(d.size(0)), static_cast<long long>(d.size(1)));
  const double* v = column_major.data_ptr<double>();
  for (int64_t e = 0; e < column_major.numel(); ++e) std::fprintf(f.get(), "%.17g\n", v[e]);
  TESSERA_CHECK(std::ferror(f.get()) == 0, InvalidInput, "error while writing '", path, "'");
}

}  // namespace tessera::sla
