"""tessera.lirpa with shard= under mpirun (run by ctest at 2 ranks with
dsparse_mpi_check.py: python_mpi_np2). Every rank makes the same calls: the sharded bounds
and verdicts must equal the unsharded ones every rank also computes.

    mpirun -np 2 /usr/bin/python3 -m pytest -q tests/python/mpi/lirpa_mpi_check.py
"""

import os
import pathlib

import pytest
import torch

from mpi4py import MPI  # first: tessera uses the MPI it initialises

import tessera
from tessera import lirpa

D = torch.float64
COMM = MPI.COMM_WORLD
DATA = pathlib.Path(os.environ.get("TESSERA_SHARED_DATA",
                                   pathlib.Path(__file__).resolve().parents[3].parent / "shared" / "data"))


def module():
    torch.manual_seed(7)  # the same weights on every rank
    return torch.nn.Sequential(torch.nn.Linear(6, 40), torch.nn.ReLU(), torch.nn.Linear(40, 30), torch.nn.ReLU(),
                               torch.nn.Linear(30, 4))


@pytest.mark.parametrize("shard", ["fsdp", "fsdp+state", "tp"])
@pytest.mark.parametrize("method", ["ibp", "crown", "alpha-crown"])
def test_sharded_bounds_equal_one_process(shard, method):
    net = module()
    plain = lirpa.BoundedModel.from_module(net, torch.zeros(1, 6))
    sharded = lirpa.BoundedModel.from_module(net, torch.zeros(1, 6), shard=shard)
    lower, upper = -0.2 * torch.ones(6, dtype=D), 0.3 * torch.ones(6, dtype=D)
    C = torch.tensor([[1.0, -1.0, 0.0, 0.0], [0.0, 0.0, 1.0, -1.0]], dtype=D)
    lo0, up0 = plain.compute_bounds(lower, upper, C=C, method=method)
    lo1, up1 = sharded.compute_bounds(lower, upper, C=C, method=method)
    assert torch.allclose(lo1, lo0, rtol=1e-6, atol=1e-9) and torch.allclose(up1, up0, rtol=1e-6, atol=1e-9)
    # the same result on every rank
    all_lo = COMM.allgather(lo1.tolist())
    assert all(l == all_lo[0] for l in all_lo)


@pytest.mark.parametrize("shard", ["fsdp", "tp"])
def test_sharded_verify_same_verdict(shard):
    test = DATA / "vnncomp2021" / "test"
    for onnx, verdict in (("test_sat.onnx", "sat"), ("test_unsat.onnx", "unsat")):
        r = lirpa.verify(test / onnx, test / "test_prop.vnnlib", timeout=60, shard=shard)
        assert r.verdict == verdict
        assert len(set(COMM.allgather(r.verdict))) == 1


def test_unknown_shard_is_refused():
    with pytest.raises(tessera.InvalidInput, match="zigzag"):
        lirpa.BoundedModel.from_module(module(), torch.zeros(1, 6), shard="zigzag")


class Block(torch.nn.Module):
    """Softmax attention with 4 heads from one fused QKV Linear, then a ReLU MLP, residuals."""

    def __init__(self, d=8, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.fc1, self.fc2 = torch.nn.Linear(d, 8), torch.nn.Linear(8, d)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        att = torch.softmax(q @ k.transpose(-2, -1) * 0.5, dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, n, d))
        return x + self.fc2(torch.relu(self.fc1(x)))


@pytest.mark.parametrize("method", ["ibp", "crown"])
def test_tp_heads_bounds_equal_one_process(method):
    torch.manual_seed(5)  # the same weights on every rank
    net = Block()
    plain = lirpa.BoundedModel.from_module(net, torch.zeros(1, 3, 8))
    split = lirpa.BoundedModel.from_module(net, torch.zeros(1, 3, 8), shard="tp-heads")
    centre = torch.linspace(-1, 1, 24, dtype=D)
    lo0, up0 = plain.compute_bounds(centre - 0.05, centre + 0.05, method=method)
    lo1, up1 = split.compute_bounds(centre - 0.05, centre + 0.05, method=method)
    assert torch.allclose(lo1, lo0, rtol=1e-9, atol=1e-9) and torch.allclose(up1, up0, rtol=1e-9, atol=1e-9)
    all_lo = COMM.allgather(lo1.tolist())
    assert all(l == all_lo[0] for l in all_lo)


def test_tp_heads_verify_is_refused():
    test = DATA / "vnncomp2021" / "test"
    with pytest.raises(tessera.Unsupported, match="tp-heads"):
        lirpa.verify(test / "test_sat.onnx", test / "test_prop.vnnlib", timeout=60, shard="tp-heads")
