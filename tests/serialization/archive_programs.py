"""Programs for the archive tests that the e2e corpora do not have: a script class with `__getstate__` /
`__setstate__`, an enum and a NamedTuple held as module attributes, and a module whose attributes view one
storage. torch.jit scripts them (`scripted_with_objects()`), so they also test reading torch's archives."""

# ruff: noqa: UP006, UP035  (TorchScript's typing style)

from enum import Enum
from typing import NamedTuple, Tuple

import torch
from torch import Tensor


class State:
    """Pickled through its `__getstate__` (the state is not the attribute dict)."""

    def __init__(self, n: int):
        self.n = n
        self.t = torch.ones(2)

    def __getstate__(self) -> Tuple[int, Tensor]:
        return (self.n + 100, self.t)

    def __setstate__(self, state: Tuple[int, Tensor]) -> None:
        self.n = state[0] - 100
        self.t = state[1]


class Color(Enum):
    RED = 1
    GREEN = 2


class Pair(NamedTuple):
    a: Tensor
    b: int


class WithObjects(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.state = State(5)
        self.color = Color.GREEN
        self.pair = Pair(torch.zeros(1), 3)

    def forward(self, x: Tensor) -> Tensor:
        if self.color == Color.GREEN:
            x = x + 1
        return x * self.state.n + self.state.t.sum() + self.pair[0] + self.pair[1]


def scripted_with_objects():
    """WithObjects scripted by torch.jit (State must be scripted first, as a class)."""
    torch.jit.script(State)
    return torch.jit.script(WithObjects())


class SharedStorage(torch.nn.Module):
    """A buffer and an attribute that views it: one storage in the archive, shared again after loading."""

    def __init__(self):
        super().__init__()
        self.register_buffer("base", torch.arange(6.0))
        self.view = self.base[2:5]

    def forward(self, x: Tensor) -> Tensor:
        self.base.add_(1.0)
        return x + self.view
