"""MemoryDAG's leaf sets against a plain search, on random graphs with cycles and containers."""

from __future__ import annotations

import random

import pytest

from tsjit.ir.memory_dag import MemoryDAG


def _plain_leaves(start, follow_contained):
    mask, seen, stack = 0, set(), [start]
    while stack:
        element = stack.pop()
        if element in seen:
            continue
        seen.add(element)
        if not element.points_to:
            mask |= element.bit
        stack.extend(element.points_to + (element.contained if follow_contained else []))
    return mask


@pytest.mark.parametrize("seed", range(20))
def test_leaf_sets_match_a_plain_search(seed):
    generator = random.Random(seed)
    dag = MemoryDAG()
    elements = [dag.new_element(f"e{i}") for i in range(generator.randint(2, 40))]
    for _ in range(generator.randint(0, 80)):
        source, target = generator.choice(elements), generator.choice(elements)
        if generator.random() < 0.7:
            dag.make_pointer_to(source, target)
        else:
            dag.add_to_contained(source, target)
    for element in generator.sample(elements, len(elements)):  # in random order, so caches fill differently
        assert dag.memory_locations(element) == _plain_leaves(element, False)
        assert dag.reachable_locations(element) == _plain_leaves(element, True)


@pytest.mark.parametrize("seed", range(20))
def test_sets_stay_right_when_edges_come_between_queries(seed):
    """A new edge drops only the cached sets of the elements reaching its source; the others must still be right."""
    generator = random.Random(seed)
    dag = MemoryDAG()
    elements = [dag.new_element(f"e{i}") for i in range(generator.randint(2, 30))]
    for _ in range(generator.randint(1, 60)):
        source, target = generator.choice(elements), generator.choice(elements)
        if generator.random() < 0.7:
            dag.make_pointer_to(source, target)
        else:
            dag.add_to_contained(source, target)
        for element in generator.sample(elements, generator.randint(1, len(elements))):
            assert dag.memory_locations(element) == _plain_leaves(element, False)
            assert dag.reachable_locations(element) == _plain_leaves(element, True)


def test_an_edge_keeps_the_sets_of_elements_that_do_not_reach_it():
    dag = MemoryDAG()
    a, b, c, d = (dag.new_element(name) for name in "abcd")
    dag.make_pointer_to(a, b)
    sets = {e: dag.memory_locations(e) for e in (a, b, c, d)}
    dag.make_pointer_to(c, d)  # nothing reaches c: a's and b's sets stay cached
    assert dag._locations.get(a) == sets[a] and dag._locations.get(b) == sets[b] and c not in dag._locations
    dag.make_pointer_to(b, d)  # a reaches b: both recomputed
    assert a not in dag._locations and dag.memory_locations(a) == d.bit
