// Fused vector passes of the CPU CG loop (see cg_fused_kernels.h). Every inner product is
// summed in lanes (lane_sums.h): one running sum would make each row wait for the previous
// row's addition.

#include "sla/backends/native/cg_fused_kernels.h"

#include <array>

#include "sla/kernels/lane_sums.h"

namespace tessera::sla::detail {

using Sums1 = std::array<double, 1>;
using Sums2 = std::array<double, 2>;

double blocked_dot(const std::vector<int64_t>& blocks, const double* u, const double* v) {
  return reduce_blocks<double>(blocks, [&](int64_t a, int64_t b) {
    return lane_sums<1>(a, b, [&](int64_t i) { return Sums1{u[i] * v[i]}; })[0];   // sum_i u_i v_i
  });
}

TwoSums blocked_dot2(const std::vector<int64_t>& blocks, const double* u, const double* v, const double* w) {
  return reduce_blocks<TwoSums>(blocks, [&](int64_t a, int64_t b) {
    const Sums2 s = lane_sums<2>(a, b, [&](int64_t i) { return Sums2{u[i] * v[i], u[i] * w[i]}; });   // <u, v>, <u, w>
    return TwoSums{s[0], s[1]};
  });
}

double cg_step(const std::vector<int64_t>& blocks, double* x, double* r, const double* p, const double* q,
               double alpha) {
  return reduce_blocks<double>(blocks, [&](int64_t a, int64_t b) {
    return lane_sums<1>(a, b, [&](int64_t i) {
      x[i] += alpha * p[i];               // x = x + alpha p
      const double ri = r[i] - alpha * q[i];   // r = r - alpha q
      r[i] = ri;
      return Sums1{ri * ri};              // <r, r>
    })[0];
  });
}

TwoSums cg_step_jacobi(const std::vector<int64_t>& blocks, double* x, double* r, double* z, const double* p,
                       const double* q, const double* d, double alpha) {
  return reduce_blocks<TwoSums>(blocks, [&](int64_t a, int64_t b) {
    const Sums2 s = lane_sums<2>(a, b, [&](int64_t i) {
      x[i] += alpha * p[i];               // x = x + alpha p
      const double ri = r[i] - alpha * q[i];   // r = r - alpha q
      const double zi = d[i] * ri;        // z = M^{-1} r = r / a_ii
      r[i] = ri;
      z[i] = zi;
      return Sums2{ri * ri, ri * zi};     // <r, r>, <r, z>
    });
    return TwoSums{s[0], s[1]};
  });
}

void cg_direction(const std::vector<int64_t>& blocks, double* p, const double* z, double beta) {
  reduce_blocks<double>(blocks, [&](int64_t a, int64_t b) {
    for (int64_t i = a; i < b; ++i) p[i] = z[i] + beta * p[i];   // p = z + beta p
    return 0.0;
  });
}

}  // namespace tessera::sla::detail
