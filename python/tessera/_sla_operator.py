"""Solves with a user linear operator: ``A`` is a Python function, never a stored matrix.

Part of :mod:`tessera.sla` (imported there); see :func:`solve_operator`.
"""

from __future__ import annotations

from typing import Callable, Optional

import torch

from ._C import sla as _sla

__all__ = ["solve_operator", "dsolve_operator"]

Operator = Callable[..., torch.Tensor]
Hook = Callable[[torch.Tensor], torch.Tensor]


def _params(name: str, params) -> list:
    for i, p in enumerate(params):
        if not isinstance(p, torch.Tensor):
            raise TypeError(f"{name}: parameter {i} must be a torch.Tensor, got {type(p).__name__}")
    return list(params)


def _call(fn: Optional[Operator]):
    if fn is None:
        return None
    return lambda x, ps: fn(x, *ps)


def solve_operator(op: Operator, b: torch.Tensor, *params: torch.Tensor, op_t: Optional[Operator] = None,
                   symmetric: bool = False, preconditioner: Optional[Hook] = None,
                   preconditioner_t: Optional[Hook] = None, method: str = "auto", rtol: float = 1e-10,
                   atol: float = 0.0, maxiter: int = 0, gmres_restart: int = 50, return_info: bool = False):
    """Solves ``A(params) x = b`` where ``A`` is given by ``op(x, *params)``.

    Args:
        op: ``op(x, *params) -> A x`` for a vector ``x`` ``[n]``; linear in ``x``, built from
            torch operations so that autograd can differentiate it in ``params``.
        b: ``[n]`` or ``[n, k]`` (columns solved one by one), float32 or float64.
        params: tensors ``op`` depends on; gradients flow to those that require grad.
        op_t: ``op_t(x, *params) -> A^T x`` (optional). Without it the adjoint solve applies
            ``op`` itself when ``symmetric``, else ``A^T v`` by autograd through ``op``.
        symmetric: ``A == A^T`` (the flag only spares the transpose; CG and MINRES need a
            symmetric A either way).
        preconditioner: ``r -> M^{-1} r``, used in every Krylov iteration of the forward and
            (unless ``preconditioner_t`` is given) of the adjoint solve.
        preconditioner_t: ``r -> M^{-T} r`` for the adjoint solve.
        method: ``"auto"`` (``"cg"`` when ``symmetric``, else ``"gmres"``), ``"cg"``,
            ``"bicgstab"``, ``"gmres"`` or ``"minres"``.
        rtol, atol: stop when ``||r|| <= max(rtol ||b||, atol)``; maxiter: 0 means ``10 n``.

    Returns:
        ``x`` shaped like ``b`` (and a :class:`SolveInfo` with ``return_info=True``). A solve
        that does not converge is reported in the info, not raised.

    Gradients (one autograd node): one adjoint solve ``A^T λ = dL/dx`` with the same method,
    then ``dL/db = λ`` and ``dL/dθ = -∂/∂θ <λ, A(θ) x>``, a vector-Jacobian product through
    ``op`` with ``x`` and ``λ`` held fixed. ``torch.autograd.gradcheck`` passes in float64.

    Example::

        def op(x, kappa):               # 1D -(kappa u')' on n cells, u = 0 outside
            u = torch.nn.functional.pad(x, (1, 1))
            flux = kappa * (u[1:] - u[:-1])     # kappa on the n + 1 faces
            return flux[:-1] - flux[1:]
        kappa = torch.ones(n + 1, dtype=torch.float64, requires_grad=True)
        x = tessera.sla.solve_operator(op, b, kappa, symmetric=True)   # CG
        x.sum().backward()                      # kappa.grad (and b.grad if b requires grad)
    """
    ps = _params("solve_operator", params)
    x, info = _sla.solve_operator(_call(op), _call(op_t), bool(symmetric), b, ps, str(method).lower(), float(rtol),
                                  float(atol), int(maxiter), int(gmres_restart), preconditioner, preconditioner_t)
    return (x, info) if return_info else x


def dsolve_operator(op: Operator, b_owned: torch.Tensor, *params: torch.Tensor, op_t: Optional[Operator] = None,
                    symmetric: bool = False, preconditioner: Optional[Hook] = None,
                    preconditioner_t: Optional[Hook] = None, method: str = "auto", rtol: float = 1e-10,
                    atol: float = 0.0, maxiter: int = 0, gmres_restart: int = 50, return_info: bool = False):
    """:func:`solve_operator` across the ranks of an ``mpirun`` job (collective).

    Each rank owns rows of the vectors: ``b_owned``, ``x`` and the vectors handed to ``op``,
    ``op_t`` and the preconditioners are this rank's rows. ``op`` maps this rank's rows of
    ``x`` to its rows of ``A x``; every rank calls it at the same time, so it may
    communicate (e.g. :meth:`DSparseTensor.matvec`, or mpi4py). Inner products are summed
    over the ranks, so iterations and the info are the same on every rank. Without ``op_t``
    and ``symmetric`` the transpose is autograd through ``op``, whose communication must then
    be differentiable (as :meth:`DSparseTensor.matvec` is). Every rank calls backward;
    ``b_owned.grad`` is this rank's rows, and for a parameter held alike on every rank each
    rank's ``grad`` is its rows' part (sum over the ranks for the whole).
    """
    ps = _params("dsolve_operator", params)
    x, info = _sla.dsolve_operator(_call(op), _call(op_t), bool(symmetric), b_owned, ps, str(method).lower(),
                                   float(rtol), float(atol), int(maxiter), int(gmres_restart), preconditioner,
                                   preconditioner_t)
    return (x, info) if return_info else x
