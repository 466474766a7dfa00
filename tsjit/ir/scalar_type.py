"""The integer codes TorchScript uses for dtypes, layouts and memory formats.

In the IR a dtype is an `int` (a `ScalarType` argument in schemas): `%d : int = prim::Constant[value=6]()` is
torch.float32. These tables translate between the codes and torch's objects, in c10's enum order.
"""

from __future__ import annotations

import torch

_DTYPE_NAMES = (
    "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "complex32", "complex64",
    "complex128", "bool", "qint8", "quint8", "qint32", "bfloat16", "quint4x2", "quint2x4", "bits1x8", "bits2x4",
    "bits4x2", "bits8", "bits16", "float8_e5m2", "float8_e4m3fn", "float8_e5m2fnuz", "float8_e4m3fnuz", "uint16",
    "uint32", "uint64", "uint1", "uint2", "uint3", "uint4", "uint5", "uint6", "uint7", "int1", "int2", "int3",
    "int4", "int5", "int6", "int7", "float8_e8m0fnu", "float4_e2m1fn_x2",
)
DTYPES: tuple[torch.dtype | None, ...] = tuple(getattr(torch, name, None) for name in _DTYPE_NAMES)
_DTYPE_CODES = {dtype: code for code, dtype in enumerate(DTYPES) if dtype is not None}

# torch._mkldnn exists at runtime (a torch.layout) but is missing from torch's type stubs
LAYOUTS = (torch.strided, torch.sparse_coo, torch.sparse_csr, torch._mkldnn,  # type: ignore[attr-defined]
           torch.sparse_csc, torch.sparse_bsr, torch.sparse_bsc, torch.jagged)
MEMORY_FORMATS = (torch.contiguous_format, torch.preserve_format, torch.channels_last, torch.channels_last_3d)


def dtype_to_code(dtype: torch.dtype) -> int:
    return _DTYPE_CODES[dtype]


def code_to_dtype(code: int) -> torch.dtype:
    dtype = DTYPES[code] if 0 <= code < len(DTYPES) else None
    if dtype is None:
        raise ValueError(f"{code} is not a ScalarType code")
    return dtype


def layout_to_code(layout: torch.layout) -> int:
    return LAYOUTS.index(layout)


def memory_format_to_code(memory_format: torch.memory_format) -> int:
    return MEMORY_FORMATS.index(memory_format)
