"""The regularized incomplete gamma functions (`aten::igamma`, `aten::igammac`) in TorchScript, for
decompositions.DECOMPOSITIONS.

The torch dialect has neither. ATen computes them as the Cephes Math Library does (3-clause BSD), and so does
this, elementwise with the operators the dialect has: the lower function P(a, x) by its power series where
x <= 1 or x <= a, else as 1 - Q(a, x) with Q by Legendre's continued fraction (Cephes' igamc, its partial
numerators and denominators rescaled before they overflow). Cephes stops each at the first term below double
precision; a loop of tensors cannot stop per element, so both run `_TERMS` terms, which reach double precision
for a up to about a thousand (the series needs about sqrt(32 a) terms where x ~ a). Where a ~ x and a > 20 ATen
uses an asymptotic expansion instead, whose factor x^a e^-x / Gamma(a) it computes without cancellation: in
float32, `a log x - x - lgamma(a)` loses digits there as a grows (1.5e-4 of 0.5 at a = x = 1000). The boundary
values (a or x zero, negative or infinite) are ATen's.
"""

from __future__ import annotations

_TERMS = 200

INCOMPLETE_GAMMA = f"""
def _igamma_prefactor(a: Tensor, x: Tensor) -> Tensor:
  # x^a e^-x / Gamma(a)
  return torch.exp(a * torch.log(x) - x - lgamma(a))
def _igamma_series(a: Tensor, x: Tensor) -> Tensor:
  # P(a, x) = x^a e^-x / Gamma(a + 1) * sum x^k / ((a + 1) ... (a + k))
  r = a
  term = torch.ones_like(a)
  total = torch.ones_like(a)
  for i in range({_TERMS}):
    r = r + 1
    term = term * x / r
    total = total + term
  return total * _igamma_prefactor(a, x) / a
def _igammac_continued_fraction(a: Tensor, x: Tensor) -> Tensor:
  # Q(a, x) = x^a e^-x / Gamma(a) * 1 / (x + (1 - a) / (1 + 1 / (x + (2 - a) / (1 + 2 / (x + ...)))))
  y = 1 - a
  z = x + y + 1
  c = torch.zeros_like(a)
  p2 = torch.ones_like(a)
  q2 = x
  p1 = x + 1
  q1 = z * x
  ratio = p1 / q1
  for i in range({_TERMS}):
    c = c + 1
    y = y + 1
    z = z + 2
    yc = y * c
    p = p1 * z - p2 * yc
    q = q1 * z - q2 * yc
    ratio = torch.where(q != 0, p / torch.where(q != 0, q, torch.ones_like(q)), ratio)
    scale = torch.where(torch.abs(p) > 4.503599627370496e15, torch.full_like(p, 2.220446049250313e-16),
                        torch.ones_like(p))
    p2 = p1 * scale
    p1 = p * scale
    q2 = q1 * scale
    q1 = q * scale
  return ratio * _igamma_prefactor(a, x)
def _igamma_boundaries(a: Tensor, x: Tensor, inside: Tensor, at_zero_x: float, at_zero_a: float,
                       at_infinite_x: float) -> Tensor:
  # ATen's values where a or x is zero, negative or infinite, else `inside`
  nan = torch.full_like(inside, float("nan"))
  result = torch.where(torch.isinf(x), torch.full_like(inside, at_infinite_x), inside)
  result = torch.where(torch.isinf(a), torch.where(torch.isinf(x), nan, torch.full_like(inside, at_zero_x)), result)
  result = torch.where(x == 0, torch.full_like(inside, at_zero_x), result)
  result = torch.where(a == 0, torch.where(x > 0, torch.full_like(inside, at_zero_a), nan), result)
  return torch.where(torch.logical_or(torch.logical_or(x < 0, a < 0), torch.logical_or(torch.isnan(a), torch.isnan(
      x))), nan, result)
def _igamma_parts(self: Tensor, other: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
  # (a, x) broadcast, with 1 where a boundary value replaces the result (their logarithms stay finite), and
  # whether the continued fraction converges there (x > 1 and x > a) rather than the series
  a = self + torch.zeros_like(other)
  x = other + torch.zeros_like(self)
  regular = torch.logical_and(torch.logical_and(a > 0, x > 0), torch.logical_not(torch.logical_or(torch.isinf(a),
                                                                                               torch.isinf(x))))
  a = torch.where(regular, a, torch.ones_like(a))
  x = torch.where(regular, x, torch.ones_like(x))
  return a, x, torch.logical_and(x > 1, x > a)
def igamma(self: Tensor, other: Tensor) -> Tensor:
  a, x, upper = _igamma_parts(self, other)
  inside = torch.where(upper, 1 - _igammac_continued_fraction(a, x), _igamma_series(a, x))
  return _igamma_boundaries(self + torch.zeros_like(other), other + torch.zeros_like(self), inside, 0.0, 1.0, 1.0)
def igammac(self: Tensor, other: Tensor) -> Tensor:
  a, x, upper = _igamma_parts(self, other)
  inside = torch.where(upper, _igammac_continued_fraction(a, x), 1 - _igamma_series(a, x))
  return _igamma_boundaries(self + torch.zeros_like(other), other + torch.zeros_like(self), inside, 1.0, 0.0, 0.0)
"""
