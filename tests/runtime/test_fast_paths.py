"""The runtime's fast paths behave as the general ones: unrolled op steps (values still die at their last use,
repeated and many inputs), prim::GetAttr reading Objects directly, register files built from the inputs."""

from __future__ import annotations

import weakref

import pytest
import torch

from tsjit.ir.objects import Object
from tsjit.ir.parser import parse_ir
from tsjit.ir.types import ClassType, IntType, TensorType
from tsjit.ops.registry import register_operator
from tsjit.runtime.interpreter import Code
from tsjit.runtime.operations import operation_for_node
from tsjit.runtime.run import run_graph

_watched: list[weakref.ref] = []


@register_operator("tsjit_fast_test::fresh(Tensor x) -> Tensor")
def fresh(x: torch.Tensor) -> torch.Tensor:
    """A new tensor whose lifetime the test watches."""
    result = x.clone()
    _watched.append(weakref.ref(result))
    return result


@register_operator("tsjit_fast_test::gone() -> bool")
def gone() -> bool:
    return _watched[-1]() is None


def test_a_value_read_twice_by_its_last_use_dies_there() -> None:
    _watched.clear()
    graph = parse_ir("""
        graph(%x : Tensor):
          %f : Tensor = tsjit_fast_test::fresh(%x)
          %y : Tensor = aten::mul(%f, %f)
          %d : bool = tsjit_fast_test::gone()
          return (%y, %d)""")
    y, dead = run_graph(graph, torch.full((2,), 3.0), optimize=False)
    assert torch.equal(y, torch.full((2,), 9.0)) and dead


@pytest.mark.parametrize("count", [0, 1, 7, 8, 9, 12])
def test_ops_with_any_number_of_inputs(count: int) -> None:
    inputs = ", ".join(f"%a{i} : int" for i in range(count))
    values = ", ".join(f"%a{i}" for i in range(count))
    graph = parse_ir(f"graph({inputs}):\n  %l : int[] = prim::ListConstruct({values})\n  return (%l)\n")
    assert run_graph(graph, *range(count), optimize=False) == list(range(count))


def test_unread_inputs_still_take_their_positions() -> None:
    graph = parse_ir("graph(%a : int, %b : int, %c : int):\n  %s : int = aten::add(%a, %c)\n  return (%s)\n")
    assert Code(graph).new_registers([1, 2, 3])[:2] == [1, 3]
    assert run_graph(graph, 1, 100, 3, optimize=False) == 4


# ---- prim::GetAttr -----------------------------------------------------------------------------------------------
def _box_type() -> ClassType:
    box = ClassType("__torch__.FastPathBox")
    box.add_attribute("w", TensorType.get())
    box.add_attribute("n", IntType.get())
    return box


def _get_attr(name: str, box: ClassType):
    graph = parse_ir(f'graph(%self : __torch__.FastPathBox):\n  %v : Tensor = prim::GetAttr[name="{name}"](%self)\n'
                     "  return (%v)\n", class_types={box.qualified_name: box})
    (node,) = [n for n in graph.nodes() if n.kind.name == "GetAttr"]
    return operation_for_node(node)


def test_get_attr_reads_objects_and_sees_writes() -> None:
    box = _box_type()
    w = torch.ones(2)
    obj = Object(box, {"w": w, "n": 3})
    get_w = _get_attr("w", box)
    assert get_w(obj) is w
    obj.w = torch.zeros(1)
    assert get_w(obj) is obj.w


def test_get_attr_of_an_unset_attribute_raises_as_getattr_does() -> None:
    box = _box_type()
    with pytest.raises(AttributeError, match="'__torch__.FastPathBox' object has no attribute or method 'n'"):
        _get_attr("n", box)(Object(box))


def test_get_attr_reads_any_python_object_and_the_objects_own_slots() -> None:
    box = _box_type()
    linear = torch.nn.Linear(2, 3)
    assert _get_attr("weight", box)(linear) is linear.weight
    assert _get_attr("type", box)(Object(box)) is box  # the slot, as getattr reads it


# ---- metadata readers --------------------------------------------------------------------------------------------
SIZES = """
graph(%x : Tensor, %d : int):
  %s : int = aten::size(%x, %d)
  %n : int = aten::dim(%x)
  return (%s, %n)
"""


@pytest.mark.parametrize("shape, dim, expected", [((3, 4), 1, (4, 2)), ((3, 4), -2, (3, 2)), ((5,), 0, (5, 1))])
def test_size_and_dim_read_the_tensor(shape, dim, expected) -> None:
    assert run_graph(parse_ir(SIZES), torch.ones(shape), dim) == expected


@pytest.mark.parametrize("shape, dim", [((3, 4), 5), ((), 0)])
def test_size_out_of_range_raises_what_aten_raises(shape, dim) -> None:
    with pytest.raises(IndexError) as aten_error:
        torch.ops.aten.size.int(torch.ones(shape), dim)
    with pytest.raises(IndexError) as ours:
        run_graph(parse_ir(SIZES), torch.ones(shape), dim)
    assert str(ours.value.__cause__) == str(aten_error.value)
    assert str(ours.value).endswith(f"IndexError: {aten_error.value}\n")
