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

import os as _os


def _busy_elsewhere():
    """Runnable tasks other than this process, the fewest of five samples 2 ms apart (the
    same test as the `tessera` launcher's, include/tessera/core/load_at_start.h)."""
    import time
    fewest = None
    for i in range(5):
        if i:
            time.sleep(0.002)
        try:
            with open("/proc/loadavg") as f:
                running = int(f.read().split()[3].split("/")[0])
        except (OSError, ValueError, IndexError):
            return 0
        fewest = running - 1 if fewest is None else min(fewest, running - 1)
    return max(0, fewest)


def _default_omp_wait():
    """Before libgomp starts (it reads its wait policy once): on a machine where other
    processes keep cores busy, threads that spin 300,000 times before sleeping (libgomp's
    default, the fastest when idle) fight them for the cores, so tessera asks for the
    passive policy then (include/tessera/core/omp_wait.h). Left alone when the user set
    OMP_WAIT_POLICY or GOMP_SPINCOUNT, or when libgomp is already loaded (torch or numpy
    imported first): then it is too late."""
    if "OMP_WAIT_POLICY" in _os.environ or "GOMP_SPINCOUNT" in _os.environ:
        return
    try:
        with open("/proc/self/maps") as maps:
            if "libgomp" in maps.read():
                return
    except OSError:
        return
    if _busy_elsewhere() > 0:
        _os.environ["OMP_WAIT_POLICY"] = "passive"
        _os.environ["TESSERA_OMP_WAIT_DEFAULT"] = "1"


_default_omp_wait()

import torch  # noqa: E402  loads LibTorch and registers the tensor types the extension uses

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


def set_threads(threads=None):
    """Sets the threads of torch's intra-op pool, OpenMP and the BLAS, as the ``tessera``
    command does at start: ``threads`` when given; else ``TESSERA_THREADS``, one per rank
    under MPI, the cores that other running processes leave free now (one of two when one
    process keeps a core busy: two threads sharing a core with it run slower than one), or
    every core. ``import tessera`` does not call it (the thread count stays torch's until
    you do). Returns the config: ``threads``, ``blas_threads``, ``source`` ("explicit",
    "TESSERA_THREADS", "mpi-default", "load", "hardware"), ``threads_from`` (in words, as
    ``tessera info`` says it), ``cores`` and ``busy`` (other processes running)."""
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise InvalidInput(f"set_threads: threads must be a positive int or None, got {threads!r}")
    return _C.set_threads(0 if threads is None else threads)

__all__ = [
    "sla",
    "lirpa",
    "set_threads",
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
