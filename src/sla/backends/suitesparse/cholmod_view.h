#pragma once
// A CHOLMOD view of tessera's int64 CSR matrix (no copy; CHOLMOD does not modify its input).

#include <cholmod.h>

#include <cstring>

#include "tessera/sla/backends/direct_backend.h"

namespace tessera::sla::backends::detail {

/// CSR of A read column-major is A^T; with stype = +1 CHOLMOD reads its upper triangle,
/// i.e. the lower triangle of A (A symmetric: the whole matrix).
inline cholmod_sparse cholmod_view(const CsrMatrix& a) {
  cholmod_sparse m;
  std::memset(&m, 0, sizeof(m));
  m.nrow = static_cast<size_t>(a.cols);
  m.ncol = static_cast<size_t>(a.rows);
  m.nzmax = static_cast<size_t>(a.values.numel());
  m.p = a.row_ptr.data_ptr<int64_t>();
  m.i = a.col_idx.data_ptr<int64_t>();
  m.x = a.values.data_ptr<double>();
  m.stype = 1;
  m.itype = CHOLMOD_LONG;
  m.xtype = CHOLMOD_REAL;
  m.dtype = CHOLMOD_DOUBLE;
  m.sorted = 1;
  m.packed = 1;
  return m;
}

}  // namespace tessera::sla::backends::detail
