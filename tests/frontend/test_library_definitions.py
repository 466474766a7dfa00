"""tsjit's definitions of library functions TorchScript cannot compile from their source (library_definitions.py):
torch.masked's functions, scripted inside a function and run on every CPU sample op_db has for them, give eager's
results (or fail where eager fails); saved and loaded, by tsjit and by torch.jit, they still do; sparse inputs
are refused with a typed error."""

from __future__ import annotations

import inspect
import io
import warnings

import pytest
import torch
from conformance.opdb_cases import NotExpressible, full_name, make_call, python_function
from torch.testing._internal.common_methods_invocations import op_db

import tsjit
from tsjit.errors import TsjitError

MASKED_OPS = [op for op in op_db if op.name.startswith("masked.")]
DTYPES = (torch.float32, torch.float64, torch.int64, torch.int32, torch.uint8, torch.bool)

pytestmark = pytest.mark.filterwarnings("ignore")


def _assert_same(actual, expected, where: str) -> None:
    assert type(actual) is type(expected), where
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, where
    torch.testing.assert_close(actual, expected, equal_nan=True, msg=lambda m: f"{where}: {m}")


def _samples(op):
    for dtype in DTYPES:
        if dtype in op.supported_dtypes("cpu"):
            torch.manual_seed(0)
            yield from op.sample_inputs("cpu", dtype)


@pytest.mark.parametrize("op", MASKED_OPS, ids=full_name)
def test_every_op_db_sample_matches_eager(op):
    compared = 0
    for sample in _samples(op):
        try:
            call = make_call(f"torch.{op.name}", [sample.input, *sample.args], dict(sample.kwargs))
        except NotExpressible:
            continue
        function = python_function(call.source, op.name)
        try:
            expected = function(*call.values)
        except Exception:
            with pytest.raises(TsjitError):
                tsjit.script(function)(*call.values)
            continue
        _assert_same(tsjit.script(function)(*call.values), expected, f"{call.source} on {sample}")
        compared += 1
    assert compared > 0


def _saved(scripted) -> bytes:
    buffer = io.BytesIO()
    tsjit.save(scripted, buffer)
    return buffer.getvalue()


def masked_statistics(x: torch.Tensor, mask: torch.Tensor):
    return (torch.masked.mean(x, 1, mask=mask), torch.masked.std(x, [0, 1], keepdim=True, mask=mask),
            torch.masked.amax(x.long(), mask=mask), torch.masked.softmax(x, -1, mask=mask))


def test_archives_load_in_tsjit_and_torch_jit():
    x, mask = torch.randn(3, 4), torch.tensor([[True, False, True, False]] * 2 + [[False] * 4])
    expected = masked_statistics(x, mask)
    archive = _saved(tsjit.script(masked_statistics))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loaded_by_torch_jit = torch.jit.load(io.BytesIO(archive))
    for loaded in (tsjit.load(archive), loaded_by_torch_jit):
        for actual, wanted in zip(loaded(x, mask), expected):
            _assert_same(actual, wanted, "loaded")


def masked_sum(x: torch.Tensor, mask: torch.Tensor):
    return torch.masked.sum(x, 1, mask=mask)


def test_sparse_inputs_are_refused_sparse_masks_made_dense():
    x, mask = torch.randn(3, 4), torch.rand(3, 4) > 0.5
    scripted = tsjit.script(masked_sum)
    with pytest.raises(TsjitError, match="strided tensors only"):
        scripted(x.to_sparse(), mask)
    _assert_same(scripted(x, mask.to_sparse()), masked_sum(x, mask.to_sparse()), "sparse mask")


def masked_prods(x: torch.Tensor, mask: torch.Tensor):
    return torch.masked.prod(x, [1, -1], keepdim=True, mask=mask), torch.masked.prod(x, 0, mask=mask)


def test_dims_given_twice_reduce_twice_in_prod_as_in_eager():
    x, mask = torch.randn(3, 4), torch.rand(3, 4) > 0.5
    for actual, expected in zip(tsjit.script(masked_prods)(x, mask), masked_prods(x, mask)):
        _assert_same(actual, expected, "prod")


def test_scripting_the_library_function_itself_gives_the_definition():
    x, mask = torch.randn(3, 4), torch.rand(3, 4) > 0.5
    scripted = tsjit.script(torch.masked.logsumexp)
    _assert_same(scripted(x, 1, mask=mask), torch.masked.logsumexp(x, 1, mask=mask), "logsumexp")
    assert "torch.masked._ops.logsumexp" in scripted.graph_function.qualname


def test_signatures_are_torchs():
    from tsjit.frontend.library_definitions import library_definition

    for name in sorted({op.name.split(".")[1] for op in MASKED_OPS}):
        python = getattr(torch.masked, name)
        schema = library_definition(python).schema
        parameters = list(inspect.signature(python).parameters.values())
        assert [a.name for a in schema.arguments] == [p.name for p in parameters], name
        assert [a.kwarg_only for a in schema.arguments] == [p.kind is p.KEYWORD_ONLY for p in parameters], name
