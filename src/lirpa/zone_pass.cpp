// A CROWN pass through tensor-parallel zones (zone_pass.h).

#include "zone_pass.h"

#include <ATen/ATen.h>

#include <numeric>

#include "lirpa/ops/zone_edges.h"
#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"

namespace tessera::lirpa::detail {

std::shared_ptr<dist::Communicator> zone_comm(const Graph& graph) {
  for (const Node& n : graph.nodes())
    if (n.op)
      if (const ZoneEdge* e = n.op->zone_edge()) return e->comm;
  return nullptr;
}

ZonePass::ZonePass(const Graph& graph, int start, int64_t rows, bool rows_split)
    : comm_(zone_comm(graph)), rows_(rows) {
  if (!comm_) return;
  start_zone_ = graph.node(start).zone;
  local_ = start_zone_ >= 0 || rows_split;
}

APtr ZonePass::entering(const Node& node, APtr a, at::ScalarType dtype) {
  const ZoneEdge* e = node.op ? node.op->zone_edge() : nullptr;
  if (!local_ || !e || e->enter) return a;
  // a sum edge of an earlier zone: every rank's rows, in rank order
  if (counts_.empty()) counts_ = comm_->gather_counts(rows_);
  return DenseA::make(comm_->all_gather(a->dense(dtype).contiguous(), counts_));
}

APtr ZonePass::leaving(const Node& node, APtr a, at::ScalarType dtype) {
  const ZoneEdge* e = node.op ? node.op->zone_edge() : nullptr;
  if (!e || !e->enter || own_rows(e->zone)) return a;
  if (!local_) crossed_ = true;
  if (!a) return a;
  if (!local_) {
    return DenseA::make(sum_over_ranks(*comm_, a->dense(dtype)));  // A_x = sum_r A_x^(r)
  }
  return DenseA::make(comm_->reduce_scatter(a->dense(dtype).contiguous(), counts_));  // this rank's block
}

void ZonePass::add_bias(const Node& node, at::Tensor& bias, const at::Tensor& b) {
  if (!b.defined()) return;
  if (node.zone < 0 || own_rows(node.zone)) {
    bias = bias + b;
    return;
  }
  zone_bias_ = zone_bias_.defined() ? zone_bias_ + b : b;
}

at::Tensor ZonePass::finish(at::Tensor bias) {
  if (!comm_) return bias;
  // every rank joins the same collectives: whether a zone was crossed depends on the graph
  // alone (alike on every rank); whether a step had a constant may not
  at::Tensor z = zone_bias_;
  if (!local_) {
    if (!crossed_) return bias;
    return bias + sum_over_ranks(*comm_, z.defined() ? z : at::zeros_like(bias));
  }
  if (counts_.empty()) return bias;  // no earlier zone crossed
  if (!z.defined()) z = at::zeros({std::accumulate(counts_.begin(), counts_.end(), int64_t{0})}, bias.options());
  return bias + comm_->reduce_scatter(z.contiguous(), counts_);
}

}  // namespace tessera::lirpa::detail
