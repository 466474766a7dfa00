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
