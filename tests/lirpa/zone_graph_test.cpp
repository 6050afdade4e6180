// Tensor-parallel zones in a graph (Node::zone, ops/zone_edges.h): the nodes between an enter
// and a sum edge carry the zone, and a graph that would mix a zone's share with a whole
// value, leave a zone without its sum edge, or end on a share is refused.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "lirpa/ops/zone_edges.h"
#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"
#include "tessera/lirpa/graph.h"

namespace tessera::lirpa {
namespace {

/// y = x_0 + x_1 (the test's only arithmetic: a node with two inputs)
class SumOp final : public BoundOp {
 public:
  std::string type() const override { return "Sum"; }
  at::Tensor forward(const OpEnv&, const std::vector<at::Tensor>& x) const override { return x[0] + x[1]; }
  Interval ibp(const OpEnv&, const std::vector<Interval>& x) const override {
    return {x[0].lower + x[1].lower, x[0].upper + x[1].upper};
  }
  Backward backward(const OpEnv&, const APtr& a, const BackwardContext&) const override { return {{a, a}, {}}; }
};

TEST(ZoneGraph, NodesBetweenTheEdgesCarryTheZone) {
  auto comm = dist::world();
  Graph g(std::make_shared<LocalParamStore>());
  const int x = g.add_input("x", {1, 4});
  const int in = g.add_node("enter", detail::make_zone_enter(comm, 3), {x});
  const int inner = g.add_node("inner", std::make_shared<SumOp>(), {in, in});
  const int out = g.add_node("sum", detail::make_zone_sum(comm, 3), {inner});
  EXPECT_EQ(g.node(x).zone, -1);
  EXPECT_EQ(g.node(in).zone, 3);
  EXPECT_EQ(g.node(inner).zone, 3);
  EXPECT_EQ(g.node(out).zone, -1);
  const int after = g.add_node("after", std::make_shared<SumOp>(), {out, x});  // whole values again
  EXPECT_EQ(g.node(after).zone, -1);
  EXPECT_NO_THROW(g.set_output(after));
}

TEST(ZoneGraph, MixingAShareWithAWholeValueIsRefused) {
  auto comm = dist::world();
  Graph g(std::make_shared<LocalParamStore>());
  const int x = g.add_input("x", {1, 4});
  const int in = g.add_node("enter", detail::make_zone_enter(comm, 0), {x});
  EXPECT_THROW(g.add_node("mixed", std::make_shared<SumOp>(), {in, x}), InvalidInput);
  EXPECT_THROW(g.add_node("sum of a whole value", detail::make_zone_sum(comm, 0), {x}), InvalidInput);
  EXPECT_THROW(g.add_node("enter a share", detail::make_zone_enter(comm, 1), {in}), InvalidInput);
  const int other = g.add_node("enter 1", detail::make_zone_enter(comm, 1), {x});
  EXPECT_THROW(g.add_node("two zones", std::make_shared<SumOp>(), {in, other}), InvalidInput);
  EXPECT_THROW(g.set_output(in), InvalidInput);
}

}  // namespace
}  // namespace tessera::lirpa
