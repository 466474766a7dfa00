"""Scripting nn.Modules, the frontend half: concrete types (what an instance looks like to TorchScript, shared
and mangled types), and what `self` means inside methods (ModuleValue): the graphs torch.jit emits for the
same modules (up to value names), and TorchScript's errors for what modules cannot do."""

# ruff: noqa: UP006, UP035, UP045, F811, B007  (modules written as TorchScript users write them)

import re
import threading
import typing
import warnings
import weakref
from typing import List, Optional, Tuple

import pytest
import torch
from torch import Tensor, nn

from tsjit.api import export, ignore, unused
from tsjit.api.module import script_module
from tsjit.errors import CompileError, TsjitError
from tsjit.frontend.concrete_module_type import (
    IterableModuleKind,
    ModuleAttribute,
    NameMangler,
    infer_concrete_type,
    methods_to_compile,
    module_concrete_type,
    module_overloads,
    qualified_class_name,
)
from tsjit.frontend.resolver import EXPORT, IGNORE, UNUSED, function_modifier
from tsjit.ir import types as T

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit's own


def normalized(text: str) -> str:
    """Graph text with source comments dropped and values renamed by first appearance."""
    names: dict[str, str] = {}

    def rename(match: re.Match) -> str:
        return names.setdefault(match.group(0), f"%v{len(names)}")

    lines = [re.sub(r" # .*$", "", line) for line in str(text).strip().splitlines()]
    return re.sub(r"%[\w.]+", rename, "\n".join(lines))


def without_mangling(text: str) -> str:
    return re.sub(r"___torch_mangle_\d+\.", "", text)


def assert_same_graph_as_torch(make_module) -> None:
    ours = normalized(script_module(make_module()).graph)
    theirs = normalized(torch.jit.script(make_module()).graph)
    assert without_mangling(ours) == without_mangling(theirs)


def kinds(graph) -> list[str]:
    return [str(node.kind) for node in graph.nodes()]


# ==============================================================================================================
# concrete types
# ==============================================================================================================
class Everything(nn.Module):
    limit: Optional[int]
    names: List[str]

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(2))
        self.register_parameter("bias", None)
        self.register_buffer("steps", torch.zeros(1))
        self.child = nn.ReLU()
        self.register_module("missing", None)
        self.count = 3
        self.limit = None
        self.names = []
        self.pairs = {"a": (1, 2.0)}
        self.lock = threading.Lock()

    def forward(self, x):
        return x


def test_concrete_type_has_parameters_buffers_attributes_then_submodules():
    concrete = infer_concrete_type(Everything())
    assert list(concrete.attributes)[:4] == ["weight", "bias", "steps", "missing"]
    assert concrete.attributes["weight"] == ModuleAttribute(T.TensorType.get(), True, False)
    assert concrete.attributes["bias"] == ModuleAttribute(T.NoneType.get(), True, False)
    assert concrete.attributes["steps"] == ModuleAttribute(T.TensorType.get(), False, True)
    assert concrete.attributes["missing"].type == T.NoneType.get()  # a None submodule
    assert list(concrete.modules) == ["child"]
    class_type = module_concrete_type(Everything()).jit_type
    assert class_type.attribute_names[-1] == "child" and class_type.is_module


def test_attribute_types_come_from_values_and_class_annotations():
    attributes = infer_concrete_type(Everything()).attributes
    assert attributes["count"].type == T.IntType.get()
    assert attributes["training"].type == T.BoolType.get()
    assert attributes["limit"].type == T.OptionalType(T.IntType.get())
    assert attributes["names"].type == T.ListType(T.StringType.get())
    assert attributes["pairs"].type == T.DictType(T.StringType.get(),
                                                  T.TupleType((T.IntType.get(), T.FloatType.get())))


class Postponed(nn.Module):
    limit: "Optional[int]"

    def __init__(self):
        super().__init__()
        self.limit = None


def test_string_annotations_are_evaluated_where_the_class_is_defined():
    # `from __future__ import annotations` makes every annotation a string (torch.jit rejects those)
    assert infer_concrete_type(Postponed()).attributes["limit"].type == T.OptionalType(T.IntType.get())


def test_values_without_a_type_are_failed_attributes_with_the_reason():
    concrete = infer_concrete_type(Everything())
    assert "lock" not in concrete.attributes
    assert "failed to convert Python type: '_thread.lock'" in concrete.failed_attributes["lock"]


class UsesLock(Everything):
    def forward(self, x):
        with self.lock:
            return x


def test_using_a_failed_attribute_names_the_reason():
    with pytest.raises(CompileError, match=r"Module 'UsesLock' has no attribute 'lock' \(This attribute exists"):
        script_module(UsesLock())


class Typed(nn.Module):
    def __init__(self):
        super().__init__()
        self.items = torch.jit.Attribute([], List[int])

    def forward(self, x):
        return x + len(self.items)


def test_torch_jit_attribute_declares_the_type_and_holds_the_value():
    scripted = script_module(Typed())
    assert scripted._c.type.get_attribute("items") == T.ListType(T.IntType.get())
    assert scripted.items == []


class Hidden(nn.Module):
    __jit_ignored_attributes__ = ["secret"]

    def __init__(self):
        super().__init__()
        self.secret = object()

    def forward(self, x):
        return x


def test_jit_ignored_attributes_are_left_out_but_kept_for_python():
    scripted = script_module(Hidden())
    assert not scripted._c.type.has_attribute("secret")
    assert scripted.secret is not None


class Constants(nn.Module):
    __constants__ = ["sizes", "device", "dtype"]
    scale: typing.Final[float]

    def __init__(self):
        super().__init__()
        self.sizes = [1, 2]
        self.device = torch.device("cpu")
        self.dtype = torch.float64
        self.scale = 0.5

    def forward(self, x):
        return x.to(self.dtype) * self.scale + self.sizes[1]


def test_constants_and_final_are_constants_lists_as_tuples():
    concrete = infer_concrete_type(Constants())
    assert concrete.constants == {"sizes": (1, 2), "device": torch.device("cpu"), "dtype": torch.float64,
                                  "scale": 0.5}
    assert not {"sizes", "scale"} & set(concrete.attributes)


def test_constants_are_inlined_not_read():
    graph = script_module(Constants()).graph
    assert "prim::GetAttr" not in kinds(graph)
    assert_same_graph_as_torch(Constants)


class BadConstant(nn.Module):
    __constants__ = ["table"]

    def __init__(self):
        super().__init__()
        self.table = {"a": 1}


def test_invalid_constant_is_an_error():
    with pytest.raises(TsjitError, match=r"'dict' object in attribute 'BadConstant.table' is not a valid constant"):
        infer_concrete_type(BadConstant())


class ConstantParameter(nn.Module):
    __constants__ = ["weight", "never_set"]

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(1))


def test_constants_that_are_parameters_or_unset_only_warn():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        concrete = infer_concrete_type(ConstantParameter())
    messages = " ".join(str(w.message) for w in caught)
    assert "non-constant parameter" in messages and "was not actually set in __init__" in messages
    assert concrete.constants == {}


def test_iterable_kinds():
    assert infer_concrete_type(nn.Sequential()).iterable_kind is IterableModuleKind.LIST
    assert infer_concrete_type(nn.ModuleList()).iterable_kind is IterableModuleKind.LIST
    assert infer_concrete_type(nn.ModuleDict()).iterable_kind is IterableModuleKind.DICT
    assert infer_concrete_type(nn.ParameterList()).iterable_kind is IterableModuleKind.PARAMLIST
    assert infer_concrete_type(nn.Linear(1, 1)).iterable_kind is IterableModuleKind.NONE


# ---- shared types and names ---------------------------------------------------------------------------------------
def test_equal_instances_share_one_type_and_different_ones_get_mangled_names():
    first, second = module_concrete_type(nn.Linear(2, 3)), module_concrete_type(nn.Linear(2, 3))
    other = module_concrete_type(nn.Linear(2, 3, bias=False))
    assert first is second
    assert other.jit_type is not first.jit_type
    # whichever Linear type this process made first owns the plain name; every other one is mangled
    names = {first.jit_type.qualified_name, other.jit_type.qualified_name}
    assert len(names) == 2
    pattern = r"__torch__\.torch\.nn\.modules\.linear\.(___torch_mangle_\d+\.)?Linear"
    assert all(re.fullmatch(pattern, name) for name in names)


def test_types_differ_when_attribute_types_or_constants_differ():
    def layer_norm(shape):
        return module_concrete_type(nn.LayerNorm(shape))

    assert layer_norm(3) is layer_norm(3)
    assert layer_norm(3) is not layer_norm(4)  # normalized_shape is a constant


def test_qualified_names_follow_torch():
    assert qualified_class_name(nn.Linear) == "__torch__.torch.nn.modules.linear.Linear"
    main_class = type("M", (nn.Module,), {"__module__": "__main__"})
    assert qualified_class_name(main_class) == "__torch__.M"


def test_name_mangler_inserts_then_bumps_the_mangle_namespace():
    mangler = NameMangler()
    assert mangler.claim("__torch__.a.M") == "__torch__.a.M"
    assert mangler.claim("__torch__.a.M") == "__torch__.a.___torch_mangle_0.M"
    assert mangler.claim("__torch__.a.M") == "__torch__.a.___torch_mangle_1.M"
    assert mangler.claim("__torch__.b.___torch_mangle_7.N") == "__torch__.b.___torch_mangle_7.N"
    assert mangler.claim("__torch__.b.___torch_mangle_7.N") == "__torch__.b.___torch_mangle_8.N"


def test_scripting_from_many_threads_shares_one_type():
    results, errors = [], []

    def work():
        try:
            results.append(script_module(nn.Sequential(nn.Linear(3, 3), nn.ReLU())))
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len({id(m._c.type) for m in results}) == 1
    x = torch.randn(2, 3)
    assert all(torch.equal(m(x), m[1](m[0](x))) for m in results)


# ---- which methods compile --------------------------------------------------------------------------------------
class Marked(nn.Module):
    @export
    def exported(self, x):
        return x

    @torch.jit.export
    def torch_exported(self, x):
        return x

    @ignore
    def ignored(self, x):
        return x

    @torch.jit.unused
    def torch_unused(self, x):
        return x

    def forward(self, x):
        return x


class IgnoredForward(nn.Module):
    @torch.jit.ignore
    def forward(self, x):
        return x


def test_decorators_of_tsjit_and_torch_jit_are_read():
    assert function_modifier(Marked.exported) == EXPORT and function_modifier(Marked.torch_exported) == EXPORT
    assert function_modifier(Marked.ignored) == IGNORE and function_modifier(Marked.torch_unused) == UNUSED
    assert function_modifier(Marked.forward) is None


def test_methods_to_compile_are_forward_and_exported_ones():
    assert methods_to_compile(Marked()) == ["forward", "exported", "torch_exported"]
    assert methods_to_compile(IgnoredForward()) == []
    assert methods_to_compile(nn.ModuleList()) == []


def test_overloaded_methods_are_found_in_the_class_source():
    assert module_overloads(nn.LSTM(2, 3)) == {"forward": ["forward__0", "forward__1"]}
    assert "forward" not in methods_to_compile(nn.LSTM(2, 3))


def test_only_classes_whose_file_names_an_overload_decorator_have_their_source_read(monkeypatch):
    """inspect finds a class's source by parsing its whole file: torch.nn's linear.py says no `_overload_method`,
    so nn.Linear's source is never read; rnn.py does, and nn.GRU's overloads are found."""
    from tsjit.frontend import concrete_module_type

    read = []
    get_source = concrete_module_type.get_source
    monkeypatch.setattr(concrete_module_type, "get_source", lambda cls: read.append(cls) or get_source(cls))
    # an empty cache for this test: the classes' cached Sources are the ones their compiled methods point into
    monkeypatch.setattr(concrete_module_type, "_class_overloads", weakref.WeakKeyDictionary())
    assert module_overloads(nn.Linear(2, 2)) == {}
    assert module_overloads(nn.GRU(2, 3)) == {"forward": ["forward__0", "forward__1"]}
    assert read == [nn.GRU, nn.RNNBase]


# ==============================================================================================================
# `self` in methods: the graphs
# ==============================================================================================================
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.scale = 2.0

    def forward(self, x):
        return self.fc(x) * self.scale


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.ReLU(), nn.Tanh()])

    def forward(self, x):
        n = len(self.layers)
        for i, layer in enumerate(self.layers):
            x = layer(x) + i
        return x * n


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def bump(self, by: int) -> int:
        self.calls += by
        return self.calls

    def forward(self, x):
        if self.training:
            x = x * 2
        return x + self.bump(1)


class Lookup(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleDict({"a": nn.ReLU(), "b": nn.Sigmoid()})

    def forward(self, x):
        for name, block in self.blocks.items():
            x = block(x)
        return self.blocks["b"](x)


@pytest.mark.parametrize("make_module", [Net, Stack, Counter, Lookup, lambda: nn.Sequential(nn.Linear(2, 2)),
                                         lambda: nn.Linear(3, 2), lambda: nn.BatchNorm2d(3)],
                         ids=["submodule", "module_list", "set_attr_and_methods", "module_dict", "sequential",
                              "linear", "batchnorm"])
def test_graph_is_torch_jits(make_module):
    assert_same_graph_as_torch(make_module)


def test_submodule_calls_are_call_methods_inlined_later():
    scripted = script_module(Net())
    assert kinds(scripted.graph) == ["prim::GetAttr", "prim::CallMethod", "prim::GetAttr", "aten::mul"]
    assert "prim::CallMethod" not in kinds(scripted.inlined_graph)
    assert "aten::linear" in kinds(scripted.inlined_graph)


def test_module_list_loops_are_unrolled_and_len_is_the_container_method():
    scripted = script_module(Stack())
    assert kinds(scripted.graph).count("prim::Loop") == 0
    assert scripted.layers._c.type.methods["__len__"].schema.returns[0].type == T.IntType.get()
    assert "aten::relu" in kinds(scripted.inlined_graph) and "aten::tanh" in kinds(scripted.inlined_graph)


def test_getattr_outputs_are_named_after_the_attribute():
    """The class name may be mangled: a ReLU of another concrete type scripted earlier in the process (inplace=True)
    took the plain name, in torch.jit too."""
    text = str(script_module(Stack()).graph)
    assert re.search(r'%_0 : __torch__\.torch\.nn\.modules\.activation\.(___torch_mangle_\d+\.)?ReLU = '
                     r'prim::GetAttr\[name="0"\]', text)


class CallsHelper(nn.Module):
    def helper(self, x, k: int = 3):
        return x * k

    def forward(self, x):
        return self.helper(x) + self.helper(x, 2)


def test_methods_compile_on_first_use():
    scripted = script_module(CallsHelper())
    assert set(scripted._c.type.methods) == {"forward", "helper"}
    assert kinds(scripted.graph).count("prim::CallMethod") == 2


class Recursive(nn.Module):
    def forward(self, x):
        return self.forward(x)


def test_recursive_methods_are_rejected():
    with pytest.raises(CompileError, match="called recursively"):
        script_module(Recursive())


class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.here = 1

    def forward(self, x):
        if hasattr(self, "here") and not hasattr(self, "gone"):
            return x + 1
        return x


def test_hasattr_is_decided_while_compiling():
    assert kinds(script_module(Probe()).graph) == ["prim::Constant", "aten::add"]


class Prop(nn.Module):
    def __init__(self):
        super().__init__()
        self.base = 2

    @property
    def doubled(self) -> int:
        return self.base * 2

    def forward(self, x):
        return x * self.doubled


def test_properties_compile_to_getter_methods():
    scripted = script_module(Prop())
    assert "__doubled_getter" in scripted._c.type.methods
    assert torch.equal(scripted(torch.ones(2)), torch.full((2,), 4.0))


class Static(nn.Module):
    @staticmethod
    def triple(x):
        return x * 3

    def forward(self, x):
        return self.triple(x)


def test_static_methods_are_plain_function_calls():
    assert kinds(script_module(Static()).graph) == ["prim::Constant", "prim::CallFunction"]


# ---- hooks ------------------------------------------------------------------------------------------------------
class Hooked(nn.Module):
    def forward(self, x):
        return x + 1


class Parent(nn.Module):
    def __init__(self, child: nn.Module):
        super().__init__()
        self.child = child

    def forward(self, x):
        return self.child(x)


def pre_hook(module, input: Tuple[Tensor]) -> Tuple[Tensor]:
    return (input[0] * 2,)


def hook(module, input: Tuple[Tensor], output: Tensor) -> Tensor:
    return output * 10


def unannotated_pre_hook(module, input: Tuple[Tensor]):
    return None


def wrong_input_hook(module, input: Tensor, output: Tensor) -> Tensor:
    return output


def wrong_output_hook(module, input: Tuple[Tensor], output: int) -> Tensor:
    return input[0]


def with_hooks(*, pre=(), post=()) -> nn.Module:
    child = Hooked()
    for h in pre:
        child.register_forward_pre_hook(h)
    for h in post:
        child.register_forward_hook(h)
    return Parent(child)


def test_hooks_run_around_submodule_calls_like_eager():
    module = with_hooks(pre=[pre_hook], post=[hook])
    x = torch.randn(3)
    assert torch.equal(script_module(module)(x), module(x))
    assert_same_graph_as_torch(lambda: with_hooks(pre=[pre_hook], post=[hook]))


def test_hooks_of_the_scripted_module_itself_run_from_python():
    module = Hooked()
    module.register_forward_hook(hook)
    x = torch.randn(3)
    assert torch.equal(script_module(module)(x), module(x))


@pytest.mark.parametrize("pre, post, message", [
    ([unannotated_pre_hook], [], "Pre-hook 'unannotated_pre_hook' on module 'Hooked' is missing a return annotation"),
    ([], [wrong_input_hook], "expected the input argument to be typed as a Tuple but found type: 'Tensor'"),
    ([], [wrong_output_hook], "has the wrong type for the output argument. Received type: 'int'. Expected type: "
                              "'Tensor'"),
])
def test_hook_signatures_are_checked_like_torch_jit(pre, post, message):
    with pytest.raises(CompileError, match=re.escape(message)):
        script_module(with_hooks(pre=pre, post=post))
    with pytest.raises(RuntimeError, match=re.escape(message)):
        torch.jit.script(with_hooks(pre=pre, post=post))


# ---- ignored and unused methods --------------------------------------------------------------------------------
class Dropped(nn.Module):
    @ignore
    def in_python(self, x: Tensor) -> Tensor:
        return x + 1

    @unused
    def never(self, x):
        return x

    def forward(self, x, flag: bool = False):
        if flag:
            return self.never(x)
        return self.in_python(x)


def test_ignored_methods_are_python_calls_and_unused_ones_raise():
    graph = script_module(Dropped()).graph
    nodes = [str(n.kind) for n in graph.all_nodes()]
    assert "prim::PythonOp" in nodes and "prim::RaiseException" in nodes
    assert not {"never", "in_python"} & set(script_module(Dropped())._c.type.methods)


# ==============================================================================================================
# errors
# ==============================================================================================================
class NoSuchAttribute(nn.Module):
    def forward(self, x):
        return x + self.nope


class NotIterable(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        for m in self.fc:
            x = m(x)
        return x


class VariableIndex(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.ReLU()])

    def forward(self, x, i: int):
        return self.layers[i](x)


class MissingKey(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleDict({"a": nn.ReLU()})

    def forward(self, x):
        return self.blocks["b"](x)


class WrongAssignment(nn.Module):
    def __init__(self):
        super().__init__()
        self.count = 0

    def forward(self, x):
        self.count = "many"
        return x


class NewAttribute(nn.Module):
    def forward(self, x):
        self.fresh = 1
        return x


class BreakInModuleLoop(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.ReLU()])

    def forward(self, x):
        for layer in self.layers:
            break
        return x


class NoSuper(nn.Module):
    def __init__(self):
        pass


@pytest.mark.parametrize("module, message", [
    (NoSuchAttribute, "Module 'NoSuchAttribute' has no attribute 'nope'"),
    (NotIterable, "Only constant Sequential, ModuleList, ModuleDict, or ParameterList can be used as an iterable"),
    (VariableIndex, "Expected integer literal for index"),
    (MissingKey, "Key Error, b"),
    (WrongAssignment, "Wrong type for attribute assignment. Expected int but got str"),
    (NewAttribute, "Tried to set nonexistent attribute: fresh. Did you forget to initialize it in __init__()?"),
    (BreakInModuleLoop, "we do not support break or continue inside the body of these loops"),
], ids=lambda v: v.__name__ if isinstance(v, type) else None)
def test_errors_match_torch_jit_and_point_at_the_source(module, message):
    with pytest.raises(CompileError, match=re.escape(message)) as error:
        script_module(module())
    assert "<--- HERE" in str(error.value)
    with pytest.raises(RuntimeError, match=re.escape(message)):
        torch.jit.script(module())


def test_uninitialized_module_is_an_error():
    with pytest.raises(TsjitError, match="has not been initialized, did you forget to call 'super\\(\\)'"):
        script_module(NoSuper())


def test_dict_and_tuple_attribute_types_survive_scripting():
    class_type = script_module(Everything())._c.type
    assert class_type.get_attribute("pairs") == T.DictType(T.StringType.get(),
                                                           T.TupleType((T.IntType.get(), T.FloatType.get())))
    assert class_type.get_attribute("names") == T.ListType(T.StringType.get())
    assert isinstance(class_type.get_attribute("limit"), T.OptionalType)
    assert not class_type.has_attribute("lock")
