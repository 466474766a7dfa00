"""Operators the torch dialect lacks, decomposed by tsjit (tsjit/mlir/decompositions.py), lowered to linalg and
run on IREE against eager: one program holding several of them, so that IREE compiles once."""

from __future__ import annotations

import torch
from mlir_corpus import assert_close

import tsjit
import tsjit.mlir
from tsjit.mlir import iree


def unknown_to_torch_mlir(x: torch.Tensor, y: torch.Tensor):
    signs = torch.sign(y)
    std, mean = torch.std_mean(x)
    return (torch.diff(x, 1, 0), torch.nn.functional.soft_margin_loss(x, signs), torch.median(x),
            torch.hypot(x, y), torch.nansum(x, [1]), std, mean, torch.equal(x, x), torch.isin(x, y))


def test_decomposed_operators_on_iree():
    x, y = torch.randn(4, 5), torch.randn(4, 5)
    y[0, 0] = x[1, 1]
    run = iree.compile(tsjit.mlir.compile(tsjit.script(unknown_to_torch_mlir), [x, y],
                                          output_type="linalg-on-tensors"))
    got, expected = run(x, y), unknown_to_torch_mlir(x, y)
    assert got[7] is True
    for ours, theirs in zip(got[:7] + got[8:], expected[:7] + expected[8:]):
        assert_close(ours, theirs)
