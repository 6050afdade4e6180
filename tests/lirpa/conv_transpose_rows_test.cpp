// The transposed convolution of many rows (conv_transpose_rows.h) against ATen's
// conv_transpose2d: strides, paddings, output paddings, dilations, 1x1 and rectangular
// kernels, float32 and float64, more rows than one chunk and one thread or two; on a gradient
// tape the same gradient as ATen's (the adjoint convolution, chunked the same way); the cases
// it leaves to ATen.

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <vector>

#include "lirpa/conv_transpose_rows.h"

namespace tessera::lirpa::detail {
namespace {

struct Case {
  int64_t rows, co, ci, ho, wo, kh, kw;
  std::vector<int64_t> stride, pad, out_pad, dilation;
};

std::vector<Case> cases() {
  return {
      {5, 4, 3, 6, 6, 3, 3, {1, 1}, {1, 1}, {0, 0}, {1, 1}},
      {7, 8, 5, 4, 5, 3, 3, {2, 2}, {1, 1}, {1, 0}, {1, 1}},    // strided, one output row padded
      {3, 6, 2, 5, 3, 1, 1, {2, 2}, {0, 0}, {0, 1}, {1, 1}},    // a 1x1 shortcut
      {4, 3, 4, 4, 4, 3, 2, {1, 2}, {0, 1}, {0, 1}, {2, 1}},    // rectangular, dilated
      {300, 16, 8, 8, 8, 3, 3, {1, 1}, {1, 1}, {0, 0}, {1, 1}},  // many chunks
      {2, 5, 3, 3, 3, 4, 4, {3, 3}, {2, 0}, {2, 1}, {1, 1}},    // padding wider than one tap
      {6, 12, 3, 2, 2, 8, 8, {8, 8}, {0, 0}, {0, 0}, {1, 1}},   // a ViT's patch embedding: stride = kernel
  };
}

TEST(LirpaConvTransposeRows, EqualsAtensTransposedConvolution) {
  at::manual_seed(7);
  const int threads = at::get_num_threads();
  for (int t : {1, 2}) {
    at::set_num_threads(t);
    for (const Case& c : cases()) {
      for (at::ScalarType dtype : {at::kDouble, at::kFloat}) {
        SCOPED_TRACE(::testing::Message() << "rows " << c.rows << " co " << c.co << " ci " << c.ci << " kernel " << c.kh
                                          << "x" << c.kw << " " << at::toString(dtype) << " threads " << t);
        at::Tensor a = at::randn({c.rows, c.co, c.ho, c.wo}, dtype), w = at::randn({c.co, c.ci, c.kh, c.kw}, dtype);
        auto got = conv_transpose_rows(a, w, c.stride, c.pad, c.out_pad, c.dilation, 1);
        ASSERT_TRUE(got.has_value());
        at::Tensor want = at::conv_transpose2d(a, w, {}, c.stride, c.pad, c.out_pad, 1, c.dilation);
        ASSERT_EQ(got->sizes(), want.sizes());
        const double tol = dtype == at::kDouble ? 1e-12 : 1e-4;
        EXPECT_TRUE(at::allclose(*got, want, tol, tol)) << (*got - want).abs().max().item<double>();
      }
    }
  }
  at::set_num_threads(threads);
}

// The same rows give the same bits with one thread and two (each entry sums its taps in one order).
TEST(LirpaConvTransposeRows, SameBitsWithOneThreadOrTwo) {
  at::manual_seed(8);
  const int threads = at::get_num_threads();
  at::Tensor a = at::randn({300, 16, 8, 8}, at::kDouble), w = at::randn({16, 8, 3, 3}, at::kDouble);
  at::set_num_threads(1);
  at::Tensor one = *conv_transpose_rows(a, w, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 1);
  at::set_num_threads(2);
  at::Tensor two = *conv_transpose_rows(a, w, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 1);
  at::set_num_threads(threads);
  EXPECT_TRUE(at::equal(one, two));
}

TEST(LirpaConvTransposeRows, OnATapeGivesAtensGradient) {
  at::manual_seed(9);
  at::AutoGradMode grad(true);
  for (const Case& c : cases()) {
    for (at::ScalarType dtype : {at::kDouble, at::kFloat}) {
      SCOPED_TRACE(::testing::Message() << "rows " << c.rows << " kernel " << c.kh << "x" << c.kw << " " << at::toString(dtype));
      at::Tensor a0 = at::randn({c.rows, c.co, c.ho, c.wo}, dtype), w = at::randn({c.co, c.ci, c.kh, c.kw}, dtype);
      auto run = [&](bool ours) {
        at::Tensor a = a0.clone().requires_grad_(true);
        at::Tensor x = ours ? *conv_transpose_rows(a * 2, w, c.stride, c.pad, c.out_pad, c.dilation, 1)
                            : at::conv_transpose2d(a * 2, w, {}, c.stride, c.pad, c.out_pad, 1, c.dilation);
        at::Tensor weight = at::cos(at::arange(x.numel(), dtype)).view(x.sizes());
        (x * weight).sum().backward();
        return a.grad();
      };
      at::Tensor got = run(true), want = run(false);
      ASSERT_TRUE(got.defined());
      const double tol = dtype == at::kDouble ? 1e-12 : 1e-4;
      EXPECT_TRUE(at::allclose(got, want, tol, tol)) << (got - want).abs().max().item<double>();
    }
  }
}

TEST(LirpaConvTransposeRows, LeavesOtherCasesToAten) {
  at::Tensor a = at::randn({2, 4, 3, 3}, at::kDouble);
  EXPECT_FALSE(conv_transpose_rows(a, at::randn({4, 1, 3, 3}, at::kDouble), {1, 1}, {0, 0}, {0, 0}, {1, 1}, 4));  // groups
  EXPECT_FALSE(conv_transpose_rows(a, at::randn({4, 2, 3, 3}, at::kFloat), {1, 1}, {0, 0}, {0, 0}, {1, 1}, 1));  // dtypes
  EXPECT_FALSE(conv_transpose_rows(a.to(at::kLong), at::ones({4, 2, 3, 3}, at::kLong), {1, 1}, {0, 0}, {0, 0}, {1, 1}, 1));
  at::AutoGradMode grad(true);
  at::Tensor w = at::randn({4, 2, 3, 3}, at::kDouble).requires_grad_(true);
  EXPECT_FALSE(conv_transpose_rows(a, w, {1, 1}, {0, 0}, {0, 0}, {1, 1}, 1));  // a weight on the tape
  // conv_transpose_any takes ATen's there, with its gradient
  at::Tensor x = conv_transpose_any(a, w, {1, 1}, {0, 0}, {0, 0}, {1, 1}, 1);
  x.sum().backward();
  EXPECT_TRUE(w.grad().defined());
}

}  // namespace
}  // namespace tessera::lirpa::detail
