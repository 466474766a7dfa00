"""The resolver: its builtin table against torch.jit's (which Python callables are operators, and which ones), and
what it remembers between uses of a name."""

from __future__ import annotations

import math

import torch
import torch.jit._builtins as torch_jit_builtins

import tsjit
from tsjit.frontend.resolver import _FUNCTIONAL_COMPILED, _modules_containing_builtins, find_builtin

# what torch binds under a name other than the object's own (torch._Any is typing.Any, torch.JITException is
# torch.jit.Error, torch.to_dlpack is _to_dlpack): torch.jit's table names them by the binding, which is no operator
# either way; tsjit's lookup by the object's own name leaves them to the resolver's other rules
_ALIASES = {"Storage", "JITException", "_Any", "_Callable", "_ParamSpec", "_TypeGuard", "_TypeIs", "_TypeVar",
            "_deprecated", "_get_origin", "_overload", "sym_sqrt", "_sync", "symeig", "to_dlpack"}


def _candidates():
    """Every callable torch and its C operator namespaces bind, as (module, name, object)."""
    for module in _modules_containing_builtins():
        for name, value in vars(module).items():
            if callable(value):
                yield module.__name__, name, value


def test_callables_of_torch_are_the_operators_of_their_names():
    """Each callable torch binds under its own name is `aten::<name>`, as torch.jit's table says where it has the
    name (torch.jit builds its table while torch is still importing, before the last few names are bound)."""
    aliased = {id(value) for _, name, value in _candidates() if name in _ALIASES}
    checked = 0
    for module, name, value in _candidates():
        if id(value) in aliased or value in (torch.no_grad, torch.autocast) or name in _FUNCTIONAL_COMPILED:
            continue
        if value is torch.get_default_dtype:  # torch.jit's table names aten::get_default_dtype, which no operator is
            assert find_builtin(value) == "prim::get_default_dtype"
            continue
        expected = f"aten::{'segment_reduce' if name == '_segment_reduce' else name}"
        assert find_builtin(value) == expected, (module, name)
        assert torch_jit_builtins._find_builtin(value) in (expected, None), (module, name)
        checked += 1
    assert checked > 1000


def test_the_explicit_builtins_and_what_is_no_builtin():
    for value in (math.gcd, math.sqrt, torch.nn.functional._no_grad_embedding_renorm_, torch._VF.stft,
                  torch.autograd.grad, torch.broadcast_shapes, dict):
        assert find_builtin(value) == torch_jit_builtins._find_builtin(value), value
    for name in _FUNCTIONAL_COMPILED:  # compiled from their Python source, or operators of the explicit list
        value = getattr(torch.functional, name, None)
        if value is not None:
            assert find_builtin(value) == torch_jit_builtins._find_builtin(value), name
    for value in (torch.no_grad, torch.autocast, torch.functional.norm, torch.nn.functional.relu, print, 3,
                  torch.ones(2), lambda x: x):
        assert find_builtin(value) is None, value


def test_module_names_resolve_once_per_function_and_variables_still_shadow_them():
    """`torch` and `math` are asked of the resolver once per function (resolved_once); a variable assigned
    later under the same name is found before them, in nested blocks too, as torch.jit finds it."""
    source = """
def f(x):
    a = torch.sin(x) * math.pi
    if bool(x.sum() > 0):
        a = torch.cos(a)
    math = 2.0
    torch = 3
    return a + math + torch
"""
    x = torch.randn(3)
    scripted = tsjit.CompilationUnit(source).f
    for value in (x, -x.abs()):
        torch.testing.assert_close(scripted(value), torch.jit.CompilationUnit(source).f(value))
    graph_text = str(scripted.graph)
    assert "aten::sin(" in graph_text and "aten::cos(" in graph_text


def test_builtin_objects_are_builtins_at_every_use_and_other_callables_are_not():
    """The resolver remembers that `torch.sin` is aten::sin; a Python function of the same name is compiled,
    however often either is called."""
    def sin(x):
        return x + 1

    def f(x):
        return sin(x) + torch.sin(x) + sin(x) + torch.sin(x)

    scripted = tsjit.script(f)
    kinds = [str(node.kind) for node in scripted.inlined_graph.nodes()]
    assert kinds.count("aten::sin") == 2 and kinds.count("aten::add") == 5
    x = torch.randn(3)
    torch.testing.assert_close(scripted(x), f(x))
