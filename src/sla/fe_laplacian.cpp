// The P1 finite-element Laplacian on a perturbed triangle mesh of the unit square, assembled
// row by row (one row per interior node, from the triangles around it) straight into CSR.

#include <ATen/ATen.h>

#include <array>
#include <cmath>
#include <limits>

#include "sla/csr_rows.h"
#include "tessera/core/error.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/random_field.h"

namespace tessera::sla {
namespace {

struct Point {
  double x, y;
};

/// The mesh: (m + 1)^2 nodes (i, j), 0 <= i, j <= m, spacing h = 1/m; unknowns are the
/// interior nodes, m = N + 1 for N unknowns per side.
struct Mesh {
  int64_t m;
  double h;
  PerturbedMesh opts;

  /// Node (i, j) at (i h, j h) plus, inside, a jitter of up to ±jitter h / 2 per coordinate.
  Point node(int64_t i, int64_t j) const {
    Point p{static_cast<double>(i) * h, static_cast<double>(j) * h};
    if (i > 0 && j > 0 && i < m && j < m && opts.jitter > 0) {
      const uint64_t k = static_cast<uint64_t>(j * (m + 1) + i);
      p.x += opts.jitter * h * (uniform(opts.seed, 4 * k) - 0.5);
      p.y += opts.jitter * h * (uniform(opts.seed, 4 * k + 1) - 0.5);
    }
    return p;
  }
  /// Square (i, j) (lower-left node (i, j)) is cut along b-d instead of a-c.
  bool flipped(int64_t i, int64_t j) const {
    return opts.random_diagonals && uniform(opts.seed, 4 * static_cast<uint64_t>(j * m + i) + 2) < 0.5;
  }
};

/// Node offsets (di, dj) of the two triangles of a square, counter-clockwise: corners
/// a (0,0), b (1,0), c (1,1), d (0,1); cut a-c gives abc, acd; cut b-d gives abd, bcd.
constexpr std::array<std::array<std::array<int, 2>, 3>, 2> kCutAc{{{{{0, 0}, {1, 0}, {1, 1}}}, {{{0, 0}, {1, 1}, {0, 1}}}}};
constexpr std::array<std::array<std::array<int, 2>, 3>, 2> kCutBd{{{{{0, 0}, {1, 0}, {0, 1}}}, {{{1, 0}, {1, 1}, {0, 1}}}}};

/// Row of interior node (i, j): K_pq for q in its 3 x 3 neighbourhood (slot (dj+1)*3 + di+1),
/// and which slots the mesh connects. K_ab = (e_a · e_b) / (4 |T|) per triangle T, e_a the
/// edge opposite vertex a; computed from T's own vertex order, so K_pq and K_qp are bitwise equal.
void node_row(const Mesh& mesh, int64_t i, int64_t j, std::array<double, 9>& k, std::array<bool, 9>& linked) {
  k.fill(0.0);
  linked.fill(false);
  for (int64_t sj = j - 1; sj <= j; ++sj) {
    for (int64_t si = i - 1; si <= i; ++si) {
      const auto& tris = mesh.flipped(si, sj) ? kCutBd : kCutAc;
      for (const auto& tri : tris) {
        int mine = -1;
        std::array<Point, 3> x;
        for (int a = 0; a < 3; ++a) {
          x[a] = mesh.node(si + tri[a][0], sj + tri[a][1]);
          if (si + tri[a][0] == i && sj + tri[a][1] == j) mine = a;
        }
        if (mine < 0) continue;
        std::array<Point, 3> e;   // e_a = x_{a+2} - x_{a+1}
        for (int a = 0; a < 3; ++a) e[a] = {x[(a + 2) % 3].x - x[(a + 1) % 3].x, x[(a + 2) % 3].y - x[(a + 1) % 3].y};
        const double area2 = e[2].x * e[0].y - e[2].y * e[0].x;   // 2 |T| = e_2 x e_0 (counter-clockwise)
        TESSERA_CHECK(area2 > 0, InvalidInput, "fe_laplacian2d: jitter ", mesh.opts.jitter,
                      " folded a triangle; use jitter < 0.5");
        for (int b = 0; b < 3; ++b) {
          const int slot = (sj + tri[b][1] - j + 1) * 3 + (si + tri[b][0] - i + 1);
          k[slot] += (e[mine].x * e[b].x + e[mine].y * e[b].y) / (2.0 * area2);   // e_p · e_q / (4 |T|)
          linked[slot] = true;
        }
      }
    }
  }
}

template <typename I>
void fill(const Mesh& mesh, at::Tensor& row_ptr, at::Tensor& col, at::Tensor& val) {
  const int64_t n = mesh.m - 1, rows = n * n;   // unknown (i, j) -> (j - 1) n + (i - 1)
  auto inside = [&](int64_t i, int64_t j) { return i >= 1 && j >= 1 && i <= n && j <= n; };
  auto count = [&](int64_t r) {
    const int64_t i = r % n + 1, j = r / n + 1;
    std::array<double, 9> k;
    std::array<bool, 9> linked;
    node_row(mesh, i, j, k, linked);
    int64_t c = 0;
    for (int s = 0; s < 9; ++s) c += linked[s] && inside(i + s % 3 - 1, j + s / 3 - 1);
    return c;
  };
  auto write = [&](int64_t r, I* cp, double* vp) {
    const int64_t i = r % n + 1, j = r / n + 1;
    std::array<double, 9> k;
    std::array<bool, 9> linked;
    node_row(mesh, i, j, k, linked);
    int64_t p = 0;
    for (int s = 0; s < 9; ++s) {   // slots in ascending column order: dj, then di
      const int64_t qi = i + s % 3 - 1, qj = j + s / 3 - 1;
      if (!linked[s] || !inside(qi, qj)) continue;   // boundary nodes: Dirichlet, eliminated
      cp[p] = static_cast<I>((qj - 1) * n + (qi - 1));
      vp[p++] = k[s];
    }
  };
  detail::assemble_csr_rows<I>(rows, row_ptr, col, val, count, write);
}

}  // namespace

SparseTensor fe_laplacian2d(int64_t n, const PerturbedMesh& mesh_options, at::ScalarType dtype) {
  TESSERA_CHECK(n >= 1, InvalidInput, "fe_laplacian2d: unknowns per side must be >= 1, got ", n);
  TESSERA_CHECK(mesh_options.jitter >= 0.0 && mesh_options.jitter < 0.5, InvalidInput,
                "fe_laplacian2d: jitter must be in [0, 0.5), got ", mesh_options.jitter);
  TESSERA_CHECK(dtype == at::kFloat || dtype == at::kDouble, Unsupported, "fe_laplacian2d: float32 or float64 only");
  const Mesh mesh{n + 1, 1.0 / static_cast<double>(n + 1), mesh_options};
  const int64_t rows = n * n;
  const bool small = rows * 9 < std::numeric_limits<int32_t>::max();
  at::Tensor row_ptr = at::empty({rows + 1}, small ? at::kInt : at::kLong), col, val;
  if (small) {
    fill<int32_t>(mesh, row_ptr, col, val);
  } else {
    fill<int64_t>(mesh, row_ptr, col, val);
  }
  return SparseTensor::from_csr(row_ptr, col, dtype == at::kDouble ? val : val.to(dtype), rows, rows);
}

}  // namespace tessera::sla
