"""Interfaces: Python classes declaring method signatures, compiled to TorchScript InterfaceTypes.

`@tsjit.interface` (or torch.jit.interface, whose classes are recognized too) turns a class whose methods are
annotated declarations with a `pass` body into an InterfaceType named like a script class (`__torch__.<Class>`).
Any script class or module whose methods have compatible schemas implements it, so values of different classes
can flow through one annotation:

    @tsjit.interface
    class Scorer:                                 def use(s: Scorer, x: int) -> int:
        def score(self, x: int) -> int:               return s.score(x)
            pass
                                                  graph(%s.1 : InterfaceType<Scorer>, %x.1 : int):
                                                    %2 : int = prim::CallMethod[name="score"](%s.1, %x.1)

A module interface (a class deriving straight from nn.Module) only declares the methods of its body and is only
met by modules. Annotating a submodule with it (`sub: OneTwo` in the parent's class body) makes `self.sub` a
value of the interface type: its calls are prim::CallMethod on that value, dispatched at run time on the
object held, and the submodule may be swapped for any scripted module implementing the interface. The
submodule itself is scripted with the interface's methods as entry points (torch.jit's `interface_script`).

Methods are declared in name order, as torch.jit reads them (inspect.getmembers). The resolver reaches this
module through TYPE_HOOKS, which it fills on import.
"""

from __future__ import annotations

import inspect
import threading
import weakref
from typing import Any

import torch

from tsjit.errors import CompileError, TsjitError
from tsjit.frontend import resolver
from tsjit.frontend.concrete_module_type import claim_qualified_name, qualified_class_name
from tsjit.frontend.python_ast import get_jit_def
from tsjit.frontend.script_type_parser import ScriptTypeParser
from tsjit.frontend.tree_views import Pass
from tsjit.ir import types as T
from tsjit.ir.schema import Argument, FunctionSchema

_interface_types: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Python class -> InterfaceType
_lock = threading.RLock()


def interface(obj: type) -> type:
    """`@tsjit.interface`: declare `obj` a TorchScript interface, compiling its declarations now."""
    if not inspect.isclass(obj):
        raise TsjitError("interface must be applied to a class")
    is_module = issubclass(obj, torch.nn.Module)
    if (is_module and len(obj.__mro__) != 3) or (not is_module and len(obj.__mro__) > 2):
        raise TsjitError("TorchScript interface does not support inheritance yet. Please directly inherit from "
                         "'object' or 'nn.Module'.")
    interface_type(obj)
    return obj


def is_interface_class(obj: Any) -> bool:
    """Whether `obj` was declared an interface, by `tsjit.interface` or by torch.jit.interface."""
    return inspect.isclass(obj) and (obj in _interface_types or "__torch_script_interface__" in vars(obj))


def interface_type(py_class: type) -> T.InterfaceType:
    """The InterfaceType of an interface class, compiled on first use; registered before its declarations
    are read, so that they may name the interface itself."""
    with _lock:
        found = _interface_types.get(py_class)
        if found is not None:
            return found
        is_module = issubclass(py_class, torch.nn.Module)
        declared = T.InterfaceType(claim_qualified_name(qualified_class_name(py_class)), is_module=is_module)
        _interface_types[py_class] = declared
        try:
            for name, method in sorted(vars(py_class).items()):
                if inspect.isfunction(method):
                    declared.add_method(_method_schema(declared, name, method))
        except BaseException:
            del _interface_types[py_class]
            raise
        return declared


def _method_schema(declared: T.InterfaceType, name: str, method: Any) -> FunctionSchema:
    """One declaration's schema, `self` typed by the interface; its body must be `pass` (docstrings aside)."""
    definition = get_jit_def(method, name, self_name=declared.name)
    if definition.decl.return_type is None:
        raise CompileError("interface declarations must have a return type annotated.", definition.range)
    statements = definition.statements
    if len(statements) != 1 or not isinstance(statements[0], Pass):
        where = statements[-1].range if statements else definition.range
        raise CompileError("interfaces declarations should contain 'pass' statement.", where)
    params = definition.decl.params
    if not params:
        raise CompileError("interface methods must take self as their first argument", definition.range)
    parser = ScriptTypeParser(resolver.PythonResolver.for_function(method))
    schema = parser.parse_schema_from_def(definition, skip_self=True)
    arguments = [Argument(params[0].ident.name, declared), *schema.arguments]
    return FunctionSchema(name, "", arguments, list(schema.returns))


def incompatibility(declared: T.Type, actual: T.Type) -> str | None:
    """None if a value of type `actual` may be stored where `declared` is expected, else why not (for an
    interface, the method missing or incompatible)."""
    if actual.is_subtype_of(declared):
        return None
    if isinstance(declared, T.InterfaceType) and isinstance(actual, T.ClassType | T.InterfaceType):
        return (f"Object of type {actual.qualified_name} is not compatible with interface "
                f"{declared.qualified_name}\n{declared.why_not_implemented_by(actual)}")
    return f"Object of type {actual.annotation_str()} is not a subtype of {declared.annotation_str()}"


# ==============================================================================================================
# the resolver's hook
# ==============================================================================================================
def type_hook(obj: Any, loc) -> T.Type | None:
    """An interface class used as an annotation: its InterfaceType."""
    return interface_type(obj) if is_interface_class(obj) else None


if type_hook not in resolver.TYPE_HOOKS:
    resolver.TYPE_HOOKS.append(type_hook)
