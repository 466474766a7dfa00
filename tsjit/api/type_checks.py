"""`tsjit.isinstance(value, List[int])`: whether a value has a TorchScript type annotation's type, containers'
elements included, as torch.jit.isinstance answers in Python. In scripted code the name compiles to
prim::isinstance (frontend/resolver.py's special forms), which refines the value's type."""

from __future__ import annotations

import builtins
import types
import typing
from typing import Any

from tsjit.errors import TsjitError


def isinstance(obj: Any, target_type: Any) -> bool:  # noqa: A001  (torch.jit's name)
    """Whether `obj` has the type `target_type`: `List[T]`, `Tuple[...]` and `Dict[K, V]` when each
    element has its type (an empty container has any element type); `Optional` and `Union` when some option
    fits; other classes as Python's isinstance. A container type without its element types is an error."""
    origin, arguments = typing.get_origin(target_type), typing.get_args(target_type)
    if (origin or target_type) in (list, tuple, dict) and not arguments:
        name = getattr(target_type, "_name", None) or target_type.__name__  # `List` or `list`, as written
        if origin is dict or target_type is dict:
            raise TsjitError(f"Attempted to use {name} without contained types. Please add contained type, e.g. "
                             f"{name}[int, int]")
        raise TsjitError(f"Attempted to use {name} without a contained type. Please add a contained type, e.g. "
                         f"{name}[int]")
    if origin is None:
        return builtins.isinstance(obj, target_type)
    if origin is typing.Union or origin is types.UnionType:  # Optional[T] is Union[T, None]
        return any(isinstance(obj, option) for option in arguments)
    if origin is list:
        return builtins.isinstance(obj, list) and all(isinstance(element, arguments[0]) for element in obj)
    if origin is tuple:
        return (builtins.isinstance(obj, tuple) and len(obj) == len(arguments)
                and all(isinstance(element, argument) for element, argument in zip(obj, arguments)))
    if origin is dict:
        return builtins.isinstance(obj, dict) and all(
            isinstance(key, arguments[0]) and isinstance(value, arguments[1]) for key, value in obj.items())
    return builtins.isinstance(obj, origin)
