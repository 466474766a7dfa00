"""Every number and string builtin of tsjit against TorchScript's own implementation of the same overload.

TorchScript's JIT-only operators with concrete argument types (ints, floats, complex numbers, Scalars,
strings, lists of those) can be called directly as `torch.ops.aten.<name>.<overload>`. For each such schema
tsjit registers, this calls both with every combination of boundary values of the argument types (zero,
negative zero, inf, NaN, int64 extremes, empty and whitespace strings, ...) and requires the same result,
including the Python type, or an error from both (with the same message when tsjit's names a TorchScript
failure).
"""

from __future__ import annotations

import itertools
import math
import random

import pytest
import torch
from builtin_oracle import error_line, same_value, tsjit_operation

from tsjit.ir import types
from tsjit.ir.schema import parse_schema
from tsjit.ops.builtins import numbers, strings, tensors_scalars
from tsjit.ops.registry import find_operator

_INTS = [0, 1, -3, 7, 2**62, -(2**62)]
_FLOATS = [0.0, -0.0, 2.5, -7.25, 0.1, 1e300, math.inf, -math.inf, math.nan]
_COMPLEX = [0j, 1 + 2j, -1.5 - 0.5j]
_STRINGS = ["", "a", "ab", "Hello World", "  a b\tc\n", "abcabc", "x_1", "A1", "-12", "12", " 1.5e3", "inf",
            "hello wORLD1a", "a\r\nb\nc", "Title Case", "UPPER", "a\tb\tc"]
_SHORT_STRINGS = ["", "a", "b", "ab", " ", "*", "bc"]
_SMALL_INTS = [-3, -1, 0, 1, 2, 7, 12]  # string widths and positions: C++ would really build 2**62 characters
_SAMPLES = {
    types.IntType: _INTS, types.FloatType: _FLOATS, types.ComplexType: _COMPLEX,
    types.BoolType: [False, True],
    types.NumberType: [0, -3, 7, 0.0, 2.5, -7.25, math.inf, math.nan, 1 + 2j],
}
_MAX_CALLS = 300

# Deliberate differences, each documented where implemented.
_DIFFERENT = {
    "aten::hash.generic": "Python's hash is not c10's",
    "aten::device": "strings are not device names (tested in test_builtins.py)",
    "aten::device.with_index": "strings are not device names (tested in test_builtins.py)",
}
# TorchScript never returns when these search for an empty string (C++ loops advancing by its length).
_EMPTY_LOOPS_FOREVER = {"aten::count", "aten::replace", "aten::rsplit"}
# TorchScript crashes the process on some inputs of these (axes out of range), and on integer `%` or `/` by
# zero (see _excluded).
_CRASHES = {"prim::ReductionSizes"}
_INTEGER_DIVISIONS = {"aten::remainder", "aten::__round_to_zero_floordiv"}


def _argument_samples(argument, position: int, schema) -> list | None:
    """Values to try for one argument, or None if the schema takes something this test cannot make."""
    kind = type(argument.type)
    if kind is types.IntType and any(isinstance(a.type, types.StringType) for a in schema.arguments):
        return _SMALL_INTS
    if kind is types.StringType and position > 0 and schema.name in _EMPTY_LOOPS_FOREVER:
        return _SHORT_STRINGS[1:]
    if kind is types.StringType:
        return _STRINGS if position == 0 else _SHORT_STRINGS
    if kind is types.OptionalType and isinstance(argument.type.elem, types.StringType):
        return [None, *_SHORT_STRINGS]
    if kind is types.ListType and type(argument.type.elem) in _SAMPLES | {types.StringType: None}:
        element = argument.type.elem
        values = _SHORT_STRINGS if isinstance(element, types.StringType) else _SAMPLES[type(element)]
        return [[], values[:2], values[1:4], values[::-1]]
    return _SAMPLES.get(kind)


def _cases(schema) -> list[tuple]:
    samples = [_argument_samples(a, i, schema) for i, a in enumerate(schema.arguments)]
    if any(s is None for s in samples):
        return []
    combinations = list(itertools.product(*samples))
    if len(combinations) > _MAX_CALLS:
        combinations = random.Random(str(schema)).sample(combinations, _MAX_CALLS)
    return combinations


def _schemas() -> list[str]:
    rows = numbers.OPERATORS + strings.OPERATORS + tensors_scalars.OPERATORS
    testable = []
    for text, _ in rows:
        schema = parse_schema(text)
        if schema.operator_name in _DIFFERENT or schema.operator_name in _CRASHES or schema.is_vararg:
            continue
        if _cases(schema):
            testable.append(text)
    return testable


def _torch_overload(schema):
    namespace, _, name = schema.name.partition("::")
    return getattr(getattr(getattr(torch.ops, namespace), name), schema.overload_name or "default")


def _excluded(schema, args: tuple) -> bool:
    """Inputs where the two deliberately differ: C++ reads bytes (chr of 128 and above); integer division
    or modulo by zero kills a TorchScript process; a negative width makes its center() loop forever;
    comparing a complex Scalar gives None in TorchScript and a bool in tsjit."""
    if schema.name == "aten::chr" and args[0] >= 128:
        return True
    if schema.name == "aten::center" and args[1] < 0:  # C++ compares the width as unsigned and never ends
        return True
    if schema.overload_name == "" and schema.name in ("aten::eq", "aten::ne"):
        return any(isinstance(a, complex) for a in args)  # TorchScript answers None
    both_ints = len(args) == 2 and type(args[0]) is int and type(args[1]) is int
    return schema.name in _INTEGER_DIVISIONS and both_ints and args[1] == 0


@pytest.mark.parametrize("text", _schemas())
def test_matches_torchscript(text):
    schema = parse_schema(text)
    torch_op, ours = _torch_overload(schema), tsjit_operation(schema.operator_name)
    for args in _cases(schema):
        if _excluded(schema, args):
            continue
        _check_call(torch_op, ours, args)


def _check_call(torch_op, ours, args: tuple) -> None:
    try:
        expected = torch_op(*args)
    except Exception as error:  # TorchScript rejected the input: tsjit must too
        with pytest.raises(Exception) as ours_error:
            ours(*args)
        if ours_error.traceback[-1].name == "fail":  # tsjit reports a TorchScript failure: same words
            assert str(ours_error.value) == error_line(error), f"{args}"
        return
    actual = ours(*args)
    assert same_value(expected, actual), f"{args}: TorchScript gives {expected!r}, tsjit {actual!r}"


def _image() -> torch.Tensor:
    return torch.arange(16.0).reshape(1, 1, 4, 4)


# (operator, arguments) for tensor builtins; each call gets fresh tensors, as some write in place
_TENSOR_CALLS = [
    ("aten::__interpolate", lambda: (_image(), None, 2.0, "nearest", None, None, False)),
    ("aten::__interpolate.size_list", lambda: (_image(), [3, 5], None, "bilinear", False, None, False)),
    ("aten::__interpolate.scale_list", lambda: (_image(), None, [1.5, 2.0], "bicubic", True, None, False)),
    ("aten::__interpolate.size_list_scale_list", lambda: (_image(), [2, 2], None, "area", None, None, False)),
    ("aten::__upsample", lambda: (_image(), 8, None, "nearest", None)),
    ("aten::__upsample_nearest.size_list", lambda: (_image(), [2, 6], None)),
    ("aten::__upsample_bilinear.scale_list", lambda: (_image(), None, [2, 3])),
    ("aten::to.prim_Device", lambda: (_image(), torch.device("cpu"), 7, False, False)),
    ("aten::to.prim_dtype", lambda: (_image(), 4, False, True)),
    ("aten::to.prim_other", lambda: (_image(), False, False)),
    ("aten::cpu", lambda: (_image(),)),
    ("aten::numpy_T.a", lambda: (torch.arange(6).reshape(1, 2, 3),)),
    ("aten::mT.a", lambda: (torch.arange(6).reshape(1, 2, 3),)),
    ("aten::mH.a", lambda: (torch.arange(6.0).reshape(2, 3),)),
    ("aten::matrix_H.a", lambda: (torch.arange(6.0).reshape(2, 3),)),
    ("aten::copy_.int", lambda: (torch.zeros(3), 2)),
    ("aten::copy_.float", lambda: (torch.zeros(3, dtype=torch.int64), 2.7)),
    ("aten::copy_.Tensor", lambda: (torch.zeros(3), torch.arange(3))),
    ("aten::index.Tensor_hacked_twin", lambda: (_image(), [torch.tensor([0]), torch.tensor([0])])),
    ("aten::index_put_.hacked_twin", lambda: (torch.zeros(3), [torch.tensor([1])], torch.tensor(5.0), False)),
    ("aten::index_put.hacked_twin",
     lambda: (torch.zeros(3), [torch.tensor([1, 1])], torch.tensor(5.0), True)),
    ("aten::split", lambda: (torch.arange(5), [2, 3], 0)),
    ("aten::_no_grad_fill_", lambda: (torch.zeros(2, requires_grad=True), 1.5)),
    ("aten::_no_grad_zero_", lambda: (torch.ones(2, requires_grad=True),)),
    ("aten::_no_grad_embedding_renorm_", lambda: (torch.arange(12.0).reshape(4, 3), torch.tensor([1, 3]),
                                                  1.0, 2.0)),
    ("aten::_grad_sum_to_size", lambda: (torch.ones(2, 3), [1, 3])),
    ("aten::_grad_sum_to_size", lambda: (torch.ones(2, 3), None)),
    ("aten::_ncf_unsqueeze", lambda: (torch.arange(3.0), 4)),
    ("aten::_ncf_view", lambda: (torch.arange(6.0), [2, 3, 1, 1], 2)),
    ("aten::dequantize.list", lambda: ([torch.quantize_per_tensor(torch.ones(2), 0.5, 0, torch.qint8)],)),
    ("aten::is_non_overlapping_and_dense", lambda: (torch.ones(2, 3).t(),)),
    ("aten::is_non_overlapping_and_dense", lambda: (torch.ones(4, 4)[:, ::2],)),
    ("aten::size", lambda: (torch.ones(2, 3),)),
    ("aten::stride", lambda: (torch.ones(2, 3).t(),)),
    ("aten::element_size", lambda: (torch.ones(2, dtype=torch.float16),)),
    ("aten::len.Tensor", lambda: (torch.ones(4, 2),)),
    ("aten::Int.Tensor", lambda: (torch.tensor(-3.7),)),
    ("aten::Float.Tensor", lambda: (torch.tensor(3),)),
    ("aten::ScalarImplicit", lambda: (torch.tensor(3),)),
    ("aten::ScalarImplicit", lambda: (torch.ones(2),)),
    ("aten::IntImplicit", lambda: (torch.tensor(2.5),)),
    ("aten::FloatImplicit", lambda: (torch.tensor(2.5, requires_grad=True),)),
    ("aten::Complex.Tensor_Tensor", lambda: (torch.tensor(1.0), torch.tensor(2))),
    ("aten::tensor.float", lambda: (2.5, None, None, True)),
    ("aten::tensor.int", lambda: (3, 6, None, False)),
    ("aten::as_tensor", lambda: (torch.arange(3), 6, None)),
    ("aten::_list_to_tensor", lambda: ([1, 2, 3],)),
    ("aten::_tensor_to_list", lambda: (torch.tensor([4, 5], dtype=torch.int32),)),
    ("prim::dtype", lambda: (torch.ones(1, dtype=torch.bfloat16),)),
    ("prim::layout", lambda: (torch.ones(1),)),
    ("prim::device", lambda: (torch.ones(1),)),
    ("prim::itemsize", lambda: (torch.ones(1, dtype=torch.int16),)),
    ("prim::nbytes", lambda: (torch.ones(3, dtype=torch.int16),)),
    ("prim::data", lambda: (torch.ones(2, requires_grad=True),)),
    ("prim::abs", lambda: (torch.tensor([-1.0, 2.0]),)),
    ("prim::AutogradAdd", lambda: (torch.ones(2), torch.ones(2))),
    ("prim::AutogradAdd", lambda: (None, torch.ones(2))),
    ("prim::NumToTensor.Scalar", lambda: (2.5,)),
    ("prim::NumToTensor.bool", lambda: (True,)),
    ("onnx::Shape", lambda: (torch.ones(2, 5),)),
    ("onnx::Reshape", lambda: (torch.arange(6), torch.tensor([3, 2]))),
    ("aten::_pack_sequence", lambda: (torch.ones(2), torch.tensor([1, 1]), None, None)),
    ("aten::_unwrap_optional", lambda: (None,)),
    ("aten::_size_if_not_equal", lambda: ([2, 3], [2, 3])),
]


@pytest.mark.parametrize(("name", "make_args"), _TENSOR_CALLS, ids=[name for name, _ in _TENSOR_CALLS])
def test_tensor_builtin_matches_torchscript(name, make_args):
    ours = tsjit_operation(name)
    schema = find_operator(name).schema
    torch_op = _by_keyword(_torch_overload(schema), schema)
    expected_args, actual_args = make_args(), make_args()
    try:
        expected = torch_op(*expected_args)
    except Exception as error:
        with pytest.raises(Exception) as ours_error:
            ours(*actual_args)
        if ours_error.traceback[-1].name == "fail":
            assert str(ours_error.value) == error_line(error)
        return
    actual = ours(*actual_args)
    assert same_value(expected, actual), f"TorchScript gives {expected!r}, tsjit {actual!r}"
    assert same_value(expected_args, actual_args), "the arguments were changed differently"


def _by_keyword(torch_op, schema):
    """Call `torch_op` with the keyword-only arguments of `schema` passed by name (tsjit takes them all by
    position, as a graph node does)."""
    names = [a.name for a in schema.arguments if a.kwarg_only]
    positional = len(schema.arguments) - len(names)
    return lambda *args: torch_op(*args[:positional], **dict(zip(names, args[positional:])))


def test_the_oracle_sees_most_number_and_string_builtins():
    """The table above is not silently empty: most number and string overloads are compared."""
    assert len(_schemas()) > 350
