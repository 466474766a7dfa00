"""Constants in printed code: C++ IValue::repr with the Python printer's hook for the constant table.

    3   -1   2.   -0.   0.10000000000000001   1e+20   inf   nan   2.+1.j   True   None   "a\\n"
    torch.device("cpu")   __torch__.Color.RED   (1, "x")   (2,)   [1, 2]   annotate(List[int], [])
    annotate(List[Optional[int]], [1, None])   {"a": 1}   annotate(Dict[str, Tensor],{})

Values that cannot be written as literals (tensors, objects, strings with non-ASCII characters and containers
of them) go to the constant table instead; the printer decides that through `goes_to_constant_table` and
passes itself as `print_member`, so members of containers are checked too.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import torch

from tsjit.errors import SerializationError
from tsjit.ir import types as T
from tsjit.ir.literals import format_complex, format_double, quote_string
from tsjit.ir.printer import EnumValue

# prints one member of a container (the printer's print_constant: it may send the member to the table)
MemberPrinter = Callable[[Any, "T.Type | None"], str]


def element_type_inferable(element: T.Type) -> bool:
    """c10's elementTypeCanBeInferredFromMembers: a list of these needs no annotation."""
    return not isinstance(element, T.UnionType | T.OptionalType | T.NumberType | T.InterfaceType | T.AnyType)


def same_tensor(a: torch.Tensor, b: torch.Tensor) -> bool:
    return (a.dtype == b.dtype and a.device == b.device and a.layout == b.layout and a.shape == b.shape
            and bool(torch.equal(a, b)))


def goes_to_constant_table(value: Any) -> bool:
    """Tensors, objects and values holding non-ASCII strings are printed as `CONSTANTS.c<i>`."""
    return isinstance(value, torch.Tensor) or isinstance(getattr(value, "type", None), T.ClassType) or \
        _has_non_ascii_string(value)


def _has_non_ascii_string(value: Any) -> bool:
    if isinstance(value, str):
        return not value.isascii()
    if isinstance(value, list | tuple):
        return any(_has_non_ascii_string(v) for v in value)
    if isinstance(value, dict):
        return any(_has_non_ascii_string(k) or _has_non_ascii_string(v) for k, v in value.items())
    return False


def format_constant(print_member: MemberPrinter, value: Any, static_type: T.Type | None,
                    type_printer: T.TypePrinter | None = None) -> str:
    """IValue::repr of a constant whose members may still go to the constant table; `type_printer` spells the
    named types of annotations (see Type.annotation_str)."""
    if value is None:
        return "None"
    if isinstance(value, EnumValue | enum.Enum):  # an IntEnum member is also an int
        return f"{T.enum_type_of_member(value).annotation_str(type_printer)}.{value.name}"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_double(value)
    if isinstance(value, complex):
        return format_complex(value)
    if isinstance(value, str):
        return quote_string(value)
    if isinstance(value, torch.device):
        return f"torch.device({quote_string(str(value))})"
    return _format_container(print_member, value, static_type, type_printer)


def _format_container(print_member: MemberPrinter, value: Any, static_type: T.Type | None,
                      type_printer: T.TypePrinter | None) -> str:
    if isinstance(value, tuple):
        return _format_tuple(print_member, value, static_type, type_printer)
    if isinstance(value, list):
        return _format_list(print_member, value, static_type, type_printer)
    if isinstance(value, dict):
        return _format_dict(print_member, value, static_type, type_printer)
    raise SerializationError(f"cannot print a constant of Python type {type(value).__name__}")


def _format_tuple(print_member: MemberPrinter, value: tuple, static_type: T.Type | None,
                  type_printer: T.TypePrinter | None) -> str:
    is_tuple_type = isinstance(static_type, T.TupleType) and len(static_type.elements) == len(value)
    elements = static_type.elements if is_tuple_type else (None,) * len(value)
    prefix = static_type.annotation_str(type_printer) if is_tuple_type and static_type.qualified_name else ""
    body = ", ".join(print_member(v, t) for v, t in zip(value, elements))
    return f"{prefix}({body},)" if len(value) == 1 else f"{prefix}({body})"


def _format_list(print_member: MemberPrinter, value: list, static_type: T.Type | None,
                 type_printer: T.TypePrinter | None) -> str:
    list_type = static_type if isinstance(static_type, T.ListType) else _inferred_type(value, T.ListType)
    body = "[" + ", ".join(print_member(v, list_type.elem) for v in value) + "]"
    if value and element_type_inferable(list_type.elem):
        return body
    return f"annotate({list_type.annotation_str(type_printer)}, {body})"


def _format_dict(print_member: MemberPrinter, value: dict, static_type: T.Type | None,
                 type_printer: T.TypePrinter | None) -> str:
    dict_type = static_type if isinstance(static_type, T.DictType) else _inferred_type(value, T.DictType)
    body = "{" + ", ".join(f"{print_member(k, dict_type.key)}: "
                           f"{print_member(v, dict_type.value)}" for k, v in value.items()) + "}"
    if value and element_type_inferable(dict_type.value):
        return body
    return f"annotate({dict_type.annotation_str(type_printer)},{body})"


def _inferred_type(value: Any, expected: type) -> T.Type:
    try:
        inferred = T.type_of(value)
    except Exception:  # noqa: BLE001 - empty or mixed containers have no inferable type
        inferred = None
    if isinstance(inferred, expected):
        return inferred
    if expected is T.ListType:
        return T.ListType(T.AnyType.get())
    return T.DictType(T.StringType.get(), T.AnyType.get())
