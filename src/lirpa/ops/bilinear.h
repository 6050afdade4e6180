#pragma once
// Builders of the products of two bounded variables (bilinear.cpp), reached from the
// ONNX Mul and MatMul factories when both operands are variables.

#include "lirpa/ops/registry.h"

namespace tessera::lirpa::detail {

/// ONNX Mul of two variables: z = x * y with McCormick planes.
BuiltOp build_bilinear_mul(const OnnxNode& n);
/// ONNX MatMul of two variables: Z = X Y with McCormick planes for each product.
BuiltOp build_bilinear_matmul(const OnnxNode& n);
/// Softmax's last product y = e * r with r = 1 / sum of e over its last axis (`r_shape`:
/// e's shape with the last axis 1): McCormick planes, and IBP also within the ratio's bounds.
std::shared_ptr<const BoundOp> make_softmax_ratio(std::vector<int64_t> e_shape, std::vector<int64_t> r_shape);

}  // namespace tessera::lirpa::detail
