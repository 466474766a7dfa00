"""MLIR's type refinement answers from the shape rules (tsjit/mlir/rule_results.py) with the layout eager gives:
every operator TensorIterator computes, and every one whose results are contiguous (reductions, matrix
products), on transposed, permuted, sliced, broadcast and channels-last inputs, must produce a meta result of
eager's sizes, dtype and strides (later operators such as `view` depend on strides)."""

from __future__ import annotations

import pytest
import torch

from tsjit.ir import types as ts
from tsjit.ir.schema import NO_DEFAULT
from tsjit.mlir.rule_results import result_by_rule, tensor_iterator_strides
from tsjit.ops.registry import find_operator
from tsjit.passes.shape_rules import CONTIGUOUS_RESULT_OPERATORS, TENSOR_ITERATOR_OPERATORS


def _layouts():
    """Pairs of inputs (the second may be broadcast), named: layouts that follow no row-major order among them."""
    torch.manual_seed(0)
    yield "transposed", torch.randn(3, 4).t(), torch.randn(4, 3)
    yield "transposed_second", torch.randn(4, 3), torch.randn(3, 4).t()
    yield "transposed_broadcast", torch.randn(3, 4).t(), torch.randn(3)
    yield "permuted", torch.randn(2, 3, 4).permute(2, 0, 1), torch.randn(4, 1, 3)
    yield "sliced_and_transposed", torch.randn(4, 6)[:, ::2], torch.randn(3, 4).t()
    yield "channels_last", torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last), \
        torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last)
    yield "channels_last_and_contiguous", torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last), \
        torch.randn(2, 3, 4, 5)
    yield "size_one_column", torch.empty_strided((4, 1), (1, 1)).normal_(), torch.randn(3, 4).t()
    yield "zero_dim", torch.randn(3, 4).t(), torch.tensor(2.0)
    yield "permuted_equal_sizes", torch.randn(3, 3, 3).permute(1, 2, 0), torch.randn(3, 3, 3).permute(2, 0, 1)


LAYOUTS = list(_layouts())


def _argument(argument, tensors):
    """A value for the argument: the next layout tensor, its default, or a plain number."""
    if isinstance(argument.type, ts.TensorType):
        tensor = tensors.pop(0) if tensors else torch.tensor(0.5)
        return tensor > 0 if argument.name == "condition" else tensor
    if argument.default_value is not NO_DEFAULT:
        return argument.default_value
    if argument.name == "approximate":
        return "none"
    if isinstance(argument.type, ts.ListType) or isinstance(getattr(argument.type, "elem", None), ts.ListType):
        return [1]  # (`int[1]? dim`: graphs pass lists)
    return 0.5 if argument.type in (ts.NumberType.get(), ts.FloatType.get()) else 1


def _call(operator, first, second):
    tensors = [first, second]
    return [_argument(a, tensors) for a in operator.schema.arguments]


@pytest.mark.parametrize("layout", [name for name, *_ in LAYOUTS])
@pytest.mark.parametrize("operators", [TENSOR_ITERATOR_OPERATORS, CONTIGUOUS_RESULT_OPERATORS],
                         ids=["tensor_iterator", "contiguous"])
def test_results_have_eagers_layout(operators, layout):
    _, first, second = next(case for case in LAYOUTS if case[0] == layout)
    checked, mismatches = 0, []
    for name in sorted(operators):
        operator = find_operator(name)
        if operator is None:
            continue  # a name the table covers that this overload set lacks (`atan2.Scalar`)
        values = _call(operator, first, second)
        overload = getattr(torch.ops.aten, operator.schema.name.split("::")[1])
        overload = getattr(overload, operator.schema.overload_name or "default")
        try:
            expected = overload(*values)
        except Exception:
            continue  # eager refuses these arguments: nothing to compare
        meta = [v.to("meta") if isinstance(v, torch.Tensor) else v for v in values]
        try:
            found = result_by_rule(operator, meta)
        except Exception as error:  # noqa: BLE001  (a rule that rejects what eager accepts is a mismatch)
            mismatches.append(f"{name}: rule rejects ({error})")
            continue
        if found is None:
            continue  # the rule declines: the meta kernel decides
        checked += 1
        expected = list(expected) if isinstance(expected, tuple | list) else [expected]
        eager, rule = [[(tuple(r.shape), r.dtype, r.stride()) for r in results] for results in (expected, found)]
        if eager != rule:
            mismatches.append(f"{name}: eager {eager}, rule {rule}")
    assert not mismatches, "\n".join(mismatches)
    assert checked >= 0.3 * len(operators), checked


def test_a_view_of_a_transposed_result_fails_as_in_eager():
    """`relu(x.t()).view(-1)` fails in eager (the result is transposed): refinement must not make it contiguous."""
    operator = find_operator("aten::relu")
    result = result_by_rule(operator, [torch.empty(3, 4, device="meta").t()])[0]
    assert result.stride() == (1, 4) and not result.is_contiguous()


def test_contiguous_inputs_give_contiguous_results():
    assert tensor_iterator_strides((2, 3), [torch.empty(2, 3, device="meta"), torch.empty(3, device="meta")]) == (3, 1)


def test_tril_of_a_transposed_matrix_is_contiguous():
    x = torch.randn(3, 4).t()
    operator = find_operator("aten::tril")
    assert result_by_rule(operator, [x.to("meta"), 0])[0].stride() == torch.tril(x).stride() == (3, 1)


@pytest.mark.parametrize("permutation", [(0, 1, 2, 3), (0, 2, 1, 3), (1, 2, 0, 3), (2, 0, 1, 3)])
@pytest.mark.parametrize("dropout_p, is_causal", [(0.0, False), (0.0, True), (0.5, False)])
def test_attention_results_are_laid_out_as_eager_lays_them(permutation, dropout_p, is_causal):
    """scaled_dot_product_attention's result is like its query where eager's flash kernel runs (nn.MultiheadAttention's
    queries are permuted views), contiguous on the math path (dropout), and answered without its meta kernel."""
    sizes = (2, 2, 5, 4)
    query = torch.randn(*[sizes[p] for p in permutation]).permute(*[permutation.index(d) for d in range(4)])
    key, value = torch.randn(sizes), torch.randn(sizes)
    torch.manual_seed(0)
    expected = torch.nn.functional.scaled_dot_product_attention(query, key, value, dropout_p=dropout_p,
                                                                is_causal=is_causal)
    operator = find_operator("aten::scaled_dot_product_attention")
    found = result_by_rule(operator, [query.to("meta"), key.to("meta"), value.to("meta"), None, dropout_p, is_causal,
                                      None, False])
    assert found is not None and (found[0].shape, found[0].stride()) == (expected.shape, expected.stride())
