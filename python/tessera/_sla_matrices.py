"""tessera.sla's matrix constructors: MatrixMarket files and the generated test matrices
(re-exported by :mod:`tessera.sla`)."""

from __future__ import annotations

import os
from typing import Union

import torch

from .sla import SparseTensor, _sla, _wrap


def read_mtx(path: Union[str, os.PathLike], dtype: torch.dtype = torch.float64) -> SparseTensor:
    """A MatrixMarket ``coordinate`` file (symmetric storage mirrored). A malformed file
    raises :class:`tessera.ParseError` naming the file and line."""
    return _wrap(_sla.read_mtx(os.fspath(path), dtype))


def read_dense_mtx(path: Union[str, os.PathLike]) -> torch.Tensor:
    """A MatrixMarket ``array`` file as a float64 ``[rows]`` or ``[rows, cols]`` tensor."""
    return _sla.read_dense_mtx(os.fspath(path))


def write_mtx(path: Union[str, os.PathLike], A: SparseTensor, symmetric: bool = False) -> None:
    """Writes an unbatched matrix as ``coordinate real general`` (or ``symmetric``)."""
    _sla.write_mtx(os.fspath(path), A._impl, bool(symmetric))


def poisson2d(n: int, dtype: torch.dtype = torch.float64) -> SparseTensor:
    """The 5-point Laplacian (Dirichlet) on an n x n grid: n^2 x n^2, SPD."""
    return _wrap(_sla.poisson2d(int(n), dtype))


def poisson3d(n: int, dtype: torch.dtype = torch.float64) -> SparseTensor:
    """The 7-point Laplacian (Dirichlet) on an n x n x n grid: n^3 x n^3, SPD."""
    return _wrap(_sla.poisson3d(int(n), dtype))


def shifted_laplacian2d(n: int, shift: float, dtype: torch.dtype = torch.float64) -> SparseTensor:
    """``poisson2d(n) - shift I`` (indefinite once shift exceeds the smallest eigenvalue)."""
    return _wrap(_sla.shifted_laplacian2d(int(n), float(shift), dtype))


def convection_diffusion2d(n: int, wx: float, wy: float, dtype: torch.dtype = torch.float64) -> SparseTensor:
    """``h^2 (-Δu + w·∇u)`` on the unit square, central differences (non-symmetric)."""
    return _wrap(_sla.convection_diffusion2d(int(n), float(wx), float(wy), dtype))


def variable_diffusion2d(n: int, sigma: float = 1.0, seed: int = 0, dtype: torch.dtype = torch.float64) -> SparseTensor:
    """``h^2 (-∇·(κ ∇u))`` on an n x n grid (5-point finite volumes, harmonic face means,
    Dirichlet), κ log-normal: ``exp(sigma z_i)`` with ``z_i`` a function of (seed, cell i).
    SPD; ``sigma=0`` gives exactly :func:`poisson2d`. Built straight into CSR (any size)."""
    return _wrap(_sla.variable_diffusion(2, int(n), float(sigma), int(seed), dtype))


def variable_diffusion3d(n: int, sigma: float = 1.0, seed: int = 0, dtype: torch.dtype = torch.float64) -> SparseTensor:
    """The 7-point, n x n x n version of :func:`variable_diffusion2d`."""
    return _wrap(_sla.variable_diffusion(3, int(n), float(sigma), int(seed), dtype))


def fe_laplacian2d(n: int, jitter: float = 0.3, random_diagonals: bool = True, seed: int = 0,
                   dtype: torch.dtype = torch.float64) -> SparseTensor:
    """The P1 finite-element Laplacian with n x n interior nodes on a perturbed triangle mesh
    of the unit square (each square cut along a random diagonal, interior nodes moved by up
    to ``± jitter h / 2``; Dirichlet boundary eliminated). SPD, 5 to 9 entries per row."""
    return _wrap(_sla.fe_laplacian2d(int(n), float(jitter), bool(random_diagonals), int(seed), dtype))


def diffusion2d(kappa: torch.Tensor) -> SparseTensor:
    """The finite-volume operator of ``-∇·(κ ∇u)`` for cell conductivities ``kappa``
    ``[..., n, n]`` (Dirichlet boundary); its values are differentiable in kappa."""
    return _wrap(_sla.diffusion2d(kappa))
