// The edges of a tensor-parallel zone (zone_edges.h). Their backward passes the rows on
// unchanged: whether the rows reaching an enter edge are summed over the ranks, or were
// gathered at the sum edge and are scattered back, depends on the pass (zone_pass.h).

#include "lirpa/ops/zone_edges.h"

#include <ATen/ATen.h>

#include "tessera/dist/communicator.h"
#include "tessera/dist/differentiable.h"

namespace tessera::lirpa::detail {

at::Tensor sum_over_ranks(dist::Communicator& comm, const at::Tensor& t) {
  at::Tensor s = t.contiguous().clone();
  comm.all_reduce(s, dist::ReduceOp::Sum);
  return s;
}

namespace {

class ZoneEnterOp final : public BoundOp {
 public:
  explicit ZoneEnterOp(ZoneEdge edge) : edge_(std::move(edge)) {}
  std::string type() const override { return "ZoneEnter"; }
  const ZoneEdge* zone_edge() const override { return &edge_; }
  at::Tensor forward(const OpEnv&, const std::vector<at::Tensor>& x) const override {
    // on a tape (an attack's gradient) x's gradient sums every rank's heads' parts
    return x[0].requires_grad() ? dist::differentiable::replicate(edge_.comm, x[0]) : x[0];
  }
  Interval ibp(const OpEnv&, const std::vector<Interval>& x) const override { return x[0]; }
  Backward backward(const OpEnv&, const APtr& a, const BackwardContext&) const override { return {{a}, {}}; }

 private:
  ZoneEdge edge_;
};

class ZoneSumOp final : public BoundOp {
 public:
  explicit ZoneSumOp(ZoneEdge edge) : edge_(std::move(edge)) {}
  std::string type() const override { return "ZoneSum"; }
  const ZoneEdge* zone_edge() const override { return &edge_; }
  at::Tensor forward(const OpEnv&, const std::vector<at::Tensor>& x) const override {
    if (x[0].requires_grad()) return dist::differentiable::all_reduce_sum(edge_.comm, x[0]);
    return sum_over_ranks(*edge_.comm, x[0]);
  }
  Interval ibp(const OpEnv&, const std::vector<Interval>& x) const override {
    // [sum_r l_r, sum_r u_r]: one collective for both ends
    at::Tensor both = sum_over_ranks(*edge_.comm, at::stack({x[0].lower, x[0].upper.to(x[0].lower.scalar_type())}));
    return {both[0], both[1]};
  }
  Backward backward(const OpEnv&, const APtr& a, const BackwardContext&) const override { return {{a}, {}}; }

 private:
  ZoneEdge edge_;
};

}  // namespace

std::shared_ptr<const BoundOp> make_zone_enter(std::shared_ptr<dist::Communicator> comm, int zone) {
  return std::make_shared<ZoneEnterOp>(ZoneEdge{zone, true, std::move(comm)});
}

std::shared_ptr<const BoundOp> make_zone_sum(std::shared_ptr<dist::Communicator> comm, int zone) {
  return std::make_shared<ZoneSumOp>(ZoneEdge{zone, false, std::move(comm)});
}

}  // namespace tessera::lirpa::detail
