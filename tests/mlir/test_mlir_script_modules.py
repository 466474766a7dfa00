"""tsjit ScriptModules through the object-graph route: `tsjit.mlir.compile(tsjit.script(module), inputs, ...)`
lowers to every backend and runs on IREE matching eager (tsjit/mlir/script_objects.py)."""

from __future__ import annotations

import pytest
import torch
from mlir_corpus import assert_close
from torch import nn

import tsjit
import tsjit.mlir
import tsjit.mlir.iree
from tsjit.errors import MLIRError
from tsjit.mlir.script_objects import script_module_value

BACKENDS = ("linalg-on-tensors", "tosa", "stablehlo")


class Scaled(nn.Module):
    """A submodule with int and float attributes."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.scale = 0.5
        self.offset = 2

    def forward(self, x):
        return self.fc(x) * self.scale + self.offset


class WithSubmodule(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = Scaled()
        self.head = nn.Linear(3, 2)
        self.register_buffer("shift", torch.arange(2, dtype=torch.float32))
        self.use_relu = True

    def forward(self, x):
        y = self.head(self.body(x))
        if self.use_relu:
            y = torch.relu(y)
        return y + self.shift


def small_cnn() -> nn.Module:
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64, 10))


MODULES = {
    "linear": (lambda: nn.Linear(4, 3), lambda: torch.randn(2, 4)),
    "mlp": (lambda: nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)), lambda: torch.randn(5, 4)),
    "small_cnn": (small_cnn, lambda: torch.randn(2, 3, 8, 8)),
    "submodule_and_attributes": (WithSubmodule, lambda: torch.randn(3, 4)),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(MODULES))
def test_script_module_runs_on_iree(name, backend):
    make_module, make_input = MODULES[name]
    torch.manual_seed(0)
    eager, x = make_module().eval(), make_input()
    scripted = tsjit.script(eager)
    lowered = tsjit.mlir.compile(scripted, [x], output_type=backend)
    assert_close(tsjit.mlir.iree.compile(lowered)(x), eager(x).detach())


def test_object_graph_has_slots_for_the_attributes_forward_uses():
    torch.manual_seed(0)
    value = script_module_value(tsjit.script(WithSubmodule()))
    assert [s.name for s in value.slots] == ["shift", "body", "head"]  # use_relu folded, training unused
    body = value.slot("body").value
    assert [s.name for s in body.slots] == ["fc"]  # scale and offset became constants
    assert list(value.methods) == ["forward"] and not body.methods  # calls inlined into forward


def test_methods_kept_as_methods_without_inlining():
    torch.manual_seed(0)
    value = script_module_value(tsjit.script(WithSubmodule()), inline_methods=False)
    assert list(value.slot("body").value.methods) == ["forward"]
    x = torch.randn(3, 4)
    torch.manual_seed(0)
    eager = WithSubmodule()
    run = tsjit.mlir.iree.compile(tsjit.mlir.compile(value, [x], output_type="linalg-on-tensors"))
    assert_close(run(x), eager(x).detach())


def test_object_graph_text_declares_private_attributes():
    torch.manual_seed(0)
    text = str(tsjit.mlir.compile(tsjit.script(nn.Linear(4, 3)), [torch.randn(2, 4)], output_type="torch"))
    assert "func.func @forward(%arg0: !torch.vtensor<[2,4],f32>) -> !torch.vtensor<[2,3],f32>" in text


def test_unknown_method_is_an_error():
    with pytest.raises(MLIRError, match="has no method 'predict'"):
        tsjit.mlir.compile(tsjit.script(nn.Linear(4, 3)), [torch.randn(2, 4)], method="predict")


class Recurrent(nn.Module):
    """A cell-like module: a tuple state in, `(output, (h, c))` out."""

    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(4, 4)

    def forward(self, x, state: tuple[torch.Tensor, torch.Tensor]):
        h, c = state
        c = torch.sigmoid(self.gate(x + h)) * c
        h = torch.tanh(c)
        return h * 2, (h, c)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tuple_argument_and_nested_tuple_result(backend):
    torch.manual_seed(0)
    module = Recurrent()
    x, state = torch.randn(2, 4), (torch.randn(2, 4), torch.randn(2, 4))
    lowered = tsjit.mlir.compile(tsjit.script(module), [x, state], output_type=backend)
    assert_close(tsjit.mlir.iree.compile(lowered)(x, state), module(x, state))
