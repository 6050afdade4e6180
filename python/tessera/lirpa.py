"""Bounds on neural network outputs and complete verification (tessera's C++
``tessera::lirpa``): IBP, CROWN and alpha-CROWN bounds over an input box, and VNN-LIB
verification (attack, alpha-CROWN, branch and bound).

Example::

    import torch, tessera
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    model = tessera.lirpa.BoundedModel.from_module(net, torch.zeros(1, 4))
    lower, upper = model.compute_bounds(-torch.ones(4), torch.ones(4), method="crown")

    result = tessera.lirpa.verify("net.onnx", "prop.vnnlib", timeout=60)
    result.verdict            # "sat", "unsat", "timeout" or "unknown"
    result.counterexample     # (x, y) tensors when sat
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass
from typing import Optional, Tuple, Union

import torch

from . import _C

_lirpa = _C.lirpa

__all__ = ["BoundedModel", "VerifyResult", "verify", "supported_onnx_ops", "soundness_campaign"]

_METHODS = ("ibp", "crown", "alpha-crown")


def supported_onnx_ops() -> str:
    """ONNX operator types this build supports, comma separated."""
    return _lirpa.supported_onnx_ops()


class BoundedModel:
    """A network loaded into tessera's bound propagation (from ONNX or a torch module)."""

    __slots__ = ("_graph", "source", "shard")

    def __init__(self, graph, source: str = "<model>", shard: str = "none"):
        self._graph = graph
        self.source = source
        self.shard = shard

    @classmethod
    def from_onnx(cls, path: Union[str, os.PathLike], shard: str = "none") -> "BoundedModel":
        """Loads an ONNX file (or an ACAS Xu ``.nnet`` file). An operator outside tessera's
        registry raises :class:`tessera.Unsupported` naming it; a malformed file
        :class:`tessera.ParseError`.

        ``shard`` (under ``mpirun``): ``"none"``; ``"fsdp"``, each rank keeps 1/P of the
        weights, gathered on use; ``"fsdp+state"``, also the rows of every CROWN backward
        pass and the branch-and-bound batches are split over the ranks; ``"tp"`` (tensor
        parallelism), each rank keeps its rows of every weight matrix and multiplies by
        them, so weights never move (bounds equal one process's up to rounding); ``"tp-heads"``
        (tensor parallelism by heads), each rank keeps and bounds its share of every attention
        block's heads and MLP block's hidden columns, one sum over the ranks per block (IBP and
        CROWN; :func:`verify` refuses it). Every rank then makes the same calls and gets the
        same results."""
        path = os.fspath(path)
        return cls(_lirpa.Graph.load(path, shard), path, shard)

    @classmethod
    def from_onnx_bytes(cls, data: bytes, source: str = "<onnx>", shard: str = "none") -> "BoundedModel":
        """Loads a serialised ONNX model held in memory (``shard`` as :meth:`from_onnx`)."""
        return cls(_lirpa.Graph.load_onnx_bytes(bytes(data), source, shard), source, shard)

    @classmethod
    def from_module(cls, module: torch.nn.Module, example_input: torch.Tensor, opset_version: int = 13,
                    shard: str = "none", **export_kwargs) -> "BoundedModel":
        """Exports ``module`` with ``torch.onnx.export`` into memory (no file is written)
        at ``example_input``'s shape (batch dimension included, e.g. ``[1, 4]``) and loads
        the result. The module is exported in eval mode and left in its former mode.
        With ``shard`` (see :meth:`from_onnx`) every rank must pass the same module."""
        buf = io.BytesIO()
        was_training = module.training
        module.eval()
        try:
            with torch.no_grad():
                torch.onnx.export(module, (example_input,), buf, opset_version=opset_version,
                                  input_names=["input"], output_names=["output"], **export_kwargs)
        finally:
            module.train(was_training)
        return cls.from_onnx_bytes(buf.getvalue(), f"<{type(module).__name__}>", shard)

    @property
    def input_shape(self) -> Tuple[int, ...]:
        """The ONNX input shape (batch dimension included)."""
        return tuple(self._graph.input_shape)

    @property
    def output_shape(self) -> Tuple[int, ...]:
        return tuple(self._graph.output_shape)

    @property
    def input_size(self) -> int:
        return self._graph.input_size

    @property
    def output_size(self) -> int:
        return self._graph.output_size

    def forward(self, x: torch.Tensor, dtype: torch.dtype = torch.float64) -> torch.Tensor:
        """The network's outputs ``[N, output_size]`` for inputs ``[N, *input_shape[1:]]``
        (or ``[N, input_size]``), computed by tessera's operators."""
        return self._graph.forward(x, dtype)

    __call__ = forward

    def compute_bounds(self, lower: torch.Tensor, upper: torch.Tensor, C: Optional[torch.Tensor] = None,
                       method: str = "crown", dtype: torch.dtype = torch.float64,
                       alpha_iterations: Optional[int] = None, alpha_lr: Optional[float] = None,
                       intersect_ibp: bool = False, alpha_final: bool = False,
                       alpha_intermediate: bool = True) -> Tuple[torch.Tensor, torch.Tensor]:
        """Bounds of ``C y`` (``C`` ``[K, output_size]``; None: the outputs themselves) for
        every input ``x`` with ``lower <= x <= upper`` (shaped like one input, or flat).

        Args:
            method: ``"ibp"``, ``"crown"`` or ``"alpha-crown"``.
            dtype: torch.float64 (default) or torch.float32 for the computation.
            alpha_iterations, alpha_lr: alpha-CROWN's Adam steps and learning rate.
            intersect_ibp: intersect every intermediate CROWN bound with the interval bound
                from the bounds before it (tighter than auto_LiRPA's CROWN, which the default
                reproduces; ``verify`` always intersects).
            alpha_final: alpha-CROWN optimises only the final rows' slopes, the intermediate
                bounds fixed to CROWN's (one backward pass per step; the CLI's
                ``bounds --alpha-final``).
            alpha_intermediate: False is the same as ``alpha_final=True`` (the verify
                configuration's ``alpha.intermediate``); the default True optimises the
                intermediate bounds too.

        Returns:
            ``(lower, upper)``, each ``[K]`` (``K = output_size`` without C).
        """
        if method not in _METHODS:
            raise ValueError(f"compute_bounds: method must be one of {', '.join(_METHODS)}, got {method!r}")
        lo, up, _ = _lirpa.compute_bounds(self._graph, lower, upper, C, method, dtype,
                                          -1 if alpha_iterations is None else int(alpha_iterations),
                                          -1.0 if alpha_lr is None else float(alpha_lr), self.shard,
                                          bool(intersect_ibp), bool(alpha_final), bool(alpha_intermediate))
        return lo, up

    def __repr__(self) -> str:
        return (f"BoundedModel({self.source!r}, input_shape={self.input_shape}, output_shape={self.output_shape}, "
                f"shard={self.shard!r})")


@dataclass
class VerifyResult:
    """Outcome of :func:`verify`."""

    verdict: str                      #: "sat", "unsat", "timeout" or "unknown"
    counterexample: Optional[Tuple[torch.Tensor, torch.Tensor]]  #: (x, y) float64 when sat
    decided_by: str                   #: "attack", "crown", "alpha-crown", "bab-input", "bab-relu", ...
    reason: str                       #: why unknown / timeout
    domains_visited: int
    seconds: float
    results_text: str                 #: the VNN-COMP results file text


def _config_text(config) -> Tuple[str, str]:
    if config is None:
        return "", "<config>"
    if isinstance(config, dict):
        return json.dumps(config), "<config dict>"  # JSON is YAML
    path = os.fspath(config)
    with open(path, "r", encoding="utf-8") as f:
        return f.read(), path


def verify(model: Union[str, os.PathLike, BoundedModel], vnnlib: Union[str, os.PathLike],
           timeout: Optional[float] = None, config: Union[None, str, os.PathLike, dict] = None,
           shard: Optional[str] = None) -> VerifyResult:
    """Decides a VNN-LIB property on a network: ``sat`` (with a counterexample confirmed by
    a forward pass), ``unsat`` (proved), ``timeout`` or ``unknown``.

    Args:
        model: an ONNX file path or a :class:`BoundedModel`.
        vnnlib: the property file.
        timeout: seconds for the whole run (default: the config's, else 300).
        config: a YAML configuration file (as ``tessera verify --config``) or a dict of the
            same keys; unknown keys raise :class:`tessera.InvalidInput`.
        shard: under ``mpirun``, ``"fsdp"``, ``"fsdp+state"`` or ``"tp"`` (see
            :meth:`BoundedModel.from_onnx`); default: the model's, else ``"none"``. Every
            rank calls verify with the same arguments and gets the same result.
    """
    if not isinstance(model, BoundedModel):
        model = BoundedModel.from_onnx(model, shard or "none")
    shard = shard or model.shard
    text, source = _config_text(config)
    r = _lirpa.verify(model._graph, os.fspath(vnnlib), -1.0 if timeout is None else float(timeout), text, source,
                      shard)
    cex = (r["x"], r["y"]) if r["x"] is not None else None
    return VerifyResult(r["verdict"], cex, r["decided_by"], r["reason"], r["domains_visited"], r["seconds"],
                        r["results_text"])


def soundness_campaign(networks: int = 100, points: int = 1000, seed: int = 0,
                       methods: Tuple[str, ...] = _METHODS, verify_timeout: float = 2.0, bab_domains: int = 200,
                       reproducers: Optional[Union[str, os.PathLike]] = None) -> dict:
    """Searches for unsound bounds and wrong verdicts on random networks (``tessera bench
    soundness``): ReLU, sigmoid and tanh MLPs, CNNs, convolution chains, residual nets and
    attention blocks, each on a random input box.

    Every method's bounds are checked against ``points`` uniform samples, the box's vertices
    and PGD; on networks with ReLUs, ``bab_domains`` domains of ReLU splitting are checked as
    they are bounded against the samples in them, and (at most 16 inputs) as many boxes of
    input splitting against points drawn inside each; each network's ``verify`` verdict on a
    random property (``verify_timeout`` seconds, 0: none) is cross-checked.

    Returns a dict: ``methods`` (per method: networks, points, violations,
    min_relative_slack), ``bab_domains`` and ``bab_input_boxes`` (networks, domains, points,
    violations, min_relative_slack), ``violations`` (one dict each, with its reproducer's path
    when ``reproducers`` names a folder), ``networks_by_kind``, ``verdicts``, ``seconds``.
    Sound bounds give an empty ``violations``.
    """
    for m in methods:
        if m not in _METHODS:
            raise ValueError(f"unknown method {m!r}: one of {', '.join(_METHODS)}")
    for name, value in (("networks", networks), ("points", points), ("bab_domains", bab_domains),
                        ("verify_timeout", verify_timeout)):
        if value < 0:
            raise ValueError(f"{name} must be >= 0, not {value}")
    return _lirpa.soundness_campaign(int(networks), int(points), int(seed), list(methods), float(verify_timeout),
                                     int(bab_domains), "" if reproducers is None else os.fspath(reproducers))
