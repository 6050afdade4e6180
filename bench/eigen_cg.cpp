// Peer of `tessera bench cg`: Eigen's ConjugateGradient on the same 2D Poisson matrix
// (5-point, Dirichlet, diagonal 4, lexicographic), float64, random b, rtol as given.
//
//   build/bench_eigen_cg [n=1000] [threads=2] [repeats=3] [rtol=1e-8] [preconditioner=diagonal|identity]
//                        [maxiter=100000]   (rtol 0 and maxiter K: exactly K iterations)
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

template <typename Solver>
void run(const Matrix& a, const Eigen::VectorXd& b, double rtol, long maxiter, int repeats, const char* name,
         int threads) {
  std::vector<double> seconds;
  long iterations = 0;
  double residual = 0.0;
  bool converged = true;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    Solver cg;
    cg.setTolerance(rtol);               // ||r|| / ||b|| <= rtol
    cg.setMaxIterations(maxiter);
    cg.compute(a);
    Eigen::VectorXd x = cg.solve(b);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    iterations = cg.iterations();
    converged = converged && (cg.info() == Eigen::Success || rtol == 0.0);
    residual = (b - a * x).norm() / b.norm();
  }
  std::sort(seconds.begin(), seconds.end());
  const double med = seconds[seconds.size() / 2];
  std::printf("{\"bench\": \"peer\", \"solver\": \"eigen-cg\", \"preconditioner\": \"%s\", \"dof\": %ld, "
              "\"nnz\": %ld, \"threads\": %d, \"rtol\": %g, \"iterations\": %ld, \"seconds_median\": %.6g, "
              "\"seconds_per_iteration_median\": %.6g, \"residual\": %.3g, \"converged\": %s, \"repeats\": %d, "
              "\"eigen_version\": \"%d.%d.%d\"}\n",
              name, static_cast<long>(a.rows()), static_cast<long>(a.nonZeros()), threads, rtol, iterations, med,
              med / std::max(1L, iterations), residual, converged ? "true" : "false", repeats, EIGEN_WORLD_VERSION,
              EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION);
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 3;
  const double rtol = argc > 4 ? std::atof(argv[4]) : 1e-8;
  const std::string pre = argc > 5 ? argv[5] : "diagonal";
  const long maxiter = argc > 6 ? std::atol(argv[6]) : 100000;
  Eigen::setNbThreads(threads);
  const Matrix a = poisson2d(n);
  std::mt19937_64 gen(0);
  std::normal_distribution<double> normal;
  Eigen::VectorXd b(a.rows());
  for (Eigen::Index i = 0; i < b.size(); ++i) b[i] = normal(gen);
  using Upper = Eigen::ConjugateGradient<Matrix, Eigen::Lower | Eigen::Upper, Eigen::DiagonalPreconditioner<double>>;
  using Plain = Eigen::ConjugateGradient<Matrix, Eigen::Lower | Eigen::Upper, Eigen::IdentityPreconditioner>;
  if (pre == "identity") {
    run<Plain>(a, b, rtol, maxiter, repeats, "identity", threads);
  } else {
    run<Upper>(a, b, rtol, maxiter, repeats, "diagonal", threads);
  }
  return 0;
}
