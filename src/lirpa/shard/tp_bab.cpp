// Branch and bound on a tensor-parallel network, by ReLU splitting or input splitting. A
// domain holds its input box and, per hidden layer, this rank's pre-activation bounds and
// split constraints (a column layer's: its own block; the others: whole, the same on every
// rank). Every value that a decision
// depends on (the bounds of the rows, the split chosen, infeasibility) is made the same on
// every rank, so the ranks run one search in lockstep.

#include <ATen/ATen.h>

#include <limits>
#include <map>

#include "lirpa/attack/pgd.h"
#include "lirpa/bab/relu_bab.h"
#include "lirpa/shard/tp_bab.h"
#include "lirpa/shard/tp_detail.h"
#include "tessera/dist/communicator.h"

namespace tessera::lirpa::detail {
namespace {

struct TpDomain {
  at::Tensor xl, xu;              ///< [n_in] the input box
  std::vector<Interval> pre;      ///< per hidden layer [1, this rank's neurons], split constraints applied
  std::vector<at::Tensor> split;  ///< per hidden layer [1, this rank's neurons] int8: +1 z >= 0, -1 z <= 0
  double lower = -std::numeric_limits<double>::infinity();  ///< max_k lower(c_k y - rhs_k) over the domain
  int layer = -1;                 ///< hidden layer of the ReLU to split next (-1: none left)
  int64_t neuron = -1;            ///< its global index (input splitting: the input dimension)
};

/// Where each rank's neurons of every hidden layer start (global index of local neuron 0).
struct NeuronLayout {
  std::vector<int64_t> offset;  ///< per hidden layer, this rank's
  std::vector<int64_t> count;   ///< per hidden layer, this rank's
  std::vector<bool> sharded;    ///< per hidden layer: a column layer's output (one block per rank)
};

NeuronLayout neuron_layout(const TpNetwork& net) {
  NeuronLayout nl;
  const auto& layers = net.layers();
  for (size_t k = 0; k + 1 < layers.size(); ++k) {
    const bool col = layers[k].split == TpSplit::Column;
    const int64_t n = col ? tp_local_out(layers[k]) : layers[k].out_features;
    int64_t off = 0;
    if (col) {
      std::vector<int64_t> counts = net.comm().gather_counts(n);  // blocks in rank order
      for (int r = 0; r < net.comm().rank(); ++r) off += counts[r];
    }
    nl.offset.push_back(off);
    nl.count.push_back(n);
    nl.sharded.push_back(col);
  }
  return nl;
}

/// l = max(l, 0) where split active, u = min(u, 0) where inactive.
void apply_split(Interval& b, const at::Tensor& split) {
  b.lower = at::where(split > 0, b.lower.clamp_min(0), b.lower);
  b.upper = at::where(split < 0, b.upper.clamp_max(0), b.upper);
}

class TpSearch {
 public:
  TpSearch(const TpBabContext& ctx, const BabProblem& p, bool input_split)
      : ctx_(ctx), p_(p), net_(ctx.net), layout_(neuron_layout(ctx.net)), input_split_(input_split) {}

  BabOutcome run();

 private:
  bool bound(TpDomain& d, int first, const std::vector<Interval>* parent);
  void choose_split(TpDomain& d, const TpPassRows& keep, int64_t row);
  void branch(const TpDomain& parent, const std::function<void(TpDomain&&)>& keep_open);
  bool any_rank(bool local) const;
  bool attack_leaf(const TpDomain& d, const at::Tensor& start);

  const TpBabContext& ctx_;
  const BabProblem& p_;
  const TpNetwork& net_;
  NeuronLayout layout_;
  const bool input_split_;
  BabOutcome out_;
  bool falsified_ = false, leaf_left_ = false;
};

bool TpSearch::any_rank(bool local) const {
  at::Tensor f = at::full({1}, local ? 1.0 : 0.0, at::kDouble);
  net_.comm().all_reduce(f, dist::ReduceOp::Max);
  return f.item<double>() > 0;
}

// Bounds d (its layers before `first` are already known); false when its split constraints
// contradict each other (empty domain). Candidates for a counterexample and the next split
// come from the final pass.
bool TpSearch::bound(TpDomain& d, int first, const std::vector<Interval>* parent) {
  TpState st;
  st.dtype = at::kDouble;
  st.box = {d.xl.reshape({1, -1}), d.xu.reshape({1, -1})};
  st.pre = d.pre;
  TpClamp clamp = [&](int k, Interval& b) {
    if (parent) b = {at::maximum(b.lower, (*parent)[k].lower), at::minimum(b.upper, (*parent)[k].upper)};
    apply_split(b, d.split[k]);
  };
  tp_hidden_bounds(net_, st, false, TpOptions{}, first, clamp);
  bool empty = false;
  for (const Interval& b : st.pre) empty = empty || (b.lower > b.upper).any().item<bool>();  // l > u: no input
  if (any_rank(empty)) return false;
  d.pre = st.pre;
  TpPassRows keep;
  at::Tensor lb = same_everywhere(net_.comm(), tp_crown_lower(net_, st, static_cast<int>(net_.layers().size()) - 1,
                                                              0, DenseA::make(p_.c), false, &keep));
  at::Tensor g = lb - p_.rhs;  // lower(c_k y) - rhs_k
  auto [best, row] = g.max(0);
  // a child lies inside its parent, so the parent's bound holds for it too (CROWN's adaptive
  // slopes can make the child's own bound lower)
  d.lower = std::max(best.item<double>(), d.lower);
  ++out_.visited;
  if (d.lower > ctx_.options.margin) return true;
  // the box's vertex minimising the best row's linear bound a x: x_i = l_i if a_i > 0 else u_i
  at::Tensor a = same_everywhere(net_.comm(), keep.input[row.item<int64_t>()]);
  if (ctx_.confirm(at::where(a > 0, d.xl, d.xu))) falsified_ = true;
  if (!input_split_) {
    choose_split(d, keep, row.item<int64_t>());
    if (d.layer < 0 && !falsified_) falsified_ = attack_leaf(d, at::where(a > 0, d.xl, d.xu));
  } else {  // smear: the dimension with the largest |a_i| (u_i - l_i)
    at::Tensor smear = a.abs() * (d.xu - d.xl);
    d.layer = smear.max().item<double>() > 0 ? 0 : -1;
    d.neuron = smear.argmax().item<int64_t>();
  }
  return true;
}

// A domain with every ReLU split whose clamped bound stays negative: its bound ignores the
// split constraints, so its minimising vertex may lie outside the domain; PGD from there
// looks for a counterexample nearby (kLeafSteps signed-gradient steps, decaying).
bool TpSearch::attack_leaf(const TpDomain& d, const at::Tensor& start) {
  constexpr int kLeafSteps = 20;
  at::AutoGradMode grad(true);  // PGD differentiates the forward pass
  BatchFn f = [this](const at::Tensor& x) { return tp_forward_differentiable(net_, x); };
  PgdRows r = pgd_rows(f, d.xl, d.xu, start.reshape({1, -1}), p_.c, p_.rhs, kLeafSteps, 0.25, 0.01);
  return r.value.item<double>() <= 0 && ctx_.confirm(r.x[0]);
}

// BaBSR on this rank's neurons, then the best of every rank's best (ties: the lowest rank).
void TpSearch::choose_split(TpDomain& d, const TpPassRows& keep, int64_t row) {
  LayerBounds lb;
  std::vector<at::Tensor> lambda;
  for (size_t j = 0; j < d.pre.size(); ++j) {
    lb.lower.push_back(d.pre[j].lower);
    lb.upper.push_back(d.pre[j].upper);
    lambda.push_back(keep.lambda[j].defined() ? keep.lambda[j].unsqueeze(0)
                                              : at::zeros({1, p_.c.size(0), layout_.count[j]}, at::kDouble));
  }
  at::Tensor mine = at::full({1, 3}, -std::numeric_limits<double>::infinity(), at::kDouble);
  at::Tensor scores = babsr_scores(lb, lambda, d.split, at::full({1}, row, at::kLong));
  if (scores.size(1) > 0) {
    auto [best, flat] = scores.max(1);
    auto [layer, neuron] = flat_to_layer(lb, flat);
    const int64_t j = layer.item<int64_t>();
    mine[0][0] = best.item<double>();
    mine[0][1] = static_cast<double>(j);
    mine[0][2] = static_cast<double>(neuron.item<int64_t>() + layout_.offset[j]);  // global index
  }
  at::Tensor all = net_.comm().all_gather(mine, net_.comm().gather_counts(1));  // [P, 3]
  const int64_t r = all.select(1, 0).argmax().item<int64_t>();                     // first maximum
  if (std::isinf(all[r][0].item<double>())) {
    d.layer = -1;
    d.neuron = -1;
    return;
  }
  d.layer = static_cast<int>(all[r][1].item<double>());
  d.neuron = static_cast<int64_t>(all[r][2].item<double>());
}

BabOutcome TpSearch::run() {
  const int hidden = static_cast<int>(layout_.count.size());
  TpDomain root;
  root.xl = p_.xl;
  root.xu = p_.xu;
  for (int j = 0; j < hidden; ++j) root.split.push_back(at::zeros({1, layout_.count[j]}, at::kChar));
  std::multimap<double, TpDomain> pool;  // the worst domain first
  auto keep_open = [&](TpDomain&& d) {
    if (d.lower > ctx_.options.margin) return;  // proven
    if (d.layer < 0) {
      leaf_left_ = true;  // every ReLU split, still not proven: clamped bounds are not exact
      return;
    }
    const double key = d.lower;
    pool.emplace(key, std::move(d));
  };
  if (bound(root, 0, nullptr)) keep_open(std::move(root));
  auto last_report = Clock::now();
  while (!falsified_) {
    if (pool.empty()) {
      out_.status = leaf_left_ ? BabStatus::Exhausted : BabStatus::Proven;
      out_.reason = "a sub-domain with every ReLU split stays unproven (the TP search clamps bounds, "
                    "without beta multipliers)";
      return out_;
    }
    out_.lower = pool.begin()->first;
    if (ctx_.clock.expired()) return out_.status = BabStatus::Timeout, out_;
    if (static_cast<int64_t>(pool.size()) > ctx_.options.bab.max_domains) {
      out_.reason = "more than " + std::to_string(ctx_.options.bab.max_domains) + " sub-domains";
      return out_.status = BabStatus::Exhausted, out_;
    }
    if (ctx_.progress && std::chrono::duration<double>(Clock::now() - last_report).count() >= 1.0) {
      ctx_.progress(Progress{ctx_.phase, static_cast<int64_t>(pool.size()), out_.visited, out_.lower,
                             ctx_.clock.elapsed()});
      last_report = Clock::now();
    }
    TpDomain parent = std::move(pool.begin()->second);
    pool.erase(pool.begin());
    branch(parent, keep_open);
  }
  return out_.status = BabStatus::Falsified, out_;
}

// The two children of `parent`, bounded (each inherits the parent's bounds: a child is a
// subset of its parent, so the intersection stays sound).
void TpSearch::branch(const TpDomain& parent, const std::function<void(TpDomain&&)>& keep_open) {
  const int j = parent.layer;
  if (input_split_) {  // bisect dimension i: [l, m] and [m, u] cover [l, u]
    const int64_t i = parent.neuron;
    const double m = 0.5 * (parent.xl[i].item<double>() + parent.xu[i].item<double>());
    for (int half : {0, 1}) {
      TpDomain child{parent.xl.clone(), parent.xu.clone(), {}, parent.split, parent.lower, -1, -1};
      (half == 0 ? child.xu : child.xl)[i] = m;
      if (bound(child, 0, &parent.pre)) keep_open(std::move(child));
      if (falsified_) return;
    }
    return;
  }
  // this rank's local index of the split neuron, or -1 when another rank holds it
  int64_t local = parent.neuron - layout_.offset[j];
  if (local < 0 || local >= layout_.count[j]) local = -1;
  for (int side : {+1, -1}) {  // z >= 0, z <= 0: together they cover the parent
    TpDomain child{parent.xl, parent.xu, parent.pre, parent.split, parent.lower, -1, -1};
    if (local >= 0) {
      child.split[j] = child.split[j].clone();
      child.split[j][0][local] = static_cast<int8_t>(side);
      apply_split(child.pre[j], child.split[j]);
    }
    child.pre.resize(static_cast<size_t>(j) + 1);
    if (bound(child, j + 1, &parent.pre)) keep_open(std::move(child));
    if (falsified_) return;
  }
}

}  // namespace

BabOutcome tp_relu_split_bab(const TpBabContext& ctx, const BabProblem& problem) {
  at::NoGradGuard no_grad;
  return TpSearch(ctx, problem, false).run();
}

BabOutcome tp_input_split_bab(const TpBabContext& ctx, const BabProblem& problem) {
  at::NoGradGuard no_grad;
  return TpSearch(ctx, problem, true).run();
}

}  // namespace tessera::lirpa::detail
