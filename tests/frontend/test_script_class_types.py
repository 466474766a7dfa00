"""Script classes in the frontend: ClassTypes inferred from `__init__`, the nodes construction, attributes and
methods emit (checked against torch.jit's graphs), `tsjit.script(cls)`, the Python boundary, and torch.jit's
errors for what script classes cannot do."""

# ruff: noqa: UP006, UP035  (written as TorchScript users do)

from __future__ import annotations

import collections
from typing import Any, List

import pytest
import torch

from tsjit.api import script
from tsjit.errors import CompileError
from tsjit.frontend.script_class import script_class_type
from tsjit.ir import types as T

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


class Pair:
    def __init__(self, a: int, b: torch.Tensor):
        self.a = a
        self.b = b
        self.names: List[str] = []
        self.maybe = 1.5
        if a > 0:
            self.maybe = 2.5

    def total(self) -> torch.Tensor:
        return self.b + self.a

    def bump(self) -> int:
        self.a += 1
        return self.a


class Scripted:
    def __init__(self):
        self.v = 3

    def twice(self) -> int:
        return self.v * 2


class Empty:
    def value(self) -> int:
        return 4


class SetsUndeclared:
    def __init__(self):
        self.x = 1

    def later(self):
        self.y = 2


class WrongType:
    def __init__(self):
        self.x = 1

    def later(self):
        self.x = 2.5


class ClassConstant:
    K = 3

    def __init__(self):
        self.v = 1

    def read(self) -> int:
        return self.K


class Recursive:
    def __init__(self):
        self.v = 1

    def down(self, n: int) -> int:
        if n <= 0:
            return 0
        return self.down(n - 1)


class FirstInBranch:
    def __init__(self, a: int):
        if a > 0:
            self.x = a


class Base:
    def __init__(self):
        self.v = 1

    def inherited(self) -> int:
        return 7


class Derived(Base):
    def __init__(self):
        self.w = 2


class NotAContextManager:
    def __init__(self):
        self.v = 1


class WithStatic:
    def __init__(self):
        self.v = 1

    @staticmethod
    def helper(x: int) -> int:
        return x + 1


# ---- types -------------------------------------------------------------------------------------------------------
def test_attributes_are_inferred_from_init_with_annotations():
    class_type = script_class_type(Pair)
    attributes = {a.name: a.type for a in class_type.attributes}
    assert attributes == {"a": T.IntType.get(), "b": T.TensorType.get(), "names": T.ListType(T.StringType.get()),
                          "maybe": T.FloatType.get()}
    assert class_type.qualified_name == f"__torch__.{__name__}.Pair"
    assert set(class_type.methods) == {"__init__", "total", "bump"}


def test_script_of_a_class_returns_it_compiled():
    assert script(Scripted) is Scripted
    class_type = script_class_type(Scripted)
    assert class_type.methods["twice"].schema.returns[0].type == T.IntType.get()
    assert Scripted().twice() == 6  # the Python class is untouched


def kinds(graph) -> collections.Counter:
    return collections.Counter(str(n.kind) for n in graph.all_nodes())


def torch_kinds(block) -> collections.Counter:
    counts: collections.Counter = collections.Counter()
    for node in block.nodes():
        counts[node.kind()] += 1
        for inner in node.blocks():
            counts.update(torch_kinds(inner))
    return counts


def construct_and_call(n: int, x: torch.Tensor) -> torch.Tensor:
    p = Pair(n, x)
    p.bump()
    p.a = 5
    return p.total()


def test_construction_is_create_object_then_init():
    graph = script(construct_and_call).graph
    nodes = [str(n.kind) for n in graph.nodes() if str(n.kind) != "prim::Constant"]
    assert nodes == ["prim::CreateObject", "prim::CallMethod", "prim::CallMethod", "prim::SetAttr", "prim::CallMethod"]
    assert [n.s("name") for n in graph.nodes() if str(n.kind) == "prim::CallMethod"] == ["__init__", "bump", "total"]
    assert kinds(graph) == torch_kinds(torch.jit.script(construct_and_call).graph)


def test_inlined_graph_matches_torch_jit():
    ours = script(construct_and_call).inlined_graph
    theirs = torch.jit.script(construct_and_call).inlined_graph
    assert kinds(ours) == torch_kinds(theirs)
    assert "prim::CallMethod" not in kinds(ours)


def test_runs_like_python():
    x = torch.randn(3)
    assert torch.equal(script(construct_and_call)(2, x), construct_and_call(2, x))


def empty_class() -> int:
    return Empty().value()


def test_class_without_init():
    assert script(empty_class)() == 4


def uses_static(n: int) -> int:
    return WithStatic.helper(n)


def test_only_the_class_body_compiles():
    assert script(derived_class)() == 2
    assert not script_class_type(Derived).has_attribute("v")


def test_static_method_is_a_function_call():
    scripted = script(uses_static)
    assert "prim::CallFunction" in kinds(scripted.graph)
    assert scripted(3) == 4


# ---- the Python boundary -----------------------------------------------------------------------------------------
def takes_and_returns(p: Pair, xs: List[Pair]) -> List[Pair]:
    p.bump()
    xs.append(p)
    return xs


def test_objects_cross_the_python_boundary():
    p, q = Pair(1, torch.ones(2)), Pair(-3, torch.zeros(2))
    result = script(takes_and_returns)(p, [q])
    assert [type(r) for r in result] == [Pair, Pair]
    assert [r.a for r in result] == [-3, 2]
    assert p.a == 1  # arguments are copied into TorchScript objects, as torch.jit does


def test_wrong_argument_type_is_rejected():
    with pytest.raises(Exception, match="Expected a value of type"):
        script(takes_and_returns)(Scripted(), [])


# ---- errors ------------------------------------------------------------------------------------------------------
def compile_error(fn) -> str:
    with pytest.raises(CompileError) as info:
        script(fn)
    message = str(info.value)
    assert "<--- HERE" in message
    return message


def sets_undeclared() -> int:
    s = SetsUndeclared()
    s.later()
    return 1


def sets_new_attribute_outside() -> int:
    s = Scripted()
    s.other = 3
    return 1


def assigns_wrong_type() -> int:
    w = WrongType()
    w.later()
    return 1


def reads_class_constant() -> int:
    return ClassConstant().read()


def recursive_method() -> int:
    return Recursive().down(3)


def first_assignment_in_branch() -> int:
    return FirstInBranch(1).x


def derived_class() -> int:
    return Derived().w


def inherited_method() -> int:
    return Derived().inherited()


def with_non_context_manager() -> int:
    with NotAContextManager():
        pass
    return 1


def wrong_constructor_arity() -> int:
    return Scripted(1).v


def missing_attribute() -> int:
    return Scripted().nope


def static_through_instance() -> int:
    return WithStatic().helper(1)


@pytest.mark.parametrize(("fn", "message"), [
    (sets_undeclared, "Tried to set nonexistent attribute: y. Did you forget to initialize it in __init__()?"),
    (sets_new_attribute_outside, "Tried to set nonexistent attribute: other"),
    (assigns_wrong_type, "Wrong type for attribute assignment. Expected int but got float"),
    (reads_class_constant, "'K' is defined as a class attribute which currently is not supported"),
    (recursive_method, "method 'down' is called recursively. Recursive calls are not supported"),
    (first_assignment_in_branch, "First assignment cannot be in a control-flow block"),
    (inherited_method, "object has no attribute or method 'inherited'"),
    (with_non_context_manager, "does not define __enter__ and __exit__"),
    (wrong_constructor_arity, "Expected at most 0 arguments but found 1 positional"),
    (missing_attribute, "object has no attribute or method 'nope'"),
    (static_through_instance, "object has no attribute or method 'helper'"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_errors_like_torch_jit(fn, message: str):
    assert message in compile_error(fn)
    with pytest.raises(Exception):  # noqa: B017  (torch.jit rejects the same program)
        torch.jit.script(fn)


def test_a_failed_class_can_be_retried():
    with pytest.raises(CompileError):
        script_class_type(SetsUndeclared)
    with pytest.raises(CompileError):
        script_class_type(SetsUndeclared)


def annotation_outside_init_source() -> Any:
    class Annotated:
        def __init__(self):
            self.x = 1

        def later(self):
            self.x: int = 2

    return Annotated


def test_annotated_attribute_outside_init():
    with pytest.raises(Exception, match="must be declared in __init__"):
        script(annotation_outside_init_source())
