"""tsjit.freeze and tsjit.optimize_for_inference as users call them, with torch.jit.freeze as the oracle:
errors, preserved attributes and methods, archives both ways, linear layers, dropout, tsjit.Final."""

import io
import typing

import pytest
import torch
from torch import Tensor, nn

import tsjit
from tsjit.errors import TsjitError

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit's own


@pytest.fixture
def jit():
    if not hasattr(getattr(torch, "jit", None), "freeze"):
        pytest.skip("torch.jit.freeze is not available")
    return torch.jit


def kinds(graph) -> list[str]:
    """Node kinds without constants, of a tsjit or a torch.jit graph (top-level block)."""
    found = [str(n.kind) if isinstance(graph, tsjit.Graph) else n.kind() for n in graph.nodes()]
    return [k for k in found if k != "prim::Constant"]


class Net(nn.Module):
    """Conv + BatchNorm + ReLU, a Linear stack with Dropout and BatchNorm1d, an attribute, an exported method."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(64, 8), nn.Dropout(0.3), nn.Linear(8, 3), nn.BatchNorm1d(3))
        self.scale = 2.0
        for module in self.modules():
            if isinstance(module, nn.BatchNorm1d | nn.BatchNorm2d):
                module.running_mean.uniform_(-1, 1)
                module.running_var.uniform_(0.5, 2)

    def forward(self, x: Tensor) -> Tensor:
        return self.head(self.features(x)) * self.scale

    @torch.jit.export
    def rescale(self, x: Tensor) -> Tensor:
        return x * self.scale


def _net() -> nn.Module:
    torch.manual_seed(0)
    return Net().eval()


def _input() -> Tensor:
    return torch.randn(2, 3, 6, 6)


def test_frozen_net_matches_torch_jit_and_eager(jit):
    net = _net()
    mine, theirs = tsjit.freeze(tsjit.script(net)), jit.freeze(jit.script(net))
    assert kinds(mine.graph) == kinds(theirs.graph)
    assert "aten::batch_norm" not in kinds(mine.graph) and "aten::dropout" not in kinds(mine.graph)
    x = _input()
    torch.testing.assert_close(mine(x), net(x))


def test_errors_as_torch_jit():
    with pytest.raises(TsjitError, match="Freezing expects a ScriptModule as input. Please use torch.jit.script"):
        tsjit.freeze(_net())
    with pytest.raises(TsjitError, match="only implemented for modules in eval mode. Please call .eval()"):
        tsjit.freeze(tsjit.script(Net()))
    with pytest.raises(TsjitError, match="optimize_for_inference expects a ScriptModule as input"):
        tsjit.optimize_for_inference(_net())
    with pytest.raises(TsjitError, match="Unknown name: missing"):
        tsjit.freeze(tsjit.script(_net()), preserved_attrs=["missing"])


def test_preserved_attribute_and_method(jit):
    net = _net()
    mine = tsjit.freeze(tsjit.script(net), preserved_attrs=["scale", "rescale"])
    theirs = jit.freeze(jit.script(net), preserved_attrs=["scale", "rescale"])
    assert kinds(mine.graph) == kinds(theirs.graph)
    assert kinds(mine.rescale.graph) == kinds(theirs.rescale.graph) == ["prim::GetAttr", "aten::mul"]
    assert mine.scale == 2.0
    mine.scale = 3.0
    x = _input()
    torch.testing.assert_close(mine(x), net(x) * 1.5)
    torch.testing.assert_close(mine.rescale(x), x * 3.0)


def test_methods_and_attributes_not_preserved_are_gone():
    frozen = tsjit.freeze(tsjit.script(_net()))
    assert not hasattr(frozen, "rescale") and not hasattr(frozen, "scale") and not hasattr(frozen, "training")
    assert list(frozen.state_dict()) == []


def test_original_module_is_untouched():
    scripted = tsjit.script(_net())
    before = str(scripted.graph)
    tsjit.freeze(scripted)
    assert str(scripted.graph) == before and scripted.scale == 2.0 and hasattr(scripted, "training")


def test_frozen_module_archive_loads_in_tsjit_and_torch_jit(jit):
    net = _net()
    frozen = tsjit.freeze(tsjit.script(net))
    buffer = io.BytesIO()
    tsjit.save(frozen, buffer)
    x = _input()
    torch.testing.assert_close(tsjit.load(buffer.getvalue())(x), net(x))
    torch.testing.assert_close(jit.load(io.BytesIO(buffer.getvalue()))(x), net(x))


def test_torch_jit_frozen_archive_loads_in_tsjit(jit):
    net = _net()
    buffer = io.BytesIO()
    jit.save(jit.freeze(jit.script(net)), buffer)
    loaded = tsjit.load(buffer.getvalue())
    x = _input()
    torch.testing.assert_close(loaded(x), net(x))


def test_loaded_module_freezes():
    net = _net()
    buffer = io.BytesIO()
    tsjit.save(tsjit.script(net), buffer)
    frozen = tsjit.freeze(tsjit.load(buffer.getvalue()).eval())
    assert "prim::GetAttr" not in kinds(frozen.graph)
    x = _input()
    torch.testing.assert_close(frozen(x), net(x))


def test_buffer_mutated_in_forward_is_not_frozen(jit):
    class Running(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("total", torch.zeros(3))

        def forward(self, x: Tensor) -> Tensor:
            self.total += x
            return self.total * 2

    mine, theirs = tsjit.freeze(tsjit.script(Running().eval())), jit.freeze(jit.script(Running().eval()))
    assert kinds(mine.graph) == kinds(theirs.graph)
    assert list(mine.state_dict()) == ["total"]
    torch.testing.assert_close(mine(torch.ones(3)), torch.full((3,), 2.0))
    torch.testing.assert_close(mine(torch.ones(3)), torch.full((3,), 4.0))


def test_optimize_for_inference_freezes_and_matches_eager(jit):
    net = _net()
    optimized = tsjit.optimize_for_inference(tsjit.script(net))
    assert not hasattr(optimized, "training")
    found = kinds(optimized.graph)
    assert "aten::linear" not in found and "aten::matmul" in found and "aten::batch_norm" not in found
    x = _input()
    torch.testing.assert_close(optimized(x), net(x))
    again = tsjit.optimize_for_inference(tsjit.freeze(tsjit.script(net)))
    torch.testing.assert_close(again(x), net(x))


def test_optimize_for_inference_keeps_other_methods():
    optimized = tsjit.optimize_for_inference(tsjit.script(_net()), other_methods=["rescale"])
    x = _input()
    torch.testing.assert_close(optimized.rescale(x), x * 2.0)


def test_final_is_typing_final(jit):
    assert tsjit.Final is typing.Final is jit.Final
