"""MLIR preparation's passes working together on refined types (tsjit/mlir/prepare.py); each pass alone is
tested in tests/passes/test_<pass>.py."""

from __future__ import annotations

import torch
from mlir_corpus import assert_close

from tsjit.ir import types as ts
from tsjit.ir.parser import parse_ir
from tsjit.ir.symbols import aten, prim
from tsjit.mlir import prepare, shapes
from tsjit.passes.dead_code_elimination import eliminate_dead_code
from tsjit.passes.static_control_flow import eliminate_static_control_flow
from tsjit.runtime.run import run_graph


def graph_of(text: str):
    return parse_ir(text.strip())


def kinds(graph) -> list:
    return [node.kind for node in graph.all_nodes()]


def refined(text: str, *args):
    graph = graph_of(text)
    shapes.refine_types(graph, [shapes.Abstract(a, True) if not isinstance(a, torch.Tensor)
                                else shapes.Abstract(a.to("meta"), True) for a in args])
    return graph


# ---- values a compiled program knows ---------------------------------------------------------------------------
DEVICE_CHECK = """
graph(%x : Tensor):
  %cpu : str = prim::Constant[value="cpu"]()
  %cuda : str = prim::Constant[value="cuda"]()
  %d : Device = prim::device(%x)
  %t : str = prim::type(%d)
  %kinds : str[] = prim::ListConstruct(%cpu, %cuda)
  %ok : bool = aten::__contains__(%kinds, %t)
  %nested : bool = prim::is_nested(%x)
  %on_gpu : bool = prim::is_cuda(%x)
  %grad : bool = aten::is_grad_enabled()
  %r : (bool, bool, bool, bool) = prim::TupleConstruct(%ok, %nested, %on_gpu, %grad)
  return (%r)
"""


def test_device_checks_and_grad_mode_fold_to_constants():
    graph = graph_of(DEVICE_CHECK)
    assert prepare.fold_tensor_properties(graph, torch.device("cpu"))
    assert not prepare.fold_tensor_properties(graph, torch.device("cpu"))
    assert prepare.remove_grad_mode_contexts(graph)
    eliminate_static_control_flow(graph)
    eliminate_dead_code(graph, keep_assertions=True)
    graph.lint()
    assert kinds(graph) == [prim.Constant] * 4 + [prim.TupleConstruct]
    assert run_graph(graph, torch.randn(2), optimize=False) == (True, False, False, True)


SIZE_CHECK = """
graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %three : int = prim::Constant[value=3]()
  %expected : int[] = prim::ListConstruct(%three, %three)
  %sizes : int[] = aten::size(%x)
  %wrong : bool = aten::ne(%sizes, %expected)
  %n : int = aten::size(%x, %zero)
  %r : Tensor = prim::If(%wrong)
    block0():
      %y : Tensor = aten::mul(%x, %n)
      -> (%y)
    block1():
      -> (%x)
  return (%r)
"""


def test_sizes_and_dtypes_the_refined_types_state_become_constants():
    from tsjit.passes.fold_static_types import fold_static_types

    x = torch.randn(2, 3)
    graph = refined(SIZE_CHECK, x)
    assert fold_static_types(graph) and not fold_static_types(graph)
    assert aten.size not in kinds(graph)
    eliminate_static_control_flow(graph, unroll_loops=False)
    assert prim.If not in kinds(graph)
    assert_close(run_graph(graph, x, optimize=False), x * 2)


def test_sizes_are_not_folded_where_an_op_changes_sizes_in_place():
    text = """
graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %u : Tensor = aten::unsqueeze_(%x, %zero)
  %n : int = aten::size(%x, %zero)
  %y : Tensor = aten::mul(%x, %n)
  return (%y)"""
    options = prepare.Options(value_semantics=False)
    program = prepare.prepare_function(graph_of(text), [torch.randn(2, 3)], options)
    assert aten.size in kinds(program.graph)


def scaled_unless_none(x: torch.Tensor, scale: float | None = None, offset: float = 1.0):
    if scale is None:
        return x + offset
    return x * scale + offset


def test_arguments_left_out_take_their_defaults():
    """As a call `f(x)` does, and as torch.export specializes: the program takes one argument, the If on `scale`
    is gone and the offset is a constant."""
    import tsjit
    import tsjit.mlir

    lowered = tsjit.mlir.compile(tsjit.script(scaled_unless_none), [torch.randn(3)])
    text = str(lowered)
    assert "@forward(%arg0: !torch.vtensor<[3],f32>) -> !torch.vtensor<[3],f32>" in text
    assert "torch.prim.If" not in text and "torch.aten.mul" not in text
    x = torch.randn(3)
    tsjit_program = tsjit.mlir.compile(tsjit.script(scaled_unless_none), [x, 2.0])
    assert "%arg1: !torch.float" in str(tsjit_program)


def scaled_by_int_or_list(x: torch.Tensor, scale: int | list[int]):
    if isinstance(scale, int):
        return x * scale
    return x * scale[0]


def test_a_union_argument_takes_its_examples_member():
    """The boundary allows no Union: given an int, `scale` is an int, and `isinstance` on it is decided (no
    prim::isinstance reaches the importer, which cannot import it)."""
    import tsjit
    import tsjit.mlir

    text = str(tsjit.mlir.compile(tsjit.script(scaled_by_int_or_list), [torch.randn(3), 2]))
    assert "%arg1: !torch.int" in text and "torch.prim.If" not in text


# ---- which loops unroll ------------------------------------------------------------------------------------------
def sizes_then_repeated_doubling(x: torch.Tensor):
    dims: list[int] = []
    for d in range(x.dim()):
        dims.append(d)
    y = x.sum(dims)
    for _ in range(100):
        y = y * 0.5 + x.sum()
    return y


def test_only_the_loop_that_builds_a_list_unrolls():
    """torch-mlir follows no list written in a loop, so that loop unrolls; the other loop, a hundred iterations
    carrying a tensor, stays a loop (it was unrolled too, 64 copies of its body, as soon as one loop anywhere
    wrote a list: torch.norm(x, 'nuc')'s dimensions beside the Jacobi sweeps timed out)."""
    import tsjit

    function = tsjit.script(sizes_then_repeated_doubling)
    x = torch.randn(2, 3)
    program = prepare.prepare_function(function.graph, [x], prepare.Options())
    loops = [n for n in program.graph.all_nodes() if n.kind is prim.Loop]
    assert len(loops) == 1 and aten.append not in kinds(program.graph)
    assert_close(run_graph(program.graph, x), sizes_then_repeated_doubling(x))


def weight_broadcast_along_dim_1(x: torch.Tensor, weight: torch.Tensor):
    for _ in range(x.dim() - 2):
        weight = weight.unsqueeze(-1)
    return x * weight


def test_a_loop_that_changes_a_carried_tensors_rank_unrolls():
    """The torch dialect has no type for a loop-carried tensor whose rank changes (the imported module would
    not verify): once refinement knows the trip count and the ranks, the loop unrolls."""
    import tsjit
    import tsjit.mlir

    x, weight = torch.randn(2, 3, 4, 5), torch.randn(3)
    lowered = str(tsjit.mlir.compile(tsjit.script(weight_broadcast_along_dim_1), [x, weight]))
    assert "torch.prim.Loop" not in lowered and lowered.count("torch.aten.unsqueeze") == 2


def sum_of_row_sums(x: torch.Tensor, scale: int):
    counts = [scale, scale + 1]
    return sum([float(x[i].sum()) for i in range(x.size(0))]), sum(counts)


def test_the_sum_of_a_list_literal_becomes_additions():
    """torch-mlir has no op for the sum of a float or int list; once the comprehension over a static size is
    unrolled, its list is a literal whose sum is a chain of scalar adds, in Python's order."""
    import tsjit

    x = torch.randn(3, 4)
    program = prepare.prepare_function(tsjit.script(sum_of_row_sums).graph, [x, 2], prepare.Options())
    sums = [n for n in program.graph.all_nodes() if n.kind is aten.sum]
    assert len(sums) == 3 and not any(isinstance(n.input(0).type, ts.ListType) for n in sums)  # (the row sums)
    assert run_graph(program.graph, x, 2) == sum_of_row_sums(x, 2)


def literal_containers(x: torch.Tensor):
    d = {"a": x, "b": x * 2}
    out = d["a"] + d["b"]
    for k in d.keys():
        out = out + d[k]
    counts = [1, 2, 3]
    counts.append(4)
    counts.insert(0, 5)
    last = counts.pop()
    counts[1] = 10
    total = last
    for c in counts:
        total += c
    for row in [[1, 2], [3, 4]]:
        for c in row:
            total += c
    return out * total, x[::2, 1:]


def test_dict_and_list_literals_fold_and_slices_get_int_bounds():
    """What torch.export's tracing leaves as constants, e2e's dict_literal, list_ops and list_of_lists, folds
    here: reads of a dict literal, list writes at constant positions, a list of lists' rows; and `x[::2, 1:]`
    slices from 0 to INT64_MAX (TOSA lowers no None bound). On linalg (loops kept) and TOSA (unrolled)."""
    import tsjit
    import tsjit.mlir
    from tsjit.mlir import iree

    x = torch.randn(4, 3)
    for backend in ("linalg-on-tensors", "tosa"):
        lowered = tsjit.mlir.compile(tsjit.script(literal_containers), [x], output_type=backend)
        assert "scf." not in str(lowered)
        assert_close(iree.compile(lowered)(x), literal_containers(x))
