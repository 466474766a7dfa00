"""torch.special's orthogonal polynomials and Bessel functions in TorchScript, for decompositions.DECOMPOSITIONS.

The torch dialect has none of these operators (`aten::special_chebyshev_polynomial_t`, `aten::special_i0e`...), so
each is written with the elementwise operators it has, computing what ATen's CPU kernel computes:

- a polynomial of a tensor degree `n` (truncated to an integer, as ATen does) runs its three-term recurrence in a
  loop whose trip count is the largest degree that needs it, `int(...max())`, known only at run time; each
  element keeps the value of the step that reaches its own degree. ATen's shortcuts (the closed forms
  `cos(n acos x)` for large degrees inside (-1, 1), the values at the ends of the interval, 0 for a negative
  degree) are taken where ATen takes them, so results agree to rounding.
- Bessel functions use the Chebyshev expansions of the Cephes Math Library (3-clause BSD, as in ATen), summed by
  Clenshaw's recurrence `_chebyshev_series` unrolled over the constant coefficient list.
"""

from __future__ import annotations

SPECIAL_FUNCTIONS = """
def _degree(x: Tensor, n: Tensor) -> Tuple[Tensor, Tensor]:
  # x broadcast with n, and n truncated toward zero to int64 (NaN and infinities become -1: no polynomial)
  finite = torch.logical_and(n == n, torch.abs(n) != float("inf"))  # (isfinite: not lowered to linalg)
  degree = torch.where(finite, n, torch.full_like(n, -1.0)).to(4)  # torch.int64
  return x * torch.ones_like(n), degree * torch.ones_like(x, dtype=4)
def _chebyshev_recurrence(y: Tensor, m: Tensor, first: Tensor, needed: Tensor) -> Tensor:
  # P(m) of P(0) = 1, P(1) = first, P(k + 1) = 2 y P(k) - P(k - 1), for m >= 0 where `needed` (else 0)
  previous = torch.ones_like(y)
  current = first
  result = torch.where(m == 0, previous, torch.where(m == 1, first, torch.zeros_like(y)))
  steps = int(torch.where(needed, m, torch.zeros_like(m)).max())
  for k in range(2, steps + 1):
    previous, current = current, (y + y) * current - previous
    result = torch.where(m == k, current, result)
  return result
def _chebyshev_t(y: Tensor, m: Tensor, at_one: Tensor, at_minus_one: Tensor, closed_above: int) -> Tensor:
  closed = torch.logical_and(m > closed_above, torch.abs(y) < 1)
  ends = torch.logical_or(at_one, at_minus_one)
  result = _chebyshev_recurrence(y, m, y, torch.logical_not(torch.logical_or(closed, ends)))
  result = torch.where(closed, torch.cos(m * torch.acos(y)), result)
  sign = torch.where(torch.logical_or(at_one, m % 2 == 0), torch.ones_like(y), -torch.ones_like(y))
  return torch.where(m < 0, torch.zeros_like(y), torch.where(ends, sign, result))
def _chebyshev_v(y: Tensor, m: Tensor, at_one: Tensor, at_minus_one: Tensor, closed_above: int) -> Tensor:
  closed = torch.logical_and(m > closed_above, torch.abs(y) < 1)
  ends = torch.logical_or(at_one, at_minus_one)
  result = _chebyshev_recurrence(y, m, y + y - 1, torch.logical_not(torch.logical_or(closed, ends)))
  angle = torch.acos(y)
  odd_end = torch.where(m % 2 == 0, 2 * m + 1, -(2 * m + 1)).to(y.dtype)
  trigonometric = torch.where(torch.sin(angle / 2) != 1, torch.cos((m + 0.5) * angle) / torch.cos(angle / 2), odd_end)
  result = torch.where(closed, trigonometric, result)
  result = torch.where(at_minus_one, odd_end, torch.where(at_one, torch.ones_like(y), result))
  return torch.where(m < 0, torch.zeros_like(y), result)
def _chebyshev_u(y: Tensor, m: Tensor) -> Tensor:
  closed = torch.logical_and(m > 8, torch.abs(y) < 1)
  ends = torch.abs(y) == 1
  result = _chebyshev_recurrence(y, m, y + y, torch.logical_not(torch.logical_or(closed, ends)))
  angle = torch.acos(y)
  trigonometric = torch.where(torch.sin(angle) != 0, torch.sin((m + 1) * angle) / torch.sin(angle),
                              (m + 1) * torch.cos((m + 1) * angle) / y)
  result = torch.where(closed, trigonometric, result)
  end = torch.where(torch.logical_or(y > 0, m % 2 == 0), m + 1, -(m + 1)).to(y.dtype)
  return torch.where(m < 0, torch.zeros_like(y), torch.where(ends, end, result))
def _chebyshev_w(y: Tensor, m: Tensor) -> Tensor:
  closed = torch.logical_and(m > 8, torch.abs(y) < 1)
  ends = torch.abs(y) == 1
  result = _chebyshev_recurrence(y, m, y + y + 1, torch.logical_not(torch.logical_or(closed, ends)))
  angle = torch.acos(y)
  end = torch.where(y > 0, 2 * m + 1, torch.where(m % 2 == 0, torch.ones_like(m), -torch.ones_like(m))).to(y.dtype)
  trigonometric = torch.where(torch.cos(angle / 2) != 1, torch.sin((m + 0.5) * angle) / torch.sin(angle / 2), end)
  result = torch.where(closed, trigonometric, result)
  return torch.where(m < 0, torch.zeros_like(y), torch.where(ends, end, result))
def special_chebyshev_polynomial_t(x: Tensor, n: Tensor) -> Tensor:
  y, m = _degree(x, n)
  return _chebyshev_t(y, m, y == 1, y == -1, 6)
def special_chebyshev_polynomial_u(x: Tensor, n: Tensor) -> Tensor:
  y, m = _degree(x, n)
  return _chebyshev_u(y, m)
def special_chebyshev_polynomial_v(x: Tensor, n: Tensor) -> Tensor:
  y, m = _degree(x, n)
  return _chebyshev_v(y, m, y == 1, y == -1, 8)
def special_chebyshev_polynomial_w(x: Tensor, n: Tensor) -> Tensor:
  y, m = _degree(x, n)
  return _chebyshev_w(y, m)
def special_shifted_chebyshev_polynomial_t(x: Tensor, n: Tensor) -> Tensor:
  y, m = _degree(x, n)
  return _chebyshev_t(y + y - 1, m, y == 1, y == 0, 6)
def special_shifted_chebyshev_polynomial_v(x: Tensor, n: Tensor) -> Tensor:
  y, m = _degree(x, n)
  return _chebyshev_v(y + y - 1, m, y == 1, y == 0, 6)
def _hermite(x: Tensor, n: Tensor, scale: float) -> Tensor:
  # H (scale 2) or He (scale 1): P(0) = 1, P(1) = scale x, P(k + 1) = scale x P(k) - scale k P(k - 1)
  y, m = _degree(x, n)
  limit = 512 if y.dtype == 7 else 128  # the highest degree ATen computes in float64, else float32 (then NaN)
  first = y * scale
  result = torch.where(m == 0, torch.ones_like(y), torch.where(m == 1, first, torch.zeros_like(y)))
  previous = torch.ones_like(y)
  current = first
  for k in range(1, min(int(m.max()), limit)):
    previous, current = current, first * current - (scale * k) * previous
    result = torch.where(m == k + 1, current, result)
  return torch.where(m > limit, torch.full_like(y, float("nan")), result)
def special_hermite_polynomial_h(x: Tensor, n: Tensor) -> Tensor:
  return _hermite(x, n, 2.0)
def special_hermite_polynomial_he(x: Tensor, n: Tensor) -> Tensor:
  return _hermite(x, n, 1.0)
def special_laguerre_polynomial_l(x: Tensor, n: Tensor) -> Tensor:
  y, m = _degree(x, n)
  result = torch.where(m == 0, torch.ones_like(y), torch.where(m == 1, 1 - y, torch.zeros_like(y)))
  previous = torch.ones_like(y)
  current = 1 - y
  for k in range(1, int(m.max())):
    previous, current = current, ((k + k + (1 - y)) * current - k * previous) / (k + 1)
    result = torch.where(m == k + 1, current, result)
  return torch.where(m < 0, torch.zeros_like(y), torch.where(y == 0, torch.ones_like(y), result))
def special_legendre_polynomial_p(x: Tensor, n: Tensor) -> Tensor:
  y, m = _degree(x, n)
  result = torch.where(m == 0, torch.ones_like(y), torch.where(m == 1, y, torch.zeros_like(y)))
  previous = torch.ones_like(y)
  current = y
  for k in range(1, int(m.max())):
    previous, current = current, ((k + k + 1) * y * current - k * previous) / (k + 1)
    result = torch.where(m == k + 1, current, result)
  sign = torch.where(torch.logical_or(y > 0, m % 2 == 0), torch.ones_like(y), -torch.ones_like(y))
  return torch.where(m < 0, torch.zeros_like(y), torch.where(torch.abs(y) == 1, sign, result))
def special_spherical_bessel_j0(x: Tensor) -> Tensor:
  square = x * x
  series = 1.0 + square * (-1.0 / 6.0 + square * (1.0 / 120.0 + square * (-1.0 / 5040.0 + square * (
      1.0 / 362880.0 + square * (-1.0 / 39916800.0 + square * (1.0 / 6227020800.0))))))
  result = torch.where(torch.abs(x) < 0.5, series, torch.sin(x) / x)
  return torch.where(torch.isinf(x), torch.zeros_like(x), result)
"""

# the operators above, defined for floating arguments (see decompositions._ONLY_WHEN)
FLOATING_ONLY = ("special_chebyshev_polynomial_t", "special_chebyshev_polynomial_u", "special_chebyshev_polynomial_v",
                 "special_chebyshev_polynomial_w", "special_shifted_chebyshev_polynomial_t",
                 "special_shifted_chebyshev_polynomial_v", "special_hermite_polynomial_h",
                 "special_hermite_polynomial_he", "special_laguerre_polynomial_l", "special_legendre_polynomial_p",
                 "special_spherical_bessel_j0")
