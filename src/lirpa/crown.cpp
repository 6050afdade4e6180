// CROWN: backward propagation of linear bound functions through the graph.

#include <ATen/ATen.h>

#include <algorithm>
#include <functional>
#include <limits>

#include "propagation.h"
#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"
#include "tessera/dist/differentiable.h"
#include "zone_pass.h"

namespace tessera::lirpa::detail {

RowBlock row_block(int64_t rows, const std::shared_ptr<dist::Communicator>& shard_rows) {
  const int parts = shard_rows ? shard_rows->size() : 1;
  if (parts == 1) return {0, rows, {rows}};
  constexpr int64_t kAlign = 16;
  const int64_t block = ((rows + parts - 1) / parts + kAlign - 1) / kAlign * kAlign;  // ceil(R/P) up to 16
  RowBlock b;
  for (int r = 0; r < parts; ++r) b.counts.push_back(std::clamp<int64_t>(rows - r * block, 0, block));
  if (b.counts.back() == 0) return {0, rows, {rows}};  // some rank would have nothing: keep whole
  b.begin = shard_rows->rank() * block;
  b.end = b.begin + b.counts[shard_rows->rank()];
  b.split = true;
  return b;
}

at::Tensor any_rank(dist::Communicator& comm, const at::Tensor& flags) {
  at::Tensor t = flags.to(at::kLong).contiguous();
  comm.all_reduce(t, dist::ReduceOp::Max);  // element-wise or
  return t > 0;
}

Interval without_nan(const Interval& b) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  return {at::where(at::isnan(b.lower), at::full_like(b.lower, -kInf), b.lower),
          at::where(at::isnan(b.upper), at::full_like(b.upper, kInf), b.upper)};
}

Interval limited(const BoundState& state, int node, Interval b) {
  if (static_cast<size_t>(node) >= state.limits.size() || !state.limits[node]) return b;
  const Interval& lim = *state.limits[node];
  return {at::max(b.lower, lim.lower.to(b.lower.scalar_type()).reshape(b.lower.sizes())),
          at::min(b.upper, lim.upper.to(b.upper.scalar_type()).reshape(b.upper.sizes()))};
}

namespace {

// The state with `f` applied to each of its bounds and limits, and its reference options.
BoundState map_intervals(const BoundState& state, const std::function<Interval(const Interval&)>& f) {
  BoundState out(state.bounds.size());
  auto map = [&](const std::optional<Interval>& b) { return b ? std::optional<Interval>(f(*b)) : std::nullopt; };
  for (size_t i = 0; i < state.bounds.size(); ++i) out.bounds[i] = map(state.bounds[i]);
  out.limits.resize(state.limits.size());
  for (size_t i = 0; i < state.limits.size(); ++i) out.limits[i] = map(state.limits[i]);
  out.intersect_reference = state.intersect_reference;
  out.forward_forms = state.forward_forms;
  return out;
}

}  // namespace

BoundState select_domains(const BoundState& state, const at::Tensor& keep) {
  return map_intervals(state, [&](const Interval& b) {
    return Interval{b.lower.index_select(0, keep), b.upper.index_select(0, keep)};
  });
}

BoundState with_dtype(const BoundState& state, at::ScalarType dtype) {
  return map_intervals(state, [&](const Interval& b) { return Interval{b.lower.to(dtype), b.upper.to(dtype)}; });
}

namespace {

/// Lower bounds of the unit rows sign_s e_{pos_s} over node p: this rank's block of the rows
/// when the state is sharded, then every rank's block gathered in row order (through a
/// differentiable gather when the slopes are optimised: its backward sums every rank's
/// gradient for each block and hands it to the rank that computed the block).
at::Tensor unit_rows_lower(const Graph& graph, const BoundState& state, const OpEnv& env, int p,
                           const at::Tensor& pos, const at::Tensor& sign, bool use_alpha) {
  const auto& shape = graph.node(p).shape;
  // ranks holding shares of zones split the rows of a whole node too (a zone's own node: its
  // rows are already the rank's)
  std::shared_ptr<dist::Communicator> split = state.shard_rows;
  if (!split && graph.node(p).zone < 0) split = zone_comm(graph);
  // rows of several domains are not split (a block would cut a domain's rows apart)
  RowBlock b = state.domains() == 1 ? row_block(pos.numel(), split) : RowBlock{0, pos.numel(), {pos.numel()}};
  if (!b.split) return crown_lower(graph, state, env, p, std::make_shared<UnitRowsA>(shape, pos, sign), use_alpha);
  auto mine = std::make_shared<UnitRowsA>(shape, pos.slice(0, b.begin, b.end), sign.slice(0, b.begin, b.end));
  at::Tensor lb = crown_lower(graph, state, env, p, mine, use_alpha, /*rows_split=*/true);
  if (use_alpha) return dist::differentiable::all_gather(split, lb);
  return split->all_gather(lb.contiguous(), b.counts);  // copies: bitwise the blocks' values
}

}  // namespace

at::Tensor crown_lower(const Graph& graph, const BoundState& state, const OpEnv& env, int start, const APtr& a,
                       bool use_alpha, bool rows_split) {
  std::vector<APtr> acc(start + 1);
  acc[start] = a;
  at::Tensor bias = at::zeros({a->rows()}, at::TensorOptions().dtype(env.dtype));
  ZonePass zones(graph, start, a->rows(), rows_split);  // tensor-parallel zones' collectives (zone_pass.h)
  TESSERA_CHECK(!zones.active() || (!use_alpha && !state.extra_rows && !state.record && state.domains() == 1 &&
                                    (!state.shard_rows || !rows_split)),
                Unsupported,
                "tensor parallelism by heads bounds one box by IBP or CROWN (alpha-CROWN, branch and bound and "
                "state sharding through its zones are not built)");
  for (int id = start; id >= 1; --id) {
    if (state.extra_rows) {
      auto it = state.extra_rows->find(id);
      if (it != state.extra_rows->end()) acc[id] = add_a(std::move(acc[id]), DenseA::make(it->second), env.dtype);
    }
    if (!acc[id]) continue;
    acc[id] = zones.entering(graph.node(id), std::move(acc[id]), env.dtype);
    if (state.record && state.record->count(id)) (*state.record)[id] = acc[id];
    const Node& node = graph.node(id);
    BackwardContext ctx;
    if (node.op->needs_input_bounds()) {
      for (int in : node.inputs) {
        TESSERA_CHECK(state.bounds[in].has_value(), InvalidInput, "CROWN: no bounds for the input of node '",
                      node.name, "'");
        ctx.input_bounds.push_back(*state.bounds[in]);
      }
    }
    if (use_alpha) {
      auto it = state.alpha.find({start, id});
      if (it != state.alpha.end()) ctx.alpha = it->second;
    }
    Backward back = node.op->backward(env, acc[id], ctx);
    acc[id].reset();  // before the sums: a view handed on (a reshape) is then its storage's only holder
    zones.add_bias(node, bias, back.bias);  // constant terms collected on the way
    for (size_t k = 0; k < back.inputs.size(); ++k) back.inputs[k] = zones.leaving(node, std::move(back.inputs[k]), env.dtype);
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      // both taken: rows held only here are added into in place
      if (back.inputs.at(k)) acc[node.inputs[k]] = add_a(std::move(acc[node.inputs[k]]), std::move(back.inputs[k]), env.dtype);
    }
  }
  bias = zones.finish(std::move(bias));
  if (state.record && state.record->count(0)) (*state.record)[0] = acc[0];
  if (!acc[0]) return bias;
  const Interval& box = *state.bounds[0];
  if (box.lower.size(0) == 1) return bias + acc[0]->concretize_lower(box.lower[0], box.upper[0]);  // min over the box
  return bias + acc[0]->concretize_lower(box.lower, box.upper);  // each row over its domain's box
}

Interval crown_rows(const Graph& graph, const BoundState& state, const OpEnv& env, int p, const at::Tensor& idx,
                    bool use_alpha) {
  const int64_t domains = state.domains(), k = idx.size(1);
  // rows per backward pass: as many as keep the widest A matrix on the way back (rows x the
  // largest node before p) within kPassBytes (memory on CNNs; the many narrow rows of a batch
  // of domains of an MLP in one pass), and at least kBatchRows for a batch of domains (fewer
  // passes of [D, rows] each) or kOneDomainRows for one (on a CNN its passes' fresh memory
  // costs more than their count: bench/RESULTS.md, "bounds"); alpha runs keep one pass
  // (alphas per row). Sized for the whole batch: every rank cuts the same chunks.
  constexpr int64_t kPassBytes = int64_t{8} << 20, kBatchRows = 2048, kOneDomainRows = 256;
  int64_t widest = 1;
  for (int id = 0; id <= p; ++id) {
    int64_t size = 1;
    for (int64_t d : graph.node(id).shape) size *= d;
    widest = std::max(widest, size);
  }
  const int64_t batch = state.shard_domains ? state.batch_domains : domains;
  const int64_t pass_rows =
      std::max<int64_t>(batch == 1 ? kOneDomainRows : kBatchRows, kPassBytes / (widest * at::elementSize(env.dtype)));
  const int64_t kChunk = use_alpha ? k : std::max<int64_t>(1, pass_rows / batch);
  std::vector<at::Tensor> lo, hi;
  for (int64_t s = 0; s < k; s += kChunk) {
    int64_t e = std::min(k, s + kChunk);
    at::Tensor part = idx.slice(1, s, e);  // [D, e - s]
    at::Tensor sign = at::cat({at::ones({e - s}, at::kDouble), -at::ones({e - s}, at::kDouble)});
    // rows [I; -I] over each domain's own positions (domain-major)
    at::Tensor lb = unit_rows_lower(graph, state, env, p, at::cat({part, part}, 1).reshape({-1}),
                                    sign.repeat({domains}), use_alpha).reshape({domains, 2 * (e - s)});
    lo.push_back(lb.slice(1, 0, e - s));
    hi.push_back(-lb.slice(1, e - s));  // u = -min(-x)
  }
  if (lo.empty()) {
    at::Tensor none = at::empty({domains, 0}, at::TensorOptions().dtype(env.dtype));
    return {none, none};
  }
  return {at::cat(lo, 1), at::cat(hi, 1)};
}

std::vector<at::Tensor> padding_groups(const at::Tensor& counts, int max_groups, int64_t min_rows) {
  const int64_t b = counts.size(0);
  auto [sorted, order] = counts.sort(0);
  std::vector<int64_t> c(sorted.data_ptr<int64_t>(), sorted.data_ptr<int64_t>() + b);
  // groups are ranges [begin, end) of the ascending counts; a range costs (end - begin) * c[end - 1]
  std::vector<std::pair<int64_t, int64_t>> ranges{{0, b}};
  auto cost = [&](int64_t s, int64_t e) { return e > s ? (e - s) * c[e - 1] : 0; };
  int64_t total = cost(0, b);
  while (static_cast<int>(ranges.size()) < max_groups) {
    int64_t best_gain = 0, best_range = -1, best_cut = 0;
    for (size_t g = 0; g < ranges.size(); ++g) {
      auto [s, e] = ranges[g];
      for (int64_t i = s + min_rows; i + min_rows <= e; ++i) {  // [s, i) and [i, e)
        int64_t gain = cost(s, e) - cost(s, i) - cost(i, e);
        if (gain > best_gain) best_gain = gain, best_range = static_cast<int64_t>(g), best_cut = i;
      }
    }
    if (best_range < 0 || 10 * best_gain < total) break;  // a cut must save 10% of the rows
    auto [s, e] = ranges[best_range];
    ranges[best_range] = {s, best_cut};
    ranges.push_back({best_cut, e});
    total -= best_gain;
  }
  std::vector<at::Tensor> groups;
  for (auto [s, e] : ranges) groups.push_back(order.narrow(0, s, e - s));
  return groups;
}

Interval crown_needed_rows(const Graph& graph, const BoundState& state, const OpEnv& env, int p,
                           const NeededBounds& needed) {
  const int64_t domains = needed.idx.size(0), k = needed.per_domain();
  // groups only where the rows are this pass's alone: no slopes, records or shards
  const bool plain = state.alpha.empty() && !state.record && !state.extra_rows && !state.shard_rows &&
                     !state.shard_domains && !zone_comm(graph);
  std::vector<at::Tensor> groups;
  if (plain) groups = padding_groups(needed.need.sum(1, false, at::kLong));
  if (groups.size() <= 1) return crown_rows(graph, state, env, p, needed.idx, false);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  at::Tensor lower = at::full({domains, k}, -kInf, at::TensorOptions().dtype(env.dtype));  // not bounded
  at::Tensor upper = at::full({domains, k}, kInf, at::TensorOptions().dtype(env.dtype));
  for (const at::Tensor& members : groups) {
    const int64_t kg = needed.need.index_select(0, members).sum(1).max().item<int64_t>();  // the group's rows per domain
    if (kg == 0) continue;  // nothing needed (the reference stands)
    // needed positions come first in idx: the group's first kg columns hold all of them
    Interval t = crown_rows(graph, select_domains(state, members), env, p,
                            needed.idx.index_select(0, members).narrow(1, 0, kg).contiguous(), false);
    lower.narrow(1, 0, kg).index_copy_(0, members, t.lower);
    upper.narrow(1, 0, kg).index_copy_(0, members, t.upper);
  }
  return {lower, upper};
}

NeededBounds NeededBounds::none(int64_t domains) {
  return {at::empty({domains, 0}, at::kLong), at::empty({domains, 0}, at::kBool)};
}

NeededBounds positions_needing_bounds(const Graph& graph, const BoundOp& consumer, int p, const Interval& ref,
                                      dist::Communicator* agree) {
  const int64_t domains = ref.lower.size(0);
  at::Tensor l = ref.lower.reshape({domains, -1}), u = ref.upper.reshape({domains, -1});
  const int64_t n = l.size(1);
  // a linear operator applied directly to the input box: its IBP bounds are exact already
  const Node& pn = graph.node(p);
  if (!pn.op->needs_input_bounds() && pn.inputs == std::vector<int>{0}) return NeededBounds::none(domains);
  at::Tensor need;  // [D, n]
  if (!consumer.tight_bounds_only_across_zero()) {
    need = at::ones({domains, n}, at::kBool);
  } else {
    // Like auto_LiRPA's sparse intermediate bounds: only the unstable ReLU inputs, unless more
    // than 90% of them are unstable (then every position, as its dense path does), per domain.
    constexpr double kMinimumSparsity = 0.9;
    at::Tensor unstable = (l < 0).logical_and(u > 0);                             // [D, n]
    at::Tensor dense = unstable.sum(1, false, at::kLong) > kMinimumSparsity * n;  // [D]
    need = unstable.logical_or(dense.unsqueeze(1));
  }
  at::Tensor k = need.sum(1, false, at::kLong).max().reshape({1});
  if (agree) agree->all_reduce(k, dist::ReduceOp::Max);  // the largest count of any rank's domains
  const int64_t kk = k.item<int64_t>();
  // each domain's positions: the needed ones first, then the others, both ascending
  // (key = n [not needed] + position: distinct, so the order is unique)
  at::Tensor key = need.logical_not().to(at::kLong) * n + at::arange(n, at::kLong).unsqueeze(0);
  at::Tensor idx = std::get<1>(key.sort(1)).narrow(1, 0, kk).contiguous();
  return {idx, need.gather(1, idx)};
}

bool bounds_from_inputs(const Graph& graph, const std::vector<std::optional<Interval>>& bounds, int p) {
  const Node& pn = graph.node(p);
  if (p == 0 || !pn.op->monotone()) return false;
  for (int in : pn.inputs)
    if (!bounds[in]) return false;
  return true;
}

Interval with_needed(const Interval& ref, const NeededBounds& needed, const Interval& tight, bool intersect,
                     bool padding) {
  const int64_t domains = ref.lower.size(0);
  at::Tensor l = ref.lower.reshape({domains, -1}), u = ref.upper.reshape({domains, -1});
  if (needed.per_domain() > 0) {
    // l[d, idx[d]] = tight where domain d needs it (max(tight, reference) with `intersect`:
    // both are sound; written as a where() that keeps `tight`, and its whole gradient, on
    // ties), the reference elsewhere: stable neurons, and the padding positions, so that a
    // domain's bounds do not depend on the others of its batch
    at::Tensor rl = l.gather(1, needed.idx), ru = u.gather(1, needed.idx);
    at::Tensor tl = intersect ? at::where(tight.lower >= rl, tight.lower, rl) : tight.lower;
    at::Tensor tu = intersect ? at::where(tight.upper <= ru, tight.upper, ru) : tight.upper;
    // padding positions: the reference, or with `padding` the reference intersected with what
    // was bounded there (a NaN or an unbounded +-inf keeps the reference)
    at::Tensor pl = padding ? at::where(tight.lower > rl, tight.lower, rl) : rl;
    at::Tensor pu = padding ? at::where(tight.upper < ru, tight.upper, ru) : ru;
    l = l.scatter(1, needed.idx, at::where(needed.need, tl, pl));  // positions distinct per domain
    u = u.scatter(1, needed.idx, at::where(needed.need, tu, pu));
  }
  return {l.reshape(ref.lower.sizes()), u.reshape(ref.upper.sizes())};
}

void crown_intermediate(const Graph& graph, BoundState& state, const OpEnv& env, int upto) {
  // every bound an operator reads is given (a domain reusing all of its parent's): nothing to
  // compute, the reference and forward forms below included
  bool given = true;
  for (const Node& node : graph.nodes()) {
    if (node.id > upto) break;
    if (node.id == 0 || !node.op->needs_input_bounds()) continue;
    for (int p : node.inputs) given = given && state.bounds[p].has_value();
  }
  if (given) return;
  // ref: IBP bounds through the graph that reuse every bound already computed (the
  // reference that tells which ReLU inputs are stable, as auto_LiRPA's sparse bounds).
  std::vector<std::optional<Interval>> ref(graph.nodes().size());
  ref[0] = state.bounds[0];
  // ranks holding their heads' shares agree on the rows of every pass (collectives inside)
  const std::shared_ptr<dist::Communicator> zones = zone_comm(graph);
  std::vector<std::optional<LinearForms>> forms(state.forward_forms ? graph.nodes().size() : 0);
  if (state.forward_forms) forms[0] = input_forms(*state.bounds[0]);
  for (const Node& node : graph.nodes()) {
    if (node.id > upto) break;
    if (node.id == 0) continue;
    if (node.op->needs_input_bounds()) {
      for (int p : node.inputs) {
        if (state.bounds[p]) continue;
        if (bounds_from_inputs(graph, state.bounds, p)) {  // ref[p]: the exact range from them
          state.bounds[p] = without_nan(limited(state, p, *ref[p]));
          continue;
        }
        // the domain's limits (a parent box's bounds, a split's side) first: a neuron they make
        // stable needs no CROWN row
        NeededBounds needed = positions_needing_bounds(graph, *node.op, p, limited(state, p, *ref[p]),
                                                       state.shard_domains ? state.shard_domains.get() : zones.get());
        Interval tight;
        if (needed.per_domain() > 0) tight = crown_needed_rows(graph, state, env, p, needed);
        state.bounds[p] =
            without_nan(limited(state, p, with_needed(*ref[p], needed, tight, state.intersect_reference,
                                                      state.intersect_padding && !state.shard_domains)));
        ref[p] = state.bounds[p];
      }
    }
    std::vector<Interval> in;
    for (int i : node.inputs) in.push_back(*ref[i]);
    ref[node.id] = state.bounds[node.id] ? *state.bounds[node.id] : node.op->ibp(env, in);
    if (state.forward_forms) {  // an activation's forms use its input's bounds just computed
      forms[node.id] = node_forms(graph, forms, ref, env, node.id);
      if (forms[node.id] && !state.bounds[node.id]) ref[node.id] = intersect_forms(*ref[node.id], *forms[node.id]);
    }
  }
}

APtr spec_rows(const Graph& graph, const at::Tensor& c, at::ScalarType dtype) {
  if (!c.defined()) return UnitRowsA::identity(graph.output_shape(), true);
  TESSERA_CHECK(c.dim() == 2 && c.size(1) == graph.output_size(), DimensionMismatch, "specification has ",
                c.dim() == 2 ? c.size(1) : -1, " columns but the network has ", graph.output_size(), " outputs");
  at::Tensor cc = c.to(dtype);
  std::vector<int64_t> s{2 * c.size(0)};
  s.insert(s.end(), graph.output_shape().begin(), graph.output_shape().end());
  return DenseA::make(at::cat({cc, -cc}).reshape(s));
}

APtr spec_side(const Graph& graph, const at::Tensor& c, at::ScalarType dtype, double sign) {
  if (!c.defined()) {
    int64_t n = graph.output_size();
    return std::make_shared<UnitRowsA>(graph.output_shape(), at::arange(n, at::kLong), at::full({n}, sign, at::kDouble));
  }
  TESSERA_CHECK(c.dim() == 2 && c.size(1) == graph.output_size(), DimensionMismatch, "specification has ",
                c.dim() == 2 ? c.size(1) : -1, " columns but the network has ", graph.output_size(), " outputs");
  std::vector<int64_t> s{c.size(0)};
  s.insert(s.end(), graph.output_shape().begin(), graph.output_shape().end());
  return DenseA::make((c.to(dtype) * sign).reshape(s));
}

}  // namespace tessera::lirpa::detail
