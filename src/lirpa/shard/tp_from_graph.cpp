// tp_from_graph: a graph that is a chain of linear operators and ReLUs becomes a TpNetwork.
// A Conv (groups 1) alone between two ReLUs stays a convolution, cut by channels. Every
// other run of linear operators between two ReLUs is collapsed into one dense layer
// (W, b) by pulling unit rows back through it (the operators' own CROWN backward, which
// is exact for linear operators), then cut into this rank's block; in a zone with a
// convolution the dense layer's blocks are whole channels.

#include <ATen/ATen.h>

#include <optional>
#include <set>

#include "lirpa/ops/registry.h"
#include "lirpa/shard/tp_detail.h"
#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"

namespace tessera::lirpa {
namespace {

/// Operators that are affine maps of their single input (collapsed into the dense layers).
const std::set<std::string>& linear_types() {
  static const std::set<std::string> types{"Linear", "Affine", "Reshape", "Identity", "Transpose", "MatMulLeft",
                                           "Conv"};
  return types;
}

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

/// (W [out, in], b [out]) of the affine map from node `first - 1` to node `last`.
std::pair<at::Tensor, at::Tensor> collapse(const Graph& g, int first, int last) {
  const auto& out_shape = g.node(last).shape;
  const int64_t n_out = numel(out_shape), n_in = numel(g.node(first - 1).shape);
  at::Tensor w = at::empty({n_out, n_in}, at::kDouble), b = at::empty({n_out}, at::kDouble);
  OpEnv env{g.params(), at::kDouble};
  constexpr int64_t kChunk = 512;  // rows per pass: bounds the dense A matrices
  for (int64_t i0 = 0; i0 < n_out; i0 += kChunk) {
    const int64_t i1 = std::min(n_out, i0 + kChunk);
    // rows e_i of the output: A_x = e_i W, bias = e_i b
    APtr a = std::make_shared<UnitRowsA>(out_shape, at::arange(i0, i1, at::kLong), at::ones({i1 - i0}, at::kDouble));
    at::Tensor bias = at::zeros({i1 - i0}, at::kDouble);
    for (int id = last; id >= first; --id) {
      Backward back = g.node(id).op->backward(env, a, BackwardContext{});
      if (back.bias.defined()) bias = bias + back.bias;
      a = back.inputs.at(0);
    }
    w.slice(0, i0, i1).copy_(a->dense(at::kDouble).reshape({i1 - i0, n_in}));
    b.slice(0, i0, i1).copy_(bias);
  }
  return {w, b};
}

/// The last three entries of a node shape: [C, H, W].
std::vector<int64_t> chw(const std::vector<int64_t>& shape) {
  TESSERA_CHECK(shape.size() >= 3, Unsupported, "tensor parallelism: a Conv needs a [C, H, W] input");
  return {shape.end() - 3, shape.end()};
}

/// The Conv of a run that is one Conv with groups 1 (nullopt otherwise: collapsed dense).
std::optional<detail::ConvParams> lone_conv(const Graph& g, std::pair<int, int> run) {
  if (run.first != run.second) return std::nullopt;
  auto p = detail::conv_params(*g.node(run.first).op);
  if (!p || p->geometry.groups != 1) return std::nullopt;
  return p;
}

/// This rank's part of the run's layer; `unit`: neurons per block group of a dense layer.
TpLayer cut_run(const Graph& g, std::pair<int, int> run, TpSplit split, bool relu, int64_t unit,
                const dist::Communicator& comm) {
  if (auto conv = lone_conv(g, run)) {
    at::Tensor k = g.params().get(conv->weight, at::kDouble);
    at::Tensor b = conv->bias.empty() ? at::Tensor() : g.params().get(conv->bias, at::kDouble);
    return detail::tp_cut_conv(k, b, conv->geometry, chw(conv->in_shape), chw(g.node(run.second).shape), split, relu,
                               comm.size(), comm.rank());
  }
  auto [w, b] = collapse(g, run.first, run.second);
  return detail::tp_cut_layer(w, b, split, relu, comm.size(), comm.rank(), unit);
}

}  // namespace

TpNetwork tp_from_graph(const Graph& graph, std::shared_ptr<dist::Communicator> comm) {
  TESSERA_CHECK(comm != nullptr, InvalidInput, "tp_from_graph needs a communicator");
  const auto& nodes = graph.nodes();
  TESSERA_CHECK(graph.output_id() == static_cast<int>(nodes.size()) - 1, Unsupported,
                "tensor parallelism needs the output to be the last node");
  std::vector<std::pair<int, int>> runs;  // [first, last] node ids of each linear run
  std::vector<bool> relu;
  int first = 1;
  for (const Node& n : nodes) {
    if (n.id == 0) continue;
    TESSERA_CHECK(n.inputs == std::vector<int>{n.id - 1}, Unsupported, "tensor parallelism supports chains only: node '",
                  n.name, "' (", n.op->type(), ") does not take the previous node alone as input");
    const std::string type = n.op->type();
    if (type == "Relu") {
      TESSERA_CHECK(n.id > first, Unsupported, "tensor parallelism: ReLU node '", n.name,
                    "' does not follow a linear layer");
      runs.push_back({first, n.id - 1});
      relu.push_back(true);
      first = n.id + 1;
      continue;
    }
    TESSERA_CHECK(linear_types().count(type) > 0, Unsupported, "tensor parallelism supports Linear (Gemm, MatMul), "
                  "Conv, elementwise affine, Reshape/Flatten and Relu operators; node '", n.name, "' is a ", type);
  }
  TESSERA_CHECK(first < static_cast<int>(nodes.size()), Unsupported,
                "tensor parallelism: a ReLU on the network output is not supported");
  runs.push_back({first, static_cast<int>(nodes.size()) - 1});
  relu.push_back(false);
  std::vector<TpSplit> plan = tp_plan(relu);
  std::vector<TpLayer> layers;
  for (size_t k = 0; k < runs.size(); ++k) {
    // a zone with a convolution splits its hidden neurons by channels: groups of H * W
    int64_t unit = 1;
    const size_t col = plan[k] == TpSplit::Row ? k - 1 : k;
    if (plan[k] != TpSplit::Replicated && (lone_conv(graph, runs[col]) || lone_conv(graph, runs[col + 1]))) {
      const auto hidden = chw(graph.node(runs[col].second).shape);
      unit = hidden[1] * hidden[2];
    }
    layers.push_back(cut_run(graph, runs[k], plan[k], relu[k], unit, *comm));
  }
  return TpNetwork(std::move(comm), std::move(layers));
}

}  // namespace tessera::lirpa
