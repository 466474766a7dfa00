"""FunctionSchema: the signature of an operator or function, and its text form.

    schema = parse_schema("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    schema.operator_name          # "aten::add.Tensor"
    schema.arguments[2]           # Argument(name='alpha', kwarg_only=True, default_value=1, ...)
    str(schema)                   # the text again, byte for byte as str(torch._C.FunctionSchema) prints it

The grammar (torch/csrc/jit/frontend/function_schema_parser.cpp):

    schema    := name ['.' overload] '(' [arg {',' arg}] ')' '->' returns
    arg       := type [alias] ['[' N ']' [alias]] ['?'] name ['=' default]  |  '*'  |  '...'
    returns   := return | '...' | '(' [return {',' return}] ')'           return := type [name]
    alias     := '(' sets ['!'] ['->' sets] ')'                            sets := (name | '*') {'|' ...}

`*` makes the following arguments keyword-only, `...` accepts any further arguments (or returns). Alias
annotations say which inputs and outputs may share memory: `Tensor(a!) self` is written in place,
`-> Tensor(a)` returns a view of whatever is in set `a`, `Tensor(a -> *)` may end up in the wildcard set, and
`Tensor(a!)[]` is a list whose elements are written (tsjit.ir.alias_info). Types are read by tsjit.ir.type_parser
(schema dialect).

Defaults follow torch, quirks included: `int[2] stride=1` means `[1, 1]` and prints back as `1`;
the enum names `float`, `complex`, `long`, `strided`, `contiguous_format` and `Mean` become their integer
codes and print as integers; floats print with 17 significant digits (`1.0000000000000001e-05`) or as `1.`;
strings print with C escapes. Alias sets print in the order written: torch prints a reparsed set in hash-set
order (`Tensor(a|b)` comes back as `Tensor(b|a)`), which tsjit does not copy, so that the schemas torch prints
read back verbatim.
"""

from __future__ import annotations

import enum
import functools
import math
import re
import sys
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import torch

from tsjit.errors import SchemaError, SourceParseError
from tsjit.ir import types as T
from tsjit.ir.alias_info import AliasInfo, nest_alias_info
from tsjit.ir.constants import INT64_MAX, INT64_MIN
from tsjit.ir.literals import format_complex, format_default_double, quote_string
from tsjit.ir.type_parser import TypeParser
from tsjit.source.lexer import (
    TK_ARROW,
    TK_DOTS,
    TK_EOF,
    TK_FALSE,
    TK_IDENT,
    TK_NEWLINE,
    TK_NONE,
    TK_NUMBER,
    TK_STRINGLITERAL,
    TK_TRUE,
    Lexer,
    Token,
    is_identifier,
    parse_string_literal,
)
from tsjit.source.source_range import Source

# Identifiers torch accepts as numeric defaults, with the enum values they stand for.
_NAMED_DEFAULTS = {"float": 6, "complex": 9, "long": 4, "strided": 0, "Mean": 1, "contiguous_format": 0}


class _NoDefault:
    """The type of NO_DEFAULT, which marks an argument without a default (None is a default value)."""

    _instance: _NoDefault | None = None

    def __new__(cls) -> _NoDefault:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()


@dataclass(frozen=True, eq=False)
class Argument:
    """One argument or return of a schema.

    `type` is the type IR values carry; `real_type` the type as written, which differs for ScalarType,
    Layout, MemoryFormat and SymInt (carried as int) and containers of them. `N` is the size of a fixed-size
    list (`int[2]`), so a single value can stand for the whole list. Returns have no defaults and may be
    unnamed (name "").
    """

    name: str
    type: T.Type
    real_type: T.Type = None  # type: ignore[assignment]  # defaults to `type`
    N: int | None = None
    default_value: Any = NO_DEFAULT
    kwarg_only: bool = False
    alias_info: AliasInfo | None = None
    _key: tuple = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.real_type is None:
            object.__setattr__(self, "real_type", self.type)
        key = (self.name, self.type, self.real_type, self.N, _typed(self.default_value), self.kwarg_only,
               self.alias_info)
        object.__setattr__(self, "_key", key)

    @property
    def has_default(self) -> bool:
        return self.default_value is not NO_DEFAULT

    @property
    def is_out(self) -> bool:
        """Whether this is an `out=` argument: keyword-only and written to."""
        return self.kwarg_only and self.alias_info is not None and self.alias_info.is_write

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Argument) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __str__(self) -> str:
        """`Tensor(a!) self`, `int[2] stride=1`, `ScalarType? dtype=None`: as torch prints an Argument."""
        real = self.real_type
        bare = real.elem if isinstance(real, T.OptionalType) else real
        is_optional = bare is not real
        text = self._bare_type_text(bare)
        if self.alias_info is not None and self.alias_info.before_set:
            text += str(self.alias_info)
        if is_optional:
            text += "?"
        if self.name:
            text += " " + self.name
        if self.has_default:
            text += "=" + self._default_text(bare)
        return text

    def _bare_type_text(self, bare: T.Type) -> str:
        """The type without `?`; a list shows its elements' alias annotation and its size inside."""
        if not isinstance(bare, T.ListType):
            return bare.schema_str()
        elements_alias = ""
        if self.alias_info is not None and self.alias_info.contained_types:
            elements_alias = str(self.alias_info.contained_types[0])
        size = "" if self.N is None else str(self.N)
        return f"{bare.elem.schema_str()}{elements_alias}[{size}]"

    def _default_text(self, bare: T.Type) -> str:
        value = self.default_value
        if isinstance(bare, T.StringType) and isinstance(value, str):
            return quote_string(value)
        real = self.real_type
        if isinstance(real, T.ListType) and isinstance(real.elem, T.IntType) and _is_repeated(value):
            return format_value(value[0])  # `int[2] stride=1`, as written in native_functions.yaml
        return format_value(value)


def _is_repeated(value: Any) -> bool:
    return isinstance(value, list) and len(value) > 1 and all(v == value[0] for v in value)


def _typed(value: Any) -> Any:
    """A comparison key that tells True from 1 and 1 from 1.0, as IValue equality does."""
    if isinstance(value, list):
        return "list", tuple(_typed(v) for v in value)
    if isinstance(value, torch.device):
        return "device", str(value)
    return type(value).__name__, value


class OperatorName(NamedTuple):
    """A schema's name without its signature: `aten::add` and overload `Tensor`."""

    name: str
    overload_name: str

    def __str__(self) -> str:
        return f"{self.name}.{self.overload_name}" if self.overload_name else self.name


def _is_written(info: AliasInfo | None) -> bool:
    return info is not None and (info.is_write or any(contained.is_write for contained in info.contained_types))


@dataclass(frozen=True)
class FunctionSchema:
    """The signature of an operator or TorchScript function."""

    name: str
    overload_name: str
    arguments: tuple[Argument, ...]
    returns: tuple[Argument, ...]
    is_vararg: bool = False
    is_varret: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "arguments", tuple(self.arguments))
        object.__setattr__(self, "returns", tuple(self.returns))
        self._check_default_order()

    def _check_default_order(self) -> None:
        """Positional arguments with defaults come last (lists are exempt, as old archives need)."""
        seen_default = False
        for argument in self.arguments:
            if argument.has_default:
                seen_default = True
            elif seen_default and not argument.kwarg_only and not isinstance(argument.type, T.ListType):
                raise SchemaError("Non-default positional argument follows default argument. Parameter "
                                  f"{argument.name} in {self}")

    @functools.cached_property
    def operator_name(self) -> str:
        """`aten::add.Tensor`, or just the name when there is no overload name (remembered: registry lookups and
        alias analysis ask it for every node)."""
        return f"{self.name}.{self.overload_name}" if self.overload_name else self.name

    @functools.cached_property
    def written_arguments(self) -> tuple[int, ...]:
        """The positions of the arguments the operator writes, itself or what it contains (`Tensor(a!)`,
        `Tensor(a!)[]`): what alias analysis and dead code elimination ask of nearly every node."""
        return tuple(i for i, argument in enumerate(self.arguments) if _is_written(argument.alias_info))

    @property
    def is_mutable(self) -> bool:
        """Whether the operator writes to any of its arguments."""
        return any(a.alias_info is not None and a.alias_info.is_write for a in self.arguments)

    def argument_index(self, name: str) -> int | None:
        """The position of the argument called `name`, or None."""
        for index, argument in enumerate(self.arguments):
            if argument.name == name:
                return index
        return None

    def __str__(self) -> str:
        return f"{self.operator_name}({self._arguments_text()}) -> {self._returns_text()}"

    def _arguments_text(self) -> str:
        parts, seen_kwarg_only = [], False
        for argument in self.arguments:
            if argument.kwarg_only and not seen_kwarg_only:
                parts.append("*")
                seen_kwarg_only = True
            parts.append(str(argument))
        if self.is_vararg:
            parts.append("...")
        return ", ".join(parts)

    def _returns_text(self) -> str:
        """`Tensor`, `(Tensor a, Tensor b)`, `()`, `...`; one return is parenthesized only if its text starts
        with `(` (a tuple type), which would otherwise read back as several returns."""
        parts = [str(r) for r in self.returns] + (["..."] if self.is_varret else [])
        if len(parts) == 1 and not parts[0].startswith("("):
            return parts[0]
        return "(" + ", ".join(parts) + ")"


def parse_schema(text: str) -> FunctionSchema:
    """The FunctionSchema written in `text`; SourceParseError (with the place) if it is malformed."""
    parsed = parse_schema_or_name(text)
    if not isinstance(parsed, FunctionSchema):
        raise SchemaError("Tried to parse a function schema but only the operator name was given")
    return parsed


def parse_schema_or_name(text: str) -> FunctionSchema | OperatorName:
    """A full schema, or just an operator name (`aten::add.Tensor`) when no argument list follows."""
    common = _parse_common_shape(text)
    return common if common is not None else _SchemaParser(text).parse_exactly_one_declaration()


# ---- the common shape, by its arguments ------------------------------------------------------------------------
# Overload matching parses every overload it tries (an encoder layer's first call: 155 schemas, at ~100 µs each
# through the lexer), yet the same few arguments recur across them: `Tensor self`, `Scalar other`, `*`,
# `Tensor(a!) out`. A schema on one line, without strings, comments or `...`, is cut at its top-level commas and
# each argument parsed once per process (by the same parser, alone); anything else, and any argument that does
# not parse alone or whose meaning depends on the others (a bare `!`), goes through the whole parser, which
# reports an error where it is in the text.
_COMMON_SHAPE = re.compile(r"((?:[A-Za-z_][A-Za-z0-9_]*::)?[A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?"
                           r"\((.*)\) -> (.+)", re.DOTALL)
_UNCOMMON = re.compile(r"[\n\r\"'#\\]|\.\.\.")
_PARSED_ARGUMENTS: dict[tuple[str, str], Argument | None] = {}  # by (text, "return" / "kwarg" / "positional")


def _parse_common_shape(text: str) -> FunctionSchema | None:
    """The schema in `text` if it has the common shape and each of its arguments parses alone, else None."""
    match = _COMMON_SHAPE.fullmatch(text)
    if match is None or _UNCOMMON.search(text) is not None:
        return None
    name, overload, arguments_text, returns_text = match.groups()
    overload = overload or ""
    if not all(is_identifier(part) for part in name.split("::")) or overload == "default" \
            or overload.startswith("__"):
        return None
    arguments = _common_arguments(arguments_text)
    returns = _common_returns(returns_text)
    if arguments is None or returns is None:
        return None
    return FunctionSchema(name, overload, arguments, returns)


def _common_arguments(text: str) -> tuple[Argument, ...] | None:
    pieces = _top_level_pieces(text)
    if pieces is None:
        return None
    arguments, role = [], "positional"
    for piece in pieces:
        if piece == "*":
            role = "kwarg"
            continue
        argument = _argument_alone(piece, role)
        if argument is None:
            return None
        arguments.append(argument)
    return tuple(arguments)


def _common_returns(text: str) -> tuple[Argument, ...] | None:
    """`Tensor`, `Tensor(a!)`, `(Tensor a, Tensor b)`, `()`: a list when the text starts with a parenthesis; None
    (the whole parser decides) when that group does not end the text."""
    text = text.strip()
    if text.startswith("("):  # a list of returns, which must end the schema (`(int, bool) r` is malformed)
        pieces = _top_level_pieces(text[1:-1]) if _group_end(text) == len(text) - 1 else None
    else:
        pieces = [text]
    if pieces is None:
        return None
    returns = [_argument_alone(piece, "return") for piece in pieces]
    return None if any(r is None for r in returns) else tuple(returns)  # type: ignore[arg-type]


def _argument_alone(text: str, role: str) -> Argument | None:
    """One argument or return parsed by itself, once per process (None if it does not parse alone)."""
    key = (text, role)
    if key in _PARSED_ARGUMENTS:
        return _PARSED_ARGUMENTS[key]
    parser = _SchemaParser(text)
    try:
        argument: Argument | None = parser._parse_argument(is_return=role == "return", kwarg_only=role == "kwarg")
        parser.lexer.expect(TK_EOF)
    except (SourceParseError, SchemaError):
        argument = None
    if parser.types.made_fresh_alias_sets:  # `Tensor! x`: its set's name depends on the arguments before it
        argument = None
    _PARSED_ARGUMENTS[key] = argument
    return argument


def _top_level_pieces(text: str) -> list[str] | None:
    """`text` cut at the commas outside parentheses and brackets, each piece stripped; [] for blank text, None
    when the brackets do not balance or a piece is empty."""
    if not text.strip():
        return []
    pieces, depth, start = [], 0, 0
    for match in _BRACKETS_AND_COMMAS.finditer(text):
        char = match.group()
        if char == ",":
            if depth == 0:
                pieces.append(text[start:match.start()].strip())
                start = match.end()
            continue
        depth += 1 if char in "([" else -1
        if depth < 0:
            return None
    pieces.append(text[start:].strip())
    return pieces if depth == 0 and all(pieces) else None


def _group_end(text: str) -> int:
    """The position of the bracket closing the one `text` starts with (-1 if none does)."""
    depth = 0
    for match in _BRACKETS_AND_COMMAS.finditer(text):
        char = match.group()
        if char != ",":
            depth += 1 if char in "([" else -1
            if depth == 0:
                return match.start()
    return -1


_BRACKETS_AND_COMMAS = re.compile(r"[()\[\],]")


class _SchemaParser:
    """The recursive-descent reader of schema text, over a Lexer and a schema-dialect TypeParser."""

    def __init__(self, text: str):

        self.lexer = Lexer(Source(text))
        self.types = TypeParser(self.lexer, "schema")

    def parse_exactly_one_declaration(self) -> FunctionSchema | OperatorName:
        declaration = self._parse_declaration()
        self.lexer.next_if(TK_NEWLINE)
        self.lexer.expect(TK_EOF)
        return declaration

    def _parse_declaration(self) -> FunctionSchema | OperatorName:
        name = self._parse_name()
        if self.lexer.cur().kind != "(":
            return name
        arguments, is_vararg = self._parse_arguments()
        self.lexer.expect(TK_ARROW)
        returns, is_varret = self._parse_returns()
        return FunctionSchema(name.name, name.overload_name, tuple(arguments), tuple(returns), is_vararg,
                              is_varret)

    def _parse_name(self) -> OperatorName:
        lexer = self.lexer
        name = lexer.expect(TK_IDENT).text
        if lexer.next_if(":"):
            lexer.expect(":")
            name += "::" + lexer.expect(TK_IDENT).text
        overload = lexer.expect(TK_IDENT).text if lexer.next_if(".") else ""
        # `default` names the overload-less op in torch.ops, and dunders are Python attributes
        if overload == "default" or overload.startswith("__"):
            raise SchemaError(f"{overload} is not a legal overload name for aten operators")
        return OperatorName(name, overload)

    def _parse_arguments(self) -> tuple[list[Argument], bool]:
        arguments: list[Argument] = []
        kwarg_only = is_vararg = False

        def item() -> None:
            nonlocal kwarg_only, is_vararg
            if is_vararg:
                self.lexer.report_error("... must be the last element of the argument list")
            if self.lexer.next_if("*"):
                kwarg_only = True
            elif self.lexer.next_if(TK_DOTS):
                is_vararg = True
            else:
                arguments.append(self._parse_argument(is_return=False, kwarg_only=kwarg_only))

        self.lexer.parse_list("(", ")", item)
        if is_vararg and any(a.has_default for a in arguments):
            self.lexer.report_error("schemas with vararg (...) can't have default value args")
        return arguments, is_vararg

    def _parse_returns(self) -> tuple[list[Argument], bool]:
        if self.lexer.next_if(TK_DOTS):
            return [], True
        if self.lexer.cur().kind != "(":
            return [self._parse_argument(is_return=True, kwarg_only=False)], False
        returns: list[Argument] = []
        is_varret = False

        def item() -> None:
            nonlocal is_varret
            if is_varret:
                self.lexer.report_error("... must be the last element of the return list")
            if self.lexer.next_if(TK_DOTS):
                is_varret = True
            else:
                returns.append(self._parse_argument(is_return=True, kwarg_only=False))

        self.lexer.parse_list("(", ")", item)
        return returns, is_varret

    def _parse_argument(self, is_return: bool, kwarg_only: bool) -> Argument:
        fake, real, alias_info = self.types.parse_fake_and_real_type()
        size = None
        if self.lexer.next_if("["):  # a fixed-size list, only possible here at the argument level
            fake, real = T.ListType(fake), T.ListType(real)
            size = _c_stoll(self.lexer.expect(TK_NUMBER))
            self.lexer.expect("]")
            alias_info = nest_alias_info(self.types.parse_alias_annotation(), alias_info)
            if self.lexer.next_if("?"):
                fake, real = T.OptionalType(fake), T.OptionalType(real)
        if is_return:
            name = self.lexer.next().text if self.lexer.cur().kind == TK_IDENT else ""
            return Argument(name, fake, real, size, alias_info=alias_info)
        name = self.lexer.expect(TK_IDENT).text
        default = self._parse_default(fake, size) if self.lexer.next_if("=") else NO_DEFAULT
        return Argument(name, fake, real, size, default, kwarg_only, alias_info)

    def _parse_default(self, arg_type: T.Type, size: int | None) -> Any:
        """A default value, read according to the argument's (IR) type."""
        start = self.lexer.cur()
        if isinstance(arg_type, T.TensorType | T.GeneratorType | T.QuantizerType):
            self.lexer.expect(TK_NONE)
            return None
        if isinstance(arg_type, _SCALAR_DEFAULT_TYPES):
            return self._parse_single_constant(arg_type)
        if isinstance(arg_type, T.DeviceType):
            return _device(start, parse_string_literal(self.lexer.expect(TK_STRINGLITERAL)))
        if isinstance(arg_type, T.ListType):
            return self._parse_list_default(arg_type.elem, size, start)
        raise SourceParseError("unexpected type, file a bug report", start.range)

    def _parse_list_default(self, elem: T.Type, size: int | None, start: Token) -> list[Any]:
        """`[1, 2]`, or one value repeated for a fixed-size list (`int[2] padding=0`)."""
        if self.lexer.cur().kind == TK_IDENT:
            self.lexer.expect(TK_NONE)  # fails: only None could stand here, and it does not fit a list
        if size is not None and self.lexer.cur().kind != "[":
            return _checked_list(elem, start, [self._parse_single_constant(elem)] * size)
        bracket = self.lexer.cur()
        values = self.lexer.parse_list("[", "]", lambda: self._parse_single_constant(elem))
        return _checked_list(elem, bracket, values)

    def _parse_single_constant(self, arg_type: T.Type) -> Any:
        """True, False, None, a string, an enum name, or a number read as the type asks (torch's rules: a
        number with `.` or `e` is a float even for int, and any number is imaginary for complex)."""
        lexer = self.lexer
        token = lexer.cur()
        if token.kind in _KEYWORD_CONSTANTS:
            lexer.next()
            return _KEYWORD_CONSTANTS[token.kind]
        if token.kind == TK_STRINGLITERAL:
            return parse_string_literal(lexer.next())
        if token.kind == TK_IDENT:
            lexer.next()
            if token.text not in _NAMED_DEFAULTS:
                raise SourceParseError("invalid numeric default value", lexer.cur().range)
            return _NAMED_DEFAULTS[token.text]
        sign = "-" if lexer.next_if("-") else ""
        number = lexer.expect(TK_NUMBER)
        text = sign + number.text
        if isinstance(arg_type, T.ComplexType) or "j" in text:
            return complex(0.0, _c_stod(number, text[:-1]))
        if isinstance(arg_type, T.FloatType) or "." in text or "e" in text:
            return _c_stod(number, text)
        return _c_stoll(number, text)


_SCALAR_DEFAULT_TYPES = (T.StringType, T.OptionalType, T.NumberType, T.IntType, T.BoolType, T.FloatType,
                         T.ComplexType)
_KEYWORD_CONSTANTS = {TK_TRUE: True, TK_FALSE: False, TK_NONE: None}
_LIST_ELEMENT_TYPES = ((T.ComplexType, complex), (T.FloatType, float), (T.IntType, int), (T.BoolType, bool))


def _checked_list(elem: T.Type, token: Token, values: list[Any]) -> list[Any]:
    """A list default: only int, float, bool and complex lists exist, and every value must be of that type."""
    for type_class, python_type in _LIST_ELEMENT_TYPES:
        if isinstance(elem, type_class):
            if any(type(v) is not python_type for v in values):
                raise SourceParseError(f"expected {elem.schema_str()} values in this list", token.range)
            return values
    raise SourceParseError("lists are only supported for float, int and complex types", token.range)


def _device(token: Token, text: str) -> torch.device:
    try:
        return torch.device(text)
    except RuntimeError as error:
        raise SourceParseError(str(error), token.range) from None


# What C's strtod reads at the start of a string: a decimal or hexadecimal float.
_STRTOD = re.compile(r"[+-]?(0[xX](?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
                     r"|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")
_STOLL = re.compile(r"[+-]?[0-9]+")


def _c_stod(token: Token, text: str) -> float:
    """C++ std::stod: the float at the start of `text`; out-of-range results (overflow, underflow, and
    subnormals, for which glibc reports ERANGE) are errors, as they are in torch."""
    match = _STRTOD.match(text)
    if match is None:
        raise SourceParseError(f"invalid number '{text}'", token.range)
    digits = match.group(1)
    hexadecimal = digits[:2].lower() == "0x"
    value = float.fromhex(match.group()) if hexadecimal else float(match.group())
    mantissa = re.split("[pP]" if hexadecimal else "[eE]", digits[2:] if hexadecimal else digits)[0]
    underflow = value == 0 and mantissa.strip("0.") != ""
    if math.isinf(value) or underflow or 0 < abs(value) < sys.float_info.min:
        raise SourceParseError(f"number '{text}' is out of range for a float", token.range)
    return value


def _c_stoll(token: Token, text: str | None = None) -> int:
    """C++ std::stoll: the decimal integer at the start of `text` (so `0x10` reads as 0), within int64."""
    text = token.text if text is None else text
    match = _STOLL.match(text)
    if match is None:
        raise SourceParseError(f"invalid integer '{text}'", token.range)
    digits = match.group()
    value = int(digits) if len(digits) <= 21 else INT64_MAX + 1  # (int() refuses 4,300 digits and more)
    if not INT64_MIN <= value <= INT64_MAX:
        raise SourceParseError(f"integer '{text}' is out of range", token.range)
    return value


# ---------------------------------------------------------------------------------------- printing values

def format_value(value: Any) -> str:
    """A default value as c10 prints an IValue: `None`, `True`, `1`, `1.`, `0.+2.j`, `[1, 2]`, `cpu`; strings
    print unquoted (quote_string is for str arguments)."""
    if value is None:
        return "None"
    if isinstance(value, enum.Enum):  # before bool: an IntEnum member is an int
        return f"Enum<{type(value).__name__}.{value.name}>"
    if isinstance(value, T.EnumValue):
        return f"Enum<{value.enum_type.name}.{value.name}>"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float):
        return format_default_double(value)
    if isinstance(value, complex):
        return format_complex(value, format_default_double)
    if isinstance(value, list):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    return str(value)


