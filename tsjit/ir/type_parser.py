"""Reading TorchScript types from text, in the three spellings PyTorch writes them.

    parse_type("int[]?", "schema")                      # as in FunctionSchema strings
    parse_type("Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)", "ir")   # as in graph text
    parse_type("Optional[List[int]]", "annotation")     # as Python annotations in printed code

A TypeParser reads from a Lexer, so the schema parser and the IR text parser call it in the middle of their
own token stream. The dialects:

- "schema": C++ SchemaTypeParser. Base names (`Tensor int SymInt float bool str Scalar ScalarType Layout
  MemoryFormat Device Generator Storage Stream complex Any ...`; also SymFloat, and PyObject, which torch 2.13
  prints in schemas of Python-registered ops but cannot read), type variables (any other lower-case name:
  `t`, `t1`, even `double`), `T?`, `T[]`, `(T, U)`, `Dict(K, V)`, `Union(A, B)`, `Future(T)`, `Await(T)`,
  `RRef(T)`, `__torch__.torch.classes.ns.Name`, and alias annotations `Tensor(a!)`, `t[](a)`,
  `Dict(str, t)(a)`.
  Each type comes in two versions: the *real* type as written and the *fake* type IR values carry, where
  ScalarType, Layout, MemoryFormat and SymInt are int (SymFloat float, SymBool bool).
- "ir": what the graph printer writes: the schema grammar (read as fake types, as torch's parse_ir does) plus
  refined tensors (`Float(2, *, requires_grad=0, device=cuda:0)`, `LongTensor`, `Tensor(2, *)`,
  `Tensor(requires_grad=0)`, `[Undefined]` suffix), `NamedTuple(a : int)`, `Future[T]`, `RRef[T]`,
  `Enum<__torch__.Color>`, `InterfaceType<I>` and class names such as `__torch__.M`.
- "annotation": `List[int]`, `Optional[Tensor]`, `Tuple[int, str]`, `Tuple[()]`, `Dict[str, Tensor]`,
  `Union[..]`, `Final[T]` (read as T), `Future[T]`, `number`, `torch.device`, qualified class names.

Named types (classes, enums, interfaces) come from the `resolve` callback (qualified name -> Type or None).
Unresolved names become placeholder types, one object per name per parser; custom classes
(`__torch__.torch.classes.*`) are one object per name per process, as in torch's custom class registry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from tsjit.errors import SourceParseError, TsjitError
from tsjit.ir import types as T
from tsjit.ir.alias_info import WILDCARD, AliasInfo, nest_alias_info
from tsjit.source.lexer import (
    TK_ARROW,
    TK_EOF,
    TK_IDENT,
    TK_NEWLINE,
    TK_NONE,
    TK_NONE_TYPE,
    TK_NUMBER,
    Lexer,
    Token,
)

Resolver = Callable[[str], "T.Type | None"]
DIALECTS = ("schema", "ir", "annotation")

_SCHEMA_BASE_TYPES: dict[str, T.Type] = {
    "Generator": T.GeneratorType.get(), "ScalarType": T.ScalarTypeType.get(),
    "Layout": T.LayoutType.get(), "MemoryFormat": T.MemoryFormatType.get(), "Storage": T.StorageType.get(),
    "QScheme": T.QSchemeType.get(), "Quantizer": T.QuantizerType.get(), "ConstQuantizerPtr": T.IntType.get(),
    "Device": T.DeviceType.get(), "DeviceIndex": T.IntType.get(), "Stream": T.StreamType.get(),
    "Scalar": T.NumberType.get(), "str": T.StringType.get(), "float": T.FloatType.get(),
    "complex": T.ComplexType.get(), "int": T.IntType.get(), "SymInt": T.SymIntType.get(),
    "SymFloat": T.SymFloatType.get(), "SymBool": T.SymBoolType.get(), "bool": T.BoolType.get(),
    "None": T.NoneType.get(), "NoneType": T.NoneType.get(), "Capsule": T.CapsuleType.get(),
    "Any": T.AnyType.get(), "AnyClassType": T.AnyClassType.get(), "AnyEnumType": T.AnyEnumType.get(),
    "PyObject": T.PyObjectType.get(),
}
_IR_BASE_TYPES = {**_SCHEMA_BASE_TYPES, "number": T.NumberType.get()}
# The names Python annotations use (`x: Tensor`, `torch.dtype`), shared with the script frontend's annotations.
ANNOTATION_BASE_TYPES: dict[str, T.Type] = {
    "Tensor": T.TensorType.get(), "LongTensor": T.TensorType.get(), "DoubleTensor": T.TensorType.get(),
    "FloatTensor": T.TensorType.get(), "int": T.IntType.get(), "float": T.FloatType.get(),
    "complex": T.ComplexType.get(), "bool": T.BoolType.get(), "str": T.StringType.get(),
    "None": T.NoneType.get(), "NoneType": T.NoneType.get(), "Any": T.AnyType.get(),
    "Device": T.DeviceType.get(), "device": T.DeviceType.get(), "Generator": T.GeneratorType.get(),
    "Stream": T.StreamType.get(), "Storage": T.StorageType.get(), "number": T.NumberType.get(),
    "Scalar": T.NumberType.get(), "AnyEnumType": T.AnyEnumType.get(), "AnyClassType": T.AnyClassType.get(),
    "Capsule": T.CapsuleType.get(), "list": T.AnyListType.get(), "tuple": T.AnyTupleType.get(),
    "SymInt": T.IntType.get(), "SymFloat": T.FloatType.get(), "SymBool": T.BoolType.get(),
    # torch's enum-like classes are ints in TorchScript (`torch.dtype` is a ScalarType code)
    "dtype": T.IntType.get(), "layout": T.IntType.get(), "memory_format": T.IntType.get(),
    "qscheme": T.IntType.get(),
}
# The types IR values carry for types that exist only in schemas.
_FAKE_TYPES: dict[T.Type, T.Type] = {
    T.ScalarTypeType.get(): T.IntType.get(), T.LayoutType.get(): T.IntType.get(),
    T.MemoryFormatType.get(): T.IntType.get(), T.SymIntType.get(): T.IntType.get(),
    T.SymFloatType.get(): T.FloatType.get(), T.SymBoolType.get(): T.BoolType.get(),
}
_TENSOR_FIELDS = frozenset(("requires_grad", "device", "strides", "SS"))
_REFINEMENT_STARTS = frozenset((TK_NUMBER, "*", ")"))
_ANNOTATION_MODULES = ("typing.", "torch.", "builtins.")


# Type arguments of a subscripted annotation; None stands for the `()` of `Tuple[()]`.
TypeArguments = list["T.Type | None"]


def _types(name: str, arguments: TypeArguments, count: int | None = None) -> list[T.Type]:
    """The type arguments of `name[...]`, checked: no `()`, and exactly `count` of them if given."""
    types = [t for t in arguments if t is not None]
    if len(types) != len(arguments) or not types or (count is not None and len(types) != count):
        expected = f"{count} type argument(s)" if count else "type arguments"
        raise TsjitError(f"{name}[...] takes {expected}")
    return types


def _one(name: str, constructor: Callable[[T.Type], T.Type]) -> Callable[[TypeArguments], T.Type]:
    return lambda arguments: constructor(*_types(name, arguments, 1))


def _tuple(arguments: TypeArguments) -> T.Type:
    return T.TupleType(()) if arguments == [None] else T.TupleType(tuple(_types("Tuple", arguments)))


def _dict(arguments: TypeArguments) -> T.Type:
    return T.DictType(*_types("Dict", arguments, 2))


def _union(arguments: TypeArguments) -> T.Type:
    return T.UnionType.create(_types("Union", arguments))


_GENERICS: dict[str, Callable[[TypeArguments], T.Type]] = {
    "List": _one("List", T.ListType), "list": _one("list", T.ListType),
    "Optional": _one("Optional", T.OptionalType), "Final": _one("Final", lambda t: t),
    "Future": _one("Future", T.FutureType), "Await": _one("Await", T.AwaitType),
    "RRef": _one("RRef", T.RRefType), "Tuple": _tuple, "tuple": _tuple, "Dict": _dict, "dict": _dict,
    "Union": _union,
}


def parse_type(text: str, dialect: str = "ir", resolve: Resolver | None = None) -> T.Type:
    """The type spelled by all of `text`. The schema dialect gives the type as written (`ScalarType`), the IR
    dialect the type IR values carry (`int`), as torch's parse_ir does."""
    lexer = Lexer(text)
    parsed = TypeParser(lexer, dialect, resolve).parse_type()
    lexer.next_if(TK_NEWLINE)
    lexer.expect(TK_EOF)
    return parsed


class TypeParser:
    """Parses types from a Lexer's current position in one dialect ("schema", "ir" or "annotation")."""

    def __init__(self, lexer: Lexer, dialect: str = "ir", resolve: Resolver | None = None):
        if dialect not in DIALECTS:
            raise ValueError(f"unknown type dialect {dialect!r}; expected one of {DIALECTS}")
        self.lexer = lexer
        self.dialect = dialect
        self._resolve = resolve
        self._placeholders: dict[str, T.Type] = {}
        self._next_fresh_alias = 0

    @property
    def made_fresh_alias_sets(self) -> bool:
        """Whether a bare `!` made a fresh alias set: their names count up through one schema."""
        return self._next_fresh_alias > 0

    @property
    def placeholders(self) -> dict[str, T.Type]:
        """The placeholder types this parser made for names nobody resolved, by qualified name."""
        return dict(self._placeholders)

    def parse_type(self) -> T.Type:
        """One type: as written for "schema" and "annotation", as IR values carry it for "ir"."""
        if self.dialect == "annotation":
            return self._parse_annotation()
        fake, real, _ = self.parse_fake_and_real_type()
        return real if self.dialect == "schema" else fake

    def parse_fake_and_real_type(self) -> tuple[T.Type, T.Type, AliasInfo | None]:
        """(type IR values carry, type as written, alias annotation) of one schema or IR type."""
        fake, real, alias_info = self._parse_primary()
        while True:
            token = self.lexer.cur()
            if token.kind == "[" and self.lexer.lookahead().kind == "]":
                self.lexer.next()
                self.lexer.next()
                fake, real = T.ListType(fake), T.ListType(real)
                alias_info = nest_alias_info(self.parse_alias_annotation(), alias_info)
            elif self.lexer.next_if("?"):
                fake = self._build(token, T.OptionalType, fake)
                real = self._build(token, T.OptionalType, real)
            else:
                return fake, real, alias_info

    def parse_alias_annotation(self) -> AliasInfo | None:
        """`(a)`, `(a!)`, `(a|b -> *)`, or `!` (a fresh set that is written); None if none follows."""
        lexer = self.lexer
        if lexer.next_if("!"):
            fresh = f"${self._next_fresh_alias}"
            self._next_fresh_alias += 1
            return AliasInfo((fresh,), (), is_write=True)
        if not lexer.next_if("("):
            return None
        before = self._parse_alias_sets()
        is_write = lexer.next_if("!")
        after = self._parse_alias_sets() if lexer.next_if(TK_ARROW) else before
        lexer.expect(")")
        return AliasInfo(before, after, is_write=is_write)

    def _parse_alias_sets(self) -> list[str]:
        """`a|b|*`; after a wildcard further names are not read (so `*|a` fails at `a`, as in torch)."""
        sets: list[str] = []
        while True:
            if self.lexer.next_if("*"):
                sets.append(WILDCARD)
            elif WILDCARD not in sets:
                sets.append(self.lexer.expect(TK_IDENT).text)
            if not self.lexer.next_if("|"):
                return list(dict.fromkeys(sets))

    # ------------------------------------------------------------------------------------ schema and IR

    def _parse_primary(self) -> tuple[T.Type, T.Type, AliasInfo | None]:
        """A type without `[]`/`?` suffixes."""
        token = self.lexer.cur()
        if token.kind == "(":
            elements = self.lexer.parse_list("(", ")", self._parse_element)
            tuple_type = self._build(token, T.TupleType, tuple(elements))
            return tuple_type, tuple_type, None
        if token.kind == TK_IDENT:
            compound = self._COMPOUND.get(token.text)
            if compound is not None and (self.dialect == "ir" or token.text in self._SCHEMA_COMPOUND):
                return compound(self)
            if self.dialect == "ir" and T.dtype_from_name(token.text.removesuffix("Tensor")) is not None:
                self.lexer.next()
                refined = self._parse_tensor_refinement(token.text)
                return refined, refined, self.parse_alias_annotation()
            if token.text == "__torch__" or (self.dialect == "ir" and self.lexer.lookahead().kind == "."):
                named = self._named_type(self._parse_qualified_name())
                return named, named, None
        real = self._parse_base_type()
        return _FAKE_TYPES.get(real, real), real, self.parse_alias_annotation()

    def _parse_element(self) -> T.Type:
        """A contained type: its alias annotation is dropped and it is the fake type, as in torch."""
        with self.lexer.nested():
            return self.parse_fake_and_real_type()[0]

    def _parse_base_type(self) -> T.Type:
        token = self.lexer.cur()
        if not (self.lexer.next_if(TK_NONE) or self.lexer.next_if(TK_NONE_TYPE)):
            self.lexer.expect(TK_IDENT)
        table = _SCHEMA_BASE_TYPES if self.dialect == "schema" else _IR_BASE_TYPES
        found = table.get(token.text)
        if found is not None:
            return found
        if self.dialect == "schema" and token.text[:1].islower():
            return T.VarType(token.text)
        resolved = self._resolve(token.text) if self._resolve else None
        if resolved is not None:
            return resolved
        raise SourceParseError(_unknown_type_message(token.text, self.dialect), token.range)

    def _parse_tensor(self) -> tuple[T.Type, T.Type, AliasInfo | None]:
        """`Tensor`, `Tensor(a!)`; in IR text also `Tensor(2, *)`, `Tensor(requires_grad=0)`, `Tensor()`."""
        name = self.lexer.next().text
        tensor = self._parse_tensor_refinement(name) if self.dialect == "ir" else T.TensorType.get()
        return tensor, tensor, self.parse_alias_annotation()

    def _parse_tensor_refinement(self, name: str) -> T.TensorType:
        """What follows a tensor name (`Tensor`, `Float`, `LongTensor`) in IR text: the parenthesized
        refinement, if any, and an `[Undefined]` suffix."""
        dtype = None if name == "Tensor" else T.dtype_from_name(name.removesuffix("Tensor"))
        fields: dict[str, Any] = {"dtype": dtype}
        if self._refinement_follows():
            fields.update(self._parse_tensor_details(rank_is_written=not name.endswith("Tensor")))
        fields["undefined"] = self._parse_undefined_suffix()
        return T.TensorType(**fields)

    def _refinement_follows(self) -> bool:
        """Whether a `(` after a tensor name starts sizes and options rather than an alias annotation."""
        if self.lexer.cur().kind != "(":
            return False
        first = self.lexer.lookahead()
        return first.kind in _REFINEMENT_STARTS or (first.kind == TK_IDENT and first.text in _TENSOR_FIELDS)

    def _parse_tensor_details(self, rank_is_written: bool) -> dict[str, Any]:
        """The parenthesized part of a refined tensor: dims, then strides/requires_grad/device."""
        start = self.lexer.cur()
        dims: list[int | None] = []
        options: dict[str, Any] = {}

        def item() -> None:
            token = self.lexer.cur()
            if token.kind == TK_IDENT and token.text != "SS":
                self._parse_tensor_option(options)
            elif options:
                self.lexer.report_error("'device' and 'requires_grad' should come after dimensions in the "
                                        "type specification")
            else:
                dims.append(self._parse_dim())

        self.lexer.parse_list("(", ")", item)
        if "strides" in options and len(options["strides"]) != len(dims):
            raise SourceParseError("Strides info is specified for some but not all dimensions", start.range)
        empty_parens = not dims and not options
        sizes = tuple(dims) if dims or rank_is_written or empty_parens else None
        return {"sizes": sizes, **options}

    def _parse_tensor_option(self, options: dict[str, Any]) -> None:
        field = self.lexer.expect(TK_IDENT)
        self.lexer.expect("=")
        if field.text == "strides":
            options["strides"] = tuple(self.lexer.parse_list("[", "]", self._parse_dim))
        elif field.text == "requires_grad":
            options["requires_grad"] = bool(self._parse_int())
        elif field.text == "device":
            options["device"] = self._parse_device()
        else:
            raise SourceParseError(f"Unexpected specifier '{field.text}'", field.range)

    def _parse_dim(self) -> int | None:
        """`3`, `*` (unknown) or `SS(-3)` (a symbolic size, stored as -3)."""
        if self.lexer.next_if("*"):
            return None
        if self.lexer.cur().kind == TK_IDENT and self.lexer.cur().text == "SS":
            self.lexer.next()
            self.lexer.expect("(")
            self.lexer.expect("-")
            size = -self._parse_int()
            self.lexer.expect(")")
            return size
        return self._parse_int()

    def _parse_int(self) -> int:
        token = self.lexer.expect(TK_NUMBER)
        try:
            if len(token.text) > 21:  # no size fits in more digits (and int() refuses 4,300 digits and more)
                raise ValueError
            return int(token.text)
        except ValueError:
            raise SourceParseError(f"expected an integer, found '{token.text}'", token.range) from None

    def _parse_device(self) -> torch.device:
        start = self.lexer.expect(TK_IDENT)
        text = start.text
        if self.lexer.next_if(":"):
            text += ":" + self.lexer.expect(TK_NUMBER).text
        try:
            return torch.device(text)
        except RuntimeError as error:
            raise SourceParseError(f"cannot parse device type '{text}' ({error})", start.range) from None

    def _parse_undefined_suffix(self) -> bool:
        lexer = self.lexer
        if lexer.cur().kind != "[" or lexer.lookahead().text != "Undefined":
            return False
        lexer.next()
        lexer.next()
        lexer.expect("]")
        return True

    def _parse_single_element(self, constructor: Callable[[T.Type], T.Type]) -> T.Type:
        """`Name(T)`, or in IR text also `Name[T]`."""
        name = self.lexer.next()
        close = "]" if self.dialect == "ir" and self.lexer.cur().kind == "[" else ")"
        elements = self.lexer.parse_list("[" if close == "]" else "(", close, self._parse_element)
        if len(elements) != 1:
            raise SourceParseError(f"{name.text} takes one type, got {len(elements)}", name.range)
        return self._build(name, constructor, elements[0])

    def _parse_future(self) -> tuple[T.Type, T.Type, None]:
        future = self._parse_single_element(T.FutureType)
        return future, future, None

    def _parse_await(self) -> tuple[T.Type, T.Type, None]:
        awaited = self._parse_single_element(T.AwaitType)
        return awaited, awaited, None

    def _parse_rref(self) -> tuple[T.Type, T.Type, None]:
        rref = self._parse_single_element(T.RRefType)
        return rref, rref, None

    def _parse_dict(self) -> tuple[T.Type, T.Type, AliasInfo | None]:
        name = self.lexer.next()
        self.lexer.expect("(")
        key = self._parse_element()
        self.lexer.expect(",")
        value = self._parse_element()
        self.lexer.expect(")")
        dict_type = self._build(name, T.DictType, key, value)
        return dict_type, dict_type, self.parse_alias_annotation()

    def _parse_union(self) -> tuple[T.Type, T.Type, AliasInfo | None]:
        name = self.lexer.next()
        members = self.lexer.parse_list("(", ")", self._parse_element)
        union = self._build(name, _create_union, tuple(members))
        return union, union, self.parse_alias_annotation()

    def _parse_named_tuple(self) -> tuple[T.Type, T.Type, None]:
        """IR text's `NamedTuple(a : int, b : Tensor)`."""
        name = self.lexer.next()
        fields: list[tuple[str, T.Type]] = []

        def field() -> None:
            field_name = self.lexer.expect(TK_IDENT).text
            self.lexer.expect(":")
            fields.append((field_name, self._parse_element()))

        self.lexer.parse_list("(", ")", field)
        named_tuple = self._build(name, T.TupleType, tuple(t for _, t in fields), tuple(n for n, _ in fields))
        return named_tuple, named_tuple, None

    def _parse_enum(self) -> tuple[T.Type, T.Type, None]:
        """IR text's `Enum<__torch__.Color>`."""
        enum_type = self._parse_angle_named(lambda name: T.EnumType(name, T.AnyType.get(), ()))
        return enum_type, enum_type, None

    def _parse_interface(self) -> tuple[T.Type, T.Type, None]:
        """IR text's `InterfaceType<OneIface>`."""
        interface = self._parse_angle_named(T.InterfaceType)
        return interface, interface, None

    def _parse_angle_named(self, placeholder: Callable[[str], T.Type]) -> T.Type:
        self.lexer.next()
        self.lexer.expect("<")
        name = self._parse_qualified_name()
        self.lexer.expect(">")
        return self._named_type(name, placeholder)

    _COMPOUND: dict[str, Callable[[TypeParser], tuple[T.Type, T.Type, AliasInfo | None]]] = {
        "Tensor": _parse_tensor, "Future": _parse_future, "Await": _parse_await, "RRef": _parse_rref,
        "Dict": _parse_dict, "Union": _parse_union, "NamedTuple": _parse_named_tuple, "Enum": _parse_enum,
        "InterfaceType": _parse_interface,
    }
    _SCHEMA_COMPOUND = frozenset(("Tensor", "Future", "Await", "RRef", "Dict", "Union"))

    # ------------------------------------------------------------------------------------------ annotations

    def _parse_annotation(self) -> T.Type:
        """A Python annotation: a (possibly dotted) name, subscripted for generic types."""
        start = self.lexer.cur()
        name = _strip_module(self._parse_annotation_name())
        generic = _GENERICS.get(name)
        if generic is not None and self.lexer.cur().kind == "[":
            arguments = self.lexer.parse_list("[", "]", self._parse_annotation_argument)
            return self._build(start, generic, arguments)
        found = ANNOTATION_BASE_TYPES.get(name)
        if found is not None:
            return found
        if generic is not None:
            raise SourceParseError(f"{name} needs type arguments in brackets", start.range)
        if "." in name:
            return self._named_type(name)
        resolved = self._resolve(name) if self._resolve else None
        if resolved is None:
            raise SourceParseError(_unknown_type_message(name, "annotation"), start.range)
        return resolved

    def _parse_annotation_name(self) -> str:
        if self.lexer.next_if(TK_NONE):
            return "None"
        if self.lexer.next_if(TK_NONE_TYPE):
            return "NoneType"
        return self._parse_qualified_name()

    def _parse_annotation_argument(self) -> T.Type | None:
        """One type argument; `()` (as in `Tuple[()]`) reads as None, meaning "no elements"."""
        if self.lexer.cur().kind == "(" and self.lexer.lookahead().kind == ")":
            self.lexer.next()
            self.lexer.next()
            return None
        with self.lexer.nested():
            return self._parse_annotation()

    # --------------------------------------------------------------------------------------------- helpers

    def _parse_qualified_name(self) -> str:
        parts = [self.lexer.expect(TK_IDENT).text]
        while self.lexer.cur().kind == "." and self.lexer.lookahead().kind == TK_IDENT:
            self.lexer.next()
            parts.append(self.lexer.next().text)
        return ".".join(parts)

    def _named_type(self, name: str, placeholder: Callable[[str], T.Type] = T.ClassType) -> T.Type:
        """The type a qualified name stands for: resolved, a custom class, or this parser's placeholder."""
        resolved = self._resolve(name) if self._resolve else None
        if resolved is not None:
            return resolved
        if name.startswith(T.CUSTOM_CLASS_PREFIX):
            return T.custom_class(name)
        if name not in self._placeholders:
            self._placeholders[name] = placeholder(name)
        return self._placeholders[name]

    def _build(self, token: Token, constructor: Callable[..., T.Type], *args: Any) -> T.Type:
        """Call a type constructor, turning its complaints into parse errors at `token`."""
        try:
            return constructor(*args)
        except TsjitError as error:
            raise SourceParseError(str(error), token.range) from None


def _create_union(members: tuple[T.Type, ...]) -> T.Type:
    """c10's UnionType::create: at least two distinct members, and a Union of T and None is Optional[T]."""
    T.UnionType(members)  # raises unless two distinct members remain
    return T.UnionType.create(members)


def _strip_module(name: str) -> str:
    """`typing.List` -> `List`, `torch.Tensor` -> `Tensor`; other dotted names are left alone."""
    for module in _ANNOTATION_MODULES:
        if name.startswith(module) and "." not in name[len(module):]:
            return name[len(module):]
    return name


def _unknown_type_message(name: str, dialect: str) -> str:
    if dialect != "schema":
        return f"unknown type specifier '{name}'"
    return (f"unknown type specifier '{name}'. Common valid schema types include Tensor, SymInt, int, float, "
            "bool, Scalar; for a full list, please see "
            "https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/README.md#func")
