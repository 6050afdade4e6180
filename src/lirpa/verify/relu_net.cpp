// Extraction of a ReluNet from a Graph: the operators between two ReLUs form an affine map
// f(h) = W h + b, read off by probing: b = f(0), column i of W = f(e_i) - f(0).

#include "relu_net.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "lirpa/ops/registry.h"
#include "tessera/dist/communicator.h"
#include "tessera/lirpa/sharded_param_store.h"

namespace tessera::lirpa::detail {

LayerWeights::LayerWeights() : store_(std::make_shared<LocalParamStore>()) {}

at::Tensor LayerWeights::operator[](size_t k) const { return store_->get("w" + std::to_string(k), at::kDouble); }

void LayerWeights::push_back(const at::Tensor& w) {
  store_->put("w" + std::to_string(size()), w.to(at::kDouble).contiguous());
  shapes_.push_back({w.size(0), w.size(1)});
}

void LayerWeights::shard(std::shared_ptr<dist::Communicator> comm) {
  if (!comm || comm->size() == 1) return;
  auto sharded = std::make_shared<ShardedParamStore>(std::move(comm));
  for (size_t k = 0; k < size(); ++k) sharded->put("w" + std::to_string(k), store_->get_raw("w" + std::to_string(k)));
  store_ = sharded;
}

int64_t LayerWeights::local_bytes() const {
  if (auto* s = dynamic_cast<const ShardedParamStore*>(store_.get())) return s->local_bytes();
  int64_t bytes = 0;
  for (size_t k = 0; k < size(); ++k) bytes += rows(k) * cols(k) * 8;
  return bytes;
}

at::Tensor ReluNet::forward(const at::Tensor& x) const {
  at::Tensor h = x.to(at::kDouble);
  for (int k = 0; k < layers(); ++k) {
    h = at::addmm(b[k], h, w[k].t());  // z = h W^T + b
    if (k + 1 < layers()) h = h.clamp_min(0);
  }
  return h;
}

namespace {

// Runs nodes [first, last] of the chain on a batch (each node's only input is its predecessor).
at::Tensor run_segment(const Graph& g, int first, int last, at::Tensor h) {
  OpEnv env{g.params(), at::kDouble};
  for (int id = first; id <= last; ++id) h = g.node(id).op->forward(env, {h});
  return h;
}

std::vector<int64_t> batch_shape(int64_t n, const std::vector<int64_t>& shape) {
  std::vector<int64_t> s{n};
  s.insert(s.end(), shape.begin(), shape.end());
  return s;
}

// Affine map of nodes [first, last] from the value of node first-1; nothing if not affine.
bool probe_segment(const Graph& g, int first, int last, at::Tensor& w, at::Tensor& b) {
  at::NoGradGuard no_grad;
  const auto& in_shape = g.node(first - 1).shape;
  int64_t n = 1;
  for (int64_t d : in_shape) n *= d;
  at::Tensor probe = at::cat({at::zeros({1, n}, at::kDouble), at::eye(n, at::kDouble)});  // [0; I]
  at::Tensor y = first > last ? probe : run_segment(g, first, last, probe.reshape(batch_shape(n + 1, in_shape)));
  y = y.reshape({n + 1, -1});
  b = y[0].clone();                      // b = f(0)
  w = (y.slice(0, 1) - b).t().contiguous();  // W[:, i] = f(e_i) - f(0)
  // affinity check on random points: f(r) = W r + b (a fixed seed: the same points on every rank)
  auto gen = at::detail::createCPUGenerator(/*seed_in=*/1234);
  at::Tensor r = at::randn({4, n}, gen, at::kDouble);
  at::Tensor fr = first > last ? r : run_segment(g, first, last, r.reshape(batch_shape(4, in_shape)));
  at::Tensor pred = at::addmm(b, r, w.t());
  double err = (fr.reshape({4, -1}) - pred).abs().max().item<double>();
  double scale = 1 + pred.abs().max().item<double>();
  return err <= 1e-9 * scale * std::max<int64_t>(1, n / 100);
}

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace

bool dense_form_is_compact(const Graph& graph, std::string* why) {
  int64_t weights = 0;  // entries of the network's own parameters
  for (const std::string& key : graph.params().keys()) weights += numel(graph.params().shape(key));
  int64_t dense = 0;  // entries of the ReluNet matrices: sum over segments of n_in * n_out
  int first = 1;
  for (int id = 1; id <= graph.output_id(); ++id) {
    bool relu = is_relu(*graph.node(id).op);
    if (!relu && id < graph.output_id()) continue;
    int last = relu ? id - 1 : id;
    dense += numel(graph.node(first - 1).shape) * numel(graph.node(last).shape);
    first = id + 1;
  }
  // a convolution read off as a matrix repeats its kernel at every position: the graph
  // engine (patches) keeps it as it is
  bool compact = dense <= 2 * weights + (int64_t{1} << 20);
  if (!compact && why)
    *why = "its affine layers as dense matrices would hold " + std::to_string(dense) + " entries, " +
           std::to_string(dense / std::max<int64_t>(weights, 1)) + " times the network's " + std::to_string(weights) +
           " weights";
  return compact;
}

std::optional<ReluNet> extract_relu_net(const Graph& graph, std::string* why,
                                        std::shared_ptr<dist::Communicator> comm) {
  auto fail = [&](const std::string& msg) -> std::optional<ReluNet> {
    if (why) *why = msg;
    return std::nullopt;
  };
  ReluNet net;
  net.w.shard(std::move(comm));  // before any matrix is pushed: each is cut as it comes
  int first = 1;
  for (int id = 1; id <= graph.output_id(); ++id) {
    const Node& node = graph.node(id);
    if (node.inputs != std::vector<int>{id - 1}) return fail("node '" + node.name + "' is not part of a chain");
    bool relu = is_relu(*node.op);
    if (!relu && node.op->needs_input_bounds())
      return fail("node '" + node.name + "' (" + node.op->type() + ") is neither affine nor a ReLU");
    if (!relu && id < graph.output_id()) continue;
    int last = relu ? id - 1 : id;  // affine segment [first, last]
    at::Tensor w, b;
    if (!probe_segment(graph, first, last, w, b)) return fail("the operators before node '" + node.name + "' are not affine");
    net.w.push_back(w);
    net.b.push_back(b);
    first = id + 1;
    if (relu && id == graph.output_id()) {  // ends with a ReLU: an identity layer after it
      int64_t n = net.w.rows(net.w.size() - 1);
      net.w.push_back(at::eye(n, at::kDouble));
      net.b.push_back(at::zeros({n}, at::kDouble));
    }
  }
  if (net.w.empty()) return fail("the network has no operators");
  return net;
}

}  // namespace tessera::lirpa::detail
