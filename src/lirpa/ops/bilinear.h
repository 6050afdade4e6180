#pragma once
// Builders of the products of two bounded variables (bilinear.cpp), reached from the
// ONNX Mul and MatMul factories when both operands are variables.

#include "lirpa/ops/registry.h"

namespace tessera::lirpa::detail {

/// ONNX Mul of two variables: z = x * y with McCormick planes.
BuiltOp build_bilinear_mul(const OnnxNode& n);
/// ONNX MatMul of two variables: Z = X Y with McCormick planes for each product.
BuiltOp build_bilinear_matmul(const OnnxNode& n);

}  // namespace tessera::lirpa::detail
