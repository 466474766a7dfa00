"""Calling scripted functions and methods: the binder's fast path for positional calls agrees with the slow path
(bind_arguments) on results, conversions and errors, and cached plans and methods stay correct."""

# ruff: noqa: UP006, UP035, UP045  (written as TorchScript users do)

from __future__ import annotations

import threading
from typing import Dict, List, Optional, Tuple

import pytest
import torch
from torch import nn
from torch._jit_internal import BroadcastingList2

import tsjit
from tsjit.api.function import ArgumentBinder, bind_arguments
from tsjit.api.module import script_module
from tsjit.errors import TsjitError
from tsjit.ir.parser import parse_ir
from tsjit.runtime.function import Function
from tsjit.runtime.graph_executor import create_argument_spec


def scaled(x, scale: float = 2.0, offset: int = 1, bias: Optional[torch.Tensor] = None):
    y = x * scale + offset
    if bias is not None:
        y = y + bias
    return y


def summed(x, sizes: List[int]):
    return x + sum(sizes)


def outcome(call):
    """('ok', values) or ('error', message) of a call, so fast and slow paths compare whole."""
    try:
        return "ok", call()
    except TsjitError as error:
        return "error", str(error)


X = torch.ones(2)
CALLS = [
    ((X,), {}), ((X, 3), {}), ((X, 3.5, 2), {}), ((X, 3, 2, X), {}), ((X, 3, 2, None), {}),
    ((torch.nn.Parameter(torch.ones(2)),), {}), ((X,), {"offset": 3}), ((X, 2.0), {"bias": X}),
    ((X, "a"), {}), ((X, True), {}), ((X, 1.0, 2.5), {}), ((), {}), ((X, 1.0, 2, None, 5), {}),
    ((X,), {"nothing": 1}), (("x",), {}),
]


@pytest.mark.parametrize("args, kwargs", CALLS)
def test_fast_path_binds_as_bind_arguments_does_on_every_repetition(args, kwargs) -> None:
    schema = tsjit.script(scaled).schema
    binder = ArgumentBinder(schema)
    expected = outcome(lambda: bind_arguments(schema, args, kwargs))
    for _ in range(3):  # the first call learns, the later ones take the fast path where they can
        found = outcome(lambda: binder.bind(args, kwargs))
        assert found[0] == expected[0]
        if found[0] == "error":
            assert found[1] == expected[1]
        else:
            assert [type(v) for v in found[1]] == [type(v) for v in expected[1]]
            assert all(a is b or a == b for a, b in zip(found[1], expected[1]))


def test_ints_for_floats_are_converted_on_the_fast_path_too() -> None:
    function = tsjit.script(scaled)
    for _ in range(3):
        assert type(ArgumentBinder(function.schema).bind((X, 3), {})[1]) is float
        torch.testing.assert_close(function(X, 3), scaled(X, 3.0))


def test_wrong_types_raise_the_same_message_after_good_calls_with_other_types() -> None:
    function = tsjit.script(scaled)
    function(X, 2.0)
    for _ in range(2):
        with pytest.raises(TsjitError, match="Expected a value of type 'float' for argument 'scale' but instead "
                                             "found type 'str'"):
            function(X, "a")
        with pytest.raises(TsjitError, match="missing value for argument 'x'"):
            function()


def test_containers_are_checked_on_every_call() -> None:
    function = tsjit.script(summed)
    assert torch.equal(function(X, [1, 2]), X + 3)
    with pytest.raises(TsjitError, match="Expected a value of type 'List\\[int\\]' for argument 'sizes'"):
        function(X, [1, "2"])
    assert torch.equal(function(X, [4]), X + 4)


def counted(d: Dict[str, int], nested: List[List[int]], weights: Dict[str, float]) -> Tuple[int, Dict[str, float]]:
    return len(d) + len(nested), weights


def test_empty_and_nested_containers_fit_typed_parameters_as_in_torch_jit() -> None:
    """`{}` has no type of its own: dicts are checked element by element, as lists are; ints in containers of
    floats become floats."""
    ours, theirs = tsjit.script(counted), torch.jit.script(counted)
    for args in (({}, [], {}), ({}, [[]], {"a": 1}), ({"a": 1}, [[1], []], {"b": 2.5})):
        for _ in range(2):  # containers take the slow path every time
            found, expected = ours(*args), theirs(*args)
            assert found == expected
            assert [type(v) for v in found[1].values()] == [type(v) for v in expected[1].values()]
    with pytest.raises(TsjitError, match="Expected a value of type 'Dict\\[str, int\\]' for argument 'd'"):
        ours({1: 2}, [], {})
    with pytest.raises(RuntimeError, match="Expected a value of type 'Dict\\[str, int\\]' for argument 'd'"):
        theirs({1: 2}, [], {})


def pooled(x, k: BroadcastingList2[int], stride: Optional[BroadcastingList2[int]] = None):
    return x + k[0] * k[1] + (0 if stride is None else stride[1])


def test_one_number_for_a_fixed_size_list_is_n_copies_of_it_as_in_torch_jit() -> None:
    scripted = tsjit.script(pooled)
    x = torch.zeros(2)
    for args, kwargs in (((x, 3), {}), ((x, [3, 3], 2), {}), ((x, 3), {"stride": 2}), ((x, (2, 5), None), {})):
        assert torch.equal(scripted(*args, **kwargs), torch.jit.script(pooled)(*args, **kwargs))
    with pytest.raises(TsjitError, match="Expected a value of type 'List\\[int\\]'"):
        scripted(x, 2.5)


def test_eight_threads_call_one_script_function_while_it_learns() -> None:
    function = tsjit.script(scaled)
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for i in range(200):
                scale = i if k % 2 else float(i)
                torch.testing.assert_close(function(X, scale, k), X * float(scale) + k)
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors


# ---- methods -----------------------------------------------------------------------------------------------------
class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.factor = 2.0

    def forward(self, x, shift: float = 0.0):
        return self.fc(x) * self.factor + shift


def test_methods_bind_like_functions_and_follow_attribute_writes() -> None:
    module = Scale()
    scripted = script_module(Scale())
    scripted.load_state_dict(module.state_dict())
    x = torch.randn(2, 3)
    for _ in range(2):
        torch.testing.assert_close(scripted(x), module(x))
        torch.testing.assert_close(scripted(x, 1), module(x, 1.0))
        torch.testing.assert_close(scripted(x, shift=2.0), module(x, 2.0))
        with pytest.raises(TsjitError, match="Expected a value of type 'Tensor' for argument 'x'"):
            scripted("x")
        with pytest.raises(TsjitError, match="got an unexpected keyword argument 'scale'"):
            scripted(x, scale=1.0)
    scripted.factor = 3.0  # read by prim::GetAttr on the next call
    module.factor = 3.0
    torch.testing.assert_close(scripted(x), module(x))


def test_a_method_keeps_its_module_alive_but_the_module_does_not_keep_itself() -> None:
    import gc
    import weakref

    scripted = script_module(Scale())
    forward = scripted.forward
    forward(torch.randn(1, 3))
    alive = weakref.ref(scripted)
    del scripted
    assert alive() is not None  # `forward` still holds it
    del forward
    gc.disable()
    try:
        assert alive() is None  # freed by reference counting: no cycle through the module's call cache
    finally:
        gc.enable()


def test_calls_of_the_leading_tensors_take_the_plan_entry_with_the_defaults() -> None:
    """After a call passing only `x`, such calls run the plan directly with the bound default of `shift`; calls of
    other keys, other arities, keywords and wrong types still go through the binder, on either of two modules of
    one type (which share the method's executor and entries, and are freed by reference counting)."""
    import gc
    import weakref

    modules = [Scale(), Scale()]
    scripted = [script_module(m) for m in modules]
    for module, compiled in zip(modules, scripted):
        compiled.load_state_dict(module.state_dict())
    calls = [((torch.randn(2, 3),), {}), ((torch.randn(2, 3), 1), {}), ((torch.randn(4, 3),), {}),
             ((torch.randn(3),), {}), ((torch.randn(2, 3),), {"shift": 2.5}), ((torch.randn(2, 3, 3),), {})]
    for _ in range(3):
        for module, compiled in zip(modules, scripted):
            for args, kwargs in calls:
                torch.testing.assert_close(compiled(*args, **kwargs), module(*args, **kwargs))
            with pytest.raises(TsjitError, match="Expected a value of type 'Tensor' for argument 'x'"):
                compiled("x")
    (call,) = scripted[0].__dict__["_method_calls"].values()
    assert call.entry is not None
    alive = weakref.ref(scripted[0])
    del scripted[0], compiled
    gc.disable()
    try:
        assert alive() is None
    finally:
        gc.enable()


# ---- the executor's call key -------------------------------------------------------------------------------------
def test_grad_mode_off_shares_one_plan_among_requires_grad_values() -> None:
    function = Function("f", parse_ir("graph(%x : Tensor):\n  %y : Tensor = aten::neg(%x)\n  return (%y)\n"))
    x, w = torch.ones(2), torch.ones(2, requires_grad=True)
    with torch.no_grad():
        function(x)
        function(w)
    assert len(function.executor.plans) == 1
    function(w)
    assert len(function.executor.plans) == 2
    for inputs in ([x], [w]):
        spec = create_argument_spec(inputs)
        assert function.executor.get_plan(inputs) is function.executor.plans[spec]


def test_tensor_subclasses_tuples_and_none_find_their_plans() -> None:
    graph = parse_ir("graph(%t : (Tensor, int), %o : Tensor?):\n  %a : Tensor, %k : int = prim::TupleUnpack(%t)\n"
                     "  return (%a)\n")
    function = Function("f", graph)
    p = torch.nn.Parameter(torch.ones(2), requires_grad=False)
    calls = ([(p, 1), None], [(torch.ones(2), 1), None], [(torch.ones(2), 1), torch.ones(1)],
             [(torch.ones(2, 2), 1), None])
    for inputs in calls:
        assert function(*inputs) is inputs[0][0]
        assert function.executor.get_plan(inputs) is function.executor.plans[create_argument_spec(inputs)]
    assert len(function.executor.plans) == 3  # the Parameter and the plain tensor share one spec
