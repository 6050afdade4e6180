// Graph: nodes in topological order, shape inference, and the plain forward pass.

#include "tessera/lirpa/graph.h"

#include <ATen/ATen.h>

#include "tessera/core/error.h"

namespace tessera::lirpa {

Graph::Graph(std::shared_ptr<ParamStore> params) : params_(std::move(params)) {
  TESSERA_CHECK(params_ != nullptr, InvalidInput, "Graph needs a parameter store");
}

void Graph::set_params(std::shared_ptr<ParamStore> params) {
  TESSERA_CHECK(params != nullptr, InvalidInput, "Graph needs a parameter store");
  for (const auto& key : params_->keys())
    TESSERA_CHECK(params->contains(key), InvalidInput, "the new parameter store lacks '", key, "'");
  params_ = std::move(params);
}

int Graph::add_input(std::string name, std::vector<int64_t> shape) {
  TESSERA_CHECK(nodes_.empty(), InvalidInput, "the input must be the first node");
  nodes_.push_back(Node{0, std::move(name), nullptr, {}, std::move(shape)});
  output_ = 0;
  return 0;
}

int Graph::add_node(std::string name, std::shared_ptr<const BoundOp> op, std::vector<int> inputs) {
  TESSERA_CHECK(!nodes_.empty(), InvalidInput, "add the input node first");
  std::vector<at::Tensor> zeros;
  for (int in : inputs) {
    TESSERA_CHECK(in >= 0 && in < static_cast<int>(nodes_.size()), InvalidInput,
                  "node '", name, "' refers to unknown node ", in);
    std::vector<int64_t> s{1};
    s.insert(s.end(), nodes_[in].shape.begin(), nodes_[in].shape.end());
    zeros.push_back(at::zeros(s, at::kDouble));
  }
  OpEnv env{*params_, at::kDouble};
  at::Tensor y;
  try {
    y = op->forward(env, zeros);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    TESSERA_THROW(DimensionMismatch, "node '", name, "' (", op->type(), "): ", e.what());
  }
  auto s = y.sizes().vec();
  int id = static_cast<int>(nodes_.size());
  const int zone = zone_of(name, *op, inputs);
  nodes_.push_back(Node{id, std::move(name), std::move(op), std::move(inputs), {s.begin() + 1, s.end()}, zone});
  output_ = id;
  return id;
}

int Graph::zone_of(const std::string& name, const BoundOp& op, const std::vector<int>& inputs) const {
  if (const ZoneEdge* e = op.zone_edge()) {
    for (int in : inputs)
      TESSERA_CHECK(nodes_[in].zone == (e->enter ? -1 : e->zone), InvalidInput, "zone edge '", name,
                    "': its input is not ", e->enter ? "a whole value" : "of its zone");
    return e->enter ? e->zone : -1;  // enter opens the zone, sum closes it
  }
  int zone = -1;
  for (int in : inputs) {
    if (nodes_[in].zone < 0) continue;
    TESSERA_CHECK(zone < 0 || zone == nodes_[in].zone, InvalidInput, "node '", name, "' reads two zones");
    zone = nodes_[in].zone;
  }
  for (int in : inputs)
    TESSERA_CHECK(zone < 0 || nodes_[in].zone == zone, InvalidInput, "node '", name,
                  "' reads a zone's share and a whole value: only a sum edge leaves a zone");
  return zone;
}

void Graph::set_output(int id) {
  TESSERA_CHECK(id >= 0 && id < static_cast<int>(nodes_.size()), InvalidInput, "bad output id ", id);
  TESSERA_CHECK(nodes_[id].zone < 0, InvalidInput, "the output '", nodes_[id].name,
                "' is a zone's share, not the whole value");
  output_ = id;
}

static int64_t product(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

int64_t Graph::input_size() const { return product(input_shape()); }
int64_t Graph::output_size() const { return product(output_shape()); }

at::Tensor Graph::forward(const at::Tensor& x, at::ScalarType dtype) const {
  TESSERA_CHECK(x.dim() >= 1 && x.numel() == x.size(0) * input_size(), DimensionMismatch,
                "forward: input has ", x.numel() / std::max<int64_t>(x.size(0), 1),
                " values per point, the network takes ", input_size());
  OpEnv env{*params_, dtype};
  std::vector<int64_t> s{x.size(0)};
  s.insert(s.end(), input_shape().begin(), input_shape().end());
  std::vector<at::Tensor> values(nodes_.size());
  values[0] = x.to(dtype).reshape(s);
  for (size_t i = 1; i <= static_cast<size_t>(output_); ++i) {
    std::vector<at::Tensor> in;
    for (int j : nodes_[i].inputs) in.push_back(values[j]);
    values[i] = nodes_[i].op->forward(env, in);
  }
  return values[output_].reshape({x.size(0), -1});
}

std::vector<std::vector<int>> Graph::consumers() const {
  std::vector<std::vector<int>> out(nodes_.size());
  for (const Node& n : nodes_)
    for (int in : n.inputs) out[in].push_back(n.id);
  return out;
}

}  // namespace tessera::lirpa
