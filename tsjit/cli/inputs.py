"""Example inputs from the command line: random tensors from shape/dtype specs (common.py checks their spelling),
numbers, tuples, or the tensors a .pt file holds."""

from __future__ import annotations

from typing import Any

import torch

from tsjit.cli.common import NUMBER_KINDS, CommandError, split_tuple


def make_inputs(specs: list[str], seed: int) -> tuple[Any, ...]:
    """The inputs the specs describe (random values from `seed`), or the tuple a single .pt file holds."""
    if len(specs) == 1 and specs[0].endswith(".pt"):
        return load_tensors(specs[0])
    generator = torch.Generator().manual_seed(seed)
    return tuple(make_input(spec, generator) for spec in specs)


def make_input(spec: str, generator: torch.Generator) -> Any:
    if spec.startswith("("):
        return tuple(make_input(part, generator) for part in split_tuple(spec))
    head, _, tail = spec.partition(":")
    if head in NUMBER_KINDS:
        return tail.lower() in ("true", "1") if head == "bool" else (int if head == "int" else float)(tail)
    sizes = [] if head == "scalar" else [int(size) for size in head.split("x")]
    return random_tensor(sizes, getattr(torch, tail or "float32"), generator)


def random_tensor(sizes: list[int], dtype: torch.dtype, generator: torch.Generator) -> torch.Tensor:
    """Normal values for floating and complex dtypes, 0..9 for integers, False/True for bool."""
    if dtype.is_floating_point or dtype.is_complex:
        return torch.randn(sizes, generator=generator, dtype=dtype)
    high = 2 if dtype == torch.bool else 10
    return torch.randint(0, high, sizes, generator=generator).to(dtype)


def load_tensors(path: str) -> tuple[Any, ...]:
    """The tuple or list of inputs `torch.save` wrote to `path` (read with weights_only: no code runs)."""
    try:
        value = torch.load(path, weights_only=True)
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror or error}") from None
    except Exception as error:  # torch.load's unpickler raises many kinds; each means the file is not inputs
        raise CommandError(f"cannot load {path} as inputs: {error}") from None
    if isinstance(value, torch.Tensor):
        return (value,)
    if not isinstance(value, tuple | list):
        raise CommandError(f"{path} holds a {type(value).__name__}; expected a tensor, or a tuple or list of inputs")
    return tuple(value)
