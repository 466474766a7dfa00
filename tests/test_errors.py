"""Errors are typed (tsjit.errors) and every one is a RuntimeError, as torch.jit's are, so code written against
torch.jit (`except RuntimeError: fall back to Python`) keeps working: a test per error family, each raised for
real. Loading a file of torch.save with tsjit.load says what the file is and what loads it."""

from __future__ import annotations

import inspect
import io
import pickle

import pytest
import torch

import tsjit
from tsjit import errors
from tsjit.errors import (
    CompileError,
    IRError,
    MLIRError,
    NotAnArchiveError,
    ParseError,
    SchemaError,
    SerializationError,
    TsjitError,
)
from tsjit.ir.graph import Graph
from tsjit.ir.parser import parse_ir
from tsjit.ir.schema import parse_schema

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit's own


def test_every_tsjit_error_is_a_runtime_error() -> None:
    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass)
               if c.__module__ == errors.__name__ and not issubclass(c, Warning)]
    assert len(classes) >= 10
    assert all(issubclass(c, TsjitError) and issubclass(c, RuntimeError) for c in classes)


def uses_an_undefined_name(x):
    return x + not_defined_anywhere  # noqa: F821


def with_runtime_error_fallback(script, function):
    """What code written for torch.jit does: script, or keep the Python function."""
    try:
        return script(function)
    except RuntimeError:
        return function


def test_a_compile_error_falls_back_like_torch_jits() -> None:
    for script in (torch.jit.script, tsjit.script):
        assert with_runtime_error_fallback(script, uses_an_undefined_name) is uses_an_undefined_name
    with pytest.raises(CompileError, match="not_defined_anywhere") as caught:
        tsjit.script(uses_an_undefined_name)
    assert "~~~~ <--- HERE" in str(caught.value)


FAMILIES = {
    "ParseError (IR text)": (ParseError, lambda: parse_ir("graph(%x : Tensor):\n  return (%y)")),
    "ParseError (schema text)": (ParseError, lambda: parse_schema("aten::f(Tensor x -> Tensor")),
    "SchemaError": (SchemaError, lambda: _graph_with_input().insert("aten::relu", ("not a tensor",))),
    "IRError": (IRError, lambda: Graph().add_input("1")),
    "SerializationError": (SerializationError, lambda: tsjit.load(io.BytesIO(b"not an archive"))),
    "MLIRError": (MLIRError, lambda: _mlir_pipelines().compile(Graph(), output_type="no such dialect")),
}


def _graph_with_input() -> Graph:
    graph = Graph()
    graph.add_input("x")
    return graph


def _mlir_pipelines():
    return pytest.importorskip("tsjit.mlir.pipelines")


@pytest.mark.parametrize("family", list(FAMILIES))
def test_each_family_is_caught_as_a_runtime_error(family) -> None:
    expected, cause = FAMILIES[family]
    with pytest.raises(RuntimeError) as caught:
        cause()
    assert isinstance(caught.value, expected)


# ---- files of torch.save -------------------------------------------------------------------------------------------
def _saved(value, **options) -> bytes:
    buffer = io.BytesIO()
    torch.save(value, buffer, **options)
    return buffer.getvalue()


TORCH_SAVE_FILES = {
    "state_dict": lambda: _saved(torch.nn.Linear(2, 2).state_dict()),
    "tensor": lambda: _saved(torch.ones(3)),
    "nn.Module": lambda: _saved(torch.nn.ReLU()),
    "legacy format": lambda: _saved({"w": torch.ones(2)}, _use_new_zipfile_serialization=False),
    "pickle": lambda: pickle.dumps({"w": [1, 2]}),
}


@pytest.mark.parametrize("kind", list(TORCH_SAVE_FILES))
def test_loading_a_torch_save_file_says_what_it_is_and_what_loads_it(kind, tmp_path) -> None:
    path = tmp_path / "file.pt"
    path.write_bytes(TORCH_SAVE_FILES[kind]())
    with pytest.raises(NotAnArchiveError, match=r"not a TorchScript archive|not by torch\.jit\.save") as caught:
        tsjit.load(path)
    assert "torch.load(f, weights_only=True)" in str(caught.value) and str(path) in str(caught.value)
    assert isinstance(caught.value, SerializationError) and isinstance(caught.value, RuntimeError)
    with pytest.raises(NotAnArchiveError):
        tsjit.load(io.BytesIO(path.read_bytes()))
    if kind not in ("nn.Module", "pickle"):
        torch.load(path, weights_only=True)  # what the message says works


def test_a_torchscript_archive_still_loads() -> None:
    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(torch.nn.ReLU()), buffer)
    buffer.seek(0)
    assert torch.equal(tsjit.load(buffer)(torch.tensor([-1.0, 2.0])), torch.tensor([0.0, 2.0]))
