"""Matrix-free constant-coefficient stencil operators (tessera's ``sla/stencil.h``),
re-exported by :mod:`tessera.sla`.

A :class:`StencilMatrix` holds each diagonal's value and one byte per row saying which
diagonals the row stores: 1 byte per row where CSR needs 12 per stored entry, so a 2D
Poisson AMG-CG solve needs about 133 bytes per unknown in all (151M unknowns fit in 24 GiB).
Its solves are forward only (no autograd): the same iterates, bit for bit, as solving the CSR
matrix it stands for with the native Krylov backend.

Example::

    import torch, tessera
    A = tessera.sla.poisson2d_stencil(1024)                  # 1M rows, 1 MB
    x = A.solve(torch.ones(A.rows, dtype=torch.float64), method="cg", preconditioner="amg", rtol=1e-8)
"""

from __future__ import annotations

from typing import List, Optional

import torch

from .sla import SparseTensor, _sla, _solve_options, _wrap


class StencilMatrix:
    """A square matrix whose every diagonal (offset = col - row) holds one value, stored as
    those values and a per-row mask. Build it with :func:`poisson2d_stencil` or
    :func:`stencil_of`."""

    __slots__ = ("_impl",)

    @property
    def rows(self) -> int:
        return self._impl.rows()

    @property
    def shape(self):
        return (self._impl.rows(), self._impl.rows())

    @property
    def offsets(self) -> List[int]:
        """The diagonals' offsets (col - row), ascending."""
        return list(self._impl.offsets)

    @property
    def coeffs(self) -> List[float]:
        """The value on each diagonal."""
        return list(self._impl.coeffs)

    @property
    def mask(self) -> torch.Tensor:
        """uint8 ``[rows]``: bit d set when the row stores diagonal d."""
        return self._impl.mask

    def nnz(self) -> int:
        return self._impl.nnz()

    def to_sparse(self) -> SparseTensor:
        """The CSR matrix it stands for."""
        return _wrap(self._impl.to_sparse())

    def solve(self, b: torch.Tensor, method: str = "auto", preconditioner: Optional[str] = "amg",
              rtol: float = 1e-10, atol: float = 0.0, maxiter: int = 0, gmres_restart: int = 50,
              return_info: bool = False):
        """Solves ``A x = b`` (``b``: float64 ``[rows]``, not requiring grad) with the native
        Krylov methods (``method`` ``"auto"``: CG for a symmetric stencil, else GMRES;
        ``"cg"``, ``"bicgstab"``, ``"gmres"``, ``"minres"``) and ``preconditioner``
        ``"amg"``, ``"jacobi"`` or ``"none"`` (None). Returns ``x``, or ``(x, info)``."""
        x, info = _sla.solve(self._impl, b, _solve_options("native", method, preconditioner, rtol, atol, maxiter,
                                                           gmres_restart))
        return (x, info) if return_info else x

    def __repr__(self) -> str:
        return repr(self._impl)


def _wrap_stencil(impl) -> StencilMatrix:
    s = StencilMatrix.__new__(StencilMatrix)
    s._impl = impl
    return s


def poisson2d_stencil(n: int) -> StencilMatrix:
    """The 5-point Laplacian (Dirichlet) on an n x n grid as a stencil: no CSR at any size."""
    return _wrap_stencil(_sla.poisson2d_stencil(int(n)))


def poisson3d_stencil(n: int) -> StencilMatrix:
    """The 7-point Laplacian (Dirichlet) on an n x n x n grid as a stencil."""
    return _wrap_stencil(_sla.poisson3d_stencil(int(n)))


def stencil_of(A: SparseTensor) -> Optional[StencilMatrix]:
    """The stencil form of a float64 CPU matrix (batch element 0) whose every diagonal holds
    one value (at most 8 diagonals), or None."""
    s = _sla.stencil_of(A._impl)
    return None if s is None else _wrap_stencil(s)
