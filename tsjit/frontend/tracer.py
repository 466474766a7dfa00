"""The tracer: run Python code on real tensors and record the tensor operations it performs into a Graph.

(seed: jit-overview.md "Tracer"; pytorch-ir-2018.md "Tracing".) A TracingState maps each live tensor to the
graph Value that computes it, keyed by identity and held weakly. While it is active, a torch-function mode
(trace_calls.py) sees every call the Python code makes into PyTorch's C++ bindings (the calls torch.jit's tracer
sees at its dispatch key) and records each as a node with the overload the binding called:

    def f(x):                          graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
        n = x.size(0)                    %2 : int = prim::Constant[value=0]()
        return x.view(n, -1) + 2         %3 : int = aten::size(%x, %2)
                                         %n : Long(device=cpu) = prim::NumToTensor(%3)
                                         %5 : int = aten::Int(%n)
                                         %6 : int = prim::Constant[value=-1]()
                                         %7 : int[] = prim::ListConstruct(%5, %6)
                                         %8 : Float(2, 3, ...) = aten::view(%x, %7)
                                         %9 : Long(requires_grad=0, device=cpu) = prim::Constant[value={2}]()
                                         %10 : int = prim::Constant[value=1]()
                                         %11 : Float(2, 3, ...) = aten::add(%8, %9, %10)

- Sizes are data: `x.size(0)`, `x.shape` and `x.numel()` give 0-dim tensors traced as
  `prim::NumToTensor(aten::size(...))`, so traces generalize over sizes as torch.jit's do.
- The overload is the one the binding dispatched: each call runs under a dispatch probe, and when the probe saw
  one operator of the call's name that overload is recorded (`x + 2` is `aten::add.Tensor` with a
  wrapped-number constant, `x > 0` is `aten::gt.Scalar`). Composite operators (`linear`, `lstm`, `flatten`)
  decompose below the bindings, so they are matched by name against the Python arguments (trace_arguments.py).
- PyTorch's Python functions (torch.nn.functional, Tensor methods written in Python) run as Python, so the
  bindings they call are recorded (trace_calls.py), and indexing has its own recorder (trace_indexing.py);
  what no rule covers is recorded as the operators the dispatch probe saw.
- Tensors the trace does not know become constants; turning a tensor into a Python value warns (TracerWarning).
- A ScriptFunction called while tracing is recorded as a prim::CallFunction keeping its control flow
  (`record_function_call`), a torch.jit one as a call of its converted graph (trace_torch_jit_calls.py);
  submodule calls of a traced module become prim::CallMethod (trace_module.py).
- `tsjit.fork(fn, *args)` runs `fn` at once, recorded into a
  graph of its own that becomes the Subgraph of a prim::fork; `wait` on its future is an aten::wait
  (`record_fork`, `record_wait`).
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import types
import warnings
import weakref
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from tsjit.errors import TsjitError
from tsjit.frontend.torch_tracing_flags import tracing_state
from tsjit.frontend.trace_arguments import (
    MISSING,
    bind_call,
    is_int_like,
    is_int_list,
    numbers_as_tensors,
    sizes_as_numbers,
)
from tsjit.ir import types as T
from tsjit.ir.constants import wrapped_number
from tsjit.ir.graph import Graph, Node, Value
from tsjit.ir.schema import Argument, FunctionSchema
from tsjit.ir.symbols import Symbol, aten, prim
from tsjit.ops.matching import pin_overload
from tsjit.ops.registry import find_operator, get_operators
from tsjit.passes.dead_code_elimination import eliminate_dead_code


class TracerWarning(Warning):
    """The trace may not generalize: a tensor became a Python value, len() of a tensor, a list output, ..."""

    @staticmethod
    def ignore_lib_warnings() -> None:
        """Hide TracerWarnings raised from inside torch's own modules (torch.jit.TracerWarning's helper)."""
        warnings.filterwarnings("ignore", category=TracerWarning, module=r"torch\.(?!jit)")


class SourceLocation(NamedTuple):
    """Where a traced node came from: the Python line that made the call (`# file.py:12:0` in graph text)."""

    filename: str
    line: int

    def line_col(self) -> tuple[int, int]:
        return self.line, 0

    start_line_col = line_col

    def highlight(self, context: int = 0) -> str:
        """The location as `file:line`: a traced node keeps no source text, so there is no context to show (the
        parameter is SourceRange.highlight's, so that run-time errors render both kinds alike)."""
        return f"{self.filename}:{self.line}"


class TracedSize(tuple):
    """`x.shape` / `x.size()` while tracing: like torch.Size, but each size is a traced 0-dim tensor."""

    def __getitem__(self, index):
        item = tuple.__getitem__(self, index)
        return TracedSize(item) if isinstance(index, slice) else item

    def __add__(self, other):
        return TracedSize(tuple(self) + tuple(other))

    def __radd__(self, other):
        return TracedSize(tuple(other) + tuple(self))

    def numel(self):
        """The product of the sizes, traced (torch.Size.numel)."""
        return math.prod(self)


# ---- the state of one trace ----------------------------------------------------------------------------------


class TraceFrame:
    """One graph being recorded (the traced function's, a forked call's, or the method a submodule call
    becomes) and the Values its tensors and futures have in it. `captures` maps the extra inputs this graph
    takes for what enclosing graphs computed to that: a tensor, a future, or (a forked call's `self`) the
    enclosing graph's Value. Module frames (trace_module.py) also read parameters and buffers with prim::GetAttr."""

    def __init__(self, graph: Graph, parent: TraceFrame | None = None, scope: str | None = None):
        self.graph = graph
        self.parent = parent
        self.scope = scope
        self.captures: dict[Value, Any] = {}
        self.futures: dict[int, tuple[Any, Value]] = {}  # the futures forked here, held until the trace ends
        self._values: dict[int, tuple[weakref.ref, Value]] = {}

    def lookup(self, tensor: torch.Tensor) -> Value | None:
        entry = self._values.get(id(tensor))
        return entry[1] if entry is not None and entry[0]() is tensor else None

    def bind(self, tensor: torch.Tensor, value: Value) -> None:
        key = id(tensor)
        self._values[key] = (weakref.ref(tensor, lambda ref: self._forget(key, ref)), value)

    def _forget(self, key: int, ref: weakref.ref) -> None:
        entry = self._values.get(key)
        if entry is not None and entry[0] is ref:
            del self._values[key]

    def attribute_value(self, tensor: torch.Tensor) -> Value | None:
        """The Value reading `tensor` from the module this graph is a method of; None outside modules."""
        return None

    def module_value(self, module) -> Value | None:
        """The Value of a submodule of this graph's module (None outside modules)."""
        return None

    def knows(self, tensor: torch.Tensor) -> bool:
        return self.lookup(tensor) is not None or self.owns_attribute(tensor)

    def owns_attribute(self, tensor: torch.Tensor) -> bool:
        return False

    def capture(self, source: Any, type_: T.Type) -> Value:
        """A new input of this graph standing for `source`, computed by an enclosing graph."""
        value = self.graph.add_input(None, type_)
        self.captures[value] = source
        return value

    def fork_frame(self) -> TraceFrame:
        """The frame recording a call forked from this graph."""
        return TraceFrame(Graph(), self, self.scope)


class TracingState:
    """The mapping from live tensors to graph Values, and the recording of calls into nodes."""

    def __init__(self, frame: TraceFrame, strict: bool = True):
        self.frame = frame
        self.strict = strict

    @property
    def graph(self) -> Graph:
        return self.frame.graph

    # -- activation --
    @contextlib.contextmanager
    def current(self) -> Iterator[TracingState]:
        """Make this the trace of this thread (trace_calls.tracing also switches recording on)."""
        with tracing_state(self):
            yield self

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Run something (a ScriptFunction's graph) without recording it."""
        with tracing_state(None), torch._C.DisableTorchFunction():
            yield

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        """Run the tracer's own bookkeeping from inside the traced code without recording it."""
        with torch._C.DisableTorchFunction():
            yield

    @contextlib.contextmanager
    def in_frame(self, frame: TraceFrame) -> Iterator[TraceFrame]:
        """Record into another graph (a submodule's method) for the duration of the `with`."""
        saved, self.frame = self.frame, frame
        try:
            yield frame
        finally:
            self.frame = saved

    # -- tensors and their Values --
    def value_of(self, tensor: torch.Tensor) -> Value:
        """The Value of a tensor in the current graph: traced, a module attribute, captured from an enclosing
        graph, or else a constant."""
        frame = self.frame
        value = frame.lookup(tensor)
        if value is None:
            value = frame.attribute_value(tensor)
            if value is None and _known_outside(frame, tensor):
                value = self._capture(frame, tensor)
            if value is None:
                value = self.constant_tensor(tensor)
            frame.bind(tensor, value)
        _name_from_locals(value, tensor)
        return value

    def set_value(self, tensor: torch.Tensor, value: Value) -> None:
        """Record that `value` computes `tensor` (an in-place op's output rebinds its input)."""
        self.frame.bind(tensor, value)

    def is_traced(self, tensor: torch.Tensor) -> bool:
        return self.frame.knows(tensor) or _known_outside(self.frame, tensor)

    def constant_tensor(self, tensor: torch.Tensor) -> Value:
        if tensor.requires_grad:
            raise TsjitError("Cannot insert a Tensor that requires grad as a constant. Consider making it a "
                             f"parameter or input, or detaching the gradient\nTensor:\n{tensor}")
        return self.constant(tensor.detach())

    def _capture(self, frame: TraceFrame, tensor: torch.Tensor) -> Value:
        return frame.capture(tensor, T.TensorType.create_from_tensor(tensor))

    def outer_value(self, source: Any) -> Value:
        """The Value in the current graph of what a capture of a nested graph stands for."""
        if isinstance(source, Value):
            return source
        if isinstance(source, torch.Tensor):
            return self.value_of(source)
        value = self.future_value(source)
        assert value is not None, "only futures forked by the trace are captured"
        return value

    # -- nodes --
    def create_node(self, kind: Symbol | str, inputs: list[Value]) -> Node:
        """A node at the end of the current graph, with the calling Python line as its source location."""
        node = self.graph.create(kind, inputs, 0)
        node.source_range = _caller_location()
        node.scope = self.frame.scope
        return self.graph.insert_node(node)

    def insert(self, kind: Symbol | str, inputs: list[Value], output_type: T.Type) -> Value:
        return self.create_node(kind, inputs).add_output(output_type)

    def constant(self, value: Any, type_: T.Type | None = None) -> Value:
        return self.graph.insert_constant(value, type_, source_range=_caller_location())

    def record_call(self, schema: FunctionSchema, values: list[Any], result: Any) -> Node:
        """A node calling `schema` on the bound Python `values` (MISSING: the default), whose outputs compute
        `result`."""
        values = list(values) + [MISSING] * (len(schema.arguments) - len(values))
        inputs = [self.argument_value(a, v) for a, v in zip(schema.arguments, values)]
        node = self.create_node(Symbol(schema.name), inputs)
        pin_overload(node, schema)
        returned = [result] if len(schema.returns) == 1 else list(result or ())
        for declared, value in zip(schema.returns, returned):
            self.bind_output(node, declared.type, value)
        return node

    def bind_output(self, node: Node, declared: T.Type, value: Any) -> Value:
        """Add an output for `value` to `node`; tensors in it are bound (a tensor list through prim::ListUnpack)."""
        if isinstance(value, torch.Tensor):
            output = node.add_output(T.TensorType.create_from_tensor(value))
            self.set_value(value, output)
            return output
        if _is_tensor_list(declared) and isinstance(value, list | tuple):
            output = node.add_output(T.ListType(T.TensorType.get()))
            self.unpack(output, value, prim.ListUnpack)
            return output
        if isinstance(value, torch.ScriptObject):  # a custom class object, passed on by identity like a tensor
            output = node.add_output(T.type_of(value))
            self.frame.bind(value, output)
            return output
        return node.add_output(declared if not _has_type_variables(declared) else type_of_result(value))

    def unpack(self, value: Value, items, kind: Symbol = prim.TupleUnpack) -> None:
        """Bind the tensors of a tuple (or list) `items` that `value` computes, through TupleUnpack nodes."""
        node = self.create_node(kind, [value])
        for item in items:
            output = node.add_output(type_of_result(item))
            if isinstance(item, torch.Tensor):
                self.set_value(item, output)
            elif isinstance(item, tuple) and _contains_tensor(item):
                self.unpack(output, item)

    # -- Python values as graph values --
    def argument_value(self, argument: Argument, value: Any) -> Value:
        """The Value passing a bound Python value (or the default, for MISSING) to `argument`."""
        if value is MISSING:
            value = argument.default_value
        if is_int_list(argument) and is_int_like(value):
            value = [value] * (argument.N or 1)
        return self.python_value(argument.real_type, value)

    def python_value(self, type_: T.Type, value: Any) -> Value:
        """`value` as a Value of schema type `type_`: traced tensors by their Values, sizes through aten::Int,
        numbers for Tensor arguments as wrapped-number constants, lists through prim::ListConstruct."""
        if value is None:
            return self.constant(None)
        if isinstance(type_, T.OptionalType):
            return self.python_value(type_.elem, value)
        if isinstance(type_, T.ListType):
            elements = [self.python_value(type_.elem, v) for v in value]
            return self.insert(prim.ListConstruct, elements, _carried(type_))
        if isinstance(type_, T.TensorType):
            return self.value_of(value) if isinstance(value, torch.Tensor) else self.constant(wrapped_number(value))
        if isinstance(value, torch.Tensor):
            return self.number_from_tensor(type_, value)
        if isinstance(value, torch.ScriptObject) and self.frame.knows(value):
            return self.frame.lookup(value)
        if isinstance(type_, T.DeviceType):
            return self.constant(torch.device(value))
        if isinstance(type_, T.FloatType) and isinstance(value, int):
            value = float(value)
        return self.constant(value)

    def number_from_tensor(self, type_: T.Type, tensor: torch.Tensor) -> Value:
        """A 0-dim tensor passed for a number: `aten::Int(%n)` when traced (sizes), else its value."""
        if not self.is_traced(tensor):
            return self.constant(tensor.item())
        converter, result_type = _NUMBER_CONVERSIONS.get(type(_carried(type_)), _NUMBER_CONVERSIONS[T.NumberType])
        value = self.value_of(tensor)
        producer = value.node  # a graph input's prim::Param is not in the node list: its block's first node follows
        follower = producer.owning_block.return_node.next if producer.kind is prim.Param else producer.next
        with self.graph.insert_point_guard(follower):  # right after the tensor, as torch.jit places it
            return self.insert(converter, [value], result_type)

    # -- sizes --
    def size_of(self, tensor: torch.Tensor, dim: int) -> torch.Tensor:
        """`tensor.size(dim)` as a 0-dim tensor traced as `prim::NumToTensor(aten::size(%t, dim))`."""
        size = self.insert(aten.size, [self.value_of(tensor), self.constant(dim)], T.IntType.get())
        return self.number_tensor(size, tensor.size(dim))

    def sizes_of(self, tensor: torch.Tensor) -> TracedSize:
        return TracedSize(self.size_of(tensor, dim) for dim in range(tensor.dim()))

    def numel_of(self, tensor: torch.Tensor) -> torch.Tensor:
        return self.number_tensor(self.insert(aten.numel, [self.value_of(tensor)], T.IntType.get()), tensor.numel())

    def number_tensor(self, number: Value, actual: int) -> torch.Tensor:
        result = torch.tensor(actual, device="cpu")
        self.set_value(result, self.insert(prim.NumToTensor, [number], _NUM_TO_TENSOR_TYPE))
        return result

    # -- calls into TorchScript --
    def record_function_call(self, function, inputs: list[Any], run: Callable[[], Any]) -> Any:
        """A ScriptFunction called while tracing (ScriptFunction.__call__ hands it over): run it untraced and
        record `prim::CallFunction`, keeping its control flow. `function` is its GraphFunction, `inputs` the
        arguments bound to its schema, `run()` runs it."""

        def callee() -> Value:
            node = self.create_node(prim.Constant, []).s_("name", function.name)
            return node.add_output(T.FunctionType(function))

        return self._record_call(prim.CallFunction, callee, function.schema.arguments, inputs, run)

    def record_method_call(self, module, function, inputs: list[Any], run: Callable[[], Any]) -> Any:
        """A method of a scripted submodule called while tracing a module: `prim::CallMethod` on the submodule
        (read with prim::GetAttr), keeping the method's control flow. A scripted module that is not part of the
        traced module (or called from a traced function) has no value in the graph to call the method on: an
        error, as torch.jit's (recording its operators instead would fix its branches to this call's)."""
        with self.recording():
            owner = self.frame.module_value(module)
        if owner is None:
            raise TsjitError(f"Tried to trace <{module._c.type.qualified_name} object at {hex(id(module))}> but it is "
                             "not part of the active trace. Modules that are called during a trace must be "
                             "registered as submodules of the thing being traced.")
        return self._record_call(prim.CallMethod, lambda: owner, function.schema.arguments[1:], inputs, run,
                                 function.name)

    def _record_call(self, kind: Symbol, callee: Callable[[], Value], arguments, inputs: list[Any],
                     run: Callable[[], Any], name: str | None = None) -> Any:
        with self.recording():
            values = [self.argument_value(a, v) for a, v in zip(arguments, inputs)]
        with self.paused():
            result = run()
        with self.recording():
            node = self.create_node(kind, [callee(), *values])
            if name is not None:
                node.s_("name", name)
            self.bind_result(node, result)
        return result

    # -- fork and wait --
    def record_fork(self, future: Any, fn: Callable, args: tuple, kwargs: dict) -> Any:
        """`fork(fn, *args, **kwargs)` while tracing: run the call now, on this thread, recording it into a graph
        of its own, which becomes the Subgraph of a `prim::fork` node whose output (a Future) `future` is.
        What the forked graph uses of enclosing graphs becomes its inputs, in the order its nodes first use
        them (the arguments themselves are only Python values to the trace). Returns the call's result."""
        with self.recording():
            frame = self.frame.fork_frame()
        with self.in_frame(frame):
            result = fn(*args, **kwargs)
            with self.recording():
                frame.graph.register_output(self._forked_output(result))
        with self.recording():
            inputs = [self.outer_value(source) for source in _lift_inputs(frame)]
            for inner, outer in zip(frame.graph.inputs, inputs):
                if outer.has_debug_name():
                    inner.set_debug_name(outer.debug_name)
            node = self.create_node(prim.fork, inputs)
            node.g_("Subgraph", frame.graph)
            self.frame.futures[id(future)] = (future, node.add_output(T.FutureType(type_of_result(result))))
        return result

    def _forked_output(self, result: Any) -> Value:
        """The forked graph's output for the call's `result`: a tensor, or a tuple or list of them (typed as the
        tensors are, whatever the Values computing them say: a method call's are plain Tensors)."""
        if isinstance(result, torch.Tensor):
            return self.value_of(result)
        if isinstance(result, tuple):
            elements = [self._forked_output(item) for item in result]
            return self.insert(prim.TupleConstruct, elements, type_of_result(result))
        if isinstance(result, list) and all(isinstance(item, torch.Tensor) for item in result):
            return self.insert(prim.ListConstruct, [self.value_of(t) for t in result], type_of_result(result))
        raise TsjitError(f"a forked call returned {type(result).__name__}, which tracing cannot record: a forked "
                         "call returns a tensor, a list of tensors or a tuple of those")

    def record_wait(self, future: Any, result: Any) -> Any:
        """`wait(future)` while tracing, `result` being the future's value: `aten::wait` on the future's Value,
        whose output computes `result`. A future the trace did not fork is only waited on."""
        with self.recording():
            value = self.future_value(future)
            if value is not None:
                node = self.create_node(aten.wait, [value])
                output = node.add_output(value.type.elem)
                if isinstance(result, torch.Tensor):
                    self.set_value(result, output)
                elif isinstance(result, tuple | list):
                    self.unpack(output, result, prim.TupleUnpack if isinstance(result, tuple) else prim.ListUnpack)
        return result

    def future_value(self, future: Any) -> Value | None:
        """The Value of a future the trace forked in the current graph or (then captured) an enclosing one."""
        frame = self.frame
        entry = frame.futures.get(id(future))
        if entry is not None:
            return entry[1]
        parent = frame.parent
        while parent is not None and id(future) not in parent.futures:
            parent = parent.parent
        if parent is None:
            return None
        value = frame.capture(future, parent.futures[id(future)][1].type)
        frame.futures[id(future)] = (future, value)
        return value

    def bind_result(self, node: Node, result: Any) -> Value:
        """One output of `node` computing `result`; the tensors inside a tuple result are unpacked and bound."""
        output = node.add_output(type_of_result(result))
        if isinstance(result, torch.Tensor):
            self.set_value(result, output)
        elif isinstance(result, tuple) and _contains_tensor(result):
            self.unpack(output, result)
        return output


def _lift_inputs(frame: TraceFrame) -> list[Any]:
    """Finish a forked call's graph: dead code removed, its inputs reordered by first use and the unused ones
    dropped (torch.jit lifts what a fork's block uses in that order). Returns what each input stands for."""
    graph = frame.graph
    eliminate_dead_code(graph)
    captured = set(graph.inputs)
    used: dict[Value, None] = {}
    for node in graph.all_nodes():
        used.update((v, None) for v in node.inputs if v in captured)
    used.update((v, None) for v in graph.outputs if v in captured)
    sources = [frame.captures[v] for v in used]
    for value in used:
        value.replace_all_uses_with(graph.add_input(None, value.type))
    for _ in captured:
        graph.erase_input(0)
    return sources


def _known_outside(frame: TraceFrame, tensor: torch.Tensor) -> bool:
    parent = frame.parent
    while parent is not None:
        if parent.knows(tensor):
            return True
        parent = parent.parent
    return False


# ---- recording one call ------------------------------------------------------------------------------------
class DispatchedCall(NamedTuple):
    operator: torch._ops.OpOverload
    args: tuple
    kwargs: dict
    result: Any


class DispatchProbe(TorchDispatchMode):
    """Notes the operators a call dispatches (only the outermost: operators run inside them are not seen)."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False  # else TorchDispatchMode wraps __torch_dispatch__ in a guard that imports torch._dynamo

    def __init__(self):
        super().__init__()
        self.calls: list[DispatchedCall] = []

    def __torch_dispatch__(self, func, _types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        self.calls.append(DispatchedCall(func, args, kwargs or {}, result))
        return result


def record_builtin(state: TracingState, func: Callable, args: tuple, kwargs: dict, name: str | None = None) -> Any:
    """Run a PyTorch binding and record it: by its name and the probe's overload, else as what it dispatched."""
    name = name or operator_name(func)
    probe = DispatchProbe()
    with probe:
        result = _run_binding(func, args, kwargs, name)
    if not probe.calls and not _contains_tensor(result):
        return result
    if not (name and record_by_name(state, name, func, args, kwargs, probe.calls, result)):
        record_dispatched(state, probe.calls, func)
    return result


def _run_binding(func: Callable, args: tuple, kwargs: dict, name: str | None) -> Any:
    """Call a binding; if its parser refuses traced sizes in an int list (torch.jit's tracer would take them),
    call it again with them as ints, bound by the first schema of `name` the call fits."""
    try:
        return func(*args, **kwargs)
    except TypeError:
        method = is_tensor_method(func)
        for operator in get_operators(Symbol(f"aten::{name}")) if name else ():
            values = bind_call(operator.schema, args, kwargs, not method, method)
            if values is not None:
                numbers, keywords = sizes_as_numbers(operator.schema, values, args, kwargs)
                return func(*numbers, **keywords)
        raise


def record_by_name(state: TracingState, name: str, func: Callable, args: tuple, kwargs: dict,
                   calls: list[DispatchedCall], result: Any) -> bool:
    """Record `aten::<name>` with the first overload the call binds to; False if none does."""
    probed = _probed_schema(name, calls)
    method = is_tensor_method(func)
    for schema in _candidate_schemas(name, probed):
        values = bind_call(schema, args, kwargs, not method, method)
        if values is not None and (schema is probed or not numbers_as_tensors(schema, values)):
            state.record_call(schema, values, result)
            return True
    return False


def _probed_schema(name: str, calls: list[DispatchedCall]) -> FunctionSchema | None:
    """The schema of the one operator the call dispatched, if it has the call's name."""
    if len(calls) != 1 or calls[0].operator._schema.name != f"aten::{name}":
        return None
    operator = find_operator(_overload_name(calls[0].operator))
    return operator.schema if operator is not None else None


def _candidate_schemas(name: str, probed: FunctionSchema | None) -> list[FunctionSchema]:
    others = [op.schema for op in get_operators(Symbol(f"aten::{name}")) if op.schema is not probed]
    return [probed, *others] if probed is not None else others


def record_dispatched(state: TracingState, calls: list[DispatchedCall], func: Callable) -> None:
    """Record the operators a call dispatched, one node each (the fallback for calls without a rule)."""
    for call in calls:
        if str(call.operator._schema.name) in _TRANSPARENT_OPERATORS:
            state.set_value(call.result, state.value_of(call.args[0]))
            continue
        operator = find_operator(_overload_name(call.operator))
        if operator is None:
            raise TsjitError(f"tracing cannot record {_overload_name(call.operator)}, called by {_describe(func)}")
        state.record_call(operator.schema, _dispatched_values(operator.schema, call), call.result)


def record_operator_call(state: TracingState, func: Callable, args: tuple, kwargs: dict) -> Any:
    """Run and record a `torch.ops` call: an OpOverload is recorded as itself, a packet as the overload its
    call resolves to (`torch.ops.prims.sum(x, [0])` is prims::sum, not the aten ops it runs)."""
    result = func(*args, **kwargs)
    if isinstance(func, torch._ops.OpOverloadPacket):
        overload = torch._C._jit_resolve_packet(func._qualified_op_name, *args, **kwargs)
        func = getattr(func, overload or "default")
    operator = find_operator(_overload_name(func))
    if operator is None:
        raise TsjitError(f"tracing cannot record {_overload_name(func)}: tsjit knows no such operator")
    state.record_call(operator.schema, _dispatched_values(operator.schema, DispatchedCall(func, args, kwargs, result)),
                      result)
    return result


def _dispatched_values(schema: FunctionSchema, call: DispatchedCall) -> list[Any]:
    values = list(call.args) + [MISSING] * (len(schema.arguments) - len(call.args))
    for name, value in call.kwargs.items():
        values[schema.argument_index(name)] = value
    return values


def _overload_name(operator: torch._ops.OpOverload) -> str:
    overload = operator._overloadname
    return str(operator._schema.name) + ("" if overload == "default" else f".{overload}")


# operators a binding calls that only make a Python value into a tensor: not part of the program
_TRANSPARENT_OPERATORS = frozenset({"aten::lift_fresh", "aten::lift_fresh_copy", "aten::lift"})


def operator_name(func: Callable) -> str | None:
    """The aten operator a binding calls: its name, with the few dunder methods that call another spelled out."""
    name = getattr(func, "__name__", None)
    if name is None or "." in name:
        return None
    if get_operators(Symbol(f"aten::{name}")):
        return name
    return _DUNDER_OPERATORS.get(name)


_DUNDER_OPERATORS = {
    "__eq__": "eq", "__ne__": "ne", "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge",
    "__invert__": "bitwise_not", "__matmul__": "matmul", "__neg__": "neg", "__abs__": "abs", "__pos__": "positive",
}


def is_tensor_method(func: Callable) -> bool:
    """Whether `func` is a method of Tensor's C class (its bindings fill in options differently)."""
    return isinstance(func, types.MethodDescriptorType | types.WrapperDescriptorType | types.MethodWrapperType)


def _describe(func: Callable) -> str:
    return getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)


# ---- types and values ----------------------------------------------------------------------------------------
_NUM_TO_TENSOR_TYPE = T.TensorType(dtype=torch.long, device=torch.device("cpu"), sizes=())
_NUMBER_CONVERSIONS = {
    T.IntType: (aten.Int, T.IntType.get()), T.FloatType: (aten.Float, T.FloatType.get()),
    T.BoolType: (aten.Bool, T.BoolType.get()), T.NumberType: (aten.ScalarImplicit, T.NumberType.get()),
}
_CARRIED = {T.SymIntType: T.IntType, T.ScalarTypeType: T.IntType, T.LayoutType: T.IntType,
            T.MemoryFormatType: T.IntType, T.SymFloatType: T.FloatType, T.SymBoolType: T.BoolType}


def _carried(type_: T.Type) -> T.Type:
    """The type graph values have for a schema type: SymInt, ScalarType, Layout, MemoryFormat are ints."""
    leaf = _CARRIED.get(type(type_))
    if leaf is not None:
        return leaf.get()
    contained = type_.contained_types()
    return type_.with_contained([_carried(t) for t in contained]) if contained else type_


def type_of_result(value: Any) -> T.Type:
    """The graph type of a traced Python value: tensors refined to what they are, containers of those."""
    if isinstance(value, torch.Tensor):
        return T.TensorType.create_from_tensor(value)
    if isinstance(value, tuple):
        return T.TupleType(tuple(type_of_result(v) for v in value))
    if isinstance(value, list) and value and all(isinstance(v, torch.Tensor) for v in value):
        return T.ListType(T.TensorType.get())
    return T.type_of(value)


def _contains_tensor(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return True
    if isinstance(value, list | tuple):
        return any(_contains_tensor(v) for v in value)
    return False


def _is_tensor_list(type_: T.Type) -> bool:
    return isinstance(type_, T.ListType) and isinstance(type_.elem, T.TensorType)


def _has_type_variables(type_: T.Type) -> bool:
    return isinstance(type_, T.VarType) or any(_has_type_variables(t) for t in type_.contained_types())


# ---- where the traced code is: locations, names, warnings -----------------------------------------------------
_HERE = os.path.dirname(os.path.abspath(__file__))
_PACKAGE = os.path.dirname(_HERE)
# frames that are never the traced code: tsjit's own (the tracer, and the api's calls that record themselves)
# and torch's that hand calls over (a module's `__call__` included)
_TRACER_FILES = frozenset([os.path.abspath(m.__file__) for m in (torch.overrides, torch.nn.modules.module,
                                                                  sys.modules["torch.utils._python_dispatch"])]
                          + [contextlib.__file__])
ENTRY_FILE = os.path.join(_PACKAGE, "api", "trace.py")


def _user_frames() -> Iterator[types.FrameType]:
    """The frames of the traced code, innermost first (tsjit's and the tracer's own frames skipped), up to
    `trace()`."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename != ENTRY_FILE:
        filename = frame.f_code.co_filename
        if filename not in _TRACER_FILES and not filename.startswith(_PACKAGE + os.sep):
            yield frame
        frame = frame.f_back


def _caller_of_tsjit() -> types.FrameType:
    frame = sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE + os.sep):  # not tsjit_*/
        frame = frame.f_back
    return frame


def _caller_location() -> SourceLocation | None:
    frame = next(_user_frames(), None)
    return SourceLocation(frame.f_code.co_filename, frame.f_lineno) if frame is not None else None


def calling_code() -> types.CodeType | None:
    """The code object of the traced code's innermost frame (which Python function made the call)."""
    frame = next(_user_frames(), None)
    return frame.f_code if frame is not None else None


def _name_from_locals(value: Value, tensor: torch.Tensor) -> None:
    """Name a Value after the Python variable holding its tensor, as torch.jit does when the tensor is used."""
    if value.has_debug_name() or value.node.kind is prim.Constant:
        return
    for frame in _user_frames():
        name = next((n for n, v in frame.f_locals.items() if v is tensor and n != "self"), None)
        if name is not None and name.isidentifier():
            value.set_debug_name(name)
            return


def warn_tracer(message: str) -> None:
    """Warn with a TracerWarning pointing at the traced code's line (or, outside it, at the caller of trace)."""
    frame = next(_user_frames(), None) or _caller_of_tsjit()
    registry = frame.f_globals.setdefault("__warningregistry__", {})
    warnings.warn_explicit(message, TracerWarning, frame.f_code.co_filename, frame.f_lineno,
                           frame.f_globals.get("__name__"), registry)
