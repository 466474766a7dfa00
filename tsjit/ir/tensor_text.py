"""Tensor constants in graph text: printing them as PyTorch does and reading them back.

A tensor attribute prints in one of three forms, chosen by its number of elements (C++ `printAttribute` in
ir.cpp, which calls ATen's legacy `print` for the middle form and replaces its newlines by spaces):

    %a : Long(requires_grad=0, device=cpu) = prim::Constant[value={7}]()                         1 element
    %b : Float(2, strides=[1], ...) = prim::Constant[value=0.001 *  1.0000  2.0000 [ CPUFloatType{2} ]]()
    %c : Float(4, 4, strides=[4, 1], ...) = prim::Constant[value=<Tensor>]()                     > 10 elements

The first two are lossy (6 and 4 significant digits); the last carries no data at all, so reading it back
gives zeros of the declared type's shape. Reading back a printed form and printing it again gives the same
text except where rounding changed the format PyTorch picks (say 9.99996 printed as 10.0000 reads back as
an integer, which prints as 10).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import cast

import torch

from tsjit.ir.types import TensorType, dtype_from_name, dtype_name

MAX_TENSOR_DISPLAY_SIZE = 10
LINE_SIZE = 80
ELIDED_TENSOR = "<Tensor>"

# `[ CPUFloatType{2,2} ]`: backend, dtype name and sizes, closing the inline form
_SUFFIX = re.compile(r"\[ (?P<type>[A-Za-z0-9_]+)Type\{(?P<sizes>[0-9,]*)\} \]")


# --------------------------------------------------------------------------------------------------- printing

def format_tensor(tensor: torch.Tensor) -> str:
    """The text of a tensor attribute value: `{x}`, the inline legacy print, or `<Tensor>`."""
    if tensor.numel() == 1:
        return "{" + _format_scalar(tensor.reshape(()).item()) + "}"
    if tensor.numel() <= MAX_TENSOR_DISPLAY_SIZE:
        return legacy_print(tensor).replace("\n", " ")
    return ELIDED_TENSOR


def _format_scalar(value: bool | int | float | complex) -> str:
    """A one-element tensor's value as a C++ ostream prints a double, an int64 or a complex (precision 6)."""
    if isinstance(value, complex):
        return f"({format_general(value.real)},{format_general(value.imag)})"
    if isinstance(value, float):
        return format_general(value)
    return str(int(value))


def format_general(value: float, width: int = 0) -> str:
    """`%g` (six significant digits), right-aligned in `width`, with glibc's sign on NaN."""
    return _signed_nan(value, f"{value:>{width}g}")


def _format_fixed(value: float, width: int) -> str:
    return _signed_nan(value, f"{value:>{width}.4f}")


def _format_scientific(value: float, width: int) -> str:
    return _signed_nan(value, f"{value:>{width}.4e}")


def _signed_nan(value: float, text: str) -> str:
    """C and fmt print a NaN whose sign bit is set as `-nan`; Python drops the sign."""
    if math.isnan(value) and math.copysign(1.0, value) < 0:
        return ("-" + text.strip()).rjust(len(text))
    return text


def _format_shortest(value: float) -> str:
    """fmt's `{}` for a double: the shortest digits that read back exactly, no trailing `.0`."""
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


@dataclass(frozen=True)
class _PrintFormat:
    """How ATen prints the numbers of one vector or matrix: a common scale, a column width and a style."""

    scale: float
    width: int
    style: str  # "general" (%g), "fixed" (%.4f) or "scientific" (%.4e)

    def number(self, value: float) -> str:
        scaled = value / self.scale
        if self.style == "general":
            return format_general(scaled, self.width)
        if self.style == "fixed":
            return _format_fixed(scaled, self.width)
        return _format_scientific(scaled, self.width)


def _print_format(values: list[float]) -> _PrintFormat:
    """ATen's `__printFormat`: integers print as %g, a narrow range as fixed point (scaled if large or small),
    a wide range in scientific notation."""
    if not values:
        return _PrintFormat(1.0, 0, "general")
    int_mode = all(v == math.ceil(v) for v in values if math.isfinite(v))
    finite = [abs(v) for v in values if math.isfinite(v)]
    exp_min = _digits_before_point(min(finite)) if finite else 1
    exp_max = _digits_before_point(max(finite)) if finite else 1
    if int_mode:
        if exp_max > 9:
            return _PrintFormat(1.0, 11, "scientific")
        return _PrintFormat(1.0, exp_max + 1, "general")
    if exp_max - exp_min > 4:
        width = 12 if abs(exp_max) > 99 or abs(exp_min) > 99 else 11
        return _PrintFormat(1.0, width, "scientific")
    if exp_max > 5 or exp_max < 0:
        return _PrintFormat(math.pow(10, exp_max - 1), 7, "fixed")
    return _PrintFormat(1.0, 7 if exp_max == 0 else exp_max + 6, "fixed")


def _digits_before_point(magnitude: float) -> int:
    return math.floor(math.log10(magnitude)) + 1 if magnitude != 0 else 1


def legacy_print(tensor: torch.Tensor) -> str:
    """ATen's `print(stream, tensor, 80)` (the C++ `operator<<` of a Tensor), newlines included."""
    as_double = tensor.detach().to("cpu")
    as_double = (as_double.real if as_double.is_complex() else as_double).to(torch.float64).contiguous()
    out: list[str] = []
    if as_double.dim() == 1:
        _print_vector(out, as_double.tolist())
    elif as_double.dim() == 2 and as_double.numel():
        _print_matrix(out, as_double.tolist(), indent=0)
    elif as_double.dim() > 2 and as_double.numel():
        _print_slices(out, as_double)
    sizes = ",".join(str(s) for s in tensor.shape)
    out.append(f"[ {_type_string(tensor)}{{{sizes}}} ]")
    return "".join(out)


def _type_string(tensor: torch.Tensor) -> str:
    """`CPUFloatType`: the backend and dtype names of ATen's DeprecatedTypeProperties."""
    return tensor.device.type.upper() + dtype_name(tensor.dtype) + "Type"


def _print_vector(out: list[str], values: list[float]) -> None:
    if not values:
        return
    fmt = _print_format(values)
    if fmt.scale != 1:
        out.append(f"{_format_shortest(fmt.scale)} *\n")
    out.extend(fmt.number(v) + "\n" for v in values)


def _print_matrix(out: list[str], rows: list[list[float]], indent: int) -> None:
    """ATen's `__printMatrix`: column chunks that fit in 80 characters, each maybe headed by its scale."""
    fmt = _print_format([v for row in rows for v in row])
    columns = len(rows[0])
    per_line = (LINE_SIZE - indent) // (fmt.width + 1)
    first = 0
    while first < columns:
        last = min(first + per_line, columns) - 1
        if per_line < columns:
            out.append(("\n" if first else "") + f"Columns {first + 1} to {last + 1}" + " " * indent)
        if fmt.scale != 1:
            out.append(f"{_format_shortest(fmt.scale)} *\n" + " " * indent)
        for index, row in enumerate(rows):
            out.append(" ".join(fmt.number(v) for v in row[first:last + 1]) + "\n")
            if index != len(rows) - 1:
                out.append(" " * indent + (" " if fmt.scale != 1 else ""))
        first = last + 1


def _print_slices(out: list[str], tensor: torch.Tensor) -> None:
    """ATen's `__printTensor`: a `(i,j,.,.) = ` matrix per index of the leading dimensions, first fastest."""
    leading = tensor.shape[:-2]
    for number, index in enumerate(_first_fastest(leading)):
        out.append(("\n" if number else "") + "(" + "".join(f"{i + 1}," for i in index) + ".,.) = \n")
        _print_matrix(out, tensor[index].tolist(), indent=1)


def _first_fastest(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """All indices into `shape`, the first dimension varying fastest (ATen's counter order)."""
    indices: list[tuple[int, ...]] = [()]
    for size in shape:
        indices = [prefix + (i,) for i in range(size) for prefix in indices]
    return indices


# ---------------------------------------------------------------------------------------------------- reading

def find_inline_tensor_end(text: str, start: int) -> int | None:
    """The offset just past the `[ CPUFloatType{2} ]` closing an inline tensor, if it starts at `start`."""
    match = _SUFFIX.match(text, start)
    return match.end() if match else None


def parse_tensor(text: str, declared: object = None) -> torch.Tensor:
    """The tensor a printed tensor attribute stands for; `declared` is the output's type, if known.

    Raises ValueError on text that is none of the three forms.
    """
    text = text.strip()
    if text == ELIDED_TENSOR:
        return _placeholder(declared)
    if text.startswith("{") and text.endswith("}"):
        return _parse_scalar(text[1:-1], declared)
    return _parse_inline(text)


def _placeholder(declared: object) -> torch.Tensor:
    """Zeros standing for an elided tensor: the declared shape and dtype when known, else 11 floats (the
    smallest tensor that prints as `<Tensor>` again)."""
    if isinstance(declared, TensorType) and declared.sizes is not None and None not in declared.sizes:
        return torch.zeros(cast(tuple[int, ...], declared.sizes), dtype=declared.dtype or torch.float32)
    return torch.zeros(MAX_TENSOR_DISPLAY_SIZE + 1)


def _parse_scalar(body: str, declared: object) -> torch.Tensor:
    """`{7}`, `{2.5}`, `{nan}`, `{(1,2)}`: dtype and shape come from the declared type when it has them."""
    value = _parse_scalar_value(body)
    dtype = declared.dtype if isinstance(declared, TensorType) and declared.dtype else _default_dtype(value)
    sizes = declared.sizes if isinstance(declared, TensorType) and declared.sizes is not None else ()
    shape = tuple(1 if s is None else s for s in sizes)
    return torch.tensor(value, dtype=dtype).reshape(shape)


def _parse_scalar_value(body: str) -> int | float | complex:
    if body.startswith("(") and body.endswith(")"):
        real, _, imag = body[1:-1].partition(",")
        return complex(_parse_number(real), _parse_number(imag))
    if re.fullmatch(r"-?[0-9]+", body):
        return int(body)
    return _parse_number(body)


def _default_dtype(value: int | float | complex) -> torch.dtype:
    if isinstance(value, complex):
        return torch.complex128
    return torch.float32 if isinstance(value, float) else torch.int64


def _parse_number(text: str) -> float:
    """A number as C or fmt print it, `-nan` included (Python's float() rejects the sign on nan)."""
    text = text.strip()
    if text == "-nan":
        return -math.nan
    return float(text)


def _parse_inline(text: str) -> torch.Tensor:
    """Read the legacy print back: values in print order, regrouped by the `Columns` and `(i,.,.)` markers."""
    match = _SUFFIX.search(text)
    dtype = _suffix_dtype(match.group("type")) if match else None
    if match is None or dtype is None or match.end() != len(text):
        raise ValueError(f"not a printed tensor: {text!r}")
    shape = tuple(int(s) for s in match.group("sizes").split(",") if s)
    data = torch.zeros(shape, dtype=torch.float64)
    if data.dim() == 1:
        data[:] = torch.tensor(_scaled_values(text[:match.start()].split()), dtype=torch.float64)
    elif data.numel():
        _fill_matrices(data, text[:match.start()].split())
    return data.to(dtype)


def _suffix_dtype(type_string: str) -> torch.dtype | None:
    """The dtype of `CPUFloat` / `CUDAComplexFloat` (a type string without `Type`): backend, then dtype."""
    for start in range(1, len(type_string)):
        dtype = dtype_from_name(type_string[start:])
        if dtype is not None and type_string[:start].isupper():
            return dtype
    return None


def _scaled_values(tokens: list[str]) -> list[float]:
    """Numbers of one vector or column chunk, multiplied by the `scale *` prefix if there is one."""
    scale = 1.0
    if len(tokens) >= 2 and tokens[1] == "*":
        scale, tokens = _parse_number(tokens[0]), tokens[2:]
    return [_parse_number(t) * scale for t in tokens]


def _fill_matrices(data: torch.Tensor, tokens: list[str]) -> None:
    """Distribute the tokens of a 2-d or higher print into `data` (double precision, right shape)."""
    for index, chunk in _matrix_chunks(tokens, data.dim()):
        matrix = data[index]
        for columns, values in _column_chunks(chunk, matrix.shape[1]):
            width = columns.stop - columns.start
            block = torch.tensor(_scaled_values(values), dtype=torch.float64).reshape(-1, width)
            matrix[:, columns] = block


def _matrix_chunks(tokens: list[str], rank: int) -> list[tuple[tuple[int, ...], list[str]]]:
    """Split at `(i,j,.,.)` `=` markers; a 2-d print is a single chunk with the empty index."""
    if rank == 2:
        return [((), tokens)]
    chunks: list[tuple[tuple[int, ...], list[str]]] = []
    for token in tokens:
        if token.startswith("(") and token.endswith(".,.)"):
            index = tuple(int(i) - 1 for i in token[1:-5].split(","))
            chunks.append((index, []))
        elif token != "=":
            chunks[-1][1].append(token)
    return chunks


def _column_header_end(token: str, first: int, columns: int) -> tuple[int, str | None]:
    """The last column of a `Columns a to b` header, and the first value when it is glued on: the header
    ends without a space, and a value as wide as its column has no padding (`Columns 1 to 71.60381e+07`)."""
    if token.isdigit() and int(token) <= columns:
        return int(token), None
    for length in range(len(str(columns)), 0, -1):
        head, rest = token[:length], token[length:]
        if head.isdigit() and first <= int(head) <= columns and rest:
            return int(head), rest
    raise ValueError(f"malformed column header ending {token!r}")


def _column_chunks(tokens: list[str], columns: int) -> list[tuple[slice, list[str]]]:
    """Split at `Columns a to b` headers; without headers all columns form one chunk."""
    if not tokens or tokens[0] != "Columns":
        return [(slice(0, columns), tokens)]
    chunks: list[tuple[slice, list[str]]] = []
    position = 0
    while position < len(tokens):
        if tokens[position] == "Columns":
            first = int(tokens[position + 1])
            last, glued_value = _column_header_end(tokens[position + 3], first, columns)
            chunks.append((slice(first - 1, last), [glued_value] if glued_value else []))
            position += 4
        else:
            chunks[-1][1].append(tokens[position])
            position += 1
    return chunks
