"""sla.dsolve_operator across ranks from Python (run by ctest at 2 ranks: python_mpi_np2):
an operator that is DSparseTensor.matvec (halo exchange inside the user's function) gives
one process's solve_operator solution and gradients in b and in the matrix values, with CG
and a Jacobi hook (symmetric) and with GMRES whose transpose is autograd through matvec;
an operator that gathers x with mpi4py gives one process's solution and gradient in κ, also
when all rows are on rank 0.
Every test is collective.

    mpirun -np 2 /usr/bin/python3 -m pytest -q tests/python/mpi/operator_mpi_check.py
"""

import pytest
import torch

from mpi4py import MPI  # first: tessera uses the MPI it initialises

from tessera import sla

D = torch.float64
COMM = MPI.COMM_WORLD


def allsum(t):
    return torch.tensor(COMM.allreduce(t.detach().numpy()), dtype=D)


def skewed_poisson(n):
    """2D Poisson with upper couplings x1.2 and lower x0.8: a non-symmetric M-matrix."""
    A = sla.poisson2d(n)
    row, col = A.row, A.col
    return A.with_values(torch.where(col > row, A.values * 1.2, torch.where(col < row, A.values * 0.8, A.values)))


@pytest.mark.parametrize("symmetric", [True, False])
def test_matvec_operator_matches_one_process_with_gradients(symmetric):
    A = sla.poisson2d(8) if symmetric else skewed_poisson(8)
    n = A.shape[0]
    dA = sla.DSparseTensor.from_global(A)
    method = "cg" if symmetric else "gmres"
    w = torch.cos(torch.arange(n, dtype=D))

    def op(x, values):   # collective: the halo exchange happens inside
        return dA.with_values(values).matvec(x)

    inv_diag = torch.full((dA.owned_rows,), 0.25, dtype=D)   # Jacobi: poisson2d's diagonal is 4
    values = dA.values.detach().clone().requires_grad_()
    b = dA.scatter(torch.ones(n, dtype=D)).requires_grad_()
    x, info = sla.dsolve_operator(op, b, values, symmetric=symmetric, method=method, rtol=1e-13,
                                  preconditioner=lambda r: r * inv_diag, return_info=True)
    assert info.status == "converged", info
    (dA.scatter(w) * x).sum().backward()
    # one process: the same operator on the whole vector
    ref_values = A.values.clone().requires_grad_()
    ref_b = torch.ones(n, dtype=D, requires_grad=True)
    ref = sla.solve_operator(lambda v, vals: A.with_values(vals) @ v, ref_b, ref_values, symmetric=symmetric,
                             method=method, rtol=1e-13, preconditioner=lambda r: r / 4.0)
    (w * ref).sum().backward()
    assert torch.allclose(dA.gather(x.detach()), ref.detach(), rtol=0, atol=1e-10 * float(ref.abs().max()))
    assert torch.allclose(dA.gather(b.grad), ref_b.grad, rtol=0, atol=1e-9 * float(ref_b.grad.abs().max()))
    # contiguous rows: the ranks' values, in rank order, are A's values
    grads = torch.cat([torch.as_tensor(g) for g in COMM.allgather(values.grad.numpy())])
    assert torch.allclose(grads, ref_values.grad, rtol=0, atol=1e-9 * float(ref_values.grad.abs().max()))


@pytest.mark.parametrize("split", ["balanced", "rank0"])   # rank0: the other ranks own no rows
def test_operator_communicating_through_mpi4py_matches_one_process(split):
    n = 40
    counts = [n // COMM.Get_size() + (1 if r < n % COMM.Get_size() else 0) for r in range(COMM.Get_size())]
    if split == "rank0":
        counts = [n] + [0] * (COMM.Get_size() - 1)
    offset, rows = sum(counts[:COMM.Get_rank()]), counts[COMM.Get_rank()]

    def diffusion(x, kappa):   # 1D -(kappa u')' on n cells, kappa on the n + 1 faces
        u = torch.nn.functional.pad(x, (1, 1))
        flux = kappa * (u[1:] - u[:-1])
        return flux[:-1] - flux[1:]

    def op(x, kappa):   # gathers x with mpi4py (not differentiable in x: symmetric, so not needed)
        full = torch.cat([torch.as_tensor(p) for p in COMM.allgather(x.detach().numpy())])
        return diffusion(full, kappa)[offset:offset + rows]

    kappa = (1.0 + 0.5 * torch.sin(torch.arange(n + 1, dtype=D))).requires_grad_()
    b_full = torch.cos(torch.arange(n, dtype=D))
    x = sla.dsolve_operator(op, b_full[offset:offset + rows].clone(), kappa, symmetric=True, rtol=1e-13)
    x.square().sum().backward()
    ref_kappa = kappa.detach().clone().requires_grad_()
    ref = sla.solve_operator(diffusion, b_full, ref_kappa, symmetric=True, rtol=1e-13)
    ref.square().sum().backward()
    gathered = torch.cat([torch.as_tensor(p) for p in COMM.allgather(x.detach().numpy())])
    assert torch.allclose(gathered, ref.detach(), rtol=0, atol=1e-10 * float(ref.abs().max()))
    assert torch.allclose(allsum(kappa.grad), ref_kappa.grad, rtol=0, atol=1e-9 * float(ref_kappa.grad.abs().max()))
