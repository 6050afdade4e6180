"""C++ exceptions reach Python with their message: bad input -> ValueError, unsupported ->
NotImplementedError, all of them tessera.TesseraError."""

import pytest
import torch

import tessera
from tessera import sla

D = torch.float64


def test_dimension_mismatch_is_value_error():
    A = sla.poisson2d(3)
    with pytest.raises(ValueError, match="DimensionMismatch") as e:
        A @ torch.ones(5, dtype=D)
    assert isinstance(e.value, tessera.DimensionMismatch)
    assert isinstance(e.value, tessera.TesseraError)
    with pytest.raises(tessera.DimensionMismatch):
        A.solve(torch.ones(4, dtype=D))


def test_invalid_input_is_value_error():
    with pytest.raises(tessera.InvalidInput, match="out of range"):
        sla.SparseTensor(torch.ones(2, dtype=D), torch.tensor([0, 5]), torch.tensor([0, 1]), (2, 2))
    A = sla.poisson2d(3)
    with pytest.raises(ValueError, match="unknown method 'qr'"):
        A.solve(torch.ones(9, dtype=D), method="qr")
    with pytest.raises(ValueError, match="unknown preconditioner"):
        A.solve(torch.ones(9, dtype=D), preconditioner="magic")
    b = torch.ones(9, dtype=D)
    b[0] = float("nan")
    with pytest.raises(tessera.InvalidInput):
        A.solve(b)


def test_parse_error_is_value_error(tmp_path):
    bad = tmp_path / "bad.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 x 2.0\n")
    with pytest.raises(tessera.ParseError, match="bad.mtx"):
        sla.read_mtx(bad)
    with pytest.raises(ValueError):
        sla.read_mtx(bad)


def test_unsupported_is_not_implemented_error():
    A = sla.poisson2d(3)
    with pytest.raises(NotImplementedError) as e:
        A.to(torch.int32)
    assert isinstance(e.value, tessera.Unsupported)


def test_numerical_failure_is_a_status():
    # a singular matrix: the solve reports it; it is not an exception
    A = sla.SparseTensor(torch.tensor([1.0, 1.0, 1.0, 1.0], dtype=D), torch.tensor([0, 0, 1, 1]),
                         torch.tensor([0, 1, 0, 1]), (2, 2))
    x, info = A.solve(torch.ones(2, dtype=D), backend="umfpack", return_info=True)
    assert info.status == "singular"
    sign, ld, info = A.slogdet(return_info=True)
    assert sign == 0 and ld == float("-inf") and info.status == "singular"


def test_exception_hierarchy():
    assert issubclass(tessera.InvalidInput, ValueError)
    assert issubclass(tessera.DimensionMismatch, ValueError)
    assert issubclass(tessera.ParseError, ValueError)
    assert issubclass(tessera.Unsupported, NotImplementedError)
    assert issubclass(tessera.NotCompiled, NotImplementedError)
    assert issubclass(tessera.DistributedError, RuntimeError)
    assert issubclass(tessera.ResourceExhausted, RuntimeError)
    assert issubclass(tessera.TesseraRuntimeError, RuntimeError)
    for t in (tessera.InvalidInput, tessera.Unsupported, tessera.DistributedError):
        assert issubclass(t, tessera.TesseraError)
    assert not issubclass(tessera.InvalidInput, RuntimeError)
