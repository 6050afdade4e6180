// The zone planner of tensor parallelism by heads (share_plan.h): from what the loader built
// of the whole network, the zones, and each rank's share of them.
//
// A zone runs from column-parallel Linears (x W with x whole: each rank keeps the columns of
// W that feed its units) through operators that keep units apart, to the row-parallel Linears
// that read it (each rank keeps the rows of W of its units; their partial products are summed
// over the ranks). Its units are the attention heads (the batch axis of the products of two
// variables, Q K^T and P V) or, in a zone without such products (an MLP), the hidden
// columns. Every value of a zone gets a label per element (its unit), propagated through
// index operators (their forward on element numbers maps every output element to an input
// element) and element-wise ones; rank r keeps units [r U / P, (r + 1) U / P), which is the
// value with its one labelled axis cut to 1 / P in the original order.

#include <ATen/ATen.h>

#include <deque>
#include <set>

#include "lirpa/io/share_plan.h"
#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"

namespace tessera::lirpa::detail {
namespace {

const std::set<std::string> kIndexOps{"Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten", "Identity"};
const std::set<std::string> kUnaryOps{"Relu", "Erf", "Exp", "Sigmoid", "Tanh", "Sqrt", "Reciprocal", "Neg", "Gelu",
                                      "Softmax", "Dropout"};
const std::set<std::string> kBinaryOps{"Add", "Sub", "Mul", "Div", "Pow"};

/// The network as the planner sees it: every ONNX node, the producer and consumers of every
/// value, and the whole graph's nodes (shapes, index maps).
struct View {
  const Graph& g;
  const std::vector<LoadedNode>& nodes;
  std::map<std::string, int> producer;                 // value -> ONNX node index
  std::map<std::string, std::vector<int>> consumers;   // value -> ONNX node indices
  std::map<std::string, int> node_of;                  // variable value -> graph node

  View(const Graph& graph, const std::vector<LoadedNode>& trace) : g(graph), nodes(trace) {
    for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
      const LoadedNode& n = nodes[i];
      for (size_t k = 0; k < n.outputs.size(); ++k) {
        producer[n.outputs[k]] = i;
        if (n.output_nodes[k] >= 0) node_of[n.outputs[k]] = n.output_nodes[k];
      }
      for (size_t k = 0; k < n.inputs.size(); ++k)
        if (n.input_nodes[k] >= 0) consumers[n.inputs[k]].push_back(i);
    }
    for (const Node& node : g.nodes())  // the network's input
      if (node.id == 0) node_of[node.name] = 0;
  }
  bool variable(const std::string& v) const { return node_of.count(v) > 0; }
  const std::vector<int64_t>& shape(const std::string& v) const { return g.node(node_of.at(v)).shape; }
  int variable_inputs(const LoadedNode& n) const {
    int c = 0;
    for (int id : n.input_nodes) c += id >= 0;
    return c;
  }
  /// x W with W a constant matrix (a Linear; a Gemm without transposes and bias is one too)
  bool linear(const LoadedNode& n) const {
    return n.op_type == "MatMul" && n.input_nodes.size() == 2 && n.input_nodes[0] >= 0 && n.input_nodes[1] < 0 &&
           n.input_shapes[1].size() == 2;
  }
  bool product(const LoadedNode& n) const {  // X Y of two variables
    return n.op_type == "MatMul" && variable_inputs(n) == 2;
  }
};

/// One zone: its values, nodes, the Linears that open and close it, and its units.
struct Zone {
  std::set<std::string> values;
  std::set<int> inner;    // nodes whose output is in the zone (sources and products included)
  std::set<int> sources;  // column-parallel Linears
  std::set<int> sinks;    // row-parallel Linears
  std::map<std::string, at::Tensor> label;  // value -> unit of each element (-1: not known yet)
  int64_t units = 0;
};

/// Grows a zone from `seeds` (values): every operator on the way must keep units apart.
/// False (the zone is not splittable) when a value is made or read by anything else.
bool grow(const View& v, Zone& z, std::vector<std::string> seeds, bool allow_products) {
  std::deque<std::string> work(seeds.begin(), seeds.end());
  auto add = [&](const std::string& value) {
    if (z.values.insert(value).second) work.push_back(value);
  };
  for (const auto& s : seeds) z.values.insert(s);
  while (!work.empty()) {
    const std::string value = work.front();
    work.pop_front();
    // made by: a source (stop), or an operator whose variable inputs join
    auto p = v.producer.find(value);
    if (p == v.producer.end()) return false;  // the network's input
    const LoadedNode& pn = v.nodes[p->second];
    if (!z.inner.count(p->second)) {
      z.inner.insert(p->second);
      if (v.linear(pn)) {
        if (z.values.count(pn.inputs[0])) return false;  // a Linear inside: not a source
        z.sources.insert(p->second);
      } else if (kIndexOps.count(pn.op_type) || kUnaryOps.count(pn.op_type) || kBinaryOps.count(pn.op_type) ||
                 pn.op_type == "Split" || (allow_products && v.product(pn))) {
        for (size_t k = 0; k < pn.inputs.size(); ++k)
          if (pn.input_nodes[k] >= 0) add(pn.inputs[k]);
      } else {
        return false;
      }
    }
    // read by: a sink (stop), or an operator whose outputs join
    auto c = v.consumers.find(value);
    if (c == v.consumers.end()) return false;  // the network's output
    for (int ci : c->second) {
      const LoadedNode& cn = v.nodes[ci];
      if (v.linear(cn)) {
        z.sinks.insert(ci);
        continue;
      }
      if (!(kIndexOps.count(cn.op_type) || kUnaryOps.count(cn.op_type) || kBinaryOps.count(cn.op_type) ||
            cn.op_type == "Split" || (allow_products && v.product(cn))))
        return false;
      for (size_t k = 0; k < cn.outputs.size(); ++k)
        if (cn.output_nodes[k] >= 0) add(cn.outputs[k]);
    }
  }
  for (int s : z.sources)
    if (z.sinks.count(s)) return false;
  return !z.sources.empty() && !z.sinks.empty();
}

at::Tensor unknown(const std::vector<int64_t>& shape) { return at::full(shape, -1, at::kLong); }

/// Merges `known` into the labels of `value`; false on a disagreement.
bool merge(Zone& z, const std::string& value, const at::Tensor& known, bool& changed) {
  at::Tensor& l = z.label.at(value);
  at::Tensor k = known.reshape(l.sizes());
  at::Tensor both = (l >= 0).logical_and(k >= 0);
  if (!at::equal(l.masked_select(both), k.masked_select(both))) return false;
  at::Tensor fill = (l < 0).logical_and(k >= 0);
  if (fill.any().item<bool>()) {
    l.masked_scatter_(fill, k.masked_select(fill));
    changed = true;
  }
  return true;
}

/// The whole graph's operator of node `id` on one point `x` (its shape without the batch).
at::Tensor apply(const View& v, int id, const at::Tensor& x) {
  OpEnv env{v.g.params(), at::kDouble};
  return v.g.node(id).op->forward(env, {x.to(at::kDouble).unsqueeze(0)})[0];
}

/// Labels of every value of the zone from those known (`z.label` holds every value, -1 where
/// unknown); false when they conflict or stay incomplete.
bool label_zone(const View& v, Zone& z) {
  bool changed = true;
  for (int round = 0; changed && round < 64; ++round) {
    changed = false;
    for (int i : z.inner) {
      const LoadedNode& n = v.nodes[i];
      if (z.sources.count(i)) continue;
      // the variable inputs and outputs of n in the zone
      std::vector<std::string> ins, outs;
      for (size_t k = 0; k < n.inputs.size(); ++k)
        if (n.input_nodes[k] >= 0 && z.values.count(n.inputs[k])) ins.push_back(n.inputs[k]);
      for (size_t k = 0; k < n.outputs.size(); ++k)
        if (n.output_nodes[k] >= 0 && z.values.count(n.outputs[k])) outs.push_back(n.outputs[k]);
      if (kIndexOps.count(n.op_type) || n.op_type == "Split") {
        const std::string& in = ins.at(0);
        const at::Tensor& li = z.label.at(in);
        for (const auto& out : outs) {
          const int id = v.node_of.at(out);
          // forward: the outputs' labels are the op of the input's
          if ((li >= 0).all().item<bool>() && !merge(z, out, apply(v, id, li).round().to(at::kLong), changed))
            return false;
          // backward: each output element is input element pos (the op on element numbers)
          at::Tensor pos = apply(v, id, at::arange(li.numel(), at::kDouble).reshape(li.sizes())).round().to(at::kLong);
          at::Tensor lo = z.label.at(out).reshape(-1);
          at::Tensor from = unknown(li.sizes().vec()).reshape(-1);
          from.index_put_({pos.reshape(-1)}, lo);
          if (!merge(z, in, from, changed)) return false;
        }
      } else if (v.product(n)) {
        continue;  // labelled from the start (the heads' axis)
      } else {  // element-wise: every zone value of the node has the output's shape and labels
        for (const auto& a : ins)
          for (const auto& b : outs) {
            if (z.label.at(a).sizes() != z.label.at(b).sizes()) return false;
            if (!merge(z, b, z.label.at(a), changed) || !merge(z, a, z.label.at(b), changed)) return false;
          }
        for (size_t x = 1; x < ins.size(); ++x) {
          if (z.label.at(ins[0]).sizes() != z.label.at(ins[x]).sizes()) return false;
          if (!merge(z, ins[0], z.label.at(ins[x]), changed) || !merge(z, ins[x], z.label.at(ins[0]), changed))
            return false;
        }
      }
    }
  }
  for (const auto& [value, l] : z.label)
    if ((l < 0).any().item<bool>()) return false;
  return true;
}

/// The one axis along which labels `l` vary, or -1 (none or several).
int64_t label_axis(const at::Tensor& l) {
  int64_t axis = -1;
  for (int64_t a = 0; a < l.dim(); ++a) {
    if (l.size(a) == 1 || at::equal(l, l.narrow(a, 0, 1).expand_as(l))) continue;
    if (axis >= 0) return -1;
    axis = a;
  }
  return axis;
}

/// Positions along the label axis of `l` whose unit is in [lo, hi).
at::Tensor kept(const at::Tensor& l, int64_t axis, int64_t lo, int64_t hi) {
  at::Tensor line = l;
  for (int64_t a = l.dim() - 1; a >= 0; --a)
    if (a != axis) line = line.select(a, 0);
  return at::nonzero((line >= lo).logical_and(line < hi)).reshape(-1);
}

/// The heads of a zone grown from products of two variables: the axis before the matrix
/// axes of every product's output and operands (the axes before it of size 1), the same count
/// everywhere; false otherwise.
bool label_heads(const View& v, Zone& z) {
  for (int j : z.inner) {
    if (!v.product(v.nodes[j])) continue;
    for (const std::string& value : {v.nodes[j].outputs[0], v.nodes[j].inputs[0], v.nodes[j].inputs[1]}) {
      const auto& s = v.shape(value);
      if (s.size() < 3) return false;
      const int64_t h = s[s.size() - 3];
      for (size_t a = 0; a + 3 < s.size(); ++a)
        if (s[a] != 1) return false;
      if (z.units != 0 && z.units != h) return false;
      z.units = h;
      std::vector<int64_t> shape(s.size(), 1);
      shape[s.size() - 3] = h;
      bool changed = false;
      if (!merge(z, value, at::arange(h, at::kLong).reshape(shape).expand(s), changed)) return false;
    }
  }
  return z.units > 0;
}

/// The hidden columns of an MLP zone: its one source's output columns.
bool label_columns(const View& v, Zone& z) {
  if (z.sources.size() != 1) return false;
  const std::string& out = v.nodes[*z.sources.begin()].outputs[0];
  const auto& s = v.shape(out);
  z.units = s.back();
  bool changed = false;
  return merge(z, out, at::arange(z.units, at::kLong).expand(s), changed);
}

/// Rank `rank`'s share of zone `z` (number `id`) added to `plan`; false when a value's units
/// do not lie along one axis in equal numbers.
bool share(const View& v, const Zone& z, int id, int64_t ranks, int64_t rank, SharePlan& plan) {
  const int64_t lo = rank * z.units / ranks, hi = (rank + 1) * z.units / ranks;
  std::map<std::string, int64_t> axis;
  std::map<std::string, at::Tensor> keep;  // positions along the axis
  for (const auto& [value, l] : z.label) {
    const int64_t a = label_axis(l);
    if (a < 0) return false;
    at::Tensor k = kept(l, a, lo, hi);
    if (k.numel() * ranks != l.size(a)) return false;  // each rank the same count of positions
    axis[value] = a;
    keep[value] = k;
  }
  for (int i : z.inner) {
    const LoadedNode& n = v.nodes[i];
    const std::string& out = n.outputs[0];
    if (z.sources.count(i)) {  // x W[:, J_r]: the columns of this rank's units
      if (axis.at(out) != static_cast<int64_t>(v.shape(out).size()) - 1) return false;
      plan.slices[n.name].push_back({1, 1, keep.at(out)});
      plan.enter[n.name] = id;
      continue;
    }
    // a softmax only over one unit's entries (the loader takes the last axis only)
    if (n.op_type == "Softmax" && axis.at(out) == static_cast<int64_t>(v.shape(out).size()) - 1) return false;
    if (n.op_type == "Reshape") {
      auto s = v.shape(out);
      s[axis.at(out)] /= ranks;
      plan.reshapes[n.name] = s;
    }
    // a constant read element-wise that varies along the unit axis: this rank's entries
    if (!z.values.count(out) || !kBinaryOps.count(n.op_type)) continue;
    const int64_t rank_out = static_cast<int64_t>(v.shape(out).size());
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (n.input_nodes[k] >= 0) continue;
      const auto& cs = n.input_shapes[k];
      const int64_t ca = axis.at(out) - (rank_out - static_cast<int64_t>(cs.size()));
      if (ca < 0 || cs[ca] == 1) continue;
      plan.slices[n.name].push_back({k, ca, keep.at(out)});
    }
  }
  for (int i : z.sinks) {  // W[J_r, :] x_r: the rows of this rank's units, summed after
    const LoadedNode& n = v.nodes[i];
    const std::string& in = n.inputs[0];
    if (axis.at(in) != static_cast<int64_t>(v.shape(in).size()) - 1) return false;
    plan.slices[n.name].push_back({1, 0, keep.at(in)});
    plan.sum_after[n.name] = id;
  }
  return true;
}

}  // namespace

SharePlan plan_shares(const Graph& whole, const std::vector<LoadedNode>& trace,
                      const std::shared_ptr<dist::Communicator>& comm, ZoneCounts* counts) {
  View v(whole, trace);
  const int64_t ranks = comm->size(), rank = comm->rank();
  SharePlan plan;
  plan.comm = comm;
  ZoneCounts found;
  std::set<int> taken;  // nodes of the zones found
  auto try_zone = [&](int seed, bool attention) {
    Zone z;
    const std::string& start = trace[seed].outputs[0];
    if (!grow(v, z, {start}, attention)) return;
    for (int j : z.inner)
      if (taken.count(j)) return;
    for (const auto& value : z.values) z.label[value] = unknown(v.shape(value));
    if (!(attention ? label_heads(v, z) : label_columns(v, z))) return;
    if (z.units % ranks != 0 || !label_zone(v, z)) return;
    SharePlan mine = plan;
    if (!share(v, z, found.attention + found.mlp, ranks, rank, mine)) return;
    plan = std::move(mine);
    for (int j : z.inner) taken.insert(j);
    for (int j : z.sinks) taken.insert(j);
    (attention ? found.attention : found.mlp) += 1;
  };
  // attention zones, seeded at the products of two variables (Q K^T), then MLP zones, at the
  // Linears whose output element-wise operators carry to another Linear
  for (int i = 0; i < static_cast<int>(trace.size()); ++i)
    if (v.product(trace[i]) && !taken.count(i)) try_zone(i, true);
  for (int i = 0; i < static_cast<int>(trace.size()); ++i)
    if (v.linear(trace[i]) && !taken.count(i)) try_zone(i, false);
  if (counts) *counts = found;
  return plan;
}

}  // namespace tessera::lirpa::detail
