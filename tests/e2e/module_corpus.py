"""The e2e corpus of nn.Modules: each with a factory and example inputs, run through every execution path.

`MODULE_CASES` lists ModuleCase(name, make_module, make_inputs, ...). `make_module()` builds a fresh module
(seeded, so two calls give equal weights); `make_inputs()` fresh arguments. `train` runs the module in training
mode (results then depend on the RNG, which each path seeds the same way); `state` names attributes whose
values after the call are compared too (running statistics, counters). `kinds_difference` records where tsjit's
inlined graph differs in node kinds from torch.jit's (tsjit count minus torch.jit count), `why` says why, and
`xfail` maps the checks a case still fails ("run", "kinds", "state_dict") to what tsjit is missing.

The corpus covers PyTorch's own modules (Linear, Conv2d, BatchNorm2d, LayerNorm, Dropout, Embedding, LSTM,
GRU, MultiheadAttention, TransformerEncoderLayer and Sequential stacks of them) and the module features of
TorchScript: parameters, buffers, attributes typed from values and annotations, constants and Final,
submodules, ModuleList / Sequential / ModuleDict / ParameterList iteration, methods calling methods, exported,
ignored and unused methods, properties, overloads, forward hooks, `training`, `hasattr`, attribute mutation,
forks of submodules and methods.
"""

# ruff: noqa: UP006, UP035, UP045, UP007, F811, B007  (modules written as TorchScript users write them)
from dataclasses import dataclass, field
from typing import Callable, Dict, Final, List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from tsjit.api import export


@dataclass
class ModuleCase:
    name: str
    make_module: Callable[[], nn.Module]
    make_inputs: Callable[[], tuple]
    train: bool = False
    state: tuple[str, ...] = ()
    kinds_difference: dict[str, int] = field(default_factory=dict)  # tsjit count minus torch.jit count
    why: str = ""
    xfail: dict[str, str] = field(default_factory=dict)  # check -> what tsjit is missing

    def build(self) -> nn.Module:
        torch.manual_seed(0)
        module = self.make_module()
        return module.train(self.train)


MODULE_CASES: list[ModuleCase] = []


def case(name: str, make_module: Callable[[], nn.Module], make_inputs: Callable[[], tuple], **options) -> None:
    MODULE_CASES.append(ModuleCase(name, make_module, make_inputs, **options))


def t(*shape: int) -> Callable[[], Tensor]:
    return lambda: torch.randn(*shape)


def args(*factories) -> Callable[[], tuple]:
    """Inputs: callables are called for fresh values, anything else is used as is."""
    return lambda: tuple(f() if callable(f) else f for f in factories)


def tokens(*shape: int, high: int = 10) -> Callable[[], Tensor]:
    return lambda: torch.randint(0, high, shape)


# ==============================================================================================================
# PyTorch's own modules
# ==============================================================================================================
class Returning(nn.Module):
    """Calls a module and returns everything it returns (RNNs and attention return tuples)."""

    def __init__(self, module: nn.Module):
        super().__init__()
        self.module = module

    def forward(self, x):
        return self.module(x)


class RecurrentWithState(nn.Module):
    def __init__(self, module: nn.Module):
        super().__init__()
        self.rnn = module

    def forward(self, x, h: Tuple[Tensor, Tensor]):
        return self.rnn(x, h)


class GRUWithState(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(3, 5, num_layers=2)

    def forward(self, x, h: Tensor):
        output, hidden = self.rnn(x, h)
        return output.sum(0) + hidden.sum(0)


class SelfAttention(nn.Module):
    def __init__(self, **options):
        super().__init__()
        self.attention = nn.MultiheadAttention(8, 2, **options)

    def forward(self, x):
        return self.attention(x, x, x)


class MaskedAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x, mask: Tensor):
        output, _ = self.attention(x, x, x, key_padding_mask=mask, need_weights=False)
        return output


case("linear", lambda: nn.Linear(4, 3), args(t(2, 4)))
case("linear_no_bias", lambda: nn.Linear(4, 3, bias=False), args(t(5, 4)))
case("conv2d", lambda: nn.Conv2d(3, 4, 3, padding=1), args(t(1, 3, 6, 6)))
case("conv2d_strided_grouped", lambda: nn.Conv2d(4, 6, 3, stride=2, groups=2, bias=False), args(t(2, 4, 7, 7)))
case("conv2d_padding_mode", lambda: nn.Conv2d(2, 2, 3, padding=1, padding_mode="reflect"), args(t(1, 2, 5, 5)))
case("batchnorm2d_eval", lambda: nn.BatchNorm2d(3), args(t(2, 3, 4, 4)))
case("batchnorm2d_train", lambda: nn.BatchNorm2d(3), args(t(2, 3, 4, 4)), train=True,
     state=("running_mean", "running_var", "num_batches_tracked"))
case("batchnorm2d_momentum_none", lambda: nn.BatchNorm2d(3, momentum=None), args(t(2, 3, 4, 4)), train=True,
     state=("running_mean", "num_batches_tracked"))
case("layernorm", lambda: nn.LayerNorm(5), args(t(2, 3, 5)))
case("layernorm_no_affine", lambda: nn.LayerNorm([3, 5], elementwise_affine=False), args(t(2, 3, 5)))
case("dropout_eval", lambda: nn.Dropout(0.3), args(t(4, 5)))
case("dropout_train", lambda: nn.Dropout(0.3), args(t(4, 5)), train=True)
case("embedding", lambda: nn.Embedding(10, 4, padding_idx=0), args(tokens(2, 5)))
case("embedding_max_norm", lambda: nn.Embedding(10, 4, max_norm=1.0), args(tokens(2, 5)), state=("weight",),
     xfail={"run": "aten::_no_grad_embedding_renorm_ (in place on the weight, its result unused, no alias "
                   "annotation in its schema) is dead code to TorchScript: torch.jit's scripted Embedding does not "
                   "renormalize either, and tsjit follows torch.jit"})
case("lstm", lambda: Returning(nn.LSTM(3, 5)), args(t(4, 2, 3)))
case("lstm_two_layers_bidirectional_batch_first",
     lambda: Returning(nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True)), args(t(2, 4, 3)))
case("lstm_with_state", lambda: RecurrentWithState(nn.LSTM(3, 5)),
     args(t(4, 2, 3), lambda: (torch.randn(1, 2, 5), torch.randn(1, 2, 5))))
case("lstm_dropout_train", lambda: Returning(nn.LSTM(3, 4, num_layers=2, dropout=0.5)), args(t(4, 2, 3)),
     train=True)
case("gru", lambda: Returning(nn.GRU(3, 5)), args(t(4, 2, 3)))
case("gru_with_state", GRUWithState, args(t(4, 2, 3), t(2, 2, 5)))
case("multihead_attention", SelfAttention, args(t(5, 2, 8)))
case("multihead_attention_key_padding_mask", MaskedAttention,
     args(t(2, 5, 8), lambda: torch.tensor([[False] * 4 + [True], [False] * 5])))
case("transformer_encoder_layer", lambda: nn.TransformerEncoderLayer(8, 2, dim_feedforward=16), args(t(5, 2, 8)))
case("transformer_encoder_layer_norm_first_gelu_train",
     lambda: nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, norm_first=True, activation="gelu",
                                        batch_first=True), args(t(2, 5, 8)), train=True)
case("sequential_conv_stack",
     lambda: nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.AvgPool2d(2),
                           nn.Flatten(), nn.Linear(16, 3)), args(t(2, 3, 4, 4)))
case("sequential_mlp", lambda: nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8), nn.GELU(), nn.Dropout(0.2),
                                             nn.Linear(8, 2)), args(t(3, 6)))
case("sequential_mlp_train", lambda: nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8), nn.GELU(), nn.Dropout(0.2),
                                                   nn.Linear(8, 2)), args(t(3, 6)), train=True)
case("sequential_embedding_linear", lambda: nn.Sequential(nn.Embedding(10, 6), nn.Linear(6, 3), nn.Tanh()),
     args(tokens(2, 4)))
case("sequential_nested", lambda: nn.Sequential(nn.Sequential(nn.Linear(4, 4), nn.ReLU()),
                                                nn.Sequential(nn.Linear(4, 2), nn.Sigmoid())), args(t(3, 4)))
case("sequential_transformer_stack",
     lambda: nn.Sequential(nn.Linear(4, 8), nn.TransformerEncoderLayer(8, 2, dim_feedforward=16),
                           nn.LayerNorm(8)), args(t(5, 2, 4)))
case("maxpool2d", lambda: nn.MaxPool2d(2), args(t(1, 2, 4, 4)))
case("transformer_encoder", lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, dim_feedforward=16), 2,
                                                          enable_nested_tensor=False), args(t(5, 2, 8)))


# ==============================================================================================================
# module features
# ==============================================================================================================
class Net(nn.Module):
    """A submodule, a float attribute and an attribute read in forward."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.scale = 2.0

    def forward(self, x):
        return self.fc(x) * self.scale


class Nested(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Net()
        self.outer = nn.Linear(2, 2)

    def forward(self, x):
        return self.outer(self.inner(x)) + self.inner.fc.bias.sum()


class Layers(nn.Module):
    """ModuleList: enumerate, len, constant and negative indexing."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(3, 3) for _ in range(3)])

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x) * (i + 1)
        return x + len(self.layers) + self.layers[0](x) - self.layers[-1](x)


class Heterogeneous(nn.Module):
    """Each unrolled iteration calls a different module type."""

    def __init__(self):
        super().__init__()
        self.steps = nn.ModuleList([nn.Linear(3, 3), nn.ReLU(), nn.LayerNorm(3), Net2()])

    def forward(self, x):
        for step in self.steps:
            x = step(x)
        return x


class Net2(nn.Module):
    def forward(self, x):
        return x * 2


class Zipped(nn.Module):
    def __init__(self):
        super().__init__()
        self.linears = nn.ModuleList([nn.Linear(3, 3), nn.Linear(3, 3)])
        self.activations = nn.ModuleList([nn.ReLU(), nn.Sigmoid()])

    def forward(self, x):
        for linear, activation in zip(self.linears, self.activations):
            x = activation(linear(x))
        return x


class Blocks(nn.Module):
    """ModuleDict: items(), keys(), values(), a constant key, `in`."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleDict({"relu": nn.ReLU(), "tanh": nn.Tanh(), "proj": nn.Linear(3, 3)})

    def forward(self, x):
        for name, block in self.blocks.items():
            x = block(x)
        for name in self.blocks.keys():
            x = x + len(name)
        for block in self.blocks.values():
            x = block(x)
        if "tanh" in self.blocks:
            x = self.blocks["tanh"](x)
        return x


class Params(nn.Module):
    """ParameterList iteration and indexing, ParameterDict indexing."""

    def __init__(self):
        super().__init__()
        self.scales = nn.ParameterList([nn.Parameter(torch.randn(3)) for _ in range(3)])
        self.named = nn.ParameterDict({"shift": nn.Parameter(torch.randn(3))})

    def forward(self, x):
        for scale in self.scales:
            x = x * scale
        return x + self.scales[1] + self.named["shift"]


class Children(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.ReLU()
        self.second = nn.Tanh()

    def forward(self, x):
        for child in self.children():
            x = child(x)
        for name, child in self.named_children():
            x = child(x) + len(name)
        return x


class Constants(nn.Module):
    """`__constants__` of several types and a `Final` annotation: inlined as constants."""

    __constants__ = ["count", "dims", "name", "eps", "flag", "nothing"]
    factor: Final[float]

    def __init__(self):
        super().__init__()
        self.count = 3
        self.dims = [1, 2]
        self.name = "abc"
        self.eps = 1e-3
        self.flag = True
        self.nothing = None
        self.factor = 0.5

    def forward(self, x):
        if self.flag and self.nothing is None:
            x = x + self.eps
        return x * self.count * self.factor + self.dims[1] + len(self.name)


class Attributes(nn.Module):
    """Attributes typed from their values and from class annotations."""

    weights: Dict[str, float]
    history: List[int]
    limit: Optional[int]

    def __init__(self):
        super().__init__()
        self.offset = 2
        self.ratio = 0.25
        self.enabled = True
        self.label = "x"
        self.sizes = [1, 2, 3]
        self.pair = (1, 2.5)
        self.weights = {"a": 1.0}
        self.history = []
        self.limit = None
        self.table = torch.arange(3.0)

    def forward(self, x):
        if self.enabled and self.limit is None:
            x = x + self.offset * self.ratio
        return x + self.table + sum(self.sizes) + self.pair[1] + self.weights["a"] + len(self.history)


class Counter(nn.Module):
    """prim::SetAttr: attributes written by forward."""

    seen: List[int]

    def __init__(self):
        super().__init__()
        self.calls = 0
        self.total = 0.0
        self.seen = []

    def forward(self, x):
        self.calls += 1
        self.total = self.total + float(x.sum())
        self.seen.append(self.calls)
        return x * self.calls


class Buffers(nn.Module):
    """A buffer updated in place, a None parameter, a plain Parameter."""

    def __init__(self):
        super().__init__()
        self.register_buffer("running", torch.zeros(3))
        self.weight = nn.Parameter(torch.randn(3))
        self.register_parameter("bias", None)

    def forward(self, x):
        self.running.add_(x.mean(0))
        if self.bias is not None:
            x = x + self.bias
        return x * self.weight + self.running


class Methods(nn.Module):
    """Methods calling methods, with defaults; an exported method; the training flag."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 3)

    def scaled(self, x, factor: float = 2.0):
        return x * factor

    def body(self, x):
        return self.scaled(self.linear(x)) + self.scaled(x, 0.5)

    @export
    def exported(self, x):
        return self.body(x) - 1

    def forward(self, x):
        if self.training:
            x = x + 1
        return self.body(x)


class Probing(nn.Module):
    """hasattr and getattr with a default are decided while compiling."""

    def __init__(self):
        super().__init__()
        self.present = 2

    def forward(self, x):
        if hasattr(self, "present"):
            x = x + self.present
        if hasattr(self, "absent"):
            x = x + 100
        return x * getattr(self, "missing", 3)


class WithProperty(nn.Module):
    __jit_unused_properties__ = ["unused"]

    def __init__(self):
        super().__init__()
        self.base = 3

    @property
    def doubled(self) -> int:
        return self.base * 2

    @property
    def unused(self):
        return object()

    def forward(self, x):
        return x * self.doubled


class Overloaded(nn.Module):
    @torch.jit._overload_method
    def forward(self, x: int) -> int:
        ...

    @torch.jit._overload_method
    def forward(self, x: Tensor) -> Tensor:
        ...

    def forward(self, x):
        return x + 1


class UsesOverloads(nn.Module):
    def __init__(self):
        super().__init__()
        self.overloaded = Overloaded()

    def forward(self, x):
        return self.overloaded(x) * self.overloaded(3)


class Hooked(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 3)

    def forward(self, x):
        return self.linear(x)


def double_input(module, input: Tuple[Tensor]) -> Tuple[Tensor]:
    return (input[0] * 2,)


def add_one(module, input: Tuple[Tensor], output: Tensor) -> Tensor:
    return output + 1


def make_hooked_parent() -> nn.Module:
    parent = Returning(Hooked())
    parent.module.register_forward_pre_hook(double_input)
    parent.module.register_forward_hook(add_one)
    return parent


def make_hooked() -> nn.Module:
    module = Hooked()
    module.register_forward_hook(add_one)
    return module


class FunctionAttributes(nn.Module):
    """A Python function and a builtin stored on the instance."""

    def __init__(self):
        super().__init__()
        self.activation = F.relu
        self.combine = torch.add

    def forward(self, x):
        return self.combine(self.activation(x), 1)


class StaticHelper(nn.Module):
    @staticmethod
    def triple(x):
        return x * 3

    def forward(self, x):
        return self.triple(x)


class OptionalSubmodule(nn.Module):
    def __init__(self, with_norm: bool):
        super().__init__()
        self.linear = nn.Linear(3, 3)
        self.norm = nn.LayerNorm(3) if with_norm else None

    def forward(self, x):
        x = self.linear(x)
        if self.norm is not None:
            x = self.norm(x)
        return x


class SharedTypes(nn.Module):
    """Equal submodules share one type; a differently configured one gets its own."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 3)
        self.c = nn.Linear(3, 3, bias=False)

    def forward(self, x):
        return self.a(x) + self.b(x) + self.c(x)


class Unused(nn.Module):
    """torch.jit's markers work too (tsjit reads the attribute they set)."""

    @torch.jit.unused
    def never(self, x):
        return x

    def forward(self, x, use: bool = False):
        if use:
            return self.never(x)
        return x + 1


class Ignored(nn.Module):
    @torch.jit.ignore
    def in_python(self, x):
        return x + 1

    def forward(self, x):
        return self.in_python(x) * 2


class TupleResult(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 3)

    def forward(self, x) -> Tuple[Tensor, int]:
        return self.linear(input=x), 3


class CustomSequential(nn.Sequential):
    def forward(self, x):
        for module in self:
            x = module(x) + 1
        return x


class Residual(nn.Module):
    def __init__(self, inner: nn.Module):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return x + self.inner(x)


case("submodule_and_attribute", Net, args(t(3, 4)))
case("nested_submodules", Nested, args(t(3, 4)))
case("module_list_enumerate_len_index", Layers, args(t(2, 3)))
case("module_list_heterogeneous", Heterogeneous, args(t(2, 3)))
case("module_list_zip", Zipped, args(t(2, 3)))
case("module_dict", Blocks, args(t(2, 3)))
case("parameter_list_and_dict", Params, args(t(2, 3)))
case("children_and_named_children", Children, args(t(2, 3)))
case("constants_and_final", Constants, args(t(2, 3)))
case("attributes_typed", Attributes, args(t(2, 3)))
case("set_attributes", Counter, args(t(2, 3)), state=("calls", "total", "seen"))
case("buffers_and_none_parameter", Buffers, args(t(2, 3)), state=("running",))
case("methods_calling_methods_eval", Methods, args(t(2, 3)))
case("methods_calling_methods_train", Methods, args(t(2, 3)), train=True)
case("hasattr_getattr", Probing, args(t(2, 3)))
case("property", WithProperty, args(t(2, 3)))
case("overloaded_methods", UsesOverloads, args(t(2, 3)))
case("forward_hooks_on_submodule", make_hooked_parent, args(t(2, 3)))
case("forward_hook_on_top_module", make_hooked, args(t(2, 3)))
case("function_attributes", FunctionAttributes, args(t(2, 3)))
case("static_method", StaticHelper, args(t(2, 3)))
case("optional_submodule_present", lambda: OptionalSubmodule(True), args(t(2, 3)))
case("optional_submodule_none", lambda: OptionalSubmodule(False), args(t(2, 3)))
case("shared_types", SharedTypes, args(t(2, 3)))
case("unused_method", Unused, args(t(2, 3)))
case("ignored_method", Ignored, args(t(2, 3)))
case("tuple_result_keyword_call", TupleResult, args(t(2, 3)))
case("custom_sequential", lambda: CustomSequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1)), args(t(2, 3)))
case("residual_around_sequential", lambda: Residual(nn.Sequential(nn.Linear(3, 3), nn.Tanh())), args(t(2, 3)))


class Forking(nn.Module):
    """fork of a submodule and of a method (the forked subgraphs capture the submodule and `self`)."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 3)

    def shifted(self, x: Tensor, k: int) -> Tensor:
        return x + k

    def forward(self, x):
        futures = [torch.jit.fork(self.shifted, x, k) for k in range(2)]
        y = torch.jit.wait(torch.jit.fork(self.linear, x))
        for future in futures:
            y = y * torch.jit.wait(future)
        return y


case("fork_submodule_and_method", Forking, args(t(2, 3)))
