// Input splitting's hand-off to ReLU splitting: the boxes are searched together by
// graph_relu_split_bab from their layer bounds, within a budget of domains, quietly (no PGD,
// no progress lines: the input-splitting search reports). See bab.h.

#include <ATen/ATen.h>

#include "lirpa/bab/bab.h"
#include "lirpa/bab/graph_bab.h"

namespace tessera::lirpa::detail {

BoxHandOff relu_split_boxes(BabContext& ctx, const BabProblem& p, const at::Tensor& xl, const at::Tensor& xu,
                            const LayerBounds& layers, int64_t max_visited) {
  VerifyOptions o = ctx.options;
  o.bab.attack_every = 0;  // the input search runs its own attacks
  o.beta.iterations = o.bab.input_relu_beta_iterations;
  // every rank holds the same boxes and runs the same search (input splitting is not split
  // across ranks), so no communicator: the batches are not cut into blocks
  const ReluSplitStart start{xl, xu, &layers, max_visited};
  GraphBabContext sub{ctx.graph, o, ctx.clock, ctx.confirm, nullptr, ctx.phase, {}};
  const BabOutcome r = graph_relu_split_bab(sub, p, start);
  BoxHandOff out{at::zeros({xl.size(0)}, at::kBool), r.status == BabStatus::Falsified, r.visited};
  if (!out.falsified && r.proven_roots.defined()) out.proven = r.proven_roots;
  return out;
}

}  // namespace tessera::lirpa::detail
