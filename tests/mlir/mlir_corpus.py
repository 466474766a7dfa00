"""The IR corpus (tests/ir/corpus/graphs) as MLIR cases: each graph with its program's inputs and eager result.

A case's target is a graph read with tsjit's parse_ir: for functions the stored graph, for modules a ModuleValue
whose root methods have the graphs the corpus stores (plain, inlined or frozen) and whose submodules have
inlined methods (their own graphs call library functions through prim::CallFunction). Module graphs are taken
from the live module: the stored text names classes `___torch_mangle_N`, with N depending on what the process
scripted before. The expected result is the eager program (programs.py) run on the same inputs.

Until tsjit has its own ScriptModule, torch.jit is the oracle for what a module holds (class names, attribute
values and types, method graphs as text), and for tensor constants: graph text shows large tensors as
`<Tensor>` and small ones with four digits, so constants are copied from torch's graph.
"""

from __future__ import annotations

import functools
import os
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from tsjit.ir import types
from tsjit.ir.graph import Graph
from tsjit.ir.parser import parse_ir
from tsjit.ir.symbols import prim
from tsjit.ir.type_parser import parse_type
from tsjit.mlir import ModuleValue, Slot

CORPUS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ir", "corpus")
GRAPHS_DIR = os.path.join(CORPUS_DIR, "graphs")
if CORPUS_DIR not in sys.path:
    sys.path.insert(0, CORPUS_DIR)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # torch.jit.script's deprecation warning, from programs.py's script classes
    import programs  # noqa: E402  (needs CORPUS_DIR on sys.path)


# ---- torch.jit modules and graphs as tsjit's ------------------------------------------------------------------
def script(program):
    """torch.jit.script without its deprecation warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.jit.script(program)


def graph_from_torch(torch_graph, text: str | None = None, class_types: dict | None = None) -> Graph:
    """tsjit's Graph of a torch graph: `text` (default: the graph's own text) with torch's tensor constants."""
    graph = parse_ir(text if text is not None else str(torch_graph), class_types=class_types)
    tensors = {node.output().debugName(): node.t("value") for node in torch_graph.findAllNodes("prim::Constant")
               if node.hasAttribute("value") and node.kindOf("value") == "t"}
    for node in graph.all_nodes():
        name = node.outputs[0].debug_name if node.kind is prim.Constant and node.outputs else None
        if name in tensors:
            node.t_("value", tensors[name])
    return graph


def module_value(module, graph_kind: str = "graph", class_types: dict | None = None) -> ModuleValue:
    """The ModuleValue of a ScriptModule: its methods' `graph_kind` ("graph" or "inlined_graph") graphs,
    those of its submodules inlined."""
    class_types = {} if class_types is None else class_types
    methods = {name: graph_from_torch(getattr(module._c._get_method(name), graph_kind), class_types=class_types)
               for name in module._c._method_names()}
    return ModuleValue(module._c._type().qualified_name(), _slots(module, class_types), methods)


def _slots(module, class_types: dict) -> list[Slot]:
    """Attributes and submodules in name order (any order works if every instance of a class uses it)."""
    concrete = getattr(module, "_concrete_type", None)
    if concrete is None:  # a frozen module: its graphs read no attributes
        return []
    slots = {name: Slot(name, parse_type(type_.annotation_str, "annotation"), getattr(module, name))
             for name, (type_, _) in concrete.get_attributes().items()}
    for name, _ in concrete.get_modules():
        child = module_value(getattr(module, name), "inlined_graph", class_types)
        class_type = class_types.setdefault(child.qualified_name, types.ClassType(child.qualified_name, True))
        slots[name] = Slot(name, class_type, child)
    return [slots[name] for name in sorted(slots)]


# ---- the cases -------------------------------------------------------------------------------------------------
def _t(*sizes: int) -> torch.Tensor:
    return torch.randn(*sizes)


# Inputs of the scripted functions, by name. Every function has some, also where the argument types cannot
# cross into compiled code: the expected-failure list says why those fail.
FUNCTION_INPUTS: dict[str, Callable[[], tuple]] = {
    "if_elif": lambda: (_t(2, 3), 7), "for_range": lambda: (_t(2, 3), 5),
    "for_list": lambda: ([1, 2, 3], [_t(2), _t(3)]), "while_loop": lambda: (5,),
    "break_continue": lambda: ([1, -2, 3, 200, 4],), "early_return": lambda: (_t(3), False),
    "nested_loops": lambda: (_t(2, 3),), "ternary_and_boolops": lambda: (3, 5, True),
    "list_ops": lambda: ([4, 5],), "nested_lists": lambda: ([[1, 2], [3]],), "tensor_list": lambda: (_t(4, 3),),
    "tuple_ops": lambda: (_t(2), (2, 1.5, "a")), "dict_ops": lambda: ({"a": _t(2)}, "a"),
    "dict_int_keys": lambda: (3,), "optional_int": lambda: (_t(2, 3), 3),
    "optional_tensor": lambda: (_t(3), _t(3), 2.0), "union_isinstance": lambda: (4,),
    "any_type": lambda: (_t(2), True), "string_methods": lambda: ("a b", ["c"]),
    "string_escapes": lambda: ("s",), "non_ascii": lambda: ("ñ",), "string_compare": lambda: ("a", "b"),
    "int_float_math": lambda: (5, 2.5), "special_floats": lambda: (_t(4),),
    "complex_numbers": lambda: (1 + 2j, 3 - 1j), "dtype_device_constants": lambda: (_t(3),),
    "tensor_attributes": lambda: (_t(2, 3),), "inplace_ops": lambda: (_t(3, 4),),
    "tensor_indexing": lambda: (_t(4, 5, 6), 1), "tensor_kwargs": lambda: (_t(3, 3),),
    "raise_exception": lambda: (5,), "assert_stmt": lambda: (_t(2, 3), 3), "print_and_warn": lambda: (_t(2),),
    "with_no_grad": lambda: (_t(3),), "with_class": lambda: (_t(3),), "class_objects": lambda: (1.5,),
    "named_tuple": lambda: (_t(2),), "enum_values": lambda: (programs.Color.RED,),
    "function_calls": lambda: (_t(3),), "fork_wait": lambda: (_t(3),), "ignored_call": lambda: (_t(3),),
}

MODULE_INPUTS: dict[str, Callable[[], tuple]] = {
    "linear": lambda: (_t(2, 4),), "submodule_tree": lambda: (_t(2, 4),),
    "module_list_loop": lambda: (_t(2, 3),), "attributes": lambda: (_t(3),), "mutates_state": lambda: (_t(3),),
    "conv": lambda: (_t(1, 2, 5, 5),), "small_constants": lambda: (_t(3),),
}


@dataclass
class Case:
    """One corpus graph to compile: the target (Graph or ModuleValue), its inputs, the eager result."""

    name: str
    target: Any
    inputs: tuple
    expected: Any


def corpus_names() -> list[str]:
    return sorted(name[:-3] for name in os.listdir(GRAPHS_DIR) if name.endswith(".ir"))


def stored_text(name: str) -> str:
    with open(os.path.join(GRAPHS_DIR, name + ".ir"), encoding="utf-8") as file:
        return file.read()


@functools.cache
def build_case(name: str) -> Case:
    """The case of a corpus graph (seeded, so the inputs are the same on every run; built once)."""
    torch.manual_seed(0)
    base = name.removesuffix("_inlined").removesuffix("_frozen").removesuffix("_profiled")
    for builder, table in ((_function_case, FUNCTION_INPUTS), (_module_case, MODULE_INPUTS),
                           (_traced_case, programs.TRACED), (_fused_case, programs.FUSED)):
        if base in table:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # torch.jit's deprecation warnings (freeze, fork, trace)
                return builder(name, base)
    raise LookupError(f"{name} is not a program of the corpus")


def _function_case(name: str, base: str) -> Case:
    function = getattr(programs, base)
    inputs = FUNCTION_INPUTS[base]()
    graph = graph_from_torch(script(function).graph, stored_text(name))
    return Case(name, graph, inputs, function(*inputs))


def _module_case(name: str, base: str) -> Case:
    eager = programs.SCRIPTED_MODULES[base][0]()
    scripted = script(eager)
    if name.endswith("_frozen"):
        eager.eval()
        scripted = torch.jit.freeze(script(eager))
    inputs = MODULE_INPUTS[base]()
    graph_kind = "inlined_graph" if name.endswith("_inlined") else "graph"
    return Case(name, module_value(scripted, graph_kind), inputs, eager(*inputs))


def _traced_case(name: str, base: str) -> Case:
    program, make_inputs = programs.TRACED[base]
    program = program() if isinstance(program, type) else program
    inputs = make_inputs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(program, inputs)
    if isinstance(program, torch.nn.Module):
        return Case(name, module_value(traced), inputs, program(*inputs))
    return Case(name, graph_from_torch(traced.graph, stored_text(name)), inputs, program(*inputs))


def _fused_case(name: str, base: str) -> Case:
    function, make_inputs, _ = programs.FUSED[base]
    inputs = make_inputs()
    return Case(name, graph_from_torch(script(function).graph, stored_text(name)), inputs, function(*inputs))


# ---- running ---------------------------------------------------------------------------------------------------
RESULTS: dict[str, dict[str, bool]] = {}  # backend -> corpus graph -> passed, reported by conftest.py


def assert_close(got, expected, path: str = "result") -> None:
    """Compiled results against eager ones: tensors to 1e-4 (dtype and shape exact), scalars, tuples."""
    if isinstance(expected, torch.Tensor):
        assert isinstance(got, torch.Tensor), f"{path}: expected a tensor, got {got!r}"
        assert (got.dtype, got.shape) == (expected.dtype, expected.shape), \
            f"{path}: {got.dtype}{list(got.shape)} instead of {expected.dtype}{list(expected.shape)}"
        torch.testing.assert_close(got, expected, atol=1e-4, rtol=1e-4, equal_nan=True, msg=path)
    elif isinstance(expected, tuple | list):
        assert len(got) == len(expected), f"{path}: {len(got)} elements instead of {len(expected)}"
        for i, (a, b) in enumerate(zip(got, expected)):
            assert_close(a, b, f"{path}[{i}]")
    elif isinstance(expected, float):
        assert abs(got - expected) <= 1e-4 * max(1.0, abs(expected)), f"{path}: {got} instead of {expected}"
    else:
        assert got == expected, f"{path}: {got!r} instead of {expected!r}"
