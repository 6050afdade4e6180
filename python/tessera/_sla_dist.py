"""tessera.sla.DSparseTensor: a sparse matrix whose rows are spread over the ranks of an
mpirun job (re-exported by :mod:`tessera.sla`)."""

from __future__ import annotations

from typing import Callable, Optional

import torch

from .sla import SparseTensor, _det_options, _eigsh_options, _sla, _solve_options


_finalize_registered = False


def _register_finalize():
    global _finalize_registered
    if not _finalize_registered:
        import atexit

        atexit.register(_sla.finalize)
        _finalize_registered = True


def _wrap_d(impl) -> "DSparseTensor":
    a = DSparseTensor.__new__(DSparseTensor)
    a._impl = impl
    return a


class DSparseTensor:
    """A sparse matrix distributed by rows over the processes of an ``mpirun`` job.

    Each rank holds its owned rows; vectors are distributed the same way (rank r holds the
    entries of ``owned_row_ids()``, ascending). Every call is collective: all ranks make it
    in the same order, and all call ``backward()``. Gradients reach the values (local, or
    the global values for :meth:`from_global`) and the right-hand sides.

    Works with or without ``mpi4py`` (import it first if you use it: tessera then uses the
    MPI it initialised). Outside ``mpirun`` there is one rank.

    Example (``mpirun -np 2 /usr/bin/python3 script.py``)::

        A = tessera.sla.poisson2d(32)
        dA = tessera.sla.DSparseTensor.from_global(A)
        b = dA.scatter(torch.ones(A.shape[0], dtype=torch.float64))   # this rank's entries
        x = dA.solve(b, method="cg")                                    # owned entries of x
        x_all = dA.gather(x)                                            # the whole vector
    """

    __slots__ = ("_impl",)

    def __init__(self):
        raise TypeError("use DSparseTensor.from_global, scatter_from_root or from_local_rows")

    @classmethod
    def from_global(cls, A: SparseTensor, partition: str = "contiguous") -> "DSparseTensor":
        """Every rank passes the same global matrix and keeps its rows (``partition``:
        ``"contiguous"`` or ``"metis"``); gradients reach ``A.values``."""
        _register_finalize()
        return _wrap_d(_sla.DSparseTensor.from_global(A._impl, partition))

    @classmethod
    def scatter_from_root(cls, A: Optional[SparseTensor], rows: int, root: int = 0) -> "DSparseTensor":
        """Rank ``root`` passes the global matrix (the others None); every rank receives its
        rows of a contiguous partition of ``rows`` rows. Local values are new leaves."""
        _register_finalize()
        return _wrap_d(_sla.DSparseTensor.scatter_from_root(None if A is None else A._impl, int(rows), int(root)))

    @classmethod
    def from_local_rows(cls, local_rows: SparseTensor) -> "DSparseTensor":
        """Each rank passes only its own rows (consecutive blocks in rank order) as an
        ``[owned, n]`` matrix with global column indices. No global matrix is formed."""
        _register_finalize()
        return _wrap_d(_sla.DSparseTensor.from_local_rows(local_rows._impl))

    @property
    def rank(self) -> int:
        return self._impl.rank

    @property
    def world_size(self) -> int:
        return self._impl.size

    @property
    def shape(self) -> torch.Size:
        return torch.Size([self._impl.rows, self._impl.rows])

    @property
    def owned_rows(self) -> int:
        return self._impl.owned_rows

    @property
    def values(self) -> torch.Tensor:
        """This rank's stored values (local rows)."""
        return self._impl.values

    def owned_row_ids(self) -> torch.Tensor:
        """Global ids of this rank's rows (ascending)."""
        return self._impl.owned_row_ids()

    def with_values(self, values: torch.Tensor) -> "DSparseTensor":
        return _wrap_d(self._impl.with_values(values))

    def matvec(self, x_owned: torch.Tensor) -> torch.Tensor:
        """``A @ x`` on the owned rows (halo exchange; collective)."""
        return self._impl.matvec(x_owned)

    def rmatvec(self, x_owned: torch.Tensor) -> torch.Tensor:
        """``A.T @ x`` on the owned rows (collective)."""
        return self._impl.rmatvec(x_owned)

    def __matmul__(self, x):
        if isinstance(x, torch.Tensor):
            return self.matvec(x)
        return NotImplemented

    def scatter(self, global_vector: torch.Tensor, from_root: bool = False, root: int = 0) -> torch.Tensor:
        """This rank's entries of a global vector given on every rank (or on ``root`` only
        with ``from_root=True``)."""
        return self._impl.scatter(global_vector, bool(from_root), int(root))

    def gather(self, owned: torch.Tensor) -> torch.Tensor:
        """The global vector on every rank (differentiable)."""
        return self._impl.gather_all(owned)

    def solve(self, b_owned: torch.Tensor, method: str = "auto", preconditioner: Optional[str] = "jacobi",
              rtol: float = 1e-10, atol: float = 0.0, maxiter: int = 0, gmres_restart: int = 50,
              return_info: bool = False, backend: str = "native"):
        """Distributed native Krylov solve (``"cg"`` by default, ``"bicgstab"``, ``"gmres"``,
        ``"minres"``; preconditioners ``none``, ``jacobi``, ``block-jacobi``, ``boomeramg``:
        hypre's algebraic multigrid on the whole distributed matrix, each rank giving hypre
        its own rows; ``NotCompiled`` without hypre), differentiable in the values and
        ``b_owned`` (one distributed adjoint solve reusing the preconditioner's set-up). The
        info is the same on every rank. ``backend="mumps"``: MUMPS's distributed LU instead
        (``method`` ``"auto"`` or ``"lu"``; the adjoint reuses the factors; ``NotCompiled``
        without MUMPS). ``backend="auto"`` with ``method="auto"``: MUMPS when the estimated
        LU factor of the global matrix fits in 2 GiB, else CG with BoomerAMG for an SPD
        matrix, MINRES for another symmetric one, GMRES with BoomerAMG otherwise (the info's
        ``backend`` and ``method`` say which ran)."""
        if backend == "mumps" and method == "auto":
            method = "lu"
        x, info = self._impl.solve(b_owned, _solve_options(backend, method, preconditioner, rtol, atol, maxiter,
                                                           gmres_restart))
        return (x, info) if return_info else x

    def eigsh(self, k: int = 6, which: Optional[str] = None, sigma: Optional[float] = None, tol: float = 1e-10,
              ncv: int = 0, block_size: int = 0, maxiter: int = 1000, seed: int = 12345, return_info: bool = False):
        """``k`` eigenpairs of the symmetric distributed matrix (collective): eigsh's native
        block Lanczos on the distributed product; ``sigma`` (``which="nearest"``) runs it on
        ``(A - sigma I)^{-1}`` by MUMPS's distributed LU. Returns ``eigenvalues`` ``[k]``
        (the same on every rank) and ``eigenvectors`` ``[owned_rows, k]`` (this rank's rows),
        differentiable in the values; gradients of the eigenvalues are summed over the
        ranks in backward (the loss is the sum of the ranks' losses)."""
        vals, vecs, info = self._impl.eigsh(_eigsh_options(k, which, sigma, "native", tol, ncv, block_size, maxiter,
                                                           seed))
        return (vals, vecs, info) if return_info else (vals, vecs)

    def slogdet(self, return_info: bool = False):
        """``(sign, log|det A|)`` from MUMPS's distributed LU (collective; the same on every
        rank). ``log|det A|`` is differentiable: its gradient ``(A^{-1})_ji`` on the pattern
        comes from MUMPS's selected inversion with the same factors."""
        sign, logabsdet, info = self._impl.slogdet(_det_options("mumps"))
        return (sign, logabsdet, info) if return_info else (sign, logabsdet)

    def logdet(self, return_info: bool = False):
        """``log det A`` (NaN where det A < 0) from MUMPS's distributed LU; differentiable."""
        ld, info = self._impl.logdet(_det_options("mumps"))
        return (ld, info) if return_info else ld

    def __repr__(self) -> str:
        return f"DSparseTensor(shape={tuple(self.shape)}, rank={self.rank} of {self.world_size}, owned_rows={self.owned_rows})"


class DSparseTensorBatch:
    """Several matrices on one distributed pattern: values ``[B, nnz_local]`` on each rank,
    one halo plan. Products, solves, eigsh and slogdet map over the batch (collective) and
    are differentiable in the values.

    Example (``mpirun -np 2``)::

        A = tessera.sla.poisson2d(16)
        values = torch.stack([A.values, 2 * A.values])              # [2, nnz]
        batch = tessera.sla.DSparseTensorBatch.from_global(A.with_values(values))
        x = batch.solve(torch.ones(2, batch.item(0).owned_rows, dtype=torch.float64))
    """

    __slots__ = ("_impl",)

    def __init__(self, pattern: DSparseTensor, values: torch.Tensor):
        self._impl = _sla.DSparseTensorBatch(pattern._impl, values)

    @classmethod
    def from_global(cls, A: SparseTensor, partition: str = "contiguous") -> "DSparseTensorBatch":
        """Every rank passes the same global matrix with batched values ``[B, nnz]``;
        gradients reach ``A.values``."""
        _register_finalize()
        out = cls.__new__(cls)
        out._impl = _sla.DSparseTensorBatch.from_global(A._impl, partition)
        return out

    @property
    def batch_size(self) -> int:
        return self._impl.batch_size

    @property
    def values(self) -> torch.Tensor:
        return self._impl.values

    def item(self, b: int) -> DSparseTensor:
        """Matrix ``b`` of the batch (shares the halo plan)."""
        return _wrap_d(self._impl.item(int(b)))

    def matvec(self, x: torch.Tensor) -> torch.Tensor:
        """``y[b] = A_b x[b]``; x ``[B, owned]`` or ``[B, owned, k]``."""
        return self._impl.matvec(x)

    def rmatvec(self, x: torch.Tensor) -> torch.Tensor:
        return self._impl.rmatvec(x)

    def solve(self, b: torch.Tensor, method: str = "auto", preconditioner: Optional[str] = "jacobi",
              rtol: float = 1e-10, atol: float = 0.0, maxiter: int = 0, gmres_restart: int = 50,
              backend: str = "native", return_info: bool = False):
        """``x[b] = A_b^{-1} b[b]`` by :meth:`DSparseTensor.solve`; one info per element."""
        if backend == "mumps" and method == "auto":
            method = "lu"
        x, infos = self._impl.solve(b, _solve_options(backend, method, preconditioner, rtol, atol, maxiter,
                                                      gmres_restart))
        return (x, infos) if return_info else x

    def eigsh(self, k: int = 6, which: Optional[str] = None, sigma: Optional[float] = None, tol: float = 1e-10,
              return_info: bool = False):
        """Eigenvalues ``[B, k]`` and eigenvectors ``[B, owned, k]`` (see :meth:`DSparseTensor.eigsh`)."""
        vals, vecs, infos = self._impl.eigsh(_eigsh_options(k, which, sigma, "native", tol, 0, 0, 1000, 12345))
        return (vals, vecs, infos) if return_info else (vals, vecs)

    def slogdet(self, return_info: bool = False):
        """Signs ``[B]`` and ``log|det|`` ``[B]`` by MUMPS (see :meth:`DSparseTensor.slogdet`)."""
        sign, logabsdet, infos = self._impl.slogdet(_det_options("mumps"))
        return (sign, logabsdet, infos) if return_info else (sign, logabsdet)


def dnonlinear_solve(residual: Callable[..., torch.Tensor], u0: torch.Tensor, *params: torch.Tensor,
                     jacobian_pattern: DSparseTensor, rtol: float = 1e-10, atol: float = 1e-12, maxiter: int = 50,
                     line_search: bool = True, linear: Optional[dict] = None, return_info: bool = False):
    """Solves ``residual(u, *params) = 0`` across ranks (collective): ``u0`` and the
    residual are this rank's rows, laid out like ``jacobian_pattern``'s vectors (the
    residual typically uses :meth:`DSparseTensor.matvec`). Newton's method with the
    Jacobian assembled on ``jacobian_pattern`` (values ignored) by colouring, and linear
    steps by :meth:`DSparseTensor.solve` (``linear``: its arguments; default GMRES with
    Jacobi). Differentiable in ``params`` by one adjoint solve; each rank's ``p.grad`` holds
    its rows' part (sum over the ranks for the whole gradient)."""
    o = _sla.NonlinearOptions()
    o.rtol = float(rtol)
    o.atol = float(atol)
    o.maxiter = int(maxiter)
    o.line_search = bool(line_search)
    if linear:
        lin = dict(linear)
        if lin.get("backend") == "mumps" and lin.get("method", "auto") == "auto":
            lin["method"] = "lu"
        o.linear = _solve_options(**lin)

    def f(u, ps):
        return residual(u, *ps)

    u, info = _sla.dnonlinear_solve(f, u0, list(params), jacobian_pattern._impl, o)
    return (u, info) if return_info else u


DSparseTensor.__module__ = "tessera.sla"
DSparseTensorBatch.__module__ = "tessera.sla"
