// Peer of `tessera bench cg`: Eigen's ConjugateGradient on the same 2D Poisson matrix
// (5-point, Dirichlet, diagonal 4, lexicographic), float64, random b, rtol as given; or on
// one of tessera's generated matrices (`tessera bench cg --matrix`), copied from its CSR.
//
//   build/bench_eigen_cg [n=1000] [threads=2] [repeats=3] [rtol=1e-8] [preconditioner=diagonal|identity]
//                        [maxiter=100000] [matrix=poisson2d|diffusion2d|diffusion3d|fe-laplacian2d]
//   (rtol 0 and maxiter K: exactly K iterations)
//
// The matrix is row-major and the solver is told both triangles (Lower|Upper), the one
// configuration in which Eigen runs the CG's sparse product on several threads
// (Eigen::setNbThreads). Prints one JSON line: median seconds and seconds per iteration.
#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCore>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "tessera/sla/generators.h"

namespace {

using Matrix = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;

Matrix poisson2d(int n) {
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(static_cast<size_t>(5) * n * n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const int r = i * n + j;   // x (j) fastest
      if (i > 0) t.emplace_back(r, r - n, -1.0);
      if (j > 0) t.emplace_back(r, r - 1, -1.0);
      t.emplace_back(r, r, 4.0);
      if (j + 1 < n) t.emplace_back(r, r + 1, -1.0);
      if (i + 1 < n) t.emplace_back(r, r + n, -1.0);
    }
  }
  Matrix a(n * n, n * n);
  a.setFromTriplets(t.begin(), t.end());
  return a;
}

/// tessera's generated matrix (sigma 1, jitter 0.3, seed 0, as `tessera bench cg --matrix`).
Matrix generated(const std::string& name, int n) {
  using namespace tessera::sla;
  const SparseTensor t = name == "diffusion2d" ? variable_diffusion2d(n)
                         : name == "diffusion3d" ? variable_diffusion3d(n)
                                                 : fe_laplacian2d(n);
  const at::Tensor rp = t.row_ptr().to(at::kLong), ci = t.col_idx().to(at::kLong), v = t.values().contiguous();
  const int64_t* row_ptr = rp.data_ptr<int64_t>();
  const int64_t* col = ci.data_ptr<int64_t>();
  const double* val = v.data_ptr<double>();
  std::vector<Eigen::Triplet<double>> entries;
  entries.reserve(static_cast<size_t>(t.nnz()));
  for (int64_t r = 0; r < t.rows(); ++r) {
    for (int64_t p = row_ptr[r]; p < row_ptr[r + 1]; ++p) {
      entries.emplace_back(static_cast<int>(r), static_cast<int>(col[p]), val[p]);
    }
  }
  Matrix a(t.rows(), t.cols());
  a.setFromTriplets(entries.begin(), entries.end());
  return a;
}

template <typename Solver>
void run(const Matrix& a, const Eigen::VectorXd& b, double rtol, long maxiter, int repeats, const char* name,
         int threads, const std::string& matrix) {
  long iterations = 0;
  double residual = 0.0;
  bool converged = true;
  const auto solve = [&](long its, bool keep) {   // one timed solve (set-up included): seconds
    const auto t0 = std::chrono::steady_clock::now();
    Solver cg;
    cg.setTolerance(rtol);               // ||r|| / ||b|| <= rtol
    cg.setMaxIterations(its);
    cg.compute(a);
    Eigen::VectorXd x = cg.solve(b);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (keep) {
      iterations = cg.iterations();
      converged = converged && (cg.info() == Eigen::Success || rtol == 0.0);
      residual = (b - a * x).norm() / b.norm();
    }
    return s;
  };
  // With a fixed count K (rtol 0) the time per iteration is (t(K) - t(1)) / (K - 1), as
  // `tessera bench cg` takes its own: the set-up (vectors, first residual) left out alike.
  const bool fixed = rtol == 0.0 && maxiter > 1;
  std::vector<double> seconds, setup;
  for (int r = 0; r < repeats; ++r) {
    seconds.push_back(solve(maxiter, true));
    if (fixed) setup.push_back(solve(1, false));
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double med = median(seconds), med1 = fixed ? median(setup) : 0.0;
  const bool subtracted = fixed && iterations > 1 && med > med1;
  const double per_it = subtracted ? (med - med1) / static_cast<double>(iterations - 1)
                                   : med / static_cast<double>(std::max(1L, iterations));
  std::printf("{\"bench\": \"peer\", \"solver\": \"eigen-cg\", \"preconditioner\": \"%s\", \"dof\": %ld, "
              "\"nnz\": %ld, \"threads\": %d, \"rtol\": %g, \"iterations\": %ld, \"seconds_median\": %.6g, "
              "\"seconds_per_iteration_median\": %.6g, \"setup_seconds_median\": %.6g, \"setup_subtracted\": %s, "
              "\"residual\": %.3g, \"converged\": %s, \"repeats\": %d, "
              "\"eigen_version\": \"%d.%d.%d\", \"matrix\": \"%s\"}\n",
              name, static_cast<long>(a.rows()), static_cast<long>(a.nonZeros()), threads, rtol, iterations, med,
              per_it, med1, subtracted ? "true" : "false", residual, converged ? "true" : "false", repeats,
              EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION, matrix.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 3;
  const double rtol = argc > 4 ? std::atof(argv[4]) : 1e-8;
  const std::string pre = argc > 5 ? argv[5] : "diagonal";
  const long maxiter = argc > 6 ? std::atol(argv[6]) : 100000;
  const std::string matrix = argc > 7 ? argv[7] : "poisson2d";
  Eigen::setNbThreads(threads);
  const Matrix a = matrix == "poisson2d" ? poisson2d(n) : generated(matrix, n);
  std::mt19937_64 gen(0);
  std::normal_distribution<double> normal;
  Eigen::VectorXd b(a.rows());
  for (Eigen::Index i = 0; i < b.size(); ++i) b[i] = normal(gen);
  using Upper = Eigen::ConjugateGradient<Matrix, Eigen::Lower | Eigen::Upper, Eigen::DiagonalPreconditioner<double>>;
  using Plain = Eigen::ConjugateGradient<Matrix, Eigen::Lower | Eigen::Upper, Eigen::IdentityPreconditioner>;
  if (pre == "identity") {
    run<Plain>(a, b, rtol, maxiter, repeats, "identity", threads, matrix);
  } else {
    run<Upper>(a, b, rtol, maxiter, repeats, "diagonal", threads, matrix);
  }
  return 0;
}
