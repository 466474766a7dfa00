"""Python functions compiled once per argument types: parameters annotated by an abstract collection, and
unannotated parameters given something other than a Tensor.

torch's Python library annotates some parameters with what no TorchScript type is, such as
`torch.signal.windows.general_cosine(M, *, a: Iterable, ...)`, and leaves others unannotated that take ints
(`general_cosine`'s and `general_hamming`'s `M`). TorchScript has no type for "any iterable", and reads an
unannotated parameter as a Tensor. Such a parameter is *open*: a call compiles the function with it typed by the
call's argument, as if the source had said that type (`a: List[float], M: int` for `general_cosine(10, a=[0.5,
0.5])`), once per function and argument types, each specialization named apart (`general_cosine__1`) so that
archives keep them apart. `isinstance(a, Iterable)` inside is decided by that type (the resolver reads `Iterable`
in a type position as the generic TorchScript types that are iterable; see `ABSTRACT_COLLECTIONS`).

A call whose unannotated arguments are all Tensors (and which has no abstract-collection parameter) calls the
function compiled as TorchScript compiles it; torch.jit rejects the other calls ("Unknown type name 'Iterable'",
"Expected a value of type 'Tensor'"), so they compile where torch.jit's would not, and nothing else changes.
`script(fn)` itself compiles `fn` as TorchScript does: only callers inside a program give open parameters types.
"""

from __future__ import annotations

import collections.abc
import inspect
import threading
import typing
import weakref
from typing import Any

from tsjit.frontend.example_types import with_parameter_types
from tsjit.frontend.sugared_value import FunctionValue, SugaredValue
from tsjit.frontend.tree_views import Decl
from tsjit.ir import types as T
from tsjit.ir.graph import Value

# abstract collection classes (bare or subscripted) -> the generic TorchScript types `isinstance` checks them as
ABSTRACT_COLLECTIONS: dict[Any, tuple[T.Type, ...]] = {
    collections.abc.Iterable: (T.AnyListType.get(), T.AnyTupleType.get(), T.StringType.get(), T.TensorType.get()),
    collections.abc.Sequence: (T.AnyListType.get(), T.AnyTupleType.get(), T.StringType.get()),
    collections.abc.Collection: (T.AnyListType.get(), T.AnyTupleType.get(), T.StringType.get()),
}


def abstract_collection(annotation: Any) -> Any:
    """The abstract collection class an annotation object names (`Iterable`, `typing.Sequence[int]`), or None."""
    origin = typing.get_origin(annotation) or annotation
    try:
        return origin if origin in ABSTRACT_COLLECTIONS else None
    except TypeError:  # unhashable
        return None


def open_parameters(fn, resolve) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The names of `fn`'s parameters its signature leaves unannotated or annotates by an abstract collection, and
    those of the latter; `resolve(name)` reads an annotation written as a string (`from __future__ import
    annotations`)."""
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return (), ()
    annotations = {name: resolve(p.annotation) if isinstance(p.annotation, str) else p.annotation
                   for name, p in parameters.items() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    abstract = tuple(name for name, a in annotations.items() if abstract_collection(a) is not None)
    unannotated = tuple(name for name, a in annotations.items() if a is inspect.Parameter.empty)
    return unannotated + abstract, abstract


class OpenFunctionValue(SugaredValue):
    """A Python function with open parameters: a call compiles it for its argument types, then calls that."""

    def __init__(self, fn, names: tuple[str, ...], abstract: tuple[str, ...], qualified_name: str):
        self.fn = fn
        self.names = names  # the parameters the signature leaves unannotated or annotates by a collection
        self.abstract = abstract  # those annotated by a collection: every call specializes
        self.qualified_name = qualified_name

    def kind(self) -> str:
        return "function"

    def call(self, loc, emitter, args: list, kwargs: dict, n_binders: int = 1) -> SugaredValue:
        # breaks a real cycle: the resolver imports this module
        from tsjit.frontend.resolver import compiled_function_for

        positional = list(inspect.signature(self.fn).parameters)
        given = {**dict(zip(positional, args)), **kwargs}
        types = {name: given[name].type for name in self.names if isinstance(given.get(name), Value)}
        if self._specializes(types):
            # a `# type:` comment annotates what the signature leaves unannotated: only the source's Def tells
            annotated = _annotated_in_source(self.fn).difference(self.abstract)
            types = {name: type_ for name, type_ in types.items() if name not in annotated}
        if self._specializes(types):
            callee = _specialization(self.fn, self.qualified_name, types, loc)
        else:
            callee = compiled_function_for(self.fn, loc)
        return FunctionValue([callee]).call(loc, emitter, args, kwargs, n_binders)

    def _specializes(self, types: dict[str, T.Type]) -> bool:
        return bool(self.abstract) or any(not isinstance(t, T.TensorType) for t in types.values())


_lock = threading.RLock()
_annotated: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _annotated_in_source(fn) -> frozenset[str]:
    """The parameters `fn`'s source annotates (type comments included)."""
    # breaks a real cycle: ir_emitter imports the resolver, which imports this module
    from tsjit.frontend.ir_emitter import python_function_definition

    with _lock:
        found = _annotated.get(fn)
        if found is None:
            definition = python_function_definition(fn)[0]
            found = _annotated[fn] = frozenset(p.ident.name for p in definition.decl.params if p.type is not None)
        return found


_specializations: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _specialization(fn, qualified_name: str, types: dict[str, T.Type], loc):
    """The GraphFunction of `fn` with its open parameters typed by `types` (cached per function and types)."""
    # breaks a real cycle: ir_emitter imports the resolver, which imports this module
    from tsjit.frontend.ir_emitter import GraphFunction, python_function_definition

    key = tuple(sorted((name, type_.annotation_str()) for name, type_ in types.items()))
    with _lock:
        by_types = _specializations.setdefault(fn, {})
        function = by_types.get(key)
        if function is None:
            definition, resolver, defaults = python_function_definition(fn)
            decl = definition.decl
            params = [p.with_type(None) if p.ident.name in types else p for p in decl.params]
            definition = definition.with_decl(Decl.create(decl.range, params, decl.return_type))
            definition = with_parameter_types(definition, types)
            name = f"{qualified_name}__{len(by_types) + 1}"
            function = by_types[key] = GraphFunction(name, definition, resolver, defaults)
    function.ensure_defined(loc)
    return function
