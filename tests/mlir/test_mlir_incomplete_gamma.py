"""The regularized incomplete gamma functions (not in the torch dialect), decomposed by tsjit
(tsjit/mlir/incomplete_gamma.py), lowered to linalg and run on IREE against eager."""

from __future__ import annotations

import torch
from mlir_corpus import assert_close

import tsjit
import tsjit.mlir
from tsjit.mlir import iree


def incomplete_gamma(a: torch.Tensor, x: torch.Tensor):
    return torch.igamma(a, x), torch.igammac(a, x), torch.special.gammainc(a[:3], x[0])


def test_igamma_and_igammac_on_iree():
    """The series (x <= 1 or x <= a) and the continued fraction (x > max(1, a)), a far below and far above x, large
    a near x, and ATen's boundary values: a or x zero, negative or infinite, NaN."""
    a = torch.tensor([0.5, 1.0, 3.0, 10.0, 0.1, 50.0, 0.0, -1.0, 2.0, 30.0, 0.0, float("inf"), 1.0, 1e-3, 150.0,
                      float("nan"), 4.0])
    x = torch.tensor([0.3, 2.0, 1.0, 12.0, 5.0, 49.0, 1.0, 1.0, 0.0, 100.0, 0.0, 2.0, float("inf"), 1.05, 140.0,
                      1.0, -2.0])
    run = iree.compile(tsjit.mlir.compile(tsjit.script(incomplete_gamma), [a, x], output_type="linalg-on-tensors"))
    assert_close(run(a, x), incomplete_gamma(a, x))
