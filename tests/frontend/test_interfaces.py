"""Interfaces: class interfaces typing script-class values, module interfaces typing submodules; the graphs are
checked against torch.jit's, the results against eager PyTorch, the errors against torch.jit's wording.

The interfaces are declared with torch.jit.interface, which tsjit recognizes, so torch.jit scripts the very same
programs; `tsjit.interface` is tested on its own."""

# ruff: noqa: UP006, UP035  (written as TorchScript users do)

import re
from typing import List

import pytest
import torch
from torch import Tensor, nn

import tsjit
from tsjit.api import script
from tsjit.api.module import RecursiveScriptModule
from tsjit.errors import CompileError, TsjitError
from tsjit.ir import types as T

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@torch.jit.interface
class Scorer:
    def score(self, x: int) -> int:
        """Docstrings may precede the `pass`."""
        pass


class AddK:
    def __init__(self, k: int):
        self.k = k

    def score(self, x: int) -> int:
        return x + self.k


class Double:
    def __init__(self):
        pass

    def score(self, x: int) -> int:
        return x * 2


class NoScore:
    def __init__(self):
        pass

    def other(self, x: int) -> int:
        return x


class FloatScore:
    def __init__(self):
        pass

    def score(self, x: float) -> int:
        return 1


def use_scorer(s: Scorer, x: int) -> int:
    return s.score(x)


def pick(flag: bool, x: int) -> int:
    s: Scorer = AddK(3)
    if flag:
        s = Double()
    return use_scorer(s, x)


def passes_no_score() -> int:
    return use_scorer(NoScore(), 1)


def passes_float_score() -> int:
    return use_scorer(FloatScore(), 1)


def annotates_no_score() -> int:
    s: Scorer = NoScore()
    return s.score(1)


def normalized(graph) -> str:
    """A graph's text without source comments and mangling (which depends on what compiled before)."""
    text = re.sub(r" # .*", "", str(graph))
    return re.sub(r"___torch_mangle_\d+\.", "", text)


torch.jit.script(AddK)  # torch.jit converts only compiled classes at its Python boundary
torch.jit.script(Double)


# ---- class interfaces -------------------------------------------------------------------------------------------
def test_interface_argument_emits_call_method_like_torch_jit():
    ours = script(use_scorer)
    assert isinstance(ours.graph.inputs[0].type, T.InterfaceType)
    assert normalized(ours.graph) == normalized(torch.jit.script(use_scorer).graph)
    assert "def use_scorer(s: __torch__.test_interfaces.Scorer," in ours.code


def test_calls_dispatch_on_the_object_held():
    ours = script(pick)
    assert normalized(ours.graph) == normalized(torch.jit.script(pick).graph)  # a Union(AddK, Double) after the if
    assert (ours(True, 4), ours(False, 4)) == (8, 7)


def total_score(scorers: List[Scorer], x: int) -> int:
    total = 0
    for s in scorers:
        total += s.score(x)
    return total


def test_python_objects_passed_for_an_interface():
    ours = script(use_scorer)
    assert ours(AddK(2), 5) == torch.jit.script(use_scorer)(AddK(2), 5) == 7
    assert ours(Double(), 5) == 10
    assert script(total_score)([AddK(1), Double()], 3) == torch.jit.script(total_score)([AddK(1), Double()], 3) == 10
    with pytest.raises(TsjitError, match="Expected a value of type"):
        script(use_scorer)(NoScore(), 1)


@pytest.mark.parametrize("fn, message", [
    (passes_no_score, "Class '__torch__.test_interfaces.NoScore' does not have method 'score' but "
                      "'__torch__.test_interfaces.Scorer' does."),
    (passes_float_score, "Method on class '__torch__.test_interfaces.FloatScore' (1) is not compatible with "
                         "interface '__torch__.test_interfaces.Scorer' (2)\n"
                         "  (1) score(__torch__.test_interfaces.FloatScore self, float x) -> int\n"
                         "  (2) score(InterfaceType<Scorer> self, int x) -> int"),
])
def test_classes_that_do_not_implement_the_interface(fn, message):
    with pytest.raises(CompileError) as error:
        script(fn)
    assert message in str(error.value)
    with pytest.raises(RuntimeError, match="is not compatible with interface|does not have method"):
        torch.jit.script(fn)


def test_annotated_variable_of_a_class_that_does_not_implement_the_interface():
    with pytest.raises(CompileError) as error:
        script(annotates_no_score)
    expected = ("Variable 's' is annotated with type __torch__.test_interfaces.Scorer but is being assigned to a "
                "value of type __torch__.test_interfaces.NoScore")
    assert expected in str(error.value)  # torch.jit's message, which then says why (torch.jit does not)
    assert "does not have method 'score'" in str(error.value)
    with pytest.raises(RuntimeError, match="Variable 's' is annotated with type __torch__.test_interfaces.Scorer"):
        torch.jit.script(annotates_no_score)


def declare_with_body():
    class WithBody:
        def f(self, x: int) -> int:
            return x

    return WithBody


def declare_without_return_type():
    class NoReturnType:
        def f(self, x: int):
            pass

    return NoReturnType


def declare_derived():
    class Derived(AddK):
        def f(self, x: int) -> int:
            pass

    return Derived


@pytest.mark.parametrize("declare, message", [
    (declare_with_body, "interfaces declarations should contain 'pass' statement."),
    (declare_without_return_type, "interface declarations must have a return type annotated."),
    (declare_derived, "TorchScript interface does not support inheritance yet."),
])
def test_declaration_errors_like_torch_jit(declare, message):
    with pytest.raises(TsjitError, match=re.escape(message)):
        tsjit.interface(declare())
    with pytest.raises(RuntimeError, match=re.escape(message)):
        torch.jit.interface(declare())


@tsjit.interface
class Shifter:
    def shift(self, x: int, by: int) -> int:
        pass

    def name(self) -> str:
        pass


class ShiftLeft:
    def __init__(self):
        self.tag = "left"

    def shift(self, x: int, by: int) -> int:
        return x << by

    def name(self) -> str:
        return self.tag


def shift_twice(s: Shifter, x: int) -> str:
    return s.name() + str(s.shift(s.shift(x, 1), 2))


def test_tsjit_interface_declares_an_interface_type():
    ours = script(shift_twice)
    declared = ours.graph.inputs[0].type
    assert isinstance(declared, T.InterfaceType) and not declared.is_module
    assert list(declared.methods) == ["name", "shift"]  # in name order, as torch.jit reads them
    assert str(declared.methods["shift"]) == "shift(InterfaceType<Shifter> self, int x, int by) -> int"
    assert ours(ShiftLeft(), 1) == "left8"


# ---- module interfaces ------------------------------------------------------------------------------------------
@torch.jit.interface
class OneTwo(nn.Module):
    def one(self, x: Tensor, y: Tensor) -> Tensor:
        pass

    def forward(self, x: Tensor) -> Tensor:
        pass


class Impl(nn.Module):
    def one(self, x: Tensor, y: Tensor) -> Tensor:
        return x + y

    def forward(self, x: Tensor) -> Tensor:
        return x * 2


class OtherImpl(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.full((2,), 3.0))

    def one(self, x: Tensor, y: Tensor) -> Tensor:
        return x - y

    def forward(self, x: Tensor) -> Tensor:
        return self.one(x * self.scale, x)


class LacksOne(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        return x


class Parent(nn.Module):
    sub: OneTwo

    def __init__(self, sub: nn.Module):
        super().__init__()
        self.sub = sub

    def forward(self, x: Tensor) -> Tensor:
        return self.sub.forward(x) + self.sub(x) + self.sub.one(x, x)


def test_interface_typed_submodule_graph_matches_torch_jit():
    ours, theirs = script(Parent(Impl())), torch.jit.script(Parent(Impl()))
    assert normalized(ours.graph) == normalized(theirs.graph)
    assert "%sub.1 : InterfaceType<OneTwo> = prim::GetAttr[name=\"sub\"](%self)" in str(ours.graph)
    assert ours.code == theirs.code


def test_the_submodule_compiles_the_interface_methods():
    ours = script(Parent(Impl()))  # Impl.forward never calls `one`: it compiles as a method of the interface
    assert isinstance(ours.sub, RecursiveScriptModule)
    assert set(ours.sub._c.type.methods) >= {"forward", "one"}
    x = torch.tensor([1.0, 2.0])
    assert torch.equal(ours(x), Parent(Impl())(x))
    assert torch.equal(ours.sub.one(x, x), x + x)


def test_swapping_the_submodule_for_another_implementation():
    ours = script(Parent(Impl()))
    other = OtherImpl()
    ours.sub = script(other)  # forward calls `one`, so scripting OtherImpl compiles it
    x = torch.tensor([1.0, 2.0])
    assert torch.equal(ours(x), Parent(OtherImpl())(x))
    assert list(dict(ours.named_parameters())) == ["sub.scale"]
    with pytest.raises(TsjitError, match="is not compatible with interface"):
        ours.sub = script(nn.ReLU())


def test_a_submodule_without_an_interface_method_is_an_error():
    with pytest.raises(TsjitError, match="Module 'LacksOne' has no method 'one'"):
        script(Parent(LacksOne()))
    with pytest.raises(AttributeError, match="'LacksOne' object has no attribute 'one'"):
        torch.jit.script(Parent(LacksOne()))


def test_a_script_class_is_no_module_interface():
    interface = script(Parent(Impl()))._c.type.get_attribute("sub")
    reason = interface.why_not_implemented_by(T.ClassType("__torch__.C"))
    assert reason == ("Class '__torch__.C' is not a subtype of the module interface '__torch__.test_interfaces."
                      "OneTwo' , only ScriptModule class can be subtype of module interface.")


@tsjit.interface
class Unary(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        pass


class UsesUnary(nn.Module):
    sub: Unary

    def __init__(self):
        super().__init__()
        self.sub = Impl()

    def forward(self, x: Tensor) -> Tensor:
        return self.sub(x) + 1


def test_tsjit_interface_declares_a_module_interface():
    ours = script(UsesUnary())
    declared = ours._c.type.get_attribute("sub")
    assert isinstance(declared, T.InterfaceType) and declared.is_module
    assert "%sub : InterfaceType<Unary> = prim::GetAttr[name=\"sub\"](%self)" in str(ours.graph)
    x = torch.tensor([1.0, 2.0])
    assert torch.equal(ours(x), UsesUnary()(x))
