"""tessera.sla from Python: values against dense float64 references, gradients by
torch.autograd.gradcheck (float64, finite differences), zero-copy crossings."""

import pytest
import torch
from torch.autograd import gradcheck

import tessera
from tessera import sla

torch.manual_seed(0)
D = torch.float64


def random_pattern(n, density=0.35, seed=1):
    """A random n x n pattern with the full diagonal (row, col int64)."""
    g = torch.Generator().manual_seed(seed)
    mask = torch.rand(n, n, generator=g) < density
    mask |= torch.eye(n, dtype=torch.bool)
    row, col = mask.nonzero(as_tuple=True)
    return row, col


def dominant_values(row, col, n, seed=2):
    """Values of a diagonally dominant (non-symmetric) matrix on the pattern."""
    g = torch.Generator().manual_seed(seed)
    v = torch.rand(row.numel(), generator=g, dtype=D) - 0.5
    v[row == col] = float(n)
    return v


def lower_triangle(A):
    """Stored entries of the lower triangle of a symmetric SparseTensor: row, col, values."""
    r, c, v = A.row, A.col, A.values
    keep = r >= c
    return r[keep], c[keep], v[keep].detach().clone()


# ---- construction and conversion

def test_coo_matches_dense_and_sums_duplicates():
    values = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=D)
    row = torch.tensor([0, 1, 1, 0])
    col = torch.tensor([0, 2, 2, 0])
    A = sla.SparseTensor(values, row, col, (2, 3))
    ref = torch.zeros(2, 3, dtype=D)
    ref[0, 0] = 5.0
    ref[1, 2] = 5.0
    assert A.shape == (2, 3) and A.nnz == 2
    assert torch.equal(A.to_dense(), ref)


def test_from_dense_batched_and_transpose():
    dense = torch.randn(3, 5, 4, dtype=D)
    dense[dense.abs() < 0.5] = 0
    A = sla.SparseTensor.from_dense(dense)
    assert A.batch_shape == (3,) and A.shape == (3, 5, 4)
    assert torch.equal(A.to_dense(), dense)
    assert torch.equal(A.T.to_dense(), dense.transpose(-1, -2))
    x = torch.randn(4, dtype=D)
    assert torch.allclose(A @ x, dense @ x)


def test_torch_sparse_round_trip_coo_and_csr():
    dense = torch.randn(6, 5, dtype=D)
    dense[dense.abs() < 0.7] = 0
    coo = dense.to_sparse()
    A = sla.SparseTensor.from_torch_sparse(coo)
    assert torch.equal(A.to_dense(), dense)
    assert torch.equal(A.to_torch_sparse().to_dense(), dense)
    csr = dense.to_sparse_csr()
    B = sla.SparseTensor.from_torch_sparse(csr)
    assert torch.equal(B.to_dense(), dense)
    assert torch.equal(B.to_torch_sparse(torch.sparse_csr).to_dense(), dense)
    # batched values: leading sparse dimensions of a COO tensor
    Ab = A.with_values(torch.stack([A.values, 2 * A.values]))
    assert torch.equal(Ab.to_torch_sparse().to_dense(), torch.stack([dense, 2 * dense]))
    with pytest.raises(ValueError):
        sla.SparseTensor.from_torch_sparse(dense)


def test_from_torch_sparse_coo_gradient_reaches_the_torch_values():
    i = torch.tensor([[0, 1, 2], [0, 1, 2]])
    v = torch.tensor([2.0, 3.0, 4.0], dtype=D, requires_grad=True)
    t = torch.sparse_coo_tensor(i, v, (3, 3))
    A = sla.SparseTensor.from_torch_sparse(t)
    (A @ torch.ones(3, dtype=D)).sum().backward()
    assert torch.equal(v.grad, torch.ones(3, dtype=D))


def test_zero_copy_crossings():
    A0 = sla.poisson2d(5)
    values = A0.values.clone()
    row_ptr = A0.row_ptr.clone()
    col_idx = A0.col_idx.clone()
    assert row_ptr.dtype == torch.int32
    A = sla.SparseTensor.from_csr(values, row_ptr, col_idx, A0.shape)
    assert A.values.data_ptr() == values.data_ptr()
    assert A.row_ptr.data_ptr() == row_ptr.data_ptr()
    assert A.col_idx.data_ptr() == col_idx.data_ptr()
    w = torch.rand_like(values)
    assert A.with_values(w).values.data_ptr() == w.data_ptr()
    # a tensor made in C++ comes back as the same storage every time
    assert A.values.data_ptr() == A.values.data_ptr()


# ---- products

def test_matvec_gradcheck():
    row, col = random_pattern(7)
    v = dominant_values(row, col, 7).requires_grad_()
    A = sla.SparseTensor(v, row, col, (7, 7))
    x = torch.randn(7, 2, dtype=D, requires_grad=True)
    assert torch.allclose(A @ x, A.to_dense() @ x)
    assert torch.allclose(A.T @ x, A.to_dense().T @ x)
    assert torch.allclose(A.rmatvec(x), A.to_dense().T @ x)
    assert gradcheck(lambda v, x: A.with_values(v) @ x, (A.values, x))
    assert gradcheck(lambda v, x: A.with_values(v).T @ x, (A.values, x))


# ---- solves

@pytest.mark.parametrize("backend,method", [("auto", "auto"), ("umfpack", "lu"), ("superlu", "lu"),
                                            ("eigen", "lu"), ("native", "gmres"), ("native", "bicgstab")])
def test_solve_general_gradcheck(backend, method):
    # non-symmetric: 2D convection-diffusion on a 3 x 3 grid (on a random 8 x 8 matrix the
    # adjoint BiCGStab of the backward pass broke down: a status and a warning, not a bug here)
    A = sla.convection_diffusion2d(3, 5.0, 3.0)
    n = A.shape[0]
    v = A.values.clone().requires_grad_()
    b = torch.randn(n, dtype=D, requires_grad=True)
    rtol = 1e-12  # Krylov: tight, but reachable (BiCGStab breaks down aiming at 1e-14)
    x, info = A.solve(b, backend=backend, method=method, rtol=rtol, return_info=True)
    assert info.status == "converged", info
    if backend != "auto":
        assert info.backend == backend and info.method == method
    assert torch.allclose(x, torch.linalg.solve(A.to_dense(), b), atol=1e-11)
    assert gradcheck(lambda v, b: A.with_values(v).solve(b, backend=backend, method=method, rtol=rtol), (v, b))


@pytest.mark.parametrize("backend,method,preconditioner", [("cholmod", "cholesky", None), ("eigen", "ldlt", None),
                                                            ("native", "cg", "jacobi"), ("native", "cg", "ic0"),
                                                            ("native", "minres", "none")])
def test_solve_symmetric_gradcheck(backend, method, preconditioner):
    # the stored lower triangle is the variable: every perturbation keeps A symmetric
    r, c, low = lower_triangle(sla.poisson2d(3))
    low = (low + 0.1 * torch.rand_like(low) * (r != c)).requires_grad_()
    b = torch.randn(9, 2, dtype=D, requires_grad=True)

    def f(low, b):
        A = sla.SparseTensor.from_symmetric_coo(low, r, c, 9)
        return A.solve(b, backend=backend, method=method, preconditioner=preconditioner, rtol=1e-14)

    A = sla.SparseTensor.from_symmetric_coo(low, r, c, 9)
    assert torch.allclose(f(low, b), torch.linalg.solve(A.to_dense(), b), atol=1e-11)
    assert gradcheck(f, (low, b))


def test_solve_batched_values():
    A = sla.poisson2d(4)
    vals = torch.stack([A.values, 2 * A.values, 3 * A.values])
    Ab = A.with_values(vals)
    b = torch.randn(16, dtype=D)
    x = Ab.solve(b)
    assert x.shape == (3, 16)
    assert torch.allclose(x, torch.linalg.solve(Ab.to_dense(), b.expand(3, 16).unsqueeze(-1)).squeeze(-1))


def test_solve_not_converged_is_a_status_not_an_exception():
    A = sla.poisson2d(30)
    b = torch.ones(900, dtype=D)
    x, info = A.solve(b, backend="native", method="cg", maxiter=3, return_info=True)
    assert info.status == "not_converged" and not info.converged
    assert info.iterations == 3
    assert torch.isfinite(x).all()


def test_solve_info_names_the_spmv_storage():
    b = torch.ones(400 * 400, dtype=D)
    general = sla.variable_diffusion2d(400, sigma=1.0, seed=3)  # 160,000 short rows, not a stencil
    _, info = general.solve(b, backend="native", method="cg", maxiter=2, return_info=True)
    assert info.spmv_format == "sell-sym-8"  # symmetric: the diagonal and upper triangle only
    _, info = sla.poisson2d(400).solve(b, backend="native", method="cg", maxiter=2, return_info=True)
    assert info.spmv_format == "stencil"
    _, info = general.solve(b, backend="native", method="cg", maxiter=2, stencil_spmv=False, return_info=True)
    assert info.spmv_format == "csr"


def test_solve_float32():
    A = sla.poisson2d(6, dtype=torch.float32)
    b = torch.ones(36, dtype=torch.float32)
    x = A.solve(b)
    assert x.dtype == torch.float32
    assert torch.allclose(A @ x, b, atol=1e-4)


# ---- eigenvalues and determinants

def test_eigsh_values_and_gradcheck():
    base = sla.poisson2d(4)
    r, c, low = lower_triangle(base)
    low = low + torch.where(r == c, 0.3 * r.to(D), torch.zeros_like(low))  # distinct eigenvalues
    low.requires_grad_()
    A = sla.SparseTensor.from_symmetric_coo(low, r, c, 16)
    ref = torch.linalg.eigvalsh(A.to_dense())
    vals, vecs = sla.eigsh(A, k=3, which="smallest")
    assert torch.allclose(vals, ref[:3], atol=1e-9)
    assert torch.allclose(A @ vecs, vecs * vals, atol=1e-8)
    vals, info = A.eigsh(k=2, which="largest", return_eigenvectors=False, return_info=True)
    assert info.converged and torch.allclose(vals, ref[-2:], atol=1e-9)
    near = sla.eigsh(A, k=1, sigma=float(ref[5]) + 1e-3, return_eigenvectors=False)
    assert torch.allclose(near, ref[5:6], atol=1e-9)
    assert gradcheck(lambda w: sla.eigsh(sla.SparseTensor.from_symmetric_coo(w, r, c, 16), k=2, which="smallest",
                                         return_eigenvectors=False), (low,))


def test_eigsh_backends_agree_at_the_ends():
    A = sla.poisson2d(12)  # n = 144: the Krylov engines run (not the dense path)
    ref = torch.linalg.eigvalsh(A.to_dense())
    vals, info = A.eigsh(k=4, which="largest", return_eigenvectors=False, return_info=True)
    assert info.backend == "lanczos" and info.converged and torch.allclose(vals, ref[-4:], atol=1e-9)
    for backend in ("native", "spectra"):
        vals = sla.eigsh(A, k=4, which="smallest", backend=backend, return_eigenvectors=False)
        assert torch.allclose(vals, ref[:4], atol=1e-9)


def test_eigsh_auto_turns_to_shift_invert_at_a_clustered_end():
    n = 2000  # path Laplacian: relative gaps ~1e-6 at both ends, where the run on A alone stalls
    i = torch.arange(n)
    row = torch.cat([i, i[:-1], i[1:]])
    col = torch.cat([i, i[1:], i[:-1]])
    A = sla.SparseTensor(torch.cat([torch.full((n,), 2.0, dtype=D), torch.full((2 * n - 2,), -1.0, dtype=D)]), row,
                         col, (n, n))
    ref = torch.linalg.eigvalsh(A.to_dense())
    vals, vecs, info = sla.eigsh(A, k=4, which="smallest", return_info=True)
    assert info.converged and info.shift_invert and info.backend == "lanczos" and info.sigma < float(ref[0])
    assert torch.allclose(vals, ref[:4], atol=1e-10, rtol=0) and info.max_residual < 1e-8
    vals, info = sla.eigsh(A, k=4, which="largest", return_eigenvectors=False, return_info=True)
    assert info.converged and info.shift_invert and info.sigma > float(ref[-1])
    assert torch.allclose(vals, ref[-4:], atol=1e-10, rtol=0)
    _, info = sla.eigsh(A, k=4, which="smallest", backend="lanczos", return_eigenvectors=False, return_info=True)
    assert not info.shift_invert


def test_det_logdet_slogdet_and_gradcheck():
    n = 7
    row, col = random_pattern(n)
    v = dominant_values(row, col, n).requires_grad_()
    A = sla.SparseTensor(v, row, col, (n, n))
    sign_ref, ld_ref = torch.linalg.slogdet(A.to_dense())
    sign, ld = A.slogdet()
    assert sign == sign_ref and torch.allclose(ld, ld_ref)
    assert torch.allclose(A.det(), torch.linalg.det(A.to_dense()))
    assert torch.allclose(sla.logdet(A), ld_ref)
    assert gradcheck(lambda v: sla.logdet(A.with_values(v)), (v,))
    assert gradcheck(lambda v: A.with_values(v).slogdet()[1], (v,))
    # a negative determinant: logdet is NaN with a status, slogdet gives the sign
    neg = A.with_values(torch.where(A.row == 0, -A.values.detach(), A.values.detach()))
    ld, info = neg.logdet(return_info=True)
    assert torch.isnan(ld) and info.status == "not_positive_definite"
    assert neg.slogdet()[0] == -1


# ---- nonlinear solve

def bratu(n=5):
    A = sla.poisson2d(n)
    h2 = 1.0 / (n + 1) ** 2

    def residual(u, theta, f):
        return A @ u - h2 * theta * torch.exp(u) - h2 * f

    return A, residual


@pytest.mark.parametrize("assembled", [True, False])
def test_nonlinear_solve_gradcheck(assembled):
    A, residual = bratu()
    n = A.shape[0]
    theta = torch.tensor([1.5], dtype=D, requires_grad=True)
    f = torch.linspace(0.5, 1.5, n, dtype=D, requires_grad=True)
    u0 = torch.zeros(n, dtype=D)
    kw = {"jacobian_pattern": A} if assembled else {}
    u, info = sla.nonlinear_solve(residual, u0, theta, f, return_info=True, **kw)
    assert info.converged, info
    assert residual(u, theta, f).abs().max() < 1e-10
    assert gradcheck(lambda theta, f: sla.nonlinear_solve(residual, u0, theta, f, **kw), (theta, f))


def test_nonlinear_solve_residual_errors_propagate():
    def bad(u, p):
        raise KeyError("from the residual")

    with pytest.raises(KeyError, match="from the residual"):
        sla.nonlinear_solve(bad, torch.zeros(3, dtype=D), torch.ones(1, dtype=D))


# ---- lists of matrices

def test_sparse_tensor_list_gradcheck():
    A1, A2 = sla.poisson2d(2), sla.poisson2d(3)
    v1 = (A1.values + 0.1 * torch.rand_like(A1.values)).requires_grad_()
    v2 = (A2.values + 0.1 * torch.rand_like(A2.values)).requires_grad_()
    b1 = torch.randn(4, dtype=D, requires_grad=True)
    b2 = torch.randn(9, dtype=D, requires_grad=True)

    def f(v1, v2, b1, b2):
        lst = sla.SparseTensorList([A1.with_values(v1), A2.with_values(v2)])
        x1, x2 = lst.solve([b1, b2], backend="umfpack")
        y1, y2 = lst @ [b1, b2]
        return torch.cat([x1, x2, y1, y2, lst.logdet()])

    lst = sla.SparseTensorList([A1.with_values(v1), A2.with_values(v2)])
    assert len(lst) == 2 and lst[-1].shape == (9, 9)
    big = lst.to_block_diagonal()
    assert big.shape == (13, 13)
    back = sla.SparseTensorList.from_block_diagonal(big, [4, 9])
    assert torch.equal(back[1].to_dense(), lst[1].to_dense())
    assert torch.allclose(lst.logdet()[1], torch.logdet(lst[1].to_dense()))
    (l1, _), (l2, _) = sla.SparseTensorList([A1, A2]).eigsh(k=1, which="largest")
    assert torch.allclose(l2, torch.linalg.eigvalsh(A2.to_dense())[-1:])
    assert gradcheck(f, (v1, v2, b1, b2))


# ---- generated and read matrices

def test_generators_and_diffusion_gradient():
    assert sla.poisson3d(3).shape == (27, 27)
    P = sla.poisson2d(4)
    assert torch.equal(P.diagonal(), torch.full((16,), 4.0, dtype=D))
    C = sla.convection_diffusion2d(4, 10.0, 5.0)
    assert not torch.allclose(C.to_dense(), C.to_dense().T)
    S = sla.shifted_laplacian2d(4, 0.5)
    assert torch.allclose(S.to_dense(), P.to_dense() - 0.5 * torch.eye(16, dtype=D))
    kappa = (1 + torch.rand(3, 3, dtype=D)).requires_grad_()
    b = torch.ones(9, dtype=D)
    assert gradcheck(lambda k: sla.diffusion2d(k).solve(b), (kappa,))


def test_variable_coefficient_and_fe_generators():
    assert torch.equal(sla.variable_diffusion2d(5, sigma=0.0).to_dense(), sla.poisson2d(5).to_dense())
    assert torch.equal(sla.variable_diffusion3d(3, sigma=0.0).to_dense(), sla.poisson3d(3).to_dense())
    K = sla.variable_diffusion3d(4, sigma=1.0, seed=3).to_dense()
    assert torch.equal(K, K.T) and torch.linalg.eigvalsh(K).min() > 0
    assert torch.equal(K, sla.variable_diffusion3d(4, sigma=1.0, seed=3).to_dense())
    F = sla.fe_laplacian2d(6, jitter=0.4, seed=2).to_dense()
    assert torch.equal(F, F.T) and torch.linalg.eigvalsh(F).min() > 0
    assert torch.allclose(sla.fe_laplacian2d(6, jitter=0.0).to_dense(), sla.poisson2d(6).to_dense(), atol=1e-13)


def test_read_mtx(shared_data, tmp_path):
    A = sla.read_mtx(shared_data / "matrices" / "494_bus.mtx")
    assert A.shape == (494, 494)
    dense = A.to_dense()
    assert torch.equal(dense, dense.T)
    path = tmp_path / "copy.mtx"
    sla.write_mtx(path, A)
    assert torch.equal(sla.read_mtx(path).to_dense(), dense)
    A32 = sla.read_mtx(str(shared_data / "matrices" / "494_bus.mtx"), dtype=torch.float32)
    assert A32.dtype == torch.float32


def test_solve_keeps_the_callers_thread_count():
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        A = sla.poisson2d(8)
        for backend in ("cholmod", "umfpack", "superlu"):
            v = A.values.clone().requires_grad_()
            x = A.with_values(v).solve(torch.ones(64, dtype=D), backend=backend)
            assert torch.get_num_threads() == 1, backend
            x.sum().backward()  # the adjoint solve runs outside the binding call
            assert torch.get_num_threads() == 1, backend
        A.logdet()
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_dsparse_tensor_one_process():
    # outside mpirun: one rank holding every row (the MPI runs are tests/python/mpi)
    A = sla.poisson2d(4)
    dA = sla.DSparseTensor.from_global(A)
    assert dA.world_size == 1 and dA.owned_rows == 16
    b = torch.ones(16, dtype=D)
    x, info = dA.solve(dA.scatter(b), method="cg", rtol=1e-12, return_info=True)
    assert info.converged and torch.allclose(dA.gather(x), A.solve(b))
    with pytest.raises(ValueError, match="unknown partition"):
        sla.DSparseTensor.from_global(A, partition="zigzag")


@pytest.mark.parametrize("backend,method", [("auto", "auto"), ("native", "cg")])
def test_float32_gradients_match_float64(backend, method):
    A64 = sla.poisson2d(6)
    grads = {}
    for dtype in (torch.float32, torch.float64):
        v = A64.values.to(dtype).clone().requires_grad_()
        b = torch.linspace(0.5, 1.5, 36, dtype=dtype, requires_grad=True)
        A = A64.to(dtype).with_values(v)
        x = A.solve(b, backend=backend, method=method, rtol=1e-6 if dtype == torch.float32 else 1e-12)
        assert x.dtype == dtype
        loss = x.square().sum() + sla.logdet(A) + (A @ b).sum()
        loss.backward()
        grads[dtype] = (v.grad, b.grad)
    for g32, g64 in zip(grads[torch.float32], grads[torch.float64]):
        assert g32.dtype == torch.float32
        assert torch.allclose(g32.double(), g64, rtol=1e-4, atol=1e-4 * g64.abs().max())


def test_stencil_matrix_solves_as_its_csr():
    """A StencilMatrix (matrix-free) solves with the same iterates as the CSR it stands for;
    stencil_of finds the stencil of poisson2d and refuses a matrix that has none."""
    S = sla.poisson2d_stencil(24)
    A = sla.poisson2d(24)
    assert S.rows == 576 and S.nnz() == A.values.numel()
    assert torch.equal(S.to_sparse().to_dense(), A.to_dense())
    b = torch.rand(576, dtype=D, generator=torch.Generator().manual_seed(4))
    for pc in ("amg", "jacobi", None):
        xs, info_s = S.solve(b, method="cg", preconditioner=pc, rtol=1e-10, return_info=True)
        xa, info_a = A.solve(b, backend="native", method="cg", preconditioner=pc, rtol=1e-10, return_info=True)
        assert info_s.iterations == info_a.iterations
        assert torch.equal(xs, xa)
        assert torch.linalg.norm(A.to_dense() @ xs - b) <= 1e-9 * torch.linalg.norm(b)
    S3 = sla.poisson3d_stencil(6)
    assert torch.equal(S3.to_sparse().to_dense(), sla.poisson3d(6).to_dense())
    found = sla.stencil_of(A)
    assert found is not None and found.offsets == S.offsets and found.coeffs == S.coeffs
    row, col = random_pattern(6)
    assert sla.stencil_of(sla.SparseTensor(dominant_values(row, col, 6), row, col, (6, 6))) is None
    with pytest.raises(tessera.TesseraError):
        S.solve(b.clone().requires_grad_(), method="cg")
