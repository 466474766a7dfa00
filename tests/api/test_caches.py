"""Process-lifetime caches keyed by user objects let go of them: a function, an enum class or a NamedTuple made at
run time and scripted is freed once the program drops it (a server scripting ever new programs keeps no garbage),
while scripting the same object twice still gives the same result."""

# no `from __future__ import annotations`: the annotations name classes local to the functions below, which the
# functions' bodies name too, so that the scripted functions find them as closure variables

import enum
import gc
import weakref
from typing import NamedTuple

import torch

import tsjit


def scripted_closure() -> weakref.ref:
    def add_one(x):
        return x + 1

    scripted = tsjit.script(add_one)
    assert tsjit.script(add_one) is scripted
    assert torch.equal(scripted(torch.ones(2)), torch.full((2,), 2.0))
    return weakref.ref(add_one)


def scripted_enum() -> weakref.ref:
    class Color(enum.Enum):
        RED = 1
        GREEN = 2

    def value_of(color: Color) -> int:
        return color.value if color == Color.GREEN else 0  # Color in the body: a closure variable

    assert tsjit.script(value_of)(Color.GREEN) == 2
    return weakref.ref(Color)


def scripted_named_tuple() -> weakref.ref:
    class Pair(NamedTuple):
        first: torch.Tensor
        second: torch.Tensor

    def total(pair: Pair) -> torch.Tensor:
        return Pair(pair.second, pair.first).first + pair.second

    assert torch.equal(tsjit.script(total)(Pair(torch.ones(1), torch.ones(1))), torch.full((1,), 2.0))
    return weakref.ref(Pair)


def test_scripted_functions_enums_and_named_tuples_are_freed_when_dropped() -> None:
    references = [scripted_closure(), scripted_enum(), scripted_named_tuple()]
    gc.collect()
    assert [reference() for reference in references] == [None, None, None]
