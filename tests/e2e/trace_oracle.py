"""What the tracing tests share: running a program on fresh inputs, comparing results, and inputs of other
sizes: the dimensions a strategy picks (all, the leading one, all but the last) grow by one where they are
larger than 1, consistently across the inputs, so sizes that agreed still agree."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

OUT_OF_REACH = object()  # the program raised on these inputs


def outcome(function: Callable, make_inputs: Callable[[], tuple]) -> Any:
    """The function's result on fresh inputs (random operators seeded alike), or OUT_OF_REACH if it raised."""
    inputs = make_inputs()
    torch.manual_seed(0)
    try:
        return function(*inputs)
    except Exception:
        return OUT_OF_REACH


def same(expected: Any, actual: Any) -> bool:
    """Results agree: tensors allclose with equal dtype and shape, containers (NamedTuples too) element by element,
    other values equal and of one type; OUT_OF_REACH only with itself. (The one comparison of the tracing tests and
    of the conformance corpus's nn modules.)"""
    if isinstance(expected, torch.Tensor):
        return (isinstance(actual, torch.Tensor) and expected.shape == actual.shape and expected.dtype == actual.dtype
                and torch.allclose(expected, actual, rtol=1e-4, atol=1e-5, equal_nan=True))
    if isinstance(expected, list | tuple):
        return (isinstance(actual, list | tuple) and len(expected) == len(actual)
                and all(same(e, a) for e, a in zip(expected, actual)))
    if isinstance(expected, dict):
        return isinstance(actual, dict) and expected.keys() == actual.keys() and all(
            same(expected[k], actual[k]) for k in expected)
    if expected is OUT_OF_REACH or actual is OUT_OF_REACH:
        return expected is actual
    return type(expected) is type(actual) and expected == actual


# which dimensions of a tensor of rank r a resizing strategy changes
STRATEGIES: dict[str, Callable[[int], range]] = {
    "all": lambda rank: range(rank),
    "leading": lambda rank: range(min(rank, 1)),
    "all_but_last": lambda rank: range(rank - 1),
}


def other_inputs(inputs: tuple, strategy: str = "all") -> dict[int, int] | None:
    """How the sizes change (n -> n + 1 for n > 1), or None when no tensor has such a dimension."""
    dims = STRATEGIES[strategy]
    sizes = {t.shape[d] for t in _tensors(inputs) for d in dims(t.dim()) if t.shape[d] > 1}
    return {n: n + 1 for n in sizes} or None


def resized(inputs: tuple, seed: int, strategy: str = "all") -> tuple:
    """Inputs like `inputs` with the strategy's dimensions one bigger, values drawn like the originals."""
    torch.manual_seed(seed)
    return _resized(inputs, other_inputs(inputs, strategy) or {}, STRATEGIES[strategy])


def _resized(value: Any, sizes: dict[int, int], dims: Callable[[int], range]) -> Any:
    if isinstance(value, torch.Tensor):
        chosen = dims(value.dim())
        return _like(value, [sizes.get(n, n) if d in chosen else n for d, n in enumerate(value.shape)])
    if isinstance(value, list | tuple):
        return type(value)(_resized(v, sizes, dims) for v in value)
    if isinstance(value, dict):
        return {k: _resized(v, sizes, dims) for k, v in value.items()}
    return value


def _like(tensor: torch.Tensor, shape: list[int]) -> torch.Tensor:
    """A fresh tensor of `shape` with values in the original's range (indices stay valid)."""
    if tensor.dtype is torch.bool:
        return torch.rand(shape) > 0.5
    if tensor.is_floating_point() or tensor.is_complex():
        return torch.randn(shape, dtype=tensor.dtype).requires_grad_(tensor.requires_grad)
    low, high = (int(tensor.min()), int(tensor.max()) + 1) if tensor.numel() else (0, 2)
    return torch.randint(low, high, shape, dtype=tensor.dtype)


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, list | tuple):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []
