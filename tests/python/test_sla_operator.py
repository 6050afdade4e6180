"""tessera.sla.solve_operator: a matrix-free operator given as a Python function equals the
dense solve; torch.autograd.gradcheck in b and in the operator's parameters (symmetric with
CG, non-symmetric with GMRES and BiCGStab, the transpose given or taken by autograd); the
preconditioner hook is called and cuts CG's iterations; bad input raises."""

import pytest
import torch
from torch.autograd import gradcheck

import tessera
from tessera import sla

D = torch.float64
N = 12


def diffusion(x, kappa):
    """1D -(kappa u')' on N cells, u = 0 outside; kappa on the N + 1 faces."""
    u = torch.nn.functional.pad(x, (1, 1))
    flux = kappa * (u[1:] - u[:-1])
    return flux[:-1] - flux[1:]


def convection(x, kappa, v):
    """diffusion plus upwind convection v (x_i - x_{i-1}): not symmetric."""
    return diffusion(x, kappa) + v * (x - torch.nn.functional.pad(x[:-1], (1, 0)))


def convection_t(x, kappa, v):
    return diffusion(x, kappa) + v * (x - torch.nn.functional.pad(x[1:], (0, 1)))


def dense(op, *params):
    return torch.stack([op(e, *params) for e in torch.eye(N, dtype=D)], 1)


def kappa0():
    return 10.0 ** torch.sin(torch.arange(N + 1, dtype=D) * 0.7)


def rhs():
    return 1.0 + torch.sin(torch.arange(N, dtype=D) * 0.37)


def test_symmetric_solve_equals_dense_and_reports_cg():
    k, b = kappa0(), rhs()
    x, info = sla.solve_operator(diffusion, b, k, symmetric=True, rtol=1e-13, return_info=True)
    assert info.status == "converged" and info.method == "cg"
    assert torch.allclose(x, torch.linalg.solve(dense(diffusion, k), b), rtol=1e-10, atol=0)


@pytest.mark.parametrize("method", ["gmres", "bicgstab"])
@pytest.mark.parametrize("given_transpose", [True, False])
def test_nonsymmetric_gradcheck(method, given_transpose):
    op_t = convection_t if given_transpose else None

    def f(b, k, v):
        return sla.solve_operator(convection, b, k, v, op_t=op_t, method=method, rtol=1e-13)

    b = rhs().requires_grad_()
    k = kappa0().requires_grad_()
    v = torch.tensor(3.0, dtype=D, requires_grad=True)
    x = f(b, k, v)
    assert torch.allclose(x, torch.linalg.solve(dense(convection, k, v), b), rtol=1e-10, atol=0)
    assert gradcheck(f, (b, k, v))


def test_symmetric_gradcheck_with_a_preconditioner_and_several_columns():
    def jacobi(r):
        return r / (kappa0()[:-1] + kappa0()[1:])

    def f(b, k):
        return sla.solve_operator(diffusion, b, k, symmetric=True, preconditioner=jacobi, rtol=1e-13)

    assert gradcheck(f, (rhs().requires_grad_(), kappa0().requires_grad_()))
    assert gradcheck(f, (torch.stack([rhs(), torch.ones(N, dtype=D)], 1).requires_grad_(), kappa0().requires_grad_()))


def test_preconditioner_hook_is_called_and_cuts_iterations():
    k = 10.0 ** (2 * torch.sin(torch.arange(N + 1, dtype=D) * 1.3))
    diag = k[:-1] + k[1:]
    calls = []

    def jacobi(r):
        calls.append(1)
        return r / diag

    _, plain = sla.solve_operator(diffusion, rhs(), k, symmetric=True, maxiter=1000, return_info=True)
    _, pre = sla.solve_operator(diffusion, rhs(), k, symmetric=True, maxiter=1000, preconditioner=jacobi,
                                return_info=True)
    assert plain.status == "converged" and pre.status == "converged"
    assert pre.iterations < plain.iterations, (pre.iterations, plain.iterations)
    assert len(calls) >= pre.iterations


def test_transposed_preconditioner_runs_in_the_adjoint_solve():
    calls = {"forward": 0, "adjoint": 0}

    def m(r):
        calls["forward"] += 1
        return r / 2.0

    def m_t(r):
        calls["adjoint"] += 1
        return r / 2.0

    b = rhs().requires_grad_()
    x = sla.solve_operator(convection, b, kappa0(), torch.tensor(3.0, dtype=D), preconditioner=m,
                           preconditioner_t=m_t)
    assert calls["forward"] > 0 and calls["adjoint"] == 0
    x.sum().backward()
    assert calls["adjoint"] > 0


def test_not_converged_is_reported():
    _, info = sla.solve_operator(diffusion, rhs(), kappa0(), symmetric=True, maxiter=2, return_info=True)
    assert info.status == "not_converged" and info.iterations == 2


def test_bad_input_raises():
    k, b = kappa0(), rhs()
    with pytest.raises(tessera.DimensionMismatch):
        sla.solve_operator(diffusion, torch.ones(N, 2, 2, dtype=D), k)
    with pytest.raises(tessera.DimensionMismatch):
        sla.solve_operator(lambda x, k: x[:3], b, k)
    with pytest.raises(tessera.InvalidInput):
        sla.solve_operator(lambda x, k: "no tensor", b, k)
    with pytest.raises(tessera.Unsupported):
        sla.solve_operator(diffusion, b, k, method="lu")
    with pytest.raises(tessera.InvalidInput):
        sla.solve_operator(diffusion, b.float(), k)   # the operator returns float64
    with pytest.raises(TypeError):
        sla.solve_operator(diffusion, b, 1.0)
    with pytest.raises(ValueError):                   # an exception inside op reaches the caller
        sla.solve_operator(lambda x, k: (_ for _ in ()).throw(ValueError("inside op")), b, k)
