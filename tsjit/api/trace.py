"""`tsjit.trace` and `tsjit.trace_module`: TorchScript programs recorded by running Python on example inputs.

    def f(x, y):
        return torch.relu(x @ y) + x.size(0)

    traced = tsjit.trace(f, (torch.randn(3, 3), torch.randn(3, 3)))
    traced.graph        # what ran, as a graph (inputs typed as the examples: Float(3, 3, strides=[3, 1], ...))
    traced(a, b)        # runs on tsjit's graph executor, also for other values and sizes

    net = tsjit.trace(module, torch.randn(1, 3, 32, 32))                  # a ScriptModule
    both = tsjit.trace_module(module, {"forward": x, "encode": tokens})   # several methods into one module

Inputs are tensors and (nested) tuples, lists and dicts of tensors: the graph takes them as such and unpacks
them (prim::TupleUnpack, prim::ListUnpack, aten::__getitem__). Outputs are rebuilt the same way; a list output
warns and a dict output needs `strict=False`, since the trace fixes how many elements they have. With
`check_trace` the program is traced again on `check_inputs` (default: the examples): the graphs must be equal
(else TracingCheckError) and the trace must compute what Python computes (else a TracerWarning), as in torch.jit.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import re
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import torch

from tsjit.api.function import SCRIPTING_ENABLED, ScriptFunction
from tsjit.api.module import RecursiveScriptModule, ScriptModule
from tsjit.errors import TsjitError
from tsjit.frontend.resolver import _qualified_name
from tsjit.frontend.torch_jit_objects import converted_module, is_torch_jit_module
from tsjit.frontend.trace_calls import tracing
from tsjit.frontend.trace_module import ModuleCalls, ModuleFrame, TracedModuleType, traced_module_types
from tsjit.frontend.traced_function import TracedFunction
from tsjit.frontend.tracer import TraceFrame, TracerWarning, TracingState, warn_tracer
from tsjit.ir import types as T
from tsjit.ir.graph import Graph, Value
from tsjit.ir.objects import Object
from tsjit.ir.printer import print_node
from tsjit.ir.symbols import aten, prim
from tsjit.ops.nondeterminism import is_nondeterministic
from tsjit.passes.dead_code_elimination import eliminate_dead_code
from tsjit.passes.inliner import inline_calls

__all__ = ["TracedFunction", "TracerWarning", "TracingCheckError", "trace", "trace_module"]

CONTAINER_OUTPUT = ("Encountering a {} at the output of the tracer might cause the trace to be incorrect, this is "
                    "only valid if the container structure does not change based on the module's inputs. Consider "
                    "using a constant container instead (e.g. for `list`, use a `tuple` instead. for `dict`, use a "
                    "`NamedTuple` instead). If you absolutely need this and know the side effects, pass "
                    "strict=False to trace() to allow this behavior.")


class TracingCheckError(TsjitError):
    """`check_trace` found that tracing again gives another graph, or that running the trace failed."""

    def __init__(self, graph_diff_error: str | None, tensor_compare_error: str | None, extra_msg: str | None = None):
        message = "Tracing failed sanity checks!\n"
        if extra_msg is not None:
            message += extra_msg + "\n"
        if graph_diff_error is not None:
            message += "ERROR: Graphs differed across invocations!\n" + _indent(graph_diff_error) + "\n"
        if tensor_compare_error is not None:
            message += ("ERROR: Tensor-valued Constant nodes differed in value across invocations. This often "
                        "indicates that the tracer has encountered untraceable code.\n")
            message += _indent(tensor_compare_error) + "\n"
        super().__init__(message)


# ==============================================================================================================
# trace
# ==============================================================================================================
def trace(func: Callable, example_inputs: Any = None, check_trace: bool = True, strict: bool = True,
          check_inputs: list | None = None, check_tolerance: float = 1e-5,
          example_kwarg_inputs: dict[str, Any] | None = None) -> ScriptFunction | ScriptModule:
    """Record what `func` does to the example inputs; an nn.Module (or its bound `forward`) gives a
    ScriptModule (trace_module with `forward`), anything else a ScriptFunction.

    `example_kwarg_inputs` (instead of `example_inputs`) passes the examples by parameter name; the traced
    program takes them in the order of `func`'s parameters, positionally or by name.
    """
    if not SCRIPTING_ENABLED:  # TSJIT=0 / PYTORCH_JIT=0: the Python object itself
        return func
    if isinstance(func, ScriptModule | ScriptFunction):
        warnings.warn("The input to trace is already a ScriptModule, tracing it is a no-op. Returning the object "
                      "as is.", stacklevel=2)
        return func
    if example_kwarg_inputs is not None and not isinstance(example_kwarg_inputs, dict):
        raise TypeError(f"example_kwarg_inputs should be a dict, not {type(example_kwarg_inputs).__name__}")
    is_kwarg = example_kwarg_inputs is not None
    examples = example_kwarg_inputs if is_kwarg else example_inputs
    if isinstance(func, torch.nn.Module):
        return trace_module(func, {"forward": examples}, check_trace, check_inputs and [
            {"forward": inputs} for inputs in check_inputs], check_tolerance, strict, is_kwarg)
    if inspect.ismethod(func) and isinstance(func.__self__, torch.nn.Module) and func.__name__ == "forward":
        return trace(func.__self__, example_inputs, check_trace, strict, check_inputs, check_tolerance,
                     example_kwarg_inputs)
    call = _Call.of(func, examples, is_kwarg)
    traced = trace_function(func, call, strict)
    if check_trace:
        retrace = functools.partial(_retraced_function, func, strict)
        for check in [_Call.of(func, c, is_kwarg) for c in check_inputs] if check_inputs else [call]:
            check_traced(check.bind(func), _with_graph(traced), retrace, check, check_tolerance)
    return traced


class _Call(NamedTuple):
    """How the traced Python is called on one set of examples: positionally, or by these parameter names."""

    inputs: tuple
    names: list[str | None]
    by_name: bool

    @staticmethod
    def of(func: Callable, examples: Any, by_name: bool) -> _Call:
        if not by_name:
            inputs = _as_tuple(examples)
            return _Call(inputs, _parameter_names(func, len(inputs)), False)
        if not isinstance(examples, dict):
            raise TypeError(f"example inputs passed by name must be a dict, not {type(examples).__name__}")
        order = _parameter_names(func, None)
        unknown = [name for name in examples if name not in order]
        if unknown:
            raise TypeError(f"{getattr(func, '__name__', func)}() got an unexpected keyword argument '{unknown[0]}'")
        names = [name for name in order if name in examples]
        return _Call(tuple(examples[name] for name in names), names, True)

    def bind(self, func: Callable) -> Callable:
        """`func` taking this call's inputs positionally."""
        if not self.by_name:
            return func
        names = self.names
        return lambda *inputs: func(**dict(zip(names, inputs)))

    def with_inputs(self, inputs: tuple) -> _Call:
        return self._replace(inputs=inputs)


def trace_function(func: Callable, call: _Call, strict: bool = True) -> ScriptFunction:
    """One trace of a function, without checks."""
    state = TracingState(TraceFrame(Graph()), strict)
    add_inputs(state, call.names, call.inputs)
    with tracing(state):
        result = call.bind(func)(*call.inputs)
    set_output(state, result)
    _clean_up(state.graph)
    python_function = func if inspect.isfunction(func) else None
    return ScriptFunction(TracedFunction(_function_name(func), state.graph), python_function)


def _function_name(func: Callable) -> str:
    name = _qualified_name(func) if hasattr(func, "__qualname__") else f"__torch__.{type(func).__name__}"
    return name.replace("<lambda>", "_lambda").replace("<", "_").replace(">", "_")


# ==============================================================================================================
# trace_module
# ==============================================================================================================
def trace_module(mod: torch.nn.Module, inputs: dict[str, Any], check_trace: bool = True,
                 check_inputs: list[dict[str, Any]] | None = None, check_tolerance: float = 1e-5,
                 strict: bool = True, example_inputs_is_kwarg: bool = False) -> ScriptModule:
    """Trace the methods `inputs` names (method name -> example inputs) into one ScriptModule; with
    `example_inputs_is_kwarg` each method's examples are a dict passing them by parameter name."""
    if not SCRIPTING_ENABLED:  # TSJIT=0 / PYTORCH_JIT=0: the Python module itself
        return mod
    if not isinstance(mod, torch.nn.Module):
        raise TsjitError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise TsjitError("expected a dictionary of (method_name, input) pairs")
    calls = {name: _Call.of(getattr(mod, name), example, example_inputs_is_kwarg) for name, example in inputs.items()}
    traced = trace_module_methods(mod, calls, strict)
    if check_trace:
        for check in check_inputs or [inputs]:
            for name, example in check.items():
                retrace = functools.partial(_retraced_method, mod, name, strict)
                python = mod if name == "forward" else getattr(mod, name)  # forward with its hooks, as traced
                call = _Call.of(getattr(mod, name), example, example_inputs_is_kwarg)
                check_traced(call.bind(python), _method_with_graph(traced, name), retrace, call, check_tolerance)
    return traced


def trace_module_methods(mod: torch.nn.Module, calls: dict[str, _Call], strict: bool = True) -> ScriptModule:
    """One trace of each named method, without checks, into a new module mirroring `mod`'s hierarchy."""
    types = traced_module_types(mod)
    root = types[mod]
    for name, call in calls.items():
        root.class_type.methods[name] = _trace_method(mod, root, types, name, call, strict)
    return _script_module(mod, types, {}, TopLevelTracedModule)


class TracedModule(RecursiveScriptModule):
    """A module of what tracing a module made (torch.jit.TracedModule): its methods are traces."""


class TopLevelTracedModule(TracedModule):
    """The module `trace` and `trace_module` return (torch.jit.TopLevelTracedModule); its submodules are
    TracedModules, or the scripted modules they were."""


def _trace_method(mod: torch.nn.Module, root: TracedModuleType, types: dict, name: str, call: _Call,
                  strict: bool) -> TracedFunction:
    state = TracingState(ModuleFrame(Graph(), mod, root.class_type), strict)
    add_inputs(state, call.names, call.inputs)
    calls = ModuleCalls(types)
    with calls.installed(state, mod), tracing(state):
        # `forward` through __call__: hooks run too
        result = call.bind(mod if name == "forward" else getattr(mod, name))(*call.inputs)
    set_output(state, result)
    calls.fixup()
    _clean_up(state.graph)
    return TracedFunction(f"{root.class_type.qualified_name}.{name}", state.graph)


def _script_module(module: torch.nn.Module, types: dict, built: dict,
                   module_class: type[TracedModule] = TracedModule) -> ScriptModule:
    """The ScriptModule of a traced module: the same parameter and buffer tensors, its submodules' modules."""
    if is_torch_jit_module(module):
        return converted_module(module)
    if isinstance(module, ScriptModule):
        return module
    if module not in built:
        info = types[module]
        submodules = {name: _script_module(child, types, built)
                      for name, child in module._modules.items() if child is not None}
        slots = {name: value for name, value in [*module._parameters.items(), *module._buffers.items()]
                 if value is not None}
        slots["training"] = module.training
        slots.update((name, submodule._c) for name, submodule in submodules.items())
        built[module] = module_class(Object(info.class_type, slots), info.concrete_type, submodules)
    return built[module]


# ==============================================================================================================
# inputs and outputs
# ==============================================================================================================
def add_inputs(state: TracingState, names: list[str | None], inputs: tuple) -> None:
    """A graph input per example input, typed as it (tensors refined); containers unpacked to their tensors."""
    input_types = [_input_type(value) for value in inputs]
    if None in input_types:
        described = T.TupleType(tuple(t or _python_type(v) for t, v in zip(input_types, inputs)))
        raise TsjitError(f"Type '{described.annotation_str()}' cannot be traced. Only Tensors and (possibly "
                         "nested) Lists, Dicts, and Tuples of Tensors can be traced")
    for name, value, input_type in zip(names, inputs, input_types):
        _bind_input(state, state.graph.add_input(name, input_type), value)


def _input_type(value: Any) -> T.Type | None:
    """The graph type of a traceable input (None if it is not one): lists and dicts hold plain Tensors."""
    if isinstance(value, torch.Tensor):
        return T.TensorType.create_from_tensor(value)
    if isinstance(value, tuple):
        elements = [_input_type(v) for v in value]
        return None if None in elements else T.TupleType(tuple(elements))
    if isinstance(value, list | dict):
        items = list(value.values() if isinstance(value, dict) else value)
        elements = {T.unshaped_type(t) if t is not None else None for t in map(_input_type, items)}
        if len(elements) != 1 or None in elements:
            return None
        element = elements.pop()
        return T.ListType(element) if isinstance(value, list) else _dict_type(value, element)
    return None


def _dict_type(value: dict, element: T.Type) -> T.Type | None:
    keys = {type(key) for key in value}
    if len(keys) != 1 or not keys <= {str, int}:
        return None
    return T.DictType(T.type_of(next(iter(value))), element)


def _python_type(value: Any) -> T.Type:
    try:
        return T.type_of(value)
    except TsjitError:
        return T.AnyType.get()


def _bind_input(state: TracingState, value: Value, python: Any) -> None:
    if isinstance(python, torch.Tensor):
        state.set_value(python, value)
    elif isinstance(python, tuple | list):
        node = state.create_node(prim.TupleUnpack if isinstance(python, tuple) else prim.ListUnpack, [value])
        for item in python:
            _bind_input(state, node.add_output(_input_type(item)), item)
    else:
        for key, item in python.items():
            _bind_input(state, state.insert(aten.__getitem__, [value, state.constant(key)], _input_type(item)), item)


def set_output(state: TracingState, result: Any) -> None:
    """The graph's output: the result rebuilt from the Values of its tensors."""
    if result is None:
        raise TsjitError("The traced function didn't return any values! Side-effects are not captured in traces, "
                         "so it would be a no-op.")
    state.graph.register_output(_output_value(state, result))


def _output_value(state: TracingState, value: Any) -> Value:
    if isinstance(value, torch.Tensor):
        if not state.is_traced(value):
            raise TsjitError(f"output 1 ({value}) of traced region did not have observable data dependence with "
                             "trace inputs; this probably indicates your program cannot be understood by the "
                             "tracer.")
        return state.value_of(value)
    if isinstance(value, tuple):
        elements = [_output_value(state, v) for v in value]
        return state.insert(prim.TupleConstruct, elements, T.TupleType(tuple(e.type for e in elements)))
    if isinstance(value, list):
        return _list_output(state, value)
    if isinstance(value, dict):
        return _dict_output(state, value)
    raise TsjitError("Only tensors, lists, tuples of tensors, or dictionary of tensors can be output from traced "
                     "functions")


def _list_output(state: TracingState, value: list) -> Value:
    if state.strict:
        warn_tracer(CONTAINER_OUTPUT.format("list"))
    elements = [_output_value(state, v) for v in value]
    element_type = T.unify_type_list([T.unshaped_type(e.type) for e in elements]) if elements else None
    return state.insert(prim.ListConstruct, elements, T.ListType(element_type or T.TensorType.get()))


def _dict_output(state: TracingState, value: dict) -> Value:
    if state.strict:
        raise TsjitError(CONTAINER_OUTPUT.format("dict"))
    inputs: list[Value] = []
    for key, item in value.items():
        inputs += [state.constant(key), _output_value(state, item)]
    value_type = T.unify_type_list([T.unshaped_type(v.type) for v in inputs[1::2]]) or T.TensorType.get()
    key_type = inputs[0].type if inputs else T.StringType.get()
    return state.insert(prim.DictConstruct, inputs, T.DictType(key_type, value_type))


def _clean_up(graph: Graph) -> None:
    eliminate_dead_code(graph)
    graph.lint()


def _as_tuple(example_inputs: Any) -> tuple:
    """The example inputs as positional arguments: one tensor or dict is one argument (torch.jit's rule)."""
    if isinstance(example_inputs, torch.Tensor | dict):
        return (example_inputs,)
    if example_inputs is None:
        return ()
    return example_inputs if isinstance(example_inputs, tuple) else tuple(example_inputs)


def _parameter_names(func: Callable, count: int | None) -> list[str | None]:
    """The names of the first `count` positional parameters (None past a `*args`); all of them for None."""
    try:
        parameters = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return [None] * (count or 0)
    names: list[str | None] = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return names if count is None else (names + [None] * count)[:count]


# ==============================================================================================================
# check_trace
# ==============================================================================================================
def _retraced_function(func: Callable, strict: bool, call: _Call) -> tuple[Callable, Graph]:
    return _with_graph(trace_function(func, call, strict))


def _retraced_method(mod: torch.nn.Module, name: str, strict: bool, call: _Call) -> tuple[Callable, Graph]:
    return _method_with_graph(trace_module_methods(mod, {name: call}, strict), name)


def _with_graph(function: ScriptFunction) -> tuple[Callable, Graph]:
    return function, function.graph


def _method_with_graph(module: ScriptModule, name: str) -> tuple[Callable, Graph]:
    return getattr(module, name), module._c.type.methods[name].graph


def check_traced(python: Callable, traced: tuple[Callable, Graph], retrace: Callable, call: _Call,
                 tolerance: float) -> None:
    """torch.jit's _check_trace for one set of inputs: trace again and compare graphs and tensor constants;
    run the trace and Python (taking the inputs positionally) and compare the tensors they return. `traced` and
    what `retrace(call)` gives are (callable, graph) pairs."""
    inputs = call.inputs
    (traced, traced_graph), (check, check_graph) = traced, retrace(call.with_inputs(_clone(inputs)))
    traced_outputs = _tensor_outputs(traced, inputs, "trace", traced_graph, check_graph)
    python_outputs = _tensor_outputs(python, inputs, "Python function", traced_graph, check_graph)
    if _outputs_match(traced_outputs, python_outputs, "Python function", tolerance, traced_graph):
        check_outputs = _tensor_outputs(check, inputs, "repeated trace", traced_graph, check_graph)
        _outputs_match(traced_outputs, check_outputs, "repeated trace", tolerance, traced_graph)
    differences = graph_differences(traced_graph, check_graph)
    if any(d is not None for d in differences):
        raise TracingCheckError(*differences)


def _tensor_outputs(function: Callable, inputs: tuple, what: str, traced_graph: Graph, check_graph: Graph) -> list:
    try:
        outputs = function(*_clone(inputs))
    except Exception as error:
        message = f"encountered an exception while running the {what} with test inputs.\nException:\n"
        raise TracingCheckError(*graph_differences(traced_graph, check_graph),
                                extra_msg=message + _indent(str(error))) from error
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    return [output for output in outputs if isinstance(output, torch.Tensor)]


def _outputs_match(outputs: list, references: list, what: str, tolerance: float, graph: Graph) -> bool:
    matched = True
    for index, (output, reference) in enumerate(zip(outputs, references)):
        try:
            torch.testing.assert_close(output.double(), reference.double(), rtol=tolerance,
                                       atol=_ABSOLUTE_TOLERANCE.get(output.dtype, 0.0), equal_nan=True)
        except AssertionError as error:
            if matched:
                _warn_nondeterministic(graph)
            warn_tracer(f"Output nr {index + 1}. of the traced function does not match the corresponding output of "
                        f"the {what}. Detailed error:\n{error}")
            matched = False
    return matched


_ABSOLUTE_TOLERANCE = {torch.float16: 1e-5, torch.bfloat16: 1e-5, torch.float32: 1e-5, torch.float64: 1e-7}


def _warn_nondeterministic(graph: Graph) -> None:
    nodes = [node for node in graph.all_nodes() if is_nondeterministic(node)]
    if nodes:
        listing = "\n".join(_indent(print_node(node).rstrip("\n")) for node in nodes[:20])
        warn_tracer("Trace had nondeterministic nodes. Did you forget call .eval() on your model? Nodes:\n"
                    f"{listing}\nThis may cause errors in trace checking. To disable trace checking, pass "
                    "check_trace=False to torch.jit.trace()")


def graph_differences(traced: Graph, check: Graph) -> tuple[str | None, str | None]:
    """(how the graphs differ, how their tensor constants differ), each None if they do not."""
    traced, check = _canonical(traced), _canonical(check)
    traced_text, check_text = _canonical_text(traced), _canonical_text(check)
    graph_error = None
    if traced_text != check_text:
        diff = difflib.ndiff(traced_text.splitlines(True), check_text.splitlines(True))
        graph_error = "Graph diff:\n" + _indent("".join(diff)) + "\n" + _first_diverging_node(traced, check)
    return graph_error, _constant_differences(traced, check)


def _canonical(graph: Graph) -> Graph:
    """A copy with calls inlined and tensor types unrefined, as torch.jit compares traces."""
    graph = graph.copy()
    inline_calls(graph)
    _unshape(graph)
    return graph


def _unshape(graph: Graph) -> None:
    """Tensor types unrefined in `graph` and in the graphs its nodes fork."""
    for value in [*graph.inputs, *(out for node in graph.all_nodes() for out in node.outputs)]:
        value.set_type(T.unshaped_type(value.type))
    for node in graph.all_nodes():
        if node.kind is prim.fork:
            _unshape(node.g("Subgraph"))


def _canonical_text(graph: Graph) -> str:
    """The graph text with values numbered in order of appearance and mangled class names unmangled."""
    names: dict[str, str] = {}
    text = re.sub(r"___torch_mangle_[0-9]+\.", "", graph.str(print_source_locations=False))
    return re.sub(r"%([\w.]+)", lambda m: "%" + names.setdefault(m.group(1), str(len(names))), text)


def _first_diverging_node(traced: Graph, check: Graph) -> str:
    for node, other in zip(traced.all_nodes(), check.all_nodes()):
        if _canonical_text_of(node) != _canonical_text_of(other):
            diff = difflib.ndiff([print_node(node)], [print_node(other)])
            return "First diverging operator:\nNode diff:\n" + _indent("".join(diff)) + "\n"
    return ""


def _canonical_text_of(node) -> str:
    return re.sub(r"%[\w.]+", "%", print_node(node))


def _constant_differences(traced: Graph, check: Graph) -> str | None:
    for node, other in zip(traced.all_nodes(), check.all_nodes()):
        if node.kind != other.kind:
            return None
        if node.kind is not prim.Constant or _kind(node) != "t" or _kind(other) != "t":
            continue
        try:
            torch.testing.assert_close(node.t("value"), other.t("value"), equal_nan=True)
        except (AssertionError, RuntimeError, TypeError) as error:
            return f"Node:\n{_indent(print_node(node))}\nComparison exception: {_indent(str(error))}"
    return None


def _kind(node) -> str | None:
    return node.kind_of("value") if node.has_attribute("value") else None


def _clone(value: Any) -> Any:
    """A deep copy of inputs: tensors cloned (keeping requires_grad), containers rebuilt."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone(memory_format=torch.preserve_format).requires_grad_(value.requires_grad)
    if isinstance(value, tuple | list):
        return type(value)(_clone(v) for v in value)
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    return value


def _indent(text: str) -> str:
    return "\n".join("\t" + line for line in text.splitlines())
