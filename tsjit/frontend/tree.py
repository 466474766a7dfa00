"""Trees: the s-expressions both script frontends produce and the IR emitter consumes.

A Tree is either an atom, a `String` holding an identifier, number or string value, or a `Compound` with a
kind (a token kind from tsjit.source.lexer: `"+"`, `"TK_APPLY"`, `"TK_VAR"`, ...), a SourceRange and a tuple
of subtrees. `z.sigmoid() - (x + y)` is

    (-
      (apply (. (variable (ident z)) (ident sigmoid)) (list) (list))
      (+ (variable (ident x)) (variable (ident y))))

`str(tree)` prints that form exactly as TorchScript's pretty printer does (atoms bare, wrapped at 40
columns), so torch's own trees can serve as an oracle. Trees compare equal when their kinds and atoms agree,
whatever their ranges, so the text parser and the Python-AST frontend can be checked against each other.
Typed access to particular kinds lives in tree_views.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tsjit.source.lexer import TK_STRING, kind_to_string
from tsjit.source.source_range import SourceRange

PRETTY_WIDTH = 40


class Tree:
    """A node of the AST: an atom (String) or a Compound. Use the subclasses; this holds what they share."""

    __slots__ = ("kind",)

    def __init__(self, kind: str):
        self.kind = kind

    @property
    def is_atom(self) -> bool:
        return True

    @property
    def trees(self) -> tuple[Tree, ...]:
        return ()

    @property
    def range(self) -> SourceRange:
        raise TypeError(f"a {kind_to_string(self.kind)} atom has no source range")

    @property
    def string_value(self) -> str:
        raise TypeError(f"string_value is only defined for string atoms, not {kind_to_string(self.kind)}")

    def tree(self, i: int) -> Tree:
        """The i-th subtree."""
        return self.trees[i]

    def map(self, fn: Callable[[Tree], Tree]) -> Tree:
        """The same kind and range with fn applied to each subtree (an atom maps to itself)."""
        return self

    def flat(self) -> str:
        """The s-expression on one line: `(+ (variable (ident x)) (const 1))`."""
        return _flat(self, {})

    def __str__(self) -> str:
        return _pretty(self, 0, {})

    def __repr__(self) -> str:
        return f"Tree({self.flat()})"


# TorchScript's name for a tree reference; in Python a Tree is its own reference.
TreeRef = Tree


class String(Tree):
    """An atom: the text of an identifier, a number or a string literal's value."""

    __slots__ = ("value",)

    def __init__(self, value: str):
        self.kind = TK_STRING
        self.value = value

    @property
    def string_value(self) -> str:
        return self.value

    @classmethod
    def create(cls, value: str) -> String:
        return cls(value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tree):
            return NotImplemented
        return isinstance(other, String) and other.value == self.value

    def __hash__(self) -> int:
        return hash((TK_STRING, self.value))


class Compound(Tree):
    """A node with a kind, a source range and subtrees; its range also covers its subtrees' ranges."""

    __slots__ = ("_range", "_trees", "_hash")

    def __init__(self, kind: str, range: SourceRange, trees: Sequence[Tree] = ()):
        self.kind = kind
        self._trees = trees = tuple(trees)
        self._range = merge_ranges(range, trees) if trees else range
        self._hash: int | None = None

    @classmethod
    def create(cls, kind: str, range: SourceRange, trees: Sequence[Tree] = ()) -> Compound:
        return cls(kind, range, trees)

    @property
    def is_atom(self) -> bool:
        return False

    @property
    def trees(self) -> tuple[Tree, ...]:
        return self._trees

    @property
    def range(self) -> SourceRange:
        return self._range

    def map(self, fn: Callable[[Tree], Tree]) -> Tree:
        return Compound(self.kind, self._range, [fn(t) for t in self._trees])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tree):
            return NotImplemented
        if self is other:
            return True
        return isinstance(other, Compound) and other.kind == self.kind and other._trees == self._trees

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((self.kind, self._trees))
        return self._hash


def merge_ranges(range: SourceRange, trees: Sequence[Tree]) -> SourceRange:
    """`range` widened to cover every compound subtree's range in the same Source (as TorchScript does)."""
    source, start, end = range.source, range.start, range.end
    for tree in trees:  # written for speed: every tree the parser builds passes here
        if isinstance(tree, Compound):  # atoms have no range
            subrange = tree._range
            if subrange.source is source:
                if subrange.start < start:
                    start = subrange.start
                if subrange.end > end:
                    end = subrange.end
    if start == range.start and end == range.end:
        return range
    return SourceRange(source, start, end)


def _flat(tree: Tree, cache: dict[int, str]) -> str:
    """The one-line s-expression of `tree` (memoized by identity, since subtrees are shared)."""
    key = id(tree)
    if key not in cache:
        if tree.is_atom:
            cache[key] = tree.string_value
        else:
            parts = [kind_to_string(tree.kind), *(_flat(t, cache) for t in tree.trees)]
            cache[key] = "(" + " ".join(parts) + ")"
    return cache[key]


def _pretty(tree: Tree, indent: int, cache: dict[int, str]) -> str:
    """TorchScript's pretty_tree: one line if it fits in PRETTY_WIDTH columns, else one subtree per line."""
    flat = _flat(tree, cache)
    # width counts UTF-8 bytes, as the C++ printer's std::string::size does
    if indent + len(flat.encode("utf-8")) < PRETTY_WIDTH or tree.is_atom:
        return flat
    pad = "\n" + " " * (indent + 2)
    children = "".join(pad + _pretty(t, indent + 2, cache) for t in tree.trees)
    return f"({kind_to_string(tree.kind)}{children})"
