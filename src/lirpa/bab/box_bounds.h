#pragma once
// Bounds of a specification over many input boxes at once on the graph engine, for
// input-splitting branch and bound: a box is a domain of bound_graph_domains with no ReLU
// split. A box is verified when max_k g_k > 0 on it (g = C y - rhs: no point satisfies every
// row of the conjunction), so the rows' linear bounds are combined over the simplex.

#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

#include "lirpa/bab/graph_bab.h"
#include "lirpa/bab/layer_bounds.h"

namespace tessera::lirpa::detail {

/// Graph domains of the boxes [xl, xu] ([B, n_in] float64): one per box, no ReLU split, the
/// bounds `layers` of its ReLU inputs (may be null or empty) as limits.
GraphDomains box_domains(const std::vector<GraphRelu>& relus, const at::Tensor& xl, const at::Tensor& xu,
                         const LayerBounds* layers);

/// CROWN over the boxes [xl, xu] as input splitting bounds them: box_domains(relus, xl, xu,
/// parent) in bound_graph_domains with the padding rows' CROWN bounds intersected too
/// (GraphDomains::intersect_padding: tighter; a box's bounds then depend on its batch).
GraphBounded bound_box_domains(const Graph& graph, const std::vector<GraphRelu>& relus, const at::Tensor& xl,
                               const at::Tensor& xu, const at::Tensor& c, const at::Tensor& rhs,
                               const LayerBounds* parent = nullptr);

/// Lower bound over each box of max_k g_k from the rows' linear lower bounds
/// g_k(x) >= a_k x + d_k of one pass (lb [B, K], a [B, K, n]: bound_graph_domains' lb or
/// lb_recorded with its a_input): max over lambda in the simplex of min_x sum_k lambda_k (a_k x + d_k),
/// by exponentiated-gradient ascent (every lambda gives a sound bound; the corners
/// lambda = e_k give max_k lb_k, so the result is never below that). [B].
at::Tensor conjunction_lower_bound(const at::Tensor& lb, const at::Tensor& a, const at::Tensor& xl,
                                   const at::Tensor& xu, int iterations = 30);

/// alpha-CROWN's lower bound over each box of max_k g_k with the boxes' ReLU-input bounds
/// `layers` fixed (sound on them): the final rows' slopes optimised from CROWN's by
/// bound_graph_domains' steps with no split (`steps`: their count and learning rates; `stop`
/// ends them early, keeping the best so far). [B]: the larger of max_k of every row's best
/// bound over the steps and conjunction_lower_bound of the last step's rows (bounds and
/// coefficients of one pass, as it requires); -inf for a box the clock left unbounded.
at::Tensor alpha_conjunction_bound(const Graph& graph, const std::vector<GraphRelu>& relus, const at::Tensor& xl,
                                   const at::Tensor& xu, const at::Tensor& c, const at::Tensor& rhs,
                                   const LayerBounds& layers, const BetaOptions& steps,
                                   const std::function<bool()>& stop = {});

}  // namespace tessera::lirpa::detail
