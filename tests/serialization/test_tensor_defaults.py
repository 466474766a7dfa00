"""Tensor default arguments: `def forward(self, x: Tensor, state: Tensor = torch.zeros(0))`.

Scripting evaluates the Python default (as torch.jit does); archives write it as `state: Tensor=CONSTANTS.c0`
with the tensor in constants.pkl; loading evaluates that expression as TorchScript evaluates any non-literal
default: compiled and run once. Script, save, load and save again must agree on the default's value, for
archives written by torch.jit.save and by tsjit.save alike."""

from __future__ import annotations

import io

import pytest
import torch

import tsjit
from tsjit.api.function import CompilationUnit


class Recurrent(torch.nn.Module):
    def forward(self, x: torch.Tensor, state: torch.Tensor = torch.zeros(0)) -> torch.Tensor:  # noqa: B008
        if state.numel() == 0:
            return x * 2
        return x + state


class Offset(torch.nn.Module):
    def forward(self, x: torch.Tensor, bias: torch.Tensor = torch.arange(3.0) - 1,  # noqa: B008
                scale: float = 2.0) -> torch.Tensor:
        return x * scale + bias


# name -> (module class, its Tensor parameter with a default, the default's value)
MODULES = {"recurrent": (Recurrent, "state", torch.zeros(0)), "offset": (Offset, "bias", torch.arange(3.0) - 1)}
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit's own


def _default(method, name: str):
    return next(a.default_value for a in method.schema.arguments if a.name == name)


def _saved_by_torch_jit(module: torch.nn.Module) -> io.BytesIO:
    jit = pytest.importorskip("torch.jit")
    buffer = io.BytesIO()
    jit.save(jit.script(module), buffer)
    buffer.seek(0)
    return buffer


def _saved_by_tsjit(module) -> io.BytesIO:
    buffer = io.BytesIO()
    tsjit.save(module, buffer)
    buffer.seek(0)
    return buffer


def _check_runs(loaded, name: str) -> None:
    """Called with and without the argument as eager is, and the schema's default is the right tensor."""
    module_class, parameter, default = MODULES[name]
    eager = module_class()
    x, given = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([0.5, -1.0, 4.0])
    torch.testing.assert_close(loaded(x), eager(x))
    torch.testing.assert_close(loaded(x, given), eager(x, given))
    torch.testing.assert_close(_default(loaded.forward, parameter), default)


@pytest.mark.parametrize("name", MODULES)
def test_script_evaluates_the_python_default(name):
    module_class = MODULES[name][0]
    scripted = tsjit.script(module_class())
    assert "=CONSTANTS.c0" in scripted.code
    _check_runs(scripted, name)


@pytest.mark.parametrize("name", MODULES)
def test_torch_jit_archive_loads_and_runs(name):
    module_class = MODULES[name][0]
    loaded = tsjit.load(_saved_by_torch_jit(module_class()))
    _check_runs(loaded, name)
    assert loaded.code == tsjit.script(module_class()).code == torch.jit.script(module_class()).code


@pytest.mark.parametrize("name", MODULES)
def test_tsjit_archive_round_trips_twice(name):
    module_class = MODULES[name][0]
    loaded = tsjit.load(_saved_by_tsjit(tsjit.script(module_class())))
    _check_runs(loaded, name)
    again = tsjit.load(_saved_by_tsjit(loaded))
    _check_runs(again, name)
    assert again.code == loaded.code


def test_tsjit_archive_loads_in_torch_jit():
    jit = pytest.importorskip("torch.jit")
    loaded = jit.load(_saved_by_tsjit(tsjit.script(Offset())))
    x = torch.ones(3)
    torch.testing.assert_close(loaded(x), Offset()(x))


def test_source_default_is_evaluated_with_the_resolver():
    """Defaults in source text are run once: `torch.full` through the native resolver, literals as written."""
    unit = CompilationUnit("""
def f(x: Tensor, s: Tensor = torch.full([2], 3.0), n: List[int] = [1, -2], k: float = -2) -> Tensor:
    return x + s * k
""")
    arguments = {a.name: a.default_value for a in unit.f.schema.arguments[1:]}
    torch.testing.assert_close(arguments["s"], torch.full([2], 3.0))
    assert arguments["n"] == [1, -2] and arguments["k"] == -2.0
    torch.testing.assert_close(unit.f(torch.ones(2)), torch.full([2], -5.0))


def _shifted(x: torch.Tensor, shift: torch.Tensor = torch.full([2], 5.0)) -> torch.Tensor:  # noqa: B008
    return x + shift


class Accumulator:
    def __init__(self, base: torch.Tensor):
        self.base = base

    def add(self, x: torch.Tensor, extra: torch.Tensor = torch.ones(2)) -> torch.Tensor:  # noqa: B008
        return self.base + x + extra


class CallsHelpers(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _shifted(x) + Accumulator(x).add(x)


@pytest.mark.parametrize("saver", ["tsjit", "torch.jit"])
def test_defaults_of_functions_and_class_methods_in_archives(saver):
    """Free functions and script-class methods keep their Tensor defaults through save -> load -> save."""
    module = CallsHelpers()
    first = _saved_by_tsjit(tsjit.script(module)) if saver == "tsjit" else _saved_by_torch_jit(module)
    loaded = tsjit.load(first)
    again = tsjit.load(_saved_by_tsjit(loaded))
    x = torch.tensor([1.0, -2.0])
    for archived in (loaded, again):
        torch.testing.assert_close(archived(x), module(x))
