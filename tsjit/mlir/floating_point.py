"""The parts of floating-point numbers in TorchScript, for decompositions.DECOMPOSITIONS: `aten::frexp` and
`aten::nextafter` are not in the torch dialect, and its backends have no view of a float's bits (torch-mlir's
`aten.view.dtype` reaches linalg as an illegal `torch.constant.int`).

`frexp` splits x into a mantissa in [0.5, 1) with x's sign and an int32 exponent, x = mantissa * 2^exponent, by
scaling x with powers of two, each scaling exact: down by 2^64, 2^64, 2^32 ... 2^1 where it is at least twice
that, then up where it stays below 1 (the binary digits of the exponent, greedily; 64 twice covers float32's
exponents from the smallest subnormal, 2^-149, to 2^128; float64's take 512 twice). Half-precision floats are split
in float32, as ATen's kernel does; 0, infinities and NaN are their own mantissa with exponent 0, as std::frexp.
Subnormal inputs split exactly in eager PyTorch; IREE's CPU code reads them as 0 once fused with other arithmetic
(1e-45 * 2^64 is 0 in a dispatch of several ops, and `x == 0` holds), and without a view of the bits nothing
tells them from 0: there they split as 0 does, (x, 0).

`nextafter` moves x's mantissa by one unit in its last place (2^-24 or 2^-53 of [0.5, 1); half that where it
leaves 0.5 toward 0, since the binade below is finer) and scales it back by the exponent with the same exact
scalings; from 0 it gives the smallest subnormal of the direction's sign, from an infinity the largest finite
float, y for x == y, NaN for a NaN, as std::nextafter (results that are subnormal: see above).
"""

from __future__ import annotations

FLOATING_POINT = """
def _scaled_to_mantissa(x: Tensor, steps: List[int]) -> Tuple[Tensor, Tensor]:
  exponent = torch.zeros_like(x, dtype=3)  # torch.int32
  for step in steps:
    down = torch.abs(x) >= 2.0 ** (step - 1)
    x = torch.where(down, x * 2.0 ** -step, x)
    exponent = torch.where(down, exponent + step, exponent)
  for step in steps:
    up = torch.abs(x * 2.0 ** step) < 1.0
    x = torch.where(up, x * 2.0 ** step, x)
    exponent = torch.where(up, exponent - step, exponent)
  return x, exponent
def _scaled_by(x: Tensor, exponent: Tensor, steps: List[int]) -> Tensor:
  # x 2^exponent, by the same exact scalings (x a mantissa, so that every partial product lies between x and the
  # result)
  for step in steps:
    up = exponent >= step
    x = torch.where(up, x * 2.0 ** step, x)
    exponent = torch.where(up, exponent - step, exponent)
    down = exponent <= -step
    x = torch.where(down, x * 2.0 ** -step, x)
    exponent = torch.where(down, exponent + step, exponent)
  return x
def _steps(double: bool) -> List[int]:
  top = 512 if double else 64
  return [top] + [top >> i for i in range(10 if double else 7)]
def frexp__Tensor(self: Tensor) -> Tuple[Tensor, Tensor]:
  double = self.dtype == 7  # torch.float64
  x = self if double else self.to(6)
  mantissa, exponent = _scaled_to_mantissa(x, _steps(double))
  # (a zero stays 0, below 0.5; every other finite x ends in [0.5, 1))
  special = torch.logical_or(torch.abs(mantissa) < 0.5, torch.logical_not(torch.isfinite(x)))
  return torch.where(special, x, mantissa).to(self.dtype), torch.where(special, 0, exponent)
def nextafter(self: Tensor, other: Tensor) -> Tensor:
  # the mantissa in [0.5, 1) moved by one unit in its last place (24 or 53 bits), half a unit where it leaves 0.5
  # toward 0 (the binade below is finer), then scaled back
  double = self.dtype == 7
  x = self + torch.zeros_like(other)
  y = other + torch.zeros_like(self)
  mantissa, exponent = _scaled_to_mantissa(x, _steps(double))
  unit = 2.0 ** -53 if double else 2.0 ** -24
  upward = y > x
  toward_zero = upward != (mantissa > 0)
  step = torch.where(torch.logical_and(toward_zero, torch.abs(mantissa) == 0.5), unit / 2, unit)
  moved = _scaled_by(torch.where(upward, mantissa + step, mantissa - step), exponent, _steps(double))
  smallest = 5e-324 if double else 1.401298464324817e-45
  largest = 1.7976931348623157e308 if double else 3.4028234663852886e38
  # (limits as tensors of x's dtype: a where of two numbers is float32, which holds neither float64 limit)
  result = torch.where(x == 0, torch.where(upward, torch.full_like(x, smallest), torch.full_like(x, -smallest)), moved)
  result = torch.where(torch.isinf(x), torch.where(x > 0, torch.full_like(x, largest), torch.full_like(x, -largest)),
                       result)
  return torch.where(torch.isnan(x + y), x + y, torch.where(x == y, y, result)).to(self.dtype)
"""

# the overloads above, of floating tensors (see decompositions._ONLY_WHEN)
FLOATING_ONLY = ("frexp__Tensor",)

# the overloads above whose two arguments must have one floating dtype, as ATen's (see decompositions._ONLY_WHEN)
OF_LIKE_FLOATS = ("nextafter",)
