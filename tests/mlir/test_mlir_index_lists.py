"""Permutations, contractions, grids and scans that torch-mlir lacks, decomposed by tsjit over constant index
lists and known sizes (tsjit/mlir/decompositions.py: _INDEX_LISTS, _ALONG_A_DIMENSION), lowered to linalg and run
on IREE against eager: one program per group, so that IREE compiles once."""

from __future__ import annotations

import torch
from mlir_corpus import assert_close

import tsjit
import tsjit.mlir
from tsjit.mlir import iree


def lowered_and_run(function, inputs: tuple):
    run = iree.compile(tsjit.mlir.compile(tsjit.script(function), list(inputs), output_type="linalg-on-tensors"))
    return run(*inputs)


def index_lists(x: torch.Tensor, y: torch.Tensor, row: torch.Tensor, points: torch.Tensor):
    return (torch.movedim(x, [0, -1], [2, 0]), torch.movedim(x, [1], [-1]), torch.tensordot(x, y, [[1, 2], [0, 2]]),
            torch.tensordot(x, y, [[-1], [-1]]), torch.meshgrid([row, points[0]], indexing="xy")[0],
            torch.meshgrid([row, points[0], row], indexing="ij")[1], torch.pdist(points), torch.pdist(points, 1.0))


def test_index_list_decompositions_on_iree():
    inputs = (torch.randn(2, 3, 4), torch.randn(3, 5, 4), torch.randn(3), torch.randn(5, 2))
    assert_close(lowered_and_run(index_lists, inputs), index_lists(*inputs))


def scans_modes_and_tan(x: torch.Tensor, counts: torch.Tensor, angles: torch.Tensor):
    return (torch.cummax(x, 1), torch.cummin(x, 0), torch.cummax(counts, 0), torch.mode(counts, 1),
            torch.mode(counts, 0, True), torch.mode(x[:, 0]), torch.tan(angles))


def test_scans_modes_and_tan_on_iree():
    """Ties (the last index, as ATen), NaN (propagated by the scans), integer tensors; tan near its poles (to
    1e-4 of eager, where IREE's own tanf is off by 3e-4)."""
    x = torch.tensor([[1.0, 1.0, 0.0, 3.0], [2.0, float("nan"), 2.0, 5.0], [-1.0, -2.0, -2.0, -3.0]])
    counts = torch.tensor([[3, 1, 3, 2, 1], [2, 2, 1, 1, 4], [0, 5, 5, 0, 7]])
    angles = torch.cat([torch.linspace(-9.0, 9.0, 37), torch.tensor([-1.5706, 1.5688, 4.7123, -7.8538, 0.0013])])
    inputs = (x, counts, angles)
    assert_close(lowered_and_run(scans_modes_and_tan, inputs), scans_modes_and_tan(*inputs))


def pools(x: torch.Tensor, volume: torch.Tensor):
    return (torch.nn.functional.max_pool1d(x, 3, 2, ceil_mode=True, return_indices=True),
            torch.nn.functional.max_pool2d(x.unsqueeze(0), 2, return_indices=True),
            torch.nn.functional.max_pool1d(x, 2),
            torch.nn.functional.max_pool3d(volume, 3, 2, ceil_mode=True, return_indices=True),
            torch.nn.functional.avg_pool3d(volume, (2, 2, 2)))


def test_pools_whose_windows_end_before_or_after_the_input_on_iree():
    """Inputs cut to (or, for ceil_mode, padded to) where the last window ends; flat indices of the input's."""
    inputs = (torch.randn(2, 5, 7), torch.randn(1, 2, 3, 6, 5))
    assert_close(lowered_and_run(pools, inputs), pools(*inputs))


def combinations(one: torch.Tensor, four: torch.Tensor, labels: torch.Tensor):
    return (torch.combinations(one, r=1), torch.combinations(one), torch.combinations(one, 3, True),
            torch.combinations(four, 3), torch.combinations(four, 5), torch.combinations(four, 0),
            torch.combinations(four, 2, True), torch.combinations(four, 4, True), torch.combinations(labels))


def test_combinations_on_iree():
    """itertools' order, with and without replacement; more elements drawn than there are (no rows), none drawn (an
    empty 1-D tensor, as ATen), one element; integer tensors."""
    inputs = (torch.randn(1), torch.tensor([0.5, -1.0, 2.0, 3.5]), torch.tensor([3, 1, 2]))
    got, expected = lowered_and_run(combinations, inputs), combinations(*inputs)
    assert [g.shape for g in got] == [e.shape for e in expected]
    assert_close(got, expected)
