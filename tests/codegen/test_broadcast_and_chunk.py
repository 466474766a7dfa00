"""Kernels over operands of different shapes (broadcasting, 0-dim tensors, scalars) and over prim::ConstantChunk
pieces, against the interpreted subgraph (eager's ops): results, shapes and strides; layouts and shapes the
kernel cannot take run the subgraph."""

from __future__ import annotations

import pytest
import torch
from kernel_helpers import fused

from tsjit.codegen.launch import LaunchPlanner
from tsjit.ir.parser import parse_ir
from tsjit.runtime.run import run_graph

BROADCAST = """
graph(%x : Float(*, *, device=cpu), %y : Float(*, device=cpu), %z : Float(device=cpu), %a : float):
  %one : int = prim::Constant[value=1]()
  %m : Float(*, *, device=cpu) = aten::mul(%x, %y)
  %s : Float(*, *, device=cpu) = aten::add(%m, %z, %a)
  %e : Float(*, device=cpu) = aten::exp(%y)
  %r : Float(*, *, device=cpu) = aten::sub(%s, %e, %one)
  %t : Float(*, *, device=cpu) = aten::tanh(%r)
  return (%r, %t)
"""


def expect_kernel_result(text: str, operation, *args) -> None:
    """The operation's results are the interpreted graph's: values, shapes and strides (the graph returns its
    values in program order, as the FusionGroup does)."""
    expected = run_graph(parse_ir(text), *args, optimize=False)
    ours = operation(*args)
    for mine, theirs in zip(ours, expected) if isinstance(ours, tuple) else ((ours, expected),):
        torch.testing.assert_close(mine, theirs)
        assert mine.stride() == theirs.stride()


@pytest.mark.parametrize("x, y, z", [
    ((3, 4), (4,), ()),
    ((3, 1), (4,), ()),
    ((1, 4), (1,), ()),
    ((5, 1), (1,), ()),
    ((0, 4), (4,), ()),
    ((2, 3), (3,), ()),
], ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_broadcast_operands_match_eager(x, y, z, dtype, fallbacks) -> None:
    text = BROADCAST.replace("Float(", "Double(") if dtype is torch.float64 else BROADCAST
    _, operation = fused(text)
    generator = torch.Generator().manual_seed(len(x) + sum(x))
    args = [torch.randn(shape, dtype=dtype, generator=generator) for shape in (x, y, z)]
    expect_kernel_result(text, operation, *args, 0.5)
    expect_kernel_result(text, operation, args[0].expand(6, *x[1:]) if x[0] == 1 else args[0], *args[1:], 2)
    assert not fallbacks


def test_zero_dim_tensors_alone_and_with_others(fallbacks) -> None:
    text = """
        graph(%x : Float(device=cpu), %y : Float(device=cpu), %k : int):
          %a : Float(device=cpu) = aten::mul(%x, %y)
          %b : Float(device=cpu) = aten::pow(%a, %k)
          return (%b)""".strip() + "\n"
    _, operation = fused(text)
    expect_kernel_result(text, operation, torch.tensor(1.5), torch.tensor(-2.0), 3)
    assert not fallbacks


def test_shapes_that_do_not_broadcast_raise_eagers_error(fallbacks) -> None:
    _, operation = fused(BROADCAST)
    with pytest.raises(RuntimeError, match="must match the size"):
        operation(torch.randn(3, 4), torch.randn(5), torch.tensor(1.0), 0.5)
    assert len(fallbacks) == 1


def test_an_output_of_another_shape_runs_the_subgraph(fallbacks) -> None:
    # %e is an output of shape (1, 4) where %t is (3, 4): the kernel writes outputs of one shape
    text = """
        graph(%x : Float(*, *, device=cpu), %y : Float(*, *, device=cpu)):
          %e : Float(*, *, device=cpu) = aten::exp(%x)
          %t : Float(*, *, device=cpu) = aten::mul(%y, %e)
          return (%e, %t)""".strip() + "\n"
    _, operation = fused(text)
    expect_kernel_result(text, operation, torch.randn(3, 4), torch.randn(3, 4))
    assert not fallbacks
    expect_kernel_result(text, operation, torch.randn(1, 4), torch.randn(3, 4))
    assert len(fallbacks) == 1


CHUNKED = """graph(%g : F2, %b : Float(*, device=cpu), %c : F2):
  %one : int = prim::Constant[value=1]()
  %s : F2 = aten::add(%g, %b, %one)
  %i : F2, %f : F2, %o : F2 = prim::ConstantChunk[chunks=3, dim=DIM](%s)
  %si : F2 = aten::sigmoid(%i)
  %tf : F2 = aten::tanh(%f)
  %p : F2 = aten::mul(%si, %tf)
  %q : F2 = aten::mul(%o, %c)
  %r : F2 = aten::add(%p, %q, %one)
  return (%p, %r)
""".replace("F2", "Float(*, *, device=cpu)")


@pytest.mark.parametrize("dim, g, b, c", [
    (1, (4, 12), (12,), (4, 4)),
    (-1, (4, 12), (12,), (4, 4)),
    (1, (4, 12), (1,), (4, 1)),  # broadcast before and after the chunk
    (1, (1, 6), (5, 6), (5, 2)),  # what is chunked broadcasts along the other dimension
    (0, (6, 5), (5,), (2, 5)),
    (0, (6, 5), (1,), (2, 1)),
    (1, (0, 9), (9,), (0, 3)),
])
def test_chunks_match_eager(dim, g, b, c, fallbacks) -> None:
    text = CHUNKED.replace("DIM", str(dim)).replace("%b : Float(*,", f"%b : Float({', '.join('*' * len(b))},")
    _, operation = fused(text)
    generator = torch.Generator().manual_seed(sum(g))
    args = [torch.randn(shape, generator=generator) for shape in (g, b, c)]
    expect_kernel_result(text, operation, *args)
    assert not fallbacks


def test_chunks_of_an_input_and_in_the_middle_of_three_dimensions(fallbacks) -> None:
    text = """
        graph(%x : Float(*, *, *, device=cpu), %y : Float(*, *, device=cpu), %k : int):
          %a : Float(*, *, *, device=cpu), %b : Float(*, *, *, device=cpu) = prim::ConstantChunk[chunks=2, dim=1](%x)
          %m : Float(*, *, *, device=cpu) = aten::mul(%a, %b)
          %c : Float(*, *, device=cpu), %d : Float(*, *, device=cpu) = prim::ConstantChunk[chunks=2, dim=0](%y)
          %s : Float(*, *, device=cpu) = aten::sub(%c, %d, %k)
          %r : Float(*, *, *, device=cpu) = aten::add(%m, %s, %k)
          return (%r)""".strip() + "\n"
    _, operation = fused(text)
    x, y = torch.randn(2, 6, 5), torch.randn(6, 5)
    expect_kernel_result(text, operation, x, y, 2)
    expect_kernel_result(text, operation, x[:, :, 1:4], y[:, ::2], 3)  # views of the chunked inputs
    assert not fallbacks


def test_chunks_that_do_not_divide_evenly_run_the_subgraph(fallbacks) -> None:
    text = CHUNKED.replace("DIM", "1")
    _, operation = fused(text)
    args = torch.randn(4, 12), torch.randn(12), torch.randn(4, 4)
    expect_kernel_result(text, operation, *args)
    assert not fallbacks
    args = torch.randn(4, 9), torch.randn(9), torch.randn(4, 3)
    expect_kernel_result(text, operation, *args)
    assert not fallbacks
    with pytest.raises(RuntimeError, match="must match the size"):  # pieces of 4, 4 and 2: eager's error
        operation(torch.randn(4, 10), torch.randn(10), torch.randn(4, 4))
    assert len(fallbacks) == 1


def test_launches_merge_contiguous_dimensions_and_keep_chunked_ones() -> None:
    planner = LaunchPlanner(parse_ir(BROADCAST))
    x, y, z = torch.empty(3, 4), torch.empty(4), torch.empty(())
    launch = planner((x.shape, x.stride(), y.shape, y.stride(), z.shape, z.stride()))
    assert launch.shape == (3, 4) and launch.numel == 12
    assert launch.geometry == (3, 4, 4, 1, 0, 1, 0, 0)  # y broadcasts along the rows: they do not merge
    launch = planner((x.shape, x.stride(), (1,), (1,), z.shape, z.stride()))
    assert launch.geometry == (1, 12, 0, 1, 0, 0, 0, 0)  # one row of 12
    assert planner((x.t().shape, x.t().stride(), y.shape, y.stride(), z.shape, z.stride())) is None
    chunked = LaunchPlanner(parse_ir(CHUNKED.replace("DIM", "1")))
    g, b, c = torch.empty(4, 12), torch.empty(12), torch.empty(4, 4)
    launch = chunked((g.shape, g.stride(), b.shape, b.stride(), c.shape, c.stride()))
    assert launch.geometry == (4, 4, 12, 1, 0, 1, 4, 1)


CONCAT = """
graph(%x : Float(*, *, *, device=cpu), %y : Float(*, *, *, device=cpu)):
  %two : int = prim::Constant[value=2]()
  %d : int = prim::Constant[value={dim}]()
  %a : Float(*, *, *, device=cpu), %b : Float(*, *, *, device=cpu) = prim::ConstantChunk[chunks=2, dim=2](%x)
  %s : Float(*, *, *, device=cpu) = aten::mul(%a, %y)
  %t : Float(*, *, *, device=cpu) = aten::sigmoid(%b)
  %u : Float(*, *, *, device=cpu) = aten::add(%s, %t, %two)
  %r : Float(*, *, *, device=cpu) = prim::VarConcat(%s, %u, %t, %d)
  return (%u, %r)
"""


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
@pytest.mark.parametrize("shape", [(1, 1, 8), (2, 3, 10), (3, 1, 2), (4, 130, 256)], ids=str)
def test_a_concatenated_output_is_written_piece_by_piece(dim, shape, fallbacks) -> None:
    """prim::VarConcat outputs (passes/concat_fusion.py) beside a plain one and chunked inputs, along every
    dimension; the largest shape runs in element ranges on several threads."""
    text = CONCAT.replace("{dim}", str(dim))
    _, operation = fused(text)
    generator = torch.Generator().manual_seed(sum(shape) + dim)
    x = torch.randn(*shape[:2], 2 * shape[2], generator=generator)
    expect_kernel_result(text, operation, x, torch.randn(shape, generator=generator))
    expect_kernel_result(text, operation, x, torch.randn(shape[-1], generator=generator).expand(shape))
    assert not fallbacks


def test_concatenated_pieces_of_other_shapes_run_the_subgraph(fallbacks) -> None:
    """The launch takes pieces of one shape only: others run the subgraph, whose cat concatenates them, or raises
    eager's error."""
    text = """
        graph(%x : Float(*, *, device=cpu), %y : Float(*, *, device=cpu)):
          %zero : int = prim::Constant[value=0]()
          %s : Float(*, *, device=cpu) = aten::sigmoid(%x)
          %t : Float(*, *, device=cpu) = aten::tanh(%y)
          %r : Float(*, *, device=cpu) = prim::VarConcat(%s, %t, %zero)
          return (%r)"""
    _, operation = fused(text)
    expect_kernel_result(text, operation, torch.randn(2, 3), torch.randn(1, 3))
    with pytest.raises(RuntimeError):
        operation(torch.randn(2, 3), torch.randn(1, 4))
    assert len(fallbacks) == 2
