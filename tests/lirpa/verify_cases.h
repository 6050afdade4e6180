#pragma once
// Helpers of the verification tests whose answers are known by construction: numbers written
// exactly into VNN-LIB text, and a Lipschitz bound that turns a grid's minimum into a value
// certainly below the true one.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tessera/lirpa/graph.h"

namespace tessera::lirpa::testing {

/// `v` with every digit a double needs (for thresholds in VNN-LIB text).
inline std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

/// A Lipschitz bound of a ReLU MLP's outputs: the product of its `layers` weight matrices'
/// Frobenius norms (>= their spectral norms; ReLU is 1-Lipschitz). The graph holds each
/// parameter once (ParametersAreHeldOnce), so its matrices are exactly the layers' weights.
inline double frobenius_product(const Graph& g, int layers) {
  double lip = 1;
  int found = 0;
  for (const std::string& key : g.params().keys())
    if (g.params().shape(key).size() == 2) lip *= g.params().get(key, at::kDouble).norm().item<double>(), ++found;
  EXPECT_EQ(found, layers);
  return lip;
}

}  // namespace tessera::lirpa::testing
