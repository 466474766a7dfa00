"""Alias annotations: `Tensor(a!)`, `Tensor(a -> *)`, `Tensor(a)[]`, as the schema and type parsers read them.

Its own module so that the schema parser (which reads types) and the type parser (which reads alias annotations
inside types) both import it instead of each other.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

WILDCARD = "*"


class AliasInfo:
    """The alias annotation of one argument or return, or (in contained_types) of what a container holds.

    before_set: the alias sets the value may be in when the operator starts (`a` in `Tensor(a)`, `*` for the
    wildcard); after_set: the sets it may be in afterwards (differs only with `->`); is_write: the operator
    writes to it (`!`). Sets compare as sets; their written order is kept for printing only.
    """

    __slots__ = ("before_set", "after_set", "is_write", "contained_types", "_before_order", "_after_order")

    def __init__(self, before_set: Iterable[str] = (), after_set: Iterable[str] = (), is_write: bool = False,
                 contained_types: Sequence[AliasInfo] = ()):
        self._before_order = _ordered(before_set)
        self._after_order = _ordered(after_set)
        self.before_set = frozenset(self._before_order)
        self.after_set = frozenset(self._after_order)
        self.is_write = is_write
        self.contained_types = tuple(contained_types)

    @property
    def is_wildcard_before(self) -> bool:
        return WILDCARD in self.before_set

    @property
    def is_wildcard_after(self) -> bool:
        return WILDCARD in self.after_set

    def with_contained_types(self, contained_types: Sequence[AliasInfo]) -> AliasInfo:
        return AliasInfo(self._before_order, self._after_order, self.is_write, contained_types)

    def _key(self) -> tuple:
        return self.before_set, self.after_set, self.is_write, self.contained_types

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AliasInfo) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        """`(a)`, `(a!)`, `(a -> *)`: the schema spelling, without the contained types."""
        text = "(" + "|".join(self._before_order) + ("!" if self.is_write else "")
        if self.before_set != self.after_set:
            text += " -> " + "|".join(self._after_order)
        return text + ")"

    def __repr__(self) -> str:
        contained = f", contained_types={list(self.contained_types)}" if self.contained_types else ""
        return (f"AliasInfo(before_set={set(self._before_order)}, after_set={set(self._after_order)}, "
                f"is_write={self.is_write}{contained})")


def nest_alias_info(container: AliasInfo | None, element: AliasInfo | None) -> AliasInfo | None:
    """The alias info of a list whose own annotation is `container` and whose elements have `element`.

    An annotated element needs a container annotation to hang from; torch then creates one without sets that
    is written to exactly when the element is (so `Tensor(a!)[]` is a mutable list of tensors).
    """
    if element is None:
        return container
    if container is None:
        container = AliasInfo((), (), is_write=element.is_write)
    return container.with_contained_types((*container.contained_types, element))


def _ordered(sets: Iterable[str]) -> tuple[str, ...]:
    """Set names in a stable order: as given for sequences (duplicates dropped), sorted for sets."""
    if isinstance(sets, set | frozenset):
        return tuple(sorted(sets))
    return tuple(dict.fromkeys(sets))
