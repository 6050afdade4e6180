// Whether a network's forward pass is cheap beside its weights; see dense_form.h.

#include "lirpa/verify/dense_form.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "lirpa/ops/registry.h"

namespace tessera::lirpa::detail {
namespace {

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace

bool dense_form_is_compact(const Graph& graph, std::string* why) {
  int64_t weights = 0;  // entries of the network's own parameters
  for (const std::string& key : graph.params().keys()) weights += numel(graph.params().shape(key));
  int64_t dense = 0;  // entries of the segments as matrices: sum over segments of n_in * n_out
  int first = 1;
  for (int id = 1; id <= graph.output_id(); ++id) {
    bool relu = is_relu(*graph.node(id).op);
    if (!relu && id < graph.output_id()) continue;
    int last = relu ? id - 1 : id;
    dense += numel(graph.node(first - 1).shape) * numel(graph.node(last).shape);
    first = id + 1;
  }
  bool compact = dense <= 2 * weights + (int64_t{1} << 20);
  if (!compact && why)
    *why = "its affine layers as dense matrices would hold " + std::to_string(dense) + " entries, " +
           std::to_string(dense / std::max<int64_t>(weights, 1)) + " times the network's " + std::to_string(weights) +
           " weights";
  return compact;
}

}  // namespace tessera::lirpa::detail
