"""Script classes: Python classes compiled to TorchScript ClassTypes (torch.jit's `@torch.jit.script class`).

A Python class that scripted code names (or that is given to `tsjit.script`) compiles once to a ClassType
`__torch__.<module>.<Class>`. Its methods are GraphFunctions whose `self` is typed by the class; `__init__`
compiles first, and each `self.x = v` it emits declares attribute `x` with the type of `v` (an annotation such
as `self.xs: List[int] = []` types `v`). Using the class then desugars as torch.jit does:

    p = Point(1.0, 2.0)     %p : __torch__.Point = prim::CreateObject()
                             = prim::CallMethod[name="__init__"](%p, %x, %y)
    p.x                     %x : float = prim::GetAttr[name="x"](%p)
    p.x = 3.0                = prim::SetAttr[name="x"](%p, %3)
    p.norm()                %n : float = prim::CallMethod[name="norm"](%p)     (inlined when optimized)
    p.r, p.r = v (property) prim::CallMethod[name="__r_getter"](%p), [name="__r_setter"](%p, %v)
    Point.origin()          prim::CallFunction of the @staticmethod, compiled as a free function
    p + q, len(p), p[i], i in p, with p:   __add__, __len__, __getitem__, __contains__, __enter__/__exit__

Other methods than `__init__` may only assign attributes `__init__` declared, and `__init__` must first assign
each outside control flow; class-level values (`K = 3`) cannot be read from TorchScript, and only the class's
own body compiles (base classes are ignored), all with torch.jit's errors.

At the Python boundary an instance passed to a scripted function (or stored in a module attribute) becomes a
runtime Object (its attributes copied), and an Object returned becomes an instance of the Python class again, as
torch.jit's toIValue and toPyObject do; where an interface is expected, the instance's own class is used.

The resolver reaches this module through its CLASS_VALUE_HOOKS and TYPE_HOOKS, which it fills on import.
"""

from __future__ import annotations

import enum
import inspect
import threading
import weakref
from typing import Any

import torch

from tsjit.errors import CompileError
from tsjit.frontend import resolver
from tsjit.frontend.concrete_module_type import claim_qualified_name, is_ignored, qualified_class_name
from tsjit.frontend.interfaces import is_interface_class
from tsjit.frontend.ir_emitter import GraphFunction
from tsjit.frontend.python_ast import get_jit_def
from tsjit.frontend.sugared_value import MethodValue, SimpleValue, SugaredValue, insert_node
from tsjit.ir import types as T
from tsjit.ir.graph import Value
from tsjit.ir.objects import Object
from tsjit.ir.symbols import prim

_class_types: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Python class -> ClassType
_python_classes: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # qualified name -> Python class
_lock = threading.RLock()

# classes TorchScript never compiles as script classes (torch._jit_internal.can_compile_class)
_NOT_SCRIPT_CLASSES = (torch.nn.Module, tuple, list, dict, Exception, torch.Tensor)
_FOREIGN_MODULES = ("builtins", "typing", "enum", "abc", "collections")
# torch's own classes are builtins or Python TorchScript cannot compile, except these context managers, which
# torch.jit compiles from their source (`with torch.no_grad():` in torch.nn.functional.gaussian_nll_loss;
# `with torch.jit.strict_fusion():`, named so that tsjit never imports torch.jit)
_TORCH_SCRIPT_CLASSES = (torch.no_grad,)
_TORCH_JIT_SCRIPT_CLASSES = ("strict_fusion",)


# ==============================================================================================================
# which classes, and compiling them
# ==============================================================================================================
def is_script_class_candidate(obj: Any) -> bool:
    """Whether `obj` is a Python class TorchScript compiles as a script class: a class written in Python
    (every routine of it has code), not a module, container, exception, enum or typing construct."""
    if not inspect.isclass(obj) or issubclass(obj, _NOT_SCRIPT_CLASSES) or is_ignored(obj) or is_interface_class(obj):
        return False
    module = getattr(obj, "__module__", "") or ""
    if obj in _TORCH_SCRIPT_CLASSES or (module == "torch.jit" and obj.__name__ in _TORCH_JIT_SCRIPT_CLASSES):
        return True
    if resolver.in_package(module, "torch", *_FOREIGN_MODULES) or _is_enum(obj):
        return False
    routines = [member for member in vars(obj).values() if inspect.isfunction(member)]
    return bool(routines) and all(hasattr(routine, "__code__") for routine in routines)


def _is_enum(obj: type) -> bool:
    return issubclass(obj, enum.Enum)


def script_class(py_class: type) -> type:
    """`tsjit.script(cls)`: compile the class (all its methods) and return it, as torch.jit.script does."""
    script_class_type(py_class)
    return py_class


def script_class_type(py_class: type, loc=None) -> T.ClassType:
    """The ClassType of a Python class, compiled on first use: registered before its methods compile so
    that they can name the class (construct it, take it as an argument), then `__init__`, then the rest."""
    with _lock:
        class_type = _class_types.get(py_class)
        if class_type is not None:
            return class_type
        class_type = T.ClassType(claim_qualified_name(qualified_class_name(py_class)))
        class_type.unresolved_class_attributes = class_attribute_names(py_class)
        _class_types[py_class] = class_type
        _python_classes[class_type.qualified_name] = py_class
        try:
            _define_methods(py_class, class_type)
            _compile_methods(class_type, loc)
        except BaseException:
            del _class_types[py_class]
            raise
        return class_type


def class_attribute_names(py_class: type) -> frozenset[str]:
    """Names bound in the class body to plain values (`K = 3`, `k: Final[int] = 2`): torch.jit's "unresolved
    class attributes", which script code cannot read."""
    names = {name for name, member in vars(py_class).items()
             if not name.startswith("__") and not inspect.isroutine(member)
             and not isinstance(member, staticmethod | classmethod | property)}
    names |= {name for name in vars(py_class).get("__annotations__", {}) if not name.startswith("__")}
    return frozenset(names)


def _define_methods(py_class: type, class_type: T.ClassType) -> None:
    """One lazily compiled GraphFunction per method of the class body (static methods and ignored methods
    are not methods of the ClassType), after the getter and setter methods of its properties."""
    for name, found in script_properties(py_class):
        getter = _define_method(class_type, f"__{name}_getter", found.fget)
        setter = _define_method(class_type, f"__{name}_setter", found.fset) if found.fset is not None else None
        class_type.properties[name] = (getter, setter)
    for name, member in vars(py_class).items():
        if inspect.isfunction(member) and not is_ignored(member):
            _define_method(class_type, name, member)


def _define_method(class_type: T.ClassType, name: str, function: Any) -> str:
    definition = get_jit_def(function, name, self_name=class_type.name)
    defaults = {n: p.default for n, p in inspect.signature(function).parameters.items()
                if p.default is not inspect.Parameter.empty}
    class_type.methods[name] = GraphFunction(f"{class_type.qualified_name}.{name}", definition,
                                             resolver.PythonResolver.for_function(function), defaults,
                                             ClassSelfBinding(class_type))
    return name


def script_properties(py_class: type) -> list[tuple[str, property]]:
    """The properties of a class TorchScript compiles (see script_property), by name as inspect.getmembers
    lists them. Each compiles to methods `__<name>_getter` and `__<name>_setter`, which reading and assigning
    the attribute call."""
    names = [name for name, _ in inspect.getmembers(py_class, lambda member: isinstance(member, property))]
    return [(name, found) for name in names if (found := script_property(py_class, name)) is not None]


def script_property(py_class: type, name: str) -> property | None:
    """Property `name` of the class, unless TorchScript leaves it to Python: named in
    `__jit_unused_properties__`, or its getter ignored."""
    found = inspect.getattr_static(py_class, name, None)
    if not isinstance(found, property) or found.fget is None or is_ignored(found.fget):
        return None
    return None if name in getattr(py_class, "__jit_unused_properties__", ()) else found


def _compile_methods(class_type: T.ClassType, loc) -> None:
    """`__init__` first (it declares the attributes), then every other method in definition order."""
    methods = class_type.methods
    for name in sorted(methods, key=lambda n: n != "__init__"):
        methods[name].ensure_defined(loc)


def python_class_of(class_type: T.Type) -> type | None:
    """The Python class a script ClassType was compiled from, or None."""
    if not isinstance(class_type, T.ClassType) or class_type.is_module:
        return None
    return _python_classes.get(class_type.qualified_name)


# ==============================================================================================================
# sugared values
# ==============================================================================================================
class ClassSelfBinding:
    """What a method's `self` is: a plain value of the class type. (In `__init__`, assigning an attribute the
    class does not have yet declares it: sugared_value.set_class_attribute.)"""

    def __init__(self, class_type: T.ClassType):
        self.class_type = class_type

    def make_sugared(self, value: Value) -> SugaredValue:
        value.set_type(self.class_type)
        return SimpleValue(value)


class ScriptClassValue(SugaredValue):
    """A script class named in TorchScript: calling it constructs an object; its attributes are its static
    methods and whatever Python finds on it (C++ PythonClassValue)."""

    def __init__(self, class_type: T.ClassType, py_class: type):
        self.class_type = class_type
        self.py_class = py_class

    def kind(self) -> str:
        return f"class '{self.class_type.annotation_str()}'"

    def call(self, loc, emitter, args: list, kwargs: dict, n_binders: int = 1) -> SugaredValue:
        """`C(args)`: prim::CreateObject, then `__init__` called on it with prim::CallMethod."""
        graph = emitter.graph
        obj = insert_node(graph, prim.CreateObject, [], self.class_type, loc).output()
        if "__init__" in self.class_type.methods:
            MethodValue(obj, ["__init__"]).call(loc, emitter, args, kwargs, 0)
        elif args or kwargs:
            raise CompileError(f"{self.class_type.annotation_str()}() takes no arguments (it defines no "
                               "__init__)", loc)
        return SimpleValue(obj)

    def attr(self, loc, emitter, field: str) -> SugaredValue:
        static = inspect.getattr_static(self.py_class, field, None)
        if isinstance(static, staticmethod):
            return resolver.static_method_value(static.__func__, emitter, loc)
        member = getattr(self.py_class, field, _MISSING)
        if member is _MISSING:
            raise CompileError(f"Tried to lookup unknown attribute on class {self.class_type.annotation_str()}",
                               loc)
        return resolver.to_sugared_value(member, emitter, loc)


_MISSING = object()


# ==============================================================================================================
# the resolver's hooks
# ==============================================================================================================
def class_value_hook(obj: Any, emitter, loc) -> SugaredValue | None:
    """A Python class named in script code: its ScriptClassValue (compiling the class on first use)."""
    if not is_script_class_candidate(obj):
        return None
    return ScriptClassValue(script_class_type(obj, loc), obj)


def type_hook(obj: Any, loc) -> T.Type | None:
    """A Python class used as an annotation (`p: Point`, `List[Point]`, `-> "Point"`): its ClassType."""
    return script_class_type(obj, loc) if is_script_class_candidate(obj) else None


def _register_hooks() -> None:
    if class_value_hook not in resolver.CLASS_VALUE_HOOKS:
        resolver.CLASS_VALUE_HOOKS.append(class_value_hook)
    if type_hook not in resolver.TYPE_HOOKS:
        resolver.TYPE_HOOKS.append(type_hook)


_register_hooks()


# ==============================================================================================================
# the Python boundary
# ==============================================================================================================
def contains_class(type_: T.Type) -> bool:
    """Whether values of `type_` may hold script objects (so crossing the Python boundary converts them)."""
    if python_class_of(type_) is not None or (isinstance(type_, T.InterfaceType) and not type_.is_module):
        return True
    return any(contains_class(t) for t in type_.contained_types())


def to_script_value(value: Any, expected: T.Type) -> Any:
    """A Python argument for a parameter of type `expected`, instances of script classes made runtime Objects
    with their attributes copied (recursively, as torch.jit's toIValue does); other values unchanged. Where
    an interface is expected, the instance's own class (compiled now) must implement it."""
    if isinstance(expected, T.InterfaceType) and is_script_class_candidate(type(value)):
        own = script_class_type(type(value))
        return to_script_value(value, own) if own.is_subtype_of(expected) else value
    py_class = python_class_of(expected)
    if py_class is not None and isinstance(value, py_class):
        return Object(expected, {a.name: to_script_value(getattr(value, a.name), a.type)
                                 for a in expected.attributes})
    return _map_containers(value, expected, to_script_value)


def from_script_value(value: Any, type_: T.Type) -> Any:
    """A result for Python: runtime Objects of script classes become instances of their Python class (made
    without calling `__init__`, their attributes set), as torch.jit's toPyObject does."""
    if isinstance(value, Object):
        py_class = python_class_of(value.type)
        if py_class is None:
            return value
        instance = py_class.__new__(py_class)
        for attribute in value.type.attributes:
            setattr(instance, attribute.name, from_script_value(getattr(value, attribute.name), attribute.type))
        return instance
    return _map_containers(value, type_, from_script_value)


def _map_containers(value: Any, type_: T.Type, convert) -> Any:
    """`convert` applied to the elements of lists, tuples, dicts and optionals whose types hold classes."""
    if not contains_class(type_) or value is None:
        return value
    if isinstance(type_, T.OptionalType):
        return convert(value, type_.elem)
    if isinstance(type_, T.ListType) and isinstance(value, list):
        return [convert(v, type_.elem) for v in value]
    if isinstance(type_, T.TupleType) and isinstance(value, tuple):
        return tuple(convert(v, t) for v, t in zip(value, type_.elements))
    if isinstance(type_, T.DictType) and isinstance(value, dict):
        return {k: convert(v, type_.value) for k, v in value.items()}
    return value
