// The one-pass Adam step (adam.cpp) against the same step in ATen's operations, which it
// takes for tensors it does not fuse (here: a non-contiguous parameter): three steps from a
// slot not yet created, on [0, 1] and on [0, inf), float64 and float32.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "lirpa/propagation.h"

namespace tessera::lirpa::detail {
namespace {

TEST(LirpaAdam, OnePassStepEqualsTheAtenStep) {
  at::manual_seed(31);
  for (at::ScalarType dtype : {at::kDouble, at::kFloat}) {
    for (double upper : {1.0, static_cast<double>(INFINITY)}) {
      SCOPED_TRACE(::testing::Message() << at::toString(dtype) << " upper " << upper);
      at::Tensor start = at::rand({40000}, dtype);  // more than one parallel chunk
      at::Tensor fused = start.clone();
      at::Tensor wide = at::zeros({40000, 2}, dtype);  // the reference: a strided view, not fused
      at::Tensor general = wide.select(1, 0);
      general.copy_(start);
      ASSERT_FALSE(general.is_contiguous());
      AlphaOptions o;
      AdamSlot sf, sg;
      for (int t = 1; t <= 3; ++t) {
        at::Tensor g = at::randn({40000}, dtype) * (t == 2 ? 1e-6 : 1.0);
        adam_step(fused, g, sf, o, 0.3, t, upper);
        adam_step(general, g, sg, o, 0.3, t, upper);
        const double tol = dtype == at::kDouble ? 1e-12 : 1e-5;
        EXPECT_TRUE(at::allclose(fused, general, tol, tol)) << "step " << t << ": " << (fused - general).abs().max().item<double>();
        EXPECT_TRUE(at::allclose(sf.m, sg.m, tol, tol) && at::allclose(sf.v, sg.v, tol, tol)) << "step " << t;
      }
      EXPECT_GE(fused.min().item<double>(), 0.0);
      if (upper == 1.0) EXPECT_LE(fused.max().item<double>(), 1.0);
    }
  }
}

}  // namespace
}  // namespace tessera::lirpa::detail
