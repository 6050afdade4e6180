#pragma once
// Small vector kernels of the Krylov solvers (ATen ops, any device). Scalars come back
// to the host as double: the algorithms branch on them.

#include <ATen/core/Tensor.h>

namespace tessera::sla::detail {

/// <a, b>
double dot_host(const at::Tensor& a, const at::Tensor& b);
/// ||a||_2
double norm_host(const at::Tensor& a);
/// x += alpha p;  r -= alpha q   (the CG / BiCGStab step)
void krylov_step(at::Tensor& x, at::Tensor& r, const at::Tensor& p, const at::Tensor& q, double alpha);
/// p = z + beta p
void update_direction(at::Tensor& p, const at::Tensor& z, double beta);
/// True when every entry is finite.
bool all_finite(const at::Tensor& a);

}  // namespace tessera::sla::detail
