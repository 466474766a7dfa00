"""Calls of torch.jit's compiled functions and methods made by code that tsjit traces.

torch.jit runs a ScriptFunction or ScriptMethod in C++, below the torch-function mode the tracer records through:
left alone, the tracer would see only the call's result, and bake it in as a constant:

    @torch.jit.script                          graph(%x : Float(3, ...)):
    def jf(x, y):                                %4 : Float(3, ...) = prim::Constant[value=<jf's result>]()
        return torch.relu(x) + y * 2             %5 : Float(3, ...) = aten::sin(%4)
    def model(x):                                return (%5)
        return jf(x, x + 1).sin()

While tsjit traces, the two types' `__call__` are replaced (torch_tracing_flags.REPLACED_WHILE_TRACING): on a
tracing thread a ScriptFunction (scripted or traced by torch.jit) becomes a prim::CallFunction of its converted
GraphFunction (torch_jit_objects.py: the graph read back from torch.jit), as torch.jit's own tracer records it,
and a ScriptMethod runs as the method of the tsjit module its module converts to, which records itself as any
tsjit method does (prim::CallMethod on a submodule of a traced module). Other threads and calls outside traces
go straight to torch.jit.
"""

from __future__ import annotations

from typing import Any

import torch

from tsjit.frontend.torch_jit_objects import converted_function, converted_owner
from tsjit.frontend.torch_tracing_flags import REPLACED_WHILE_TRACING, get_tracing_state
from tsjit.frontend.trace_arguments import bind_call

_ORIGINAL_FUNCTION_CALL = torch._C.ScriptFunction.__call__
_ORIGINAL_METHOD_CALL = torch._C.ScriptMethod.__call__


def _call_function(function: torch._C.ScriptFunction, *args: Any, **kwargs: Any) -> Any:
    """A torch.jit ScriptFunction's call: recorded as a call of its converted function while tsjit traces."""
    state = get_tracing_state()
    if state is None:
        return _ORIGINAL_FUNCTION_CALL(function, *args, **kwargs)
    with state.paused():  # reading torch.jit's graph back makes tensors (constants) the trace must not see
        converted = converted_function(function)
    inputs = bind_call(converted.schema, args, kwargs, False)
    if inputs is None:  # torch.jit's call reports what does not fit
        return _ORIGINAL_FUNCTION_CALL(function, *args, **kwargs)
    return state.record_function_call(converted, inputs, lambda: _ORIGINAL_FUNCTION_CALL(function, *args, **kwargs))


def _call_method(method: torch._C.ScriptMethod, *args: Any, **kwargs: Any) -> Any:
    """A torch.jit ScriptMethod's call: while tsjit traces, the same method of the converted tsjit module."""
    state = get_tracing_state()
    if state is None:
        return _ORIGINAL_METHOD_CALL(method, *args, **kwargs)
    with state.paused():  # loading the module's archive runs code the trace must not see
        module = converted_owner(method)
    return getattr(module, method.name)(*args, **kwargs)


REPLACED_WHILE_TRACING.extend([(torch._C.ScriptFunction, "__call__", _call_function),
                               (torch._C.ScriptMethod, "__call__", _call_method)])
