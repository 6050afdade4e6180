// ONNX loader: initializers and Constant nodes become constants, all-constant nodes are
// folded, every other node becomes a bound operator through the registry.

#include <ATen/ATen.h>
#include <onnx/onnx_pb.h>

#include <exception>
#include <fstream>
#include <map>
#include <sstream>

#include "lirpa/io/onnx_tensor.h"
#include "lirpa/io/share_plan.h"
#include "lirpa/ops/index_ops.h"
#include "lirpa/ops/registry.h"
#include "lirpa/ops/zone_edges.h"
#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/sharded_param_store.h"

namespace tessera::lirpa {
namespace detail {
namespace {

struct LoadState {
  /// Initializers stay in the model until a node reads them: each is converted when used
  /// and freed after it (a sharded store keeps only its block), so the whole weights are
  /// never all resident as tensors.
  std::map<std::string, const onnx::TensorProto*> initializers;
  std::map<std::string, at::Tensor> constants;  // Constant nodes and folded values
  std::map<std::string, int> variables;         // value name -> node id
  const SharePlan* plan = nullptr;              // this rank's share of the zones, or none
  std::map<std::pair<int, int>, int> entered;   // (node, zone) -> its enter edge
  std::vector<LoadedNode>* trace = nullptr;     // what was built of each ONNX node, or none

  /// The constant called `name`, or undefined.
  at::Tensor constant(const std::string& name, const std::string& source) const {
    if (auto c = constants.find(name); c != constants.end()) return c->second;
    if (auto t = initializers.find(name); t != initializers.end()) return tensor_from_proto(*t->second, source);
    return {};
  }
};

std::vector<int64_t> input_dims(const onnx::ValueInfoProto& v) {
  std::vector<int64_t> dims;
  for (const auto& d : v.type().tensor_type().shape().dim()) dims.push_back(d.has_dim_value() && d.dim_value() > 0 ? d.dim_value() : 1);
  return dims;
}

OnnxNode make_view(const onnx::NodeProto& p, const std::string& name, Graph& g, LoadState& s,
                   const std::string& source) {
  OnnxNode n;
  n.op_type = p.op_type();
  n.name = name;
  n.params = &g.params();
  n.graph = &g;
  for (const auto& a : p.attribute()) n.attrs[a.name()] = attr_from_proto(a, source + ": node '" + name + "'");
  for (const auto& in : p.input()) {
    if (in.empty()) continue;  // an omitted optional input
    NodeInput ni;
    if (auto v = s.variables.find(in); v != s.variables.end()) {
      ni.node = v->second;
      ni.shape = g.node(v->second).shape;
    } else if (at::Tensor c = s.constant(in, source); c.defined()) {
      ni.key = in;
      ni.value = c;
      ni.shape = c.sizes().vec();
    } else {
      TESSERA_THROW(ParseError, source, ": node '", name, "' (", p.op_type(), ") reads unknown value '", in, "'");
    }
    n.inputs.push_back(ni);
  }
  return n;
}

// This rank's share of node n (share_plan.h): its constants sliced, a Reshape's target
// made the share's, its variable inputs passed through their zone's enter edge.
void apply_share(const SharePlan& plan, OnnxNode& n, Graph& g, LoadState& s) {
  if (auto it = plan.slices.find(n.name); it != plan.slices.end()) {
    for (const SharePlan::ConstSlice& c : it->second) {
      NodeInput& in = n.inputs.at(c.input);
      TESSERA_CHECK(in.is_const(), InvalidInput, "node '", n.name, "': input ", c.input, " is not a constant");
      in.value = in.value.index_select(c.axis, c.index).contiguous();
      in.shape = in.value.sizes().vec();
      in.key = n.name + "/share/" + in.key;  // the whole constant may be read elsewhere
    }
  }
  if (auto it = plan.reshapes.find(n.name); it != plan.reshapes.end()) {
    NodeInput& target = n.inputs.at(1);
    target.value = at::tensor(it->second, at::kLong);
    target.shape = {static_cast<int64_t>(it->second.size())};
  }
  if (auto it = plan.enter.find(n.name); it != plan.enter.end()) {
    for (NodeInput& in : n.inputs) {
      if (in.is_const()) continue;
      auto [edge, fresh] = s.entered.try_emplace({in.node, it->second}, -1);
      if (fresh)
        edge->second = g.add_node(g.node(in.node).name + "/enter" + std::to_string(it->second),
                                  make_zone_enter(plan.comm, it->second), {in.node});
      in.node = edge->second;
    }
  }
}

// What the loader built of node p (share_plan.h), for the zone planner.
void record(const onnx::NodeProto& p, const OnnxNode& n, const LoadState& s, std::vector<LoadedNode>& trace) {
  LoadedNode t{p.op_type(), n.name, n.attrs, {}, {}, {}, {}, {}};
  for (const auto& in : p.input()) {
    if (in.empty()) continue;
    t.inputs.push_back(in);
  }
  for (const NodeInput& in : n.inputs) {
    t.input_nodes.push_back(in.node);
    t.input_shapes.push_back(in.shape);
  }
  for (const auto& out : p.output()) {
    t.outputs.push_back(out);
    auto v = s.variables.find(out);
    t.output_nodes.push_back(v == s.variables.end() ? -1 : v->second);
  }
  trace.push_back(std::move(t));
}

// Handles one node: Constant, Shape of a variable, folding, or a bound operator.
void add_onnx_node(const onnx::NodeProto& p, int index, Graph& g, LoadState& s, const std::string& source) {
  std::string name = p.name().empty() ? p.op_type() + "_" + std::to_string(index) : p.name();
  TESSERA_CHECK(p.output_size() >= 1, ParseError, source, ": node '", name, "' has no output");
  const std::string& out = p.output(0);
  OnnxNode n = make_view(p, name, g, s, source);
  if (s.plan) apply_share(*s.plan, n, g, s);
  struct Recorder {  // records the node however it is handled below
    const onnx::NodeProto& p;
    const OnnxNode& n;
    const LoadState& s;
    ~Recorder() {
      if (s.trace && std::uncaught_exceptions() == 0) record(p, n, s, *s.trace);
    }
  } recorder{p, n, s};
  if (p.op_type() == "Constant") {
    auto it = n.attrs.find("value");
    if (it != n.attrs.end() && it->second.t.defined()) s.constants[out] = it->second.t;
    else if (n.has("value_float")) s.constants[out] = at::full({}, n.attrs["value_float"].f, at::kFloat);
    else if (n.has("value_floats")) s.constants[out] = at::tensor(n.attrs["value_floats"].floats, at::kDouble).to(at::kFloat);
    else if (n.has("value_int")) s.constants[out] = at::full({}, n.attrs["value_int"].i, at::kLong);
    else if (n.has("value_ints")) s.constants[out] = at::tensor(n.attrs["value_ints"].ints, at::kLong);
    else TESSERA_THROW(Unsupported, source, ": Constant node '", name, "' has no supported value attribute");
    return;
  }
  if (p.op_type() == "Shape" && n.variable_count() == 1) {  // static shape of a variable
    s.constants[out] = at::tensor(n.inputs[0].shape, at::kLong);
    return;
  }
  if (p.op_type() == "Split") {  // several outputs: one Slice (or folded slice) each
    const NodeInput& x = n.inputs.at(0);
    const std::vector<SliceRange> parts = split_ranges(n, x.shape, p.output_size());
    for (int k = 0; k < p.output_size(); ++k) {
      if (x.is_const()) s.constants[p.output(k)] = apply_slice(x.value, {parts[k]}, 0).contiguous();
      else s.variables[p.output(k)] = g.add_node(name + "/" + std::to_string(k), make_slice({parts[k]}, x.shape), {x.node});
    }
    return;
  }
  if (n.variable_count() == 0) {
    s.constants[out] = fold_constant(n);
    return;
  }
  const OpFactory* factory = default_registry().find(p.op_type());
  TESSERA_CHECK(factory != nullptr, Unsupported, source, ": unsupported operator '", p.op_type(), "' in node '", name,
                "'; supported operators: ", default_registry().supported());
  // constants reach the parameter store through the factory (OnnxNode::key_of, put)
  BuiltOp built = (*factory)(n);
  s.variables[out] = g.add_node(name, built.op, built.inputs);
  if (s.plan) {
    if (auto it = s.plan->sum_after.find(name); it != s.plan->sum_after.end())
      s.variables[out] = g.add_node(name + "/sum", make_zone_sum(s.plan->comm, it->second), {s.variables[out]});
  }
}

}  // namespace
}  // namespace detail

namespace {

Graph graph_from_model(const onnx::ModelProto& model, const std::string& source, std::shared_ptr<ParamStore> store,
                       const detail::SharePlan* plan = nullptr, std::vector<detail::LoadedNode>* trace = nullptr) {
  const onnx::GraphProto& gp = model.graph();
  detail::LoadState s;
  s.plan = plan;
  s.trace = trace;
  Graph g(store ? std::move(store) : std::make_shared<LocalParamStore>());
  for (const auto& t : gp.initializer()) s.initializers[t.name()] = &t;
  for (const auto& in : gp.input()) {
    if (s.initializers.count(in.name())) continue;
    TESSERA_CHECK(g.nodes().empty(), Unsupported, source, ": the model has more than one input ('",
                  g.node(0).name, "', '", in.name(), "')");
    s.variables[in.name()] = g.add_input(in.name(), detail::input_dims(in));
  }
  TESSERA_CHECK(!g.nodes().empty(), ParseError, source, ": the model has no input");
  for (int i = 0; i < gp.node_size(); ++i) {
    // A malformed node (missing inputs, shapes that do not fit its operator) can fail inside
    // LibTorch or the standard library; that becomes a ParseError naming the node.
    const onnx::NodeProto& p = gp.node(i);
    const auto node_error = [&](const char* what) {
      const std::string name = p.name().empty() ? p.op_type() + "_" + std::to_string(i) : p.name();
      std::string first_line(what);
      first_line = first_line.substr(0, first_line.find('\n'));
      TESSERA_THROW(ParseError, source, ": node '", name, "' (", p.op_type(), ") cannot be loaded: ", first_line);
    };
    try {
      detail::add_onnx_node(p, i, g, s, source);
    } catch (const Error&) {
      throw;
    } catch (const c10::Error& e) {
      node_error(e.what_without_backtrace());
    } catch (const std::exception& e) {
      node_error(e.what());
    }
  }
  TESSERA_CHECK(gp.output_size() >= 1, ParseError, source, ": the model has no output");
  auto out = s.variables.find(gp.output(0).name());
  TESSERA_CHECK(out != s.variables.end(), Unsupported, source, ": output '", gp.output(0).name(),
                "' does not depend on the input");
  g.set_output(out->second);
  return g;
}

Graph shares_of(const onnx::ModelProto& model, const std::string& source,
                const std::shared_ptr<dist::Communicator>& comm, ZoneSplit* found) {
  std::vector<detail::LoadedNode> trace;
  detail::SharePlan plan;
  at::Tensor probe, expected;
  {
    // the whole network to plan on, its weights FSDP-sharded: no rank ever holds them all
    std::shared_ptr<ParamStore> store;
    if (comm->size() > 1) store = std::make_shared<ShardedParamStore>(comm, ShardMode::Fsdp);
    const Graph whole = graph_from_model(model, source, store, nullptr, &trace);
    detail::ZoneCounts counts;
    plan = detail::plan_shares(whole, trace, comm, &counts);
    TESSERA_CHECK(counts.attention + counts.mlp > 0, Unsupported, source,
                  ": tensor parallelism by heads found no attention or MLP block to split over ", comm->size(),
                  " ranks (heads, or hidden columns, must divide evenly; between the projections only operators "
                  "that keep heads apart)");
    if (found) *found = {counts.attention, counts.mlp};
    // a point every rank builds alike, and the whole network's output there
    probe = at::sin(at::arange(whole.input_size(), at::kDouble) * 0.7).reshape({1, whole.input_size()}) * 0.5 + 0.5;
    expected = whole.forward(probe, at::kDouble);
  }
  Graph share = graph_from_model(model, source, nullptr, &plan, nullptr);
  at::Tensor got = share.forward(probe, at::kDouble);
  const double diff = (got - expected).abs().max().item<double>() / (1 + expected.abs().max().item<double>());
  TESSERA_CHECK(diff <= 1e-9, InvalidInput, source, ": the ranks' shares of the split blocks do not reproduce the ",
                "network (relative difference ", diff, " at a test point): tensor parallelism by heads cannot split it");
  return share;
}

}  // namespace

Graph load_onnx_bytes_shares(const std::string& bytes, const std::string& source,
                             const std::shared_ptr<dist::Communicator>& comm, ZoneSplit* found) {
  onnx::ModelProto model;
  TESSERA_CHECK(model.ParseFromString(bytes), ParseError, source, ": not a valid ONNX model");
  return shares_of(model, source, comm, found);
}

Graph load_onnx_shares(const std::string& path, const std::shared_ptr<dist::Communicator>& comm, ZoneSplit* found) {
  std::ifstream in(path, std::ios::binary);
  TESSERA_CHECK(in.good(), InvalidInput, "cannot open ONNX file '", path, "'");
  onnx::ModelProto model;
  TESSERA_CHECK(model.ParseFromIstream(&in), ParseError, path, ": not a valid ONNX model");
  return shares_of(model, path, comm, found);
}

Graph load_onnx_bytes(const std::string& bytes, const std::string& source, std::shared_ptr<ParamStore> store) {
  onnx::ModelProto model;
  TESSERA_CHECK(model.ParseFromString(bytes), ParseError, source, ": not a valid ONNX model");
  return graph_from_model(model, source, std::move(store));
}

Graph load_onnx(const std::string& path, std::shared_ptr<ParamStore> store) {
  std::ifstream in(path, std::ios::binary);
  TESSERA_CHECK(in.good(), InvalidInput, "cannot open ONNX file '", path, "'");
  onnx::ModelProto model;  // parsed from the stream: no second copy of the file's bytes
  TESSERA_CHECK(model.ParseFromIstream(&in), ParseError, path, ": not a valid ONNX model");
  return graph_from_model(model, path, std::move(store));
}

std::string supported_onnx_ops() { return detail::default_registry().supported(); }

}  // namespace tessera::lirpa
