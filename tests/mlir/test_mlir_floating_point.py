"""frexp and nextafter (not in the torch dialect), decomposed by tsjit (tsjit/mlir/floating_point.py), lowered to
linalg and run on IREE against eager."""

from __future__ import annotations

import torch
from mlir_corpus import assert_close

import tsjit
import tsjit.mlir
from tsjit.mlir import iree


def assert_identical(got: torch.Tensor, expected: torch.Tensor) -> None:
    """The same floats, bit for bit up to NaN payloads (infinities included)."""
    assert got.dtype == expected.dtype
    assert torch.equal(got.isnan(), expected.isnan())
    assert torch.equal(torch.where(got.isnan(), 0.0, got), torch.where(expected.isnan(), 0.0, expected))
    assert torch.equal(torch.signbit(got), torch.signbit(expected))


def frexp(single: torch.Tensor, double: torch.Tensor, half: torch.Tensor):
    return torch.frexp(single), torch.frexp(double), torch.frexp(half)


def test_frexp_on_iree():
    """Exact mantissas and exponents of the extremes of each dtype's normal range, powers of two and the numbers
    just below them, both signs of 0 (their own mantissa, exponent 0), infinities and NaN; float16 split in
    float32. (Subnormals: IREE reads them as 0, see floating_point.py.)"""
    single = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1.0, 0.5, 3.4e38, -7.0, 0.75,
                           1.1754944e-38, 0.99999994, -1.5e-30, 12345.678, 2.0 ** 127, -(2.0 ** -126)])
    double = torch.tensor([2.2250738585072014e-308, 1e308, -1.7976931348623157e308, 0.0, 3.0, -0.1, 2.0 ** -1000],
                          dtype=torch.float64)
    half = torch.tensor([0.0, -0.0, float("inf"), 1e-5, 65504.0, -3.0, 0.099975586], dtype=torch.float16)
    inputs = (single, double, half)
    run = iree.compile(tsjit.mlir.compile(tsjit.script(frexp), list(inputs), output_type="linalg-on-tensors"))
    got, expected = run(*inputs), frexp(*inputs)
    for (mantissa, exponent), (expected_mantissa, expected_exponent) in zip(got, expected):
        assert torch.equal(exponent, expected_exponent)
        assert_identical(mantissa, expected_mantissa)
    assert_close(got, expected)


def next_floats(x: torch.Tensor, y: torch.Tensor, scalar: torch.Tensor, other: torch.Tensor):
    return (torch.nextafter(x, y), torch.nextafter(y, x), torch.nextafter(x.double(), y.double()),
            torch.nextafter(scalar, other))


def test_nextafter_on_iree():
    """One unit in the last place up or down (half a unit below a power of two toward 0), from and to infinities,
    from 0 (the smallest subnormal of y's sign), equal arguments (y) and NaN, in float32 and float64: bit-exact."""
    x = torch.tensor([0.0, 1.0, -1.0, 0.5, -0.5, float("inf"), 3.4028234663852886e38, 1e-30, 2.0 ** -100, 7.0, -3.0,
                      float("nan"), 2.0, 1.5, -0.0, 12345.678])
    y = torch.tensor([1.0, 2.0, 0.0, 0.0, -1.0, 0.0, float("inf"), 0.0, 1.0, 7.0, -5.0, 1.0, float("nan"), -1.0, -1.0,
                      float("-inf")])
    inputs = (x, y, torch.tensor(0.3), torch.tensor(-2.0))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(next_floats), list(inputs), output_type="linalg-on-tensors"))
    for got, expected in zip(run(*inputs), next_floats(*inputs)):
        assert_identical(got, expected)
