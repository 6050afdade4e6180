#pragma once
// Fused vector passes of the CPU CG loop (float64, contiguous, over the SpMV's row blocks):
// each reads and writes every vector it touches once, and returns its inner products from
// the same pass.

#include <cstdint>
#include <vector>

#include "sla/kernels/row_blocks.h"

namespace tessera::sla::detail {

/// <u, v>
double blocked_dot(const std::vector<int64_t>& blocks, const double* u, const double* v);
/// {<u, v>, <u, w>} in one pass
TwoSums blocked_dot2(const std::vector<int64_t>& blocks, const double* u, const double* v, const double* w);
/// x += alpha p;  r -= alpha q;  returns <r, r>
double cg_step(const std::vector<int64_t>& blocks, double* x, double* r, const double* p, const double* q,
               double alpha);
/// x += alpha p;  r -= alpha q;  z = d .* r;  returns {<r, r>, <r, z>}
TwoSums cg_step_jacobi(const std::vector<int64_t>& blocks, double* x, double* r, double* z, const double* p,
                       const double* q, const double* d, double alpha);
/// p = z + beta p
void cg_direction(const std::vector<int64_t>& blocks, double* p, const double* z, double beta);

}  // namespace tessera::sla::detail
