// beta-CROWN on the final rows of graph domains: see graph_beta.h.

#include "lirpa/bab/graph_beta.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <map>
#include <optional>
#include <set>

#include "lirpa/bab/domain_blocks.h"

namespace tessera::lirpa::detail {

std::vector<int64_t> lead_shape(const Graph& graph, int id, int64_t n) {
  std::vector<int64_t> s{n};
  s.insert(s.end(), graph.node(id).shape.begin(), graph.node(id).shape.end());
  return s;
}

// beta-CROWN on the final rows of D domains (intermediate bounds fixed in `state`; `rows`: K
// rows per domain, domain-major): the best lower bounds [D, K] of c y - rhs over the
// multipliers and the final rows' slopes (alpha, one set per row, from `start` or CROWN's),
// at least `lb`. Each domain's multipliers and slopes are its own rows; a domain leaves the
// optimisation once verified (some row positive in each disjunct), and all of them when `stop` says so (the
// best bounds so far are sound: every slope in [0, 1] and every beta >= 0 is).
at::Tensor optimise_beta(const Graph& graph, BoundState& state, const OpEnv& env, const std::vector<GraphRelu>& relus,
                         const std::vector<at::Tensor>& split, const APtr& rows, const at::Tensor& rhs, at::Tensor lb,
                         const BetaOptions& o, const std::function<bool()>& stop, dist::Communicator* shard,
                         const RowParams& start, RowParams* end_params, LastPass* last,
                         const std::map<int, at::Tensor>* alpha_start, const at::Tensor& row_group,
                         std::map<int, at::Tensor>* end_other) {
  at::AutoGradMode grad(true);
  const int64_t domains = lb.size(0), k = lb.size(1), total = rows->rows();
  at::Tensor has = at::zeros({static_cast<int64_t>(relus.size())}, at::kBool);  // ReLU nodes with splits
  for (size_t j = 0; j < relus.size(); ++j) has[j] = (split[j] != 0).any();
  if (shard) has = any_rank(*shard, has);  // on some rank's domains: every rank the same rows
  std::vector<size_t> with;
  for (size_t j = 0; j < relus.size(); ++j)
    if (has[j].item<bool>()) with.push_back(j);
  // [S, n_j] from a start [D, K, n_j] (S = D K rows)
  auto from_start = [&](const std::vector<at::Tensor>& v, size_t j) {
    return v[j].to(env.dtype).reshape({total, relus[j].size}).clone();
  };
  std::vector<at::Tensor> beta, sign;
  std::vector<AdamSlot> slots;
  for (size_t j : with) {
    beta.push_back(start.empty() ? at::zeros({total, relus[j].size}, env.dtype) : from_start(start.beta, j));
    // [S, n_j]: +1 z >= 0, -1 z <= 0, 0 free, the split of each row's domain
    sign.push_back(per_row(split[j].to(env.dtype), total).contiguous());
    slots.push_back({at::zeros_like(beta.back()), at::zeros_like(beta.back())});
  }
  // node id's parameters [S, *shape] from alpha_start's [K, *shape] (every domain the same),
  // else `init` (CROWN's)
  auto given_or = [&](int id, at::Tensor init) {
    auto it = alpha_start ? alpha_start->find(id) : std::map<int, at::Tensor>::const_iterator();
    if (!alpha_start || it == alpha_start->end() || it->second.size(0) != k ||
        it->second.sizes().slice(1) != init.sizes().slice(1))
      return init;
    std::vector<int64_t> s = it->second.sizes().vec();
    s.insert(s.begin(), domains);  // [D, K, *shape]
    return it->second.to(env.dtype).unsqueeze(0).expand(s).reshape(init.sizes()).clone();
  };
  // slopes of the final rows: (output, ReLU node) -> [S, *shape], the start's, the given or CROWN's
  std::map<std::pair<int, int>, at::Tensor> alpha;
  std::map<std::pair<int, int>, AdamSlot> alpha_slots;
  std::vector<size_t> sloped;  // the ReLU nodes with slopes
  for (size_t j = 0; j < relus.size(); ++j) {
    const GraphRelu& r = relus[j];
    const Node& node = graph.node(r.node);
    if (!node.op->has_alpha()) continue;
    std::pair<int, int> key{graph.output_id(), r.node};
    alpha[key] = start.empty() ? given_or(r.node, per_row(node.op->initial_alpha(*state.bounds[r.input]).to(env.dtype), total)
                                                    .contiguous())
                               : from_start(start.alpha, j).reshape(lead_shape(graph, r.input, total));
    alpha_slots[key] = {at::zeros_like(alpha[key]), at::zeros_like(alpha[key])};
  }
  for (const auto& [key, t] : alpha)
    for (size_t j = 0; j < relus.size(); ++j)
      if (relus[j].node == key.second) sloped.push_back(j);
  // the other relaxations with free parameters (curves' tangents, products' plane mixes): each
  // row's own, from the given start or CROWN's, optimised with the rest, not handed to the children
  std::set<int> relu_nodes;
  for (const GraphRelu& r : relus) relu_nodes.insert(r.node);
  for (const Node& node : graph.nodes()) {
    if (node.id == 0 || node.id > graph.output_id() || !node.op->has_alpha() || relu_nodes.count(node.id)) continue;
    if (!state.bounds[node.inputs.at(0)]) continue;  // not reached by these rows' bounds: CROWN's planes
    std::pair<int, int> key{graph.output_id(), node.id};
    alpha[key] = given_or(node.id, per_row(node.op->initial_alpha(*state.bounds[node.inputs.at(0)]).to(env.dtype), total)
                                       .contiguous());
    alpha_slots[key] = {at::zeros_like(alpha[key]), at::zeros_like(alpha[key])};
  }
  if (with.empty() && alpha.empty()) return lb;
  // each row's parameters at its last step: where its domain left (verified) or the end
  std::vector<at::Tensor> end_beta;
  std::map<std::pair<int, int>, at::Tensor> end_alpha;
  if (end_params) {
    for (const at::Tensor& b : beta) end_beta.push_back(b.clone());
    for (const auto& [key, t] : alpha) end_alpha[key] = t.clone();
  }
  AlphaOptions adam;  // Adam's moment decays
  double lr = o.lr_beta, lr_alpha = o.lr_alpha;
  at::Tensor best = lb.clone();
  at::Tensor alive = at::arange(domains, at::kLong);  // the domains still optimised
  BoundState* st = &state;
  std::optional<BoundState> shrunk;
  APtr live_rows = rows;
  std::map<int, at::Tensor> extra;
  for (int it = 1; it <= o.iterations; ++it) {
    if (stop && stop()) break;
    const int64_t s = live_rows->rows();
    extra.clear();
    std::vector<at::Tensor> params;
    for (size_t i = 0; i < with.size(); ++i) {
      at::Tensor bt = beta[i].detach().requires_grad_(true);
      params.push_back(bt);
      const GraphRelu& r = relus[with[i]];
      at::Tensor rows_z = (-bt * sign[i]).reshape(lead_shape(graph, r.input, s));  // -beta s z: <= 0 on the domain
      auto e = extra.find(r.input);
      extra[r.input] = e == extra.end() ? rows_z : e->second + rows_z;
    }
    st->alpha.clear();
    for (auto& [key, t] : alpha) {
      st->alpha[key] = t.detach().requires_grad_(true);
      params.push_back(st->alpha[key]);
    }
    st->extra_rows = &extra;
    if (last) st->record = &last->rows;  // kept from the last pass: branching reads them
    at::Tensor cur = crown_lower(graph, *st, env, graph.output_id(), live_rows, true).reshape({alive.numel(), k}) - rhs;
    st->extra_rows = nullptr;
    st->record = nullptr;
    if (last) last->domains = alive, last->lb = cur.detach(), last->taken = true;
    st->alpha.clear();
    at::Tensor before = best.index_select(0, alive);
    at::Tensor now = at::max(before, cur.detach());
    best.index_copy_(0, alive, now);
    if (end_params) {  // the live rows' parameters of this step (the one `cur` was taken at)
      at::Tensor global = (alive.unsqueeze(1) * k + at::arange(k, at::kLong).unsqueeze(0)).reshape({-1});
      for (size_t i = 0; i < with.size(); ++i) end_beta[i].index_copy_(0, global, beta[i]);
      for (auto& [key, t] : alpha) end_alpha[key].index_copy_(0, global, t);
    }
    at::Tensor open = at::nonzero(best_rows(now, row_group).second <= 0).reshape({-1});  // positions in `alive`
    // every domain (of every rank) verified: a positive row in each of its disjuncts
    if (shard ? !on_any_rank(*shard, open.numel() > 0) : open.numel() == 0) break;
    auto grads = torch::autograd::grad({-cur.sum()}, params, {}, false, false, true);
    for (size_t i = 0; i < with.size(); ++i)
      if (grads[i].defined()) adam_step(beta[i], grads[i], slots[i], adam, lr, it, INFINITY);
    size_t g = with.size();
    for (auto& [key, t] : alpha) {
      if (grads[g].defined()) adam_step(t, grads[g], alpha_slots[key], adam, lr_alpha, it);  // slopes in [0, 1]
      ++g;
    }
    lr *= o.lr_decay;
    lr_alpha *= o.lr_decay;
    // the verified domains leave: their rows, state and multipliers (a rank whose domains
    // are all verified keeps stepping them while the others' are not, in step with them)
    if (open.numel() > 0 && open.numel() < alive.numel()) {
      at::Tensor keep_rows = (open.unsqueeze(1) * k + at::arange(k, at::kLong).unsqueeze(0)).reshape({-1});
      for (size_t i = 0; i < with.size(); ++i) {
        beta[i] = beta[i].index_select(0, keep_rows);
        sign[i] = sign[i].index_select(0, keep_rows);
        slots[i] = {slots[i].m.index_select(0, keep_rows), slots[i].v.index_select(0, keep_rows)};
      }
      for (auto& [key, t] : alpha) {
        t = t.index_select(0, keep_rows);
        AdamSlot& sl = alpha_slots[key];
        sl = {sl.m.index_select(0, keep_rows), sl.v.index_select(0, keep_rows)};
      }
      live_rows = DenseA::make(live_rows->dense(env.dtype).index_select(0, keep_rows));
      shrunk.emplace(select_domains(*st, open));
      st = &*shrunk;
      alive = alive.index_select(0, open);
    }
  }
  if (end_params) {
    end_params->alpha.assign(relus.size(), at::Tensor());
    end_params->beta.assign(relus.size(), at::Tensor());
    for (size_t j : sloped) end_params->alpha[j] = end_alpha.at({graph.output_id(), relus[j].node}).reshape({domains, k, -1});
    for (size_t j = 0; j < relus.size(); ++j)
      end_params->beta[j] = at::zeros({domains, k, relus[j].size}, env.dtype);
    for (size_t i = 0; i < with.size(); ++i) end_params->beta[with[i]] = end_beta[i].reshape({domains, k, -1});
    if (end_other) {
      for (const auto& [key, t] : end_alpha)
        if (!relu_nodes.count(key.second)) (*end_other)[key.second] = t;
    }
  }
  return best;
}

at::Tensor record_at(const Graph& graph, BoundState& state, const OpEnv& env, const std::vector<GraphRelu>& relus,
               const std::vector<at::Tensor>& split, const APtr& rows, const RowParams& params,
               std::map<int, APtr>& record, const std::map<int, at::Tensor>* other) {
  at::NoGradGuard no_grad;
  const int64_t total = rows->rows();
  std::map<int, at::Tensor> extra;  // -beta s z at each split ReLU's input
  for (size_t j = 0; j < relus.size(); ++j) {
    if (j >= params.beta.size() || !(split[j] != 0).any().item<bool>()) continue;
    const GraphRelu& r = relus[j];
    at::Tensor sign = per_row(split[j].to(at::kDouble), total);
    at::Tensor rows_z = (-params.beta[j].reshape({total, r.size}) * sign).reshape(lead_shape(graph, r.input, total));
    auto e = extra.find(r.input);
    extra[r.input] = e == extra.end() ? rows_z : e->second + rows_z;
  }
  state.alpha.clear();
  for (size_t j = 0; j < relus.size(); ++j)
    if (j < params.alpha.size() && params.alpha[j].defined())
      state.alpha[{graph.output_id(), relus[j].node}] = params.alpha[j].reshape(lead_shape(graph, relus[j].input, total));
  if (other)
    for (const auto& [id, t] : *other) state.alpha[{graph.output_id(), id}] = t.to(env.dtype);
  state.extra_rows = &extra;
  state.record = &record;
  at::Tensor lb = crown_lower(graph, state, env, graph.output_id(), rows, !state.alpha.empty());
  state.record = nullptr;
  state.extra_rows = nullptr;
  state.alpha.clear();
  return lb;
}

}  // namespace tessera::lirpa::detail
