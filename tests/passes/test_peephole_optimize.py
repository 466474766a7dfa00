"""peephole_optimize: against torch.jit's peephole pass, and the rules that read refined tensor types
(shape_peepholes=True, as the graph executor runs them)."""

from __future__ import annotations

import pytest
import torch
from pass_case import check_pass

import tsjit
from tsjit.ir.constants import constant_value
from tsjit.ir.parser import parse_ir
from tsjit.passes.peephole import peephole_optimize
from tsjit.passes.shape_analysis import propagate_shapes
from tsjit.runtime.graph_executor import create_argument_spec, specialize_types


def kinds(graph) -> list[str]:
    return [str(node.kind) for node in graph.all_nodes() if str(node.kind) != "prim::Constant"]


def optimized(text: str, *inputs):
    graph = parse_ir(text)
    specialize_types(graph, create_argument_spec(inputs))
    propagate_shapes(graph)
    peephole_optimize(graph, shape_peepholes=True)
    return graph


def returned_constants(graph) -> list:
    from tsjit.ir.constants import constant_value

    (tuple_node,) = [n for n in graph.nodes() if str(n.kind) == "prim::TupleConstruct"]
    return [constant_value(v.node) if str(v.node.kind) == "prim::Constant" else v for v in tuple_node.inputs]


def test_metadata_queries_of_known_types_become_constants() -> None:
    graph = optimized("""
        graph(%x : Tensor):
          %zero : int = prim::Constant[value=0]()
          %d : int = aten::dim(%x)
          %t : int = prim::dtype(%x)
          %dev : Device = prim::device(%x)
          %cuda : bool = prim::is_cuda(%x)
          %cpu : bool = prim::is_cpu(%x)
          %fp : bool = aten::is_floating_point(%x)
          %shape : int[] = aten::size(%x)
          %rank : int = aten::len(%shape)
          %r : (int, int, Device, bool, bool, bool, int) = prim::TupleConstruct(%d, %t, %dev, %cuda, %cpu, %fp, %rank)
          return (%r)""", torch.ones(2, 3, dtype=torch.float64))
    assert kinds(graph) == ["prim::TupleConstruct"]
    assert returned_constants(graph) == [2, 7, torch.device("cpu"), False, True, True, 2]


def test_conversions_to_what_a_tensor_already_is_are_dropped() -> None:
    graph = optimized("""
        graph(%x : Tensor, %y : Tensor, %z : Tensor):
          %false : bool = prim::Constant[value=0]()
          %true : bool = prim::Constant[value=1]()
          %none : NoneType = prim::Constant()
          %float : int = prim::Constant[value=6]()
          %double : int = prim::Constant[value=7]()
          %same : Tensor = aten::to(%x, %float, %false, %false, %none)
          %copy : Tensor = aten::to(%x, %float, %false, %true, %none)
          %cast : Tensor = aten::to(%x, %double, %false, %false, %none)
          %as_y : Tensor = aten::type_as(%x, %y)
          %as_z : Tensor = aten::type_as(%x, %z)
          %r : (Tensor, Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%same, %copy, %cast, %as_y, %as_z)
          return (%r)""", torch.ones(2), torch.ones(3), torch.ones(3, dtype=torch.int64))
    x = graph.inputs[0]
    same, copy, cast, as_y, as_z = returned_constants(graph)
    assert same is x and as_y is x
    assert copy is not x and cast is not x and as_z is not x  # a copy, a real cast, another dtype


def test_sizes_known_from_constants_fold_and_expand_as_to_the_same_shape_goes() -> None:
    def f(x):
        z = torch.zeros(2, 3)
        return z.size(1) + z.shape[0], z.expand_as(z + 1) + x

    scripted = tsjit.script(f)
    x = torch.ones(2, 3)
    graph = scripted.graph_for(x)
    assert "aten::size" not in kinds(graph) and "aten::expand_as" not in kinds(graph)
    assert scripted(x)[0] == 5
    torch.testing.assert_close(scripted(x)[1], f(x)[1])


def test_without_shape_peepholes_refined_types_are_not_trusted() -> None:
    graph = parse_ir("""
        graph(%x : Float(2, 3)):
          %d : int = aten::dim(%x)
          return (%d)""")
    assert not peephole_optimize(graph)  # a traced graph's types describe its example inputs only
    assert kinds(graph) == ["aten::dim"]


def test_undefined_tensors_may_be_none() -> None:
    graph = parse_ir("""
        graph(%x : Tensor):
          %none : NoneType = prim::Constant()
          %b : bool = aten::__isnot__(%x, %none)
          return (%b)""")
    graph.inputs[0].set_type(graph.inputs[0].type.with_undefined(True))
    peephole_optimize(graph, shape_peepholes=True)
    assert kinds(graph) == ["aten::__isnot__"]


PEEPHOLE = {
    "int_identities": """graph(%a : int):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %3 : int = prim::Constant[value=3]()
  %b : int = aten::add(%a, %0)
  %c : int = aten::mul(%1, %b)
  %d : int = aten::floordiv(%c, %1)
  %e : int = aten::add(%d, %2)
  %f : int = aten::sub(%e, %3)
  return (%f)""",
    "none_checks": """graph(%x : Tensor, %o : int?):
  %n : NoneType = prim::Constant()
  %a : bool = aten::__is__(%x, %n)
  %b : bool = aten::__isnot__(%x, %n)
  %c : bool = aten::__is__(%o, %n)
  %r : (bool, bool, bool) = prim::TupleConstruct(%a, %b, %c)
  return (%r)""",
    "if_returning_its_condition": """graph(%c : bool, %x : int):
  %t : bool = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %r : bool = prim::If(%c)
    block0():
      -> (%t)
    block1():
      -> (%f)
  return (%r)""",
    "equal_to_itself": """graph(%a : int, %l : int[], %x : Tensor, %s : str):
  %e : bool = aten::eq(%a, %a)
  %n : bool = aten::ne(%a, %a)
  %le : bool = aten::eq(%l, %l)
  %t : Tensor = aten::eq(%x, %x)
  %se : bool = aten::eq(%s, %s)
  %r : (bool, bool, bool, Tensor, bool) = prim::TupleConstruct(%e, %n, %le, %t, %se)
  return (%r)""",
    "casts_of_what_already_has_the_type": """graph(%a : int, %o : int?):
  %i : int = aten::Int(%a)
  %u : int = prim::unchecked_cast(%a)
  %w : int = aten::_unwrap_optional(%a)
  %k : int = aten::ceil(%a)
  %r : (int, int, int, int) = prim::TupleConstruct(%i, %u, %w, %k)
  return (%r)""",
    "optional_if_output_both_branches_fill": """graph(%c : bool, %a : int):
  %r : int? = prim::If(%c)
    block0():
      -> (%a)
    block1():
      -> (%a)
  return (%r)""",
}


@pytest.mark.parametrize("name", PEEPHOLE)
def test_peephole_agrees_with_torch(name):
    check_pass(peephole_optimize, PEEPHOLE[name], changed=None,
               oracle=lambda graph: torch._C._jit_pass_peephole(graph, True))


def test_peephole_keeps_true_division_by_one():
    """Intentional difference: torch's peephole turns int `a / 1` into `a`, so torch.jit returns 3 where
    Python returns 3.0; tsjit keeps the aten::div (a float)."""
    check_pass(peephole_optimize, """
graph(%a : int):
  %1 : int = prim::Constant[value=1]()
  %d : float = aten::div(%a, %1)
  return (%d)""", changed=False, present=["aten::div"])


def test_broadcast_gradient_sizes_of_known_shapes_fold() -> None:
    """`_size_if_not_equal(a.size(), b.size())` (the gradient formulas' broadcast sizes): None where the known
    sizes are equal, the first list where they differ; unknown sizes stay."""
    graph = parse_ir("""
        graph(%a : Float(1, 64, strides=[64, 1], requires_grad=0, device=cpu),
              %b : Float(64, strides=[1], requires_grad=0, device=cpu), %u : Float(*, *, device=cpu)):
          %sa : int[] = aten::size(%a)
          %sb : int[] = aten::size(%b)
          %su : int[] = aten::size(%u)
          %equal : int[]? = aten::_size_if_not_equal(%sa, %sa)
          %differ : int[]? = aten::_size_if_not_equal(%sb, %sa)
          %unknown : int[]? = aten::_size_if_not_equal(%su, %sa)
          return (%equal, %differ, %unknown)""")
    assert peephole_optimize(graph, shape_peepholes=True)
    equal, differ, unknown = graph.outputs
    assert str(equal.node.kind) == "prim::Constant" and str(equal.type) == "NoneType"
    assert str(differ.node.kind) == "prim::ListConstruct" and len(differ.node.inputs) == 1
    assert str(unknown.node.kind) == "aten::_size_if_not_equal"
    assert not peephole_optimize(graph, shape_peepholes=True)


def test_broadcast_gradient_reductions_of_known_rank_become_one_sum() -> None:
    """`_grad_sum_to_size` to constant sizes (a bias's gradient in a backward graph): the leading dimensions, or
    the kept dimensions of size 1, summed by one aten::sum; a reduction that needs both, or none, stays."""
    text = """
        graph(%g : Float(*, *, device=cpu), %h : Float(*, *, *, device=cpu)):
          %bias : int[] = prim::Constant[value=[5]]()
          %column : int[] = prim::Constant[value=[4, 1]]()
          %both : int[] = prim::Constant[value=[4, 1]]()
          %same : int[] = prim::Constant[value=[4, 5]]()
          %a : Tensor = aten::_grad_sum_to_size(%g, %bias)
          %b : Tensor = aten::_grad_sum_to_size(%g, %column)
          %c : Tensor = aten::_grad_sum_to_size(%h, %both)
          %d : Tensor = aten::_grad_sum_to_size(%g, %same)
          %r : (Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%a, %b, %c, %d)
          return (%r)"""
    inputs = [(torch.randn(4, 5), torch.randn(3, 4, 5))]
    graph = check_pass(peephole_optimize, text, inputs=inputs, shape_peepholes=True,
                       present=["aten::sum(%g", "aten::sum(%g", "aten::_grad_sum_to_size(%h",
                                "aten::_grad_sum_to_size(%g"])
    sums = [n for n in graph.nodes() if str(n.kind) == "aten::sum"]
    assert [[constant_value(v.node) for v in n.inputs[1:3]] for n in sums] == [[[0], False], [[1], True]]
