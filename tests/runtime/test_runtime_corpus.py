"""Every corpus graph that takes no module, read with parse_ir, runs in the interpreter and gives torch.jit's
results for the same inputs (exact for ints, bools and strings; allclose for floats and tensors).

The corpus (tests/ir/corpus) holds the graph text torch.jit printed for the programs in programs.py. Text cannot
carry everything a graph refers to, so the test supplies it the way a loader would: the Function behind
`prim::Constant[name="helper"]`, the Python callables of Python ops (`^python_side()(%x)`), and the methods of
the script classes and the members of the enum the graphs name (through parse_ir's `class_types`).
"""

from __future__ import annotations

import functools
import math
import os
import sys

import pytest
import torch

from tsjit.errors import RuntimeTsjitError
from tsjit.ir.parser import parse_ir
from tsjit.ir.printer import EnumValue
from tsjit.ir.symbols import prim
from tsjit.ir.types import ClassType, EnumType, FunctionType, IntType
from tsjit.runtime.function import Function
from tsjit.runtime.run import run_graph

CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ir", "corpus")
GRAPHS = os.path.join(CORPUS, "graphs")
if CORPUS not in sys.path:
    sys.path.insert(0, CORPUS)

import programs  # noqa: E402  (needs CORPUS on sys.path)

EXCLUDED = {
    "every_attribute_kind": "a printer fixture: my::every_kind has no implementation (torch.jit cannot run it)",
}


def tensor(*shape: int, seed: int = 0, dtype=torch.float32) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=generator).to(dtype)


# name -> a factory of argument tuples (fresh objects on each call, since programs may mutate their inputs)
INPUTS = {
    "if_elif": lambda: [(tensor(3), n) for n in (11, 6, 0, 3)],
    "for_range": lambda: [(tensor(3), 5), (tensor(3), 0)],
    "for_list": lambda: [([1, 2, 3], [tensor(2), tensor(3, 4)]), ([], [])],
    "while_loop": lambda: [(5,), (20,), (0,)],
    "break_continue": lambda: [([1, -2, 3, 200, 4],), ([],)],
    "early_return": lambda: [(tensor(2), True), (torch.tensor([0.5, 0.75]), False), (torch.zeros(2), False),
                             (torch.full((2,), 5.0), False)],
    "nested_loops": lambda: [(tensor(3),)],
    "ternary_and_boolops": lambda: [(3, 5, True), (-1, 2, False), (12, 1, True), (1, 9, True)],
    "list_ops": lambda: [([4, 5, 6],), ([1, 3],), ([],)],
    "nested_lists": lambda: [([[1, 2], [3]],)],
    "tensor_list": lambda: [(tensor(4, 3),)],
    "tuple_ops": lambda: [(tensor(3), (2, 1.5, "s"))],
    "dict_ops": lambda: [({"a": tensor(2), "b": tensor(2, seed=1)}, "a"),
                         ({"a": tensor(2), "b": tensor(2, seed=1), "c": tensor(1)}, "zz")],
    "dict_int_keys": lambda: [(4,), (1,), (0,)],
    "optional_int": lambda: [(tensor(3), None), (tensor(3), 3)],
    "optional_tensor": lambda: [(tensor(3), None, None), (tensor(3), tensor(3, seed=1), 2.0),
                                (tensor(3), tensor(3, seed=1), 0.5)],
    "union_isinstance": lambda: [(tensor(3),), (3,), ([1, 2],)],
    "any_type": lambda: [(5, True), ("s", False), (tensor(2), True)],
    "string_methods": lambda: [("abc def z", ["p", "q"]), ("aq b", [])],
    "string_escapes": lambda: [("x",)],
    "non_ascii": lambda: [("ñ",), ("abc",)],
    "string_compare": lambda: [("a", "b"), ("x", "y z"), ("b", "a"), ("bb", "a")],
    "int_float_math": lambda: [(7, 2.5), (-4, 3.25), (0, -1.5)],
    "special_floats": lambda: [(tensor(3),)],
    "complex_numbers": lambda: [(1 + 2j, 3 - 1j)],
    "dtype_device_constants": lambda: [(tensor(3),)],
    "tensor_attributes": lambda: [(tensor(2, 3),), (torch.ones(4, dtype=torch.int64),)],
    "inplace_ops": lambda: [(tensor(4),)],
    "tensor_indexing": lambda: [(tensor(4, 3, 2), 1)],
    "tensor_kwargs": lambda: [(tensor(3, 3),)],
    "raise_exception": lambda: [(5,), (-1,), (1000,)],
    "assert_stmt": lambda: [(tensor(2, 2), 3), (tensor(2, 2), 0), (tensor(3), 1)],
    "print_and_warn": lambda: [(tensor(2),)],
    "with_no_grad": lambda: [(tensor(3),)],
    "with_class": lambda: [(tensor(3),)],
    "class_objects": lambda: [(1.5,), (-3.0,)],
    "named_tuple": lambda: [(tensor(3),)],
    "enum_values": lambda: [(programs.Color.RED,), (programs.Color.GREEN,)],
    "function_calls": lambda: [(tensor(3),)],
    "fork_wait": lambda: [(tensor(3),)],
    "traced_shapes": lambda: [(tensor(3, 4),)],
    "traced_constants": lambda: [(tensor(2),)],
    "traced_dtypes": lambda: [(tensor(2, 3), torch.randint(0, 5, (2, 3), generator=torch.Generator()))],
    "fused_pointwise": lambda: [(tensor(4, 4), tensor(4, 4, seed=1))],
    "fused_with_control": lambda: [(tensor(8), tensor(8, seed=1), True), (tensor(8), tensor(8, seed=1), False)],
    "fused_grad": lambda: [(tensor(4, 4).requires_grad_(), tensor(4, 4, seed=1).requires_grad_())],
    "nested_subgraphs": lambda: [(tensor(5), True), (tensor(5), False)],
    "ignored_call": lambda: [(tensor(3),)],
    "traced_python_op": lambda: [(tensor(3),)],
}
INPUTS.update({f"{name}_profiled": INPUTS[name] for name in programs.FUSED})


def oracle(name: str):
    """The program the graph came from, as torch.jit (or, for hand-built and fused graphs, eager) runs it."""
    scripted = {fn.__name__: fn for fn in programs.SCRIPTED_FUNCTIONS}
    if name in scripted:
        return torch.jit.script(scripted[name])
    if name in programs.TRACED:
        target, make_inputs = programs.TRACED[name]
        return torch.jit.trace(target, make_inputs(), check_trace=False)
    if name == "nested_subgraphs":
        return lambda x, flag: torch.relu(torch.relu(x))
    return programs.FUSED[name.removesuffix("_profiled")][0]


# ---- what the text cannot carry ------------------------------------------------------------------------------
def torch_graph_text(qualified_name: str) -> str:
    return str(torch.jit._state._python_cu.find_function(qualified_name).graph)


SCRIPT_CLASSES = ("__torch__.programs.Counter", "__torch__.programs.Point",
                  "__torch__.torch.autograd.grad_mode.no_grad")


@functools.cache
def class_types() -> dict:
    """The script classes and the enum the graphs name, with their methods compiled from torch.jit's graphs."""
    torch.jit.script(programs.with_no_grad)  # makes torch.jit compile its `no_grad` class
    types: dict = {"__torch__.programs.Color": EnumType("__torch__.programs.Color", IntType.get(),
                                                        [(c.name, c.value) for c in programs.Color])}
    for qualified in SCRIPT_CLASSES:
        types[qualified] = ClassType(qualified)
        for method in torch.jit._state._python_cu.get_class(qualified).method_names():
            graph = parse_ir(torch_graph_text(f"{qualified}.{method}"), class_types=types)
            types[qualified].methods[method] = Function(method, graph)
    return types


def resolve_function_constants(graph, functions: dict) -> None:
    """Give `prim::Constant[name="helper"]()` nodes (also inside subgraphs) the Function they name."""
    for node in graph.all_nodes():
        if node.has_attribute("Subgraph"):
            resolve_function_constants(node.g("Subgraph"), functions)
        if node.kind is prim.Constant and isinstance(node.output().type, FunctionType):
            if node.s("name") in functions:
                node.ival_("value", functions[node.s("name")])


@functools.cache
def helper_function() -> Function:
    return Function("helper", parse_ir(str(torch.jit.script(programs.helper).graph)))


# a Python op's callable, by the name the graph prints; the traced op's scalar argument 2.5 is printed, not passed
PYTHON_OPS = {"python_side": programs.python_side,
              "ScaleFunction": lambda x: programs.ScaleFunction.apply(x, 2.5)}


def resolve_python_ops(graph) -> None:
    """Give `^python_side[]()(%x)` nodes the callable they name, as the frontend does when it emits them."""
    for node in graph.all_nodes():
        if node.kind is prim.PythonOp:
            node.ival_("pyobj", PYTHON_OPS[node.s("name")])


def load(name: str, types: dict):
    with open(os.path.join(GRAPHS, name + ".ir"), encoding="utf-8") as f:
        graph = parse_ir(f.read(), class_types=types)
    resolve_function_constants(graph, {"helper": helper_function()})
    resolve_python_ops(graph)
    return graph


def for_tsjit(value, types: dict):
    """An enum member as a constant of the graph's enum type: what tsjit's enum values are."""
    if isinstance(value, programs.Color):
        return EnumValue(types["__torch__.programs.Color"], value.name, value.value)
    return value


def graph_names() -> list[str]:
    names = sorted(f[:-3] for f in os.listdir(GRAPHS) if f.endswith(".ir"))
    return [name for name in names if name not in EXCLUDED and not takes_module(name)]


def takes_module(name: str) -> bool:
    with open(os.path.join(GRAPHS, name + ".ir"), encoding="utf-8") as f:
        graph = parse_ir(f.read())
    return bool(graph.inputs) and isinstance(graph.inputs[0].type, ClassType)


# ---- comparing results -----------------------------------------------------------------------------------------
def assert_same(actual, expected, where: str = "result") -> None:
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor), f"{where}: {actual!r} is not a tensor"
        assert (actual.dtype, actual.shape) == (expected.dtype, expected.shape), where
        # atol: fused kernels round differently from ATen's functions, which shows where a result cancels
        # (fused_grad: 2.5e-4 from terms near 1 differs in float32's last bits, ~6e-8)
        assert torch.allclose(actual.detach(), expected.detach(), atol=1e-6, equal_nan=True), \
            f"{where}: {actual} != {expected}"
    elif isinstance(expected, (float, complex)):
        assert type(actual) is type(expected), f"{where}: {actual!r} vs {expected!r}"
        assert _close(actual, expected), f"{where}: {actual!r} != {expected!r}"
    elif isinstance(expected, (list, tuple)):
        assert isinstance(actual, type(expected).__mro__[-2 if isinstance(expected, tuple) else 0]), where
        assert len(actual) == len(expected), f"{where}: {actual!r} vs {expected!r}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, f"{where}[{i}]")
    elif isinstance(expected, dict):
        assert list(actual) == list(expected), f"{where}: keys {list(actual)} vs {list(expected)}"
        for key in expected:
            assert_same(actual[key], expected[key], f"{where}[{key!r}]")
    else:
        assert type(actual) is type(expected) and actual == expected, f"{where}: {actual!r} != {expected!r}"


def _close(a: float | complex, b: float | complex) -> bool:
    if isinstance(b, float) and math.isnan(b):
        return math.isnan(a)
    return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1.0)


def outcome(fn, args):
    """('value', result) or ('error', exception)."""
    try:
        return "value", fn(*args)
    except Exception as error:  # the oracle raises torch.jit.Error, tsjit an InterpreterError
        return "error", error


@pytest.mark.parametrize("name", graph_names())
def test_corpus_graph_runs_like_torch_jit(name: str) -> None:
    assert name in INPUTS, f"add example inputs for the corpus graph {name!r} to INPUTS"
    types = class_types()
    graph = load(name, types)
    expected_fn = oracle(name)
    for index, (args, oracle_args) in enumerate(zip(INPUTS[name](), INPUTS[name]())):
        got_kind, got = outcome(lambda *a: run_graph(graph, *a), [for_tsjit(a, types) for a in args])
        want_kind, want = outcome(expected_fn, oracle_args)
        assert got_kind == want_kind, f"inputs #{index}: tsjit gave {got_kind} {got!r}, torch.jit {want!r}"
        if want_kind == "error":
            assert isinstance(got, RuntimeTsjitError), repr(got)
        else:
            assert_same(got, want, f"inputs #{index}")


def test_every_corpus_graph_without_a_module_is_run_or_excluded_for_a_reason() -> None:
    names = sorted(f[:-3] for f in os.listdir(GRAPHS) if f.endswith(".ir"))
    run = graph_names()
    assert set(EXCLUDED) <= set(names)
    assert set(run) <= set(INPUTS)
    skipped = [name for name in names if name not in run and name not in EXCLUDED]
    assert all(takes_module(name) for name in skipped)
