"""String builtins: methods (`split`, `join`, `strip`, `startswith`, `lower`, ...), `format`, `%`, `str`,
`ord`/`chr`/`hex`, comparisons and indexing.

TorchScript implements these in C++ on bytes with the C locale, and several differ from Python on purpose
or by accident; the implementations here follow TorchScript. Character classes are ASCII (`"é".upper()` is
`"é"`), `split()` without a separator ignores `max`, `splitlines(True)` returns each line break as its own
element, `zfill` ignores signs, `isidentifier` rejects `_`, and `count`/`startswith` treat `start`/`end`
as C++ does. Lengths and indices count characters rather than UTF-8 bytes (a deliberate difference for
non-ASCII text).
"""

from __future__ import annotations

import operator
import string as ascii_sets
from collections.abc import Callable
from typing import Any

from tsjit.ops.builtins.common import fail, float_to_float32, normalize_index, slice_indices
from tsjit.ops.builtins.printing import ivalue_str

_DIGITS = frozenset(ascii_sets.digits)
_ALPHA = frozenset(ascii_sets.ascii_letters)
_UPPER = frozenset(ascii_sets.ascii_uppercase)
_LOWER = frozenset(ascii_sets.ascii_lowercase)
_ALNUM = _DIGITS | _ALPHA
_SPACE = frozenset(" \t\n\v\f\r")
_PUNCT = frozenset(ascii_sets.punctuation)
_TO_UPPER = str.maketrans(ascii_sets.ascii_lowercase, ascii_sets.ascii_uppercase)
_TO_LOWER = str.maketrans(ascii_sets.ascii_uppercase, ascii_sets.ascii_lowercase)
_SWAP_CASE = str.maketrans(ascii_sets.ascii_letters, ascii_sets.ascii_uppercase + ascii_sets.ascii_lowercase)
# C++'s splitlines / split() delimiters (the multi-byte ones listed by their characters)
_LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
_WHITESPACE = _LINE_BREAKS | frozenset(" \t")


# ----------------------------------------------------------------------------------------- str, format, %

def to_str(value: Any) -> str:
    """`str(x)` for any value (aten::str)."""
    return ivalue_str(value)


def to_repr(value: Any) -> str:
    """`repr(x)`: strings quoted as Python quotes them, also inside lists, tuples and dicts; anything else as
    `str(x)` prints it."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(map(to_repr, value)) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(map(to_repr, value)) + (",)" if len(value) == 1 else ")")
    if isinstance(value, dict):
        return "{" + ", ".join(f"{to_repr(k)}: {to_repr(v)}" for k, v in value.items()) + "}"
    return ivalue_str(value)


def format_string(template: str, *args: Any) -> str:
    """`"...{}...".format(...)`: only `{}` placeholders, filled in order; extra arguments are ignored."""
    pieces, begin = [], 0
    for used in range(len(args) + 1):
        location = template.find("{}", begin)
        if location < 0:
            break
        if used == len(args):
            fail(f"Too few arguments for format string: {template}")
        pieces += [template[begin:location], ivalue_str(args[used])]
        begin = location + 2
    return "".join(pieces) + template[begin:]


def percent_format(template: str, args: Any) -> str:
    """`"..." % args`: %d %i %e %E %f %F %c %s and %%, no flags or widths (aten::percentFormat)."""
    values = list(args) if isinstance(args, tuple) else [args]
    pieces, begin, used = [], 0, 0
    while (percent := template.find("%", begin)) >= 0:
        if percent == len(template) - 1:
            fail("Incomplete format specifier")
        pieces.append(template[begin:percent])
        key, begin = template[percent + 1], percent + 2
        if key == "%":
            pieces.append("%")
            continue
        if used >= len(values):
            fail("Too few arguments for format string")
        pieces.append(_formatted_argument(key, values[used]))
        used += 1
    if used != len(values):
        fail("Too many arguments for format string")
    return "".join(pieces) + template[begin:]


def _formatted_argument(key: str, value: Any) -> str:
    """One `%<key>` conversion; numbers for %e/%f go through C++ `float` (single precision)."""
    if key in _NUMERIC_CONVERSIONS and not isinstance(value, int | float):
        fail(f"%{key} requires a number for formatting, but got {_tag_kind(value)}")
    if key in ("d", "i"):
        return str(value if isinstance(value, int) else int(value))
    if key in ("e", "E", "f", "F"):
        return f"%.6{key}" % float_to_float32(float(value))
    if key == "c":
        if isinstance(value, int) or (isinstance(value, str) and len(value) == 1):
            return chr(value) if isinstance(value, int) else value
        fail(f"%c requires an int or char for formatting, but got {_tag_kind(value)}")
    if key == "s":
        return ivalue_str(value)
    fail(f"The specifier %{key} is not supported in TorchScript format strings")


_NUMERIC_CONVERSIONS = frozenset("dieEfF")


def _tag_kind(value: Any) -> str:
    """The IValue tag name C++ errors use (`String`, `GenericList`, ...)."""
    kinds = {str: "String", list: "GenericList", dict: "GenericDict", tuple: "Tuple", type(None): "None"}
    return kinds.get(type(value), type(value).__name__)


# ---------------------------------------------------------------------------------- indexing and slicing

def get_char(text: str, index: int) -> str:
    """`s[i]` (aten::__getitem__.str and prim::StringIndex), with C++ `string::at`'s error."""
    offset = normalize_index(index, len(text))
    if not 0 <= offset < len(text):
        fail(f"basic_string::at: __n (which is {offset % (1 << 64)}) >= this->size() (which is {len(text)})")
    return text[offset]


def slice_string(text: str, start: int | None, end: int | None, step: int) -> str:
    return "".join(text[i] for i in slice_indices(len(text), start, end, step))


def characters(text: str) -> list[str]:
    """`list(s)`."""
    return list(text)


def concatenate(a: str, b: str) -> str:
    return a + b


# ---------------------------------------------------------------------------------------- classification

def _all_in(characters_set: frozenset[str]) -> Callable[[str], bool]:
    """C++'s DEFINE_STRING_IS_OP: non-empty and every character in the class."""
    return lambda text: bool(text) and all(c in characters_set for c in text)


def is_upper(text: str) -> bool:
    return any(c in _ALPHA for c in text) and not any(c in _LOWER for c in text)


def is_lower(text: str) -> bool:
    return any(c in _ALPHA for c in text) and not any(c in _UPPER for c in text)


def is_title(text: str) -> bool:
    """True when every letter after a non-letter is upper case, every other letter lower case, and a
    letter exists."""
    result, previous_alpha = False, False
    for c in text:
        expected_case = _UPPER if not previous_alpha else _LOWER
        if c in _ALPHA and c not in expected_case:
            return False
        result = result or (c in _ALPHA and not previous_alpha)
        previous_alpha = c in _ALPHA
    return result


def is_identifier(text: str) -> bool:
    """TorchScript's Python-2 isidentifier: alphanumerics only (no `_`), not starting with a digit."""
    return bool(text) and text[0] not in _DIGITS and all(c in _ALNUM for c in text)


def is_printable(text: str) -> bool:
    return all(c in _ALNUM or c in _PUNCT or c == " " for c in text)


# ------------------------------------------------------------------------------------------ case mapping

def upper(text: str) -> str:
    return text.translate(_TO_UPPER)


def lower(text: str) -> str:
    return text.translate(_TO_LOWER)


def swap_case(text: str) -> str:
    return text.translate(_SWAP_CASE)


def capitalize(text: str) -> str:
    return upper(text[:1]) + lower(text[1:])


def title(text: str) -> str:
    """Upper-case each character that follows a non-letter, lower-case the others."""
    pieces, previous_alpha = [], False
    for c in text:
        pieces.append(lower(c) if previous_alpha else upper(c))
        previous_alpha = c in _ALPHA
    return "".join(pieces)


# --------------------------------------------------------------------------------------- padding, strip

def _fill_character(fillchar: str) -> str:
    if len(fillchar) != 1:
        fail("TypeError: The fill character must be exactly one character long")
    return fillchar


def center(text: str, width: int, fillchar: str) -> str:
    """C++ puts the odd padding character on the left when `width` is odd."""
    fill = _fill_character(fillchar)
    if len(text) > width:
        return text
    padding = width - len(text)
    left, right = padding // 2, (padding + 1) // 2
    if width % 2:
        left, right = right, left
    return fill * left + text + fill * right


def ljust(text: str, width: int, fillchar: str) -> str:
    return text + _fill_character(fillchar) * max(0, width - len(text))


def rjust(text: str, width: int, fillchar: str) -> str:
    return _fill_character(fillchar) * max(0, width - len(text)) + text


def zfill(text: str, width: int) -> str:
    """Zeros in front, signs included (`"-12".zfill(5)` is `"00-12"`)."""
    return "0" * max(0, width - len(text)) + text


def strip(text: str, chars: str) -> str:
    return text.strip(chars)


def lstrip(text: str, chars: str) -> str:
    return text.lstrip(chars)


def rstrip(text: str, chars: str) -> str:
    return text.rstrip(chars)


def expand_tabs(text: str, tabsize: int) -> str:
    """Tabs advance to the next multiple of `tabsize` counted from the start of the string (C++ does not
    restart the column at a newline)."""
    pieces, column = [], 0
    for c in text:
        if c != "\t":
            pieces.append(c)
            column += 1
        elif tabsize > 0:
            spaces = tabsize - column % tabsize
            pieces.append(" " * spaces)
            column += spaces
    return "".join(pieces)


# -------------------------------------------------------------------------------------- search, replace

def _window(text: str, start: int, end: int) -> tuple[int, int]:
    """C++'s start/end adjustment: negatives count from the end, `end=-1` means the end of the string."""
    size = len(text)
    start = max(0, size + start) if start < 0 else start
    end = max(0, size + end + 1) if end < 0 else end
    return start, end


def _find(text: str, substr: str, start: int, end: int, reverse: bool = False) -> int:
    """stringFindImpl: search `text[start:end]`; -1 when not found."""
    start, end = _window(text, start, end)
    if end > start and start > len(text):
        _substring_out_of_range(start, text)
    window = text[start:end] if end > start else ""
    position = window.rfind(substr) if reverse else window.find(substr)
    return position + start if position >= 0 else -1


def find(text: str, substr: str, start: int, end: int) -> int:
    return _find(text, substr, start, end)


def rfind(text: str, substr: str, start: int, end: int) -> int:
    return _find(text, substr, start, end, reverse=True)


def index(text: str, substr: str, start: int, end: int) -> int:
    position = _find(text, substr, start, end)
    if position < 0:
        fail("ValueError: substring not found")
    return position


def rindex(text: str, substr: str, start: int, end: int) -> int:
    position = _find(text, substr, start, end, reverse=True)
    if position < 0:
        fail("ValueError: substring not found")
    return position


def count(text: str, substr: str, start: int, end: int) -> int:
    """Non-overlapping occurrences that *start* before `end` (C++ does not require them to end there)."""
    if start > len(text):
        return 0
    start, end = _window(text, start, end)
    occurrences, position = 0, text.find(substr, start)
    while 0 <= position < end:
        occurrences += 1
        position = text.find(substr, position + max(len(substr), 1))
    return occurrences


def _substring(text: str, start: int, end: int) -> str:
    """C++ `string.substr(start, end - start)` after the window adjustment (a negative length means to
    the end of the string)."""
    start, end = _window(text, start, end)
    if start > len(text):
        _substring_out_of_range(start, text)
    return text[start:] if end < start else text[start:end]


def _substring_out_of_range(start: int, text: str) -> None:
    fail(f"basic_string::substr: __pos (which is {start}) > this->size() (which is {len(text)})")


def startswith(text: str, substr: str, start: int, end: int) -> bool:
    return _substring(text, start, end).startswith(substr)


def endswith(text: str, substr: str, start: int, end: int) -> bool:
    return _substring(text, start, end).endswith(substr)


def replace(text: str, old: str, new: str, max_count: int) -> str:
    if not old:
        fail("std::bad_alloc")
    return text.replace(old, new, max_count)


def partition(text: str, separator: str) -> tuple[str, str, str]:
    return text.partition(separator) if separator else ("", "", text)


def rpartition(text: str, separator: str) -> tuple[str, str, str]:
    return text.rpartition(separator) if separator else (text, "", "")


# ------------------------------------------------------------------------------------- split and join

def split(text: str, separator: str | None, max_count: int) -> list[str]:
    """Without a separator: split on whitespace runs, ignoring `max_count` (as TorchScript does)."""
    if separator is None:
        return _split_on(text, _WHITESPACE)
    if not separator:
        fail("ValueError: empty separator")
    return text.split(separator, max_count)


def _split_on(text: str, delimiters: frozenset[str]) -> list[str]:
    pieces, current = [], []
    for c in text:
        if c in delimiters:
            if current:
                pieces.append("".join(current))
            current = []
        else:
            current.append(c)
    if current:
        pieces.append("".join(current))
    return pieces


def rsplit(text: str, separator: str, max_count: int) -> list[str]:
    if not separator:
        fail("ValueError: empty separator")
    return text.rsplit(separator, max_count)


def splitlines(text: str, keepends: bool) -> list[str]:
    """Every line-break character ends a piece (so `\\r\\n` gives an empty piece); with `keepends` each break
    is appended as an element of its own."""
    pieces, begin = [], 0
    for position, c in enumerate(text):
        if c in _LINE_BREAKS:
            pieces.append(text[begin:position])
            if keepends:
                pieces.append(c)
            begin = position + 1
    if begin != len(text):
        pieces.append(text[begin:])
    return pieces


def join(separator: str, values: list[str]) -> str:
    return separator.join(values)


# ------------------------------------------------------------------------------------ characters, codes

def ordinal(text: str) -> int:
    if len(text) != 1:
        fail(f"String for ord() must be 1 character, found {len(text)}")
    return ord(text)


def character(code: int) -> str:
    if not 0 <= code < 1114111:
        fail(f"chr() arg not in range(0x110000), found {code}")
    return chr(code)


_IS_CLASS = {"isdigit": _DIGITS, "isspace": _SPACE, "isalnum": _ALNUM, "isalpha": _ALPHA,
             "isdecimal": _DIGITS, "isnumeric": _DIGITS}

OPERATORS: list[tuple[str, Callable]] = [
    ("aten::str(t elem) -> str", to_str),
    ("prim::repr(t elem) -> str", to_repr),
    ("aten::format(str self, ...) -> str", format_string),
    ("aten::percentFormat(str self, ...) -> str", percent_format),
    ("aten::list(str t) -> str[]", characters),
    ("aten::len.str(str s) -> int", len),
    ("aten::__getitem__.str(str s, int index) -> str", get_char),
    ("prim::StringIndex(str string, int index) -> str", get_char),
    ("aten::slice.str(str string, int? start=None, int? end=None, int step=1) -> str", slice_string),
    ("aten::add.str(str a, str b) -> str", concatenate),
    *[(f"aten::{name}.str(str a, str b) -> bool", getattr(operator, name))
      for name in ("eq", "ne", "lt", "gt", "le", "ge")],
    *[(f"aten::{name}(str self) -> bool", _all_in(chars)) for name, chars in _IS_CLASS.items()],
    ("aten::isupper(str self) -> bool", is_upper),
    ("aten::islower(str self) -> bool", is_lower),
    ("aten::istitle(str self) -> bool", is_title),
    ("aten::isidentifier(str self) -> bool", is_identifier),
    ("aten::isprintable(str self) -> bool", is_printable),
    ("aten::upper(str self) -> str", upper),
    ("aten::lower(str self) -> str", lower),
    ("aten::swapcase(str self) -> str", swap_case),
    ("aten::capitalize(str self) -> str", capitalize),
    ("aten::title(str self) -> str", title),
    ('aten::center(str self, int width, str fillchar=" ") -> str', center),
    ('aten::ljust(str self, int width, str fillchar=" ") -> str', ljust),
    ('aten::rjust(str self, int width, str fillchar=" ") -> str', rjust),
    ("aten::zfill(str self, int width) -> str", zfill),
    ('aten::strip(str self, str chars=" \\n\\t\\f\\v") -> str', strip),
    ('aten::lstrip(str self, str chars=" \\n\\t\\f\\v") -> str', lstrip),
    ('aten::rstrip(str self, str chars=" \\n\\t\\f\\v") -> str', rstrip),
    ("aten::expandtabs(str self, int tabsize=8) -> str", expand_tabs),
    ("aten::find(str self, str substr, int start=0, int end=-1) -> int", find),
    ("aten::rfind(str self, str substr, int start=0, int end=-1) -> int", rfind),
    ("aten::index.str(str self, str substr, int start=0, int end=-1) -> int", index),
    ("aten::rindex(str self, str substr, int start=0, int end=-1) -> int", rindex),
    ("aten::count(str self, str substr, int start=0, int end=-1) -> int", count),
    ("aten::startswith(str self, str substr, int start=0, int end=-1) -> bool", startswith),
    ("aten::endswith(str self, str substr, int start=0, int end=-1) -> bool", endswith),
    ("aten::replace(str self, str old, str new, int max=-1) -> str", replace),
    ("aten::partition(str self, str separator) -> (str, str, str)", partition),
    ("aten::rpartition(str self, str separator) -> (str, str, str)", rpartition),
    ("aten::split.str(str self, str? separator=None, int max=-1) -> str[]", split),
    ('aten::rsplit(str self, str separator=" ", int max=-1) -> str[]', rsplit),
    ("aten::splitlines(str self, bool keepends=False) -> str[]", splitlines),
    ("aten::join(str self, str[] values) -> str", join),
    ("aten::ord(str string) -> int", ordinal),
    ("aten::chr(int i) -> str", character),
    ("aten::bin(int i) -> str", bin),
    ("aten::oct(int i) -> str", oct),
    ("aten::hex(int i) -> str", hex),
]
