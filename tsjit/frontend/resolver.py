"""Resolvers: what the names a TorchScript function does not define itself refer to.

Any name that is not a local variable or one of the compiler's own builtins (`print`, `range`, `len`...) is
asked of a Resolver (jit-overview.md "Resolver"):

- `resolve_value(name, emitter, loc)` gives a SugaredValue or None;
- `resolve_type(name, loc)` gives the Type a name stands for in annotations, or None.

A PythonResolver answers from a Python function's closure, its globals and then `typing` and `builtins`, as
`torch.jit.script` does; `to_sugared_value` turns the Python object into a SugaredValue (jit-overview.md
"Python-Compiler Interaction"):

    torch               PythonModuleValue       math.pi        a float constant
    torch.tanh          BuiltinFunction(aten::tanh)            (the builtin table below)
    torch.ops.aten.add  OperatorPacket: a builtin, and `.Tensor` its exact overload (operator_values.py)
    my_helper           FunctionValue: compiled recursively, called with prim::CallFunction
    ValueError          ExceptionValue          @tsjit.ignore'd function   a prim::PythonOp
    F.max_pool2d        BooleanDispatchValue: picks the function by a constant flag argument

The NativeResolver serves source compiled without any Python behind it: `torch.foo` is `aten::foo`.
tsjit never imports torch.jit: its helpers that user code names (`torch.jit.annotate`, `is_scripting`...)
are recognized by module and name.
"""

from __future__ import annotations

import ast
import builtins
import cmath
import functools
import inspect
import math
import re
import threading
import typing
import warnings
import weakref
from collections import OrderedDict
from typing import Any

import torch
import torch.backends.cudnn as cudnn
from torch.nn.modules.utils import _list_with_default, _pair, _quadruple, _single, _triple

from tsjit.errors import CompileError, SchemaError
from tsjit.frontend import torch_tracing_flags
from tsjit.frontend.enum_values import enum_class_value, enum_member_value, enum_type_hook
from tsjit.frontend.open_parameters import ABSTRACT_COLLECTIONS, OpenFunctionValue, abstract_collection, open_parameters
from tsjit.frontend.operator_values import operator_value
from tsjit.frontend.python_ast import build_definitions
from tsjit.frontend.sugared_value import (
    BuiltinFunction,
    BuiltinModule,
    ExceptionValue,
    FunctionValue,
    NamedTupleConstructor,
    PythonSliceClass,
    SimpleValue,
    SpecialFormValue,
    SugaredValue,
    create_tuple,
    emit_builtin_call,
    insert_node,
)
from tsjit.ir import types as T
from tsjit.ir.constants import NOT_CONSTANT, constant_of
from tsjit.ir.schema import Argument, FunctionSchema
from tsjit.ir.symbols import Symbol, aten, prim
from tsjit.ops.matching import match_schemas


class Resolver:
    """Resolves nothing; subclasses answer names."""

    def resolve_value(self, name: str, emitter, loc) -> SugaredValue | None:
        return None

    def resolve_type(self, name: str, loc) -> T.Type | None:
        return None


class NativeResolver(Resolver):
    """Source compiled without Python (CompilationUnit text, the builtin library): only `torch` is known."""

    def resolve_value(self, name: str, emitter, loc) -> SugaredValue | None:
        return BuiltinModule("aten") if name == "torch" else None


# The names the python printer writes, as torch.jit's does, for numbers Python source has no literal for
# (`float("inf")` prints as `inf`): archives and CompilationUnit source read them back.
PRINTED_NUMBERS = {"inf": math.inf, "nan": math.nan}


def printed_number(name: str, emitter, loc) -> SugaredValue | None:
    """The constant a printed number name (`inf`, `nan`) stands for, else None."""
    if name not in PRINTED_NUMBERS:
        return None
    return SimpleValue(emitter.graph.insert_constant(PRINTED_NUMBERS[name], source_range=loc))


class FunctionTableResolver(Resolver):
    """Functions defined together (one CompilationUnit) see each other by name, then ask `fallback`."""

    def __init__(self, fallback: Resolver, functions: dict[str, Any]):
        self.fallback = fallback
        self.functions = functions

    def resolve_value(self, name: str, emitter, loc) -> SugaredValue | None:
        if name in self.functions:
            return FunctionValue([self.functions[name]])
        return self.fallback.resolve_value(name, emitter, loc)

    def resolve_type(self, name: str, loc) -> T.Type | None:
        return self.fallback.resolve_type(name, loc)


_MISSING = object()


class PythonResolver(Resolver):
    """Names from a Python namespace: a function's closure and globals (or a frame's locals and globals)."""

    def __init__(self, namespace: dict[str, Any]):
        self.namespace = namespace

    @classmethod
    def for_function(cls, fn) -> PythonResolver:
        """The resolver `torch.jit.script` builds for `fn`: closure variables shadow globals.

        A decorator's wrapper (anything with `__wrapped__`, as `functools.wraps` and `@torch.jit._script_if_tracing`
        leave) is compiled from the wrapped function's source, so its names are the wrapped function's too:
        `inspect.unwrap` finds the function whose globals and closure the source was written against."""
        fn = inspect.unwrap(fn)
        namespace = dict(getattr(fn, "__globals__", {}))
        code, closure = getattr(fn, "__code__", None), getattr(fn, "__closure__", None) or ()
        for name, cell in zip(code.co_freevars if code else (), closure):
            try:
                namespace[name] = cell.cell_contents
            except ValueError:  # an empty cell: the variable is assigned later in the enclosing scope
                continue
        return cls(namespace)

    def lookup(self, name: str) -> Any:
        """The Python object a (possibly dotted) name denotes, or _MISSING."""
        head, *rest = name.split(".")
        value = self.namespace.get(head, _MISSING)
        for fallback in (typing, builtins):
            if value is _MISSING:
                value = getattr(fallback, head, _MISSING)
        for part in rest:
            if value is _MISSING:
                break
            value = getattr(value, part, _MISSING)
        return value

    def resolve_value(self, name: str, emitter, loc) -> SugaredValue | None:
        value = self.lookup(name)
        if value is _MISSING:
            return None
        return to_sugared_value(value, emitter, loc)

    def resolve_type(self, name: str, loc) -> T.Type | None:
        value = self.lookup(name)
        return None if value is _MISSING else python_type_to_type(value, loc)


class SourceTextResolver(PythonResolver):
    """CompilationUnit source: names from the namespace it was created in, then the printer's `inf` and `nan`,
    so that printed code compiles again."""

    def resolve_value(self, name: str, emitter, loc) -> SugaredValue | None:
        found = super().resolve_value(name, emitter, loc)
        return found if found is not None else printed_number(name, emitter, loc)


# ---- Python objects as SugaredValues ---------------------------------------------------------------------------
def to_sugared_value(obj: Any, emitter, loc, is_constant: bool = False) -> SugaredValue:
    """What a Python object means in TorchScript (C++ toSugaredValue); `is_constant` for module attributes."""
    known = _builtin_objects.get(id(obj))
    if known is not None and known[0] is obj:
        return BuiltinFunction(known[1])
    if is_constant:
        constant = _constant_value(obj, emitter, loc)
        if constant is not None:
            return constant
    for rule in _OBJECT_RULES:
        found = rule(obj, emitter, loc)
        if found is not None:
            return found
    return PythonValue(obj)


def _constant_value(obj: Any, emitter, loc) -> SugaredValue | None:
    """Numbers, strings, None, devices, dtypes (as ints) and tuples of them become constants."""
    graph = emitter.graph
    if obj is None or isinstance(obj, bool | int | float | complex | str | torch.device):
        return SimpleValue(graph.insert_constant(obj, source_range=loc))
    if isinstance(obj, torch.dtype | torch.layout | torch.memory_format | torch.qscheme):
        return SimpleValue(graph.insert_constant(obj, source_range=loc))
    if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        values = [to_sugared_value(v, emitter, loc, True).as_value(loc, emitter) for v in obj]
        return SimpleValue(create_tuple(graph, values))
    return None


def _compiled_function(obj: Any, emitter, loc) -> SugaredValue | None:
    # asked of the class: any attribute of a `torch.ops` namespace is a new namespace
    if getattr(type(obj), "is_script_function", False):
        return FunctionValue([obj.graph_function])
    if isinstance(obj, torch._C.ScriptFunction):  # compiled by torch.jit
        from tsjit.frontend.torch_jit_objects import converted_function  # breaks a real cycle (via the emitter)

        return FunctionValue([converted_function(obj)])
    return None


def _python_module(obj: Any, emitter, loc) -> SugaredValue | None:
    if not inspect.ismodule(obj):
        return None
    if in_package(obj.__name__, "torch.jit"):
        return TorchJitModuleValue(obj)
    return PythonModuleValue(obj)


def _special_form(obj: Any, emitter, loc) -> SugaredValue | None:
    form = _special_form_symbol(obj)
    return SpecialFormValue(form) if form is not None else None


# helpers of torch.jit and tsjit that user code calls, recognized by where they are defined and their name
SPECIAL_FORMS = {"annotate": prim.annotate, "isinstance": prim.isinstance, "fork": prim.fork,
                 "_fork": prim.fork}
# (`is_tracing` is False in scripted code, as torch.jit.is_tracing's own body answers there)
JIT_BUILTINS = {"is_scripting": aten.is_scripting, "_unwrap_optional": aten._unwrap_optional,
                "wait": aten.wait, "_wait": aten.wait, "is_tracing": aten._get_tracing_state,
                "_get_tracing_state": aten._get_tracing_state}
_JIT_HELPER_PACKAGES = ("torch.jit", "torch._jit_internal", "tsjit")


def _jit_helper_name(obj: Any) -> str | None:
    """`annotate` for torch.jit.annotate or tsjit.annotate (any object defined there and so named)."""
    module = getattr(obj, "__module__", None) or ""
    return getattr(obj, "__name__", None) if in_package(module, *_JIT_HELPER_PACKAGES) else None


def in_package(module_name: str, *packages: str) -> bool:
    """Whether a module is one of `packages` or inside one: `torch.nn` is in torch, `torchvision` is not."""
    return any(module_name == package or module_name.startswith(package + ".") for package in packages)


def _special_form_symbol(obj: Any) -> Symbol | None:
    if getattr(obj, "tsjit_special_form", None):
        return Symbol(obj.tsjit_special_form)
    name = _jit_helper_name(obj)
    return SPECIAL_FORMS.get(name) if name else None


def _builtin(obj: Any, emitter, loc) -> SugaredValue | None:
    name = find_builtin(obj)
    if name is None:
        return None
    symbol = Symbol(name)
    _builtin_objects[id(obj)] = (obj, symbol)
    return BuiltinFunction(symbol)


# id -> (object, operator) of the objects found to be builtins (`torch.sin`), so that the next `torch.sin` skips
# the rules before this one, which said no to it and always will (they read only the object). Builtins are
# objects of torch and the few modules _listed_builtin names, so this stays small; holding each object keeps
# its id from being reused.
_builtin_objects: dict[int, tuple[Any, Symbol]] = {}


def _exception_class(obj: Any, emitter, loc) -> SugaredValue | None:
    if inspect.isclass(obj) and issubclass(obj, Exception):
        return ExceptionValue(obj.__name__, f"{obj.__module__}.{obj.__qualname__}")
    return None


def _unsupported_builtin(obj: Any, emitter, loc) -> SugaredValue | None:
    if type(obj).__name__ == "builtin_function_or_method":
        raise CompileError(f"Python builtin {obj} is currently not supported in Torchscript", loc)
    return None


def _boolean_dispatch(obj: Any, emitter, loc) -> SugaredValue | None:
    dispatch = boolean_dispatch_info(obj)
    return BooleanDispatchValue(dispatch) if dispatch is not None else None


def _named_tuple_class(obj: Any, emitter, loc) -> SugaredValue | None:
    if not is_named_tuple_class(obj):
        return None
    return NamedTupleConstructor(named_tuple_type(obj, loc), dict(getattr(obj, "_field_defaults", {})))


def _class(obj: Any, emitter, loc) -> SugaredValue | None:
    if inspect.isclass(obj):
        load_class_frontend()
    for hook in CLASS_VALUE_HOOKS:
        found = hook(obj, emitter, loc)
        if found is not None:
            return found
    return None


def _python_function(obj: Any, emitter, loc) -> SugaredValue | None:
    if not inspect.isfunction(obj):
        return None
    modifier = function_modifier(obj)
    if modifier in (IGNORE, UNUSED):
        return PythonValue(obj)
    overloads = compiled_overloads_for(obj, loc)
    if overloads:
        return FunctionValue(overloads)
    names, abstract = open_parameters(obj, PythonResolver.for_function(obj).lookup)
    if names:
        return OpenFunctionValue(obj, names, abstract, _qualified_name(obj))
    return FunctionValue([compiled_function_for(obj, loc)])


def _library_function(obj: Any, emitter, loc) -> SugaredValue | None:
    """A library function TorchScript cannot compile from its source (`torch.masked.sum`): tsjit's definition."""
    if not in_package(getattr(obj, "__module__", None) or "", *LIBRARY_PACKAGES):
        return None
    # breaks a real cycle: library_definitions compiles with the emitter, which imports this module
    from tsjit.frontend.library_definitions import library_definition

    function = library_definition(obj)
    return FunctionValue([function]) if function is not None else None


# the packages whose functions library_definitions.py may define
LIBRARY_PACKAGES = ("torch.masked",)


def _infinity(obj: Any, emitter, loc) -> SugaredValue | None:
    if obj is math.inf:
        return SimpleValue(emitter.graph.insert_constant(math.inf, source_range=loc))
    return None


def _method(obj: Any, emitter, loc) -> SugaredValue | None:
    return PythonValue(obj) if inspect.ismethod(obj) else None


def _slice_class(obj: Any, emitter, loc) -> SugaredValue | None:
    return PythonSliceClass() if obj is slice else None


_OBJECT_RULES = (
    _compiled_function, operator_value, _python_module, _special_form, _builtin, _exception_class, _unsupported_builtin,
    _boolean_dispatch, _class, _named_tuple_class, enum_class_value, enum_member_value, _library_function,
    _python_function, _infinity,
    _method, _slice_class,
)
# the module/class frontend adds `(obj, emitter, loc) -> SugaredValue | None` rules for script classes here
CLASS_VALUE_HOOKS: list = []


def load_class_frontend() -> None:
    """Import the script-class frontend (which fills CLASS_VALUE_HOOKS and TYPE_HOOKS) before the first class
    is resolved; it builds on this module, so it cannot be imported at the top."""
    import tsjit.frontend.script_class  # noqa: F401  (breaks a real cycle: script_class imports this module)


class PythonValue(SugaredValue):
    """A Python object TorchScript cannot compile; calling an @ignore'd function becomes a prim::PythonOp."""

    def __init__(self, obj: Any):
        self.obj = obj

    def kind(self) -> str:
        return f"python value of type '{type(self.obj).__name__}'"

    def as_value(self, loc, emitter):
        raise CompileError(f"{self.kind()} cannot be used as a value. Perhaps it is a closed over global variable? "
                           "If so, please consider passing it in as an argument or use a local variable instead.",
                           loc)

    def attr(self, loc, emitter, field: str) -> SugaredValue:
        """`Fn.apply` of a torch.autograd.Function subclass is a Python call, as in torch.jit (nn.CrossMapLRN2d)."""
        if field == "apply" and inspect.isclass(self.obj) and issubclass(self.obj, torch.autograd.Function):
            return PythonValue(self.obj.apply)
        return super().attr(loc, emitter, field)

    def call(self, loc, emitter, args: list, kwargs: dict, n_binders: int = 1) -> SugaredValue:
        if not callable(self.obj) or inspect.isclass(self.obj):
            raise CompileError(f"cannot call a {self.kind()}", loc)
        schema = python_signature(self.obj, len(args), n_binders, loc)
        graph = emitter.graph
        try:
            _, matched = match_schemas([schema], graph, list(args), dict(kwargs))
        except SchemaError as error:
            raise CompileError(str(error), loc) from None
        return_type = matched.return_types[0]
        if function_modifier(self.obj) is UNUSED:
            message = graph.insert_constant("This Python function is annotated to be ignored and cannot be run")
            emit_builtin_call(graph, loc, prim.RaiseException, [message, None])
            return SimpleValue(insert_node(graph, prim.Uninitialized, [], return_type).output())
        node = insert_node(graph, prim.PythonOp, matched.inputs, return_type, loc)
        node.s_("name", getattr(self.obj, "__qualname__", getattr(self.obj, "__name__", "PythonOp")))
        node.ival_("pyobj", self.obj)
        return SimpleValue(node.output())


class PythonModuleValue(SugaredValue):
    """A Python module (`torch`, `math`, `torch.nn.functional`): its attributes resolve as constants."""

    resolved_once = True

    def __init__(self, module):
        self.module = module

    def kind(self) -> str:
        return "python value of type 'module'"

    def attr(self, loc, emitter, field: str) -> SugaredValue:
        member = getattr(self.module, field, _MISSING)
        if member is _MISSING:
            raise CompileError(f"object has no attribute {field}", loc)
        return to_sugared_value(member, emitter, loc, is_constant=True)


class TorchJitModuleValue(PythonModuleValue):
    """`torch.jit` as named in user code: its helpers are special forms or builtins (never imported here)."""

    def attr(self, loc, emitter, field: str) -> SugaredValue:
        if field in SPECIAL_FORMS:
            return SpecialFormValue(SPECIAL_FORMS[field])
        if field in JIT_BUILTINS:
            return BuiltinFunction(JIT_BUILTINS[field])
        return super().attr(loc, emitter, field)


class BooleanDispatchValue(SugaredValue):
    """A function that is one of two depending on a flag argument (`F.max_pool2d(..., return_indices=...)`);
    the flag must be a constant."""

    def __init__(self, dispatch: dict[str, Any]):
        self.dispatch = dispatch

    def kind(self) -> str:
        return "boolean dispatch"

    def call(self, loc, emitter, args: list, kwargs: dict, n_binders: int = 1) -> SugaredValue:
        index, name = self.dispatch["index"], self.dispatch["arg_name"]
        if index < len(args):
            flag = constant_of(args[index])
            where = f"Argument for boolean dispatch at position {index}"
        elif name in kwargs:
            flag = constant_of(kwargs[name])
            where = f"Keyword argument '{name}' for boolean dispatch at position"
        else:
            flag, where = self.dispatch["default"], ""
        if flag is NOT_CONSTANT:
            raise CompileError(f"{where} was not constant", loc)
        target = self.dispatch["if_true" if flag else "if_false"]
        return to_sugared_value(target, emitter, loc).call(loc, emitter, args, kwargs, n_binders)


def boolean_dispatch_info(obj: Any) -> dict[str, Any] | None:
    """The dispatch table of a torch._jit_internal.boolean_dispatch function, read from its closure."""
    code, closure = getattr(obj, "__code__", None), getattr(obj, "__closure__", None)
    if code is None or not closure or getattr(obj, "__module__", "") == __name__:
        return None
    cells = dict(zip(code.co_freevars, closure))
    if not {"if_true", "if_false", "arg_name", "arg_index", "default"} <= cells.keys():
        return None
    value = {name: cell.cell_contents for name, cell in cells.items()}
    return {"if_true": value["if_true"], "if_false": value["if_false"], "index": value["arg_index"],
            "default": value["default"], "arg_name": value["arg_name"]}


# ---- the builtin table: Python callables that are operators ---------------------------------------------------
# torch.jit's table (torch.jit._builtins) holds every callable that torch and its C operator namespaces bind, as
# `aten::<the name they bind it to>`, and the explicit pairs below. Built up front, that is ~1,800 names scanned on
# the first lookup; here a callable is looked up by its own name instead, which finds the same operator: a callable
# is a builtin when one of those modules binds its `__name__` to it. (The few objects torch binds under another
# name - `torch._Any` for typing.Any, `torch.JITException` for torch.jit.Error - name no operator.)
_listed_builtins: dict[int, str] | None = None  # id -> operator, of the explicit pairs
_listed_keep: list = []  # keeps the listed objects alive, so their ids stay theirs
_builtin_lock = threading.Lock()


def _explicit_builtins() -> list[tuple[Any, str]]:
    """torch.jit._builtins' explicit table (torch 2.13), in its order."""
    pairs: list[tuple[Any, str]] = [
        (_pair, "aten::_pair"), (_quadruple, "aten::_quadruple"), (_single, "aten::_single"),
        (_triple, "aten::_triple"), (_list_with_default, "aten::list_with_default"), (OrderedDict, "aten::dict"),
        (dict, "aten::dict"), (cudnn.is_acceptable, "aten::cudnn_is_acceptable"),
    ]
    pairs += [(getattr(math, name), f"aten::{name}") for name in _MATH_BUILTINS]
    pairs += [(cmath.isnan, "aten::isnan"), (cmath.isfinite, "aten::isfinite"), (cmath.isinf, "aten::isinf"),
              (cmath.phase, "aten::angle"), (cmath.rect, "aten::polar")]
    pairs += [(getattr(cmath, name), f"aten::{name}") for name in _CMATH_BUILTINS]
    pairs += [(math.ldexp, "aten::ldexp"), (torch._assert, "aten::_assert"), (torch.autograd.grad, "aten::grad"),
              (torch.autograd.backward, "aten::backward"), (torch._C._infer_size, "aten::_infer_size"),
              (torch.broadcast_shapes, "aten::broadcast_shapes"),
              (torch.nn.functional._no_grad_embedding_renorm_, "aten::_no_grad_embedding_renorm_"),
              (torch.nn.functional.assert_int_or_pair, "aten::_assert_int_or_pair")]
    pairs += [(getattr(torch.nn.init, f"_no_grad_{name}_"), f"aten::_no_grad_{name}_")
              for name in ("fill", "normal", "uniform", "zero")]
    pairs += [(torch_tracing_flags.ORIGINAL_GET_TRACING_STATE, "aten::_get_tracing_state"),
              (torch._C._get_cpu_capability, "aten::_get_cpu_capability"), (warnings.warn, "aten::warn")]
    pairs += [(getattr(torch._VF, name), f"aten::{name}") for name in _VF_BUILTINS]
    return pairs


_MATH_BUILTINS = ("ceil", "copysign", "erf", "erfc", "exp", "expm1", "fabs", "floor", "gamma", "lgamma", "log",
                  "log10", "log1p", "pow", "sqrt", "isnan", "asinh", "atanh", "cosh", "sinh", "tanh", "acos",
                  "asin", "atan", "atan2", "cos", "sin", "tan", "asinh", "atanh", "acosh", "fmod", "modf",
                  "factorial", "frexp", "isinf", "degrees", "radians")
_CMATH_BUILTINS = ("log", "log10", "sqrt", "exp", "sin", "tan", "cos", "asin", "acos", "atan", "sinh", "cosh",
                   "tanh", "asinh", "acosh", "atanh")
_VF_BUILTINS = ("stft", "istft", "cdist", "norm", "unique_dim", "unique_consecutive", "nuclear_norm",
                "frobenius_norm", "tensordot")
# torch.functional's Python functions that stay compiled from source rather than bound to operators
_FUNCTIONAL_COMPILED = ("stft", "istft", "lu", "cdist", "norm", "unique", "unique_consecutive", "tensordot")
_NOT_BUILTINS = (torch.no_grad, torch.autocast)


def _later_builtins() -> list[tuple[Any, str]]:
    """Registered after the module scan: math's, torch.jit's own helpers (found by definition site), and
    `torch.get_default_dtype`."""
    pairs = [(math.gcd, "aten::gcd"), (math.isfinite, "aten::isfinite"), (math.remainder, "aten::mathremainder")]
    pairs += [(getattr(torch.overrides, name), "aten::has_torch_function")
              for name in ("has_torch_function", "has_torch_function_unary", "has_torch_function_variadic")]
    # tsjit's own: torch has no operator for it, torch.jit cannot compile it (see ops/builtins/environment.py)
    pairs.append((torch.get_default_dtype, "prim::get_default_dtype"))
    internal = getattr(torch, "_jit_internal", None)
    if internal is not None and hasattr(internal, "is_scripting"):
        pairs.append((internal.is_scripting, "aten::is_scripting"))
    return pairs


@functools.cache
def _modules_containing_builtins() -> tuple[Any, ...]:
    names = ("_nn", "_fft", "_linalg", "_nested", "_sparse", "_special")
    return (torch, *(getattr(torch._C, name) for name in names if hasattr(torch._C, name)))


def _listed_builtin(obj: Any) -> str | None:
    """The operator of `obj` among the explicit pairs (built on the first lookup: ~100 objects)."""
    global _listed_builtins
    if _listed_builtins is None:
        with _builtin_lock:
            if _listed_builtins is None:
                pairs = _explicit_builtins() + _later_builtins()
                _listed_keep.extend(value for value, _ in pairs)
                _listed_builtins = {id(value): op for value, op in pairs}
    return _listed_builtins.get(id(obj))


def _module_builtin(obj: Any) -> str | None:
    """`aten::<name>` when torch or one of its C operator namespaces binds `obj`'s own name to it."""
    name = getattr(obj, "__name__", None)
    if not isinstance(name, str) or any(obj is value for value in _NOT_BUILTINS) or not callable(obj):
        return None
    if any(vars(module).get(name) is obj for module in _modules_containing_builtins()):
        if name in _FUNCTIONAL_COMPILED and getattr(torch.functional, name, None) is obj:
            return None
        return f"aten::{name}"
    return None


def find_builtin(obj: Any) -> str | None:
    """The operator name of a Python callable that TorchScript treats as a builtin (`torch.tanh`)."""
    name = _listed_builtin(obj) or _module_builtin(obj)
    if name is None and _jit_helper_name(obj) in JIT_BUILTINS:
        return str(JIT_BUILTINS[_jit_helper_name(obj)])
    return name


# ---- Python functions compiled recursively ---------------------------------------------------------------------
IGNORE, UNUSED, EXPORT = "ignore", "unused", "export"


def function_modifier(fn: Any) -> str | None:
    """tsjit's (or torch.jit's) decoration of a function: IGNORE, UNUSED, EXPORT or None."""
    modifier = getattr(fn, "_tsjit_modifier", None)
    if modifier is not None:
        return modifier
    # torch.jit's decorators leave a FunctionModifiers string such as "unused (ignored and replaced ...)"
    marker = getattr(fn, "_torchscript_modifier", None)
    if not isinstance(marker, str) or not marker:
        return None
    return _TORCH_MODIFIERS.get(marker.split()[0])


_TORCH_MODIFIERS = {"unused": UNUSED, "_drop": UNUSED, "ignore": IGNORE, "export": EXPORT}


_compiled_functions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_compile_lock = threading.RLock()


def compiled_function_for(fn, loc=None):
    """The GraphFunction compiling Python function `fn` (cached, compiled on first use).

    A function met again while it is being compiled calls itself, which TorchScript rejects.
    """
    # breaks a real cycle: ir_emitter imports this module
    from tsjit.frontend.ir_emitter import GraphFunction, python_function_definition

    with _compile_lock:
        function = _compiled_functions.get(fn)
        if function is None:
            definition, resolver, defaults = python_function_definition(fn)
            function = GraphFunction(_qualified_name(fn), definition, resolver, defaults)
            _compiled_functions[fn] = function
    function.ensure_defined(loc)
    return function


def compiled_function_with_types(fn, parameter_types: dict):
    """A new GraphFunction compiling `fn` with its unannotated parameters typed by `parameter_types` (from
    example inputs); not cached, since other callers see `fn` as its source says."""
    # breaks a real cycle: ir_emitter imports this module
    from tsjit.frontend.ir_emitter import GraphFunction, python_function_definition

    definition, resolver, defaults = python_function_definition(fn, parameter_types)
    function = GraphFunction(_qualified_name(fn), definition, resolver, defaults)
    function.ensure_defined()
    return function


_compiled_overloads: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def compiled_overloads_for(fn, loc=None) -> list:
    """The GraphFunctions of `fn`'s `@_overload` declarations, each compiled with `fn`'s body; [] if none.

    The declarations are found in `fn`'s module source: same-named top-level functions decorated with
    `overload` / `_overload` (torch.nn.functional.interpolate has several).
    """
    # breaks a real cycle: ir_emitter imports this module
    from tsjit.frontend.ir_emitter import GraphFunction, python_function_definition

    with _compile_lock:
        functions = _compiled_overloads.get(fn)
        if functions is None:
            declarations = overload_declarations(fn)
            functions = []
            if declarations:
                body, resolver, defaults = python_function_definition(fn)
                functions = [GraphFunction(_qualified_name(fn), body.with_decl(d.decl), resolver, defaults)
                             for d in declarations]
            _compiled_overloads[fn] = functions
    for function in functions:
        function.ensure_defined(loc)
    return functions


def overload_declarations(fn) -> list:
    """The Defs of the `@overload`-decorated declarations of module-level function `fn`."""
    if "<locals>" in fn.__qualname__ or "." in fn.__qualname__:
        return []
    try:
        filename = inspect.getsourcefile(fn)
        if fn.__name__ not in _overloaded_function_names(filename):
            return []
        text, spans = _module_overloads(filename)
    except (OSError, TypeError):
        return []
    if fn.__name__ not in spans:
        return []
    lines = text.splitlines(keepends=True)
    return [definition for first, last in spans[fn.__name__]
            for definition in build_definitions("".join(lines[first - 1:last]), filename, first)]


def _module_overloads(filename: str) -> tuple[str, dict[str, list[tuple[int, int]]]]:
    """A module file's text and, by function name, the first and last lines of its `@overload` declarations
    (cached). Only a text where some `def` follows an `overload` decorator is parsed (parsing
    torch.nn.functional costs ~60 ms, and its few overloaded functions are rarely called), and its ast is not kept:
    that of torch.nn.functional is about a hundred thousand objects, which every later garbage collection would
    walk. The declarations are looked up first, then the text is parsed for all of them."""
    candidates = _overloaded_function_names(filename)
    text, spans, _ = _module_overload_spans[filename]
    if spans is None:
        spans = {}
        if candidates:
            for node in _module_level_functions(ast.parse(text).body):
                if _is_overload(node):
                    spans.setdefault(node.name, []).append((node.lineno, node.end_lineno or node.lineno))
        _module_overload_spans[filename] = (text, spans, candidates)
    return text, spans


def _overloaded_function_names(filename: str) -> set[str]:
    """The names of the `def`s that follow a decorator named `overload` or `_overload` in a module file (a superset
    of those _module_overloads finds, read without parsing the file)."""
    if filename not in _module_overload_spans:
        with open(filename, encoding="utf-8") as source:
            text = source.read()
        _module_overload_spans[filename] = (text, None, set(_OVERLOAD_DEF.findall(text)))
    return _module_overload_spans[filename][2]


# an `overload` decorator, then maybe more decorators, comments and blank lines, then the `def` and its name
_OVERLOAD_DEF = re.compile(r"^[ \t]*@[\w.]*overload\b.*\n(?:[ \t]*(?:[@#].*)?\n)*[ \t]*def[ \t]+(\w+)", re.MULTILINE)
_module_overload_spans: dict[str, tuple[str, dict[str, list[tuple[int, int]]] | None, set[str]]] = {}


def _module_level_functions(statements: list):
    """The functions defined at module level, also inside module-level `if`s (`if TYPE_CHECKING: ... else:`)."""
    for statement in statements:
        if isinstance(statement, ast.FunctionDef):
            yield statement
        elif isinstance(statement, ast.If):
            yield from _module_level_functions(statement.body)
            yield from _module_level_functions(statement.orelse)


def _is_overload(node) -> bool:
    for decorator in node.decorator_list:
        name = decorator.attr if isinstance(decorator, ast.Attribute) else getattr(decorator, "id", None)
        if name in ("overload", "_overload"):
            return True
    return False


def _qualified_name(fn) -> str:
    module = getattr(fn, "__module__", None) or "__main__"
    module = "__torch__" if module == "__main__" else f"__torch__.{module}"
    if fn in _static_methods:
        # torch.jit compiles a @staticmethod as a free function of its module, named by its bare name
        return f"{module}.{fn.__name__}"
    return f"{module}.{fn.__qualname__}".replace(".<locals>", "")


_static_methods: weakref.WeakSet = weakref.WeakSet()


def static_method_value(fn, emitter, loc) -> SugaredValue:
    """`Class.method` or `self.method` of a @staticmethod: its function, compiled (as torch.jit does) as a free
    function named `<module>.<method>` rather than by its Python qualified name."""
    _static_methods.add(fn)
    return to_sugared_value(fn, emitter, loc)


def python_signature(fn, n_args: int, n_binders: int, loc):
    """The schema of a Python function called from TorchScript without compiling it (an @ignore'd one):
    its annotations, or Tensors everywhere (with as many results as the call site unpacks). `*args` stands for
    the rest of the call's positional arguments, each of type Any (`Function.apply(cls, *args)`); `**kwargs`
    for nothing."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        raise CompileError(f"cannot inspect the signature of {fn!r}", loc) from None
    parameters = list(signature.parameters.values())
    hints = _type_hints(fn)
    annotated = bool(hints)
    arguments = []
    for parameter in parameters:
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            arguments += [Argument(f"{parameter.name}{i}", T.AnyType.get()) for i in range(n_args - len(arguments))]
            continue
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            continue
        type_ = _hint_type(hints.get(parameter.name), loc) if annotated else T.TensorType.get()
        default = {} if parameter.default is inspect.Parameter.empty else {"default_value": parameter.default}
        arguments.append(Argument(parameter.name, type_, **default))
    if annotated:
        return_type = _hint_type(hints.get("return"), loc) if "return" in hints else T.NoneType.get()
    else:
        return_type = T.NoneType.get() if n_binders == 0 else T.TensorType.get()
        if n_binders > 1:
            return_type = T.TupleType((T.TensorType.get(),) * n_binders)
    return FunctionSchema(getattr(fn, "__qualname__", "fn"), "", arguments, [Argument("0", return_type)])


def _type_hints(fn) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn)
    except Exception:
        return dict(getattr(fn, "__annotations__", {}))


def _hint_type(hint: Any, loc) -> T.Type:
    if hint is None:
        return T.TensorType.get()
    found = python_type_to_type(hint, loc)
    if found is None:
        raise CompileError(f"Unknown type annotation: '{hint}'", loc)
    return found


# ---- Python type objects to Types ------------------------------------------------------------------------------
_PYTHON_TYPES: dict[Any, T.Type] = {
    torch.Tensor: T.TensorType.get(), int: T.IntType.get(), float: T.FloatType.get(), bool: T.BoolType.get(),
    complex: T.ComplexType.get(), str: T.StringType.get(), type(None): T.NoneType.get(), None: T.NoneType.get(),
    torch.device: T.DeviceType.get(), typing.Any: T.AnyType.get(), torch.Generator: T.GeneratorType.get(),
    list: T.AnyListType.get(), tuple: T.AnyTupleType.get(),
}
# the module/class frontend adds `(obj, loc) -> Type | None` rules for script classes, enums, interfaces here
TYPE_HOOKS: list = [enum_type_hook]


def python_type_to_type(obj: Any, loc) -> T.Type | None:
    """The TorchScript type for a Python annotation object (`int`, `List[int]`, a NamedTuple class, ...)."""
    try:
        if obj in _PYTHON_TYPES:
            return _PYTHON_TYPES[obj]
    except TypeError:  # unhashable
        return None
    if inspect.ismodule(obj):  # `torch` in `torch.sin(x)`, asked first whether it names a type: never
        return None
    generic = _generic_type(obj, loc)
    if generic is not None:
        return generic
    collection = abstract_collection(obj)
    if collection is not None:  # read by isinstance; a parameter so annotated is open (open_parameters.py)
        return T.UnionType.create(list(ABSTRACT_COLLECTIONS[collection]))
    if inspect.isclass(obj) and issubclass(obj, torch.Tensor):
        # a Tensor subclass (nn.Parameter, MaskedTensor) annotates a Tensor, as torch.jit's `is_tensor` rule
        # has it; `input: Tensor | MaskedTensor` is Tensor
        return T.TensorType.get()
    if is_named_tuple_class(obj):
        return named_tuple_type(obj, loc)
    if inspect.isclass(obj):
        load_class_frontend()
    for hook in TYPE_HOOKS:
        found = hook(obj, loc)
        if found is not None:
            return found
    return None


def _generic_type(obj: Any, loc) -> T.Type | None:
    """`List[int]`, `Optional[Tensor]`, `Dict[str, int]`, `Tuple[int, ...]`, `Union[...]`, `int | None`."""
    origin, arguments = typing.get_origin(obj), typing.get_args(obj)
    if origin is None:
        return None
    inner = [python_type_to_type(a, loc) if a is not ... else None for a in arguments]
    if any(t is None for t, a in zip(inner, arguments) if a is not ...):
        return None
    if origin is list:
        return T.ListType(inner[0])
    if origin is dict:
        return T.DictType(inner[0], inner[1])
    if origin is tuple:
        return T.TupleType(tuple(t for t in inner if t is not None))
    if origin is typing.Union or type(obj).__name__ == "UnionType":
        return T.UnionType.create(inner)
    return None


def is_named_tuple_class(obj: Any) -> bool:
    return inspect.isclass(obj) and issubclass(obj, tuple) and hasattr(obj, "_fields")


_named_tuple_types: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # NamedTuple class -> its TupleType


def named_tuple_type(cls, loc) -> T.TupleType:
    """The TupleType of a NamedTuple class, fields typed by its annotations (Tensor when unannotated)."""
    found = _named_tuple_types.get(cls)
    if found is None:
        hints = _type_hints(cls)
        fields = tuple(cls._fields)
        types = tuple(_hint_type(hints.get(f), loc) for f in fields)
        found = T.TupleType(types, fields, _qualified_name(cls))
        _named_tuple_types[cls] = found
    return found
