"""MemoryDAG: the "may point to" graph behind AliasDb (seed: jit-overview.md "Alias Analysis in the IR").

Vertices are Elements: one per mutable IR value, plus elements that are not values (the wildcard of a type,
the memory a container holds). An edge `a -> b` says `a` may point to the memory of `b`. An element that
points to nothing is a leaf and stands for one freshly allocated memory location, so the memory locations of
an element are the leaves it reaches, and two elements may alias when those sets meet.

Containers also record their *contained* elements (what a list, dict, tuple or object holds); "may contain
alias" follows pointers and contained elements alike, to ask whether two values can reach common memory.

Location sets are Python ints used as bit sets (bit i = leaf element i), computed on demand and cached until
the DAG changes; AliasDb intersects them. A new edge out of an element changes the sets of that element and of
the elements that reach it, and only theirs are dropped (each element lists the elements with an edge into it):
CSE, which makes each value it replaces point to its replacement, then keeps the sets of the rest of the graph.
Edges may form cycles (a loop-carried value points to itself through the body), which the searches tolerate.
"""

from __future__ import annotations


class Element:
    """A vertex: `points_to` are the elements it may point to, `contained` what it holds as a container;
    `referrers` are the elements with an edge (of either kind) into it."""

    __slots__ = ("index", "name", "points_to", "contained", "referrers")

    def __init__(self, index: int, name: str):
        self.index = index
        self.name = name
        self.points_to: list[Element] = []
        self.contained: list[Element] = []
        self.referrers: list[Element] = []

    @property
    def bit(self) -> int:
        return 1 << self.index

    def __repr__(self) -> str:
        return f"Element({self.name})"


class MemoryDAG:
    """The elements and their edges, with cached leaf sets."""

    def __init__(self) -> None:
        self.elements: list[Element] = []
        self.version = 0  # counts changes of edges: what was computed from the edges before is stale
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
        target.referrers.append(source)
        self._invalidate(source)

    def add_to_contained(self, element: Element, container: Element) -> None:
        if element is container or element in container.contained:
            return
        container.contained.append(element)
        element.referrers.append(container)
        self._invalidate(container)

    def memory_locations(self, element: Element) -> int:
        """The leaves `element` reaches through points-to edges, as a bit set."""
        if not element.points_to:  # a leaf (most values: fresh tensors) is its own location, no search needed
            return element.bit
        cached = self._locations.get(element)
        return cached if cached is not None else self._leaves(element, follow_contained=False)

    def reachable_locations(self, element: Element) -> int:
        """The leaves reachable through points-to and contained edges: all memory `element` can get at."""
        if not element.points_to and not element.contained:
            return element.bit
        cached = self._reachable.get(element)
        return cached if cached is not None else self._leaves(element, follow_contained=True)

    def _leaves(self, start: Element, follow_contained: bool) -> int:
        """The leaves `start` reaches, caching the answer for every element the search passes: one Tarjan search
        over the strongly connected components (cycles share one answer), each component's leaves the union of
        its own and its successors', which are complete before it. Linear in the elements not cached yet."""
        cache = self._reachable if follow_contained else self._locations

        def successors(element: Element) -> list[Element]:
            return element.points_to + element.contained if follow_contained else element.points_to

        order: dict[Element, int] = {start: 0}
        low: dict[Element, int] = {start: 0}
        open_elements: list[Element] = [start]
        on_stack = {start}
        work = [(start, iter(successors(start)))]
        while work:
            element, children = work[-1]
            child = next((c for c in children if c not in cache), None)
            if child is not None:
                if child not in order:
                    order[child] = low[child] = len(order)
                    open_elements.append(child)
                    on_stack.add(child)
                    work.append((child, iter(successors(child))))
                elif child in on_stack:
                    low[element] = min(low[element], order[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[element])
            if low[element] == order[element]:
                self._close_component(element, open_elements, on_stack, cache, successors)
        return cache[start]

    @staticmethod
    def _close_component(root: Element, open_elements: list[Element], on_stack: set[Element],
                         cache: dict[Element, int], successors) -> None:
        component = []
        while True:
            member = open_elements.pop()
            on_stack.discard(member)
            component.append(member)
            if member is root:
                break
        members = set(component)
        mask = 0
        for member in component:
            if not member.points_to:
                mask |= member.bit
            for successor in successors(member):
                if successor not in members:
                    mask |= cache[successor]
        for member in component:
            cache[member] = mask

    def _invalidate(self, changed: Element) -> None:
        """Drop the sets a new edge out of `changed` makes stale: those of `changed` and of every element reaching it
        (through either kind of edge, which for `memory_locations` drops a few sets that are still right)."""
        self.version += 1
        if not self._locations and not self._reachable:
            return  # nothing cached (while AliasDb builds the DAG)
        stale, work = {changed}, [changed]
        while work:
            element = work.pop()
            self._locations.pop(element, None)
            self._reachable.pop(element, None)
            for referrer in element.referrers:
                if referrer not in stale:
                    stale.add(referrer)
                    work.append(referrer)
