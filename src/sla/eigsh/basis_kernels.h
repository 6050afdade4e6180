#pragma once
// Dense kernels of a single-vector Lanczos on raw float64 arrays: inner products with, and
// subtraction along, the columns of a column-major basis V [n, j] (leading dimension n).
// No tensor per call; the rows are split over threads only above a work threshold, in fixed
// blocks with partial sums added in block order, so results depend on the thread count only.

#include <cstdint>

namespace tessera::sla::detail {

/// h = V^T w   (h [j]).
void basis_inner(const double* v, int64_t n, int64_t j, const double* w, double* h);

/// w = w - V h.
void basis_subtract(const double* v, int64_t n, int64_t j, const double* h, double* w);

/// U = V Y: U [n, p] (column-major, leading dimension n, not overlapping V) from V [n, j]
/// and Y [j, p] (row-major, leading dimension ldy >= p): the Ritz vectors of a basis.
void basis_combine(const double* v, int64_t n, int64_t j, const double* y, int64_t ldy, int64_t p, double* u);

/// sqrt(<w, w>).
double vector_norm(const double* w, int64_t n);

/// w = w - a x; returns <y, w> after the update (one pass): a Lanczos step's
/// w -= β v_{j-1} with α = <v_j, w>.
double axpy_dot(double* w, const double* x, double a, const double* y, int64_t n);

/// w = w - a x; returns ||w|| after the update (one pass).
double axpy_norm(double* w, const double* x, double a, int64_t n);

/// w = s w.
void vector_scale(double* w, int64_t n, double s);

}  // namespace tessera::sla::detail
