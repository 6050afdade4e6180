"""tessera.sla.DSparseTensor: a sparse matrix whose rows are spread over the ranks of an
mpirun job (re-exported by :mod:`tessera.sla`)."""

from __future__ import annotations

from typing import Optional

import torch

from .sla import SparseTensor, _sla, _solve_options


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
        without MUMPS)."""
        if backend == "mumps" and method == "auto":
            method = "lu"
        x, info = self._impl.solve(b_owned, _solve_options(backend, method, preconditioner, rtol, atol, maxiter,
                                                           gmres_restart))
        return (x, info) if return_info else x

    def __repr__(self) -> str:
        return f"DSparseTensor(shape={tuple(self.shape)}, rank={self.rank} of {self.world_size}, owned_rows={self.owned_rows})"


# ---- matrices


DSparseTensor.__module__ = "tessera.sla"
