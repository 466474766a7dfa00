"""Python `enum.Enum` classes in TorchScript: their EnumTypes and what their names mean in script code.

    class Color(Enum):            Enum<__torch__.Color>, value type int, members (RED, 1), (GREEN, 2)
        RED = 1
        GREEN = 2

    Color.RED      prim::Constant[value=__torch__.Color.RED]  (a global holding a member is the same constant)
    for c in Color prim::Constant[value=[__torch__.Color.RED, __torch__.Color.GREEN]], iterated as a list
    c.name         prim::EnumName        c.value    prim::EnumValue (typed by the enum's value type)
    c == d         aten::eq.enum         c: Color   an argument of type Enum<__torch__.Color>

At run time an enum value is the Python class's own member (so module attributes, arguments and results need no
conversion); members of enums read from graph text or archives, which have no Python class, are EnumValues.
The values of one enum must all be ints, all floats or all strs, as in torch.jit, whose error messages these are.
The class itself is no value: it cannot be called, indexed or passed around.

The resolver asks `enum_class_value` and `enum_member_value` about Python objects, annotations reach
`enum_type_hook`, `SimpleValue.attr` reaches `enum_field`, `tsjit.ir.types.enum_type_of_member` (and so
`type_of`) reaches `enum_type_of`, and calls from Python pass their arguments through `to_enum_value`.
"""

from __future__ import annotations

import enum
import threading
import weakref
from typing import Any

from tsjit.errors import CompileError, TsjitError
from tsjit.frontend.sugared_value import SimpleValue, SugaredValue, insert_node
from tsjit.ir import types as T
from tsjit.ir.graph import Value
from tsjit.ir.symbols import prim

# the value types an enum may have, from the Python types of its values (anything else is `Any`, as torch.jit
# spells an annotation it cannot read)
_VALUE_TYPES: dict[type, T.Type] = {int: T.IntType.get(), float: T.FloatType.get(), str: T.StringType.get(),
                                    bool: T.BoolType.get(), type(None): T.NoneType.get()}
_SUPPORTED = (T.IntType, T.FloatType, T.StringType)

# weak both ways: enum classes made at run time (in a function, by enum.Enum("Name", ...)) go when unused
_enum_types: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_python_classes: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # the other way round
_lock = threading.Lock()


def is_enum_class(obj: Any) -> bool:
    return isinstance(obj, type) and issubclass(obj, enum.Enum)


def enum_type_of(py_class: type, loc=None) -> T.EnumType:
    """The EnumType of a Python Enum class, made once per class; errors point at `loc` when there is one."""
    # breaks a real cycle: concrete_module_type -> resolver -> enum_values
    from tsjit.frontend.concrete_module_type import claim_qualified_name, qualified_class_name

    with _lock:
        found = _enum_types.get(py_class)
        if found is None:
            members = [(member.name, member.value) for member in py_class]
            value_type = _value_type(py_class, [value for _, value in members], loc)
            found = T.EnumType(claim_qualified_name(qualified_class_name(py_class)), value_type, members)
            _enum_types[py_class] = found
            _python_classes[found] = py_class
    return found


def _value_type(py_class: type, values: list, loc) -> T.Type:
    """torch.jit's rule: the value types unified in order; int, float or str."""
    if not values:
        _fail(f"No enum values defined for: '{py_class.__qualname__}'", loc)
    distinct = list(dict.fromkeys(_VALUE_TYPES.get(type(v), T.AnyType.get()) for v in values))
    unified = distinct[0]
    for index, value_type in enumerate(distinct[1:], start=1):
        joined = T.unify_types(unified, value_type)
        if joined is None:
            _fail(f"Could not unify type list since element {index} of type {value_type.annotation_str()} did not "
                  f"match the types before it ({unified.annotation_str()})", loc)
        unified = joined
    if not isinstance(unified, _SUPPORTED):
        _fail(f"Cannot create Enum with value type '{unified.annotation_str()}', only int, float and string are "
              "supported", loc)
    return unified


def _fail(message: str, loc) -> None:
    raise CompileError(message, loc) if loc is not None else TsjitError(message)


class EnumClassValue(SugaredValue):
    """An Enum class named in script code: its members are constants, iterating it gives the list of them."""

    def __init__(self, py_class: type, enum_type: T.EnumType):
        self.py_class = py_class
        self.enum_type = enum_type

    def kind(self) -> str:
        return "EnumClass"

    def attr(self, loc, emitter, field: str) -> SugaredValue:
        member = self.py_class.__members__.get(field)
        if member is None:
            raise CompileError(f"{self.enum_type.schema_str()}' has no attribute '{field}'", loc)
        return SimpleValue(emitter.graph.insert_constant(member, self.enum_type, source_range=loc))

    def iter(self, loc, emitter) -> SugaredValue:
        members = list(self.py_class)
        return SimpleValue(emitter.graph.insert_constant(members, T.ListType(self.enum_type), source_range=loc))

    def len(self, loc, emitter) -> Value:
        return self.as_value(loc, emitter)  # torch.jit: "EnumClass cannot be used as a value"


def enum_field(value: Value, loc, emitter, field: str) -> SugaredValue:
    """`c.name` and `c.value` of an enum value; enums have no other attributes or methods."""
    enum_type = value.type
    if field == "name":
        return SimpleValue(insert_node(emitter.graph, prim.EnumName, [value], T.StringType.get(), loc).output())
    if field == "value":
        return SimpleValue(insert_node(emitter.graph, prim.EnumValue, [value], enum_type.value_type, loc).output())
    raise CompileError(f"'{enum_type.schema_str()}' object has no attribute or method '{field}'.", loc)


def to_enum_value(value: Any, expected: T.Type) -> Any:
    """A Python argument for a parameter of type `expected`, enum members made members of the expected enum by
    their name and value, as torch.jit converts them: a Python member, or an EnumValue for an enum without a
    Python class (one loaded from an archive). Members of IntEnums where no enum is expected are ints, as
    torch.jit's toIValue takes them (`print` shows `2`, not `Enum<Level.HIGH>`). Other values are unchanged."""
    if isinstance(value, enum.Enum | T.EnumValue) and isinstance(expected, T.EnumType):
        if (value.name, value.value) not in expected.names_values:
            return value  # not a member: the type check refuses it
        py_class = _python_classes.get(expected)
        return py_class[value.name] if py_class is not None else T.EnumValue(expected, value.name, value.value)
    if isinstance(value, enum.IntEnum):
        return int(value)
    if isinstance(expected, T.OptionalType) and value is not None:
        return to_enum_value(value, expected.elem)
    if isinstance(expected, T.ListType) and isinstance(value, list):
        return [to_enum_value(v, expected.elem) for v in value]
    if isinstance(expected, T.TupleType) and isinstance(value, tuple) and len(value) == len(expected.elements):
        return tuple(to_enum_value(v, t) for v, t in zip(value, expected.elements))
    if isinstance(expected, T.DictType) and isinstance(value, dict):
        return {k: to_enum_value(v, expected.value) for k, v in value.items()}
    return value


# ---- the hooks -----------------------------------------------------------------------------------------------
def enum_class_value(obj: Any, emitter, loc) -> SugaredValue | None:
    """The resolver's rule for an Enum class named in script code."""
    return EnumClassValue(obj, enum_type_of(obj, loc)) if is_enum_class(obj) else None


def enum_member_value(obj: Any, emitter, loc) -> SugaredValue | None:
    """The resolver's rule for a global or closure variable holding an enum member: a constant."""
    if not isinstance(obj, enum.Enum):
        return None
    enum_type = enum_type_of(type(obj), loc)
    return SimpleValue(emitter.graph.insert_constant(obj, enum_type, source_range=loc))


def enum_type_hook(obj: Any, loc) -> T.Type | None:
    """An Enum class used as an annotation (`c: Color`, `List[Color]`)."""
    return enum_type_of(obj, loc) if is_enum_class(obj) else None


if enum_type_of not in T.ENUM_CLASS_HOOKS:
    T.ENUM_CLASS_HOOKS.append(enum_type_of)
