"""Python functions compiled per argument types (tsjit/frontend/open_parameters.py), against eager PyTorch.

torch.jit rejects every program here ("Unknown type name 'Iterable'", "Expected a value of type 'Tensor'"); a
call whose unannotated arguments are Tensors still calls the function as TorchScript compiles it.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence

import pytest
import torch

import tsjit
from tsjit.errors import CompileError


def _weighted(n: int, *, weights: Iterable, scale: float = 1.0) -> torch.Tensor:
    if not isinstance(weights, Iterable):
        raise TypeError("weights must be a list/tuple")
    terms = [(-1) ** i * w for i, w in enumerate(weights)]
    return torch.tensor(terms) * scale + n


def _untyped_count(n, x: torch.Tensor) -> torch.Tensor:
    return x * n


def _first(values: Sequence):
    return values[0]


def _calls(x: torch.Tensor, k: int):
    return (_weighted(k, weights=[0.5, 0.25, 2.0]), _weighted(k, weights=[1, 2], scale=2.0),
            _untyped_count(k, x), _untyped_count(x, x), _first([k, 2]), _first("ab"), _first((x, k))[0])


def _windows(n: int):
    w = torch.signal.windows
    return (w.general_cosine(n, a=[0.46, 0.23, 0.31], sym=True), w.general_hamming(n, alpha=0.6, sym=False),
            w.hann(n), w.hamming(n, sym=False), w.blackman(n), w.nuttall(n, dtype=torch.float64))


@pytest.mark.parametrize("k", [0, 3])
def test_open_parameters_take_each_calls_argument_type(k):
    x = torch.randn(3)
    for got, expected in zip(tsjit.script(_calls)(x, k), _calls(x, k)):
        assert got == expected if not isinstance(got, torch.Tensor) else torch.equal(got, expected)


@pytest.mark.parametrize("n", [0, 1, 7])
def test_torch_signal_windows_with_iterable_coefficients_match_eager(n):
    for got, expected in zip(tsjit.script(_windows)(n), _windows(n)):
        assert got.dtype == expected.dtype and torch.allclose(got, expected)


def test_each_argument_type_compiles_one_specialization_named_apart():
    graph = tsjit.script(_calls).graph
    callees = {node.output().type.function.name for node in graph.all_nodes()
               if node.kind == "prim::Constant" and hasattr(node.output().type, "function")}
    # _weighted twice (float and int weights), _untyped_count once for the int (the Tensor call is TorchScript's
    # own compilation), _first three times
    assert sum("_weighted__" in name for name in callees) == 2
    assert sum("_first__" in name for name in callees) == 3
    assert sum(name.endswith("_untyped_count") for name in callees) == 1


def test_specializations_survive_save_and_load():
    scripted, x = tsjit.script(_calls), torch.randn(3)
    buffer = io.BytesIO()
    tsjit.save(scripted, buffer)
    buffer.seek(0)
    loaded = tsjit.load(buffer)
    for got, expected in zip(loaded(x, 2), _calls(x, 2)):
        assert got == expected if not isinstance(got, torch.Tensor) else torch.equal(got, expected)


def test_scripting_the_function_itself_keeps_torchscript_types():
    with pytest.raises(CompileError):  # `weights` has no TorchScript type of its own
        tsjit.script(_weighted)
    assert str(tsjit.script(_untyped_count).schema.arguments[0].type) == "Tensor"
