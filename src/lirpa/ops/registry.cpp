// The explicit list of operators and the OnnxNode accessors.

#include "lirpa/ops/registry.h"

#include <ATen/ATen.h>

#include "tessera/core/error.h"

namespace tessera::lirpa::detail {

int64_t OnnxNode::attr_int(const std::string& a, int64_t def) const {
  auto it = attrs.find(a);
  return it == attrs.end() ? def : it->second.i;
}

double OnnxNode::attr_float(const std::string& a, double def) const {
  auto it = attrs.find(a);
  return it == attrs.end() ? def : it->second.f;
}

std::vector<int64_t> OnnxNode::attr_ints(const std::string& a, std::vector<int64_t> def) const {
  auto it = attrs.find(a);
  return it == attrs.end() ? def : it->second.ints;
}

std::string OnnxNode::put(const std::string& suffix, const at::Tensor& value) const {
  std::string key = name + "/" + suffix;
  params->put(key, value);
  return key;
}

std::string OnnxNode::key_of(size_t i) const {
  const NodeInput& in = inputs.at(i);
  TESSERA_CHECK(in.is_const(), InvalidInput, "node '", name, "': input ", i, " is not a constant");
  if (!params->contains(in.key)) params->put(in.key, in.value);
  return in.key;
}

int OnnxNode::variable_count() const {
  int n = 0;
  for (const auto& in : inputs) n += in.is_const() ? 0 : 1;
  return n;
}

void OpRegistry::add(const std::string& op_type, OpFactory factory) {
  factories_[op_type] = std::move(factory);
}

const OpFactory* OpRegistry::find(const std::string& op_type) const {
  auto it = factories_.find(op_type);
  return it == factories_.end() ? nullptr : &it->second;
}

std::string OpRegistry::supported() const {
  std::string out;
  for (auto& [k, v] : factories_) out += (out.empty() ? "" : ", ") + k;
  return out;
}

const OpRegistry& default_registry() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    register_linear(r);
    register_matmul_left(r);
    register_affine(r);
    register_add(r);
    register_relu(r);
    register_sigmoid(r);
    register_tanh(r);
    register_exp(r);
    register_reciprocal(r);
    register_sqrt(r);
    register_pow(r);
    register_erf(r);
    register_reduce(r);
    register_gelu(r);
    register_reshape(r);
    register_transpose(r);
    register_concat(r);
    register_conv(r);
    register_avg_pool(r);
    register_max_pool(r);
    register_identity(r);
    register_slice(r);
    register_gather(r);
    register_softmax(r);
    register_layer_norm(r);
    return r;
  }();
  return registry;
}

}  // namespace tessera::lirpa::detail
