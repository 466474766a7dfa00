"""MemoryDAG: the "may point to" graph behind AliasDb (seed: jit-overview.md "Alias Analysis in the IR").

Vertices are Elements: one per mutable IR value, plus elements that are not values (the wildcard of a type,
the memory a container holds). An edge `a -> b` says `a` may point to the memory of `b`. An element that
points to nothing is a leaf and stands for one freshly allocated memory location, so the memory locations of
an element are the leaves it reaches, and two elements may alias when those sets meet.

Containers also record their *contained* elements (what a list, dict, tuple or object holds); "may contain
alias" follows pointers and contained elements alike, to ask whether two values can reach common memory.

Location sets are Python ints used as bit sets (bit i = leaf element i), computed on demand and cached until
the DAG changes; AliasDb intersects them. Edges may form cycles (a loop-carried value points to itself
through the body), which the searches tolerate.
"""

from __future__ import annotations


class Element:
    """A vertex: `points_to` are the elements it may point to, `contained` what it holds as a container."""

    __slots__ = ("index", "name", "points_to", "contained")

    def __init__(self, index: int, name: str):
        self.index = index
        self.name = name
        self.points_to: list[Element] = []
        self.contained: list[Element] = []

    @property
    def bit(self) -> int:
        return 1 << self.index

    def __repr__(self) -> str:
        return f"Element({self.name})"


class MemoryDAG:
    """The elements and their edges, with cached leaf sets."""

    def __init__(self) -> None:
        self.elements: list[Element] = []
        self._locations: dict[Element, int] = {}
        self._reachable: dict[Element, int] = {}

    def new_element(self, name: str) -> Element:
        """A fresh element: a leaf, i.e. a memory location of its own until it is made to point somewhere."""
        element = Element(len(self.elements), name)
        self.elements.append(element)
        return element

    def make_pointer_to(self, source: Element, target: Element) -> None:
        if source is target or target in source.points_to:
            return
        source.points_to.append(target)
        self._invalidate()

    def add_to_contained(self, element: Element, container: Element) -> None:
        if element is container or element in container.contained:
            return
        container.contained.append(element)
        self._invalidate()

    def memory_locations(self, element: Element) -> int:
        """The leaves `element` reaches through points-to edges, as a bit set."""
        cached = self._locations.get(element)
        if cached is None:
            cached = self._leaves(element, follow_contained=False)
            self._locations[element] = cached
        return cached

    def reachable_locations(self, element: Element) -> int:
        """The leaves reachable through points-to and contained edges: all memory `element` can get at."""
        cached = self._reachable.get(element)
        if cached is None:
            cached = self._leaves(element, follow_contained=True)
            self._reachable[element] = cached
        return cached

    def _leaves(self, start: Element, follow_contained: bool) -> int:
        mask = 0
        seen: set[Element] = set()
        stack = [start]
        while stack:
            element = stack.pop()
            if element in seen:
                continue
            seen.add(element)
            if not element.points_to:
                mask |= element.bit
            stack.extend(element.points_to)
            if follow_contained:
                stack.extend(element.contained)
        return mask

    def _invalidate(self) -> None:
        self._locations.clear()
        self._reachable.clear()
