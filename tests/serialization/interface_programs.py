"""Modules for the interface archive tests: a submodule typed by a module interface, modules of a ModuleList
indexed as the interface, a script-class attribute typed by a class interface, and a script-class instance (with
a property) held as an attribute. The interfaces
are torch.jit's, so torch.jit scripts and saves the same modules."""

# ruff: noqa: UP006, UP035  (TorchScript's typing style)

import warnings
from typing import List

import torch
from torch import Tensor, nn

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)

    @torch.jit.interface
    class Pair(nn.Module):
        def combine(self, x: Tensor, y: Tensor) -> Tensor:
            pass

        def forward(self, x: Tensor) -> Tensor:
            pass

    @torch.jit.interface
    class Unary(nn.Module):
        def forward(self, x: Tensor) -> Tensor:
            pass

    @torch.jit.interface
    class Scorer:
        def score(self, x: int) -> int:
            pass


class Adds(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.tensor([0.5, -1.0]))

    def combine(self, x: Tensor, y: Tensor) -> Tensor:
        return x + y + self.bias

    def forward(self, x: Tensor) -> Tensor:
        return x * 2


class Multiplies(nn.Module):
    """Another implementation of Pair, swapped in for Adds after scripting (scripted on its own, it compiles
    `combine` only when exported)."""

    @torch.jit.export
    def combine(self, x: Tensor, y: Tensor) -> Tensor:
        return x * y

    def forward(self, x: Tensor) -> Tensor:
        return x * 5


class UsesPair(nn.Module):
    sub: Pair

    def __init__(self):
        super().__init__()
        self.sub = Adds()

    def forward(self, x: Tensor) -> Tensor:
        return self.sub(x) + self.sub.combine(x, x)


class AddK:
    def __init__(self, k: int):
        self.k = k

    def score(self, x: int) -> int:
        return x + self.k


class HoldsScorer(nn.Module):
    helper: Scorer

    def __init__(self):
        super().__init__()
        self.helper = AddK(2)

    def forward(self, x: Tensor) -> Tensor:
        return x + self.helper.score(3)


class Window:
    def __init__(self, size: int):
        self.size = size
        self.seen: List[float] = []

    @property
    def full(self) -> bool:
        return len(self.seen) >= self.size

    def push(self, value: float) -> float:
        if self.full:
            self.seen.pop(0)
        self.seen.append(value)
        return sum(self.seen) / len(self.seen)


class Smooths(nn.Module):
    def __init__(self):
        super().__init__()
        self.window = Window(2)

    def forward(self, x: Tensor) -> Tensor:
        return x * self.window.push(float(x.sum()))


class Triples(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        return x * 3


class IndexesLayers(nn.Module):
    """`self.layers[i]` with `i` known only at run time: a value of the interface type (which only `forward`
    can be, as scripting the layers compiles nothing else)."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Adds(), Triples()])

    def forward(self, x: Tensor) -> Tensor:
        total = x
        for i in range(2):
            layer: Unary = self.layers[i]
            total = total + layer.forward(x)
        return total


def build(name: str) -> nn.Module:
    modules = {"UsesPair": UsesPair, "IndexesLayers": IndexesLayers, "HoldsScorer": HoldsScorer, "Smooths": Smooths}
    return modules[name]()


with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    torch.jit.script(AddK)  # torch.jit stores only compiled classes in an interface-typed attribute
