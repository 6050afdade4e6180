"""tessera.lirpa from Python: bounds of torch modules equal the `tessera bounds` CLI's on
the same ONNX export and contain sampled outputs; verify decides the vnncomp2021 test
instances."""

import json
import pathlib
import subprocess
import sys

import pytest
import torch

import tessera
from tessera import lirpa

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
from vit_instance import box_vnnlib  # noqa: E402  (one writer of box properties)

D = torch.float64


def mlp():
    torch.manual_seed(3)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 6), torch.nn.ReLU(),
                               torch.nn.Linear(6, 3))


def cnn():
    torch.manual_seed(4)
    return torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                               torch.nn.Linear(2 * 3 * 3, 3))


def cli_bounds(build_dir, onnx, vnnlib, method, *extra):
    exe = build_dir / "tessera"
    assert exe.exists(), f"{exe} not built"
    out = subprocess.run([str(exe), "bounds", str(onnx), str(vnnlib), "--method", method, "--json", *extra],
                         check=True, capture_output=True, text=True, timeout=120).stdout
    j = json.loads(out.strip().splitlines()[-1])
    return torch.tensor(j["lower"], dtype=D), torch.tensor(j["upper"], dtype=D)


@pytest.mark.parametrize("make,shape", [(mlp, (1, 4)), (cnn, (1, 1, 5, 5))])
def test_module_bounds_equal_cli_and_contain_samples(make, shape, tmp_path, build_dir):
    net = make()
    example = torch.zeros(shape)
    model = lirpa.BoundedModel.from_module(net, example)
    assert model.input_shape == shape and model.output_size == 3
    g = torch.Generator().manual_seed(5)
    center = torch.rand(shape[1:], generator=g, dtype=D) - 0.5
    lower, upper = center - 0.1, center + 0.1
    x = lower + (upper - lower) * torch.rand((200,) + tuple(shape[1:]), generator=g, dtype=D)
    with torch.no_grad():
        y = net.double()(x)
    net.float()
    assert torch.allclose(model(x), y, atol=1e-5)  # tessera's forward of the float32 export

    onnx_path = tmp_path / "net.onnx"
    torch.onnx.export(net, (example,), str(onnx_path), opset_version=13, input_names=["input"],
                      output_names=["output"])
    vnnlib = tmp_path / "box.vnnlib"
    box_vnnlib(vnnlib, lower.flatten(), upper.flatten(), 3)
    widths = {}
    for method in ("ibp", "crown", "alpha-crown"):
        lo, up = model.compute_bounds(lower, upper, method=method)
        assert lo.shape == (3,) and up.shape == (3,)
        assert (lo <= y.min(0).values + 1e-9).all() and (up >= y.max(0).values - 1e-9).all()
        cli_lo, cli_up = cli_bounds(build_dir, onnx_path, vnnlib, method)
        assert torch.allclose(lo, cli_lo, rtol=1e-9, atol=1e-9), (method, lo, cli_lo)
        assert torch.allclose(up, cli_up, rtol=1e-9, atol=1e-9), (method, up, cli_up)
        widths[method] = (up - lo).sum().item()
    # alpha-CROWN starts from CROWN's slopes and keeps the best bound (CROWN itself need not
    # beat IBP on every output of such small boxes)
    assert widths["alpha-crown"] <= widths["crown"] + 1e-9


def test_bounds_with_specification_matrix():
    net = mlp()
    model = lirpa.BoundedModel.from_module(net, torch.zeros(1, 4))
    lower, upper = -torch.ones(4, dtype=D), torch.ones(4, dtype=D)
    C = torch.tensor([[1.0, -1.0, 0.0], [0.0, 1.0, -1.0]], dtype=D)
    lo, up = model.compute_bounds(lower, upper, C=C, method="crown")
    x = lower + 2 * torch.rand(500, 4, dtype=D)
    with torch.no_grad():
        cy = net.double()(x) @ C.T
    assert lo.shape == (2,)
    assert (lo <= cy.min(0).values + 1e-9).all() and (up >= cy.max(0).values - 1e-9).all()


def test_crown_intersected_with_ibp_is_tighter_and_sound():
    net = mlp()
    model = lirpa.BoundedModel.from_module(net, torch.zeros(1, 4))
    lower, upper = -torch.ones(4, dtype=D), torch.ones(4, dtype=D)
    lo, up = model.compute_bounds(lower, upper, method="crown")
    tlo, tup = model.compute_bounds(lower, upper, method="crown", intersect_ibp=True)
    x = lower + 2 * torch.rand(2000, 4, dtype=D)
    with torch.no_grad():
        y = net.double()(x)
    assert (tlo <= y.min(0).values + 1e-9).all() and (tup >= y.max(0).values - 1e-9).all()
    assert (tlo >= lo - 1e-12).all() and (tup <= up + 1e-12).all()


def test_alpha_crown_on_the_final_rows_only(tmp_path, build_dir):
    """alpha_final=True (alpha_intermediate=False, the YAML's name) is the CLI's
    --alpha-final: at least as tight as CROWN, sound, and not the full alpha-CROWN."""
    net = mlp()
    model = lirpa.BoundedModel.from_module(net, torch.zeros(1, 4))
    lower, upper = -torch.ones(4, dtype=D), torch.ones(4, dtype=D)
    x = lower + 2 * torch.rand(2000, 4, dtype=D, generator=torch.Generator().manual_seed(6))
    with torch.no_grad():
        y = net.double()(x)
    clo, cup = model.compute_bounds(lower, upper, method="crown")
    flo, fup = model.compute_bounds(lower, upper, method="alpha-crown", alpha_final=True)
    assert (flo <= y.min(0).values + 1e-9).all() and (fup >= y.max(0).values - 1e-9).all()
    assert (flo >= clo - 1e-9).all() and (fup <= cup + 1e-9).all()
    assert (flo > clo + 1e-6).any() or (fup < cup - 1e-6).any(), "the final rows' steps moved nothing: no test"
    alo, aup = model.compute_bounds(lower, upper, method="alpha-crown")
    assert not (torch.allclose(flo, alo, rtol=0, atol=1e-9) and torch.allclose(fup, aup, rtol=0, atol=1e-9))
    ilo, iup = model.compute_bounds(lower, upper, method="alpha-crown", alpha_intermediate=False)
    assert torch.equal(ilo, flo) and torch.equal(iup, fup)
    onnx_path, vnnlib = tmp_path / "net.onnx", tmp_path / "box.vnnlib"
    net.float()
    torch.onnx.export(net, (torch.zeros(1, 4),), str(onnx_path), opset_version=13, input_names=["input"],
                      output_names=["output"])
    box_vnnlib(vnnlib, lower, upper, 3)
    cli_lo, cli_up = cli_bounds(build_dir, onnx_path, vnnlib, "alpha-crown", "--alpha-final")
    assert torch.allclose(flo, cli_lo, rtol=1e-9, atol=1e-9) and torch.allclose(fup, cli_up, rtol=1e-9, atol=1e-9)


def test_verify_test_instances(shared_data):
    test = shared_data / "vnncomp2021" / "test"
    sat = lirpa.verify(test / "test_sat.onnx", test / "test_prop.vnnlib", timeout=30)
    assert sat.verdict == "sat"
    x, y = sat.counterexample
    model = lirpa.BoundedModel.from_onnx(test / "test_sat.onnx")
    assert torch.allclose(model(x.reshape(1, -1)).flatten(), y)
    assert sat.results_text.startswith("sat")
    unsat = lirpa.verify(str(test / "test_unsat.onnx"), str(test / "test_prop.vnnlib"), timeout=30,
                         config={"attack": {"restarts": 4}})
    assert unsat.verdict == "unsat" and unsat.counterexample is None
    # ReLU splitting on one disjunct after another (default: a case's open disjuncts together)
    apart = lirpa.verify(test / "test_unsat.onnx", test / "test_prop.vnnlib", timeout=30,
                         config={"bab": {"disjuncts_together": False}})
    assert apart.verdict == "unsat"


def test_lirpa_errors(shared_data, tmp_path):
    test = shared_data / "vnncomp2021" / "test"
    not_onnx = tmp_path / "x.onnx"
    not_onnx.write_bytes(b"this is not a protobuf")
    with pytest.raises(ValueError):
        lirpa.BoundedModel.from_onnx(not_onnx)
    with pytest.raises(ValueError, match="batch"):
        lirpa.verify(test / "test_sat.onnx", test / "test_prop.vnnlib", config={"bab": {"batch": 3}})
    with pytest.raises(ValueError):
        lirpa.verify(test / "test_small.onnx", shared_data / "vnncomp2021" / "acasxu" / "prop_1.vnnlib")
    model = lirpa.BoundedModel.from_onnx(test / "test_small.onnx")
    with pytest.raises(ValueError):
        model.compute_bounds(torch.zeros(1, dtype=D), torch.ones(1, dtype=D), method="deeppoly")


def test_soundness_campaign_from_python(tmp_path):
    # one network of each of the seven kinds: sound bounds, ReLU splitting's domains checked on
    # the five with ReLUs, input splitting's boxes on those with few inputs, every verdict given
    r = lirpa.soundness_campaign(networks=7, points=200, seed=3, verify_timeout=0.5, bab_domains=30,
                                 reproducers=tmp_path)
    assert r["violations"] == []
    assert [t["method"] for t in r["methods"]] == ["ibp", "crown", "alpha-crown"]
    assert all(t["networks"] == 7 and t["violations"] == 0 for t in r["methods"])
    assert len(r["networks_by_kind"]) == 7 and "attention" in r["networks_by_kind"]
    assert r["bab_domains"]["networks"] == 5 and r["bab_domains"]["domains"] > 5
    assert r["bab_domains"]["violations"] == 0
    # input splitting's boxes on the MLP, the residual net and the attention block (<= 16 inputs)
    assert r["bab_input_boxes"]["networks"] >= 2 and r["bab_input_boxes"]["domains"] > 2
    assert r["bab_input_boxes"]["violations"] == 0
    assert sum(r["verdicts"].values()) == 7
    with pytest.raises(ValueError, match="unknown method"):
        lirpa.soundness_campaign(networks=1, methods=("zonotope",))
    with pytest.raises(ValueError, match="bab_domains"):
        lirpa.soundness_campaign(networks=1, bab_domains=-1)
