"""Type stubs of tessera._C, the C++ extension. Use tessera.sla and tessera.lirpa instead:
they wrap these bindings with keyword arguments and docstrings."""

from typing import Callable, List, Optional, Sequence, Tuple

import torch

__version__: str
__torch_version__: str

class TesseraError(Exception): ...
class InvalidInput(TesseraError, ValueError): ...
class DimensionMismatch(TesseraError, ValueError): ...
class ParseError(TesseraError, ValueError): ...
class Unsupported(TesseraError, NotImplementedError): ...
class NotCompiled(TesseraError, NotImplementedError): ...
class DistributedError(TesseraError, RuntimeError): ...
class ResourceExhausted(TesseraError, RuntimeError): ...
class TesseraRuntimeError(TesseraError, RuntimeError): ...

class sla:
    class SolveOptions:
        backend: str
        method: str
        preconditioner: str
        rtol: float
        atol: float
        maxiter: int
        gmres_restart: int
        memory_budget_bytes: float
        stencil_spmv: bool

    class SolveInfo:
        backend: str
        method: str
        status: str
        converged: bool
        iterations: int
        residual: float
        message: str
        spmv_format: str

    class EigshOptions:
        k: int
        which: str
        sigma: float
        backend: str
        tol: float
        ncv: int
        block_size: int
        maxiter: int
        solver_backend: str
        seed: int

    class EigshInfo:
        backend: str
        status: str
        converged: bool
        iterations: int
        operator_applications: int
        residuals: torch.Tensor
        max_residual: float
        message: str

    class DetOptions:
        backend: str

    class DetInfo:
        backend: str
        method: str
        status: str
        converged: bool
        message: str

    class NonlinearOptions:
        rtol: float
        atol: float
        maxiter: int
        line_search: bool
        anderson: bool
        anderson_depth: int
        jacobian_pattern: Optional["sla.SparseTensor"]
        linear: "sla.SolveOptions"
        krylov_rtol: float

    class NonlinearInfo:
        status: str
        converged: bool
        iterations: int
        residual_evaluations: int
        linear_iterations: int
        colors: int
        residual: float
        message: str

    class SparseTensor:
        @staticmethod
        def from_csr(row_ptr: torch.Tensor, col_idx: torch.Tensor, values: torch.Tensor, rows: int,
                     cols: int) -> "sla.SparseTensor": ...
        @staticmethod
        def from_coo(values: torch.Tensor, row: torch.Tensor, col: torch.Tensor, rows: int,
                     cols: int) -> "sla.SparseTensor": ...
        @staticmethod
        def from_symmetric_coo(values: torch.Tensor, row: torch.Tensor, col: torch.Tensor, n: int,
                               skew: bool = ...) -> "sla.SparseTensor": ...
        @staticmethod
        def from_dense(dense: torch.Tensor) -> "sla.SparseTensor": ...
        rows: int
        cols: int
        nnz: int
        row_ptr: torch.Tensor
        col_idx: torch.Tensor
        values: torch.Tensor
        batch_shape: List[int]
        def with_values(self, values: torch.Tensor) -> "sla.SparseTensor": ...
        def to_dense(self) -> torch.Tensor: ...
        def transpose(self) -> "sla.SparseTensor": ...
        def to(self, dtype: Optional[torch.dtype]) -> "sla.SparseTensor": ...
        def diagonal(self) -> torch.Tensor: ...
        def row_indices(self) -> torch.Tensor: ...

    class SparseTensorList:
        def __init__(self, items: Sequence["sla.SparseTensor"]) -> None: ...
        def __len__(self) -> int: ...
        def __getitem__(self, i: int) -> "sla.SparseTensor": ...
        items: List["sla.SparseTensor"]
        def to_block_diagonal(self) -> "sla.SparseTensor": ...
        @staticmethod
        def from_block_diagonal(a: "sla.SparseTensor", sizes: Sequence[int]) -> "sla.SparseTensorList": ...
        def matvec(self, x: Sequence[torch.Tensor]) -> List[torch.Tensor]: ...
        def solve(self, b: Sequence[torch.Tensor],
                  options: "sla.SolveOptions") -> Tuple[List[torch.Tensor], List["sla.SolveInfo"]]: ...
        def eigsh(self, options: "sla.EigshOptions") -> List[Tuple[torch.Tensor, torch.Tensor, "sla.EigshInfo"]]: ...
        def logdet(self, options: "sla.DetOptions") -> Tuple[torch.Tensor, List["sla.DetInfo"]]: ...

    class DSparseTensor:
        @staticmethod
        def from_global(global_matrix: "sla.SparseTensor", partition: str = ...) -> "sla.DSparseTensor": ...
        @staticmethod
        def scatter_from_root(global_matrix: Optional["sla.SparseTensor"], rows: int,
                              root: int = ...) -> "sla.DSparseTensor": ...
        @staticmethod
        def from_local_rows(local_rows: "sla.SparseTensor") -> "sla.DSparseTensor": ...
        rows: int
        owned_rows: int
        values: torch.Tensor
        rank: int
        size: int
        def owned_row_ids(self) -> torch.Tensor: ...
        def global_nnz(self) -> int: ...
        def with_values(self, values: torch.Tensor) -> "sla.DSparseTensor": ...
        def matvec(self, x_owned: torch.Tensor) -> torch.Tensor: ...
        def rmatvec(self, x_owned: torch.Tensor) -> torch.Tensor: ...
        def diagonal(self) -> torch.Tensor: ...
        def scatter(self, global_vector: torch.Tensor, from_root: bool = ..., root: int = ...) -> torch.Tensor: ...
        def gather_all(self, owned: torch.Tensor) -> torch.Tensor: ...
        def solve(self, b_owned: torch.Tensor,
                  options: "sla.SolveOptions") -> Tuple[torch.Tensor, "sla.SolveInfo"]: ...
        def eigsh(self, options: "sla.EigshOptions") -> Tuple[torch.Tensor, torch.Tensor, "sla.EigshInfo"]: ...
        def slogdet(self, options: "sla.DetOptions") -> Tuple[torch.Tensor, torch.Tensor, "sla.DetInfo"]: ...
        def logdet(self, options: "sla.DetOptions") -> Tuple[torch.Tensor, "sla.DetInfo"]: ...

    class DSparseTensorBatch:
        def __init__(self, pattern: "sla.DSparseTensor", values: torch.Tensor) -> None: ...
        @staticmethod
        def from_global(global_matrix: "sla.SparseTensor", partition: str = ...) -> "sla.DSparseTensorBatch": ...
        batch_size: int
        values: torch.Tensor
        def item(self, b: int) -> "sla.DSparseTensor": ...
        def matvec(self, x: torch.Tensor) -> torch.Tensor: ...
        def rmatvec(self, x: torch.Tensor) -> torch.Tensor: ...
        def solve(self, b: torch.Tensor,
                  options: "sla.SolveOptions") -> Tuple[torch.Tensor, List["sla.SolveInfo"]]: ...
        def eigsh(self, options: "sla.EigshOptions") -> Tuple[torch.Tensor, torch.Tensor, List["sla.EigshInfo"]]: ...
        def slogdet(self, options: "sla.DetOptions") -> Tuple[torch.Tensor, torch.Tensor, List["sla.DetInfo"]]: ...

    @staticmethod
    def dnonlinear_solve(residual: Callable[[torch.Tensor, List[torch.Tensor]], torch.Tensor], u0: torch.Tensor,
                         params: Sequence[torch.Tensor], jacobian_pattern: "sla.DSparseTensor",
                         options: "sla.NonlinearOptions") -> Tuple[torch.Tensor, "sla.NonlinearInfo"]: ...
    @staticmethod
    def world_rank() -> int: ...
    @staticmethod
    def world_size() -> int: ...
    @staticmethod
    def finalize() -> None: ...
    @staticmethod
    def matvec(a: "sla.SparseTensor", x: torch.Tensor) -> torch.Tensor: ...
    @staticmethod
    def rmatvec(a: "sla.SparseTensor", x: torch.Tensor) -> torch.Tensor: ...
    @staticmethod
    def solve(a: "sla.SparseTensor", b: torch.Tensor,
              options: "sla.SolveOptions") -> Tuple[torch.Tensor, "sla.SolveInfo"]: ...
    @staticmethod
    def eigsh(a: "sla.SparseTensor",
              options: "sla.EigshOptions") -> Tuple[torch.Tensor, torch.Tensor, "sla.EigshInfo"]: ...
    @staticmethod
    def slogdet(a: "sla.SparseTensor",
                options: "sla.DetOptions") -> Tuple[torch.Tensor, torch.Tensor, "sla.DetInfo"]: ...
    @staticmethod
    def logdet(a: "sla.SparseTensor", options: "sla.DetOptions") -> Tuple[torch.Tensor, "sla.DetInfo"]: ...
    @staticmethod
    def det(a: "sla.SparseTensor", options: "sla.DetOptions") -> Tuple[torch.Tensor, "sla.DetInfo"]: ...
    @staticmethod
    def nonlinear_solve(residual, u0: torch.Tensor, params: Sequence[torch.Tensor],
                        options: "sla.NonlinearOptions") -> Tuple[torch.Tensor, "sla.NonlinearInfo"]: ...
    @staticmethod
    def solve_operator(apply: Callable[[torch.Tensor, List[torch.Tensor]], torch.Tensor],
                       apply_transposed: Optional[Callable[[torch.Tensor, List[torch.Tensor]], torch.Tensor]],
                       symmetric: bool, b: torch.Tensor, params: Sequence[torch.Tensor], method: str, rtol: float,
                       atol: float, maxiter: int, gmres_restart: int,
                       preconditioner: Optional[Callable[[torch.Tensor], torch.Tensor]],
                       preconditioner_transposed: Optional[Callable[[torch.Tensor], torch.Tensor]]
                       ) -> Tuple[torch.Tensor, "sla.SolveInfo"]: ...
    @staticmethod
    def dsolve_operator(apply: Callable[[torch.Tensor, List[torch.Tensor]], torch.Tensor],
                        apply_transposed: Optional[Callable[[torch.Tensor, List[torch.Tensor]], torch.Tensor]],
                        symmetric: bool, b: torch.Tensor, params: Sequence[torch.Tensor], method: str, rtol: float,
                        atol: float, maxiter: int, gmres_restart: int,
                        preconditioner: Optional[Callable[[torch.Tensor], torch.Tensor]],
                        preconditioner_transposed: Optional[Callable[[torch.Tensor], torch.Tensor]]
                        ) -> Tuple[torch.Tensor, "sla.SolveInfo"]: ...
    @staticmethod
    def read_mtx(path: str, dtype: Optional[torch.dtype] = ...) -> "sla.SparseTensor": ...
    @staticmethod
    def read_dense_mtx(path: str) -> torch.Tensor: ...
    @staticmethod
    def write_mtx(path: str, a: "sla.SparseTensor", symmetric: bool = ...) -> None: ...
    @staticmethod
    def poisson2d(n: int, dtype: Optional[torch.dtype] = ...) -> "sla.SparseTensor": ...
    @staticmethod
    def poisson3d(n: int, dtype: Optional[torch.dtype] = ...) -> "sla.SparseTensor": ...
    @staticmethod
    def shifted_laplacian2d(n: int, shift: float, dtype: Optional[torch.dtype] = ...) -> "sla.SparseTensor": ...
    @staticmethod
    def convection_diffusion2d(n: int, wx: float, wy: float,
                               dtype: Optional[torch.dtype] = ...) -> "sla.SparseTensor": ...
    @staticmethod
    def diffusion2d(kappa: torch.Tensor) -> "sla.SparseTensor": ...

class lirpa:
    class Graph:
        @staticmethod
        def load(path: str, shard: str = ...) -> "lirpa.Graph": ...
        @staticmethod
        def load_onnx_bytes(data: bytes, source: str = ..., shard: str = ...) -> "lirpa.Graph": ...
        input_shape: List[int]
        output_shape: List[int]
        input_size: int
        output_size: int
        num_nodes: int
        def forward(self, x: torch.Tensor, dtype: Optional[torch.dtype] = ...) -> torch.Tensor: ...

    @staticmethod
    def supported_onnx_ops() -> str: ...
    @staticmethod
    def compute_bounds(graph: "lirpa.Graph", lower: torch.Tensor, upper: torch.Tensor,
                       c: Optional[torch.Tensor] = ..., method: str = ..., dtype: Optional[torch.dtype] = ...,
                       alpha_iterations: int = ..., alpha_lr: float = ...,
                       shard: str = ..., intersect_ibp: bool = ..., alpha_final: bool = ...,
                       alpha_intermediate: bool = ...) -> Tuple[torch.Tensor, torch.Tensor, int]: ...
    @staticmethod
    def verify(graph: "lirpa.Graph", property_path: str, timeout: float = ..., config_yaml: str = ...,
               source: str = ..., shard: str = ...) -> dict: ...
