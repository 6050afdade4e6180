#pragma once
// Checks shared by the sharded-bounds MPI tests: soundness by sampling, relative bound
// differences, the same value on every rank, a random box, seeded random layers.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "tessera/dist/communicator.h"
#include "tessera/lirpa/bounds.h"
#include "tessera/lirpa/graph.h"
#include "tessera/lirpa/mlp_builder.h"
#include "tessera/lirpa/param_store.h"

namespace tessera::lirpa::testing {

/// Largest bound difference relative to 1 + the largest |bound| of `a`.
inline double rel_difference(const BoundsResult& a, const BoundsResult& b) {
  double scale = 1 + std::max(a.lower.abs().max().item<double>(), a.upper.abs().max().item<double>());
  return std::max((a.lower - b.lower).abs().max().item<double>(), (a.upper - b.upper).abs().max().item<double>()) /
         scale;
}

/// `n_points` random points and n_points / 10 random corners of the box: every output (or
/// every row of `c y` when `c` is defined) inside the bounds.
inline void expect_sound(const Graph& g, const BoundsResult& r, const at::Tensor& lo, const at::Tensor& hi,
                         const at::Tensor& c, const std::string& what, int64_t n_points = 2000) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(99);
  const int64_t n = lo.numel();
  at::Tensor x = lo + (hi - lo) * at::rand({n_points, n}, gen, at::kDouble);
  x = at::cat({x, at::where(at::rand({n_points / 10, n}, gen, at::kDouble) > 0.5, hi, lo)});
  at::Tensor y = g.forward(x, at::kDouble);
  if (c.defined()) y = at::matmul(y, c.t());
  const double tol = 1e-9 * (1 + y.abs().max().item<double>());
  EXPECT_TRUE((r.lower <= std::get<0>(y.min(0)) + tol).all().item<bool>()) << what << ": a sample below the lower bound";
  EXPECT_TRUE((r.upper >= std::get<0>(y.max(0)) - tol).all().item<bool>()) << what << ": a sample above the upper bound";
}

/// `t` equals rank 0's `t` bitwise.
inline void expect_same_on_every_rank(const at::Tensor& t, dist::Communicator& comm) {
  at::Tensor root = t.clone();
  comm.broadcast(root, 0);
  EXPECT_TRUE(at::equal(root, t)) << "rank " << comm.rank() << " differs from rank 0";
}

struct Box {
  at::Tensor lo, hi;
};

/// A box of half-width `eps` around a fixed random point of [0, 1]^n (the same on every rank).
inline Box box(int64_t n, double eps) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(5);
  at::Tensor centre = at::rand({n}, gen, at::kDouble);
  return {centre - eps, centre + eps};
}

/// Random Linear layers (weights N(0, 1/n_in), biases N(0, 0.01)), the same on every rank:
/// layer k drawn from a generator seeded with seed + k.
inline MlpLayerFn seeded_layers(int64_t seed) {
  return [seed](int k, int64_t n_in, int64_t n_out) {
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed + k);
    return std::pair{at::normal(0.0, 1.0 / std::sqrt(double(n_in)), {n_out, n_in}, gen, at::kDouble),
                     at::normal(0.0, 0.1, {n_out}, gen, at::kDouble)};
  };
}

/// Sets the process-wide weight block size (param_store.h) for one scope.
struct BlockBytes {
  explicit BlockBytes(int64_t bytes) : old(set_weight_block_bytes(bytes)) {}
  ~BlockBytes() { set_weight_block_bytes(old); }
  BlockBytes(const BlockBytes&) = delete;
  BlockBytes& operator=(const BlockBytes&) = delete;
  int64_t old;
};

}  // namespace tessera::lirpa::testing
