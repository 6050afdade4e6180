#pragma once
/// @file csr_checks.h
/// Input validation and right-hand-side layout shared by the third-party backends.

#include <ATen/core/Tensor.h>

#include <string>

#include "tessera/sla/backends/direct_backend.h"

namespace tessera::sla::backends::detail {

/// Checks that `a` is a square, non-empty, CPU CsrMatrix with int64 row_ptr / col_idx,
/// float64 finite values, consistent sizes, non-decreasing row_ptr and in-range, sorted,
/// unique column indices. Throws InvalidInput / DimensionMismatch / Unsupported naming
/// `who` (the backend) and the problem.
void check_csr(const CsrMatrix& a, const std::string& who);

/// Checks that A equals A^T (pattern and values, up to a relative 1e-12 of max |a_ij|):
/// Cholesky and LDLT read one triangle only, so a non-symmetric input is refused
/// (InvalidInput naming the first asymmetric entry) rather than silently solved wrongly.
void check_symmetric(const CsrMatrix& a, const std::string& who);

/// Checks `b` (float64, CPU, [n] or [n, k] with n = a.rows) and returns it as a
/// contiguous [k, n] tensor: column j of b is row j of the result, i.e. the column-major
/// layout the libraries take. A fresh copy: backends may overwrite it.
at::Tensor rhs_to_columns(const at::Tensor& b, int64_t n, const std::string& who);

/// Inverse of rhs_to_columns: [k, n] columns back to the shape of `b` ([n] or [n, k]).
at::Tensor columns_to_rhs(const at::Tensor& columns, const at::Tensor& b);

/// ||A||_1 = max_j sum_i |a_ij| (the 1-norm used by the condition estimate).
double norm1(const CsrMatrix& a);

}  // namespace tessera::sla::backends::detail
