"""Scripted modules from Python: `tsjit.script(module)` gives a RecursiveScriptModule that behaves like the
nn.Module it came from (calls, attributes, submodules, parameters, state_dict, train/eval, exported methods)
while its state lives in the runtime object the compiled methods read and write."""

import copy

import pytest
import torch
from torch import nn

from tsjit.api import export, ignore, script
from tsjit.api.module import RecursiveScriptModule, ScriptMethod, ScriptModule, script_module
from tsjit.errors import TsjitError


class Net(nn.Module):
    __constants__ = ["width"]
    history: list[int]

    def __init__(self):
        super().__init__()
        self.width = 4
        self.fc = nn.Linear(4, 2)
        self.dropout = nn.Dropout(0.5)
        self.register_buffer("calls", torch.zeros(()))
        self.scale = 2.0
        self.history = []

    def forward(self, x, shift: float = 0.0):
        self.calls += 1
        self.history.append(int(self.calls))
        return self.dropout(self.fc(x)) * self.scale + shift

    @export
    def features(self, x):
        return self.fc(x)

    @ignore
    def python_only(self, x):
        return x.numpy().sum()


@pytest.fixture
def pair():
    torch.manual_seed(0)
    eager = Net()
    return eager, script_module(copy.deepcopy(eager))


def test_tsjit_script_compiles_modules():
    scripted = script(Net())
    assert isinstance(scripted, RecursiveScriptModule) and isinstance(scripted, ScriptModule)
    assert script(scripted) is scripted


def test_calls_match_eager_in_eval_and_seeded_train(pair):
    eager, scripted = pair
    x = torch.randn(3, 4)
    for mode in (False, True):
        eager.train(mode), scripted.train(mode)
        torch.manual_seed(5)
        expected = eager(x, shift=1.0)
        torch.manual_seed(5)
        assert torch.equal(scripted(x, shift=1.0), expected)
    assert scripted.history == eager.history == [1, 2]


def test_train_and_eval_flip_the_flag_the_graph_reads(pair):
    _, scripted = pair
    scripted.eval()
    assert scripted.training is False and scripted.dropout.training is False
    assert scripted._c.training is False and scripted.dropout._c.training is False
    x = torch.randn(3, 4)
    assert torch.equal(scripted(x), scripted(x))
    scripted.train()
    assert scripted.dropout._c.training is True


def test_parameters_and_buffers_are_the_original_tensors():
    eager = Net()
    scripted = script_module(eager)
    assert scripted.fc.weight is eager.fc.weight
    assert [name for name, _ in scripted.named_parameters()] == ["fc.weight", "fc.bias"]
    assert all(a is b for a, b in zip(scripted.parameters(), eager.parameters()))
    assert [name for name, _ in scripted.named_buffers()] == ["calls"]


def test_state_dict_round_trips(pair):
    eager, scripted = pair
    assert list(scripted.state_dict()) == list(eager.state_dict())
    state = {name: torch.zeros_like(value) for name, value in eager.state_dict().items()}
    scripted.load_state_dict(state)
    assert torch.count_nonzero(scripted.fc.weight) == 0
    assert torch.equal(scripted.features(torch.ones(1, 4)), torch.zeros(1, 2))


def test_modules_and_children(pair):
    _, scripted = pair
    assert [name for name, _ in scripted.named_children()] == ["fc", "dropout"]
    assert len(list(scripted.modules())) == 3
    assert all(isinstance(m, RecursiveScriptModule) for m in scripted.children())


def test_attributes_read_and_write_the_runtime_object_with_type_checks(pair):
    _, scripted = pair
    assert scripted.scale == 2.0 and scripted.width == 4
    scripted.scale = 3
    assert scripted._c.scale == 3
    with pytest.raises(TsjitError, match="Expected a value of type 'float' for field 'scale', but found 'str'"):
        scripted.scale = "big"
    with pytest.raises(AttributeError, match="Cannot mutate TorchScript constant value: 'width'"):
        scripted.width = 5
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        _ = scripted.nothing
    scripted.note = "python only"  # a plain Python attribute, as torch.jit allows
    assert scripted.note == "python only" and not scripted._c.type.has_attribute("note")


def test_submodules_can_be_replaced_by_modules_of_their_type(pair):
    _, scripted = pair
    replacement = script_module(nn.Linear(4, 2))
    scripted.fc = replacement
    assert scripted.fc is replacement and scripted._c.fc is replacement._c
    with pytest.raises(TsjitError, match="Expected a scripted module of type"):
        scripted.fc = nn.Linear(4, 2)


def test_methods_are_script_methods_with_graphs_and_schemas(pair):
    _, scripted = pair
    assert isinstance(scripted.forward, ScriptMethod) and isinstance(scripted.features, ScriptMethod)
    assert str(scripted.forward.schema).startswith("forward(__torch__.")
    assert scripted.graph is scripted.forward.graph
    assert "prim::CallMethod" in str(scripted.graph) and "prim::CallMethod" not in str(scripted.inlined_graph)
    with pytest.raises(TsjitError, match="Expected a value of type 'Tensor' for argument 'x'"):
        scripted.features("not a tensor")


def test_ignored_methods_stay_python_methods_of_the_scripted_module(pair):
    _, scripted = pair
    assert scripted.python_only(torch.ones(3)) == 3.0


def test_repr_names_the_original_classes(pair):
    _, scripted = pair
    assert scripted.original_name == "Net"
    assert repr(scripted).startswith("RecursiveScriptModule(\n  original_name=Net\n  (fc): RecursiveScriptModule")


def test_copy_and_deepcopy_give_independent_state(pair):
    _, scripted = pair
    for duplicate in (scripted.copy(), copy.deepcopy(scripted)):
        assert duplicate._c.type is scripted._c.type
        assert duplicate.fc.weight is not scripted.fc.weight
        assert torch.equal(duplicate.fc.weight, scripted.fc.weight)
        duplicate.history.append(99)
        assert scripted.history == []
    shallow = copy.copy(scripted)
    assert shallow.fc.weight is scripted.fc.weight


def test_containers_behave_like_python_containers():
    layers = script_module(nn.ModuleList([nn.ReLU(), nn.Tanh()]))
    blocks = script_module(nn.ModuleDict({"a": nn.ReLU()}))
    assert len(layers) == 2 and [m.original_name for m in layers] == ["ReLU", "Tanh"]
    assert layers[1].original_name == "Tanh"
    assert len(blocks) == 1 and "a" in blocks and "b" not in blocks and list(blocks) == ["a"]
    with pytest.raises(TypeError):
        len(script_module(nn.ReLU()))


def test_already_scripted_submodules_are_reused():
    inner = script_module(nn.Linear(2, 2))
    outer = script_module(nn.Sequential(inner, nn.ReLU()))
    assert outer[0] is inner


def test_hooks_on_the_scripted_module_are_compiled_and_called_from_python():
    def hook(module, input: tuple[torch.Tensor], output: torch.Tensor) -> torch.Tensor:
        return output + 1

    module = nn.Identity()
    module.register_forward_hook(hook)
    scripted = script_module(module)
    assert torch.equal(scripted(torch.zeros(2)), torch.ones(2))
