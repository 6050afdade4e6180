// StencilMatrix: the matrix-free form of constant-coefficient operators and its native
// Krylov solve (stencil.h). The operator is an SpmvPlan in stencil form shared by the Krylov
// loop and the AMG hierarchy's finest level; no CSR is formed.

#include "tessera/sla/stencil.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "sla/backends/native/krylov.h"
#include "sla/csr_rows.h"
#include "sla/kernels/spmv.h"
#include "sla/precond/csr_data.h"
#include "sla/precond/native_preconditioner.h"
#include "tessera/core/error.h"

namespace tessera::sla {
namespace {

/// Offsets ascending and distinct (at most 8), one finite value each, a uint8 [rows] CPU mask
/// with no bit beyond the diagonals and every stored column inside [0, rows).
void validate(const StencilMatrix& a) {
  const size_t nd = a.offsets.size();
  TESSERA_CHECK(nd >= 1 && nd <= 8 && a.coeffs.size() == nd, InvalidInput,
                "StencilMatrix: 1 to 8 diagonals with one value each, got ", nd, " offsets and ", a.coeffs.size(),
                " values");
  for (size_t d = 0; d < nd; ++d) {
    TESSERA_CHECK(d == 0 || a.offsets[d - 1] < a.offsets[d], InvalidInput,
                  "StencilMatrix: offsets must be ascending and distinct");
    TESSERA_CHECK(std::isfinite(a.coeffs[d]), InvalidInput, "StencilMatrix: a diagonal's value is NaN or Inf");
  }
  TESSERA_CHECK(a.mask.defined() && a.mask.dim() == 1 && a.mask.is_cpu() && a.mask.scalar_type() == at::kByte &&
                    a.mask.numel() > 0,
                InvalidInput, "StencilMatrix: mask must be a non-empty uint8 [rows] CPU tensor");
  const at::Tensor m = a.mask.contiguous();
  const uint8_t* mp = m.data_ptr<uint8_t>();
  const int64_t rows = m.numel();
  const unsigned allowed = (1u << nd) - 1u;
  bool ok = true;
#pragma omp parallel for schedule(static) reduction(&& : ok) if (rows > 65536)
  for (int64_t i = 0; i < rows; ++i) {
    const unsigned bits = mp[i];
    ok = ok && (bits & ~allowed) == 0;
    for (size_t d = 0; d < nd; ++d) {
      const int64_t j = i + a.offsets[d];
      if (bits >> d & 1u) ok = ok && j >= 0 && j < rows;
    }
  }
  TESSERA_CHECK(ok, InvalidInput, "StencilMatrix: a row stores a diagonal outside the matrix or a bit beyond its ",
                nd, " diagonals");
}

/// A = A^T: each diagonal o mirrored by -o with the same value, and row i storing o exactly
/// when row i + o stores -o.
bool symmetric(const StencilMatrix& a) {
  const size_t nd = a.offsets.size();
  std::vector<int> mirror(nd, -1);
  for (size_t d = 0; d < nd; ++d) {
    for (size_t e = 0; e < nd; ++e) {
      if (a.offsets[e] == -a.offsets[d]) mirror[d] = static_cast<int>(e);
    }
    if (mirror[d] < 0 || !(a.coeffs[mirror[d]] == a.coeffs[d])) return false;
  }
  const at::Tensor m = a.mask.contiguous();
  const uint8_t* mp = m.data_ptr<uint8_t>();
  const int64_t rows = m.numel();
  bool ok = true;
#pragma omp parallel for schedule(static) reduction(&& : ok) if (rows > 65536)
  for (int64_t i = 0; i < rows; ++i) {
    for (size_t d = 0; d < nd; ++d) {
      if (mp[i] >> d & 1u) ok = ok && (mp[i + a.offsets[d]] >> mirror[d] & 1u);   // (i, j) stored: (j, i) too
    }
  }
  return ok;
}

/// The shared operator of a validated StencilMatrix.
std::shared_ptr<const detail::SpmvPlan> plan_of(const StencilMatrix& a) {
  detail::StencilForm form;
  form.offsets = a.offsets;
  form.coeffs = a.coeffs;
  form.mask = a.mask.contiguous();
  return std::make_shared<const detail::SpmvPlan>(std::move(form));
}

}  // namespace

int64_t StencilMatrix::nnz() const {
  if (!mask.defined()) return 0;
  detail::StencilForm form;
  form.offsets = offsets;
  form.coeffs = coeffs;
  form.mask = mask.contiguous();
  return form.stored();
}

SparseTensor StencilMatrix::to_sparse() const {
  validate(*this);
  const int64_t n = rows();
  const at::Tensor m = mask.contiguous();
  const uint8_t* mp = m.data_ptr<uint8_t>();
  const bool small = nnz() <= std::numeric_limits<int32_t>::max() && n <= std::numeric_limits<int32_t>::max();
  at::Tensor row_ptr = at::empty({n + 1}, small ? at::kInt : at::kLong), col, val;
  auto count = [&](int64_t i) { return static_cast<int64_t>(__builtin_popcount(mp[i])); };
  auto fill = [&]<typename I>() {
    detail::assemble_csr_rows<I>(n, row_ptr, col, val, count, [&](int64_t i, I* cp, double* vp) {
      int64_t q = 0;
      for (size_t d = 0; d < offsets.size(); ++d) {
        if (mp[i] >> d & 1u) {
          cp[q] = static_cast<I>(i + offsets[d]);
          vp[q++] = coeffs[d];
        }
      }
    });
  };
  if (small) {
    fill.template operator()<int32_t>();
  } else {
    fill.template operator()<int64_t>();
  }
  return SparseTensor::from_csr(row_ptr, col, val, n, n);
}

namespace {

/// The (2 dims + 1)-point Laplacian (Dirichlet) on an n^dims grid, row i = x_0 + n x_1 + n^2 x_2:
/// diagonals -n^(dims-1) .. -n, -1, 0, 1, n .. n^(dims-1) (columns ascending), 2 dims on the
/// diagonal; bit dims-1-k of a row's mask is its lower neighbour along axis k, bit dims the
/// diagonal, bit dims+1+k its upper neighbour along axis k.
StencilMatrix laplacian_stencil(int64_t n, int dims, const char* what) {
  TESSERA_CHECK(n >= 1, InvalidInput, what, ": grid size must be >= 1, got ", n);
  StencilMatrix a;
  std::vector<int64_t> stride(dims, 1);
  for (int k = 1; k < dims; ++k) stride[k] = stride[k - 1] * n;
  const int64_t rows = stride[dims - 1] * n;
  a.mask = at::empty({rows}, at::kByte);
  uint8_t* m = a.mask.data_ptr<uint8_t>();
  if (n == 1) {  // one unknown: the diagonal alone
    a.offsets = {0};
    a.coeffs = {2.0 * dims};
    m[0] = 1;
    return a;
  }
  for (int k = dims - 1; k >= 0; --k) a.offsets.push_back(-stride[k]), a.coeffs.push_back(-1.0);
  a.offsets.push_back(0), a.coeffs.push_back(2.0 * dims);
  for (int k = 0; k < dims; ++k) a.offsets.push_back(stride[k]), a.coeffs.push_back(-1.0);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < rows; ++i) {
    unsigned bits = 1u << dims;
    for (int k = 0; k < dims; ++k) {
      const int64_t x = (i / stride[k]) % n;  // coordinate along axis k
      bits |= static_cast<unsigned>(x > 0) << (dims - 1 - k) | static_cast<unsigned>(x < n - 1) << (dims + 1 + k);
    }
    m[i] = static_cast<uint8_t>(bits);
  }
  return a;
}

}  // namespace

StencilMatrix poisson2d_stencil(int64_t n) { return laplacian_stencil(n, 2, "poisson2d_stencil"); }

StencilMatrix poisson3d_stencil(int64_t n) { return laplacian_stencil(n, 3, "poisson3d_stencil"); }

std::optional<StencilMatrix> stencil_of(const SparseTensor& a) {
  if (a.rows() != a.cols() || a.nnz() == 0 || !a.values().is_cpu()) return std::nullopt;
  const at::Tensor values = a.values().detach().reshape({a.batch_size(), a.nnz()})[0].to(at::kDouble).contiguous();
  detail::StencilForm form = detail::detect_stencil(a.row_ptr(), a.col_idx(), values, a.rows());
  if (!form.found()) return std::nullopt;
  return StencilMatrix{form.offsets, form.coeffs, form.mask};
}

std::pair<at::Tensor, SolveInfo> solve(const StencilMatrix& a, const at::Tensor& b, const SolveOptions& options) {
  validate(a);
  const int64_t n = a.rows();
  TESSERA_CHECK(b.defined() && b.dim() == 1 && b.size(0) == n, DimensionMismatch, "solve: the stencil matrix has ",
                n, " rows but b has shape ", b.defined() ? b.sizes() : at::IntArrayRef{});
  TESSERA_CHECK(b.is_cpu() && b.scalar_type() == at::kDouble, InvalidInput,
                "solve: a stencil matrix takes a float64 CPU b");
  TESSERA_CHECK(!b.requires_grad(), InvalidInput,
                "solve: the stencil (matrix-free) solve has no autograd; solve the SparseTensor for gradients");
  TESSERA_CHECK(at::isfinite(b).all().item<bool>(), InvalidInput, "solve: b contains NaN or Inf");
  TESSERA_CHECK(options.backend == Backend::Auto || options.backend == Backend::Native, Unsupported,
                "solve: a stencil matrix is solved by the native Krylov backend only");
  const Preconditioner pk = options.preconditioner;
  TESSERA_CHECK(pk == Preconditioner::None || pk == Preconditioner::Jacobi || pk == Preconditioner::AMG, Unsupported,
                "solve: a stencil matrix takes preconditioner none, jacobi or amg, not ", to_string(pk));
  TESSERA_CHECK(options.rtol >= 0.0 && options.atol >= 0.0 && options.maxiter >= 0, InvalidInput,
                "solve: need rtol >= 0, atol >= 0 and maxiter >= 0");
  const bool sym = symmetric(a);
  SolveOptions opts = options;
  opts.backend = Backend::Native;
  if (opts.method == Method::Auto) {
    const auto zero = std::find(a.offsets.begin(), a.offsets.end(), int64_t{0});
    const bool positive = zero != a.offsets.end() && a.coeffs[zero - a.offsets.begin()] > 0.0;
    opts.method = sym ? (positive ? Method::CG : Method::MINRES) : Method::GMRES;
  }
  TESSERA_CHECK(is_krylov(opts.method), Unsupported, "solve: a stencil matrix is solved by cg, bicgstab, gmres or "
                "minres, not ", to_string(opts.method));
  const std::shared_ptr<const detail::SpmvPlan> plan = plan_of(a);
  const detail::LinearOperator op = detail::CsrOperator{plan};
  at::Tensor diagonal;
  if (pk == Preconditioner::Jacobi) diagonal = detail::csr_from_stencil(plan).diagonal();
  std::shared_ptr<detail::NativePreconditioner> pc;
  SolveInfo info;
  if (pk == Preconditioner::AMG) {
    pc = detail::NativePreconditioner::build(detail::csr_from_stencil(plan), opts, sym);
    if (pc->status() != SolveStatus::Converged) {
      info.backend = to_string(Backend::Native);
      info.method = opts.method;
      info.status = pc->status();
      info.message = pc->message();
      info.residual = std::numeric_limits<double>::infinity();
      return {at::full_like(b, std::numeric_limits<double>::quiet_NaN()), info};
    }
  }
  at::Tensor x = detail::krylov_solve(op, diagonal, b.contiguous(), opts, info, nullptr, pc ? &pc->op(false) : nullptr);
  info.spmv_format = plan->format_name();
  return {x, info};
}

PreconditionerSetup setup_preconditioner(const StencilMatrix& a, const SolveOptions& options) {
  validate(a);
  TESSERA_CHECK(options.preconditioner == Preconditioner::AMG, Unsupported,
                "setup_preconditioner: a stencil matrix takes amg");
  return detail::NativePreconditioner::timed_setup(detail::csr_from_stencil(plan_of(a)), options, symmetric(a));
}

}  // namespace tessera::sla
