"""Dynamic shapes: a program compiled once with -1 sizes (annotations as torch-mlir's annotate_args took them)
runs on IREE on inputs of different sizes, compared with eager each time.

The linalg-on-tensors backend keeps control flow (scf.while / scf.for), so the data-dependent loop stays a loop
and static control flow is not unrolled there (`tsjit.mlir.compile`'s default for that backend).
"""

from __future__ import annotations

import pytest
import torch
from mlir_corpus import assert_close
from torch import nn

import tsjit
import tsjit.mlir
from tsjit.mlir import iree


def weighted_then_halved(x: torch.Tensor, counts: torch.Tensor):
    """A loop over a dynamic size, then a loop whose trip count is computed from tensor data."""
    total = torch.zeros_like(x[0])
    for i in range(x.size(0)):
        total = total + x[i] * float(i + 1)
    steps = int(counts.sum())
    for _ in range(steps):
        total = total * 0.5 + 1.0
    return total, steps


def doubling_until_large(x: torch.Tensor, limit: float):
    """A while loop whose condition is computed from tensor data."""
    while float(x.abs().sum()) < limit:
        x = x * 2.0 + 0.5
    return x


class Block(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))

    def forward(self, x):
        return x + self.mlp(self.norm(x))


class Tower(nn.Module):
    """Submodules two levels deep: blocks in a ModuleList, then a head."""

    def __init__(self, width: int = 8, depth: int = 2):
        super().__init__()
        self.blocks = nn.ModuleList([Block(width) for _ in range(depth)])
        self.head = nn.Linear(width, 3)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x).softmax(-1)


def test_data_dependent_loop_on_two_sizes_from_one_compilation():
    lowered = tsjit.mlir.compile(tsjit.script(weighted_then_halved), [([-1, -1], torch.float32), ([-1], torch.int64)],
                                 output_type="linalg-on-tensors")
    text = str(lowered)
    assert "tensor<?x?xf32>" in text and text.count("scf.for") == 2
    run = iree.compile(lowered)
    for shape, counts in (((2, 3), [1, 2]), ((7, 5), [4, 0, 1])):
        x, counts = torch.randn(*shape), torch.tensor(counts)
        total, steps = run(x, counts)
        expected_total, expected_steps = weighted_then_halved(x, counts)
        assert steps == expected_steps
        assert_close(total, expected_total)


def test_while_loop_on_tensor_data_lowers_but_iree_rejects_it():
    """torch-mlir lowers the loop to scf.while; IREE 3.13 cannot compile an scf.while (nor an scf.if around
    one) whose initial condition comes from tensor data computed before it (the same loop starting from a
    constant compiles). When this starts passing, move the program into the test above."""
    lowered = tsjit.mlir.compile(tsjit.script(doubling_until_large), [([-1, -1], torch.float32), 50.0],
                                 output_type="linalg-on-tensors")
    assert "scf.while" in str(lowered)
    with pytest.raises(tsjit.errors.MLIRError, match="unresolved target materialization from \\('i1'\\)"):
        iree.compile(lowered)


def test_module_with_submodules_on_two_sizes_from_one_compilation():
    torch.manual_seed(0)
    eager = Tower().eval()
    lowered = tsjit.mlir.compile(tsjit.script(eager), [([-1, -1, 8], torch.float32)],
                                 output_type="linalg-on-tensors")
    assert "@forward(%arg0: tensor<?x?x8xf32>)" in str(lowered)
    run = iree.compile(lowered)
    for shape in ((1, 4, 8), (3, 9, 8)):
        x = torch.randn(*shape)
        with torch.no_grad():
            assert_close(run(x), eager(x))


class Refiner(nn.Module):
    """A submodule applied as many times as tensor data says, then a head: the issue's two dynamic cases in one
    program."""

    def __init__(self, width: int = 8):
        super().__init__()
        self.block = Block(width)
        self.head = nn.Linear(width, 3)

    def forward(self, x, counts):
        for _ in range(int(counts.sum())):
            x = self.block(x)
        return self.head(x)


def test_data_dependent_loop_over_submodules_on_two_sizes_from_one_compilation():
    torch.manual_seed(0)
    eager = Refiner().eval()
    lowered = tsjit.mlir.compile(tsjit.script(eager), [([-1, -1, 8], torch.float32), ([-1], torch.int64)],
                                 output_type="linalg-on-tensors")
    text = str(lowered)
    assert "tensor<?x?x8xf32>" in text and "scf.for" in text
    run = iree.compile(lowered)
    for shape, counts in (((1, 4, 8), [1, 1]), ((3, 9, 8), [2, 0, 1])):
        x, counts = torch.randn(*shape), torch.tensor(counts)
        with torch.no_grad():
            assert_close(run(x, counts), eager(x, counts))


def doubled(x: torch.Tensor):
    return x * 2.0


def test_a_static_size_that_disagrees_is_refused():
    run = iree.compile(tsjit.mlir.compile(tsjit.script(doubled), [([-1, 4], torch.float32)],
                                          output_type="linalg-on-tensors"))
    assert_close(run(torch.ones(3, 4)), torch.full((3, 4), 2.0))
    with pytest.raises(tsjit.errors.MLIRError, match="mismatch"):
        run(torch.randn(2, 5))


def products_with_reversed(x: torch.Tensor):
    """A list built in a loop over a tensor's rows: the trip count is `len(x)` (zip's minimum of two lengths)."""
    out = []
    for a, b in zip(x, x.flip(0)):
        out.append(a * b)
    return torch.stack(out)


def test_a_list_built_over_a_static_size_unrolls_and_lowers():
    """With a static first size, the trip count folds to a constant, the loop unrolls and the list becomes a list
    literal, which torch-mlir follows."""
    x = torch.randn(3, 4)
    lowered = tsjit.mlir.compile(tsjit.script(products_with_reversed), [x], output_type="linalg-on-tensors")
    assert "scf.for" not in str(lowered)
    assert_close(iree.compile(lowered)(x), products_with_reversed(x))


def test_a_list_built_over_a_dynamic_size_is_refused():
    """torch-mlir cannot follow a list written in a loop that stays a loop: tsjit says so instead of lowering it
    wrongly."""
    with pytest.raises(tsjit.errors.MLIRError, match="aten::append writes a list inside a loop or branch that does "
                                                     "not run a fixed number of times"):
        tsjit.mlir.compile(tsjit.script(products_with_reversed), [([-1, 4], torch.float32)],
                           output_type="linalg-on-tensors")
