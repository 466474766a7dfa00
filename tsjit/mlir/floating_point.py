"""The parts of floating-point numbers in TorchScript, for decompositions.DECOMPOSITIONS: `aten::frexp` is not in
the torch dialect, and its backends have no view of a float's bits (torch-mlir's `aten.view.dtype` reaches linalg
as an illegal `torch.constant.int`).

`frexp` splits x into a mantissa in [0.5, 1) with x's sign and an int32 exponent, x = mantissa * 2^exponent, by
scaling x with powers of two, each scaling exact: down by 2^64, 2^64, 2^32 ... 2^1 where it is at least twice
that, then up where it stays below 1 (the binary digits of the exponent, greedily; 64 twice covers float32's
exponents from the smallest subnormal, 2^-149, to 2^128; float64's take 512 twice). Half-precision floats are split
in float32, as ATen's kernel does; 0, infinities and NaN are their own mantissa with exponent 0, as std::frexp.
Subnormal inputs split exactly in eager PyTorch; IREE's CPU code reads them as 0 once fused with other arithmetic
(1e-45 * 2^64 is 0 in a dispatch of several ops, and `x == 0` holds), and without a view of the bits nothing
tells them from 0: there they split as 0 does, (x, 0).
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
def frexp__Tensor(self: Tensor) -> Tuple[Tensor, Tensor]:
  double = self.dtype == 7  # torch.float64
  x = self if double else self.to(6)
  top = 512 if double else 64
  mantissa, exponent = _scaled_to_mantissa(x, [top] + [top >> i for i in range(10 if double else 7)])
  # (a zero stays 0, below 0.5; every other finite x ends in [0.5, 1))
  special = torch.logical_or(torch.abs(mantissa) < 0.5, torch.logical_not(torch.isfinite(x)))
  return torch.where(special, x, mantissa).to(self.dtype), torch.where(special, 0, exponent)
"""

# the overloads above, of floating tensors (see decompositions._ONLY_WHEN)
FLOATING_ONLY = ("frexp__Tensor",)
