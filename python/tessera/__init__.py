"""tessera for PyTorch: differentiable sparse linear algebra (``tessera.sla``) and neural
network bound propagation and verification (``tessera.lirpa``) over tessera's C++ library.

Tensors cross between Python and C++ without a copy, and the autograd graph tessera builds
in C++ is the one ``torch.autograd`` sees: ``loss.backward()`` reaches through solves,
eigenvalues, determinants and nonlinear solves.

Errors raised by the C++ code keep its message: bad input raises a ``ValueError`` subclass
(``InvalidInput``, ``DimensionMismatch``, ``ParseError``), an unsupported request a
``NotImplementedError`` subclass (``Unsupported``, ``NotCompiled``), anything else a
``RuntimeError`` subclass; all of them derive from ``TesseraError``. Numerical outcomes
(not converged, singular) are not exceptions: they are in the info objects returned on
request.
"""

import torch  # first: loads LibTorch and registers the tensor types the extension uses

from . import _C
from ._C import (
    DimensionMismatch,
    DistributedError,
    InvalidInput,
    NotCompiled,
    ParseError,
    ResourceExhausted,
    TesseraError,
    TesseraRuntimeError,
    Unsupported,
)
from . import sla
from . import lirpa

__version__ = _C.__version__

__all__ = [
    "sla",
    "lirpa",
    "TesseraError",
    "InvalidInput",
    "DimensionMismatch",
    "ParseError",
    "Unsupported",
    "NotCompiled",
    "DistributedError",
    "ResourceExhausted",
    "TesseraRuntimeError",
    "__version__",
]
