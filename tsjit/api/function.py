"""Scripting functions: `tsjit.script(fn)`, ScriptFunction, `tsjit.CompilationUnit(source)`, and the decorators
that steer compilation (`ignore`, `unused`, `export`, `script_if_tracing`) plus `annotate` (named like
torch.jit's).

    @tsjit.script
    def f(x, n: int):
        for _ in range(n):
            x = x * 2
        return x

    f.graph           # the function's graph, as torch.jit.script(f).graph prints
    f.schema          # f(Tensor x, int n) -> Tensor
    f(torch.ones(2), 3)

    cu = tsjit.CompilationUnit('''
    def double(x):
        return x * 2
    def quad(x):
        return double(double(x))
    ''')
    cu.quad(torch.ones(2))

Calling a ScriptFunction binds its arguments against the schema (keywords, defaults, type checks) and runs the
function's optimized graph (calls inlined) on tsjit's graph executor.
"""

from __future__ import annotations

import enum
import functools
import importlib
import inspect
import os
import threading
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import torch
from torch.compiler import is_dynamo_compiling

from tsjit import garbage_collection
from tsjit.errors import TsjitError
from tsjit.frontend.enum_values import to_enum_value
from tsjit.frontend.example_types import example_types_in_use, record_example_types, unified
from tsjit.frontend.ir_emitter import GraphFunction, compile_source
from tsjit.frontend.library_definitions import library_definition
from tsjit.frontend.resolver import (
    EXPORT,
    IGNORE,
    UNUSED,
    SourceTextResolver,
    compiled_function_for,
    compiled_function_with_types,
)
from tsjit.frontend.torch_tracing_flags import get_tracing_state, no_trace_running, torch_jit_is_tracing
from tsjit.ir import types as T
from tsjit.ir.graph import Graph
from tsjit.ir.objects import Object
from tsjit.ir.schema import FunctionSchema
from tsjit.passes.inliner import inline_calls
from tsjit.runtime.function import runtime_function


def _call_back_weakly(function: ScriptFunction):
    """`function._call(args, {})`, holding the ScriptFunction weakly. The plan entry that calls it lives on the
    compiled function's executor, which a cache keeps as long as the Python function, which the ScriptFunction
    holds: a strong reference would keep all of them for the life of the process."""
    this = weakref.ref(function)
    return lambda args: this()._call(args, {})


class ScriptFunction:
    """A compiled TorchScript function: its graph and schema, callable like the Python function."""

    is_script_function = True  # how the resolver recognizes an already compiled function

    def __init__(self, graph_function: GraphFunction, python_function=None):
        self.graph_function = graph_function
        self.python_function = python_function
        self._binder: ArgumentBinder | None = None  # made on the first call (compiling the schema)
        self._entry = None  # see _call
        self._miss = _call_back_weakly(self)  # the entry's way back to _call for other call keys
        if python_function is not None:
            self.__doc__ = python_function.__doc__
            self.__wrapped__ = python_function

    @property
    def name(self) -> str:
        return self.graph_function.name

    @property
    def qualified_name(self) -> str:
        return self.graph_function.qualname

    @property
    def graph(self) -> Graph:
        return self.graph_function.graph

    @property
    def inlined_graph(self) -> Graph:
        """The graph with the functions it calls inlined (what `torch._C._jit_pass_inline` shows)."""
        graph = self.graph.copy()
        inline_calls(graph)
        return graph

    @property
    def schema(self) -> FunctionSchema:
        return self.graph_function.schema

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if is_dynamo_compiling() and self.python_function is not None:
            # torch.compile traces this call (as True only while it does): its tracer cannot see through the
            # generated plans and C kernels, so it traces the function's Python source, as eager runs it
            return self.python_function(*args, **kwargs)
        entry = self._entry
        if entry is not None and not kwargs and no_trace_running():
            return entry(args)
        return self._call(args, kwargs)

    def _call(self, args: tuple | list, kwargs: dict) -> Any:
        """A call through the binder. For calls the binder would take as they are (ArgumentBinder.entry_defaults:
        tensors for leading Tensor parameters, defaults for the rest, a result of tensors), it installs `_entry`:
        the plan's entry (GraphExecutor.entry), which runs the plan for calls with the same call key and comes
        back here for others."""
        binder = self._binder or self._make_binder()
        inputs = binder.bind(args, kwargs)
        state = get_tracing_state()
        if state is None and torch_jit_is_tracing():
            from tsjit.runtime.torch_jit_tracer import run_for_torch_jit_tracer  # deferred: to torch.jit's first trace

            return binder.result(run_for_torch_jit_tracer(self._runtime_function(), inputs))
        if state is None:
            function = self._runtime_function()
            defaults = binder.entry_defaults(args, kwargs)
            if defaults is not None:
                self._entry = function.executor.entry(inputs, self._miss, defaults=defaults)
            return binder.result(function(*inputs))
        # inside a trace, a scripted callee stays a call and keeps its control flow (seed: "Tracer")
        run = lambda: binder.result(self._runtime_function()(*inputs))
        return state.record_function_call(self.graph_function, inputs, run)

    def _make_binder(self) -> ArgumentBinder:
        self._binder = ArgumentBinder(self.schema)
        return self._binder

    @property
    def code(self) -> str:
        """The function's TorchScript source, as torch.jit's `.code` prints it (the Python printer)."""
        from tsjit.serialization import function_code  # deferred: the printer, to the first `.code`

        return function_code(self)

    def graph_for(self, *args: Any, **kwargs: Any) -> Graph:
        """The graph the executor runs for these arguments: specialized to their ArgumentSpec, and for the
        profiling executor optimized with what running on them showed (torch.jit's `graph_for`)."""
        inputs = bind_arguments(self.schema, args, kwargs)
        return self._runtime_function().executor.graph_for(inputs)

    def _runtime_function(self):
        return runtime_function(self.graph_function)

    def save(self, f: str | os.PathLike | Any, _extra_files: dict[str, Any] | None = None) -> None:
        """Save as a TorchScript archive: a module whose `forward` is this function (as torch.jit saves one)."""
        from tsjit.serialization import serializer  # deferred: the archive writer loads on first save

        serializer.save(self, f, _extra_files)

    def save_to_buffer(self, _extra_files: dict[str, Any] | None = None) -> bytes:
        """The bytes of the archive `save` writes."""
        from tsjit.serialization import serializer  # deferred: the archive writer loads on first save

        return serializer.serialize(self, extra_files=_extra_files)

    def __repr__(self) -> str:
        return f"<tsjit ScriptFunction {self.qualified_name}>"


# ---- calling: arguments against the schema ----------------------------------------------------------------------
# Python classes whose values the argument check decides by class alone (no conversion looks inside them), for
# parameter types that hold no script class, interface or enum; tensors (of any subclass) too.
_PLAIN_CLASSES = frozenset({int, float, bool, complex, str, type(None), torch.device})


class ArgumentBinder:
    """bind_arguments for one schema, with a fast path for calls that pass every value positionally.

    The slow path's verdict on such a call depends only on the classes of the values when every class is plain
    (see `_PLAIN_CLASSES`) and no parameter type holds a class, interface or enum: then each value is either
    taken as it is or (an int for a float) converted, and the defaults of the missing trailing arguments are
    taken as they are. So the first call with a tuple of classes runs the slow path and remembers which
    positions it converted; later calls with the same classes skip straight to that. Calls the slow path
    refuses are never remembered, so they raise its errors every time.

    `result` gives a graph's result to Python as the slow path's from_script_value does, skipping the walk
    when the return type holds no script class and the result is no Object.
    """

    def __init__(self, schema: FunctionSchema):
        self.schema = schema
        self._fast = not any(_holds_named_type(a.type) for a in schema.arguments)
        self._known: dict[tuple[type, ...], tuple[tuple, tuple[int, ...]]] = {}  # classes -> (defaults, to float)
        self._return_type = schema.returns[0].type
        self._plain_result = not _holds_named_type(self._return_type)
        # calls of tensors only need no binding: each tensor is taken as it is, and so is a result of tensors;
        # how many leading arguments are Tensors (a call passing only those needs no binding either)
        self._tensor_result = _tensors_only(self._return_type)
        self._leading_tensors = next((k for k, a in enumerate(schema.arguments)
                                      if type(a.type) is not T.TensorType or a.kwarg_only), len(schema.arguments))

    def bind(self, args: tuple, kwargs: dict) -> list[Any]:
        """The graph's inputs for a call (what bind_arguments returns; its errors, too)."""
        if kwargs or not self._fast:
            return bind_arguments(self.schema, args, kwargs)
        known = self._known.get(tuple(map(type, args)))
        if known is None:
            return self._learn(args)
        defaults, to_float = known
        inputs = [*args, *defaults]
        for position in to_float:
            inputs[position] = float(inputs[position])
        return inputs

    def _learn(self, args: tuple) -> list[Any]:
        """The slow path; its verdict is remembered for these classes when only the classes decided it."""
        unchecked = collect_inputs(self.schema, args, {})
        inputs = check_arguments(self.schema, unchecked)
        if all(_is_plain(type(value)) for value in unchecked):
            to_float = []
            for position, (given, taken) in enumerate(zip(unchecked, inputs)):
                if type(given) is int and type(taken) is float:
                    to_float.append(position)
                elif taken is not given:
                    return inputs
            self._known[tuple(map(type, args))] = (tuple(unchecked[len(args):]), tuple(to_float))
        return inputs

    def entry_defaults(self, args: tuple, kwargs: dict) -> int | None:
        """How many default values a plan entry (GraphExecutor.entry) appends to calls like this one, or None when
        such calls need binding. They need none when only positional arguments are given, each for a Tensor
        parameter (the entry tests that each is a tensor, which the parameter takes as it is), every other
        parameter takes its default (the same bound value on every call), and the result is tensors."""
        if kwargs or not self._tensor_result or len(args) > self._leading_tensors:
            return None
        return len(self.schema.arguments) - len(args)

    def result(self, value: Any) -> Any:
        """A graph's result as Python sees it (from_script_value)."""
        if self._plain_result and not isinstance(value, Object):
            return value
        return _from_script_value(value, self._return_type)


def _tensors_only(type_: T.Type) -> bool:
    """Whether `type_` is Tensor or a tuple of Tensors."""
    if isinstance(type_, T.TupleType):
        return all(type(t) is T.TensorType for t in type_.elements)
    return type(type_) is T.TensorType


def _is_plain(cls: type) -> bool:
    return cls in _PLAIN_CLASSES or issubclass(cls, torch.Tensor)


def _holds_named_type(type_: T.Type) -> bool:
    """Whether a class, interface or enum type occurs in `type_` (values crossing into it may be converted)."""
    if isinstance(type_, T.ClassType | T.InterfaceType | T.EnumType):
        return True
    return any(_holds_named_type(t) for t in type_.contained_types())


def _to_script_value(value: Any, expected: T.Type) -> Any:
    """script_class.to_script_value: only types that hold a named type can take script objects, so the class
    frontend is imported (its first use) only for those."""
    if not _holds_named_type(expected):
        return value
    from tsjit.frontend.script_class import to_script_value  # deferred: the class frontend, to the first class value

    return to_script_value(value, expected)


def _from_script_value(value: Any, type_: T.Type) -> Any:
    """script_class.from_script_value, which only converts runtime Objects (see _to_script_value)."""
    if not isinstance(value, Object) and not _holds_named_type(type_):
        return value
    from tsjit.frontend.script_class import from_script_value  # deferred: the class frontend, to the first class value

    return from_script_value(value, type_)


def bind_arguments(schema: FunctionSchema, args: tuple, kwargs: dict) -> list[Any]:
    """The positional inputs of the graph for a Python call, in schema order, checked against the types."""
    return check_arguments(schema, collect_inputs(schema, args, kwargs))


def collect_inputs(schema: FunctionSchema, args: tuple, kwargs: dict) -> list[Any]:
    """A call's values in schema order, keywords and defaults filled in (not yet checked)."""
    arguments = schema.arguments
    if len(args) > len(arguments):
        raise TsjitError(f"{schema.name}() expected at most {len(arguments)} argument(s) but received "
                         f"{len(args)} argument(s). Declaration: {schema}")
    positional = _positional_count(schema)
    if len(args) > positional:
        # keyword-only parameters (`*, scale: float = 1.0`) are taken by name only, as in Python
        raise TsjitError(f"{schema.name}() takes {positional} positional argument(s) but {len(args)} was/were "
                         f"given.  Declaration: {schema}")
    inputs = list(args)
    remaining = dict(kwargs)
    for argument in arguments[len(args):]:
        if argument.name in remaining:
            inputs.append(remaining.pop(argument.name))
        elif argument.has_default:
            inputs.append(argument.default_value)
        else:
            raise TsjitError(f"{schema.name}() is missing value for argument '{argument.name}'. Declaration: "
                             f"{schema}")
    if remaining:
        name = next(iter(remaining))
        raise TsjitError(f"{schema.name}() got an unexpected keyword argument '{name}'. Declaration: {schema}")
    return inputs


def _positional_count(schema: FunctionSchema) -> int:
    """How many leading arguments a call may pass positionally: those before the first keyword-only one."""
    return next((k for k, a in enumerate(schema.arguments) if a.kwarg_only), len(schema.arguments))


def check_arguments(schema: FunctionSchema, inputs: list[Any]) -> list[Any]:
    """Each value as its argument's type takes it (see check_argument)."""
    return [check_argument(schema, i, argument, value)
            for i, (argument, value) in enumerate(zip(schema.arguments, inputs))]


def check_argument(schema: FunctionSchema, position: int, argument, value: Any) -> Any:
    """The value as the argument's type takes it (an int for a float becomes a float); a TsjitError otherwise."""
    expected = argument.type
    value = to_enum_value(_to_script_value(_broadcast(argument, value), expected), expected)
    if fits_type(value, expected):
        return _widened(value, expected)
    raise TsjitError(f"Expected a value of type '{expected.annotation_str()}' for argument '{argument.name}' but "
                     f"instead found type '{type(value).__name__}'.\nPosition: {position}\nValue: {value!r}\n"
                     f"Declaration: {schema}")


def _broadcast(argument, value: Any) -> Any:
    """One element for a fixed-size list argument (`k: BroadcastingList2[int]`, also Optional) stands for the list
    of N copies of it, as torch.jit takes `f(x, 3)` for `f(x, [3, 3])`."""
    list_type = argument.type.elem if isinstance(argument.type, T.OptionalType) else argument.type
    if not argument.N or not isinstance(list_type, T.ListType) or value is None or isinstance(value, list | tuple):
        return value
    return [value] * argument.N if fits_type(value, list_type.elem) else value


def _widened(value: Any, expected: T.Type) -> Any:
    """A value that fits `expected` with the ints where floats are expected made floats, inside lists, tuples,
    dicts and optionals too, as torch.jit's toIValue converts them; containers of no floats are passed as they
    are."""
    if isinstance(expected, T.FloatType):
        return float(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if value is None or not _holds_float(expected):
        return value
    if isinstance(expected, T.OptionalType):
        return _widened(value, expected.elem)
    if isinstance(expected, T.ListType):
        return [_widened(v, expected.elem) for v in value]
    if isinstance(expected, T.TupleType):
        return tuple(_widened(v, t) for v, t in zip(value, expected.elements))
    if isinstance(expected, T.DictType):
        return {_widened(k, expected.key): _widened(v, expected.value) for k, v in value.items()}
    return value


def _holds_float(type_: T.Type) -> bool:
    return isinstance(type_, T.FloatType) or any(_holds_float(t) for t in type_.contained_types())


def fits_type(value: Any, expected: T.Type) -> bool:
    if isinstance(expected, T.AnyType):
        return True
    if isinstance(expected, T.TensorType):
        return isinstance(value, torch.Tensor)
    if isinstance(expected, T.EnumType):  # type_of gives IntEnum members (ints) int
        return isinstance(value, enum.Enum | T.EnumValue) and T.enum_type_of_member(value) is expected
    if isinstance(expected, T.OptionalType):
        return value is None or fits_type(value, expected.elem)
    if isinstance(expected, T.ListType) and isinstance(value, list | tuple):
        return all(fits_type(v, expected.elem) for v in value)
    if isinstance(expected, T.TupleType) and isinstance(value, tuple):
        return len(value) == len(expected.elements) and all(fits_type(v, t) for v, t in zip(value, expected.elements))
    if isinstance(expected, T.DictType) and isinstance(value, dict):  # element by element: `{}` has no own type
        return all(fits_type(k, expected.key) and fits_type(v, expected.value) for k, v in value.items())
    if isinstance(expected, T.FloatType) and isinstance(value, int) and not isinstance(value, bool):
        return True
    if isinstance(value, Object):
        return value.type.is_subtype_of(expected)
    try:
        actual = T.type_of(value)
    except TsjitError:
        return False
    return actual.is_subtype_of(expected)


# ---- scripting ---------------------------------------------------------------------------------------------------
# Python function -> its ScriptFunction, so that scripting a function twice gives the same object. Weak values: a
# ScriptFunction holds its Python function, so weak keys would never let go; an entry goes with its ScriptFunction.
_scripted: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_scripted_lock = threading.Lock()

# the module/class frontend registers `(obj) -> scripted or None` here for nn.Modules and classes
SCRIPT_HOOKS: list = []


# `0` in TSJIT or PYTORCH_JIT (read at import, as torch.jit reads PYTORCH_JIT): script and trace return the Python
# objects they are given, and ScriptModule subclasses stay Python
SCRIPTING_ENABLED = all(os.environ.get(name, "1") != "0" for name in ("TSJIT", "PYTORCH_JIT"))


def script(obj: Any, optimize: Any = None, _frames_up: int = 0, _rcb: Any = None,
           example_inputs: list[tuple] | dict[Any, list[tuple]] | None = None) -> Any:
    """Compile a Python function (and the functions it calls) to TorchScript; returns a ScriptFunction.

    nn.Modules and classes are compiled by the hooks the module frontend registers. `example_inputs` (a list
    of argument tuples, or a dict from the function to such a list) types the parameters the function leaves
    unannotated by the values given, as torch.jit does with MonkeyType installed: `script(add, [(3, 4)])` makes
    `add(int a, int b)`; tsjit needs no MonkeyType. The result of such a call is a function of its own (not the
    cached one). For a module, the examples are run (`module(*example)`, or each method a dict names on its
    examples) and every method they enter gets the types seen (frontend/example_types.py).
    """
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect. Use `with tsjit.optimized_execution()` instead",
                      FutureWarning, stacklevel=2)
    if not SCRIPTING_ENABLED or isinstance(obj, ScriptFunction):
        return obj
    if example_inputs and not inspect.isfunction(obj):  # a module or class: its methods typed by running them
        with example_types_in_use(record_example_types(_example_calls(obj, example_inputs))):
            with garbage_collection.paused():
                return _script(obj)
    with garbage_collection.paused():
        if example_inputs:
            return ScriptFunction(compiled_function_with_types(obj, example_parameter_types(obj, example_inputs)), obj)
        return _script(obj)


def _example_calls(obj: Any, example_inputs: list[tuple] | dict[Any, list[tuple]]) -> list[Callable[[], Any]]:
    """The calls torch.jit makes under MonkeyType: `obj(*example)` for a list, each callable key (a bound method,
    say) on its examples for a dict."""
    if isinstance(example_inputs, dict):
        return [functools.partial(fn, *example) for fn, examples in example_inputs.items() for example in examples]
    if isinstance(example_inputs, list):
        return [functools.partial(obj, *example) for example in example_inputs]
    raise TsjitError(_NOT_INFERABLE)


# torch.jit's message for example_inputs of another shape than a list of tuples or a dict of such lists
_NOT_INFERABLE = "Error: Unable to infer types. Please format the inputs to type `List[Tuple]` or " \
                 "`Dict[Callable, List[Tuple]]`."


def example_parameter_types(fn: Any, example_inputs: list[tuple] | dict[Any, list[tuple]]) -> dict[str, T.Type]:
    """The type of each parameter of `fn` over the example calls: the types of the values given, unified, or Any
    where they do not unify (an int and a float), as torch.jit reads MonkeyType's records."""
    examples = example_inputs.get(fn, []) if isinstance(example_inputs, dict) else example_inputs
    if not isinstance(examples, list):
        raise TsjitError(_NOT_INFERABLE)
    names = list(inspect.signature(fn).parameters)
    seen: dict[str, list[T.Type]] = {}
    for example in examples:
        for name, value in zip(names, example):
            seen.setdefault(name, []).append(T.unshaped_type(T.type_of(value)))
    return unified(seen)


def _script(obj: Any) -> Any:
    if not inspect.isfunction(obj):
        importlib.import_module("tsjit.api.module")  # the module frontend, which registers its rule on import
    for hook in SCRIPT_HOOKS:
        scripted = hook(obj)
        if scripted is not None:
            return scripted
    if inspect.isclass(obj):
        from tsjit.frontend.script_class import script_class  # deferred: the class frontend, to its first use

        return script_class(obj)
    if isinstance(obj, torch._C.ScriptFunction):  # what torch.jit compiled, converted by torch_jit_objects
        from tsjit.frontend.torch_jit_objects import converted_function  # deferred: to the first torch.jit function

        return ScriptFunction(converted_function(obj))
    if not inspect.isfunction(obj):
        raise TsjitError(f"tsjit.script cannot compile {obj!r}: expected a function (modules and classes need "
                         "the module frontend)")
    with _scripted_lock:
        found = _scripted.get(obj)
    if found is None:
        # a library function TorchScript cannot compile from its source (torch.masked.sum) is tsjit's definition
        found = ScriptFunction(library_definition(obj) or compiled_function_for(obj), obj)
        with _scripted_lock:
            found = _scripted.setdefault(obj, found)
    return found


class CompilationUnit:
    """Functions compiled from TorchScript source text, reachable as attributes (`cu.f(x)`).

    Names the source does not define are looked up where the CompilationUnit is created, as torch.jit does;
    the printer's `inf` and `nan` are numbers, so printed code (`.code`) compiles again.
    """

    def __init__(self, source: str | None = None, _frames_up: int = 0):
        self._functions: dict[str, ScriptFunction] = {}
        if source is not None:
            self.define(source, _frames_up=_frames_up + 1)

    def define(self, source: str, _frames_up: int = 0) -> list[ScriptFunction]:
        """Compile the functions `source` defines and add them; names resolve where `define` is called."""
        namespace = caller_namespace(_frames_up + 1)
        with garbage_collection.paused():
            defined = compile_source(source, SourceTextResolver(namespace))
            for function in defined:
                function.ensure_defined()
        scripted = [ScriptFunction(function) for function in defined]
        self._functions.update((f.name, f) for f in scripted)
        return scripted

    def get_functions(self) -> list[ScriptFunction]:
        return list(self._functions.values())

    def find_function(self, name: str) -> ScriptFunction | None:
        return self._functions.get(name)

    def __getattr__(self, name: str) -> ScriptFunction:
        functions = self.__dict__.get("_functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(f"'CompilationUnit' has no function '{name}'")


def caller_namespace(frames_up: int) -> dict[str, Any]:
    """The names visible `frames_up` frames above the caller (its globals, then its locals), and `torch`: where
    TorchScript source given as text resolves its names, as torch.jit's resolution callback from a frame."""
    frame = inspect.currentframe().f_back
    for _ in range(frames_up):
        frame = frame.f_back
    namespace = {"torch": torch, **frame.f_globals, **frame.f_locals}
    del frame
    return namespace


# ---- decorators --------------------------------------------------------------------------------------------------
def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """Leave a function to Python: script calls to it become prim::PythonOp calls (`@tsjit.ignore`).

    `@tsjit.ignore(drop=True)` is `@tsjit.unused`: calling it from script raises instead.
    """
    if callable(drop):
        drop._tsjit_modifier = IGNORE
        return drop

    def decorator(fn):
        fn._tsjit_modifier = UNUSED if drop else IGNORE
        return fn

    return decorator


def unused(fn: Any) -> Any:
    """Do not compile `fn`; a scripted call to it raises when run (`@tsjit.unused`)."""
    fn._tsjit_modifier = UNUSED
    return fn


def export(fn: Any) -> Any:
    """Mark a method to be compiled even though `forward` does not call it (`@tsjit.export`)."""
    fn._tsjit_modifier = EXPORT
    return fn


def script_if_tracing(fn: Any) -> Any:
    """Compile `fn` only when a tsjit trace calls it (`@tsjit.script_if_tracing`, torch.jit._script_if_tracing's
    behaviour): the trace records a call keeping `fn`'s control flow instead of the operations of one run, and
    eager callers pay nothing. Scripted callers compile `fn` itself (the resolver unwraps `__wrapped__`)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if get_tracing_state() is None:
            return fn(*args, **kwargs)
        return script(fn)(*args, **kwargs)

    return wrapper


def annotate(the_type: Any, the_value: Any) -> Any:
    """Give a value a type in scripted code (`tsjit.annotate(List[int], [])`); in Python, the value itself."""
    return the_value


annotate.tsjit_special_form = "prim::annotate"

