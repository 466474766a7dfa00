"""Script-class programs, scripted by tsjit: each runs and matches eager Python, and its inlined graph has the same
multiset of node kinds as torch.jit's (the oracle), or the difference is recorded with its reason.

The classes are plain Python classes; using them from a scripted function compiles them (as torch.jit does).
Results holding objects are compared by their attributes (`vars`), since a scripted function returns new
instances of the Python class.
"""

# ruff: noqa: UP006, UP035, UP045  (programs written as TorchScript users do)

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest
import torch
from test_script_functions import kinds_difference

from tsjit.api import script

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


# ==============================================================================================================
# the classes
# ==============================================================================================================
class Counter:
    def __init__(self, start: int):
        self.count = start
        self.history: List[int] = []

    def increment(self, by: int = 1) -> int:
        self.count += by
        self.history.append(self.count)
        return self.count


class Point:
    def __init__(self, x: float, y: float):
        self.x = x
        self.y = y

    def norm(self) -> float:
        return math.sqrt(self.x * self.x + self.y * self.y)

    def scaled(self, k: float) -> Point:
        return Point(self.x * k, self.y * k)

    def __add__(self, other: Point) -> Point:
        return Point(self.x + other.x, self.y + other.y)

    @staticmethod
    def origin() -> Point:
        return Point(0.0, 0.0)

    @staticmethod
    def distance(a: Point, b: Point) -> float:
        return (a + b.scaled(-1.0)).norm()


class Stack:
    def __init__(self):
        self.items: List[int] = []

    def push(self, v: int):
        self.items.append(v)

    def pop(self) -> int:
        return self.items.pop()

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> int:
        return self.items[i]

    def __setitem__(self, i: int, v: int):
        self.items[i] = v

    def __contains__(self, v: int) -> bool:
        return v in self.items


class Accumulator:
    def __init__(self, x: torch.Tensor):
        self.total = torch.zeros_like(x)
        self.steps = 0

    def add(self, x: torch.Tensor) -> torch.Tensor:
        self.total = self.total + x
        self.steps += 1
        return self.total

    def mean(self) -> torch.Tensor:
        return self.total / self.steps


class Guard:
    def __init__(self, depth: int):
        self.depth = depth
        self.entered = 0

    def __enter__(self) -> int:
        self.depth += 1
        self.entered += 1
        return self.depth

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any):
        self.depth -= 1


class Line:
    def __init__(self, a: Point, b: Point):
        self.a = a
        self.b = b

    def length(self) -> float:
        return Point.distance(self.a, self.b)

    def midpoint(self) -> Point:
        return (self.a + self.b).scaled(0.5)


class Ping:
    """Methods calling methods defined later in the class."""

    def __init__(self, limit: int):
        self.limit = limit
        self.calls = 0

    def first(self, n: int) -> int:
        self.calls += 1
        return self.second(n) + 1

    def second(self, n: int) -> int:
        self.calls += 1
        return min(n, self.limit)


class Registry:
    def __init__(self):
        self.counts: Dict[str, int] = {}

    def add(self, key: str):
        self.counts[key] = self.counts.get(key, 0) + 1

    def total(self) -> int:
        s = 0
        for v in self.counts.values():
            s += v
        return s


class Vec:
    def __init__(self, data: torch.Tensor):
        self.data = data

    def __add__(self, other: Vec) -> Vec:
        return Vec(self.data + other.data)

    def __mul__(self, k: float) -> Vec:
        return Vec(self.data * k)

    def __neg__(self) -> Vec:
        return Vec(-self.data)

    def dot(self, other: Vec) -> torch.Tensor:
        return (self.data * other.data).sum()


class Cache:
    def __init__(self, size: int):
        self.size = size
        self.value = torch.jit.annotate(Optional[torch.Tensor], None)  # a None attribute needs its type
        self.hits = 0

    def get(self, x: torch.Tensor) -> torch.Tensor:
        value = self.value
        if value is not None:
            self.hits += 1
            return value
        result = x * 2
        self.value = result
        return result


class Welford:
    """Running mean and variance, updated from a loop."""

    def __init__(self):
        self.n = 0
        self.mean = 0.0
        self.m2 = 0.0

    def update(self, x: float):
        self.n += 1
        delta = x - self.mean
        self.mean += delta / self.n
        self.m2 += delta * (x - self.mean)

    def variance(self) -> float:
        if self.n < 2:
            return 0.0
        return self.m2 / (self.n - 1)


class Node:
    def __init__(self, value: int, weight: float = 1.0):
        self.value = value
        self.weight = weight

    def weighted(self) -> float:
        return self.value * self.weight


# ==============================================================================================================
# the programs
# ==============================================================================================================
def counter_increments(n: int) -> Tuple[int, List[int]]:
    c = Counter(n)
    c.increment()
    c.increment(3)
    c.increment(by=2)
    return c.count, c.history


def point_methods(x: float, y: float) -> float:
    p = Point(x, y)
    q = p.scaled(2.0) + Point(1.0, 1.0)
    return q.norm() + p.x


def point_static_methods(x: float) -> float:
    o = Point.origin()
    return Point.distance(o, Point(x, 4.0))


def point_argument(p: Point, k: float) -> float:
    p.x = p.x * k
    return p.norm()


def point_returned(x: float) -> Point:
    return Point(x, x + 1.0).scaled(3.0)


def points_in_list(n: int) -> float:
    points: List[Point] = []
    for i in range(n):
        points.append(Point(float(i), 1.0))
    total = 0.0
    for p in points:
        total += p.norm()
    return total + points[0].y


def points_list_argument(points: List[Point]) -> List[Point]:
    return [p.scaled(2.0) for p in points]


def stack_magic_methods(n: int) -> Tuple[int, int, bool, bool]:
    s = Stack()
    for i in range(n):
        s.push(i * i)
    s[0] = 7
    top = s.pop()
    return len(s) + s[1], top, 4 in s, 100 in s


def accumulate_tensors(x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    acc = Accumulator(x)
    for i in range(3):
        acc.add(x * i)
    return acc.total, acc.mean()


def with_guard(x: torch.Tensor) -> Tuple[torch.Tensor, int, int]:
    g = Guard(0)
    with g as depth:
        x = x + depth
        with g as inner:
            x = x * inner
    return x, g.depth, g.entered


def nested_objects(x: float) -> Tuple[float, float]:
    line = Line(Point(0.0, 0.0), Point(x, 2.0 * x))
    m = line.midpoint()
    line.b = m
    return line.length(), m.y


def methods_call_methods(n: int) -> Tuple[int, int]:
    p = Ping(5)
    r = p.first(n) + p.first(n + 10)
    return r, p.calls


def registry_dict(keys: List[str]) -> Tuple[int, Dict[str, int]]:
    r = Registry()
    for k in keys:
        r.add(k)
    return r.total(), r.counts


def vec_operators(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    u = Vec(a)
    v = Vec(b)
    w = u + v * 2.0
    w += -u
    return w.dot(v) + w.data.sum()


def optional_object(x: torch.Tensor, use: bool) -> torch.Tensor:
    c: Optional[Cache] = None
    if use:
        c = Cache(3)
    if c is not None:
        first = c.get(x)
        second = c.get(x + 1)
        return first + second + c.hits
    return x


def running_statistics(values: List[float]) -> Tuple[float, float]:
    w = Welford()
    for v in values:
        w.update(v)
    return w.mean, w.variance()


def default_and_keyword_construction(n: int) -> float:
    a = Node(n)
    b = Node(value=n + 1, weight=0.5)
    c = Node(2, weight=3.0)
    return a.weighted() + b.weighted() + c.weighted()


def objects_in_dict(names: List[str]) -> int:
    counters: Dict[str, Counter] = {}
    for name in names:
        if name not in counters:
            counters[name] = Counter(0)
        counters[name].increment()
    best = 0
    for name in counters:
        best = max(best, counters[name].count)
    return best


def object_aliasing(n: int) -> Tuple[int, int]:
    a = Counter(n)
    b = a
    b.increment(5)
    c = Counter(a.count)
    c.increment()
    return a.count, c.count


def conditional_construction(x: torch.Tensor, flag: bool) -> torch.Tensor:
    if flag:
        acc = Accumulator(x)
    else:
        acc = Accumulator(x * 2)
        acc.add(x)
    acc.add(x)
    return acc.mean()


def object_in_tuple(x: float) -> Tuple[Point, int]:
    return Point(x, -x), 3


def loop_with_objects(n: int) -> int:
    stack = Stack()
    i = 0
    while len(stack) < n:
        stack.push(i)
        i += 2
        if i in stack:
            break
    total = 0
    for j in range(len(stack)):
        total += stack[j]
    return total


# ==============================================================================================================
# the cases
# ==============================================================================================================
@dataclass
class Case:
    function: Callable
    make_inputs: Callable[[], tuple]
    kinds_difference: dict[str, int] = field(default_factory=dict)  # tsjit count minus torch.jit count
    why: str = ""

    @property
    def name(self) -> str:
        return self.function.__name__


def inputs(*values) -> Callable[[], tuple]:
    """Fresh arguments per call: callables are called, anything else deep-copied (programs may mutate it)."""
    return lambda: tuple(v() if callable(v) else copy.deepcopy(v) for v in values)


CASES = [
    Case(counter_increments, inputs(3)),
    Case(point_methods, inputs(1.5, -2.0)),
    Case(point_static_methods, inputs(3.0)),
    Case(point_argument, inputs(lambda: Point(3.0, 4.0), 2.0)),
    Case(point_returned, inputs(1.5)),
    Case(points_in_list, inputs(4)),
    Case(points_list_argument, inputs(lambda: [Point(1.0, 2.0), Point(-1.0, 0.5)])),
    Case(stack_magic_methods, inputs(5)),
    Case(accumulate_tensors, inputs(lambda: torch.randn(3, 2))),
    Case(with_guard, inputs(lambda: torch.randn(4))),
    Case(nested_objects, inputs(2.0)),
    Case(methods_call_methods, inputs(3)),
    Case(registry_dict, inputs(["a", "b", "a", "c", "a"])),
    Case(vec_operators, inputs(lambda: torch.randn(5), lambda: torch.randn(5))),
    Case(optional_object, inputs(lambda: torch.randn(3), True)),
    Case(running_statistics, inputs([1.0, 2.5, -3.0, 4.0])),
    Case(default_and_keyword_construction, inputs(4)),
    Case(objects_in_dict, inputs(["x", "y", "x", "x", "z"])),
    Case(object_aliasing, inputs(2)),
    Case(conditional_construction, inputs(lambda: torch.randn(3), False)),
    Case(object_in_tuple, inputs(2.5)),
    Case(loop_with_objects, inputs(6)),
]


# ==============================================================================================================
# the tests
# ==============================================================================================================
def comparable(value: Any) -> Any:
    """Objects as (class name, attributes), recursively, so eager's and tsjit's results compare by value."""
    if isinstance(value, list | tuple):
        return type(value)(comparable(v) for v in value)
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items()}
    if isinstance(value, torch.Tensor):
        return value
    if hasattr(value, "__dict__"):
        return (type(value).__name__, comparable(vars(value)))
    return value


def same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, torch.Tensor):
        return isinstance(actual, torch.Tensor) and expected.shape == actual.shape and torch.allclose(expected, actual)
    if isinstance(expected, list | tuple):
        return (type(expected) is type(actual) and len(expected) == len(actual)
                and all(same(e, a) for e, a in zip(expected, actual)))
    if isinstance(expected, dict):
        return isinstance(actual, dict) and expected.keys() == actual.keys() and all(
            same(expected[k], actual[k]) for k in expected)
    if isinstance(expected, float):
        return isinstance(actual, float) and math.isclose(expected, actual, rel_tol=1e-9, abs_tol=1e-12)
    return type(expected) is type(actual) and expected == actual


def run(case: Case, function) -> Any:
    torch.manual_seed(0)
    return comparable(function(*case.make_inputs()))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_runs_and_matches_eager(case: Case):
    expected = run(case, case.function)
    actual = run(case, script(case.function))
    assert same(expected, actual), f"eager {expected!r} != tsjit {actual!r}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_node_kinds_match_torch_jit(case: Case):
    theirs = torch.jit.script(case.function).graph.copy()
    torch._C._jit_pass_inline(theirs)
    assert kinds_difference(theirs, script(case.function).inlined_graph) == case.kinds_difference, case.why


def test_corpus_covers_the_features():
    assert len(CASES) >= 20
