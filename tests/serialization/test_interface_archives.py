"""Archives of modules with interface-typed submodules and attributes and with script-class attributes:
tsjit.save then tsjit.load, tsjit.save then torch.jit.load, torch.jit.save then tsjit.load, each running like
the eager module; the interfaces are printed as torch.jit prints them."""

import io
import os
import re
import sys
import zipfile

import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import interface_programs  # noqa: E402

from tsjit.api.archive import load  # noqa: E402
from tsjit.api.module import RecursiveScriptModule, script_module  # noqa: E402
from tsjit.serialization.serializer import serialize  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

PATHS = ["tsjit->tsjit", "tsjit->torch", "torch->tsjit"]
MODULES = ["UsesPair", "IndexesLayers", "HoldsScorer", "Smooths"]


def torch_bytes(module) -> bytes:
    buffer = io.BytesIO()
    torch.jit.save(module, buffer)
    return buffer.getvalue()


def saved(name: str, path: str) -> bytes:
    module = interface_programs.build(name)
    return torch_bytes(torch.jit.script(module)) if path.startswith("torch") else serialize(script_module(module))


def loaded(data: bytes, path: str):
    return torch.jit.load(io.BytesIO(data)) if path.endswith("torch") else load(data)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", MODULES)
def test_round_trip_runs_like_eager(name, path):
    module, eager = loaded(saved(name, path), path), interface_programs.build(name)
    for x in (torch.tensor([1.0, 2.0]), torch.tensor([3.0, -1.0]), torch.tensor([0.5, 0.5])):  # state carries over
        assert torch.allclose(module(x), eager(x))


@pytest.mark.parametrize("path", ["tsjit->tsjit", "torch->tsjit"])
def test_interface_typed_submodules_load_as_modules(path):
    module = loaded(saved("UsesPair", path), path)
    assert isinstance(module.sub, RecursiveScriptModule)
    x = torch.tensor([1.0, 2.0])
    assert torch.equal(module.sub(x), x * 2)
    assert torch.equal(module.sub.combine(x, x), x + x + torch.tensor([0.5, -1.0]))
    assert list(module.state_dict()) == ["sub.bias"]


def code(data: bytes) -> str:
    """The archive's `__torch__` code file (where programs of this module are printed), mangling removed."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        name = next(n for n in archive.namelist() if n.endswith("code/__torch__/interface_programs.py"))
        return re.sub(r"___torch_mangle_\d+\.", "", archive.read(name).decode())


@pytest.mark.parametrize("name, declaration", [
    ("UsesPair", "class Pair(ModuleInterface):\n"
                 "  def combine(self, x: Tensor, y: Tensor) -> Tensor:\n    pass\n"
                 "  def forward(self, x: Tensor) -> Tensor:\n    pass\n"),
    ("HoldsScorer", "class Scorer(Interface):\n  def score(self, x: int) -> int:\n    pass\n"),
])
def test_interfaces_are_printed_like_torch_jit(name, declaration):
    ours, theirs = code(saved(name, "tsjit->tsjit")), code(saved(name, "torch->tsjit"))
    assert declaration in ours and declaration in theirs
    assert ours == theirs


def test_a_swapped_implementation_is_saved():
    module = script_module(interface_programs.UsesPair())
    module.sub = script_module(interface_programs.Multiplies())
    data, x = serialize(module), torch.tensor([1.0, 2.0])
    expected = x * 5 + x * x
    for path in ("tsjit->tsjit", "tsjit->torch"):
        assert torch.equal(loaded(data, path)(x), expected)
