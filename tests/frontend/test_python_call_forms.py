"""What Python accepts in calls and annotations of torch's Python API that TorchScript's schemas do not say.

- Factory functions take `requires_grad=` (PyTorch's argument parser applies it; no schema has it): the call is
  matched without it and the result gets `aten::requires_grad_`.
- `torch.nonzero(x, as_tuple=...)` (torch.jit refuses the keyword): a constant False is `aten::nonzero`, True
  `aten::nonzero_numpy` (a list of index tensors, where Python gives a tuple).
- `torch.get_default_dtype()` has no operator: it is prim::get_default_dtype, read when the program runs.
- A Tensor subclass in an annotation (`input: Tensor | MaskedTensor`) is Tensor, as in torch.jit.
- A set literal as the container of a membership test (`name in {"sum", "prod"}`) is a list literal.

Each is checked against eager PyTorch, and against torch.jit where torch.jit compiles the program.
"""

from __future__ import annotations

import io

import pytest
import torch
from torch.masked.maskedtensor.core import MaskedTensor

import tsjit
from tsjit.frontend.python_ast import build_definitions
from tsjit.passes.constant_propagation import constant_propagation


def _nodes(fn, kind: str) -> int:
    return sum(node.kind == kind for node in tsjit.script(fn).graph.all_nodes())


# ---- requires_grad= on factory functions ------------------------------------------------------------------------
def _factories(n: int, grad: bool):
    return (torch.randn((n,), dtype=torch.float32, device="cpu", requires_grad=False),
            torch.empty((n, 2), device="cpu", dtype=torch.float64, requires_grad=grad),
            torch.eye(n, requires_grad=True), torch.zeros(n, requires_grad=grad),
            torch.empty_strided((n,), (1,), requires_grad=grad, dtype=torch.float32, device="cpu"),
            torch.linspace(0.0, 1.0, steps=n, requires_grad=grad))


@pytest.mark.parametrize("grad", [False, True])
def test_factory_requires_grad_keyword_marks_the_new_tensor_as_eager_does(grad):
    scripted = tsjit.script(_factories)
    for got, expected in zip(scripted(3, grad), _factories(3, grad)):
        assert (got.shape, got.dtype, got.requires_grad, got.is_leaf) == (
            expected.shape, expected.dtype, expected.requires_grad, expected.is_leaf)
    assert torch.equal(scripted(3, grad)[2], torch.eye(3))


def test_constant_false_requires_grad_adds_no_node():
    def fn(n: int):
        return torch.ones(n, requires_grad=False), torch.ones(n, requires_grad=True)

    assert _nodes(fn, "aten::requires_grad_") == 1


def test_requires_grad_stays_an_error_where_no_schema_is_a_factory():
    def fn(x):
        return torch.sin(x, requires_grad=True)

    with pytest.raises(tsjit.errors.CompileError, match="requires_grad"):
        tsjit.script(fn)


# ---- nonzero(as_tuple=) -----------------------------------------------------------------------------------------
def _nonzeros(x):
    return torch.nonzero(x, as_tuple=False), x.nonzero(as_tuple=True), torch.nonzero(x[0], as_tuple=True)


def test_nonzero_as_tuple_picks_the_operator_as_pythons_nonzero_does():
    x = torch.tensor([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]])
    matrix, per_dimension, of_row = tsjit.script(_nonzeros)(x)
    expected = _nonzeros(x)
    assert torch.equal(matrix, expected[0])
    assert isinstance(per_dimension, list) and all(map(torch.equal, per_dimension, expected[1]))
    assert len(of_row) == 1 and torch.equal(of_row[0], expected[2][0])


def test_nonzero_as_tuple_must_be_a_constant():
    def fn(x, flag: bool):
        return torch.nonzero(x, as_tuple=flag)

    with pytest.raises(tsjit.errors.CompileError, match="as_tuple must be a constant"):
        tsjit.script(fn)


# ---- torch.get_default_dtype() ----------------------------------------------------------------------------------
def _default_dtype_zeros(n: int):
    dtype = torch.get_default_dtype()
    return torch.zeros(n, dtype=dtype), torch.ones(n, dtype=dtype if dtype == torch.float64 else torch.int32)


def test_default_dtype_is_read_when_the_program_runs():
    scripted = tsjit.script(_default_dtype_zeros)
    previous = torch.get_default_dtype()
    try:
        for dtype in (torch.float64, torch.float32, torch.float64):
            torch.set_default_dtype(dtype)
            got, expected = scripted(2), _default_dtype_zeros(2)
            assert got[0].dtype == expected[0].dtype == dtype and got[1].dtype == expected[1].dtype
    finally:
        torch.set_default_dtype(previous)


def test_default_dtype_survives_constant_propagation():
    graph = tsjit.script(_default_dtype_zeros).graph
    constant_propagation(graph)
    assert any(node.kind == "prim::get_default_dtype" for node in graph.all_nodes())


# ---- Tensor subclasses in annotations ---------------------------------------------------------------------------
def _subclass_annotated(x: torch.Tensor | MaskedTensor, w: torch.nn.Parameter) -> torch.Tensor:
    return x * w


def _parameter_annotated(x: torch.Tensor, w: torch.nn.Parameter) -> torch.Tensor:
    return x * w


def test_tensor_subclass_annotations_are_tensor():
    # torch.jit reads a Tensor subclass as Tensor too (`is_tensor`), but asserts on the Union it then makes of
    # `Tensor | MaskedTensor` ("has the single type Tensor"): that program is checked against eager only
    x, w = torch.randn(3), torch.nn.Parameter(torch.randn(3))
    scripted = tsjit.script(_subclass_annotated)
    assert [str(a.type) for a in scripted.schema.arguments] == ["Tensor", "Tensor"]
    assert torch.equal(scripted(x, w), _subclass_annotated(x, w))
    oracle = torch.jit.script(_parameter_annotated)
    assert torch.equal(tsjit.script(_parameter_annotated)(x, w), oracle(x, w))
    assert [str(a.type) for a in oracle.schema.arguments] == ["Tensor", "Tensor"]


# ---- set literals in membership tests ---------------------------------------------------------------------------
def _membership(name: str, x: torch.Tensor, k: int):
    if name in {"sum", "cumsum"}:
        return x.sum() + k
    if x.dtype not in {torch.float32, torch.float64} or k in {1, 2}:
        return x.prod()
    return x.amax()


@pytest.mark.parametrize("name, k", [("sum", 0), ("cumsum", 1), ("prod", 1), ("max", 3), ("max", 2)])
def test_set_literal_membership_is_list_membership(name, k):
    x = torch.randn(4)
    assert torch.equal(tsjit.script(_membership)(name, x, k), _membership(name, x, k))
    assert torch.equal(tsjit.script(_membership)(name, x.int(), k), _membership(name, x.int(), k))


def test_set_literal_elsewhere_stays_an_error():
    source = "def f(x: int):\n    s = {x, 1}\n    return x\n"
    with pytest.raises(tsjit.errors.CompileError, match="set literals"):
        build_definitions(source)


# ---- torch.layout / dtype / memory_format defaults --------------------------------------------------------------
def _strided_zeros(n: int, layout: torch.layout = torch.strided, dtype: torch.dtype = torch.float64,
                   memory_format: torch.memory_format = torch.contiguous_format) -> torch.Tensor:
    return torch.zeros(n, layout=layout, dtype=dtype).contiguous(memory_format=memory_format)


def test_torch_enum_defaults_are_int_codes_that_save_and_load():
    # torch.jit has no `torch.layout` annotation ("Unknown type name"): checked against eager only
    scripted = tsjit.script(_strided_zeros)
    defaults = [a.default_value for a in scripted.schema.arguments[1:]]
    assert all(isinstance(d, int) for d in defaults)
    assert torch.equal(scripted(3), _strided_zeros(3))
    buffer = io.BytesIO()
    tsjit.save(scripted, buffer)
    buffer.seek(0)
    assert torch.equal(tsjit.load(buffer)(3, *defaults), _strided_zeros(3))
