"""Parameter types from example calls: what `script(obj, example_inputs=...)` gives the parameters that the
source leaves unannotated.

torch.jit runs the example calls under MonkeyType and reads its records when it compiles each function; tsjit
records the same itself, with a profile hook over the example calls: for every Python function they enter (a
module's forward and the methods and functions it calls), the types of the arguments, unified over the calls (Any
where they do not unify, an int and a float). While `example_types_in_use` is active, the Def of a recorded
function (python_ast.get_jit_def, the one place a Python function becomes a Def) carries those types.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
import types as python_types
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from tsjit.frontend.parser import parse_expression
from tsjit.frontend.tree_views import Decl, Def
from tsjit.ir import types as T
from tsjit.source.source_range import Source

ExampleTypes = dict[python_types.CodeType, dict[str, T.Type]]
_in_use: contextvars.ContextVar[ExampleTypes | None] = contextvars.ContextVar("tsjit_example_types", default=None)


def unified(seen: dict[str, list[T.Type]]) -> dict[str, T.Type]:
    """Each parameter's types over the calls, unified (Any where they do not unify)."""
    return {name: T.unify_type_list(types) or T.AnyType.get() for name, types in seen.items()}


def value_type(value: Any) -> T.Type | None:
    """The type an example value gives its parameter (None for values TorchScript has no type for: modules)."""
    try:
        return T.unshaped_type(T.type_of(value))
    except Exception:  # type_of names what it cannot type; such a parameter stays unannotated
        return None


def record_example_types(calls: Iterable[Callable[[], Any]]) -> ExampleTypes:
    """Run the calls, recording the argument types of every Python function they enter."""
    seen: dict[python_types.CodeType, dict[str, list[T.Type]]] = {}

    def profile(frame: python_types.FrameType, event: str, _: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        count = code.co_argcount + code.co_kwonlyargcount
        parameters = seen.setdefault(code, {})
        for name in code.co_varnames[:count]:
            type_ = value_type(frame.f_locals.get(name)) if name != "self" else None
            if type_ is not None:
                parameters.setdefault(name, []).append(type_)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        for call in calls:
            call()
    finally:
        sys.setprofile(previous)
    return {code: unified(parameters) for code, parameters in seen.items() if parameters}


@contextlib.contextmanager
def example_types_in_use(recorded: ExampleTypes) -> Iterator[None]:
    """Within the block, Defs of recorded functions carry the recorded parameter types."""
    token = _in_use.set(recorded)
    try:
        yield
    finally:
        _in_use.reset(token)


def recorded_types(fn: Callable) -> dict[str, T.Type] | None:
    """The recorded parameter types of `fn`, if examples ran it while example types are in use."""
    recorded = _in_use.get()
    code = getattr(fn, "__code__", None)
    return recorded.get(code) if recorded and code is not None else None


def with_parameter_types(definition: Def, types: dict[str, T.Type]) -> Def:
    """The Def with unannotated parameters named in `types` annotated by them (as if the source said so)."""
    params = [param.with_type(parse_expression(Source(types[param.ident.name].annotation_str(), "<example inputs>")))
              if param.type is None and param.ident.name in types else param for param in definition.decl.params]
    return definition.with_decl(Decl.create(definition.decl.range, params, definition.decl.return_type))
