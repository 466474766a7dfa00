"""The structural prim ops of NODE_OPERATIONS, each run on a tiny node built with the graph API.

These kinds carry their behaviour in the node (attributes, number of outputs, output type), so each test
builds the node, asks the factory for its Operation and calls it with runtime values.
"""

from __future__ import annotations

import importlib.util
import textwrap

import pytest
import torch

from tsjit.errors import RuntimeTsjitError
from tsjit.ir.graph import Graph
from tsjit.ir.objects import Object
from tsjit.ir.symbols import prim
from tsjit.ir.types import (
    AnyType,
    ClassType,
    IntType,
    ListType,
    OptionalType,
    StringType,
    TensorType,
    TupleType,
)
from tsjit.ops.prim_ops import NODE_OPERATIONS, UNINITIALIZED, is_instance

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit.script's own notice


def _operation(kind, inputs: int = 1, outputs: int = 1, **attributes):
    """The Operation of a `kind` node with the given number of inputs and outputs and attributes (a str is
    an `s` attribute, an int `i`, a list of types `tys`)."""
    graph = Graph()
    node = graph.create(kind, [graph.add_input() for _ in range(inputs)], outputs)
    for name, value in attributes.items():
        if isinstance(value, str):
            node.s_(name, value)
        elif isinstance(value, int):
            node.i_(name, value)
        else:
            node.tys_(name, value)
    graph.insert_node(node)
    return NODE_OPERATIONS[kind](node), node


@pytest.mark.parametrize("value", [3, 2.5, True, "text", None, [1, 2], (1, "a"), torch.device("cpu"), 1 + 2j])
def test_constant_returns_its_value(value):
    graph = Graph()
    node = graph.insert_constant(value).node
    assert NODE_OPERATIONS[prim.Constant](node)() == value


def test_tensor_constant_is_the_same_tensor_each_time():
    graph = Graph()
    tensor = torch.arange(3.0)
    operation = NODE_OPERATIONS[prim.Constant](graph.insert_constant(tensor).node)
    assert operation() is operation() and torch.equal(operation(), tensor)


def test_tuple_and_list_construct():
    tuple_construct, _ = _operation(prim.TupleConstruct, inputs=2)
    list_construct, _ = _operation(prim.ListConstruct, inputs=2)
    assert tuple_construct(1, "a") == (1, "a")
    first, second = list_construct(1, 2), list_construct(1, 2)
    assert first == [1, 2] and first is not second  # a fresh list each time it runs


@pytest.mark.parametrize(("outputs", "expected"), [(0, None), (1, 5), (2, (5, "x"))])
def test_tuple_unpack_gives_one_value_per_output(outputs, expected):
    unpack, _ = _operation(prim.TupleUnpack, outputs=outputs)
    value = (5,) if outputs == 1 else (5, "x")
    assert unpack(value) == expected


def test_tuple_index_counts_from_the_end_and_checks_bounds():
    index, _ = _operation(prim.TupleIndex, inputs=2)
    assert index((1, 2, 3), -1) == 3
    with pytest.raises(RuntimeError, match="Tuple list index out of range"):
        index((1, 2, 3), 3)


def test_tuple_slice_uses_its_attributes():
    slice_, _ = _operation(prim.TupleSlice, beg=1, end=3)
    assert slice_((0, 1, 2, 3)) == (1, 2)


def test_list_unpack_checks_the_length():
    unpack, _ = _operation(prim.ListUnpack, outputs=2)
    assert unpack([1, 2]) == (1, 2)
    with pytest.raises(RuntimeError, match="Expected 2 elements in a list but found 3"):
        unpack([1, 2, 3])


def test_dict_construct_keeps_insertion_order():
    construct, _ = _operation(prim.DictConstruct, inputs=6)
    assert list(construct("b", 1, "a", 2, "b", 3).items()) == [("b", 3), ("a", 2)]


def test_set_and_get_an_attribute_of_an_object():
    class_type = ClassType("__torch__.Point")
    class_type.add_attribute("x", IntType.get())
    set_x, _ = _operation(prim.SetAttr, inputs=2, outputs=0, name="x")
    get_x, _ = _operation(prim.GetAttr, name="x")
    point = Object(class_type)
    set_x(point, 7)
    assert get_x(point) == 7


def test_isinstance_of_an_object_asks_its_class_type():
    point_type, other_type = ClassType("__torch__.Point"), ClassType("__torch__.Other")
    assert is_instance(Object(point_type), point_type)
    assert not is_instance(Object(point_type), other_type)


def test_get_attr_reads_any_python_object():
    get_weight, _ = _operation(prim.GetAttr, name="weight")
    linear = torch.nn.Linear(2, 3)
    assert get_weight(linear) is linear.weight


@pytest.mark.parametrize(("value", "types", "expected"), [
    (1, [IntType.get()], True),
    ("a", [IntType.get()], False),
    ("a", [IntType.get(), StringType.get()], True),
    (None, [OptionalType(IntType.get())], True),
    ([1, 2], [ListType(IntType.get())], True),
    ([1, "a"], [ListType(IntType.get())], False),
    ((1, "a"), [TupleType((IntType.get(), StringType.get()))], True),
    (torch.ones(1), [TensorType.get()], True),
    (object(), [AnyType.get()], True),
])
def test_isinstance(value, types, expected):
    check, _ = _operation(prim.isinstance, types=types)
    assert check(value) is expected
    assert is_instance(value, types[-1]) is expected or len(types) > 1


def test_unchecked_cast_and_uninitialized():
    cast, _ = _operation(prim.unchecked_cast)
    uninitialized, _ = _operation(prim.Uninitialized, inputs=0)
    value = [1]
    assert cast(value) is value
    assert uninitialized() is UNINITIALIZED and repr(UNINITIALIZED) == "Uninitialized"


def test_constant_chunk_pads_with_none_when_chunk_returns_fewer():
    chunk, _ = _operation(prim.ConstantChunk, outputs=3, chunks=3, dim=0)
    pieces = chunk(torch.arange(6))
    assert [p.tolist() for p in pieces] == [[0, 1], [2, 3], [4, 5]]
    first, second, missing = chunk(torch.arange(2))
    assert first.tolist() == [0] and second.tolist() == [1] and missing is None


def test_constant_chunk_fails_as_torchscript_when_a_missing_piece_is_read():
    _, node = _operation(prim.ConstantChunk, outputs=2, chunks=2, dim=0)
    node.graph.register_output(node.outputs[1])  # the second piece is read
    chunk = NODE_OPERATIONS[prim.ConstantChunk](node)
    assert [p.tolist() for p in chunk(torch.arange(4))] == [[0, 1], [2, 3]]
    with pytest.raises(RuntimeError, match="Expected chunk to return at least 2 outputs, but got only 1"):
        chunk(torch.arange(1))


def test_chunk_sizes():
    sizes, _ = _operation(prim.ChunkSizes, outputs=2, chunks=2, dim=0)
    assert sizes([5, 2]) == ([3, 2], [2, 2])
    assert sizes([4, 2]) == ([2, 2], [2, 2])


def test_broadcast_sizes():
    broadcast, _ = _operation(prim.BroadcastSizes, inputs=3)
    assert broadcast([2, 1], [1, 3], [3]) == [2, 3]
    with pytest.raises(RuntimeError, match="must match"):
        broadcast([2], [3])


def test_enter_and_exit_call_the_context_manager():
    calls = []

    class Context:
        def __enter__(self):
            calls.append("enter")
            return self

        def __exit__(self, *exception):
            calls.append(exception)

    enter, _ = _operation(prim.Enter)
    exit_, _ = _operation(prim.Exit)
    context = Context()
    assert enter(context) is context
    exit_(context)
    assert calls == ["enter", (None, None, None)]


def test_print_writes_what_torch_jit_writes(capfd, tmp_path):
    source = textwrap.dedent("""
        import torch
        from typing import List

        def show(a: int, b: float, c: str, d: List[int], t: torch.Tensor):
            print(a, b, c, d, t)
    """)
    path = tmp_path / "printing_case.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("printing_case", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    args = (1, 2.5, "x", [1, 2], torch.tensor([1.0, 2.0]))
    torch.jit.script(module.show)(*args)
    expected = capfd.readouterr().out
    print_, _ = _operation(prim.Print, inputs=5, outputs=0)
    print_(*args)
    assert capfd.readouterr().out == expected


def test_raise_exception_raises_the_class_the_program_named():
    raise_, _ = _operation(prim.RaiseException, inputs=2, outputs=0)
    with pytest.raises(ValueError, match="^bad$"):
        raise_("bad", "builtins.ValueError")
    with pytest.raises(RuntimeTsjitError, match="^AssertionError: x > 0$"):
        raise_("AssertionError: x > 0", None)
    with pytest.raises(RuntimeTsjitError, match="^__main__.Unknown: oops$"):
        raise_("oops", "__main__.Unknown")


def test_num_to_tensor_keeps_the_number_width():
    num_to_tensor, _ = _operation(prim.NumToTensor)
    assert num_to_tensor(3).dtype == torch.int64
    assert num_to_tensor(2.5).dtype == torch.float64
    assert num_to_tensor(True).dtype == torch.bool


def test_implicit_tensor_to_num_follows_the_output_type():
    to_num, node = _operation(prim.ImplicitTensorToNum)
    node.output().set_type(IntType.get())
    to_int = NODE_OPERATIONS[prim.ImplicitTensorToNum](node)
    assert to_int(torch.tensor(3)) == 3 and type(to_int(torch.tensor(3))) is int
    with pytest.raises(RuntimeError, match="as an integral argument"):
        to_int(torch.tensor(3.5))
