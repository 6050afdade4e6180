#pragma once
// Test helpers for the backend conformance suites: CSR from dense ATen matrices, random
// SPD / symmetric indefinite / general matrices, a 2D Poisson generator, a CSR matvec and
// a minimal MatrixMarket coordinate reader (tests only; the library's reader lives in sla).

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/sla/backends/direct_backend.h"

namespace tessera::sla::testing {

/// CSR from (row, col) -> value entries (sorted by the map, duplicates already summed).
inline CsrMatrix csr_from_entries(int64_t n, const std::map<std::pair<int64_t, int64_t>, double>& entries) {
  CsrMatrix a;
  a.rows = a.cols = n;
  a.row_ptr = at::zeros({n + 1}, at::kLong);
  a.col_idx = at::empty({static_cast<int64_t>(entries.size())}, at::kLong);
  a.values = at::empty({static_cast<int64_t>(entries.size())}, at::kDouble);
  auto* rp = a.row_ptr.data_ptr<int64_t>();
  auto* ci = a.col_idx.data_ptr<int64_t>();
  auto* v = a.values.data_ptr<double>();
  int64_t p = 0;
  for (const auto& [ij, value] : entries) {
    rp[ij.first + 1]++;
    ci[p] = ij.second;
    v[p++] = value;
  }
  for (int64_t i = 0; i < n; ++i) rp[i + 1] += rp[i];
  return a;
}

/// CSR of the non-zeros of a dense float64 [n, n] tensor.
inline CsrMatrix csr_from_dense(const at::Tensor& dense) {
  at::Tensor d = dense.contiguous();
  const int64_t n = d.size(0);
  const double* x = d.data_ptr<double>();
  std::map<std::pair<int64_t, int64_t>, double> entries;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      if (x[i * n + j] != 0.0) entries[{i, j}] = x[i * n + j];
    }
  }
  return csr_from_entries(n, entries);
}

/// Random sparse mask times Gaussian entries.
inline at::Tensor random_sparse(int64_t n, double density) {
  return at::randn({n, n}, at::kDouble) * (at::rand({n, n}, at::kDouble) < density).to(at::kDouble);
}

/// SPD without diagonal dominance: A = M M^T + 0.1 I, symmetrised exactly.
inline CsrMatrix random_spd(int64_t n, double density) {
  at::Tensor m = random_sparse(n, density) + at::eye(n, at::kDouble);
  at::Tensor a = at::matmul(m, m.t()) + 0.1 * at::eye(n, at::kDouble);
  return csr_from_dense(0.5 * (a + a.t()));
}

/// Symmetric indefinite and non-singular: S + S^T with diagonal +-(|row sum| + 1), alternating.
inline CsrMatrix random_symmetric_indefinite(int64_t n, double density) {
  at::Tensor s = random_sparse(n, density);
  s = s + s.t();
  s.fill_diagonal_(0.0);
  at::Tensor d = s.abs().sum(1) + 1.0;
  at::Tensor sign = at::ones({n}, at::kDouble);
  sign.index_put_({at::arange(1, n, 2)}, -1.0);
  return csr_from_dense(s + at::diag(d * sign));
}

/// Non-symmetric, rows permuted so that LU must pivot: P (R + 5 I).
inline CsrMatrix random_general(int64_t n, double density) {
  at::Tensor a = random_sparse(n, density) + 5.0 * at::eye(n, at::kDouble);
  return csr_from_dense(a.index_select(0, at::randperm(n, at::kLong)));
}

/// 2D Poisson, 5-point, Dirichlet, on an m x m grid (n = m^2): 4 on the diagonal, -1 off.
/// `convection` adds c to the east and -c to the west neighbour (non-symmetric for c != 0).
inline CsrMatrix poisson2d(int64_t m, double convection = 0.0) {
  std::map<std::pair<int64_t, int64_t>, double> e;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      const int64_t r = i * m + j;
      e[{r, r}] = 4.0;
      if (i > 0) e[{r, r - m}] = -1.0;
      if (i + 1 < m) e[{r, r + m}] = -1.0;
      if (j > 0) e[{r, r - 1}] = -1.0 - convection;
      if (j + 1 < m) e[{r, r + 1}] = -1.0 + convection;
    }
  }
  return csr_from_entries(m * m, e);
}

/// y = A x (or A^T x) for x [n] or [n, k], in float64.
inline at::Tensor csr_apply(const CsrMatrix& a, const at::Tensor& x, bool transpose) {
  at::Tensor x2 = (x.dim() == 1 ? x.unsqueeze(1) : x).contiguous();
  const int64_t k = x2.size(1);
  at::Tensor y = at::zeros({a.rows, k}, at::kDouble);
  const auto* rp = a.row_ptr.data_ptr<int64_t>();
  const auto* ci = a.col_idx.data_ptr<int64_t>();
  const auto* v = a.values.data_ptr<double>();
  const double* xs = x2.data_ptr<double>();
  double* ys = y.data_ptr<double>();
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t p = rp[i]; p < rp[i + 1]; ++p) {
      for (int64_t c = 0; c < k; ++c) {
        if (transpose) {
          ys[ci[p] * k + c] += v[p] * xs[i * k + c];  // y_j += a_ij x_i
        } else {
          ys[i * k + c] += v[p] * xs[ci[p] * k + c];  // y_i += a_ij x_j
        }
      }
    }
  }
  return x.dim() == 1 ? y.squeeze(1) : y;
}

/// max over columns of ||op(A) x - b|| / ||b||.
inline double relative_residual(const CsrMatrix& a, const at::Tensor& x, const at::Tensor& b, bool transpose) {
  at::Tensor r = csr_apply(a, x, transpose) - b;
  if (b.dim() == 1) return (r.norm() / b.norm()).item<double>();
  return (r.norm(2, {0}) / b.norm(2, {0})).max().item<double>();
}

/// Minimal MatrixMarket reader: coordinate real/integer/pattern, general/symmetric
/// (symmetric files hold one triangle: mirrored here). `unit_values` sets every value to 1.
inline CsrMatrix read_matrix_market(const std::string& path, bool unit_values = false) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::string line;
  std::getline(in, line);
  std::istringstream header(line);
  std::string banner, object, format, field, symmetry;
  header >> banner >> object >> format >> field >> symmetry;
  if (banner != "%%MatrixMarket" || format != "coordinate") throw std::runtime_error("bad header in " + path);
  const bool pattern = field == "pattern";
  const bool symmetric = symmetry == "symmetric";
  while (std::getline(in, line) && (line.empty() || line[0] == '%')) {
  }
  int64_t rows = 0, cols = 0, count = 0;
  std::istringstream(line) >> rows >> cols >> count;
  std::map<std::pair<int64_t, int64_t>, double> entries;
  for (int64_t e = 0; e < count; ++e) {
    int64_t i = 0, j = 0;
    double value = 1.0;
    if (!(in >> i >> j)) throw std::runtime_error("missing entries in " + path);
    if (!pattern) in >> value;
    if (unit_values) value = 1.0;
    entries[{i - 1, j - 1}] += value;
    if (symmetric && i != j) entries[{j - 1, i - 1}] += value;
  }
  if (rows != cols) throw std::runtime_error(path + " is not square");
  return csr_from_entries(rows, entries);
}

inline std::string matrix_path(const std::string& name) {
  return std::string(TESSERA_SHARED_DATA) + "/matrices/" + name;
}

}  // namespace tessera::sla::testing
