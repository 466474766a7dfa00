"""Definitions of library functions TorchScript cannot compile from their source, written in TorchScript.

torch.masked's functions (`torch.masked.sum(x, 1, mask=m)`) are Python-level code: they pass functions as values
and read their `__name__`, take `*args`/`**kwargs` and `tuple[int, ...]` dims of run-time length, define an
autograd.Function inside a call and branch on sparse layouts and MaskedTensors. Neither torch.jit nor tsjit can
compile that source. Their strided case is plain tensor code, though, so tsjit carries its own definition of each
(the same parameter names, defaults and keyword-only markers), and the resolver resolves the Python object to it
just as TorchScript has builtins written in TorchScript (builtin_functions.py):

    torch.masked.sum(x, 1, mask=m)  ->  prim::CallFunction(__torch__.torch.masked._ops.sum, x, [1], False, None, m)

The definitions compute what eager computes for strided tensors: masked-out elements replaced by the operation's
identity (so that fully masked slices give it: 0 for sum, -inf for amax of floats, the lowest integer for amax of
integers, NaN for median), eager's result dtypes, `keepdim`, `dim` as None, an int or a list (`dim=()` is every
dimension, as in eager), masks broadcast to the input's shape (sparse masks made dense). TorchScript has no empty
tuple that is not an empty list, so `dim=[]` is every dimension too (eager's prod reduces none for it). Sparse
inputs, which they do not cover, raise a ValueError when the function runs. A MaskedTensor is a Tensor to
TorchScript (as to torch.jit), and nothing TorchScript can ask tells it apart: the definitions run on it through
MaskedTensor's own operators, which give a MaskedTensor where eager gives the Tensor of its values. They are plain
TorchScript, so saved archives load in torch.jit too.
"""

from __future__ import annotations

import math
import sys
import threading
from typing import Any

import torch

from tsjit.frontend.ir_emitter import GraphFunction, compile_source
from tsjit.frontend.resolver import PythonResolver

# Helpers first, then one function per torch.masked function, in torch/masked/_ops.py's order. An identity is
# chosen by the name of the reduction whose identity masked-out elements take (softmax masks with amax's).
MASKED = '''
def _integer_limit(dtype: int, lowest: bool) -> int:
    if dtype == torch.uint8:
        return 0 if lowest else 255
    if dtype == torch.int8:
        return -128 if lowest else 127
    if dtype == torch.int16:
        return -32768 if lowest else 32767
    if dtype == torch.int32:
        return -2147483648 if lowest else 2147483647
    if dtype == torch.int64:
        return -9223372036854775807 - 1 if lowest else 9223372036854775807
    raise ValueError("masked operation has no identity for elements of dtype " + str(dtype))

def _extreme(input: Tensor, lowest: bool) -> Tensor:
    if input.is_floating_point():
        return torch.full([], -math.inf if lowest else math.inf, dtype=input.dtype, device=input.device)
    return torch.full([], _integer_limit(input.dtype, lowest), dtype=input.dtype, device=input.device)

def _identity(reduction: str, input: Tensor, ord: float) -> Tensor:
    if reduction == "sum":
        return torch.zeros([], dtype=input.dtype, device=input.device)
    if reduction == "prod":
        return torch.ones([], dtype=input.dtype, device=input.device)
    if reduction == "amax":
        return _extreme(input, True)
    if reduction == "amin":
        return _extreme(input, False)
    if reduction == "logsumexp" and input.is_complex():
        return torch.full([], -math.inf, dtype=input.dtype, device=input.device)
    if reduction == "logsumexp":
        return _extreme(input, True)
    if reduction == "norm" and ord == -math.inf:
        if not input.is_floating_point():
            raise ValueError("masked norm of order -inf expects a floating point input")
        return torch.full([], math.inf, dtype=input.dtype, device=input.device)
    if reduction == "norm":
        return torch.zeros([], dtype=input.dtype, device=input.device)
    return torch.full([], math.nan, dtype=input.dtype, device=input.device)

def _strided(input: Tensor, what: str):
    if input.layout != torch.strided:
        raise ValueError(what + ": tsjit's definition supports strided tensors only, not sparse ones")

def _input_mask(input: Tensor, mask: Tensor) -> Tensor:
    if mask.layout != torch.strided:
        mask = mask.to_dense()
    if mask.dim() > input.dim():
        raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality higher than of the input)")
    return torch.broadcast_to(mask, input.shape).to(torch.bool)

def _masked_input(input: Tensor, mask: Optional[Tensor], reduction: str, ord: float = 2.0) -> Tensor:
    if mask is None:
        return input
    return torch.where(_input_mask(input, mask), input, _identity(reduction, input, ord))

def _wrapped_dim(dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if dim >= n or dim < -n:
        raise IndexError("Dimension out of range (expected to be in range of [" + str(-n) + ", " + str(n - 1)
                         + "], but got " + str(dim) + ")")
    return dim % n

def _along(input: Tensor, dim: int, dtype: Optional[int], mask: Optional[Tensor], name: str,
           reduction: str) -> Tuple[Tensor, int]:
    # the operand of a masked scan or normalization along dim (cumsum, softmax, ...): masked-out elements replaced
    # by `reduction`'s identity, in dtype (input's by default); and dim wrapped
    _strided(input, "torch.masked." + name)
    if dtype is None:
        dtype = input.dtype
    d = _wrapped_dim(dim, input.dim())
    return _masked_input(input, mask, reduction).to(dtype), d

def _canonical_dim(dim: Optional[List[int]], ndim: int) -> List[int]:
    if dim is None or len(dim) == 0:
        return list(range(ndim))
    dims = [_wrapped_dim(d, ndim) for d in dim]
    # eager compares each dim as given with the wrapped ones before it: (1, -1) passes here, and the operators
    # that do not take it are what refuse it
    for i in range(len(dim)):
        for j in range(i):
            if dim[i] == dims[j]:
                raise RuntimeError("dim=" + str(dim[i]) + " appears multiple times in the list of dims")
    return dims

def _flag(keepdim: Optional[bool]) -> bool:
    return keepdim is not None and keepdim

def _floating_or_complex(dtype: int) -> bool:
    return dtype in [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex32, torch.complex64,
                     torch.complex128]

def _real(dtype: int) -> int:
    if dtype == torch.complex32:
        return torch.float16
    if dtype == torch.complex64:
        return torch.float32
    if dtype == torch.complex128:
        return torch.float64
    return dtype

def _accumulated_dtype(input: Tensor, dtype: Optional[int]) -> int:
    if dtype is not None:
        return dtype
    if input.dtype in [torch.uint8, torch.bool, torch.int8, torch.int16, torch.int32]:
        return torch.int64
    return input.dtype

def _total(input: Tensor, dim: Optional[List[int]], keepdim: bool, dtype: int, mask: Optional[Tensor]) -> Tensor:
    _strided(input, "torch.masked.sum")
    dims = _canonical_dim(dim, input.dim())
    return torch.sum(_masked_input(input, mask, "sum"), dims, keepdim, dtype=dtype)

def _count(input: Tensor, dim: Optional[List[int]], keepdim: bool, mask: Optional[Tensor]) -> Tensor:
    dims = _canonical_dim(dim, input.dim())
    if mask is None:
        return torch.sum(torch.ones_like(input, dtype=torch.int64), dims, keepdim)
    return torch.sum(mask, dims, keepdim)

def _vector_norm(input: Tensor, ord: float, dim: Optional[List[int]], keepdim: bool, dtype: Optional[int],
                 mask: Optional[Tensor]) -> Tensor:
    _strided(input, "torch.masked.norm")
    if dtype is None:
        dtype = input.dtype
    masked = _masked_input(input, mask, "norm", ord)
    return torch.linalg.vector_norm(masked, ord, _canonical_dim(dim, input.dim()), keepdim, dtype=dtype)

def _nanmedian(input: Tensor, dim: int, keepdim: bool) -> Tensor:
    # torch.nanmedian(input, dim, keepdim).values by a sort, which the MLIR backends lower (torch-mlir has no
    # aten.nanmedian.dim): the lower median of the values that are not NaN (NaNs sorted as +inf, past every one of
    # them that counts), NaN where every value is
    missing = torch.isnan(input)
    present = torch.sum(torch.logical_not(missing), [dim], True)
    ordered = torch.sort(torch.where(missing, math.inf, input), dim)[0]
    middle = torch.gather(ordered, dim, torch.clamp_min(torch.div(present - 1, 2, rounding_mode="floor"), 0))
    output = torch.where(present == 0, math.nan, middle)
    return output if keepdim else output.squeeze(dim)

def _std_var(input: Tensor, dim: Optional[List[int]], unbiased: Optional[bool],
             correction: Optional[number], keepdim: bool, dtype: Optional[int], mask: Optional[Tensor],
             take_sqrt: bool) -> Tensor:
    if unbiased is not None and correction is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    removed = 1.0
    if unbiased is not None:
        removed = 1.0 if unbiased else 0.0
    if correction is not None:
        removed = float(correction)
    if dtype is None:
        dtype = input.dtype if _floating_or_complex(input.dtype) else torch.float32
    compute_dtype = dtype if _floating_or_complex(dtype) else torch.float32
    _strided(input, "torch.masked.std" if take_sqrt else "torch.masked.var")
    if mask is not None:
        mask = _input_mask(input, mask)
    count = _count(input, dim, True, mask)
    deviation = input - _total(input, dim, True, dtype, mask) / count
    total = _total(deviation * deviation.conj(), dim, keepdim, compute_dtype, mask)
    if not keepdim:
        count = count.reshape(total.shape)
    if removed != 0:
        count = count.to(_real(compute_dtype)) - removed
        count = torch.maximum(count, torch.zeros([], dtype=count.dtype, device=count.device))
    output = (total / count).to(dtype)
    return torch.sqrt(output) if take_sqrt else output

def sum(input: Tensor, dim: Optional[BroadcastingList1[int]] = None, *, keepdim: Optional[bool] = False,
        dtype: Optional[int] = None, mask: Optional[Tensor] = None) -> Tensor:
    return _total(input, dim, _flag(keepdim), _accumulated_dtype(input, dtype), mask)

def prod(input: Tensor, dim: Optional[BroadcastingList1[int]] = None, *, keepdim: Optional[bool] = False,
         dtype: Optional[int] = None, mask: Optional[Tensor] = None) -> Tensor:
    _strided(input, "torch.masked.prod")
    dims = _canonical_dim(dim, input.dim())
    result = _masked_input(input, mask, "prod").to(_accumulated_dtype(input, dtype))
    # the last dimension first, so that the others keep their positions; a dimension given twice ((1, -1)) is
    # reduced twice, as eager does
    for d in range(input.dim() - 1, -1, -1):
        for e in dims:
            if e == d:
                result = result.prod(d, _flag(keepdim))
    return result

def cumsum(input: Tensor, dim: int, *, dtype: Optional[int] = None, mask: Optional[Tensor] = None) -> Tensor:
    masked, d = _along(input, dim, dtype, mask, "cumsum", "sum")
    return torch.cumsum(masked, d).to(masked.dtype)

def cumprod(input: Tensor, dim: int, *, dtype: Optional[int] = None, mask: Optional[Tensor] = None) -> Tensor:
    masked, d = _along(input, dim, dtype, mask, "cumprod", "prod")
    return torch.cumprod(masked, d).to(masked.dtype)

def amax(input: Tensor, dim: Optional[BroadcastingList1[int]] = None, *, keepdim: Optional[bool] = False,
         dtype: Optional[int] = None, mask: Optional[Tensor] = None) -> Tensor:
    _strided(input, "torch.masked.amax")
    if dtype is None:
        dtype = input.dtype
    masked = _masked_input(input, mask, "amax")
    return torch.amax(masked, _canonical_dim(dim, masked.dim()), _flag(keepdim)).to(dtype)

def amin(input: Tensor, dim: Optional[BroadcastingList1[int]] = None, *, keepdim: Optional[bool] = False,
         dtype: Optional[int] = None, mask: Optional[Tensor] = None) -> Tensor:
    _strided(input, "torch.masked.amin")
    if dtype is None:
        dtype = input.dtype
    masked = _masked_input(input, mask, "amin")
    return torch.amin(masked, _canonical_dim(dim, masked.dim()), _flag(keepdim)).to(dtype)

def argmax(input: Tensor, dim: Optional[int] = None, *, keepdim: Optional[bool] = False,
           dtype: Optional[int] = None, mask: Optional[Tensor] = None) -> Tensor:
    _strided(input, "torch.masked.argmax")
    if dtype is None:
        dtype = input.dtype
    return torch.argmax(_masked_input(input, mask, "amax"), dim, _flag(keepdim)).to(dtype)

def argmin(input: Tensor, dim: Optional[int] = None, *, keepdim: Optional[bool] = False,
           dtype: Optional[int] = None, mask: Optional[Tensor] = None) -> Tensor:
    _strided(input, "torch.masked.argmin")
    if dtype is None:
        dtype = input.dtype
    return torch.argmin(_masked_input(input, mask, "amin"), dim, _flag(keepdim)).to(dtype)

def mean(input: Tensor, dim: Optional[BroadcastingList1[int]] = None, *, keepdim: Optional[bool] = False,
         dtype: Optional[int] = None, mask: Optional[Tensor] = None) -> Tensor:
    if dtype is None:
        dtype = input.dtype
        if not _floating_or_complex(dtype):
            raise ValueError("mean(): Could not infer output dtype. Input dtype must be either a floating point or "
                             "complex dtype. Got: " + str(dtype))
    elif not _floating_or_complex(dtype):
        raise ValueError("mean(): Could not infer output dtype. Optional dtype must be either a floating point or "
                         "complex dtype. Got: " + str(dtype))
    _strided(input, "torch.masked.mean")
    if mask is not None:
        mask = _input_mask(input, mask)
    return _total(input, dim, _flag(keepdim), dtype, mask) / _count(input, dim, _flag(keepdim), mask)

def median(input: Tensor, dim: int = -1, *, keepdim: bool = False, dtype: Optional[int] = None,
           mask: Optional[Tensor] = None) -> Tensor:
    _strided(input, "torch.masked.median")
    if dtype is None:
        dtype = input.dtype
    d = _wrapped_dim(dim, input.dim())
    is_float = input.is_floating_point()
    if not is_float:
        input = input.to(torch.float32)
    output = _nanmedian(_masked_input(input, mask, "median"), d, keepdim)
    if is_float:
        return output
    if bool(torch.isnan(output).any()):
        raise ValueError("masked median expects no fully masked out rows if dtype is not floating point")
    return output.to(dtype)

def logsumexp(input: Tensor, dim: Optional[BroadcastingList1[int]] = None, *, keepdim: bool = False,
              dtype: Optional[int] = None, mask: Optional[Tensor] = None) -> Tensor:
    _strided(input, "torch.masked.logsumexp")
    if dtype is None:
        dtype = input.dtype
    dims = _canonical_dim(dim, input.dim())
    return torch.logsumexp(_masked_input(input, mask, "logsumexp"), dims, keepdim).to(dtype)

def logaddexp(input: Tensor, other: Tensor, *, dtype: Optional[int] = None, input_mask: Optional[Tensor] = None,
              other_mask: Optional[Tensor] = None) -> Tensor:
    _strided(input, "torch.masked.logaddexp")
    _strided(other, "torch.masked.logaddexp")
    if dtype is None:
        dtype = input.dtype
    masked_input = _masked_input(input, input_mask, "amax")
    return torch.logaddexp(masked_input, _masked_input(other, other_mask, "amax")).to(dtype)

def norm(input: Tensor, ord: Optional[number] = 2.0, dim: Optional[BroadcastingList1[int]] = None, *,
         keepdim: Optional[bool] = False, dtype: Optional[int] = None, mask: Optional[Tensor] = None) -> Tensor:
    if ord is None:
        raise ValueError("tsjit's torch.masked.norm expects a number as ord (got None)")
    return _vector_norm(input, float(ord), dim, _flag(keepdim), dtype, mask)

def var(input: Tensor, dim: Optional[BroadcastingList1[int]] = None, unbiased: Optional[bool] = None, *,
        correction: Optional[number] = None, keepdim: Optional[bool] = False, dtype: Optional[int] = None,
        mask: Optional[Tensor] = None) -> Tensor:
    return _std_var(input, dim, unbiased, correction, _flag(keepdim), dtype, mask, False)

def std(input: Tensor, dim: Optional[BroadcastingList1[int]] = None, unbiased: Optional[bool] = None, *,
        correction: Optional[number] = None, keepdim: Optional[bool] = False, dtype: Optional[int] = None,
        mask: Optional[Tensor] = None) -> Tensor:
    return _std_var(input, dim, unbiased, correction, _flag(keepdim), dtype, mask, True)

def softmax(input: Tensor, dim: int, *, dtype: Optional[int] = None, mask: Optional[Tensor] = None) -> Tensor:
    masked, d = _along(input, dim, dtype, mask, "softmax", "amax")
    return torch.softmax(masked, d)

def log_softmax(input: Tensor, dim: int, *, dtype: Optional[int] = None, mask: Optional[Tensor] = None) -> Tensor:
    masked, d = _along(input, dim, dtype, mask, "log_softmax", "amax")
    return torch.log_softmax(masked, d)

def softmin(input: Tensor, dim: int, *, dtype: Optional[int] = None, mask: Optional[Tensor] = None) -> Tensor:
    masked, d = _along(input, dim, dtype, mask, "softmin", "amin")
    return torch.softmax(-masked, d)

def normalize(input: Tensor, ord: number, dim: int, *, eps: float = 1e-12, dtype: Optional[int] = None,
              mask: Optional[Tensor] = None) -> Tensor:
    _strided(input, "torch.masked.normalize")
    if dtype is None:
        dtype = input.dtype
    norms = _vector_norm(input, float(ord), [dim], True, dtype, mask)
    denominator = torch.maximum(norms, torch.full([], eps, dtype=norms.dtype, device=norms.device))
    return _masked_input(input, mask, "sum") / denominator
'''

# The Python module whose functions each source defines, and the prefix of their qualified names (the names
# torch.jit would give them, which archives spell).
_SOURCES = {"torch.masked._ops": MASKED}


class _Definitions:
    """Each source compiled on the first lookup of a function of its module (under a lock: scripting may run on
    several threads), then looked up by name."""

    def __init__(self):
        self.functions: dict[str, dict[str, GraphFunction]] = {}
        self.lock = threading.Lock()

    def get(self, module: str, name: str) -> GraphFunction | None:
        with self.lock:
            if module not in self.functions:
                resolver = PythonResolver({"torch": torch, "math": math,
                                           "BroadcastingList1": torch._jit_internal.BroadcastingList1})
                compiled = compile_source(_SOURCES[module], resolver, prefix=f"__torch__.{module}")
                self.functions[module] = {function.name.rsplit(".", 1)[-1]: function for function in compiled}
        return self.functions[module].get(name)


_DEFINITIONS = _Definitions()


def library_definition(obj: Any) -> GraphFunction | None:
    """tsjit's definition of the public library function `obj` (`torch.masked.sum`), compiled; None when it has
    none. Helpers (names starting with `_`) are not public: `torch.masked._ops._canonical_dim` stays Python."""
    module, name = getattr(obj, "__module__", None), getattr(obj, "__name__", None)
    if module not in _SOURCES or not isinstance(name, str) or name.startswith("_"):
        return None
    if getattr(sys.modules.get(module), name, None) is not obj:
        return None
    function = _DEFINITIONS.get(module, name)
    if function is not None:
        function.ensure_defined()
    return function
