"""Differentiable sparse linear algebra on PyTorch tensors (tessera's C++ ``tessera::sla``).

A :class:`SparseTensor` is a CSR pattern shared by a batch of value vectors: ``values``
has shape ``[..., nnz]`` (float32 or float64) and is an ordinary autograd-tracked tensor.
Every operation below is differentiable with ``torch.autograd`` in the values and in the
dense operands; the numerics (and the backward passes) run in C++.

Example::

    import torch, tessera
    A = tessera.sla.poisson2d(32)
    values = A.values.clone().requires_grad_()
    b = torch.ones(A.shape[0], dtype=torch.float64, requires_grad=True)
    x = A.with_values(values).solve(b)          # backend="auto"
    x.sum().backward()                          # values.grad, b.grad
"""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple

import torch

from . import _C

_sla = _C.sla

__all__ = [
    "SparseTensor",
    "SparseTensorList",
    "DSparseTensor",
    "DSparseTensorBatch",
    "dnonlinear_solve",
    "SolveInfo",
    "EigshInfo",
    "DetInfo",
    "NonlinearInfo",
    "solve",
    "eigsh",
    "det",
    "logdet",
    "slogdet",
    "nonlinear_solve",
    "solve_operator",
    "dsolve_operator",
    "read_mtx",
    "read_dense_mtx",
    "write_mtx",
    "poisson2d",
    "poisson3d",
    "diffusion2d",
    "variable_diffusion2d",
    "variable_diffusion3d",
    "fe_laplacian2d",
    "shifted_laplacian2d",
    "convection_diffusion2d",
    "StencilMatrix",
    "poisson2d_stencil",
    "poisson3d_stencil",
    "stencil_of",
]

SolveInfo = _sla.SolveInfo
EigshInfo = _sla.EigshInfo
DetInfo = _sla.DetInfo
NonlinearInfo = _sla.NonlinearInfo


def _solve_options(backend="auto", method="auto", preconditioner="jacobi", rtol=1e-10, atol=0.0, maxiter=0,
                   gmres_restart=50, memory_budget_bytes=2.0 * 1024**3, stencil_spmv=True):
    o = _sla.SolveOptions()
    o.backend = str(backend)
    o.method = str(method).lower()
    o.preconditioner = "none" if preconditioner is None else str(preconditioner).lower()
    o.rtol = float(rtol)
    o.atol = float(atol)
    o.maxiter = int(maxiter)
    o.gmres_restart = int(gmres_restart)
    o.memory_budget_bytes = float(memory_budget_bytes)
    o.stencil_spmv = bool(stencil_spmv)
    return o


def _det_options(backend="auto"):
    o = _sla.DetOptions()
    o.backend = str(backend)
    return o


def _eigsh_options(k, which, sigma, backend, tol, ncv, block_size, maxiter, seed):
    o = _sla.EigshOptions()
    o.k = int(k)
    if sigma is not None:
        if which not in ("nearest", None):
            raise ValueError(f"eigsh: sigma is given, so which must be 'nearest' or None (got {which!r})")
        o.which = "nearest"
        o.sigma = float(sigma)
    else:
        if which == "nearest":
            raise ValueError("eigsh: which='nearest' needs sigma")
        o.which = "largest" if which is None else str(which)
    o.backend = str(backend)
    o.tol = float(tol)
    o.ncv = int(ncv)
    o.block_size = int(block_size)
    o.maxiter = int(maxiter)
    o.seed = int(seed)
    return o


def _wrap(impl) -> "SparseTensor":
    a = SparseTensor.__new__(SparseTensor)
    a._impl = impl
    return a


class SparseTensor:
    """A sparse matrix (or a batch of matrices sharing one pattern) whose values carry
    gradients.

    ``SparseTensor(values, row, col, shape)`` builds it from COO entries in any order
    (duplicates are summed, differentiably). ``values`` is ``[..., nnz]``: leading
    dimensions are a batch of matrices with the same pattern. ``shape`` is
    ``(rows, cols)``. Other constructors: :meth:`from_csr`, :meth:`from_dense`,
    :meth:`from_torch_sparse`, :meth:`from_symmetric_coo`.

    The stored ``values`` tensor is used as given whenever no reordering is needed
    (:meth:`from_csr`, :meth:`with_values`): no copy.
    """

    __slots__ = ("_impl",)

    def __init__(self, values: torch.Tensor, row: torch.Tensor, col: torch.Tensor, shape: Sequence[int]):
        rows, cols = _shape2(shape)
        self._impl = _sla.SparseTensor.from_coo(values, _index(row), _index(col), rows, cols)

    # ---- construction
    @classmethod
    def from_coo(cls, values, row, col, shape) -> "SparseTensor":
        """COO entries in any order; duplicates are summed (differentiably)."""
        return cls(values, row, col, shape)

    @classmethod
    def from_csr(cls, values: torch.Tensor, row_ptr: torch.Tensor, col_idx: torch.Tensor,
                 shape: Sequence[int]) -> "SparseTensor":
        """Validated CSR (sorted, unique columns within each row). ``values`` [..., nnz] is
        kept as given (no copy); int32 indices stay int32."""
        rows, cols = _shape2(shape)
        return _wrap(_sla.SparseTensor.from_csr(_index(row_ptr), _index(col_idx), values, rows, cols))

    @classmethod
    def from_symmetric_coo(cls, values, row, col, n: int, skew: bool = False) -> "SparseTensor":
        """One triangle of a symmetric (or skew-symmetric) matrix; the mirrored entries
        gather from the same values, so gradients land on the stored ones."""
        return _wrap(_sla.SparseTensor.from_symmetric_coo(values, _index(row), _index(col), int(n), bool(skew)))

    @classmethod
    def from_dense(cls, dense: torch.Tensor) -> "SparseTensor":
        """The non-zeros of a dense ``[..., rows, cols]`` tensor (values keep its history)."""
        return _wrap(_sla.SparseTensor.from_dense(dense))

    @classmethod
    def from_torch_sparse(cls, t: torch.Tensor) -> "SparseTensor":
        """From a ``torch.sparse_coo`` (2 sparse dimensions; coalesced here) or a
        ``torch.sparse_csr`` tensor (one matrix)."""
        if t.layout == torch.sparse_coo:
            if t.sparse_dim() != 2 or t.dense_dim() != 0:
                raise ValueError(f"from_torch_sparse: a COO tensor needs 2 sparse and 0 dense dimensions, "
                                 f"got {t.sparse_dim()} and {t.dense_dim()}")
            t = t.coalesce()
            idx = t.indices()
            return cls(t.values(), idx[0], idx[1], t.shape)
        if t.layout == torch.sparse_csr:
            if t.dim() != 2:
                raise ValueError(f"from_torch_sparse: a CSR tensor must be one matrix, got shape {tuple(t.shape)}")
            return cls.from_csr(t.values(), t.crow_indices(), t.col_indices(), t.shape)
        raise ValueError(f"from_torch_sparse: expected a sparse COO or CSR tensor, got layout {t.layout}")

    def to_torch_sparse(self, layout=torch.sparse_coo) -> torch.Tensor:
        """The same matrix as a ``torch.sparse_coo_tensor`` (batch dimensions become
        leading sparse dimensions) or, with ``layout=torch.sparse_csr``, a
        ``torch.sparse_csr_tensor`` (batched values give a batched CSR tensor)."""
        v = self.values
        if layout == torch.sparse_coo:
            row = self._impl.row_indices()
            col = self.col_idx.to(torch.int64)
            batch = list(self.batch_shape)
            if not batch:
                return torch.sparse_coo_tensor(torch.stack([row, col]), v, self.shape)
            nb = 1
            for s in batch:
                nb *= s
            nnz = self.nnz
            flat = torch.arange(nb).repeat_interleave(nnz)
            bidx = list(torch.unravel_index(flat, tuple(batch))) if hasattr(torch, "unravel_index") \
                else _unravel(flat, batch)
            idx = torch.stack(bidx + [row.repeat(nb), col.repeat(nb)])
            return torch.sparse_coo_tensor(idx, v.reshape(-1), self.shape)
        if layout == torch.sparse_csr:
            rp = self.row_ptr.to(torch.int64)
            ci = self.col_idx.to(torch.int64)
            batch = list(self.batch_shape)
            if batch:
                rp = rp.expand(*batch, rp.numel())
                ci = ci.expand(*batch, ci.numel())
            return torch.sparse_csr_tensor(rp, ci, v, self.shape)
        raise ValueError(f"to_torch_sparse: layout must be torch.sparse_coo or torch.sparse_csr, got {layout}")

    # ---- properties
    @property
    def values(self) -> torch.Tensor:
        """Stored values ``[..., nnz]`` (the autograd-tracked tensor itself)."""
        return self._impl.values

    @property
    def row_ptr(self) -> torch.Tensor:
        return self._impl.row_ptr

    @property
    def col_idx(self) -> torch.Tensor:
        return self._impl.col_idx

    @property
    def row(self) -> torch.Tensor:
        """Row index of every stored entry (int64 [nnz])."""
        return self._impl.row_indices()

    @property
    def col(self) -> torch.Tensor:
        """Column index of every stored entry (int64 [nnz])."""
        return self._impl.col_idx.to(torch.int64)

    @property
    def shape(self) -> torch.Size:
        """``(*batch_shape, rows, cols)``."""
        return torch.Size(list(self._impl.batch_shape) + [self._impl.rows, self._impl.cols])

    @property
    def batch_shape(self) -> torch.Size:
        return torch.Size(self._impl.batch_shape)

    @property
    def nnz(self) -> int:
        return self._impl.nnz

    @property
    def dtype(self) -> torch.dtype:
        return self.values.dtype

    @property
    def device(self) -> torch.device:
        return self.values.device

    @property
    def requires_grad(self) -> bool:
        return self.values.requires_grad

    @property
    def T(self) -> "SparseTensor":
        """The transpose (a permutation of the values; differentiable)."""
        return _wrap(self._impl.transpose())

    def transpose(self) -> "SparseTensor":
        return self.T

    def with_values(self, values: torch.Tensor) -> "SparseTensor":
        """The same pattern with other values ``[..., nnz]`` (no copy)."""
        return _wrap(self._impl.with_values(values))

    def to(self, dtype: torch.dtype) -> "SparseTensor":
        """Values cast to float32 or float64 (differentiable)."""
        return _wrap(self._impl.to(dtype))

    def double(self) -> "SparseTensor":
        return self.to(torch.float64)

    def float(self) -> "SparseTensor":
        return self.to(torch.float32)

    def to_dense(self) -> torch.Tensor:
        """Dense ``[..., rows, cols]`` (differentiable)."""
        return self._impl.to_dense()

    def diagonal(self) -> torch.Tensor:
        """Main diagonal ``[..., min(rows, cols)]`` (differentiable)."""
        return self._impl.diagonal()

    def __repr__(self) -> str:
        return (f"SparseTensor(shape={tuple(self.shape)}, nnz={self.nnz}, dtype={self.dtype}, "
                f"requires_grad={self.requires_grad})")

    # ---- operations
    def matvec(self, x: torch.Tensor) -> torch.Tensor:
        """``A @ x`` for x ``[cols]``, ``[cols, k]`` or with A's batch shape in front."""
        return _sla.matvec(self._impl, x)

    def rmatvec(self, x: torch.Tensor) -> torch.Tensor:
        """``A.T @ x`` without forming the transpose."""
        return _sla.rmatvec(self._impl, x)

    def __matmul__(self, x):
        if isinstance(x, torch.Tensor):
            return self.matvec(x)
        return NotImplemented

    def solve(self, b: torch.Tensor, backend: str = "auto", method: str = "auto",
              preconditioner: Optional[str] = "jacobi", rtol: float = 1e-10, atol: float = 0.0,
              maxiter: int = 0, gmres_restart: int = 50, return_info: bool = False, stencil_spmv: bool = True):
        """Solves ``A x = b``, differentiable in A's values and in b.

        Args:
            b: ``[n]`` or ``[n, k]`` (shared by A's batch) or ``[*batch, n]`` / ``[*batch, n, k]``.
            backend: ``"auto"`` (a direct factorisation when it fits in memory, else a
                Krylov method), ``"native"`` (tessera's Krylov solvers), ``"eigen"``,
                ``"cholmod"``, ``"umfpack"`` or ``"superlu"``.
            method: ``"auto"``, ``"cholesky"``, ``"ldlt"``, ``"lu"``, ``"cg"``,
                ``"bicgstab"``, ``"gmres"`` or ``"minres"``. A named method has no fallback.
            preconditioner: native Krylov: ``"none"`` (or None), ``"jacobi"``,
                ``"block-jacobi"``, ``"amg"``, ``"ic0"``, ``"ilu0"``, ``"boomeramg"``.
            rtol, atol: Krylov stopping test ``||r|| <= max(rtol ||b||, atol)``.
            maxiter: Krylov iterations (0: 10 n, capped at 100000).
            return_info: also return a :class:`SolveInfo` (status, backend, method,
                iterations, relative residual; ``spmv_format``: the storage native Krylov's
                products ran in, ``"stencil"``, ``"sell-sym-8"``, ``"sell-8-8"`` /
                ``"sell-8-256"`` or ``"csr"``).
            stencil_spmv: native Krylov on the CPU: pick the product's storage (stencil form;
                for large matrices of short rows symmetric SELL, the upper triangle only, when
                the matrix is symmetric bit for bit, else SELL-C-σ; else CSR); False: plain CSR.

        Returns:
            ``x`` shaped like ``b``, or ``(x, info)`` with ``return_info=True``. A solve
            that does not converge is not an exception: check ``info.status``.

        Gradients come from one adjoint solve that reuses the factorisation (or the same
        Krylov method and preconditioner).
        """
        x, info = _sla.solve(self._impl, b, _solve_options(backend, method, preconditioner, rtol, atol, maxiter,
                                                           gmres_restart, stencil_spmv=stencil_spmv))
        return (x, info) if return_info else x

    def eigsh(self, k: int = 6, which: Optional[str] = None, sigma: Optional[float] = None, **kwargs):
        """See :func:`eigsh`."""
        return eigsh(self, k, which=which, sigma=sigma, **kwargs)

    def det(self, backend: str = "auto", return_info: bool = False):
        """See :func:`det`."""
        return det(self, backend=backend, return_info=return_info)

    def logdet(self, backend: str = "auto", return_info: bool = False):
        """See :func:`logdet`."""
        return logdet(self, backend=backend, return_info=return_info)

    def slogdet(self, backend: str = "auto", return_info: bool = False):
        """See :func:`slogdet`."""
        return slogdet(self, backend=backend, return_info=return_info)


def _shape2(shape) -> Tuple[int, int]:
    shape = tuple(int(s) for s in shape)
    if len(shape) < 2:
        raise ValueError(f"shape must end with (rows, cols), got {shape}")
    return shape[-2], shape[-1]


def _index(t) -> torch.Tensor:
    if not isinstance(t, torch.Tensor):
        t = torch.as_tensor(t, dtype=torch.int64)
    return t


def _unravel(flat: torch.Tensor, shape: List[int]) -> List[torch.Tensor]:
    out = []
    for s in reversed(shape):
        out.append(flat % s)
        flat = flat // s
    return list(reversed(out))


def solve(A: SparseTensor, b: torch.Tensor, **kwargs):
    """``A.solve(b, **kwargs)``: see :meth:`SparseTensor.solve` (and :meth:`StencilMatrix.solve`)."""
    return A.solve(b, **kwargs)


def eigsh(A: SparseTensor, k: int = 6, which: Optional[str] = None, sigma: Optional[float] = None,
          return_eigenvectors: bool = True, backend: str = "auto", tol: float = 1e-10, ncv: int = 0,
          block_size: int = 0, maxiter: int = 1000, seed: int = 12345, return_info: bool = False):
    """``k`` eigenpairs of a symmetric sparse matrix (one matrix), differentiable in its
    values.

    Args:
        which: ``"largest"`` (``"LA"``, the default), ``"smallest"`` (``"SA"``) or
            ``"nearest"`` to ``sigma`` (shift-invert; giving ``sigma`` implies it).
        backend: ``"auto"`` (tessera's single-vector thick-restart Lanczos for ``"largest"``
            and ``"smallest"`` of a CPU matrix; the native block thick-restart Lanczos for
            ``"nearest"``, other devices and small matrices), ``"native"``, ``"lanczos"`` or
            ``"spectra"`` (Spectra's implicitly restarted Lanczos). The block method and
            ``"lanczos"`` (which locks converged pairs and searches the deflated operator
            from random starts) find every copy of a multiple eigenvalue; Spectra, like
            ARPACK, only through rounding. Gradients do not depend on the backend. At an
            end of a clustered spectrum, ``"auto"`` gives the run on A a budget of products
            of about what shift-invert costs and then runs ``"lanczos"`` on
            ``(A - sigma I)^{-1}`` with ``sigma`` beyond that end, certified by a Cholesky
            factorisation (when its estimated factor fits the default memory budget);
            ``info.shift_invert`` and ``info.sigma`` report it.
        tol: relative Ritz residual tolerance.

    Returns:
        ``eigenvalues`` ``[k]`` ascending and ``eigenvectors`` ``[n, k]`` (or only the
        eigenvalues with ``return_eigenvectors=False``), plus an :class:`EigshInfo` with
        ``return_info=True``. Eigenvalue gradients are exact (Hellmann-Feynman);
        eigenvector gradients need simple eigenvalues.
    """
    vals, vecs, info = _sla.eigsh(A._impl, _eigsh_options(k, which, sigma, backend, tol, ncv, block_size, maxiter,
                                                         seed))
    out = (vals, vecs) if return_eigenvectors else (vals,)
    if return_info:
        out = out + (info,)
    return out if len(out) > 1 else out[0]


def slogdet(A: SparseTensor, backend: str = "auto", return_info: bool = False):
    """``(sign, log|det A|)`` from a sparse factorisation (CHOLMOD or UMFPACK);
    ``log|det A|`` is differentiable (gradient ``A^{-T}`` on the pattern, by selected
    inversion). A singular A gives sign 0, -inf and ``info.status == "singular"``."""
    sign, logabsdet, info = _sla.slogdet(A._impl, _det_options(backend))
    return (sign, logabsdet, info) if return_info else (sign, logabsdet)


def logdet(A: SparseTensor, backend: str = "auto", return_info: bool = False):
    """``log det A`` (NaN with ``info.status == "not_positive_definite"`` when det A < 0);
    differentiable."""
    ld, info = _sla.logdet(A._impl, _det_options(backend))
    return (ld, info) if return_info else ld


def det(A: SparseTensor, backend: str = "auto", return_info: bool = False):
    """``det A`` (may overflow for large matrices: prefer :func:`slogdet`); differentiable."""
    d, info = _sla.det(A._impl, _det_options(backend))
    return (d, info) if return_info else d


def nonlinear_solve(residual: Callable[..., torch.Tensor], u0: torch.Tensor, *params: torch.Tensor,
                    jacobian_pattern: Optional[SparseTensor] = None, rtol: float = 1e-10, atol: float = 1e-12,
                    maxiter: int = 50, line_search: bool = True, anderson: bool = False, anderson_depth: int = 5,
                    linear: Optional[dict] = None, krylov_rtol: float = 1e-12, return_info: bool = False):
    """Solves ``residual(u, *params) = 0`` for ``u`` from ``u0`` by Newton's method.

    ``residual`` is a Python function of torch tensors (``u`` [n] -> [n]); its Jacobian is
    never written: with ``jacobian_pattern`` (a :class:`SparseTensor` with the sparsity of
    dF/du) it is assembled by colouring and vector-Jacobian products and the Newton steps
    are sparse solves (options in ``linear``, a dict of :meth:`SparseTensor.solve`
    arguments); without it the steps are matrix-free GMRES on Jacobian-vector products.

    The result is differentiable in every ``params`` tensor that requires grad, by
    implicit differentiation (one adjoint solve), whatever the number of Newton steps;
    not in ``u0``. A non-converged iteration is reported in the :class:`NonlinearInfo`
    returned with ``return_info=True``.
    """
    o = _sla.NonlinearOptions()
    o.rtol = float(rtol)
    o.atol = float(atol)
    o.maxiter = int(maxiter)
    o.line_search = bool(line_search)
    o.anderson = bool(anderson)
    o.anderson_depth = int(anderson_depth)
    o.krylov_rtol = float(krylov_rtol)
    if jacobian_pattern is not None:
        o.jacobian_pattern = jacobian_pattern._impl
    if linear:
        o.linear = _solve_options(**linear)
    for i, p in enumerate(params):
        if not isinstance(p, torch.Tensor):
            raise TypeError(f"nonlinear_solve: parameter {i} must be a torch.Tensor, got {type(p).__name__}")

    def f(u, ps):
        return residual(u, *ps)

    u, info = _sla.nonlinear_solve(f, u0, list(params), o)
    return (u, info) if return_info else u


# The matrix constructors, the list, the distributed matrix and the user-operator solves
# live in their own files; they are part of this module.
from ._sla_matrices import (  # noqa: E402
    convection_diffusion2d, diffusion2d, fe_laplacian2d, poisson2d, poisson3d, read_dense_mtx, read_mtx,
    shifted_laplacian2d, variable_diffusion2d, variable_diffusion3d, write_mtx)
from ._sla_list import SparseTensorList  # noqa: E402
from ._sla_stencil import StencilMatrix, poisson2d_stencil, poisson3d_stencil, stencil_of  # noqa: E402
from ._sla_dist import DSparseTensor, DSparseTensorBatch, dnonlinear_solve  # noqa: E402
from ._sla_operator import dsolve_operator, solve_operator  # noqa: E402
