// Fused vector passes of the CPU CG loop (see cg_fused_kernels.h).

#include "sla/backends/native/cg_fused_kernels.h"

namespace tessera::sla::detail {

double blocked_dot(const std::vector<int64_t>& blocks, const double* u, const double* v) {
  return reduce_blocks<double>(blocks, [&](int64_t a, int64_t b) {
    double s = 0.0;
    for (int64_t i = a; i < b; ++i) s += u[i] * v[i];   // s = sum_i u_i v_i
    return s;
  });
}

TwoSums blocked_dot2(const std::vector<int64_t>& blocks, const double* u, const double* v, const double* w) {
  return reduce_blocks<TwoSums>(blocks, [&](int64_t a, int64_t b) {
    TwoSums s;
    for (int64_t i = a; i < b; ++i) {
      s.first += u[i] * v[i];             // <u, v>
      s.second += u[i] * w[i];            // <u, w>
    }
    return s;
  });
}

double cg_step(const std::vector<int64_t>& blocks, double* x, double* r, const double* p, const double* q,
               double alpha) {
  return reduce_blocks<double>(blocks, [&](int64_t a, int64_t b) {
    double rr = 0.0;
    for (int64_t i = a; i < b; ++i) {
      x[i] += alpha * p[i];               // x = x + alpha p
      const double ri = r[i] - alpha * q[i];   // r = r - alpha q
      r[i] = ri;
      rr += ri * ri;                      // <r, r>
    }
    return rr;
  });
}

TwoSums cg_step_jacobi(const std::vector<int64_t>& blocks, double* x, double* r, double* z, const double* p,
                       const double* q, const double* d, double alpha) {
  return reduce_blocks<TwoSums>(blocks, [&](int64_t a, int64_t b) {
    TwoSums s;
    for (int64_t i = a; i < b; ++i) {
      x[i] += alpha * p[i];               // x = x + alpha p
      const double ri = r[i] - alpha * q[i];   // r = r - alpha q
      const double zi = d[i] * ri;        // z = M^{-1} r = r / a_ii
      r[i] = ri;
      z[i] = zi;
      s.first += ri * ri;                 // <r, r>
      s.second += ri * zi;                // <r, z>
    }
    return s;
  });
}

void cg_direction(const std::vector<int64_t>& blocks, double* p, const double* z, double beta) {
  reduce_blocks<double>(blocks, [&](int64_t a, int64_t b) {
    for (int64_t i = a; i < b; ++i) p[i] = z[i] + beta * p[i];   // p = z + beta p
    return 0.0;
  });
}

}  // namespace tessera::sla::detail
