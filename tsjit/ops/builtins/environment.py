"""Builtins that read or change the state around a program: grad mode, autocast, random seeds, warnings,
`print`, `torch.jit.is_scripting()`, hashing and object identity, timing.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Any

import torch

from tsjit.ir.scalar_type import dtype_to_code
from tsjit.ops.builtins.printing import ivalue_str


def print_values(*values: Any) -> None:
    """prim::Print: the values' TorchScript text, separated by spaces, on stdout."""
    print(" ".join(ivalue_str(v) for v in values), flush=True)


def warn(message: str, stacklevel: int) -> None:
    """`warnings.warn(message)` in a scripted program: a UserWarning. (`stacklevel` counts Python frames,
    which a graph does not have; the warning is attributed to the caller of this operation.)"""
    warnings.warn(message, UserWarning, stacklevel=2)


def is_autocast_cpu_enabled() -> bool:
    return torch.is_autocast_enabled("cpu")


def autocast_dtype(device_type: str) -> int:
    return dtype_to_code(torch.get_autocast_dtype(device_type))


def default_dtype() -> int:
    """`torch.get_default_dtype()` when the program runs (torch has no operator for it; it is a Python function
    reading process state, so a program compiled once answers what each call's caller has set)."""
    return dtype_to_code(torch.get_default_dtype())


def manual_seed(seed: int) -> None:
    torch.manual_seed(seed)


def seed_generator(self: torch.Generator, seed: int) -> torch.Generator:
    return self.manual_seed(seed)


def new_generator(device: torch.device | None, seed: int | None) -> torch.Generator:
    generator = torch.Generator(device or "cpu")
    if seed is not None:
        generator.manual_seed(seed)
    return generator


def object_id(x: Any) -> int:
    """prim::id: 0 for None, else the object's identity."""
    return 0 if x is None else id(x)


def hash_value(value: Any) -> int:
    return hash(value)


def save(item: Any, filename: str) -> None:
    torch.save(item, filename)


def time_point() -> int:
    """prim::TimePoint: a monotonic clock in nanoseconds (for prim::AddStatValue's timings)."""
    return time.perf_counter_ns()


def add_stat_value(key: str, val: int) -> None:
    """prim::AddStatValue feeds TorchScript's internal statistics logger; tsjit keeps none."""


OPERATORS: list[tuple[str, Callable]] = [
    ("prim::Print(...) -> ()", print_values),
    ("aten::warn(str message, int stacklevel=2) -> ()", warn),
    ("aten::is_scripting() -> bool", lambda: True),
    ("aten::_get_tracing_state() -> bool", lambda: False),
    ("aten::has_torch_function(...) -> bool", lambda *args: False),
    ("aten::is_grad_enabled() -> bool", torch.is_grad_enabled),
    ("aten::set_grad_enabled(bool val) -> ()", torch._C._set_grad_enabled),
    ("aten::is_autocast_enabled() -> bool", torch.is_autocast_enabled),
    ("aten::is_autocast_cpu_enabled() -> bool", is_autocast_cpu_enabled),
    ("aten::get_autocast_dtype(str device_type) -> ScalarType", autocast_dtype),
    ("prim::get_default_dtype() -> ScalarType", default_dtype),
    ("aten::_get_cpu_capability() -> str", torch.backends.cpu.get_cpu_capability),
    ("aten::manual_seed(int seed) -> ()", manual_seed),
    ("aten::manual_seed.generator(Generator(a!) self, int seed) -> Generator(a!)", seed_generator),
    ("aten::initial_seed(Generator self) -> int", lambda self: self.initial_seed()),
    ("aten::seed(Generator(a!) self) -> int", lambda self: self.seed()),
    ("aten::Generator(*, Device? device=None, int? seed=None) -> Generator", new_generator),
    ("aten::hash.generic(t value) -> int", hash_value),
    ("prim::id(AnyClassType? x) -> int", object_id),
    ("aten::save(t item, str filename) -> ()", save),
    ("prim::TimePoint() -> int", time_point),
    ("prim::AddStatValue(str key, int val) -> ()", add_stat_value),
]
