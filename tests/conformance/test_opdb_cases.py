"""opdb_cases: how op_db's samples become TorchScript calls (annotations from the operators' schemas, OpInfos
whose `op` is a lambda spelled as its body)."""

from __future__ import annotations

import pytest
import torch
from opdb_cases import LambdaCall, NotExpressible, make_call, python_function

import tsjit


def wrapper_set_seed(op, *args, **kwargs):
    return op(*args, **kwargs)


def test_a_tensor_list_is_annotated_as_the_operators_schemas_take_it():
    """`_unsafe_masked_index` takes only `Tensor?[]` (a `list[Tensor]` parameter matches no overload, in
    torch.jit either); `index_put` has a `hacked_twin` overload taking `Tensor[]`, so its list stays one."""
    values, mask = torch.randn(5, 5), torch.rand(2, 2) > 0.5
    indices = [torch.tensor([[0], [3]]), torch.tensor([[1, 2]])]
    masked = make_call("torch._unsafe_masked_index", [values, mask, indices, 0.5], {}, tensors_only=True)
    assert "a2: list[Optional[Tensor]]" in masked.source
    function = python_function(masked.source, "test _unsafe_masked_index")
    assert torch.equal(tsjit.script(function)(*masked.values), function(*masked.values))
    put = make_call("torch.index_put", [values, indices, torch.randn(2, 2)], {"accumulate": False})
    assert "a1: list[Tensor]" in put.source


def test_an_opinfo_lambda_is_spelled_as_its_body():
    """The sample gives the lambda's arguments (einsum's tensors before its equation): the call is the body with
    them in place, keyword arguments where it spreads **kwargs."""
    einsum = LambdaCall.of(lambda tensors, equation: torch.einsum(equation, tensors))
    call = make_call(einsum, [[torch.randn(3)], "i->"], {}, tensors_only=True)
    assert "return torch.einsum('i->', a0)" in call.source
    function = python_function(call.source, "test einsum")
    assert torch.equal(tsjit.script(function)(*call.values), function(*call.values))
    polygamma = LambdaCall.of(lambda x, n, **kwargs: torch.polygamma(n, x, **kwargs))
    assert "torch.polygamma(a1, a0, out=None)" in make_call(polygamma, [torch.randn(3), 2], {"out": None}).source
    with pytest.raises(NotExpressible):
        make_call(polygamma, [torch.randn(3)], {})


def test_lambdas_calling_more_than_torch_and_their_parameters_are_not_spelled():
    assert LambdaCall.of(lambda x, *args: wrapper_set_seed(torch.neg, x, *args)) is None
    assert LambdaCall.of(lambda x: wrapper_set_seed(torch.neg, x)) is None
    assert LambdaCall.of(torch.neg) is None
