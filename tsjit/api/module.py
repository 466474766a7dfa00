"""Scripting nn.Modules: `tsjit.script(module)` returns a RecursiveScriptModule (jit-overview.md "Modules").

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)
            self.scale = 2.0
        def forward(self, x):
            return self.fc(x) * self.scale

    scripted = tsjit.script(Net())
    scripted.graph                 # forward's graph: graph(%self : __torch__.Net, %x.1 : Tensor): ...
    scripted(torch.randn(3, 4))    # runs the optimized graph (calls inlined) on the graph executor
    scripted.fc, scripted.scale    # submodules and attributes; scripted.state_dict(), .parameters(), .eval()

Scripting is recursive, as torch.jit._recursive's: the module's concrete type is inferred (and shared with
equal instances), its submodules are scripted first, then `forward`, the exported methods, their overloads and
forward hooks compile into the ClassType. At run time the module is a runtime Object (tsjit.ir.objects)
holding a value per attribute: the same tensor objects as the original module's parameters and buffers, and
the submodules' Objects. The Python-facing RecursiveScriptModule is an nn.Module whose `_parameters`,
`_buffers` and attributes read and write the Object's slots, so nn.Module's own `state_dict()`,
`parameters()`, `train()` and friends work on it.
"""

from __future__ import annotations

import copy
import inspect
import io
import os
import threading
import weakref
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any, NamedTuple

import torch
from torch.compiler import is_dynamo_compiling

from tsjit import progress
from tsjit.api.function import (
    SCRIPT_HOOKS,
    SCRIPTING_ENABLED,
    ArgumentBinder,
    bind_arguments,
    caller_namespace,
    fits_type,
)
from tsjit.errors import TsjitError
from tsjit.frontend import module_sugared_values
from tsjit.frontend.concrete_module_type import (
    CONCRETE_TYPES,
    ConcreteModuleType,
    IterableModuleKind,
    is_ignored,
    is_typed_attribute,
    methods_to_compile,
    module_concrete_type,
)
from tsjit.frontend.enum_values import to_enum_value
from tsjit.frontend.interfaces import incompatibility
from tsjit.frontend.module_sugared_values import (
    define_hooks,
    define_method,
    define_overloads,
    define_properties,
    define_source_method,
    define_source_methods,
    property_getter,
    property_setter,
)
from tsjit.frontend.resolver import SourceTextResolver
from tsjit.frontend.script_class import from_script_value, to_script_value
from tsjit.frontend.torch_jit_objects import MODULE_LOADER, converted_module, is_torch_jit_module
from tsjit.frontend.torch_tracing_flags import get_tracing_state, no_trace_running, torch_jit_is_tracing
from tsjit.ir import types as T
from tsjit.ir.graph import Graph
from tsjit.ir.objects import Object
from tsjit.ir.schema import FunctionSchema
from tsjit.passes.inliner import inline_calls
from tsjit.runtime.function import runtime_function
from tsjit.runtime.torch_compile_plans import prepare_for_torch_compile
from tsjit.runtime.torch_jit_tracer import run_for_torch_jit_tracer
from tsjit.serialization import method_code, method_code_with_constants

# ==============================================================================================================
# scripting
# ==============================================================================================================
PROGRESS_MIN_MODULES = 9  # a module with 8 submodules or more shows a progress bar (tsjit/progress.py) on a terminal
_scripting = threading.local()  # `bar`: the progress bar of this thread's outermost script_module call


def script_module(nn_module: torch.nn.Module) -> RecursiveScriptModule:
    """Compile an nn.Module (and its submodules) to TorchScript; the entry point of `tsjit.script(module)`."""
    if isinstance(nn_module, ScriptModule):
        return nn_module
    if is_torch_jit_module(nn_module):
        return converted_module(nn_module)
    count = _modules_to_script(nn_module)
    if count < PROGRESS_MIN_MODULES or getattr(_scripting, "bar", None) is not None:
        return create_script_module(nn_module, module_concrete_type(nn_module))
    with progress.bar(f"scripting {type(nn_module).__name__}", count, unit="module") as bar:
        _scripting.bar = bar
        try:
            return create_script_module(nn_module, module_concrete_type(nn_module))
        finally:
            _scripting.bar = None


def _modules_to_script(module: torch.nn.Module) -> int:
    """The module and its submodules that scripting compiles (scripted submodules are taken as they are). Read from
    `__dict__`: a module whose `__init__` skipped `super().__init__()` has no `_modules`, and scripting says so."""
    if isinstance(module, ScriptModule):
        return 0
    children = module.__dict__.get("_modules") or {}
    return 1 + sum(_modules_to_script(child) for child in children.values() if child is not None)


def script_hook(obj: Any) -> RecursiveScriptModule | None:
    """`tsjit.script`'s rule for nn.Modules (registered in tsjit.api.function.SCRIPT_HOOKS)."""
    return script_module(obj) if isinstance(obj, torch.nn.Module) else None


def create_script_module(nn_module: torch.nn.Module, concrete_type: ConcreteModuleType,
                         entry_points: list[str] | None = None) -> RecursiveScriptModule:
    """The scripted module: submodules first, then the runtime object, then the methods of the type (see
    compile_methods), then what Python sees of it (exported and ignored methods, hooks)."""
    submodules = {name: _script_submodule(getattr(nn_module, name), module_type, name)
                  for name, module_type in concrete_type.modules.items()}
    slots = {name: to_enum_value(to_script_value(_slot_value(getattr(nn_module, name)), attribute.type), attribute.type)
             for name, attribute in concrete_type.attributes.items()}
    slots.update((name, module._c) for name, module in submodules.items())
    compile_methods(nn_module, concrete_type, entry_points)
    scripted = RecursiveScriptModule(Object(concrete_type.jit_type, slots), concrete_type, submodules)
    _copy_python_members(scripted, nn_module)
    if getattr(_scripting, "bar", None) is not None:
        _scripting.bar.update()
    return scripted


def _script_submodule(module: torch.nn.Module, concrete_type: ConcreteModuleType, name: str
                      ) -> RecursiveScriptModule:
    """A submodule scripted by its concrete type; one typed by a module interface is scripted by its own, the
    interface's methods compiled too, and must implement the interface."""
    declared = concrete_type.jit_type
    if is_torch_jit_module(module):
        module = converted_module(module)
    if not isinstance(declared, T.InterfaceType):
        return module if isinstance(module, ScriptModule) else create_script_module(module, concrete_type)
    if not isinstance(module, ScriptModule):
        missing = [method for method in declared.methods if not inspect.isfunction(getattr(type(module), method, None))]
        if missing:
            raise TsjitError(f"Module '{type(module).__name__}' has no method '{missing[0]}' declared by interface "
                             f"{declared.qualified_name} (the type of submodule '{name}')")
        module = create_script_module(module, module_concrete_type(module), list(declared.methods))
    reason = incompatibility(declared, module._c.type)
    if reason is not None:
        raise TsjitError(f"Could not cast attribute '{name}' to type {declared.qualified_name}: {reason}")
    return module


def _load_torch_jit_module(module: torch.nn.Module) -> RecursiveScriptModule:
    """A module torch.jit compiled, as tsjit loads it from the archive torch.jit writes of it."""
    from tsjit.api.archive import load  # breaks a real cycle: archive.py wraps what it loads with our classes

    with io.BytesIO(module.save_to_buffer()) as buffer:
        return load(buffer)


MODULE_LOADER.append(_load_torch_jit_module)


def _slot_value(value: Any) -> Any:
    return value.value if is_typed_attribute(value) else value


def compile_methods(nn_module: torch.nn.Module, concrete_type: ConcreteModuleType,
                    entry_points: list[str] | None = None) -> None:
    """Compile the type's methods, in torch.jit's order: its properties' getters and setters (once per type),
    the overloads, the entry points (by default `forward` and the exported methods; for a submodule typed by a
    module interface, the interface's methods, as torch.jit's interface_script), then, once per type, the hooks
    and `__len__` / `__contains__` of containers (which script code calls for `len(self.layers)`). Methods
    already compiled (the type is shared) are kept."""
    with concrete_type.lock:
        methods = concrete_type.jit_type.methods
        if not concrete_type.methods_compiled:
            define_properties(concrete_type)
        for name in concrete_type.overloads:
            for overload in define_overloads(concrete_type, name):
                methods[overload].ensure_defined()
        for name in methods_to_compile(nn_module) if entry_points is None else entry_points:
            define_method(concrete_type, name, getattr(type(nn_module), name)).ensure_defined()
        if concrete_type.methods_compiled:
            return
        define_hooks(concrete_type)
        for source in container_methods(nn_module, concrete_type):
            define_source_method(concrete_type, source).ensure_defined()
        concrete_type.methods_compiled = True


def container_methods(nn_module: torch.nn.Module, concrete_type: ConcreteModuleType) -> list[str]:
    """TorchScript source of `__len__` (and a ModuleDict's `__contains__`) as torch.jit defines them."""
    methods = concrete_type.jit_type.methods
    kind = concrete_type.iterable_kind
    sources = []
    if kind in (IterableModuleKind.LIST, IterableModuleKind.DICT) and "__len__" not in methods:
        sources.append(f"def __len__(self):\n   return {len(nn_module)}\n")
    if kind is IterableModuleKind.DICT and "__contains__" not in methods:
        keys = list(nn_module.keys())
        found = f"key in {keys!r}" if keys else "False"
        sources.append(f"def __contains__(self, key: str):\n   return {found}\n")
    return sources


def _copy_python_members(scripted: RecursiveScriptModule, nn_module: torch.nn.Module) -> None:
    """Ignored methods stay callable from Python, bound to the scripted module; ignored attributes are kept."""
    _bind_ignored_methods(scripted, type(nn_module))
    for name in scripted._concrete_type.ignored_attributes:
        if hasattr(nn_module, name):
            object.__setattr__(scripted, name, getattr(nn_module, name))


def _bind_ignored_methods(scripted: RecursiveScriptModule, py_class: type) -> None:
    for name in dir(py_class):
        member = inspect.getattr_static(py_class, name, None)
        if inspect.isfunction(member) and is_ignored(member):
            object.__setattr__(scripted, name, member.__get__(scripted))


def wrap_object(obj: Object) -> RecursiveScriptModule:
    """A RecursiveScriptModule around a runtime module object (for ignored methods called from script)."""
    concrete_type = CONCRETE_TYPES.find(obj.type)
    if concrete_type is None:
        raise TsjitError(f"no module type is known for {obj.type.qualified_name}")
    submodules = {name: wrap_object(getattr(obj, name)) for name in concrete_type.modules}
    scripted = RecursiveScriptModule(obj, concrete_type, submodules)
    _bind_ignored_methods(scripted, concrete_type.py_class)
    return scripted


# ==============================================================================================================
# running methods
# ==============================================================================================================
class MethodCall:
    """What calling a method needs besides its object: its binder (the schema without `self`), its runtime
    Function and, once a call has shown that calls like it need no binding (ArgumentBinder.entry_defaults), the
    plan's entry (GraphExecutor.entry: `entry(obj, args)`, which returns MISSED for calls of another key).
    Modules keep one per method called (in `_method_calls`), so a call skips the look-ups."""

    __slots__ = ("binder", "runtime", "entry")

    def __init__(self, binder: ArgumentBinder, runtime: Any):
        self.binder = binder
        self.runtime = runtime
        self.entry: Callable[..., Any] | None = None


MISSED = object()  # what a method's plan entry returns for a call it does not take


def _missed(obj: Object, args: tuple) -> object:
    """The `miss` of methods' plan entries: shared by every module of a type, so it holds none of them."""
    return MISSED


class ScriptMethod:
    """A compiled method bound to its module; calling it binds the arguments against the schema (without
    `self`) and runs the method's graph with the module's runtime object as `self`."""

    def __init__(self, owner: RecursiveScriptModule, function):
        self.owner = owner
        self.function = function

    @property
    def name(self) -> str:
        return self.function.name

    @property
    def graph(self) -> Graph:
        return self.function.graph

    @property
    def schema(self) -> FunctionSchema:
        return self.function.schema

    @property
    def code(self) -> str:
        """The method's TorchScript source, as torch.jit's `.code` prints it."""
        return method_code(self.function)

    @property
    def code_with_constants(self) -> tuple[str, dict[str, Any]]:
        """`.code` and the values it names `CONSTANTS.c<i>`, by name (`c0`...)."""
        code, constants = method_code_with_constants(self.function)
        return code, {f"c{index}": value for index, value in enumerate(constants)}

    @property
    def inlined_graph(self) -> Graph:
        """The graph with every method and function it calls inlined (`torch._C._jit_pass_inline`)."""
        graph = self.graph.copy()
        inline_calls(graph)
        return graph

    def graph_for(self, *args: Any, **kwargs: Any) -> Graph:
        """The graph the executor runs for these arguments: specialized to their ArgumentSpec and optimized. As
        torch.jit's, it takes the module first (`module.forward.graph_for(module, x)`); it may be left out."""
        if args and args[0] is self.owner:
            args = args[1:]
        inputs = bind_arguments(self.schema_without_self(), args, kwargs)
        return runtime_function(self.function).executor.graph_for([self.owner._c, *inputs])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # torch.compile traces this call: it reads the graph as Python, made on its request (torch_compile_plans.py)
        if is_dynamo_compiling() and prepare_for_torch_compile(self.function):
            binder = ArgumentBinder(self.schema_without_self())
            return binder.result(self.function.torch_compile_plan(self.owner._c, *binder.bind(args, kwargs)))
        owner = self.owner
        call = owner.__dict__["_method_calls"].get(self.function)
        if call is not None and call.entry is not None and not kwargs and no_trace_running():
            result = call.entry(owner._c, args)
            if result is not MISSED:
                return result
        return self._call(call, args, kwargs)

    def _call(self, call: MethodCall | None, args: tuple, kwargs: dict) -> Any:
        """A call through the binder; calls the binder would take as they are install the plan's entry, which
        later calls of the same key take instead (see MethodCall)."""
        owner = self.owner
        binder = call.binder if call is not None else ArgumentBinder(self.schema_without_self())
        inputs = binder.bind(args, kwargs)
        if call is None:  # the graph is optimized once the first call's arguments have passed their checks
            call = owner.__dict__["_method_calls"][self.function] = MethodCall(binder, runtime_function(self.function))
        runtime = call.runtime
        state = get_tracing_state()
        if state is None:
            if torch_jit_is_tracing():
                return binder.result(run_for_torch_jit_tracer(runtime, (owner._c, *inputs)))
            defaults = binder.entry_defaults(args, kwargs)
            if defaults is not None:
                call.entry = runtime.executor.entry([owner._c, *inputs], _missed, bound=1, defaults=defaults)
            return binder.result(runtime(owner._c, *inputs))
        return state.record_method_call(owner, self.function, inputs, lambda: binder.result(runtime(owner._c, *inputs)))

    def schema_without_self(self) -> FunctionSchema:
        """The schema a Python call binds against: the object is passed as `self` by the call itself."""
        schema = self.schema
        return FunctionSchema(schema.name, "", list(schema.arguments[1:]), list(schema.returns))

    def __repr__(self) -> str:
        return f"<tsjit ScriptMethod {self.function.qualname}>"


class ScriptHook:
    """A compiled forward hook or pre-hook, called by nn.Module's `__call__` as `hook(module, *args)`."""

    def __init__(self, function):
        self.function = function

    def __call__(self, module: RecursiveScriptModule, *args: Any) -> Any:
        return runtime_function(self.function)(module._c, *args)


# ==============================================================================================================
# the Python face of a scripted module
# ==============================================================================================================
class ScriptModule(torch.nn.Module):
    """The base of compiled modules (`isinstance(m, tsjit.ScriptModule)`); RecursiveScriptModule is the one
    `tsjit.script` makes.

    Subclassing it is torch.jit's legacy way of scripting: the class's `@tsjit.script_method`s (and the source
    given to `self.define` in `__init__`) compile once `__init__` has run, and the instance becomes a scripted
    module of its own class (see `_script_legacy_module`):

        class Scaled(tsjit.ScriptModule):
            def __init__(self):
                super().__init__()
                self.scale = tsjit.Attribute(2.0, float)

            @tsjit.script_method
            def forward(self, x):
                return x * self.scale
    """

    is_script_module = True  # how the tracer (frontend/trace_module.py) recognizes one without importing the api
    _compiled_class = False  # True for the classes whose instances are already compiled (RecursiveScriptModule)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls._compiled_class or not SCRIPTING_ENABLED:
            return
        original_init = cls.__init__

        def init_then_script(self: ScriptModule, *args: Any, **kwargs: Any) -> None:
            original_init(self, *args, **kwargs)
            if type(self) is cls:  # the outermost __init__ of the instance's own class has run
                _script_legacy_module(self)

        init_then_script.__wrapped__ = original_init  # type: ignore[attr-defined]
        cls.__init__ = init_then_script  # type: ignore[method-assign]

    def define(self, source: str) -> None:
        """Add the methods `source` defines (TorchScript source) to the module, names resolved where `define`
        is called; in a legacy subclass's `__init__` they compile with the script methods."""
        resolver = SourceTextResolver(caller_namespace(1))
        compiled = self.__dict__.get("_concrete_type")
        if compiled is None:
            _pending_definitions.setdefault(self, []).append((source, resolver))
            return
        for function in define_source_methods(compiled, source, resolver):
            function.ensure_defined()


# sources given to `define` in a legacy subclass's __init__, until it compiles
_pending_definitions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class ScriptMethodStub:
    """A `@tsjit.script_method` in a ScriptModule subclass: on the class, the Python function (which the
    frontend compiles); on a compiled instance, its ScriptMethod; before compilation, the Python method."""

    def __init__(self, function: Callable[..., Any]):
        self.function = function
        self.__doc__ = function.__doc__

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self.function
        if "_c" in instance.__dict__:
            return instance.__getattr__(self.function.__name__)
        return self.function.__get__(instance, owner)


def script_method(fn: Callable[..., Any]) -> Any:
    """Mark a method of a ScriptModule subclass to be compiled (torch.jit's legacy `@script_method`)."""
    return ScriptMethodStub(fn) if SCRIPTING_ENABLED else fn


class Attribute(NamedTuple):
    """`self.x = tsjit.Attribute(value, type)` in `__init__`: an attribute of a declared TorchScript type
    (`tsjit.Attribute([], List[int])`), as torch.jit.Attribute; class annotations say the same today.
    With scripting off (TSJIT=0) it is the value itself."""

    value: Any
    type: Any


if not SCRIPTING_ENABLED:
    def Attribute(value: Any, type: Any) -> Any:  # type: ignore[no-redef]  # noqa: N802  (torch.jit's name)
        return value


def _script_legacy_module(module: ScriptModule) -> None:
    """Compile a legacy ScriptModule subclass's instance in place: its script methods and defined sources
    become methods of its type, and the instance becomes a RecursiveScriptModule of a class that also
    derives from its own (so its Python methods and `isinstance` still work)."""
    cls = type(module)
    stubs = [name for name in dir(cls) if isinstance(inspect.getattr_static(cls, name, None), ScriptMethodStub)]
    concrete_type = module_concrete_type(module)
    defined = [function.name for source, resolver in _pending_definitions.pop(module, [])
               for function in define_source_methods(concrete_type, source, resolver)]
    scripted = create_script_module(module, concrete_type, stubs)
    for name in defined:
        concrete_type.jit_type.methods[name].ensure_defined()
    fields = dict(scripted.__dict__)
    module.__dict__.clear()
    module.__class__ = _compiled_subclass(cls)
    module.__dict__.update(fields)


def _compiled_subclass(cls: type) -> type:
    """RecursiveScriptModule and `cls` in one class (made once per class)."""
    compiled = cls.__dict__.get("_tsjit_compiled_subclass")
    if compiled is None:
        compiled = type(cls.__name__, (RecursiveScriptModule, cls), {"_compiled_class": True,
                                                                     "__module__": cls.__module__})
        cls._tsjit_compiled_subclass = compiled  # type: ignore[attr-defined]
    return compiled


class ConstMap:
    """The constants of `.code_with_constants`, by the names the code uses (`CONSTANTS.c0`)."""

    def __init__(self, const_mapping: dict[str, Any]):
        self.const_mapping = const_mapping

    def __getattr__(self, name: str) -> Any:
        return self.const_mapping[name]


class TensorSlots(MutableMapping):
    """A module object's parameters (or buffers) as the dict nn.Module keeps in `_parameters` (`_buffers`)."""

    def __init__(self, obj: Object, buffers: bool):
        self.obj = obj
        self.buffers = buffers

    def names(self) -> list[str]:
        return [a.name for a in self.obj.type.attributes if (a.is_buffer if self.buffers else a.is_parameter)]

    def __getitem__(self, name: str) -> Any:
        if name not in self.names():
            raise KeyError(name)
        return getattr(self.obj, name)

    def __setitem__(self, name: str, value: Any) -> None:
        if name not in self.names():
            raise TsjitError(f"Cannot add the new {'buffer' if self.buffers else 'parameter'} '{name}' to a "
                             "scripted module: its type is fixed")
        set_slot(self.obj, name, value)

    def __delitem__(self, name: str) -> None:
        raise TsjitError(f"Cannot delete '{name}' from a scripted module: its type is fixed")

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())


def set_slot(obj: Object, name: str, value: Any) -> None:
    """Write an attribute of a runtime object, checking the value against the attribute's type; enum members
    are converted by name and value as arguments are (so a Python member fits an enum loaded from an archive)."""
    expected = obj.type.get_attribute(name)
    value = to_enum_value(to_script_value(value, expected), expected)
    if not fits_type(value, expected):
        raise TsjitError(f"Expected a value of type '{expected.annotation_str()}' for field '{name}', but found "
                         f"'{type(value).__name__}'")
    setattr(obj, name, value)


# the instance fields of RecursiveScriptModule itself (everything else is read from the object)
_OWN_FIELDS = frozenset({"_c", "_concrete_type", "_method_calls"})


class RecursiveScriptModule(ScriptModule):
    """An nn.Module compiled by `tsjit.script`: attributes, parameters, buffers and submodules live in the
    runtime object `_c`; compiled methods (`forward`, exported ones) are ScriptMethods."""

    _compiled_class = True

    def __init__(self, obj: Object, concrete_type: ConcreteModuleType, submodules: dict[str, RecursiveScriptModule]):
        super().__init__()
        fields = self.__dict__
        del fields["training"]  # the object's `training` slot is the one flag
        fields.update(_c=obj, _concrete_type=concrete_type, _parameters=TensorSlots(obj, buffers=False),
                      _buffers=TensorSlots(obj, buffers=True), _modules=dict(submodules), _method_calls={})
        for hook in concrete_type.pre_hook_functions:
            self._forward_pre_hooks[len(self._forward_pre_hooks)] = ScriptHook(hook)
        for hook in concrete_type.hook_functions:
            self._forward_hooks[len(self._forward_hooks)] = ScriptHook(hook)

    # ---- attributes --------------------------------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        fields = self.__dict__
        if "_c" not in fields:
            raise AttributeError(name)
        if name in fields["_modules"]:
            return fields["_modules"][name]
        class_type = fields["_c"].type
        if class_type.has_attribute(name):
            return from_script_value(getattr(fields["_c"], name), class_type.get_attribute(name))
        if name in class_type.methods:
            return ScriptMethod(self, class_type.methods[name])
        if name in class_type.constants:
            return class_type.constants[name]
        getter = property_getter(fields["_concrete_type"], name)
        if getter is not None:
            return ScriptMethod(self, class_type.methods[getter])()
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        obj = self.__dict__.get("_c")
        if obj is None or name in _OWN_FIELDS or name in self.__dict__:
            object.__setattr__(self, name, value)
        elif name in obj.type.constants:
            raise AttributeError(f"Cannot mutate TorchScript constant value: '{name}'. Value: '{value}'")
        elif name in self._modules:
            self._set_submodule(name, value)
        elif obj.type.has_attribute(name):
            set_slot(obj, name, value)
        elif (setter := property_setter(self._concrete_type, name)) is not None:
            ScriptMethod(self, obj.type.methods[setter])(value)
        else:
            object.__setattr__(self, name, value)  # a Python-only attribute, as torch.jit allows

    def _set_submodule(self, name: str, value: Any) -> None:
        expected = self._c.type.get_attribute(name)
        if not isinstance(value, RecursiveScriptModule):
            raise TsjitError(f"Expected a scripted module of type '{expected.annotation_str()}' for submodule "
                             f"'{name}', but found '{type(value).__name__}'")
        reason = incompatibility(expected, value._c.type)
        if reason is not None:
            raise TsjitError(f"Expected a scripted module of type '{expected.annotation_str()}' for submodule "
                             f"'{name}': {reason}")
        setattr(self._c, name, value._c)
        self._modules[name] = value

    # ---- methods and graphs ------------------------------------------------------------------------------------
    @property
    def forward(self) -> ScriptMethod:
        obj = self.__dict__.get("_c")  # what __getattr__ finds, without its search
        function = obj.type.methods.get("forward") if obj is not None else None
        return ScriptMethod(self, function) if function is not None else self.__getattr__("forward")

    @property
    def graph(self) -> Graph:
        """`forward`'s graph, as emitted (calls not inlined)."""
        return self.forward.graph

    @property
    def inlined_graph(self) -> Graph:
        return self.forward.inlined_graph

    @property
    def code(self) -> str:
        """`forward`'s TorchScript source."""
        return self.forward.code

    @property
    def code_with_constants(self) -> tuple[str, ConstMap]:
        """`forward`'s `.code` and the values it names `CONSTANTS.c<i>` (`constants.c0`)."""
        code, constants = self.forward.code_with_constants
        return code, ConstMap(constants)

    def graph_for(self, *args: Any, **kwargs: Any) -> Graph:
        """The graph the executor runs `forward` with for these arguments (torch.jit's `graph_for`)."""
        return self.forward.graph_for(self, *args, **kwargs)

    def save(self, f: str | os.PathLike | Any, _extra_files: dict[str, Any] | None = None) -> None:
        """Save as a TorchScript archive (`tsjit.save(self, f)`)."""
        from tsjit.serialization import serializer  # deferred: the archive writer loads on first save

        serializer.save(self, f, _extra_files)

    def save_to_buffer(self, _extra_files: dict[str, Any] | None = None) -> bytes:
        """The bytes of the archive `save` writes."""
        from tsjit.serialization import serializer  # deferred: the archive writer loads on first save

        return serializer.serialize(self, extra_files=_extra_files)

    @property
    def original_name(self) -> str:
        return self._c.type.name

    def extra_repr(self) -> str:
        return f"original_name={self.original_name}"

    def copy(self) -> RecursiveScriptModule:
        """A module of the same type whose attribute values (tensors included) are deep copies."""
        return wrap_object(_copy_object(self._c, {}))

    def __copy__(self) -> RecursiveScriptModule:
        return wrap_object(Object(self._c.type, _slots_of(self._c)))

    def __deepcopy__(self, memo: dict) -> RecursiveScriptModule:
        return wrap_object(_copy_object(self._c, memo))

    # ---- containers --------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        if "__len__" not in self._c.type.methods:
            raise TypeError(f"object of type '{self.original_name}' has no len()")
        return self.__getattr__("__len__")()

    def __contains__(self, key: str) -> bool:
        if "__contains__" not in self._c.type.methods:
            raise TypeError(f"argument of type '{self.original_name}' is not iterable")
        return self.__getattr__("__contains__")(key)

    def __iter__(self) -> Iterator[Any]:
        kind = self._concrete_type.iterable_kind
        if kind is IterableModuleKind.DICT:
            return iter(self._modules)
        if kind is IterableModuleKind.LIST:
            return iter(self._modules.values())
        raise TypeError(f"'{self.original_name}' object is not iterable")

    def __getitem__(self, index: int | str) -> Any:
        kind = self._concrete_type.iterable_kind
        if kind is IterableModuleKind.LIST:
            return list(self._modules.values())[index]
        if kind is IterableModuleKind.DICT:
            return self._modules[index]
        raise TypeError(f"'{self.original_name}' object is not subscriptable")

    def __bool__(self) -> bool:
        return True


def _slots_of(obj: Object) -> dict[str, Any]:
    return {name: getattr(obj, name) for name in obj.type.attribute_names}


def _copy_object(obj: Object, memo: dict) -> Object:
    """A new object of the same type: submodule objects copied likewise, other values deep-copied."""
    values = {name: _copy_object(value, memo) if isinstance(value, Object) else copy.deepcopy(value, memo)
              for name, value in _slots_of(obj).items()}
    return Object(obj.type, values)


module_sugared_values.wrap_module_object = wrap_object
if script_hook not in SCRIPT_HOOKS:
    SCRIPT_HOOKS.append(script_hook)


def wrap_module(root: Any, class_hooks) -> Any:
    """The Python face of a loaded module object (a RecursiveScriptModule, as tsjit.script returns), with
    its forward hooks; `class_hooks(class_type)` gives (pre-hooks, hooks)."""
    concrete_type = ConcreteModuleType(torch.nn.Module)
    concrete_type.jit_type = root.type
    concrete_type.methods_compiled = True
    concrete_type.pre_hook_functions, concrete_type.hook_functions = class_hooks(root.type)
    values = {name: getattr(root, name) for name in root.type.attribute_names}
    submodules = {name: wrap_module(value, class_hooks) for name, value in values.items()  # interface-typed too
                  if isinstance(value, Object) and value.type.is_module}
    return RecursiveScriptModule(root, concrete_type, submodules)
