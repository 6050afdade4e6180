#pragma once
// One CROWN backward pass through tensor-parallel zones (ops/zone_edges.h: each rank holds
// its heads' share of the nodes between a zone's enter and sum edges).
//
// Rows shared by every rank (a pass from a whole node): inside a zone each rank carries the
// rows through its own heads, so what reaches the enter edge is its part of A_x and the
// constants collected inside are its part of the bias: both are summed over the ranks
//   A_x = sum_r A_x^(r)   (at the enter edge),   bias += sum_r bias_zone^(r)   (at the end).
// Rows of this rank alone (a pass from a node inside zone Z0: its heads' neurons R_r; or its
// block of the rows of a whole node, where Z0 is none): they
// cross Z0 to its enter edge with nothing to add. An earlier zone Z needs every rank's
// heads for them, so the rows of all ranks are gathered at Z's sum edge, each rank carries
// all of them through its heads, and the enter edge scatters the sums back:
//   A = [A^(1); ...; A^(P)] at sum_Z,   A^(r)_x = block r of sum_q A_x^(q) at enter_Z,
// the constants collected inside Z likewise (one reduce-scatter at the end).

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "tessera/lirpa/graph.h"

namespace tessera::lirpa::detail {

/// The communicator of the graph's zones, or null when it has none (one scan of the nodes).
std::shared_ptr<dist::Communicator> zone_comm(const Graph& graph);

class ZonePass {
 public:
  /// A pass of `rows` rows starting at node `start`; `rows_split`: rows of a whole node split
  /// over the ranks (each passes its block, gathered at every zone like a zone's own rows).
  ZonePass(const Graph& graph, int start, int64_t rows, bool rows_split = false);
  /// True when the graph has zones.
  bool active() const { return comm_ != nullptr; }
  /// The rows about to go through node `id` (a sum edge of an earlier zone gathers this
  /// rank's own rows).
  APtr entering(const Node& node, APtr a, at::ScalarType dtype);
  /// The rows node `node` hands to its input (an enter edge sums or scatters them).
  APtr leaving(const Node& node, APtr a, at::ScalarType dtype);
  /// Adds the constant `b` of node `node`'s step to `bias` or to the zone's constants.
  void add_bias(const Node& node, at::Tensor& bias, const at::Tensor& b);
  /// `bias` with the zones' constants summed over the ranks.
  at::Tensor finish(at::Tensor bias);

 private:
  bool own_rows(int zone) const { return local_ && zone >= 0 && zone == start_zone_; }
  std::shared_ptr<dist::Communicator> comm_;
  bool local_ = false;   // the rows are this rank's own (the start node is inside a zone)
  bool crossed_ = false; // shared rows summed at an enter edge
  int start_zone_ = -1;
  int64_t rows_ = 0;
  std::vector<int64_t> counts_;  // every rank's rows (local passes, from the first gather)
  at::Tensor zone_bias_;         // [rows] (shared rows) or [sum counts] (gathered)
};

}  // namespace tessera::lirpa::detail
