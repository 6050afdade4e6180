// compute_bounds: the entry point choosing IBP, CROWN or alpha-CROWN.

#include "tessera/lirpa/bounds.h"

#include <ATen/ATen.h>

#include <cmath>

#include "propagation.h"
#include "tessera/core/error.h"

namespace tessera::lirpa {

Method parse_method(const std::string& name) {
  if (name == "ibp" || name == "IBP") return Method::Ibp;
  if (name == "crown" || name == "CROWN") return Method::Crown;
  if (name == "alpha-crown" || name == "alpha-CROWN") return Method::AlphaCrown;
  TESSERA_THROW(InvalidInput, "unknown bound method '", name, "' (use ibp, crown or alpha-crown)");
}

std::string method_name(Method method) {
  switch (method) {
    case Method::Ibp: return "ibp";
    case Method::Crown: return "crown";
    case Method::AlphaCrown: return "alpha-crown";
  }
  return "?";
}

namespace {

BoundsResult bounds_of(const Graph& graph, const at::Tensor& lower, const at::Tensor& upper,
                       const BoundOptions& options, const at::Tensor& c) {
  TESSERA_CHECK(options.dtype == at::kFloat || options.dtype == at::kDouble, Unsupported,
                "bounds are computed in float32 or float64");
  TESSERA_CHECK(lower.numel() == graph.input_size() && upper.numel() == graph.input_size(), DimensionMismatch,
                "the input box has ", lower.numel(), " values but the network takes ", graph.input_size());
  TESSERA_CHECK((lower <= upper).all().item<bool>(), InvalidInput, "input box has lower > upper");
  TESSERA_CHECK(at::isfinite(lower).all().item<bool>() && at::isfinite(upper).all().item<bool>(), InvalidInput,
                "input box has non-finite values");
  OpEnv env{graph.params(), options.dtype};
  detail::BoundState state(graph.nodes().size());
  state.shard_rows = options.shard_rows;
  state.intersect_reference = options.intersect_ibp;
  std::vector<int64_t> s{1};
  s.insert(s.end(), graph.input_shape().begin(), graph.input_shape().end());
  state.bounds[0] = Interval{lower.to(options.dtype).reshape(s), upper.to(options.dtype).reshape(s)};
  BoundsResult result;
  if (options.method == Method::Ibp) {
    at::NoGradGuard no_grad;
    detail::ibp_all(graph, state, env);
    const Interval& out = *state.bounds[graph.output_id()];
    at::Tensor l = out.lower.reshape({-1}), u = out.upper.reshape({-1});
    if (!c.defined()) return {l, u, 0};
    at::Tensor cc = c.to(options.dtype);
    // C y in [C+ l + C- u, C+ u + C- l]
    return {at::matmul(cc.clamp_min(0), l) + at::matmul(cc.clamp_max(0), u),
            at::matmul(cc.clamp_min(0), u) + at::matmul(cc.clamp_max(0), l), 0};
  }
  APtr rows = detail::spec_rows(graph, c, options.dtype);
  int64_t k = rows->rows() / 2;
  at::Tensor lb;
  {
    at::NoGradGuard no_grad;
    if (options.known_intermediate) {
      for (const auto& [p, b] : *options.known_intermediate) {
        TESSERA_CHECK(p > 0 && p < static_cast<int>(state.bounds.size()), InvalidInput, "known bounds for node ", p,
                      ", which the network does not have");
        state.bounds[p] = Interval{b.lower.to(options.dtype), b.upper.to(options.dtype)};
      }
    }
    detail::crown_intermediate(graph, state, env, graph.output_id());
    if (options.method == Method::Crown) lb = detail::crown_lower(graph, state, env, graph.output_id(), rows, false);
  }
  // the tightest intermediate bounds seen (CROWN's, then each alpha-CROWN step's)
  std::vector<std::optional<Interval>> tightest = state.bounds;
  auto* tight = options.keep_intermediate ? &tightest : nullptr;
  auto finish = [&](BoundsResult r) {
    if (!options.keep_intermediate) return r;
    for (const Node& node : graph.nodes()) {
      if (node.id == 0 || node.id > graph.output_id() || !node.op->needs_input_bounds()) continue;
      for (int p : node.inputs)
        if (p != 0 && tightest[p])
          r.intermediate[p] = Interval{tightest[p]->lower.detach().to(at::kDouble), tightest[p]->upper.detach().to(at::kDouble)};
    }
    return r;
  };
  if (options.method == Method::AlphaCrown && options.alpha.separate_sides) {
    int steps_lower = 0, steps_upper = 0;
    result.lower = detail::alpha_crown_lower(graph, state, env, detail::spec_side(graph, c, options.dtype, 1.0),
                                             options.alpha, steps_lower, tight, &result.final_alpha);
    if (!options.want_upper) {
      result.upper = at::full_like(result.lower, INFINITY);
      result.iterations = steps_lower;
      return finish(result);
    }
    // upper of c y = -lower of (-c) y (the targets are the lower side's)
    AlphaOptions upper_side = options.alpha;
    upper_side.target = at::Tensor();
    upper_side.final_start.clear();  // the lower side's parameters
    result.upper = -detail::alpha_crown_lower(graph, state, env, detail::spec_side(graph, c, options.dtype, -1.0),
                                              upper_side, steps_upper, tight);
    result.iterations = std::max(steps_lower, steps_upper);
    return finish(result);
  }
  if (options.method == Method::AlphaCrown) {
    AlphaOptions both = options.alpha;  // rows [C; -C]: the targets are the first k rows'
    if (both.target.defined())
      both.target = at::cat({both.target.to(at::kDouble).reshape({-1}), at::full({k}, INFINITY, at::kDouble)});
    lb = detail::alpha_crown_lower(graph, state, env, rows, both, result.iterations, tight, &result.final_alpha);
  }
  result.lower = lb.slice(0, 0, k);
  result.upper = -lb.slice(0, k);  // upper of c y = -lower of (-c) y
  return finish(result);
}

}  // namespace

BoundsResult compute_bounds(const Graph& graph, const at::Tensor& lower, const at::Tensor& upper,
                            const BoundOptions& options, const at::Tensor& c) {
  BoundsResult r = bounds_of(graph, lower, upper, options, c);
  Interval out = detail::without_nan({r.lower, r.upper});  // a NaN bound proves nothing
  r.lower = out.lower, r.upper = out.upper;
  return r;
}

}  // namespace tessera::lirpa
