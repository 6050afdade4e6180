#pragma once
// The explicit operator registry: ONNX op type -> factory building a bound operator.
// Every operator file provides one `register_<op>(OpRegistry&)`; registry.cpp lists them.

#include <ATen/core/Tensor.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/lirpa/bound_op.h"
#include "tessera/lirpa/graph.h"
#include "tessera/lirpa/param_store.h"

namespace tessera::lirpa::detail {

/// One input of an ONNX node: a variable node (node >= 0) or a constant (key, value).
struct NodeInput {
  int node = -1;
  std::string key;
  at::Tensor value;
  std::vector<int64_t> shape;
  bool is_const() const { return node < 0; }
};

/// One attribute value (the kinds the supported operators use).
struct AttrValue {
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  at::Tensor t;
};

/// What a factory sees of an ONNX node (no protobuf types).
struct OnnxNode {
  std::string op_type;
  std::string name;
  std::vector<NodeInput> inputs;
  std::map<std::string, AttrValue> attrs;
  ParamStore* params = nullptr;
  /// The graph being built: operators composed of several nodes (Softmax) add their inner
  /// nodes to it (composite.h) before the factory returns the last one.
  Graph* graph = nullptr;

  bool has(const std::string& a) const { return attrs.count(a) > 0; }
  int64_t attr_int(const std::string& a, int64_t def) const;
  double attr_float(const std::string& a, double def) const;
  std::vector<int64_t> attr_ints(const std::string& a, std::vector<int64_t> def) const;
  /// Stores `value` under "<node name>/<suffix>" and returns the key.
  std::string put(const std::string& suffix, const at::Tensor& value) const;
  /// The parameter key of constant input `i` as it is (an operator that reads it at run time):
  /// stored on first use, so a constant that a factory only derives its own parameters from
  /// (Gemm's transposed weight, an Add's shift) is not held twice.
  std::string key_of(size_t i) const;
  /// Number of variable inputs.
  int variable_count() const;
};

/// What a factory returns: the operator and the ids of its variable inputs, in order.
struct BuiltOp {
  std::shared_ptr<const BoundOp> op;
  std::vector<int> inputs;
};

using OpFactory = std::function<BuiltOp(const OnnxNode&)>;

class OpRegistry {
 public:
  void add(const std::string& op_type, OpFactory factory);
  const OpFactory* find(const std::string& op_type) const;
  /// Sorted list of supported ONNX op types, comma separated.
  std::string supported() const;

 private:
  std::map<std::string, OpFactory> factories_;
};

/// The registry with every operator of this build.
const OpRegistry& default_registry();

void register_linear(OpRegistry& r);
void register_matmul_left(OpRegistry& r);
void register_affine(OpRegistry& r);
void register_add(OpRegistry& r);
void register_relu(OpRegistry& r);
void register_sigmoid(OpRegistry& r);
void register_tanh(OpRegistry& r);
void register_exp(OpRegistry& r);
void register_reciprocal(OpRegistry& r);
void register_sqrt(OpRegistry& r);
void register_pow(OpRegistry& r);
void register_erf(OpRegistry& r);
void register_reduce(OpRegistry& r);
void register_gelu(OpRegistry& r);
void register_reshape(OpRegistry& r);
void register_transpose(OpRegistry& r);
void register_concat(OpRegistry& r);
void register_conv(OpRegistry& r);
void register_avg_pool(OpRegistry& r);
void register_max_pool(OpRegistry& r);
void register_identity(OpRegistry& r);
void register_slice(OpRegistry& r);
void register_gather(OpRegistry& r);
void register_softmax(OpRegistry& r);
void register_layer_norm(OpRegistry& r);

}  // namespace tessera::lirpa::detail

namespace tessera::lirpa::detail {
/// Builders used by loaders other than ONNX.
std::shared_ptr<const BoundOp> make_linear(std::string w_key, std::string b_key);  // y = x W + b
std::shared_ptr<const BoundOp> make_affine(std::string scale, std::string shift, std::vector<int64_t> in_shape);
std::shared_ptr<const BoundOp> make_relu();
/// Whether `op` is the ReLU operator (branch and bound splits these).
bool is_relu(const BoundOp& op);
}  // namespace tessera::lirpa::detail

namespace tessera::lirpa::detail {
/// What tensor parallelism needs of a Conv operator: its parameter keys and geometry.
struct ConvParams {
  std::string weight, bias;  ///< store keys (bias empty when the Conv has none)
  Conv2dGeometry geometry;
  std::vector<int64_t> in_shape;  ///< the input node's shape
};
/// The parameters of `op` if it is a Conv, else nullopt.
std::optional<ConvParams> conv_params(const BoundOp& op);
}  // namespace tessera::lirpa::detail
