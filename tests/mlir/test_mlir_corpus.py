"""The IR corpus through tsjit -> torch-mlir -> IREE on every backend, compared with eager PyTorch.

Each corpus graph (tests/ir/corpus/graphs) is compiled to the torch backend contract, lowered to each backend,
compiled by IREE for the CPU and run on its program's inputs. A graph either passes (its result matches eager)
or is in EXPECTED_FAILURES for that backend with the reason; an unexpected pass fails the test as well, so the
list stays true. The pass rate per backend is printed at the end of the run (conftest.py).

The torch-level module is compiled once per graph for the backends that keep asserts (torch, linalg) and once
for those that do not (TOSA, StableHLO, which also get static control flow unrolled).
"""

from __future__ import annotations

import pytest
from mlir_corpus import RESULTS, assert_close, build_case, corpus_names

import tsjit.mlir
import tsjit.mlir.iree
from tsjit.mlir.pipelines import lower

BACKENDS = ("torch", "linalg-on-tensors", "tosa", "stablehlo")
WITHOUT_CONTROL_FLOW = ("tosa", "stablehlo")

_NOT_A_PROGRAM = "not a program with inputs: a graph kept for the printer and parser only"
_STRINGS = "str arguments and results cannot cross into compiled code, and string ops have no lowering"
_LISTS = "list arguments cannot cross into compiled code (the backend contract has no list type)"

# Graphs that fail on every backend, and why.
_EVERYWHERE = {
    "every_attribute_kind": _NOT_A_PROGRAM,
    "nested_subgraphs": _NOT_A_PROGRAM,
    "uses_interface": _NOT_A_PROGRAM,
    "any_type": "an Any argument and result cannot cross into compiled code",
    "attributes": "a Dict[str, float] attribute stays a !torch.dict global, which the backend contract rejects",
    "break_continue": _LISTS,
    "class_objects": "script class objects (prim::CreateObject, SetAttr on them) have no torch-dialect lowering",
    "complex_numbers": "the torch dialect has no complex scalar type",
    "conv": "BatchNorm2d in training mode updates running statistics in place (aten::add_ on an attribute)",
    "conv_inlined": "BatchNorm2d in training mode updates running statistics in place (aten::add_ on an attribute)",
    "dict_int_keys": "dict building (aten::_set_item) has no torch-dialect op",
    "dict_ops": "dict arguments cannot cross into compiled code; aten::items has no torch-dialect op",
    "early_return": "IREE 3.13 cannot compile torch-mlir's scf.while carrying a tensor (stream materialization "
                    "error); on TOSA and StableHLO the data-dependent If has no lowering",
    "enum_values": "enum arguments cannot cross into compiled code (and Graph.copy cannot copy the enum constant)",
    "fork_wait": "fork/wait and Function values have no torch-dialect form",
    "function_calls": "prim::CallFunction: the stored graph calls functions that are not inlined",
    "fused_grad": "optimized graphs (TypeCheck, fusion groups, fallback functions) are not imported",
    "fused_pointwise": "optimized graphs (TypeCheck, fusion groups, fallback functions) are not imported",
    "fused_with_control": "optimized graphs (TypeCheck, fusion groups, fallback functions) are not imported",
    "ignored_call": "a call into Python (prim::PythonOp) cannot be compiled",
    "int_float_math": "aten::pow.int_float and other scalar math ops have no torch-dialect op",
    "list_ops": _LISTS,
    "mutates_state": "module state written by forward (SetAttr) stays a global slot initializer",
    "nested_lists": _LISTS,
    "non_ascii": _STRINGS,
    "string_compare": _STRINGS,
    "string_escapes": _STRINGS,
    "string_methods": _STRINGS,
    "tensor_attributes": "prim::is_cuda has no torch-dialect op, and str / list results cannot be returned",
    "tensor_indexing": "linalg: torch-mlir's aten::index lowering builds an ill-typed arith.cmpi; TOSA: scalar "
                       "int ops; StableHLO: wrong values (bool-mask indexing)",
    "traced_python_op": "a call into Python (prim::PythonOp) cannot be compiled",
    "tuple_ops": "a str inside the tuple argument and result cannot cross into compiled code",
    "union_isinstance": "Union arguments and prim::isinstance have no lowering",
    "with_class": "script class objects used as context managers (CreateObject, Enter, Exit)",
}

_SCALAR_ARGS_TOSA = "TOSA has no scalar (int/float/bool) values: scalar arguments and scalar ops do not lower"
_CONTROL_FLOW = "the program's control flow depends on its inputs, and TOSA and StableHLO have no control flow"

_WITHOUT_CONTROL_FLOW = {
    "for_range": _CONTROL_FLOW,
    "fused_with_control_profiled": _CONTROL_FLOW,
    "if_elif": _CONTROL_FLOW,
    "optional_tensor": _CONTROL_FLOW,
    "ternary_and_boolops": _CONTROL_FLOW,
    "while_loop": _CONTROL_FLOW,
}

_TOSA = {
    "assert_stmt": _SCALAR_ARGS_TOSA,
    "dtype_device_constants": "TOSA has no f64 (IREE rejects the f64 tosa.cast)",
    "for_list": _SCALAR_ARGS_TOSA,
    "named_tuple": "TOSA has no scalar values: the int in the returned tuple does not lower",
    "optional_int": _SCALAR_ARGS_TOSA,
    "raise_exception": _SCALAR_ARGS_TOSA,
    "traced_constants": "TOSA has no f64 (IREE rejects the f64 tosa.reduce_sum)",
    "traced_dtypes": "IREE rejects the f16 tosa.cast torch-mlir emits for .half()",
}

EXPECTED_FAILURES: dict[str, dict[str, str]] = {
    "torch": _EVERYWHERE,
    "linalg-on-tensors": _EVERYWHERE,
    "tosa": {**_EVERYWHERE, **_WITHOUT_CONTROL_FLOW, **_TOSA},
    "stablehlo": {**_EVERYWHERE, **_WITHOUT_CONTROL_FLOW},
}

_torch_level: dict[tuple[str, bool], object] = {}


def _compile_to_torch(case, without_control_flow: bool):
    """The torch-backend-contract module of a case, compiled once per variant (or the error it raised)."""
    key = (case.name, without_control_flow)
    if key not in _torch_level:
        try:
            _torch_level[key] = tsjit.mlir.compile(case.target, case.inputs, checks=not without_control_flow,
                                                   unroll=without_control_flow)
        except Exception as error:  # noqa: BLE001  (kept to re-raise for every backend of the variant)
            _torch_level[key] = error
    found = _torch_level[key]
    if isinstance(found, Exception):
        raise found
    return found


def _run(name: str, backend: str) -> None:
    case = build_case(name)
    lowered = lower(_compile_to_torch(case, backend in WITHOUT_CONTROL_FLOW), backend)
    assert_close(tsjit.mlir.iree.compile(lowered)(*case.inputs), case.expected)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", corpus_names())
def test_corpus_graph(name: str, backend: str) -> None:
    reason = EXPECTED_FAILURES[backend].get(name)
    try:
        _run(name, backend)
    except Exception:
        RESULTS.setdefault(backend, {})[name] = False
        if reason is None:
            raise
        return
    RESULTS.setdefault(backend, {})[name] = True
    assert reason is None, f"unexpected pass: remove {name!r} from EXPECTED_FAILURES[{backend!r}] ({reason})"


def test_expected_failures_name_corpus_graphs() -> None:
    names = set(corpus_names())
    for backend, failures in EXPECTED_FAILURES.items():
        assert set(failures) <= names, f"{backend}: not in the corpus: {sorted(set(failures) - names)}"
