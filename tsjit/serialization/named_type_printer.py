"""Printing named types (classes, named tuples, interfaces, enums, free functions) into archive code files.

    class M(Module):                         class Pair(NamedTuple):      class Color(Enum):
      __parameters__ = ["w", ]                 first : Tensor               RED = 1
      __buffers__ = []                         second : int                 GREEN = 2
      w : Tensor
      k : Final[int] = 3                     class I(ModuleInterface):
      def forward(self: __torch__.M,           def forward(self, x: Tensor) -> Tensor:
        x: Tensor) -> Tensor:                    pass
        ...

Methods are printed with their `self` typed, hooks after them (named in `__forward_hooks__` /
`__forward_pre_hooks__`), as torch's PythonPrint::printNamedType does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tsjit.errors import SerializationError
from tsjit.ir import types as T
from tsjit.ir.literals import format_double
from tsjit.serialization.python_printer import PythonPrinter, is_valid_identifier


class NamedTypePrinter(PythonPrinter):
    """A PythonPrinter that also prints whole named types; `class_hooks(class_type)` gives a module class's
    forward pre-hooks and hooks (two lists of functions)."""

    def __init__(self, *args: Any, class_hooks: Callable[[T.ClassType], tuple[list, list]] | None = None,
                 **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.class_hooks = class_hooks or (lambda class_type: ([], []))

    def print_named_type(self, named_type) -> None:
        """A class, named tuple, interface, enum or (top-level) function, as its archive file holds it."""
        if isinstance(named_type, T.FunctionType):
            self.print_function(named_type.function)
        elif isinstance(named_type, T.ClassType):
            self.print_class(named_type)
        elif isinstance(named_type, T.TupleType):
            self.print_named_tuple(named_type)
        elif isinstance(named_type, T.InterfaceType):
            self.print_interface(named_type)
        elif isinstance(named_type, T.EnumType):
            self.print_enum(named_type)
        else:
            raise SerializationError(f"cannot print the named type {named_type!r}")

    def print_class(self, class_type: T.ClassType) -> None:
        """`class M(Module):` with `__parameters__`/`__buffers__` (modules), attribute declarations,
        `Final` constants and methods (their `self` typed)."""
        methods = list(class_type.methods.values())
        if any(getattr(method, "graph", None) is None for method in methods):
            return  # a class bound from native code: the loader must know it already
        pre_hooks, hooks = self.class_hooks(class_type)
        self.write(f"class {class_type.name}{'(Module)' if class_type.is_module else ''}:\n")
        self.level += 1
        if class_type.is_module:
            self.print_parameter_lists(class_type)
            self.print_hook_lists(pre_hooks, hooks)
        self.print_attribute_declarations(class_type)
        for name, value in class_type.constants.items():
            value_type = T.type_of(value)
            annotation = value_type.annotation_str(self.type_names)
            self.line(f"{name} : Final[{annotation}] = {self.print_constant(value, value_type)}")
        for method in [*methods, *_unique_by_name([*hooks, *pre_hooks])]:
            self.print_function(method)
        self.level -= 1

    def print_parameter_lists(self, class_type: T.ClassType) -> None:
        parameters = "".join(f'"{a.name}", ' for a in class_type.attributes if a.is_parameter)
        buffers = "".join(f'"{a.name}", ' for a in class_type.attributes if a.is_buffer)
        self.line(f"__parameters__ = [{parameters}]")
        self.line(f"__buffers__ = [{buffers}]")

    def print_hook_lists(self, pre_hooks: list, hooks: list) -> None:
        """`__forward_pre_hooks__ = ["name", ]` and `__forward_hooks__`, for modules that have hooks."""
        for label, functions in (("__forward_pre_hooks__", pre_hooks), ("__forward_hooks__", hooks)):
            if functions:
                names = "".join(f'"{function.name}", ' for function in functions)
                self.line(f"{label} = [{names}]")

    def print_attribute_declarations(self, class_type: T.ClassType) -> None:
        """`name : Type`; names that are not identifiers (ModuleList's "0") go through `__annotations__`."""
        for index, attribute in enumerate(class_type.attributes):
            self.deps.add_contained(attribute.type)
            annotation = attribute.type.annotation_str(self.type_names)
            if is_valid_identifier(attribute.name):
                self.line(f"{attribute.name} : {annotation}")
                continue
            if index == 0:
                self.line("__annotations__ = []")
            self.line(f'__annotations__["{attribute.name}"] = {annotation}')

    def print_named_tuple(self, tuple_type: T.TupleType) -> None:
        self.write(f"class {tuple_type.qualified_name.rpartition('.')[2]}(NamedTuple):\n")
        self.level += 1
        for name, element in zip(tuple_type.names, tuple_type.elements):
            self.line(f"{name} : {element.annotation_str(self.type_names)}")
        self.level -= 1

    def print_interface(self, interface: T.InterfaceType) -> None:
        base = "ModuleInterface" if interface.is_module else "Interface"
        self.write(f"class {interface.name}({base}):\n")
        self.level += 1
        for schema in interface.methods.values():
            parameters = "".join(f", {a.name}: {a.type.annotation_str(self.type_names)}" for a in schema.arguments[1:])
            for argument in (*schema.arguments[1:], *schema.returns):
                self.deps.add_contained(argument.type)
            return_type = schema.returns[0].type if schema.returns else T.NoneType.get()
            self.line(f"def {schema.name}(self{parameters}) -> {return_type.annotation_str(self.type_names)}:")
            self.line("  pass")
        self.level -= 1

    def print_enum(self, enum_type: T.EnumType) -> None:
        """`class Color(Enum):` with `RED = 1`; string values are quoted without escapes, as torch does."""
        self.write(f"class {enum_type.name}(Enum):\n")
        quote = '"' if isinstance(enum_type.value_type, T.StringType) else ""
        self.level += 1
        for name, value in enum_type.names_values:
            self.line(f"{name} = {quote}{_plain_value(value)}{quote}")
        self.level -= 1


def _unique_by_name(functions: list) -> list:
    """The functions with distinct names (a hook registered twice is printed once)."""
    seen: dict[str, Any] = {}
    for function in functions:
        seen.setdefault(function.name, function)
    return list(seen.values())


def _plain_value(value: Any) -> str:
    """C++ `operator<<` of an IValue: floats like constants, everything else as is."""
    return format_double(value) if isinstance(value, float) else str(value)
