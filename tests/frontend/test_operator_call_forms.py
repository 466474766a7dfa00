"""Every operator call form resolves at compile time to one exact overload, through every path.

`torch.ops.<ns>.<op>.<overload>(...)` calls exactly that overload (torch.jit rejects the form): each case below
names an overload that matching would not pick from the plain `torch.<op>` spelling or from the schema's first
overload, across namespaces (aten, prims, quantized, an op defined with torch.library, one registered with
tsjit.register_operator). Each scripts, runs (equal to eager calling the same overload), traces, prints and
survives save -> load with its overload. The packet form `torch.ops.aten.<op>(...)` is checked against torch.jit:
the same node kind and overload.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import torch
from torch_library_operators import LastingLibrary, dead_builtins

import tsjit
from tsjit.errors import CompileError
from tsjit.ir.parser import parse_ir

aten = torch.ops.aten  # an OpOverloadPacket namespace reached through a global, as user code does
add_tensor = torch.ops.aten.add.Tensor  # an OpOverload reached through a global

# ---- user-defined operators: torch.library before scripting, and tsjit's own registry ----------------------
_LIBRARY = LastingLibrary("callforms_test")  # not torch.library.Library: see torch_library_operators.py
_LIBRARY.define("scale(Tensor x, float s=2.0) -> Tensor")
_LIBRARY.define("scale.int(Tensor x, int s) -> Tensor")
_LIBRARY.impl("scale", lambda x, s=2.0: x * s, "CompositeExplicitAutograd")
_LIBRARY.impl("scale.int", lambda x, s: x * s + 1, "CompositeExplicitAutograd")


def _twice_tensor(x):
    return x * 2


def _twice_int(x: int) -> int:
    return x * 2


tsjit.register_operator("callforms_reg::twice.Tensor(Tensor x) -> Tensor", _twice_tensor)
tsjit.register_operator("callforms_reg::twice.int(int x) -> int", _twice_int)


# ---- the cases: one function per overload ---------------------------------------------------------------------
def add_scalar(x):
    return torch.ops.aten.add.Scalar(x, 2, alpha=3)


def add_tensor_global(x, y):
    return add_tensor(x, y, alpha=2)


def add_default_numbers(a: int, b: int):
    return torch.ops.aten.add.default(a, b)  # Scalar + Scalar: matching would pick aten::add.int


def add_int(a: int, b: int):
    return aten.add.int(a, b)


def add_out(x, y):
    out = torch.empty(3, 4)
    torch.ops.aten.add.out(x, y, alpha=2, out=out)
    return out


def sub_scalar(x):
    return torch.ops.aten.sub.Scalar(x, 1.5)


def rsub_scalar(x):
    return torch.ops.aten.rsub.Scalar(x, 1.5)


def mul_scalar(x):
    return aten.mul.Scalar(x, 3)


def div_tensor_mode(x, y):
    return torch.ops.aten.div.Tensor_mode(x, y, rounding_mode="floor")


def div_scalar_mode(x):
    return torch.ops.aten.div.Scalar_mode(x, 0.7, rounding_mode="trunc")


def pow_scalar(x):
    return torch.ops.aten.pow.Scalar(2.0, x)


def pow_tensor_scalar(x):
    return torch.ops.aten.pow.Tensor_Scalar(x, 2)


def sum_dim(x):
    return torch.ops.aten.sum.dim_IntList(x, [0], keepdim=True)


def sum_default(x):
    return torch.ops.aten.sum.default(x, dtype=torch.float64)


def mean_dim(x):
    return torch.ops.aten.mean.dim(x, [1])


def var_correction(x):
    return torch.ops.aten.var.correction(x, [0], correction=0)


def max_dim(x):
    values, indices = torch.ops.aten.max.dim(x, 1)
    return values, indices


def max_other(x, y):
    return torch.ops.aten.max.other(x, y)


def min_dim(x):
    return torch.ops.aten.min.dim(x, 0, True)[1]


def clamp_tensor(x, y):
    return torch.ops.aten.clamp.Tensor(x, None, y)


def view_dtype(x):
    return torch.ops.aten.view.dtype(x, torch.int32)  # matching never picks it: a ScalarType is an int


def clamp_default(x):
    return torch.ops.aten.clamp.default(x, -0.5, 0.5)


def index_select(x, i):
    return torch.ops.aten.index_select.default(x, 1, i)


def where_scalar_other(x):
    return torch.ops.aten.where.ScalarOther(x > 0, x, 0.0)


def where_scalar_self(x):
    return torch.ops.aten.where.ScalarSelf(x > 0, 1.0, x)


def eq_scalar(x):
    return torch.ops.aten.eq.Scalar(x, 0)


def masked_fill_tensor(x):
    return torch.ops.aten.masked_fill.Tensor(x, x > 0, torch.tensor(7.0))


def softmax_int(x):
    return torch.ops.aten.softmax.int(x, 1)


def cat_default(x, y):
    return torch.ops.aten.cat.default([x, y], 1)


def transpose_int(x):
    return torch.ops.aten.transpose.int(x, 0, 1)


def select_int(x):
    return torch.ops.aten.select.int(x, 1, 2)


def slice_tensor(x):
    return torch.ops.aten.slice.Tensor(x, 1, 1, None, 2)


def split_tensor(x):
    return torch.ops.aten.split.Tensor(x, 2, 1)


def topk_default(x):
    return torch.ops.aten.topk.default(x, 2, largest=False)


def full_default(x):
    return x + torch.ops.aten.full.default([3, 4], 2.5, dtype=torch.float32)


def arange_start_step(x):
    return x + torch.ops.aten.arange.start_step(0, 8, 2, dtype=torch.float32)


def lerp_scalar(x, y):
    return torch.ops.aten.lerp.Scalar(x, y, 0.25)


def remainder_scalar(x):
    return torch.ops.aten.remainder.Scalar(x, 0.5)


def floordiv_int(a: int, b: int):
    return torch.ops.aten.floordiv.int(a, b)


def prims_sum(x):
    return torch.ops.prims.sum.default(x, [0])


def prims_mul(x, y):
    return torch.ops.prims.mul.default(x, y)


def prims_convert(x):
    return torch.ops.prims.convert_element_type.default(x, torch.float64)


def quantized_add(x, y):
    qx = torch.quantize_per_tensor(x, 0.05, 64, torch.quint8)
    qy = torch.quantize_per_tensor(y, 0.05, 64, torch.quint8)
    return torch.ops.quantized.add.default(qx, qy, 0.1, 64).dequantize()


def library_scale(x):
    return torch.ops.callforms_test.scale.default(x)


def library_scale_int(x):
    return torch.ops.callforms_test.scale.int(x, 3)


def registered_twice(x):
    return torch.ops.callforms_reg.twice.Tensor(x)


def registered_twice_int(a: int):
    return torch.ops.callforms_reg.twice.int(a)


@dataclass
class Case:
    overload: str  # the operator name of the overload the call must reach, "aten::add.Scalar"
    fn: Callable
    inputs: Callable[[], tuple]
    traceable: bool = True  # eager can run it on tensors only (numbers in, numbers out are not traced)
    eager: Callable | None = None  # the eager oracle, when Python cannot call the op (tsjit-registered ops)


def _xy():
    return torch.randn(3, 4), torch.randn(3, 4)


def _x():
    return (torch.randn(3, 4),)


def _ints():
    return 7, 2


CASES = [
    Case("aten::add.Scalar", add_scalar, _x),
    Case("aten::add.Tensor", add_tensor_global, _xy),
    Case("aten::add", add_default_numbers, _ints, traceable=False),
    Case("aten::add.int", add_int, _ints, traceable=False),
    Case("aten::add.out", add_out, _xy),
    Case("aten::sub.Scalar", sub_scalar, _x),
    Case("aten::rsub.Scalar", rsub_scalar, _x),
    Case("aten::mul.Scalar", mul_scalar, _x),
    Case("aten::div.Tensor_mode", div_tensor_mode, _xy),
    Case("aten::div.Scalar_mode", div_scalar_mode, _x),
    Case("aten::pow.Scalar", pow_scalar, _x),
    Case("aten::pow.Tensor_Scalar", pow_tensor_scalar, _x),
    Case("aten::sum.dim_IntList", sum_dim, _x),
    Case("aten::sum", sum_default, _x),
    Case("aten::mean.dim", mean_dim, _x),
    Case("aten::var.correction", var_correction, _x),
    Case("aten::max.dim", max_dim, _x),
    Case("aten::max.other", max_other, _xy),
    Case("aten::min.dim", min_dim, _x),
    Case("aten::clamp.Tensor", clamp_tensor, _xy),
    Case("aten::view.dtype", view_dtype, _x),
    Case("aten::clamp", clamp_default, _x),
    Case("aten::index_select", index_select, lambda: (torch.randn(3, 4), torch.tensor([3, 0, 1]))),
    Case("aten::where.ScalarOther", where_scalar_other, _x),
    Case("aten::where.ScalarSelf", where_scalar_self, _x),
    Case("aten::eq.Scalar", eq_scalar, lambda: (torch.tensor([0, 1, 0, 2]),)),
    Case("aten::masked_fill.Tensor", masked_fill_tensor, _x),
    Case("aten::softmax.int", softmax_int, _x),
    Case("aten::cat", cat_default, _xy),
    Case("aten::transpose.int", transpose_int, _x),
    Case("aten::select.int", select_int, _x),
    Case("aten::slice.Tensor", slice_tensor, _x),
    Case("aten::split.Tensor", split_tensor, _x),
    Case("aten::topk", topk_default, _x),
    Case("aten::full", full_default, _x),
    Case("aten::arange.start_step", arange_start_step, lambda: (torch.randn(4),)),
    Case("aten::lerp.Scalar", lerp_scalar, _xy),
    Case("aten::remainder.Scalar", remainder_scalar, _x),
    Case("aten::floordiv.int", floordiv_int, _ints, traceable=False),
    Case("prims::sum", prims_sum, _x),
    Case("prims::mul", prims_mul, _xy),
    Case("prims::convert_element_type", prims_convert, _x),
    Case("quantized::add", quantized_add, _xy),
    Case("callforms_test::scale", library_scale, _x),
    Case("callforms_test::scale.int", library_scale_int, _x),
    Case("callforms_reg::twice.Tensor", registered_twice, _x, traceable=False, eager=lambda x: x * 2),
    Case("callforms_reg::twice.int", registered_twice_int, lambda: (5,), traceable=False, eager=lambda a: 2 * a),
]
IDS = [f"{case.overload}-{case.fn.__name__}" for case in CASES]


def _calls_of(graph, overload: str) -> list:
    """The nodes of `graph` (blocks included) calling operator `overload` ("aten::add.Scalar")."""
    name = overload.split(".")[0]
    found = []
    for node in graph.all_nodes() if hasattr(graph, "all_nodes") else graph.nodes():
        if str(node.kind) == name and node.schema.operator_name == overload:
            found.append(node)
    return found


def _other_overloads(graph, overload: str) -> list[str]:
    name = overload.split(".")[0]
    return [node.schema.operator_name for node in graph.nodes()
            if str(node.kind) == name and node.schema.operator_name != overload]


def _assert_same(actual, expected) -> None:
    if isinstance(expected, tuple | list):
        assert isinstance(actual, tuple | list) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            _assert_same(a, e)
    elif isinstance(expected, torch.Tensor):
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        torch.testing.assert_close(actual, expected, rtol=0, atol=0, equal_nan=True)
    else:
        assert type(actual) is type(expected) and actual == expected


def _round_trip(scripted):
    buffer = io.BytesIO()
    tsjit.save(scripted, buffer)
    buffer.seek(0)
    return tsjit.load(buffer)


def test_defining_the_library_leaves_torch_jit_no_dead_builtins():
    assert dead_builtins("callforms_test") == []


def test_the_cases_cover_namespaces_and_thirty_overloads():
    assert len({case.overload for case in CASES}) >= 30
    assert {case.overload.split("::")[0] for case in CASES} >= {
        "aten", "prims", "quantized", "callforms_test", "callforms_reg"}


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_exact_overload_scripts_runs_prints_and_round_trips(case):
    scripted = tsjit.script(case.fn)
    assert _calls_of(scripted.graph, case.overload), scripted.graph
    assert not _other_overloads(scripted.graph, case.overload), scripted.graph
    inputs = case.inputs()
    expected = (case.eager or case.fn)(*inputs)
    _assert_same(scripted(*inputs), expected)
    loaded = _round_trip(scripted)
    assert _calls_of(loaded.graph, case.overload), (scripted.code, loaded.graph)
    _assert_same(loaded(*inputs), expected)


@pytest.mark.parametrize("case", [c for c in CASES if c.traceable], ids=[i for c, i in zip(CASES, IDS)
                                                                           if c.traceable])
def test_exact_overload_traces_as_the_overload_that_ran(case):
    inputs = case.inputs()
    traced = tsjit.trace(case.fn, inputs)
    assert _calls_of(traced.graph, case.overload), traced.graph
    _assert_same(traced(*inputs), case.fn(*inputs))
    _assert_same(_round_trip(traced)(*inputs), case.fn(*inputs))


def test_pinned_node_prints_its_overload_and_others_keep_torch_spelling():
    pinned = tsjit.script(view_dtype)
    assert "ops.aten.view.dtype(x, 3)" in pinned.code
    assert 'aten::view[overload="dtype"]' in str(pinned.graph)
    parsed = parse_ir(str(pinned.graph))
    assert [node.schema.operator_name for node in parsed.nodes() if node.kind.ns == "aten"] == ["aten::view.dtype"]
    assert "ops.aten.add.default(a, b)" in tsjit.script(add_default_numbers).code
    plain = tsjit.script(div_tensor_mode)
    assert 'torch.div(x, y, rounding_mode="floor")' in plain.code
    assert "overload" not in str(plain.graph)


# ---- the packet form against torch.jit ---------------------------------------------------------------------
def packet_add(x, y):
    return torch.ops.aten.add(x, y, alpha=2), torch.ops.aten.add(x, 2)


def packet_tanh_backward(grad, out):
    return torch.ops.aten.tanh_backward(grad, out)


def packet_reductions(x):
    return torch.ops.aten.sum(x, [0]), torch.ops.aten.max(x, 1)[0], aten.mean(x, dtype=torch.float64)


def packet_clamp(x, y):
    return torch.ops.aten.clamp(x, y, None), torch.ops.aten.clamp(x, 0.1), torch.ops.aten.pow(2, x)


def packet_numbers(a: int, b: float):
    return torch.ops.aten.add(a, b), aten.floordiv(a, 2), torch.ops.aten.div(a, b)


def packet_prims(x, y):
    return torch.ops.prims.mul(x, y), torch.ops.prims.sum(x, [1])


def packet_library(x):
    return torch.ops.callforms_test.scale(x), torch.ops.callforms_test.scale(x, 3)


def other_forms(x, y):
    return (torch.add(x, 2), x.add(y, alpha=2), torch.nn.functional.softmax(x, 1), x.max(1)[1], torch.pow(2, x),
            torch.nn.functional.relu(x), x.sum([0], True), torch.clamp(x, max=y))


class PacketModule(torch.nn.Module):
    def forward(self, grad_out, output):
        return torch.ops.aten.tanh_backward(grad_out, output)


PACKETS = [(packet_add, _xy), (packet_tanh_backward, _xy), (packet_reductions, _x), (packet_clamp, _xy),
           (packet_numbers, lambda: (7, 2.5)), (packet_prims, _xy), (packet_library, _x), (other_forms, _xy)]


def _overloads(nodes) -> list[tuple[str, str]]:
    """(kind, overload) of each operator node; torch's nodes give them through their schema text."""
    found = []
    for node in nodes:
        schema = node.maybe_schema() if hasattr(node, "maybe_schema") else _torch_schema(node)
        if schema is not None:
            found.append((str(node.kind), schema.overload_name))
    return found


def _torch_schema(node):
    from tsjit.ir.schema import parse_schema

    if node.kind().startswith("prim::"):
        return None
    try:
        return parse_schema(str(node.schema()))
    except RuntimeError:  # a node without a schema
        return None


def _torch_overloads(graph) -> list[tuple[str, str]]:
    return [(node.kind(), schema.overload_name) for node in graph.nodes()
            if (schema := _torch_schema(node)) is not None]


@pytest.mark.parametrize("fn,inputs", PACKETS, ids=[fn.__name__ for fn, _ in PACKETS])
def test_packet_form_picks_the_overload_torch_jit_picks(fn, inputs):
    """torch.jit is the oracle, for results too: eager `torch.ops.aten.div(7, 2.5)` resolves overloads its own
    way (a tensor), TorchScript's matching picks `aten::div.int_float`... (a float)."""
    ours, theirs = tsjit.script(fn), torch.jit.script(fn)
    ours_overloads = [(kind, overload) for kind, overload in _overloads(ours.graph.nodes())
                      if not kind.startswith("prim::")]
    assert ours_overloads == _torch_overloads(theirs.graph)
    values = inputs()
    _assert_same(ours(*values), theirs(*values))


def test_packet_form_in_a_module_scripts_as_in_torch_jit():
    module = tsjit.script(PacketModule())
    grad, out = torch.randn(5), torch.randn(5).tanh()
    _assert_same(module(grad, out), torch.ops.aten.tanh_backward(grad, out))
    assert [n.kind for n in module.graph.nodes()] == [n.kind for n in module.graph.nodes()]
    assert _overloads(module.graph.nodes()) == [("aten::tanh_backward", "")]


def _closure_over_an_overload():
    mul = torch.ops.aten.mul.Scalar

    def scaled(x):
        return mul(x, 3)

    return scaled


class OperatorAttributes(torch.nn.Module):
    """torch.ops objects held by a module: a packet (torch.jit accepts it) and an OpOverload (tsjit only)."""

    def __init__(self):
        super().__init__()
        self.packet = torch.ops.aten.relu
        self.exact = torch.ops.aten.add.Scalar
        self.view_as = torch.ops.aten.view.dtype

    def forward(self, x):
        return self.packet(x), self.exact(x, 2), self.view_as(x, torch.int32)


def test_overloads_reached_through_closures_and_module_attributes():
    scaled = _closure_over_an_overload()
    scripted = tsjit.script(scaled)
    assert _overloads(scripted.graph.nodes())[-1] == ("aten::mul", "Scalar")
    x = torch.randn(3, 4)
    _assert_same(scripted(x), scaled(x))
    eager = OperatorAttributes()
    module = tsjit.script(eager)
    calls = [name for name in _overloads(module.graph.nodes()) if name[0].startswith("aten::")]
    assert calls == [("aten::relu", ""), ("aten::add", "Scalar"), ("aten::view", "dtype")]
    _assert_same(module(x), eager(x))
    _assert_same(_round_trip(module)(x), eager(x))


def test_archives_without_pinned_nodes_load_in_torch_jit(tmp_path):
    for fn, inputs in [(div_tensor_mode, _xy), (sum_dim, _x), (max_dim, _x), (packet_clamp, _xy)]:
        path = str(tmp_path / f"{fn.__name__}.pt")
        tsjit.save(tsjit.script(fn), path)
        values = inputs()
        _assert_same(torch.jit.load(path)(*values), fn(*values))


# ---- errors ------------------------------------------------------------------------------------------------
def unknown_op(x):
    return torch.ops.aten.no_such_operator(x)


def unknown_overload(x):
    return torch.ops.aten.add.NoSuchOverload(x, x)


def wrong_arguments(x):
    return torch.ops.aten.add.Scalar(x, "a")


@pytest.mark.parametrize("fn,expected", [
    (unknown_op, "object has no attribute no_such_operator"),
    (unknown_overload, "Unknown overload 'NoSuchOverload' of builtin op aten::add"),
    (wrong_arguments, "Expected a value of type 'number' for argument 'other' but instead found type 'str'"),
])
def test_errors_name_the_call_and_the_candidate_schemas(fn, expected):
    with pytest.raises(CompileError) as raised:
        tsjit.script(fn)
    message = str(raised.value)
    assert expected in message
    assert "<--- HERE" in message and fn.__name__ in message
    if fn is not unknown_op:
        assert "aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor" in message


def test_source_without_python_reads_every_form():
    unit = tsjit.CompilationUnit("""
def f(x: Tensor, y: Tensor):
    return torch.ops.aten.add.Scalar(x, 2), torch.ops.aten.clamp.Tensor(x, None, y), torch.ops.aten.add(x, y)
""")
    x, y = torch.randn(3), torch.randn(3)
    _assert_same(unit.f(x, y), (x + 2, torch.clamp(x, None, y), x + y))
    kinds = [name for name in _overloads(unit.f.graph.nodes()) if name[0].startswith("aten::")]
    assert kinds == [("aten::add", "Scalar"), ("aten::clamp", "Tensor"), ("aten::add", "Tensor")]
