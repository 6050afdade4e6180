"""tessera.sla.SparseTensorList: a list of sparse matrices of different sizes and patterns
(re-exported by :mod:`tessera.sla`)."""

from __future__ import annotations

from typing import List, Optional, Sequence

import torch

from .sla import SparseTensor, _det_options, _eigsh_options, _sla, _solve_options, _wrap


class SparseTensorList:
    """A list of sparse matrices with different sizes and patterns (one mesh per sample).
    Operations map over the list, each differentiable as for one matrix; the list
    converts to and from one block-diagonal :class:`SparseTensor`."""

    __slots__ = ("_impl",)

    def __init__(self, items: Sequence[SparseTensor]):
        self._impl = _sla.SparseTensorList([a._impl for a in items])

    def __len__(self) -> int:
        return len(self._impl)

    def __getitem__(self, i: int) -> SparseTensor:
        n = len(self._impl)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"SparseTensorList index {i} out of range for {n} matrices")
        return _wrap(self._impl[i])

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        return f"SparseTensorList({len(self)} matrices)"

    def matvec(self, xs: Sequence[torch.Tensor]) -> List[torch.Tensor]:
        """``[A_i @ x_i]``."""
        return self._impl.matvec(list(xs))

    def __matmul__(self, xs):
        return self.matvec(xs)

    def solve(self, bs: Sequence[torch.Tensor], return_info: bool = False, **kwargs):
        """``[A_i^{-1} b_i]``, each with its own dispatch (arguments of
        :meth:`SparseTensor.solve`)."""
        xs, infos = self._impl.solve(list(bs), _solve_options(**kwargs))
        return (xs, infos) if return_info else xs

    def eigsh(self, k: int = 6, which: Optional[str] = None, sigma: Optional[float] = None, backend: str = "auto",
              tol: float = 1e-10, ncv: int = 0, block_size: int = 0, maxiter: int = 1000, seed: int = 12345):
        """``[(eigenvalues_i, eigenvectors_i)]``; see :func:`eigsh`."""
        rs = self._impl.eigsh(_eigsh_options(k, which, sigma, backend, tol, ncv, block_size, maxiter, seed))
        return [(v, w) for v, w, _ in rs]

    def logdet(self, backend: str = "auto", return_info: bool = False):
        """``log det A_i`` stacked ``[len(self)]``; differentiable."""
        ld, infos = self._impl.logdet(_det_options(backend))
        return (ld, infos) if return_info else ld

    def to_block_diagonal(self) -> SparseTensor:
        """One block-diagonal matrix; its values are the concatenation of the blocks'."""
        return _wrap(self._impl.to_block_diagonal())

    @classmethod
    def from_block_diagonal(cls, A: SparseTensor, sizes: Sequence[int]) -> "SparseTensorList":
        """Splits a block-diagonal matrix into square blocks of the given sizes."""
        out = cls.__new__(cls)
        out._impl = _sla.SparseTensorList.from_block_diagonal(A._impl, [int(s) for s in sizes])
        return out


SparseTensorList.__module__ = "tessera.sla"
