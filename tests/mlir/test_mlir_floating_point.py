"""frexp (not in the torch dialect), decomposed by tsjit (tsjit/mlir/floating_point.py), lowered to linalg and
run on IREE against eager."""

from __future__ import annotations

import torch
from mlir_corpus import assert_close

import tsjit
import tsjit.mlir
from tsjit.mlir import iree


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
        assert mantissa.dtype == expected_mantissa.dtype
        assert torch.equal(mantissa.nan_to_num(), expected_mantissa.nan_to_num())
        assert torch.equal(mantissa.isnan(), expected_mantissa.isnan())
        assert torch.equal(torch.signbit(mantissa), torch.signbit(expected_mantissa))
    assert_close(got, expected)
