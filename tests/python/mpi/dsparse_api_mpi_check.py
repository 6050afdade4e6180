"""The rest of the sla API across ranks from Python (run by ctest at 2 ranks:
python_mpi_np2): DSparseTensor.eigsh, slogdet/logdet (MUMPS), dnonlinear_solve and
DSparseTensorBatch against one process, with gradients. Every test is collective.

    mpirun -np 2 /usr/bin/python3 -m pytest -q tests/python/mpi/dsparse_api_mpi_check.py
"""

import pytest
import torch

from mpi4py import MPI  # first: tessera uses the MPI it initialises

import tessera
from tessera import sla

D = torch.float64
COMM = MPI.COMM_WORLD


def allsum(t):
    return torch.tensor(COMM.allreduce(t.detach().numpy()), dtype=D)


def test_eigsh_matches_one_process_and_eigenvalue_gradients_agree():
    A = sla.poisson2d(12)
    values = A.values.clone().requires_grad_()
    dA = sla.DSparseTensor.from_global(A.with_values(values), "metis")
    lam, vec, info = dA.eigsh(k=3, which="smallest", return_info=True)
    assert info.status == "converged"
    ref_values = A.values.clone().requires_grad_()
    ref = sla.eigsh(A.with_values(ref_values), k=3, which="smallest", backend="native")[0]
    assert torch.allclose(lam.detach(), ref.detach(), atol=1e-10)
    # the loss counted once (rank 0); d sum(λ)/dA_ij = sum_k v_ik v_jk on the pattern
    (lam.sum() if COMM.Get_rank() == 0 else 0.0 * lam.sum()).backward()
    ref.sum().backward()
    assert torch.allclose(allsum(values.grad), ref_values.grad, atol=1e-9)


def test_slogdet_and_gradient_match_one_process():
    A = sla.poisson2d(10)
    values = A.values.clone().requires_grad_()
    dA = sla.DSparseTensor.from_global(A.with_values(values))
    try:
        sign, ld = dA.slogdet()
    except tessera.NotCompiled:
        pytest.skip("MUMPS is not compiled in")
    ref_values = A.values.clone().requires_grad_()
    ref_sign, ref_ld = sla.slogdet(A.with_values(ref_values))
    assert float(sign) == float(ref_sign)
    assert abs(float(ld) - float(ref_ld)) < 1e-10 * abs(float(ref_ld))
    (ld if COMM.Get_rank() == 0 else 0.0 * ld).backward()
    ref_ld.backward()
    assert torch.allclose(allsum(values.grad), ref_values.grad, atol=1e-12)
    assert abs(float(dA.logdet()) - float(ref_ld)) < 1e-10 * abs(float(ref_ld))


def test_dnonlinear_solve_matches_one_process_and_differentiates():
    A = sla.poisson2d(8)
    dA = sla.DSparseTensor.from_global(A)
    b = dA.scatter(torch.ones(64, dtype=D))
    theta = torch.tensor(3.0, dtype=D, requires_grad=True)

    def residual(u, t):
        return dA @ u + t * u ** 3 - b

    u, info = sla.dnonlinear_solve(residual, torch.zeros(dA.owned_rows, dtype=D), theta, jacobian_pattern=dA,
                                   rtol=1e-13, atol=1e-13, linear={"rtol": 1e-13}, return_info=True)
    assert info.status == "converged", info
    ref = sla.nonlinear_solve(lambda v, t: A @ v + t * v ** 3 - torch.ones(64, dtype=D), torch.zeros(64, dtype=D),
                              theta.detach(), jacobian_pattern=A, rtol=1e-13, atol=1e-13)
    assert torch.allclose(dA.gather(u.detach()), ref, atol=1e-10)
    u.sum().backward()
    grad = float(allsum(theta.grad))

    def loss(t):
        v = sla.dnonlinear_solve(residual, torch.zeros(dA.owned_rows, dtype=D), torch.tensor(t, dtype=D),
                                 jacobian_pattern=dA, rtol=1e-13, atol=1e-13, linear={"rtol": 1e-13})
        return COMM.allreduce(float(v.sum()))

    h = 1e-6
    fd = (loss(3.0 + h) - loss(3.0 - h)) / (2 * h)
    assert abs(grad - fd) < 1e-6 * max(1.0, abs(fd))


def test_batch_solve_matches_one_process():
    A = sla.poisson2d(6)
    values = torch.stack([A.values, 2.0 * A.values])
    batch = sla.DSparseTensorBatch.from_global(A.with_values(values))
    assert batch.batch_size == 2
    b = torch.ones(2, batch.item(0).owned_rows, dtype=D)
    x = batch.solve(b, rtol=1e-13)
    ref = A.solve(torch.ones(36, dtype=D))
    assert torch.allclose(batch.item(0).gather(x[0]), ref, atol=1e-10)
    assert torch.allclose(batch.item(1).gather(x[1]), ref / 2.0, atol=1e-10)
    lam, _ = batch.eigsh(k=2, which="largest")
    assert torch.allclose(lam[1], 2.0 * lam[0], atol=1e-10)
