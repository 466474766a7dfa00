"""Properties of script classes and modules (getters and setters compiled as `__<name>_getter/setter` methods),
and script-class instances held as module attributes; graphs checked against torch.jit's, results against
eager PyTorch."""

# ruff: noqa: UP006, UP035  (written as TorchScript users do)

import re
from typing import List

import pytest
import torch
from torch import Tensor, nn

from tsjit.api import script
from tsjit.errors import CompileError, TsjitError
from tsjit.frontend.script_class import script_class_type

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def normalized(graph) -> str:
    """A graph's text without source comments, mangling, and the numbers of unnamed values (the two emitters
    create different temporaries, which are gone from the graph but used numbers)."""
    text = re.sub(r"___torch_mangle_\d+\.", "", re.sub(r" # .*", "", str(graph)))
    numbers: dict[str, str] = {}
    return re.sub(r"%\d+\b", lambda m: numbers.setdefault(m.group(), f"%v{len(numbers)}"), text)


class Celsius:
    __jit_unused_properties__ = ["as_object"]

    def __init__(self, degrees: float):
        self._degrees = degrees

    @property
    def fahrenheit(self) -> float:
        return self._degrees * 1.8 + 32.0

    @fahrenheit.setter
    def fahrenheit(self, value: float):
        self._degrees = (value - 32.0) / 1.8

    @property
    def freezing(self) -> bool:
        return self._degrees <= 0.0

    @property
    def as_object(self):
        return object()  # never compiled: listed in __jit_unused_properties__

    @property
    @torch.jit.unused
    def unused_getter(self) -> List[object]:
        return [object()]


def convert(degrees: float) -> float:
    c = Celsius(degrees)
    before = c.fahrenheit
    c.fahrenheit = 212.0
    return before + c._degrees + float(c.freezing)


def sets_read_only() -> bool:
    c = Celsius(1.0)
    c.freezing = True
    return c.freezing


def test_class_properties_call_getters_and_setters_like_torch_jit():
    ours = script(convert)
    assert normalized(ours.graph) == normalized(torch.jit.script(convert).graph)
    assert "prim::CallMethod[name=\"__fahrenheit_setter\"]" in str(ours.graph)
    assert ours(-5.0) == convert(-5.0)


def test_unused_properties_are_not_compiled():
    class_type = script_class_type(Celsius)
    assert class_type.properties == {"fahrenheit": ("__fahrenheit_getter", "__fahrenheit_setter"),
                                     "freezing": ("__freezing_getter", None)}
    assert "__as_object_getter" not in class_type.methods and "__unused_getter_getter" not in class_type.methods


def test_assigning_a_read_only_property_is_an_error():
    with pytest.raises(CompileError, match="Tried to set read-only attribute: freezing"):
        script(sets_read_only)
    with pytest.raises(RuntimeError, match="Tried to set read-only attribute: freezing"):
        torch.jit.script(sets_read_only)


class Scaled(nn.Module):
    __jit_unused_properties__ = ["python_only"]

    def __init__(self):
        super().__init__()
        self.k = 2

    @property
    def twice_k(self) -> int:
        return self.k * 2

    @twice_k.setter
    def twice_k(self, value: int):
        self.k = value // 2

    @property
    def python_only(self):
        return object()

    def forward(self, x: Tensor) -> Tensor:
        self.twice_k = 10
        return x * self.twice_k


def test_module_properties_like_torch_jit():
    ours, theirs = script(Scaled()), torch.jit.script(Scaled())
    assert normalized(ours.graph) == normalized(theirs.graph)
    x = torch.ones(2)
    assert torch.equal(ours(x), Scaled()(x))


def test_module_properties_from_python():
    ours = script(Scaled())
    assert ours.twice_k == 4
    ours.twice_k = 12
    assert ours.k == 6 and ours.twice_k == 12


# ---- script-class instances held by modules ---------------------------------------------------------------------
class Accumulator:
    def __init__(self, start: int):
        self.total = start
        self.history: List[int] = []

    def add(self, n: int) -> int:
        self.total += n
        self.history.append(n)
        return self.total

    @property
    def count(self) -> int:
        return len(self.history)


class Counting(nn.Module):
    def __init__(self):
        super().__init__()
        self.acc = Accumulator(10)

    def forward(self, x: Tensor) -> Tensor:
        return x + self.acc.add(1) + self.acc.count

    @torch.jit.export
    def fresh(self, start: int) -> Accumulator:
        return Accumulator(start)


class NotScriptable:
    def __init__(self):
        self.items = {1, 2}

    def size(self) -> int:
        return len(self.items)


class HoldsUnscriptable(nn.Module):
    def __init__(self):
        super().__init__()
        self.helper = NotScriptable()

    def forward(self, x: Tensor) -> Tensor:
        return x + self.helper.size()


def test_module_holding_a_script_class_instance():
    ours, theirs = script(Counting()), torch.jit.script(Counting())
    assert normalized(ours.graph) == normalized(theirs.graph)
    x = torch.zeros(1)
    assert torch.equal(ours(x), theirs(x)) and torch.equal(ours(x), theirs(x))  # state kept between calls
    held = ours.acc
    assert isinstance(held, Accumulator) and held.total == 12 and held.history == [1, 1]


def test_methods_return_instances_of_the_python_class():
    made = script(Counting()).fresh(5)
    assert isinstance(made, Accumulator) and made.total == 5 and made.count == 0
    theirs = torch.jit.script(Counting()).fresh(5)
    assert isinstance(theirs, Accumulator) and theirs.total == 5


def test_assigning_a_script_class_attribute_from_python():
    ours = script(Counting())
    ours.acc = Accumulator(100)
    assert ours(torch.zeros(1)).item() == 102.0
    with pytest.raises(TsjitError, match="Expected a value of type"):
        ours.acc = 3


def test_an_instance_whose_class_does_not_compile_is_a_failed_attribute():
    with pytest.raises(CompileError, match="Module 'HoldsUnscriptable' has no attribute 'helper'"):
        script(HoldsUnscriptable())
