#pragma once
// Row access for the AMG set-up, the same for a CSR matrix and a matrix-free stencil form:
// view.for_each(i, f) calls f(col, value) for row i's stored entries in ascending column
// order, view.length(i) counts them. The set-up reads the finest level of a
// constant-coefficient operator through the stencil view, so it never needs a CSR copy
// (the terms arrive in the same order, so the hierarchy is the same bit for bit); the cycle's
// row kernels read any level through it.

#include <cstdint>

#include "sla/kernels/spmv.h"
#include "sla/precond/csr_data.h"

namespace tessera::sla::detail {

template <typename I>
struct CsrRowView {
  const I* rp;
  const I* ci;
  const double* va;
  int64_t length(int64_t i) const { return static_cast<int64_t>(rp[i + 1] - rp[i]); }
  template <typename F>
  void for_each(int64_t i, F&& f) const {
    for (I p = rp[i]; p < rp[i + 1]; ++p) f(static_cast<int64_t>(ci[p]), va[p]);
  }
};

/// ND > 0: exactly ND diagonals (unrolled, as the SpMV kernel's 5- and 7-point cases); 0: nd.
template <int ND>
struct StencilRowView {
  int64_t off[8];
  double coeff[8];
  int nd = 0;
  const uint8_t* mask = nullptr;
  int64_t length(int64_t i) const { return __builtin_popcount(mask[i]); }
  template <typename F>
  void for_each(int64_t i, F&& f) const {
    const int n = ND > 0 ? ND : nd;
    const unsigned m = mask[i];
    if (m == (1u << n) - 1u) {                      // every diagonal (interior rows)
      for (int d = 0; d < n; ++d) f(i + off[d], coeff[d]);
      return;
    }
    for (int d = 0; d < n; ++d) {
      if (m >> d & 1u) f(i + off[d], coeff[d]);   // a_{i, i + o_d} = c_d
    }
  }
};

/// Calls f(view) with the row view of `a`: StencilRowView when its product runs in stencil
/// form (a matrix-free operator, or a CSR one with a stencil form: 1 byte per row read instead
/// of the CSR's 12 per entry, the same entries in the same order), else CsrRowView<int32_t or
/// int64_t>.
template <typename F>
void with_rows(const CsrData& a, F&& f) {
  if (a.plan && a.plan->uses_stencil()) {
    const StencilForm& s = a.plan->stencil();
    auto run = [&]<int ND>() {
      StencilRowView<ND> v;
      v.nd = static_cast<int>(s.offsets.size());
      for (int d = 0; d < v.nd; ++d) {
        v.off[d] = s.offsets[d];
        v.coeff[d] = s.coeffs[d];
      }
      v.mask = s.mask.data_ptr<uint8_t>();
      f(v);
    };
    if (s.offsets.size() == 5) {
      run.template operator()<5>();
    } else if (s.offsets.size() == 7) {
      run.template operator()<7>();
    } else {
      run.template operator()<0>();
    }
  } else if (a.row_ptr.scalar_type() == at::kInt) {
    f(CsrRowView<int32_t>{a.row_ptr.data_ptr<int32_t>(), a.col_idx.data_ptr<int32_t>(), a.values.data_ptr<double>()});
  } else {
    f(CsrRowView<int64_t>{a.row_ptr.data_ptr<int64_t>(), a.col_idx.data_ptr<int64_t>(), a.values.data_ptr<double>()});
  }
}

}  // namespace tessera::sla::detail
