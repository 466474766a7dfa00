"""SugaredValues for modules: `self` and its submodules inside a scripted nn.Module's methods.

A method's `self` is a ModuleValue: the graph Value of the module object plus its ConcreteModuleType, which
says what each name on it is (jit-overview.md "SugaredValue"; C++ ModuleValue):

    self.weight            %weight : Tensor = prim::GetAttr[name="weight"](%self)      (parameters, buffers,
    self.training          %training : bool = prim::GetAttr[name="training"](%self)     attributes)
    self.in_features       %2 : int = prim::Constant[value=4]()                         (constants: inlined)
    self.linear            %linear : __torch__...Linear = prim::GetAttr[name="linear"](%self)   (ModuleValue)
    self.linear(x)         %y : Tensor = prim::CallMethod[name="forward"](%linear, %x)
    self.sub(x)            the same on `%sub : InterfaceType<I>` when the class annotates `sub: I`, a module
                           interface (interfaces.py): a plain value, its calls dispatched at run time
    self.helper(x)         prim::CallMethod[name="helper"](%self, %x)     (compiled on first use)
    self.count = n         prim::SetAttr[name="count"](%self, %n)

Containers (ModuleList, Sequential, ModuleDict, ParameterList) are iterated by unrolling: `for m in self.layers`
gets one ModuleValue per submodule, so each iteration may call a different module type; `enumerate`, `zip`,
`len`, `self.layers[0]`, a ModuleDict's `items()`, `keys()`, `values()` and `self.blocks["key"]` work the
same way; `self.layers[1:]` is a tuple of the modules.

Methods compile lazily as GraphFunctions listed in the module's ClassType (`define_method`); their `self`
parameter binds through a ModuleSelfBinding, which the emitter asks for the SugaredValue of `self`.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

from tsjit.errors import CompileError, SchemaError
from tsjit.frontend.concrete_module_type import (
    ConcreteModuleType,
    IterableModuleKind,
    is_ignored,
    method_overload_declarations,
)
from tsjit.frontend.ir_emitter import GraphFunction
from tsjit.frontend.operator_values import operator_name_value
from tsjit.frontend.parser import parse_definitions
from tsjit.frontend.python_ast import get_jit_def
from tsjit.frontend.resolver import (
    UNUSED,
    NativeResolver,
    PythonResolver,
    PythonValue,
    function_modifier,
    python_signature,
    static_method_value,
    to_sugared_value,
)
from tsjit.frontend.script_class import script_properties, script_property
from tsjit.frontend.sugared_value import (
    FunctionValue,
    IterableTree,
    MethodValue,
    SimpleValue,
    SugaredTupleValue,
    SugaredValue,
    as_graph_value,
    create_tuple,
    emit_builtin_call,
    insert_node,
    module_container_index,
    set_class_attribute,
    tuple_elements,
)
from tsjit.ir import types as T
from tsjit.ir.constants import constant_of
from tsjit.ir.graph import Value
from tsjit.ir.schema import Argument, FunctionSchema
from tsjit.ir.symbols import prim
from tsjit.ops.matching import match_schemas
from tsjit.source.source_range import Source

# members every module answers through its submodules (C++ ModuleValue::tryGetAttr, step 2)
MODULE_TREE_FIELDS = frozenset({"named_modules", "modules", "children", "named_children"})
DICT_FIELDS = frozenset({"items", "keys", "values"})


def insert_get_attr(graph, obj: Value, field: str, loc=None) -> Value:
    """`%field : T = prim::GetAttr[name="field"](%obj)`, the output named after the field (`_0` for `0`)."""
    node = insert_node(graph, prim.GetAttr, [obj], obj.type.get_attribute(field), loc)
    node.s_("name", field)
    return node.output().set_debug_name(f"_{field}" if field.isdigit() else field)


class ModuleSelfBinding:
    """What a method's `self` parameter is: the module, typed by the concrete type's ClassType."""

    def __init__(self, concrete_type: ConcreteModuleType):
        self.concrete_type = concrete_type

    def make_sugared(self, value: Value) -> SugaredValue:
        value.set_type(self.concrete_type.jit_type)
        return ModuleValue(value, self.concrete_type)


# ==============================================================================================================
# the module value
# ==============================================================================================================
class ModuleValue(SugaredValue):
    """A module inside a method: `self`, or a submodule reached from it."""

    def __init__(self, self_value: Value, concrete_type: ConcreteModuleType):
        self.self_value = self_value
        self.concrete_type = concrete_type

    @property
    def class_type(self) -> T.ClassType:
        return self.concrete_type.jit_type

    def kind(self) -> str:
        return "module"

    def as_value(self, loc, emitter) -> Value:
        return self.self_value

    # ---- attributes --------------------------------------------------------------------------------------------
    def attr(self, loc, emitter, field: str) -> SugaredValue:
        found = self.try_get_attr(loc, emitter, field)
        if found is not None:
            return found
        getter = property_getter(self.concrete_type, field)
        if getter is not None:
            return MethodValue(self.self_value, [getter]).call(loc, emitter, [], {}, 1)
        hint = self.concrete_type.find_failed_attribute(field) or (
            "attribute was ignored during compilation" if field in self.concrete_type.ignored_attributes else "")
        raise CompileError(f"Module '{self.class_type.name}' has no attribute '{field}' {hint}", loc)

    def try_get_attr(self, loc, emitter, field: str) -> SugaredValue | None:
        """What `self.field` is, or None (C++ ModuleValue::tryGetAttr): slots and methods of the type first,
        then container views, overloads, function attributes, and last the Python class's methods."""
        for lookup in (self._slot_or_method, self._container_view, self._function_member,
                       self._python_class_member):
            found = lookup(loc, emitter, field)
            if found is not None:
                return found
        return None

    def _slot_or_method(self, loc, emitter, field: str) -> SugaredValue | None:
        class_type, graph = self.class_type, emitter.graph
        if field in self.concrete_type.modules:
            value = insert_get_attr(graph, self.self_value, field, loc)
            submodule = self.concrete_type.modules[field]
            if isinstance(submodule.jit_type, T.InterfaceType):  # any module implementing it: calls dispatch
                return SimpleValue(value)
            return ModuleValue(value, submodule)
        if class_type.has_attribute(field):
            return SimpleValue(insert_get_attr(graph, self.self_value, field, loc))
        if field in class_type.methods:
            return MethodValue(self.self_value, [field])
        if field in class_type.constants:
            return to_sugared_value(class_type.constants[field], emitter, loc, is_constant=True)
        return None

    def _container_view(self, loc, emitter, field: str) -> SugaredValue | None:
        is_dict = self.concrete_type.iterable_kind is IterableModuleKind.DICT
        if field in MODULE_TREE_FIELDS or (is_dict and field in DICT_FIELDS):
            return self.sugared_dict(loc, emitter).attr(loc, emitter, field)
        if field == "named_buffers":
            return self.sugared_tensor_dict(loc, emitter, buffers=True).attr(loc, emitter, field)
        return None

    def _function_member(self, loc, emitter, field: str) -> SugaredValue | None:
        concrete = self.concrete_type
        if field in concrete.overloads:
            return MethodValue(self.self_value, define_overloads(concrete, field))
        if field in concrete.function_attributes:
            return FunctionValue([concrete.function_attributes[field]])
        if field in concrete.builtin_functions:
            return operator_name_value(concrete.builtin_functions[field], loc)
        return None

    def _python_class_member(self, loc, emitter, field: str) -> SugaredValue | None:
        """A function of the Python class: a static method as a plain function, an ignored method as a
        Python call with the module, any other method compiled now and called with prim::CallMethod."""
        py_class = self.concrete_type.py_class
        static = inspect.getattr_static(py_class, field, None)
        if isinstance(static, staticmethod):
            return static_method_value(static.__func__, emitter, loc)
        function = getattr(py_class, field, None)
        if not inspect.isfunction(function):
            return None
        if is_ignored(function):
            return IgnoredMethodValue(function, self.self_value)
        define_method(self.concrete_type, field, function)
        return MethodValue(self.self_value, [field])

    def has_attr(self, loc, emitter, field: str) -> bool:
        """`hasattr(self, "field")`: whether try_get_attr would find it, decided without emitting anything."""
        concrete, class_type = self.concrete_type, self.class_type
        is_dict = concrete.iterable_kind is IterableModuleKind.DICT
        tables = (concrete.modules, class_type.methods, class_type.constants, concrete.overloads,
                  concrete.function_attributes, concrete.builtin_functions)
        return (class_type.has_attribute(field) or any(field in table for table in tables)
                or field in MODULE_TREE_FIELDS or field == "named_buffers" or (is_dict and field in DICT_FIELDS)
                or inspect.isfunction(getattr(concrete.py_class, field, None)))

    def set_attr(self, loc, emitter, field: str, value: Value) -> None:
        setter = property_setter(self.concrete_type, field)
        if setter is not None:
            MethodValue(self.self_value, [setter]).call(loc, emitter, [value], {}, 0)
            return
        set_class_attribute(self.self_value, loc, emitter, field, value)

    # ---- calls -------------------------------------------------------------------------------------------------
    def call(self, loc, emitter, args: list, kwargs: dict, n_binders: int = 1) -> SugaredValue:
        """`self.sub(x)`: its forward, between its forward pre-hooks and hooks (which get the inputs as a
        tuple, as in eager mode)."""
        concrete, graph = self.concrete_type, emitter.graph
        hooked = bool(concrete.hook_functions or concrete.pre_hook_functions)
        forward_input = create_tuple(graph, [as_graph_value(graph, a) for a in args]) if hooked else None
        if concrete.pre_hook_functions:
            forward_input = self._run_pre_hooks(loc, emitter, forward_input)
            args = tuple_elements(graph, forward_input) if args else args
        forward = self.attr(loc, emitter, "forward").call(loc, emitter, args, kwargs, n_binders)
        output = forward.as_value(loc, emitter)
        for hook in concrete.hook_functions:
            result = FunctionValue([hook]).call(loc, emitter, [self.self_value, forward_input, output], {}, 1)
            result_value = result.as_value(loc, emitter)
            output = output if isinstance(result_value.type, T.NoneType) else result_value
        return SimpleValue(output)

    def _run_pre_hooks(self, loc, emitter, forward_input: Value) -> Value:
        """Each pre-hook may replace the inputs: a tuple as is, a single value as a 1-tuple, None not at all."""
        graph = emitter.graph
        for hook in self.concrete_type.pre_hook_functions:
            result = FunctionValue([hook]).call(loc, emitter, [self.self_value, forward_input], {}, 1)
            value = result.as_value(loc, emitter)
            if isinstance(value.type, T.NoneType):
                continue
            forward_input = value if isinstance(value.type, T.TupleType) else create_tuple(graph, [value])
        return forward_input

    # ---- containers --------------------------------------------------------------------------------------------
    def iter(self, loc, emitter) -> SugaredValue:
        kind = self.concrete_type.iterable_kind
        if kind is IterableModuleKind.DICT:
            return self.sugared_dict(loc, emitter).keys
        if kind is IterableModuleKind.LIST:
            return self.sugared_dict(loc, emitter).modules
        if kind is IterableModuleKind.PARAMLIST:
            return self.sugared_tensor_dict(loc, emitter, buffers=False).modules
        raise CompileError("Only constant Sequential, ModuleList, ModuleDict, or ParameterList can be used as an "
                           "iterable", loc)

    def as_tuple_value(self, loc, emitter) -> SugaredValue:
        if self.concrete_type.iterable_kind is IterableModuleKind.LIST:
            return self.sugared_dict(loc, emitter).modules
        raise CompileError("Only ModuleList or Sequential modules can be used as tuple", loc)

    def getitem(self, loc, emitter, index: Value, type_hint: T.Type | None = None) -> SugaredValue:
        """`self.layers[0]` (a constant index), `self.blocks["key"]` (a constant key); with a type hint, any
        index, as prim::ModuleContainerIndex typed by the hint."""
        kind = self.concrete_type.iterable_kind
        if kind is IterableModuleKind.LIST:
            if type_hint is not None:
                return self._container_index(loc, emitter, index, type_hint)
            return self.sugared_dict(loc, emitter).modules.getitem(loc, emitter, index)
        if kind is IterableModuleKind.PARAMLIST:
            return self.sugared_tensor_dict(loc, emitter, buffers=False).modules.getitem(loc, emitter, index)
        if kind in (IterableModuleKind.DICT, IterableModuleKind.PARAMDICT):
            return self._dict_getitem(loc, emitter, index, type_hint)
        raise CompileError("Only ModuleList, Sequential, ModuleDict, ParameterList, and ParameterDict modules are "
                           "subscriptable", loc)

    def _dict_getitem(self, loc, emitter, index: Value, type_hint: T.Type | None) -> SugaredValue:
        key = constant_of(index)
        if isinstance(key, str):
            is_dict = self.concrete_type.iterable_kind is IterableModuleKind.DICT
            entries = self.sugared_dict(loc, emitter) if is_dict else self.sugared_tensor_dict(loc, emitter, False)
            for name, module in zip(entries.names, entries.modules.items):
                if name == key:
                    return module
            raise CompileError(f"Key Error, {key}", loc)
        if type_hint is not None:
            return self._container_index(loc, emitter, index, type_hint)
        raise CompileError("Unable to extract string literal index. ModuleDict indexing is only supported with "
                           "string literals. Enumeration of ModuleDict is supported, e.g. 'for k, v in "
                           "self.items(): ...'", loc)

    def _container_index(self, loc, emitter, index: Value, type_hint: T.Type) -> SugaredValue:
        return SimpleValue(module_container_index(emitter.graph, loc, self.self_value, index, type_hint))

    def sugared_dict(self, loc, emitter) -> SugaredDict:
        """The submodules as (names, ModuleValues), each read with a prim::GetAttr now."""
        graph, names = emitter.graph, list(self.concrete_type.modules)
        values = [ModuleValue(insert_get_attr(graph, self.self_value, name, loc), self.concrete_type.modules[name])
                  for name in names]
        return SugaredDict(self, names, values, emitter.graph)

    def sugared_tensor_dict(self, loc, emitter, buffers: bool) -> SugaredDict:
        """The parameters (or buffers) as (names, values)."""
        graph, class_type = emitter.graph, self.class_type
        names = [a.name for a in class_type.attributes if (a.is_buffer if buffers else a.is_parameter)]
        values = [SimpleValue(insert_get_attr(graph, self.self_value, name, loc)) for name in names]
        return SugaredDict(self, names, values, graph)


class SugaredDict(SugaredValue):
    """A module's members as a dict: names (string constants) and values (C++ SugaredDict)."""

    def __init__(self, owner: ModuleValue, names: list[str], values: list[SugaredValue], graph):
        self.owner = owner
        self.names = names
        self.keys = SugaredTupleValue([SimpleValue(graph.insert_constant(name)) for name in names])
        self.modules = SugaredTupleValue(values)

    def kind(self) -> str:
        return "ModuleDict"

    def attr(self, loc, emitter, field: str) -> SugaredValue:
        if field == "keys":
            return ModuleDictMethod(self.keys, field)
        if field in ("values", "children"):
            return ModuleDictMethod(self.modules, field)
        if field in ("modules", "named_modules"):
            return self._nested_modules(loc, emitter, field)
        return ModuleDictMethod(_pairs(loc, self.keys, self.modules), field)

    def _nested_modules(self, loc, emitter, field: str) -> SugaredValue:
        """`modules()` / `named_modules()`: the module and every module below it, depth first."""
        names, values = [], []
        _collect_modules(loc, emitter, self.owner, "", names, values)
        modules = SugaredTupleValue(values)
        if field == "modules":
            return ModuleDictMethod(modules, field)
        keys = SugaredTupleValue([SimpleValue(emitter.graph.insert_constant(name)) for name in names])
        return ModuleDictMethod(_pairs(loc, keys, modules), field)


def _pairs(loc, keys: SugaredValue, values: SugaredValue) -> IterableTree:
    tree = IterableTree()
    tree.add_child(loc, keys)
    tree.add_child(loc, values)
    return tree


def _collect_modules(loc, emitter, module: ModuleValue, prefix: str, names: list, values: list) -> None:
    names.append(prefix)
    values.append(module)
    entries = module.sugared_dict(loc, emitter)
    for name, submodule in zip(entries.names, entries.modules.items):
        _collect_modules(loc, emitter, submodule, f"{prefix}.{name}" if prefix else name, names, values)


class ModuleDictMethod(SugaredValue):
    """`self.items` and friends: calling it (without arguments) gives the iterable."""

    def __init__(self, iterable: SugaredValue, name: str):
        self.iterable = iterable
        self.name = name

    def kind(self) -> str:
        return "builtin"

    def call(self, loc, emitter, args: list, kwargs: dict, n_binders: int = 1) -> SugaredValue:
        if args or kwargs:
            raise CompileError(f"{self.name} method does not accept any arguments", loc)
        return self.iterable


# ==============================================================================================================
# ignored methods: calls back into Python
# ==============================================================================================================
# how an ignored method sees the module at run time: set by tsjit.api.module to wrap the runtime object in a
# ScriptModule (the frontend cannot import the api); the runtime object itself until then
wrap_module_object = None


class IgnoredMethodValue(PythonValue):
    """`self.f(x)` for an `@ignore`d method: a prim::PythonOp taking the module first; for an `@unused` one,
    an exception when run (C++ PythonValue with a module self)."""

    def __init__(self, function: Any, self_value: Value):
        super().__init__(lazy_bound_method(function))
        self.function = function
        self.self_value = self_value

    def call(self, loc, emitter, args: list, kwargs: dict, n_binders: int = 1) -> SugaredValue:
        schema = self.method_schema(len(args) + 1, n_binders, loc)
        graph = emitter.graph
        try:
            _, matched = match_schemas([schema], graph, [self.self_value, *args], dict(kwargs))
        except SchemaError as error:
            raise CompileError(str(error), loc) from None
        return_type = matched.return_types[0]
        if function_modifier(self.function) == UNUSED:
            message = graph.insert_constant("This Python function is annotated to be ignored and cannot be run")
            emit_builtin_call(graph, loc, prim.RaiseException, [message, None])
            return SimpleValue(insert_node(graph, prim.Uninitialized, [], return_type).output())
        node = insert_node(graph, prim.PythonOp, matched.inputs, return_type, loc)
        node.s_("name", self.function.__qualname__)
        node.ival_("pyobj", self.obj)
        return SimpleValue(node.output())

    def method_schema(self, n_args: int, n_binders: int, loc) -> FunctionSchema:
        """The function's Python signature, its first argument typed as the module."""
        schema = python_signature(self.function, n_args, n_binders, loc)
        if not schema.arguments:
            raise CompileError("Non-static method does not have a self argument", loc)
        first = Argument(schema.arguments[0].name, self.self_value.type)
        return FunctionSchema(schema.name, "", [first, *schema.arguments[1:]], list(schema.returns))


def lazy_bound_method(function: Any) -> Any:
    """`function` called with the module as a Python object: the runtime object wrapped for Python."""
    @functools.wraps(function)
    def call(module, *args):
        return function(wrap_module_object(module) if wrap_module_object else module, *args)

    return call


# ==============================================================================================================
# defining methods
# ==============================================================================================================
def define_method(concrete_type: ConcreteModuleType, name: str, function: Any):
    """The method `name` of the module's ClassType, compiled from Python `function` when first needed."""
    class_type = concrete_type.jit_type
    with concrete_type.lock:
        if name not in class_type.methods:
            definition = get_jit_def(function, name, self_name=class_type.name)
            class_type.methods[name] = method_function(concrete_type, name, definition, function,
                                                       python_defaults(function))
        return class_type.methods[name]


def method_function(concrete_type: ConcreteModuleType, name: str, definition, function: Any, defaults=None):
    """A GraphFunction for method `name`: resolved in `function`'s namespace, `self` bound to the module."""
    resolver = PythonResolver.for_function(function) if function is not None else NativeResolver()
    qualname = f"{concrete_type.jit_type.qualified_name}.{name}"
    return GraphFunction(qualname, definition, resolver, defaults, ModuleSelfBinding(concrete_type))


def python_defaults(function: Any) -> dict[str, Any]:
    return {name: p.default for name, p in inspect.signature(function).parameters.items()
            if p.default is not inspect.Parameter.empty}


def define_overloads(concrete_type: ConcreteModuleType, name: str) -> list[str]:
    """Define the overloads of method `name` (`forward__0`, `forward__1`...) and return their names.

    Each overload compiles the implementation's body under the overload's declaration; names listed in
    `__overloads__` instead are methods of their own.
    """
    names = concrete_type.overloads[name]
    declarations = method_overload_declarations(concrete_type.py_class, name)
    implementation = getattr(concrete_type.py_class, name)
    methods = concrete_type.jit_type.methods
    with concrete_type.lock:
        if not declarations:
            return [define_method(concrete_type, n, getattr(concrete_type.py_class, n)).name for n in names]
        body = get_jit_def(implementation, name, self_name=concrete_type.jit_type.name)
        for overload_name, declaration in zip(names, declarations):
            if overload_name not in methods:
                definition = body.with_decl(declaration.decl).with_name(overload_name)
                methods[overload_name] = method_function(concrete_type, overload_name, definition, implementation)
    return names


def define_source_method(concrete_type: ConcreteModuleType, source: str):
    """A method written as TorchScript source (a container's `__len__`), compiled without Python."""
    (definition,) = parse_definitions(Source(source, "<string>", 1))
    with concrete_type.lock:
        function = method_function(concrete_type, definition.name.name, definition, None)
        concrete_type.jit_type.methods.setdefault(definition.name.name, function)
    return concrete_type.jit_type.methods[definition.name.name]


def define_source_methods(concrete_type: ConcreteModuleType, source: str, resolver) -> list:
    """The methods `source` defines (`module.define(source)`, as torch.jit's), names resolved by `resolver`;
    compiled when first needed. A name the type already has is an error."""
    methods = concrete_type.jit_type.methods
    defined = []
    with concrete_type.lock:
        for definition in parse_definitions(Source(source, "<string>", 1)):
            name = definition.name.name
            if name in methods:
                raise CompileError(f"Can't redefine method: {name} on class: {concrete_type.jit_type.qualified_name}",
                                   definition.name.range)
            qualname = f"{concrete_type.jit_type.qualified_name}.{name}"
            methods[name] = GraphFunction(qualname, definition, resolver, None, ModuleSelfBinding(concrete_type))
            defined.append(methods[name])
    return defined


def define_hooks(concrete_type: ConcreteModuleType) -> None:
    """Compile the forward pre-hooks and hooks as functions taking the module first, checking their
    signatures against `forward`'s as torch.jit does (C++ define_hooks, checkForward(Pre)HookSchema)."""
    _check_unique_hook_names(concrete_type)
    for is_pre, hooks in ((True, concrete_type.forward_pre_hooks), (False, concrete_type.forward_hooks)):
        for hook in hooks:
            definition = get_jit_def(hook, hook.__name__, self_name=concrete_type.jit_type.name)
            function = method_function(concrete_type, hook.__name__, definition, hook, python_defaults(hook))
            HookChecker(concrete_type, function, is_pre).check(definition)
            (concrete_type.pre_hook_functions if is_pre else concrete_type.hook_functions).append(function)


def _check_unique_hook_names(concrete_type: ConcreteModuleType) -> None:
    seen: dict[str, Any] = {}
    for hook in [*concrete_type.forward_hooks, *concrete_type.forward_pre_hooks]:
        if seen.setdefault(hook.__name__, hook) is not hook:
            kind = "Hook" if hook in concrete_type.forward_hooks else "Pre-hook"
            raise CompileError(f"{kind} '{hook.__name__}' on {concrete_type.py_class.__name__} has at least two "
                               "different python definitions. Please use unique names for all hooks.")


class HookChecker:
    """Checks one hook's compiled schema against `forward`: a pre-hook takes (self, input: Tuple[forward's
    argument types]) and returns None or that tuple; a hook also takes the output (forward's return type, or
    the previous hook's)."""

    def __init__(self, concrete_type: ConcreteModuleType, hook, is_pre: bool):
        self.hook = hook
        self.is_pre = is_pre
        self.module_name = concrete_type.jit_type.name
        self.forward = concrete_type.jit_type.methods["forward"].schema
        previous = concrete_type.hook_functions[-1:] if not is_pre else []
        self.previous_output = (previous[0].schema if previous else self.forward).returns[0].type
        kind = "Pre-hook" if is_pre else "Hook"
        self.hook_id = f"{kind} '{hook.name}' on module '{self.module_name}' "

    def fail(self, message: str) -> None:
        raise CompileError(f"{self.hook_id}{message}\n{self.help()}\n")

    def input_types(self) -> str:
        types = [a.type.annotation_str() for a in self.forward.arguments[1:]]
        return ", ".join(types) if types else "()"

    def help(self) -> str:
        name, inputs = self.hook.name, self.input_types()
        if self.is_pre:
            forward_args = self.forward.arguments
            single = (f", '{forward_args[1].type.annotation_str()}',"
                      if len(forward_args) == 2 and not isinstance(forward_args[1].type, T.TupleType) else "")
            return (f"This error occurred while scripting the forward pre-hook '{name}' on module "
                    f"'{self.module_name}'. If you did not want to script this pre-hook remove it from the original "
                    f"NN module before scripting. Pre-hooks for module '{self.module_name}' are expected to have "
                    f"the following signature: {name}(self, input: Tuple[{inputs}]) with a return type of either "
                    f"'None'{single} or 'Tuple[{inputs}]'.")
        return (f"This error occurred while scripting the forward hook '{name}' on module {self.module_name}. If "
                "you did not want to script this hook remove it from the original NN module before scripting. This "
                f"hook was expected to have the following signature: {name}(self, input: Tuple[{inputs}], output: "
                f"{self.previous_output.annotation_str()}). The type of the output arg is the returned type from "
                "either the forward method or the previous hook if it exists. Note that hooks can return anything, "
                "but if the hook is on a submodule the outer module is expecting the same return type as the "
                "submodule's forward.")

    def check(self, definition) -> None:
        expected = 2 if self.is_pre else 3
        arguments = definition.decl.params
        if len(arguments) != expected:
            self.fail(f"was expected to only have exactly {expected} inputs but it had {len(arguments)} inputs. ")
        if self.is_pre and definition.decl.return_type is None:
            self.fail("is missing a return annotation. Return annotations are required, please add one.")
        schema = self.hook.schema
        self.check_input(schema.arguments[1].type)
        if self.is_pre:
            self.check_pre_hook_return(schema.returns[0].type)
        elif schema.arguments[2].type != self.previous_output:
            self.fail(f"has the wrong type for the output argument. Received type: "
                      f"'{schema.arguments[2].type.annotation_str()}'. Expected type: "
                      f"'{self.previous_output.annotation_str()}'.")

    def check_input(self, input_type: T.Type) -> None:
        if not isinstance(input_type, T.TupleType):
            self.fail(f"expected the input argument to be typed as a Tuple but found type: "
                      f"'{input_type.annotation_str()}' instead.")
        forward_types = [a.type for a in self.forward.arguments[1:]]
        if not forward_types and input_type.elements:
            self.fail(f"was expecting Tuple[()] as the input type. Received type: '{input_type.annotation_str()}'.")
        if len(input_type.elements) != len(forward_types):
            self.fail(f"has the wrong number of contained types for the input argument's Tuple. Received type: "
                      f"'{input_type.annotation_str()}'.")
        if list(input_type.elements) != forward_types:
            self.fail(f"has the wrong inner types for the input tuple argument. Received type: "
                      f"'{input_type.annotation_str()}'.")

    def check_pre_hook_return(self, returned: T.Type) -> None:
        forward_types = [a.type for a in self.forward.arguments[1:]]
        if isinstance(returned, T.NoneType) or (len(forward_types) == 1 and returned == forward_types[0]
                                                 and not isinstance(returned, T.TupleType)):
            return
        wrong = f"returned the wrong type of: '{returned.annotation_str()}'."
        if not isinstance(returned, T.TupleType) or list(returned.elements) != forward_types:
            self.fail(wrong)


def define_properties(concrete_type: ConcreteModuleType) -> None:
    """Compile the getter and setter of every property of the module's class that TorchScript compiles, as
    torch.jit does before any method."""
    for name, _ in script_properties(concrete_type.py_class):
        for method in (property_getter(concrete_type, name), property_setter(concrete_type, name)):
            if method is not None:
                concrete_type.jit_type.methods[method].ensure_defined()


def property_getter(concrete_type: ConcreteModuleType, field: str) -> str | None:
    """The getter method of property `field` (`__field_getter`), defined on first use; None if no property."""
    found = script_property(concrete_type.py_class, field)
    if found is None:
        return None
    define_method(concrete_type, f"__{field}_getter", found.fget)
    return f"__{field}_getter"


def property_setter(concrete_type: ConcreteModuleType, field: str) -> str | None:
    found = script_property(concrete_type.py_class, field)
    if found is None or found.fset is None:
        return None
    define_method(concrete_type, f"__{field}_setter", found.fset)
    return f"__{field}_setter"
