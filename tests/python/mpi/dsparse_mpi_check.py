"""DSparseTensor under mpirun (run by ctest at 2 ranks: python_mpi_np2). Every test is
collective: each rank runs the same tests in the same order. Gradients: the all-reduced
gradients of a loss summed over ranks, against the one-process gradient and central
finite differences in float64 (gradcheck itself compares one process's Jacobian, which a
distributed backward spreads over the ranks).

    mpirun -np 2 /usr/bin/python3 -m pytest -q tests/python/mpi/dsparse_mpi_check.py
"""

import os

import pytest
import torch

from mpi4py import MPI  # first: tessera uses the MPI it initialises

from tessera import sla

D = torch.float64
COMM = MPI.COMM_WORLD


def test_ranks_agree_with_mpi4py():
    A = sla.DSparseTensor.from_global(sla.poisson2d(4))
    assert A.world_size == COMM.Get_size() and A.rank == COMM.Get_rank()
    expected = int(os.environ.get("TESSERA_EXPECT_RANKS", COMM.Get_size()))
    assert A.world_size == expected
    counts = COMM.allgather(A.owned_rows)
    assert sum(counts) == 16


def test_matvec_and_solve_match_one_process():
    A = sla.poisson2d(6)
    dA = sla.DSparseTensor.from_global(A)
    x = torch.randn(36, dtype=D, generator=torch.Generator().manual_seed(1))
    assert torch.allclose(dA.gather(dA @ dA.scatter(x)), A @ x)
    assert torch.allclose(dA.gather(dA.rmatvec(dA.scatter(x))), A.T @ x)
    b = torch.ones(36, dtype=D)
    for method, pre in (("cg", "jacobi"), ("bicgstab", "none"), ("gmres", "block-jacobi")):
        xo, info = dA.solve(dA.scatter(b), method=method, preconditioner=pre, rtol=1e-12, return_info=True)
        assert info.status == "converged", (method, info)
        assert torch.allclose(dA.gather(xo), A.solve(b), atol=1e-9), method
    # the same info on every rank
    assert len(set(COMM.allgather(info.iterations))) == 1


def test_boomeramg_solve_matches_one_process_and_differentiates():
    import tessera

    A = sla.poisson2d(40)
    dA = sla.DSparseTensor.from_global(A, "metis")
    b = torch.cos(torch.arange(1600, dtype=D) * 0.3).requires_grad_()
    try:
        xo, info = dA.solve(dA.scatter(b), method="cg", preconditioner="boomeramg", rtol=1e-12, return_info=True)
    except tessera.NotCompiled:
        pytest.skip("hypre is not compiled in")
    assert info.status == "converged" and info.iterations <= 30, info
    ref = A.solve(b.detach())
    assert torch.allclose(dA.gather(xo.detach()), ref, atol=1e-9)
    # d<1, x>/db = A^{-T} 1, through the adjoint solve with the same BoomerAMG set-up
    xo.sum().backward()
    assert torch.allclose(allreduce(b.grad), A.solve(torch.ones(1600, dtype=D)), atol=1e-9)


def test_mumps_solve_matches_one_process_and_differentiates():
    import tessera

    A = sla.poisson2d(40)
    dA = sla.DSparseTensor.from_global(A, "metis")
    b = torch.cos(torch.arange(1600, dtype=D) * 0.3).requires_grad_()
    try:
        xo, info = dA.solve(dA.scatter(b), backend="mumps", return_info=True)
    except tessera.NotCompiled:
        pytest.skip("MUMPS is not compiled in")
    assert info.status == "converged" and info.backend == "mumps" and info.residual <= 1e-10, info
    assert torch.allclose(dA.gather(xo.detach()), A.solve(b.detach()), atol=1e-12)
    # d<1, x>/db = A^{-T} 1, through the adjoint solve from the same LU factors
    xo.sum().backward()
    assert torch.allclose(allreduce(b.grad), A.solve(torch.ones(1600, dtype=D)), atol=1e-12)


def test_scatter_from_root_and_from_local_rows():
    A = sla.poisson2d(5)
    root = sla.DSparseTensor.scatter_from_root(A if COMM.Get_rank() == 0 else None, 25)
    x = torch.arange(25, dtype=D)
    assert torch.allclose(root.gather(root @ root.scatter(x)), A @ x)
    ids = root.owned_row_ids()
    dense = A.to_dense()[ids]
    local = sla.SparseTensor.from_dense(dense)
    dl = sla.DSparseTensor.from_local_rows(local)
    assert torch.allclose(dl.gather(dl @ dl.scatter(x)), A @ x)


def allreduce(t):
    """Sum over the ranks (a float64 tensor)."""
    return torch.from_numpy(COMM.allreduce(t.detach().numpy().copy(), op=MPI.SUM))


@pytest.mark.parametrize("method", ["cg", "bicgstab"])
def test_solve_gradient_against_finite_differences(method):
    """The loss is the sum over ranks of <w, x_owned>; every rank holds the global values
    and b, and receives the part of their gradient its rows produce: the all-reduced
    gradients are the gradient of the loss, checked in random directions by central
    differences (float64)."""
    A = sla.poisson2d(4)
    r, c = A.row, A.col
    keep = r >= c  # the lower triangle is the variable: A stays symmetric (CG)
    g = torch.Generator().manual_seed(2)
    low = (A.values[keep] + 0.05 * torch.rand(int(keep.sum()), dtype=D, generator=g)).requires_grad_()
    b = torch.randn(16, dtype=D, generator=g).requires_grad_()
    w = torch.randn(16, dtype=D, generator=g)

    def local_loss(low, b):
        dA = sla.DSparseTensor.from_global(sla.SparseTensor.from_symmetric_coo(low, r[keep], c[keep], 16))
        x = dA.solve(dA.scatter(b), method=method, rtol=1e-13)
        return (dA.scatter(w) * x).sum(), dA, x

    loss, dA, x = local_loss(low, b)
    ref = sla.SparseTensor.from_symmetric_coo(low.detach(), r[keep], c[keep], 16).solve(b.detach())
    assert torch.allclose(dA.gather(x.detach()), ref, atol=1e-10)
    loss.backward()  # every rank
    grad_low, grad_b = allreduce(low.grad), allreduce(b.grad)
    # the one-process gradient of the same loss
    low1, b1 = low.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
    (w * sla.SparseTensor.from_symmetric_coo(low1, r[keep], c[keep], 16).solve(b1)).sum().backward()
    assert torch.allclose(grad_low, low1.grad, atol=1e-9) and torch.allclose(grad_b, b1.grad, atol=1e-9)
    h = 1e-6
    with torch.no_grad():
        for _ in range(3):
            dl = torch.randn(low.shape, dtype=D, generator=g)
            db = torch.randn(16, dtype=D, generator=g)
            plus = COMM.allreduce(float(local_loss(low + h * dl, b + h * db)[0]), op=MPI.SUM)
            minus = COMM.allreduce(float(local_loss(low - h * dl, b - h * db)[0]), op=MPI.SUM)
            fd = (plus - minus) / (2 * h)
            ad = float((grad_low * dl).sum() + (grad_b * db).sum())
            assert abs(fd - ad) <= 1e-6 * max(1.0, abs(fd)), (fd, ad)
