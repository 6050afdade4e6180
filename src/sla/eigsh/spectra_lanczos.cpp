// Spectra's SymEigsSolver driven by tessera's operator (one vector at a time).

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "sla/eigsh/lanczos.h"
#include "tessera/core/error.h"

#if TESSERA_WITH_EIGEN && __has_include(<Spectra/SymEigsSolver.h>)
#define TESSERA_HAVE_SPECTRA 1
#include <Spectra/SymEigsSolver.h>
#endif

namespace tessera::sla::detail {

bool spectra_available() {
#ifdef TESSERA_HAVE_SPECTRA
  return true;
#else
  return false;
#endif
}

#ifdef TESSERA_HAVE_SPECTRA
namespace {

/// The operation interface Spectra expects: rows(), cols(), perform_op(x, y): y = op(x).
class SpectraOperator {
 public:
  using Scalar = double;
  SpectraOperator(const VectorOperator& op, int64_t n) : op_(op), n_(n) {}
  Eigen::Index rows() const { return n_; }
  Eigen::Index cols() const { return n_; }
  void perform_op(const double* x_in, double* y_out) const {
    op_(x_in, y_out);   // y = op(x)
    ++applications;
  }
  mutable int64_t applications = 0;

 private:
  const VectorOperator& op_;
  int64_t n_;
};

Spectra::SortRule rule_for(RitzOrder order) {
  switch (order) {
    case RitzOrder::LargestAlgebraic: return Spectra::SortRule::LargestAlge;
    case RitzOrder::SmallestAlgebraic: return Spectra::SortRule::SmallestAlge;
    case RitzOrder::LargestMagnitude: return Spectra::SortRule::LargestMagn;
  }
  return Spectra::SortRule::LargestAlge;
}

}  // namespace

RitzPairs spectra_lanczos(const VectorOperator& op, int64_t n, const LanczosParams& p) {
  TESSERA_CHECK(p.k >= 1 && p.k < p.ncv && p.ncv <= n, InvalidInput, "spectra: need 1 <= k < ncv <= n (k ", p.k,
                ", ncv ", p.ncv, ", n ", n, ")");
  SpectraOperator sop(op, n);
  Spectra::SymEigsSolver<SpectraOperator> solver(sop, p.k, p.ncv);
  at::Generator gen = at::detail::createCPUGenerator(p.seed);
  at::Tensor start = at::randn({n}, gen, at::kDouble).contiguous();
  solver.init(start.data_ptr<double>());
  const Spectra::SortRule rule = rule_for(p.order);
  solver.compute(rule, p.maxiter, p.tol, rule);                        // sorted best first
  RitzPairs out;
  out.iterations = solver.num_iterations();
  out.applications = sop.applications;
  out.converged = solver.info() == Spectra::CompInfo::Successful;
  if (!out.converged) {
    out.message = "spectra: not converged after " + std::to_string(out.iterations) + " iterations";
    return out;
  }
  Eigen::VectorXd evals = solver.eigenvalues();
  Eigen::MatrixXd evecs = solver.eigenvectors();   // column-major n x k
  out.theta = at::from_blob(evals.data(), {evals.size()}, at::kDouble).clone();
  out.vectors = at::from_blob(evecs.data(), {evecs.cols(), evecs.rows()}, at::kDouble).t().clone();
  return out;
}
#else
RitzPairs spectra_lanczos(const VectorOperator&, int64_t, const LanczosParams&) {
  TESSERA_THROW(NotCompiled, "eigsh: backend 'spectra' is not compiled into this build (needs TESSERA_WITH_EIGEN and libspectra-dev)");
}
#endif

}  // namespace tessera::sla::detail
