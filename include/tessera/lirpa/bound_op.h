#pragma once
/// @file bound_op.h
/// The interface every bound operator implements.
///
/// A bound operator is stateless: it holds only its attributes (strides, axes, parameter
/// keys). Its weights come from the `ParamStore` in the `OpEnv`; per-run state (bounds,
/// slopes) arrives in the arguments. Tensors carry one extra leading dimension: the batch
/// of points (`forward`), of boxes (`ibp`) or of rows (`backward`, the A matrices).
///
/// @code
///   OpEnv env{store, at::kDouble};
///   at::Tensor y = op.forward(env, {x});          // x: [N, *input_shape]
///   Interval yb = op.ibp(env, {xb});              // xb.lower: [B, *input_shape]
///   Backward back = op.backward(env, a_y, ctx);   // A for each input + bias [S]
/// @endcode

#include <ATen/core/Tensor.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/lirpa/a_matrix.h"
#include "tessera/lirpa/param_store.h"

namespace tessera::dist {
class Communicator;
}

namespace tessera::lirpa {

/// An edge of a tensor-parallel zone (ops/zone_edges.h): the nodes between an `enter` edge
/// and a `sum` edge hold each rank's share (its attention heads, its MLP columns); `enter`
/// passes the whole value in, `sum` adds every rank's partial result up.
struct ZoneEdge {
  int zone = 0;
  bool enter = true;
  std::shared_ptr<dist::Communicator> comm;
};

/// Elementwise lower and upper bounds.
struct Interval {
  at::Tensor lower;
  at::Tensor upper;
};

/// Forward linear bounds of a node's value over the normalised input e in [-1, 1]^n (the
/// input box x = centre + radius e): lower(e) <= value <= upper(e) elementwise. Each form is
/// `[D, n + 1, *shape]`: rows 0..n-1 the coefficients of e_i, row n the constant.
struct LinearForms {
  at::Tensor lower;
  at::Tensor upper;
};

/// What an operator may read while it runs.
struct OpEnv {
  const ParamStore& params;
  at::ScalarType dtype;
};

/// Per-call inputs of a backward step.
struct BackwardContext {
  /// Bounds of each input node, shaped `[1, *input_shape]` (only set for nonlinear ops).
  std::vector<Interval> input_bounds;
  /// Optimisable lower slopes for this node and this row set (`[S, *shape]`), or undefined.
  at::Tensor alpha;
};

/// Result of a backward step: an A matrix for every input (null when the input does not
/// influence the rows) and the constant term added to each row (`[S]`, may be undefined).
struct Backward {
  std::vector<APtr> inputs;
  at::Tensor bias;
};

/// One bound operator (Gemm, Relu, Conv, ...).
class BoundOp {
 public:
  virtual ~BoundOp() = default;
  /// A short type name ("Linear", "Relu", ...).
  virtual std::string type() const = 0;
  /// y = f(x) on concrete points; every tensor has a leading batch dimension.
  virtual at::Tensor forward(const OpEnv& env, const std::vector<at::Tensor>& x) const = 0;
  /// Interval bounds of y from interval bounds of the inputs.
  virtual Interval ibp(const OpEnv& env, const std::vector<Interval>& x) const = 0;
  /// Given rows `a` of linear functions of y, rows of linear functions of the inputs whose
  /// value plus `bias` is a lower bound of `a y` for every input in the bounds of `ctx`.
  virtual Backward backward(const OpEnv& env, const APtr& a, const BackwardContext& ctx) const = 0;
  /// Forward linear bounds of y from those of the inputs `x` (`input_bounds`: the inputs'
  /// bounds `[D, *shape]`, given when `needs_input_bounds`), or nullopt when the operator has
  /// none: the nodes after it then have interval bounds only.
  virtual std::optional<LinearForms> forward_forms(const OpEnv& env, const std::vector<LinearForms>& x,
                                                   const std::vector<Interval>& input_bounds) const {
    return std::nullopt;
  }
  /// True when `backward` needs bounds of the inputs (activations).
  virtual bool needs_input_bounds() const { return false; }
  /// True when only inputs whose interval contains 0 need tight (CROWN) bounds: elsewhere
  /// the relaxation is exact whatever sound bounds are used (ReLU).
  virtual bool tight_bounds_only_across_zero() const { return false; }
  /// True for an elementwise monotone function of one input: `ibp` of its input's bounds is
  /// its exact range over them, and a CROWN pass through its relaxation never beats that (the
  /// lines reach f only at the ends), so its own intermediate bounds come from `ibp`.
  virtual bool monotone() const { return false; }
  /// True when the operator takes optimisable slopes (alpha-CROWN).
  virtual bool has_alpha() const { return false; }
  /// Initial alpha for rows S given input bounds (CROWN's slopes), `[1, *shape]`.
  virtual at::Tensor initial_alpha(const Interval& input) const { return {}; }
  /// The zone edge this operator is, or null (every other operator).
  virtual const ZoneEdge* zone_edge() const { return nullptr; }
};

}  // namespace tessera::lirpa
