"""Interned symbols: the `ns::name` strings that name node kinds and attributes.

A Symbol is interned, so `node.kind is prim.If` is an identity check. Namespaces are objects whose attributes
create symbols on demand, which lets any user namespace exist without registration:

    from tsjit.ir.symbols import aten, prim, attr, Symbol
    aten.add                  # Symbol("aten::add")
    Symbol.from_qual("my::op") is Namespace("my").op
"""

from __future__ import annotations

import threading

from tsjit.errors import IRError


class Symbol(str):
    """An interned qualified name `ns::name`; compares and hashes like its string."""

    __slots__ = ("ns", "name")
    _table: dict[str, Symbol] = {}
    _lock = threading.Lock()

    ns: str
    name: str

    def __new__(cls, qualified: str) -> Symbol:
        found = cls._table.get(qualified)
        if found is not None:
            return found
        ns, sep, name = qualified.partition("::")
        if not sep or not ns or not name:
            raise IRError(f"symbol {qualified!r} is not of the form 'namespace::name'")
        with cls._lock:
            found = cls._table.get(qualified)
            if found is None:
                found = super().__new__(cls, qualified)
                found.ns, found.name = ns, name
                cls._table[qualified] = found
        return found

    @classmethod
    def from_qual(cls, qualified: str) -> Symbol:
        return cls(qualified)

    @classmethod
    def create(cls, ns: str, name: str) -> Symbol:
        return cls(f"{ns}::{name}")

    def __reduce__(self):
        return (Symbol, (str(self),))

    def __repr__(self) -> str:
        return f"Symbol({str(self)!r})"

    # interned: identity is equality, but keep str hashing so a Symbol and its string share dict slots
    __hash__ = str.__hash__


class Namespace:
    """A symbol namespace: `Namespace("aten").add` is `Symbol("aten::add")`."""

    def __init__(self, ns: str):
        self._ns = ns

    def __getattr__(self, name: str) -> Symbol:
        """Called on the first use of a name only: the symbol is then stored as an attribute (passes compare
        `node.kind is prim.If` in their inner loops)."""
        if name.startswith("__") and name.endswith("__") and name not in _DUNDER_OPS:
            raise AttributeError(name)
        symbol = Symbol.create(self._ns, name)
        setattr(self, name, symbol)
        return symbol

    def __repr__(self) -> str:
        return f"Namespace({self._ns!r})"


# aten builtins whose names are Python dunders (aten::__getitem__, aten::__is__, ...) stay reachable as attributes
_DUNDER_OPS = frozenset(
    {"__getitem__", "__is__", "__isnot__", "__not__", "__and__", "__or__", "__xor__", "__contains__",
     "__lshift__", "__rshift__", "__interpolate", "__round_to_zero_floordiv", "__range_length",
     "__derive_index", "__upsample", "__upsample_bilinear", "__iand__", "__ior__", "__ixor__",
     "__ilshift__", "__irshift__", "__upsample_nearest", "__list_to_tensor"}
)

aten = Namespace("aten")
prim = Namespace("prim")
attr = Namespace("attr")
onnx = Namespace("onnx")
cuda = Namespace("cuda")
prims = Namespace("prims")


def attribute_symbol(name: str | Symbol) -> Symbol:
    """The attr:: symbol for an attribute name given as a plain string or as a Symbol (remembered by name: every
    attribute read and write asks, a few thousand times in a first call)."""
    if isinstance(name, Symbol):
        return name
    found = _ATTRIBUTE_SYMBOLS.get(name)
    if found is None:
        found = _ATTRIBUTE_SYMBOLS[name] = Symbol.create("attr", name)
    return found


_ATTRIBUTE_SYMBOLS: dict[str, Symbol] = {}
