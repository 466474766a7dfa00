"""Scalars and strings as PyTorch's C++ prints them: the one home of double, complex and string printing.

c10 prints a double two ways, and both are PyTorch's output, so both are here:
- `format_double` is IValue::repr, used for graph constants, ivalues and TorchScript source: an integral value
  below 1e10 as `2.` (keeping the sign of zero: `-0.`), anything else with 17 significant digits (`1e+20`,
  `0.10000000000000001`), NaN as glibc prints it (`nan`, or `-nan` when the sign bit is set).
- `format_default_double` is `operator<<` on an IValue, used for schema defaults: an integral value in int64's
  range as `2.` (`4611686018427387904.`; zero prints as `0.` whatever its sign), anything else as above.
`quote_string` is c10::printQuotedString.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from tsjit.ir.constants import INT64_MAX, INT64_MIN


def format_double(value: float) -> str:
    """C++ IValue::repr of a double: `2.`, `-0.`, `0.10000000000000001`, `1e+20`, `inf`, `nan`, `-nan`."""
    if math.isfinite(value) and abs(value) < 1e10 and value == math.trunc(value):
        return ("-" if math.copysign(1.0, value) < 0 else "") + f"{abs(int(value))}."
    return _format_non_integral(value)


def format_default_double(value: float) -> str:
    """C++ `operator<<` of a double IValue (schema defaults): integral values in int64 range as `2.`."""
    if math.isfinite(value) and value == math.floor(value) and INT64_MIN <= value <= INT64_MAX:
        return f"{int(value)}."
    return _format_non_integral(value)


def _format_non_integral(value: float) -> str:
    """%.17g, with NaN's sign printed as glibc prints it (Python's formatting drops it)."""
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    return f"{value:.17g}"


def format_complex(value: complex, format_part: Callable[[float], str] = format_double) -> str:
    """`2.+1.j`, `0.5-1e+20j`; the sign is `-` for a negative or NaN imaginary part (`1.-nanj`)."""
    sign = "+" if value.imag >= 0 else "-"
    return f"{format_part(value.real)}{sign}{format_part(abs(value.imag))}j"


_C_ESCAPES = {ord("\\"): "\\\\", ord("'"): "\\'", ord('"'): '\\"', 7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n",
              13: "\\r", 9: "\\t", 11: "\\v"}


def quote_string(text: str) -> str:
    """c10::printQuotedString: double quotes, C escapes, printable ASCII as is, every other byte of the UTF-8
    encoding as a three-character octal escape computed on a *signed* char, so non-ASCII text comes out mangled
    exactly as in PyTorch's output: `é` (bytes C3 A9) prints as `\\0)+\\/.)`."""
    return '"' + "".join(_quote_byte(b) for b in text.encode("utf-8", "surrogatepass")) + '"'


def _quote_byte(byte: int) -> str:
    if byte in _C_ESCAPES:
        return _C_ESCAPES[byte]
    if 0x1F < byte < 0x7F:
        return chr(byte)
    return "\\" + _signed_char_octal(byte - 256 if byte > 127 else byte)


def _signed_char_octal(value: int) -> str:
    """Three "octal digits" computed with C's truncating division, as c10 does for a signed char."""
    digits = []
    for _ in range(2):
        digits.append(chr(ord("0") + int(math.fmod(value, 8))))
        value = int(value / 8)
    digits.append(chr(ord("0") + value))
    return "".join(reversed(digits))
