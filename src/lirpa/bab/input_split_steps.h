#pragma once
// The steps of input splitting's search (input_split.cpp): bounding a batch of boxes, the
// split choice with its guards (input_split_choice.cpp), and the counterexample searches
// inside open boxes (input_split_attacks.cpp).

#include <ATen/core/Tensor.h>

#include <tuple>
#include <vector>

#include "lirpa/bab/bab.h"
#include "lirpa/bab/box_stack.h"
#include "lirpa/bab/graph_bab.h"

namespace tessera::lirpa::detail {

/// A batch of bounded boxes.
struct Bounded {
  at::Tensor score, rows, a;  ///< [B] bound of the conjunction, [B] best row, [B, K, n] its rows on the input
  LayerBounds layers;         ///< per ReLU node's input [B, n_j]
  Bounded select(const at::Tensor& idx) const;
};

/// Bounds the boxes [xl, xu] on the graph engine (bound_box_domains: one domain per box,
/// forward linear bounds, CROWN of each box's unstable ReLU inputs in groups of similar
/// counts), inside the parent boxes' bounds of the ReLU inputs `parent` (may be null) taken
/// as limits; a box's score is conjunction_lower_bound of its rows.
Bounded bound_boxes(const Graph& graph, const std::vector<GraphRelu>& relus, const at::Tensor& xl,
                    const at::Tensor& xu, const BabProblem& p, const LayerBounds* parent);

/// alpha-CROWN (alpha_conjunction_bound, `bab.input_alpha_iterations` steps) on the
/// unverified children `b` (boxes xl, xu) whose bound lies within `bab.input_alpha_band` below
/// the margin, with their ReLU-input bounds fixed; a child keeps the better of its two scores.
void alpha_near_verified(BabContext& ctx, const std::vector<GraphRelu>& relus, const BabProblem& p,
                         const at::Tensor& xl, const at::Tensor& xu, Bounded& b);

/// Rows of the unverified boxes `open` of `b` (xl, xu, score, smear, layer bounds) for the
/// stack; the smear of input i is |a_i| (u_i - l_i) for the best row's coefficients a (the
/// width where all are zero).
at::Tensor open_rows(const Bounded& b, const at::Tensor& open, const at::Tensor& xl, const at::Tensor& xu);

/// The children of each box (bisected along one dimension; they cover the box) with their
/// bounds: the `candidates` dimensions with the largest smear |a_i| (u_i - l_i) are each
/// tried, and the one whose worse child has the best bound wins. Points (dimensions narrower
/// than `t.point_width` of the root's) are never candidates; `guarded` (the portfolio's
/// search): thin dimensions are no candidates and a stalled box bisects its relatively widest
/// dimension; otherwise dimensions of negligible smear are no candidates (InputSplitTuning).
std::tuple<at::Tensor, at::Tensor, Bounded> split_boxes(const Graph& graph, const std::vector<GraphRelu>& relus,
                                                        const BabProblem& p, const at::Tensor& xl,
                                                        const at::Tensor& xu, const at::Tensor& smear,
                                                        const LayerBounds& parent_layers, int64_t candidates,
                                                        const at::Tensor& parent, bool guarded,
                                                        const InputSplitTuning& t);

/// Tries points as counterexamples: cheap violation by the context's forward pass, confirmation
/// by the caller (the graph's float64 pass).
bool try_points(BabContext& ctx, const BabProblem& p, const at::Tensor& x);
/// PGD on the whole region from the pool's 8 worst boxes' centres (seed offset `batch`).
bool attack_worst(BabContext& ctx, const BabProblem& p, const BoxStack& pool, int64_t batch);
/// Local PGD inside the worst open children `rows` of a batch (`bab.input.local_attack_*`),
/// from their centres: counterexamples of small volume are found once the boxes around them
/// are small.
bool attack_open(BabContext& ctx, const BabProblem& p, const BoxStack& pool, const at::Tensor& rows);

}  // namespace tessera::lirpa::detail
