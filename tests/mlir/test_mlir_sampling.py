"""Random sampling the torch dialect lacks, decomposed by tsjit (tsjit/mlir/sampling.py) over the random operators
it lowers, run on IREE: eager's draws cannot be matched, so the dtypes, shapes and the distributions' defining
properties are checked (distinct categories without replacement, never a category of probability zero, integers
in range, a normal sample's mean and deviation)."""

from __future__ import annotations

import torch

import tsjit
import tsjit.mlir
from tsjit.mlir import iree


def draws(p: torch.Tensor, x: torch.Tensor, mean: torch.Tensor, std: torch.Tensor):
    return (torch.multinomial(p, 3), torch.multinomial(p, 50, replacement=True), torch.randint_like(x, 3, 7),
            torch.normal(2.0, 0.5, [4000]), torch.normal(mean, std), torch.normal(mean, 0.1))


def test_sampling_on_iree():
    p = torch.tensor([[0.1, 0.0, 0.3, 0.6], [0.25, 0.25, 0.0, 0.5]])
    inputs = (p, torch.zeros(5, 6), torch.full((2000,), 10.0), torch.full((2000,), 3.0))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(draws), list(inputs), output_type="linalg-on-tensors"))
    got = run(*inputs)
    for ours, eager in zip(got, draws(*inputs)):
        assert (ours.dtype, ours.shape) == (eager.dtype, eager.shape)
    distinct, repeated, integers, normal, tensor_normal, narrow = got
    # three distinct categories of the three of non-zero probability in each row
    assert sorted(distinct[0].tolist()) == [0, 2, 3] and sorted(distinct[1].tolist()) == [0, 1, 3]
    assert not (repeated[0] == 1).any() and not (repeated[1] == 2).any()
    assert repeated.min() >= 0 and repeated.max() <= 3
    assert integers.min() >= 3 and integers.max() < 7
    assert abs(normal.mean() - 2.0) < 0.1 and abs(normal.std() - 0.5) < 0.1
    assert abs(tensor_normal.mean() - 10.0) < 0.5 and abs(tensor_normal.std() - 3.0) < 0.5
    assert abs(narrow.mean() - 10.0) < 0.05
