"""How each call the traced code makes into PyTorch is recorded: the torch-function mode and its rules.

TracingMode sees every call of the traced code into PyTorch (torch.* functions, Tensor methods and properties,
torch.nn.functional) and picks the rule for it:

- property getters: `x.shape` gives traced sizes; `x.T`, `x.mT`, ... record their operator;
- PyTorch's own Python functions run as Python (their `has_torch_function` guards answering no), so the
  bindings they call are recorded, as torch.jit records them; a few (printing, `len`) have rules;
- bindings with a rule: sizes, conversions to Python values (they warn), `torch.tensor`, indexing,
  `x.to(...)` and its shorthands, convolutions (recorded as the `_convolution` torch.jit records);
- `torch.ops` calls: the overload called (an OpOverload) or the one a packet resolves to;
- any other binding: `tracer.record_builtin` (the operator of its name, overload as dispatched).

A rule is a function `(state, func, args, kwargs) -> result` that runs the call and records it; the tables at
the end map names to rules.
"""

from __future__ import annotations

import builtins
import contextlib
import inspect
import types
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from tsjit.frontend import (
    trace_indexing,
    trace_torch_jit_calls,  # noqa: F401  (registers what torch_sees_tracing replaces)
)
from tsjit.frontend.resolver import in_package
from tsjit.frontend.torch_tracing_flags import torch_sees_tracing
from tsjit.frontend.trace_arguments import MISSING, bind_call, with_defaults
from tsjit.frontend.tracer import (
    DispatchProbe,
    TracedSize,
    TracingState,
    calling_code,
    is_tensor_method,
    record_builtin,
    record_dispatched,
    record_operator_call,
    warn_tracer,
)
from tsjit.ops.registry import find_operator

PYTHON_DATAFLOW = ("Converting a tensor to a {} might cause the trace to be incorrect. We can't record the "
                   "data flow of Python values, so this value will be treated as a constant in the future. This "
                   "means that the trace might not generalize to other inputs!")
CONSTRUCTOR = ("{} results are registered as constants in the trace. You can safely ignore this warning if you use "
               "this function to create tensors out of constant variables that would be the same every time you "
               "call this function. In any other case, this might cause the trace to be incorrect.")
LEN_OF_TENSOR = ("Using len to get tensor shape might cause the trace to be incorrect. Recommended usage would be "
                 "tensor.shape[0]. Passing a tensor of different shape might lead to errors or silently give "
                 "incorrect results.")
ITERATING = ("Iterating over a tensor might cause the trace to be incorrect. Passing a tensor of different shape "
             "won't change the number of iterations executed (and might lead to errors or silently give "
             "incorrect results).")


@contextlib.contextmanager
def tracing(state: TracingState) -> Iterator[TracingState]:
    """Record what the code inside the `with` does into `state` (on this thread)."""
    with state.current(), torch_sees_tracing(), TracingMode(state):
        yield state


# ---- Python functions run as Python --------------------------------------------------------------------------
def _never(*args: Any, **kwargs: Any) -> bool:
    return False


class _UnguardedGlobals(dict):
    """A function's globals in which the `has_torch_function*` checks answer no; other names read through,
    torch's Python functions among them unguarded too (`F.max_pool2d` dispatches to `_max_pool2d`)."""

    def __init__(self, module_globals: dict):
        super().__init__(has_torch_function=_never, has_torch_function_unary=_never,
                         has_torch_function_variadic=_never,
                         __builtins__=module_globals.get("__builtins__", builtins))
        self.module_globals = module_globals

    def __missing__(self, key: str) -> Any:
        value = self.module_globals[key]
        return _unguarded_value(value)


_unguarded_functions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _unguarded(func: types.FunctionType) -> types.FunctionType:
    """A copy of `func` whose body sees `_UnguardedGlobals`, so it runs instead of dispatching to the mode.
    Closure cells holding torch functions get unguarded copies too (filled after caching: closures recurse)."""
    copy = _unguarded_functions.get(func)
    if copy is not None:
        return copy
    cells = tuple(func.__closure__ or ())
    replaced = {i: types.CellType() for i, cell in enumerate(cells) if _is_torch_function(_cell_contents(cell))}
    closure = tuple(replaced.get(i, cell) for i, cell in enumerate(cells)) or None
    copy = types.FunctionType(func.__code__, _UnguardedGlobals(func.__globals__), func.__name__, func.__defaults__,
                              closure)
    copy.__kwdefaults__ = func.__kwdefaults__
    _unguarded_functions[func] = copy
    for i, cell in replaced.items():
        cell.cell_contents = _unguarded(cells[i].cell_contents)
    return copy


def _unguarded_value(value: Any) -> Any:
    """torch's own Python functions unguarded, its bindings and binding namespaces taking traced sizes; anything
    else as it is."""
    if _is_torch_function(value):
        return _unguarded(value)
    if isinstance(value, types.BuiltinFunctionType) and in_package(value.__module__ or "", "torch"):
        return _binding_taking_traced_sizes(value)
    if value is torch or (isinstance(value, types.ModuleType) and in_package(value.__name__, "torch._C")):
        return _TracedNamespace(value)
    return value


def _is_torch_function(value: Any) -> bool:
    return inspect.isfunction(value) and in_package(value.__module__ or "", "torch")


class _TracedNamespace:
    """`torch`, `torch._C` or `torch._C._nn` as torch's Python functions see it while traced: what it holds is
    read through `_unguarded_value`, so `torch._C._nn.upsample_nearest1d(...)` is a binding that takes traced
    sizes."""

    def __init__(self, module: types.ModuleType):
        self._module = module

    def __getattr__(self, name: str) -> Any:
        return _unguarded_value(getattr(self._module, name))


_size_taking_bindings: dict[Callable, Callable] = {}


def _binding_taking_traced_sizes(binding: Callable) -> Callable:
    """`binding`, except that a call its argument parser refuses for a traced size in an int list goes to the
    tracing mode as a parsed call would. torch.jit's parser takes any 0-dim tensor there while tracing, and torch's
    Python code relies on it: `interpolate(x, scale_factor=1.7, recompute_scale_factor=True)` computes its output
    size as `torch.floor(x.size(2).float() * 1.7)`, a Float tensor, and passes `[size]` to
    `torch._C._nn.upsample_nearest1d`. The mode's rule records the call with the sizes through aten::Int."""
    wrapper = _size_taking_bindings.get(binding)
    if wrapper is not None:
        return wrapper

    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return binding(*args, **kwargs)
        except TypeError:
            if not any(_holds_sizes(value) for value in [*args, *kwargs.values()]):
                raise
            tensors = [value for value in [*args, *kwargs.values()] if isinstance(value, torch.Tensor)]
            return torch.overrides.handle_torch_function(binding, tensors, *args, **kwargs)

    _size_taking_bindings[binding] = call
    return call


def _holds_sizes(value: Any) -> bool:
    return isinstance(value, list | tuple) and any(isinstance(v, torch.Tensor) and v.dim() == 0 for v in value)


def _cell_contents(cell: types.CellType) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None


# ---- the torch-function mode ---------------------------------------------------------------------------------
class TracingMode(TorchFunctionMode):
    """Sends every PyTorch call the traced code makes to its rule (the mode is off while a rule runs)."""

    def __init__(self, state: TracingState):
        super().__init__()
        self.state = state
        self.running: set = set()  # the Python functions running as Python right now

    def __torch_function__(self, func, _types, args=(), kwargs=None):
        args, kwargs = tuple(args), dict(kwargs or {})
        if isinstance(func, torch._ops.OpOverload | torch._ops.OpOverloadPacket):
            return record_operator_call(self.state, func, args, kwargs)
        getter = _getter_name(func)
        if getter is not None:
            return _GETTERS.get(getter, _plain)(self.state, func, args, kwargs)
        name = getattr(func, "__name__", "")
        if inspect.isfunction(func) and func not in self.running:
            rule = _PYTHON_FUNCTIONS.get(name)
            return rule(self.state, func, args, kwargs) if rule else self.run_python_function(func, args, kwargs)
        rule = _BUILTINS.get(name) or (_TENSOR_METHODS.get(name) if is_tensor_method(func) else None)
        return (rule or record_builtin)(self.state, func, args, kwargs)

    def run_python_function(self, func: Callable, args: tuple, kwargs: dict) -> Any:
        """Run one of PyTorch's Python functions as Python, with this mode on, recording the bindings it
        calls. A binding it calls may re-dispatch with the function itself (`Tensor.unflatten` calls
        `super().unflatten`): that call is then recorded as the binding."""
        self.running.add(func)
        try:
            with self:
                return _unguarded(func)(*args, **kwargs)
        finally:
            self.running.discard(func)


def _getter_name(func: Callable) -> str | None:
    """The attribute a property getter reads (`x.shape` calls `Tensor.shape.__get__`), else None."""
    owner = getattr(func, "__self__", None)
    if isinstance(owner, types.GetSetDescriptorType) and func.__name__ == "__get__":
        return owner.__name__
    return None


def _plain(state: TracingState, func: Callable, args: tuple, kwargs: dict) -> Any:
    return func(*args, **kwargs)


def _shape(state: TracingState, func: Callable, args: tuple, kwargs: dict) -> TracedSize:
    return state.sizes_of(args[0])


def _size(state: TracingState, func: Callable, args: tuple, kwargs: dict) -> Any:
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    if dim is None:
        return state.sizes_of(args[0])
    return state.size_of(args[0], dim)


def _numel(state: TracingState, func: Callable, args: tuple, kwargs: dict) -> torch.Tensor:
    return state.numel_of(args[0])


def _converting(what: str) -> Callable:
    """A handler for a call that turns a tensor into a Python value: it warns, as torch.jit does."""

    def handler(state: TracingState, func: Callable, args: tuple, kwargs: dict) -> Any:
        warn_tracer(PYTHON_DATAFLOW.format(what))
        return func(*args, **kwargs)

    return handler


def _constructor(name: str) -> Callable:
    """`torch.as_tensor(data)`: its result is a constant of the trace (with a warning)."""

    def handler(state: TracingState, func: Callable, args: tuple, kwargs: dict) -> Any:
        warn_tracer(CONSTRUCTOR.format(name))
        return func(*args, **kwargs)

    return handler


def _len(state: TracingState, func: Callable, args: tuple, kwargs: dict) -> int:
    warn_tracer(LEN_OF_TENSOR)
    return func(*args, **kwargs)


def _unbind(state: TracingState, func: Callable, args: tuple, kwargs: dict) -> Any:
    """`unbind`, which `for row in x` calls: iterating over a tensor warns."""
    if calling_code() is _TENSOR_ITER_CODE:
        warn_tracer(ITERATING)
    return record_builtin(state, func, args, kwargs)


def _tensor_constant(state: TracingState, func: Callable, args: tuple, kwargs: dict) -> torch.Tensor:
    """`torch.tensor(data)`: a constant, converted and detached as the binding does (and a warning)."""
    warn_tracer(CONSTRUCTOR.format("torch.tensor"))
    result = func(*args, **kwargs)
    converted = result.detach()
    schema = find_operator("aten::to.device").schema
    state.record_call(schema, [result.detach().clone(), result.device, result.dtype], converted)
    state.record_call(find_operator("aten::detach").schema, [converted], result)
    return result


def _to_dtype(dtype: torch.dtype) -> Callable:
    """`x.float()`, `x.long()`, ...: the binding calls `aten::to.dtype`."""

    def handler(state: TracingState, func: Callable, args: tuple, kwargs: dict) -> Any:
        result = func(*args, **kwargs)
        memory_format = kwargs.get("memory_format", MISSING)
        schema = find_operator("aten::to.dtype").schema
        state.record_call(schema, [args[0], dtype, MISSING, MISSING, memory_format], result)
        return result

    return handler


def _cpu(state: TracingState, func: Callable, args: tuple, kwargs: dict) -> Any:
    result = func(*args, **kwargs)
    record_to_options(state, args[0], torch.device("cpu"), kwargs.get("memory_format", MISSING), result)
    return result


def record_to_options(state: TracingState, tensor: torch.Tensor, device, memory_format, result, non_blocking=False,
                      copy=False) -> None:
    """`self.to(self.options()...)` as the bindings call it: `aten::to.dtype_layout` with every option given."""
    schema = find_operator("aten::to.dtype_layout").schema
    values = [tensor, tensor.dtype, tensor.layout, device, None, non_blocking, copy, memory_format]
    state.record_call(schema, values, result)


def _to(state: TracingState, func: Callable, args: tuple, kwargs: dict) -> Any:
    """`x.to(...)`: the overload the binding picks from what the arguments give (python_variable_methods.cpp)."""
    result = func(*args, **kwargs)
    device, dtype, non_blocking, copy = _parse_to(args[1:], kwargs)
    memory_format = kwargs.get("memory_format", MISSING)
    if device is None and dtype is None and not copy and memory_format is MISSING:
        return result
    if dtype is None:
        record_to_options(state, args[0], device or args[0].device, memory_format, result, non_blocking, copy)
    elif device is None:
        schema = find_operator("aten::to.dtype").schema
        state.record_call(schema, [args[0], dtype, non_blocking, copy, memory_format], result)
    else:
        schema = find_operator("aten::to.device").schema
        state.record_call(schema, [args[0], device, dtype, non_blocking, copy, memory_format], result)
    return result


def _parse_to(args: tuple, kwargs: dict) -> tuple[Any, Any, bool, bool]:
    """(device, dtype, non_blocking, copy) from `to(other)`, `to(dtype)` or `to(device, dtype)` arguments."""
    args = list(args)
    device, dtype = kwargs.get("device"), kwargs.get("dtype")
    if args and isinstance(args[0], torch.Tensor):
        other = args.pop(0)
        device, dtype = other.device, other.dtype
    elif args and isinstance(args[0], torch.dtype):
        dtype = args.pop(0)
    elif args and isinstance(args[0], torch.device | str | int):
        device = args.pop(0)
        if args and isinstance(args[0], torch.dtype):
            dtype = args.pop(0)
    flags = args + [kwargs.get("non_blocking", False), kwargs.get("copy", False)][len(args):]
    return (torch.device(device) if device is not None else None), dtype, bool(flags[0]), bool(flags[1])


def _convolution(state: TracingState, func: Callable, args: tuple, kwargs: dict) -> Any:
    """torch.jit's tracer does not record `conv2d` and friends but the `aten::_convolution` they call, with
    the cuDNN flags of the moment (`_convolution_mode` when the padding is a string like "same"). An unbatched
    input is recorded as torch.jit records it, between the `unsqueeze` and `squeeze` the binding wraps it in:

        %3 = aten::unsqueeze(%x, 0); %4 = aten::_convolution_mode(%3, %w, ...); %5 = aten::squeeze(%4, 0)
    """
    probe = DispatchProbe()
    with probe:
        result = func(*args, **kwargs)
    calls = probe.calls
    unbatched = len(calls) > 2 and (calls[0].operator, calls[-1].operator) == (
        torch.ops.aten.unsqueeze.default, torch.ops.aten.squeeze.dim)
    inner = calls[1:-1] if unbatched else calls
    if unbatched:
        record_dispatched(state, calls[:1], func)
    batched_input, batched_result = (calls[0].result, calls[-1].args[0]) if unbatched else (None, result)
    if not _record_convolution(state, func, args, kwargs, inner, batched_input, batched_result):
        record_dispatched(state, inner, func)
    if unbatched:
        record_dispatched(state, calls[-1:], func)
    return result


def _record_convolution(state: TracingState, func: Callable, args: tuple, kwargs: dict,
                        calls: list, batched_input: Any, result: Any) -> bool:
    """Record the `_convolution` (or `_convolution_mode`) node of a convolution call; False if it has none."""
    if any(isinstance(a, str) for a in [*args, *kwargs.values()]):
        schema = find_operator(f"aten::{func.__name__}.padding").schema
        values = bind_call(schema, args, kwargs, False)
        if values is None:
            return False
        if batched_input is not None:
            values[0] = batched_input
        state.record_call(find_operator("aten::_convolution_mode").schema, with_defaults(schema, values), result)
        return True
    if len(calls) == 1 and str(calls[0].operator._schema.name) == "aten::convolution":
        cudnn = torch.backends.cudnn
        flags = [cudnn.benchmark, cudnn.deterministic, cudnn.enabled, cudnn.allow_tf32]
        state.record_call(find_operator("aten::_convolution").schema, [*calls[0].args, *flags], result)
        return True
    return False


def _indexing(name: str) -> Callable:
    def handler(state: TracingState, func: Callable, args: tuple, kwargs: dict) -> Any:
        return getattr(trace_indexing, name)(state, func, args)

    return handler


def _getter_operator(name: str) -> Callable:
    """`x.T` and friends: the getter calls an operator (`x.T` is `aten::numpy_T`)."""

    def handler(state: TracingState, func: Callable, args: tuple, kwargs: dict) -> Any:
        return record_builtin(state, func, args, kwargs, name)

    return handler


_GETTERS: dict[str, Callable] = {
    "shape": _shape, "T": _getter_operator("numpy_T"), "mT": _getter_operator("mT"),
    "mH": _getter_operator("mH"), "real": _getter_operator("real"), "imag": _getter_operator("imag"),
}
# Python functions of torch that run untraced (printing, pickling) or have their own handler
_PYTHON_FUNCTIONS: dict[str, Callable] = {
    "__len__": _len, "__repr__": _plain, "__str__": _plain, "__format__": _plain, "__reduce_ex__": _plain,
    "__deepcopy__": _plain, "__setstate__": _plain, "__dir__": _plain, "backward": _plain,
    "register_hook": _plain, "__array__": _converting("NumPy array"),
}
_BUILTINS: dict[str, Callable] = {
    "size": _size, "numel": _numel, "__bool__": _converting("Python boolean"),
    "__int__": _converting("Python integer"),
    "__float__": _converting("Python float"), "__complex__": _converting("Python complex"),
    "item": _converting("Python number"), "tolist": _converting("Python list"), "numpy": _converting("NumPy array"),
    "tensor": _tensor_constant, "as_tensor": _constructor("torch.as_tensor"), "unbind": _unbind,
    "__getitem__": _indexing("getitem"), "__setitem__": _indexing("setitem"),
    **{name: _convolution for name in ("convolution", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                                       "conv_transpose2d", "conv_transpose3d")},
}
_TENSOR_METHODS: dict[str, Callable] = {
    "to": _to, "cpu": _cpu, "float": _to_dtype(torch.float32), "double": _to_dtype(torch.float64),
    "half": _to_dtype(torch.float16), "bfloat16": _to_dtype(torch.bfloat16), "long": _to_dtype(torch.int64),
    "int": _to_dtype(torch.int32), "short": _to_dtype(torch.int16), "char": _to_dtype(torch.int8),
    "byte": _to_dtype(torch.uint8), "bool": _to_dtype(torch.bool), "cfloat": _to_dtype(torch.complex64),
    "cdouble": _to_dtype(torch.complex128),
}
_TENSOR_ITER_CODE = torch.Tensor.__iter__.__code__


