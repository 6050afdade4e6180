#pragma once
// Conversions from ONNX protobuf messages to ATen tensors and attribute values.

#include <ATen/core/Tensor.h>
#include <onnx/onnx_pb.h>

#include "lirpa/ops/registry.h"

namespace tessera::lirpa::detail {

/// TensorProto -> tensor (float, double, int32, int64, bool; raw or typed data).
at::Tensor tensor_from_proto(const onnx::TensorProto& t, const std::string& where);
/// AttributeProto -> AttrValue.
AttrValue attr_from_proto(const onnx::AttributeProto& a, const std::string& where);

/// Evaluates a node whose inputs are all constants (shape arithmetic and constant
/// expressions); throws Unsupported for other op types.
at::Tensor fold_constant(const OnnxNode& node);

}  // namespace tessera::lirpa::detail
