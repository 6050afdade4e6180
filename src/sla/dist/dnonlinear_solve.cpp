// dnonlinear_solve: Newton across ranks. The colouring of the distributed Jacobian pattern,
// J assembled from one vector-Jacobian product per colour (halo columns by one halo
// exchange), linear steps by dsolve, the adjoint by dsolve_transposed; the iterations and
// the implicit-gradient node are nonlinear_solve's own.

#include "tessera/sla/dist/dnonlinear_solve.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <memory>
#include <vector>

#include "sla/dist/autograd/halo_exchange.h"
#include "sla/nonlinear/newton.h"
#include "sla/nonlinear/residual_ops.h"
#include "tessera/core/error.h"
#include "tessera/sla/dist/dsolve.h"

namespace tessera::sla {
namespace {

/// Greedy colours of the rows in `subset` (bool [owned]) of the local pattern, so that
/// rows of one colour share no (local) column; -1 outside the subset.
at::Tensor color_subset(const DSparseTensor& p, const at::Tensor& subset, int64_t& count) {
  const int64_t owned = p.owned_rows(), columns = owned + p.plan().halo;
  at::Tensor ids = at::nonzero(subset).reshape({-1});
  at::Tensor colors = at::full({owned}, -1, at::kLong);
  count = 0;
  if (ids.numel() == 0) return colors;
  at::Tensor renumber = at::full({owned}, -1, at::kLong).index_fill_(0, ids, 0);
  renumber.index_copy_(0, ids, at::arange(ids.numel(), at::kLong));
  at::Tensor entries = at::nonzero(subset.index_select(0, p.local_rows_index())).reshape({-1});
  SparseTensor sub = SparseTensor::from_coo(at::zeros({entries.numel()}, at::kDouble),
                                            renumber.index_select(0, p.local_rows_index().index_select(0, entries)),
                                            p.local_cols_index().index_select(0, entries), ids.numel(), columns);
  colors.index_copy_(0, ids, detail::color_rows(sub, count));
  return colors;
}

/// A class per rank such that ranks whose rows may share a column (neighbours, or two
/// neighbours of one rank: both hold its column in their halo) differ: greedy in rank order
/// on the gathered neighbour lists, the same on every rank.
std::vector<int64_t> rank_classes(const DSparseTensor& p) {
  const int size = p.comm()->size();
  std::vector<int64_t> ones(size, 1);
  const std::vector<int>& mine = p.plan().exchange.peers;
  at::Tensor degrees = p.comm()->all_gather(at::full({1}, static_cast<int64_t>(mine.size()), at::kLong), ones);
  std::vector<int64_t> counts(degrees.data_ptr<int64_t>(), degrees.data_ptr<int64_t>() + size);
  at::Tensor local = at::empty({static_cast<int64_t>(mine.size())}, at::kLong);
  for (size_t i = 0; i < mine.size(); ++i) local[i] = mine[i];
  at::Tensor all = p.comm()->all_gather(local, counts);
  std::vector<std::set<int64_t>> adjacent(size);
  for (int64_t r = 0, k = 0; r < size; ++r) {
    for (int64_t i = 0; i < counts[r]; ++i, ++k) {
      const int64_t q = all[k].item<int64_t>();
      adjacent[r].insert(q);
      adjacent[q].insert(r);
    }
  }
  auto conflict = [&](int64_t r, int64_t q) {
    if (adjacent[r].count(q)) return true;
    for (int64_t t : adjacent[r]) {
      if (adjacent[q].count(t)) return true;   // both neighbours of t
    }
    return false;
  };
  std::vector<int64_t> cls(size, 0);
  for (int64_t r = 0; r < size; ++r) {
    std::set<int64_t> taken;
    for (int64_t q = 0; q < r; ++q) {
      if (conflict(r, q)) taken.insert(cls[q]);
    }
    while (taken.count(cls[r])) ++cls[r];
  }
  return cls;
}

/// Colours of this rank's rows such that rows of one colour, on any ranks, share no global
/// column: private rows (every column owned and in no peer's halo) share colours 0..C0-1
/// across ranks; the others take the range of their rank's class after C0 (ranks of one
/// class share it: their rows share no column), so the count does not grow with the ranks
/// of a mesh-like partition.
at::Tensor distributed_colors(const DSparseTensor& p, int64_t& num_colors) {
  const HaloPlan& plan = p.plan();
  at::Tensor shared = at::zeros({plan.owned + plan.halo}, at::kLong);   // columns another rank's rows may use
  shared.narrow(0, plan.owned, plan.halo).fill_(1);
  for (const at::Tensor& sent : plan.exchange.send_index) shared.index_fill_(0, sent, 1);
  at::Tensor touches = at::zeros({plan.owned}, at::kLong)
                           .index_add_(0, p.local_rows_index(), shared.index_select(0, p.local_cols_index()));
  at::Tensor boundary = touches > 0;
  int64_t private_count = 0, boundary_count = 0;
  at::Tensor private_colors = color_subset(p, boundary.logical_not(), private_count);
  at::Tensor boundary_colors = color_subset(p, boundary, boundary_count);
  at::Tensor c0 = at::full({1}, private_count, at::kLong);
  p.comm()->all_reduce(c0, dist::ReduceOp::Max);
  std::vector<int64_t> ones(p.comm()->size(), 1);
  at::Tensor counts = p.comm()->all_gather(at::full({1}, boundary_count, at::kLong), ones);   // C_b of every rank
  const std::vector<int64_t> cls = rank_classes(p);
  const int64_t classes = *std::max_element(cls.begin(), cls.end()) + 1;
  std::vector<int64_t> width(classes, 0);   // a class's range: its ranks' largest C_b
  for (size_t r = 0; r < cls.size(); ++r) width[cls[r]] = std::max(width[cls[r]], counts[r].item<int64_t>());
  int64_t offset = c0.item<int64_t>();
  for (int64_t c = 0; c < cls[p.comm()->rank()]; ++c) offset += width[c];
  num_colors = c0.item<int64_t>();
  for (int64_t w : width) num_colors += w;
  return at::where(boundary, boundary_colors + offset, private_colors);
}

/// J(u) on the distributed pattern, solved by dsolve (J^T by dsolve_transposed).
class DistJacobianSolver final : public detail::JacobianSolve {
 public:
  DistJacobianSolver(detail::ResidualProblem& problem, const at::Tensor& u, const DSparseTensor& pattern,
                     const at::Tensor& colors, int64_t num_colors)
      : jacobian_(assemble(problem, u, pattern, colors, num_colors)), linear_(problem.options.linear) {}

  at::Tensor solve(const at::Tensor& rhs, bool transpose, SolveInfo& info) override {
    at::NoGradGuard no_grad;
    at::Tensor b = rhs.detach().to(at::kDouble);
    auto [x, solved] = transpose ? dsolve_transposed(jacobian_, b, linear_) : dsolve(jacobian_, b, linear_);
    info = solved;
    return x.to(rhs.scalar_type());
  }

 private:
  // (J^T s_c)_j = J_ij for the one row i of colour c using column j: one VJP per colour,
  // then the halo columns' products from their owners.
  static DSparseTensor assemble(detail::ResidualProblem& problem, const at::Tensor& u, const DSparseTensor& pattern,
                                const at::Tensor& colors, int64_t num_colors) {
    at::Tensor g = at::empty({u.size(0), num_colors}, u.options().dtype(at::kDouble));
    for (int64_t c = 0; c < num_colors; ++c) {
      at::Tensor s = (colors == c).to(u.options());   // s_c: indicator of this rank's rows of colour c
      g.select(1, c).copy_(problem.vjp(u, s));        // J^T s_c (collective)
    }
    at::Tensor g_ext = at::cat({g, detail::halo_forward_raw(*pattern.comm(), pattern.plan(), g)}, 0);
    at::Tensor values = g_ext.index({pattern.local_cols_index(), colors.index_select(0, pattern.local_rows_index())});
    return pattern.with_values(values);               // J_ij on the pattern
  }

  DSparseTensor jacobian_;
  SolveOptions linear_;
};

}  // namespace

std::pair<at::Tensor, NonlinearInfo> dnonlinear_solve(const ResidualFn& residual, const at::Tensor& u0,
                                                       const std::vector<at::Tensor>& params,
                                                       const DSparseTensor& jacobian_pattern,
                                                       const NonlinearOptions& options) {
  const DSparseTensor& p = jacobian_pattern;
  TESSERA_CHECK(u0.defined() && u0.dim() == 1 && u0.size(0) == p.owned_rows(), DimensionMismatch,
                "nonlinear_solve: u0 must be this rank's ", p.owned_rows(), " rows, got ",
                u0.defined() ? u0.sizes() : at::IntArrayRef{});
  TESSERA_CHECK(!options.anderson && !options.jacobian_pattern, Unsupported,
                "nonlinear_solve across ranks: Newton on the distributed jacobian_pattern only (no Anderson, no "
                "one-process pattern)");
  TESSERA_CHECK(options.maxiter > 0, InvalidInput, "nonlinear_solve: maxiter must be > 0");
  auto problem = std::make_shared<detail::ResidualProblem>();
  problem->fn = residual;
  problem->options = options;
  if (problem->options.linear.method == Method::Auto && problem->options.linear.backend != Backend::Mumps) {
    problem->options.linear.method = Method::GMRES;   // J is not assumed symmetric
  }
  for (const at::Tensor& t : params) problem->params.push_back(t.detach());
  std::shared_ptr<dist::Communicator> comm = p.comm();
  problem->global_norm = [comm](const at::Tensor& v) {
    at::Tensor s = v.detach().to(at::kDouble).pow(2).sum().reshape({1});   // sum_r ||v_r||^2
    comm->all_reduce(s, dist::ReduceOp::Sum);
    return std::sqrt(s.item<double>());
  };
  int64_t num_colors = 0;
  const at::Tensor colors = distributed_colors(p, num_colors);
  const DSparseTensor pattern = p.with_values(at::zeros({p.values().numel()}, at::kDouble));
  problem->make_solver = [pattern, colors, num_colors](detail::ResidualProblem& pr, const at::Tensor& u) {
    return std::make_unique<DistJacobianSolver>(pr, u, pattern, colors, num_colors);
  };
  at::Tensor f0 = problem->eval(u0.detach());
  TESSERA_CHECK(f0.sizes() == u0.sizes(), DimensionMismatch, "nonlinear_solve: F(u0) has shape ", f0.sizes(),
                " but u0 has shape ", u0.sizes());
  TESSERA_CHECK(std::isfinite(problem->norm(f0)), InvalidInput, "nonlinear_solve: F(u0) contains NaN or Inf");
  NonlinearInfo info;
  at::Tensor u = detail::newton(*problem, u0, info);
  info.residual_evaluations = problem->evaluations;
  info.colors = num_colors;
  return {detail::implicit_solution(params, u, problem), info};
}

}  // namespace tessera::sla
