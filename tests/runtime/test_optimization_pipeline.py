"""The executor's optimization pipeline on whole programs: plans lose the checks their spec decides, keep
eager's results and autograd, and are keyed by what shape propagation depends on."""

from __future__ import annotations

import pathlib
import random

import torch
from shared_programs import lstm_cell_s as lstm_cell

import tsjit
from tsjit.api.module import script_module
from tsjit.ir.parser import parse_ir
from tsjit.ir.symbols import prim
from tsjit.ir.types import OptionalType, TensorType, TupleType
from tsjit.runtime.function import runtime_function
from tsjit.runtime.graph_executor import UNDEFINED, TensorSpec, optimize_graph, specialize_types

CORPUS = pathlib.Path(__file__).parent.parent / "ir" / "corpus" / "graphs"


def kinds(graph) -> list[str]:
    return [str(node.kind) for node in graph.all_nodes()]


def checked_linear(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if x.dim() != 2:
        raise ValueError("expected a matrix")
    if not x.is_floating_point() or x.dtype != w.dtype:
        raise TypeError("expected matching float tensors")
    return torch.relu(x.mm(w.t()) + b)


def test_dim_and_dtype_checks_disappear_from_the_plan(monkeypatch) -> None:
    monkeypatch.setenv("TSJIT_FUSION", "0")  # the plan's node kinds are the point here: the bias add and relu unfused
    scripted = tsjit.script(checked_linear)
    x, w, b = torch.randn(4, 3), torch.randn(5, 3), torch.randn(5)
    graph = scripted.graph_for(x, w, b)
    assert kinds(graph) == ["prim::Constant", "aten::t", "aten::mm", "aten::add", "aten::relu"]
    torch.testing.assert_close(scripted(x, w, b), checked_linear(x, w, b))
    for bad in (torch.randn(4), torch.ones(4, 3, dtype=torch.int64)):  # other plans, and they still raise
        try:
            scripted(bad, w, b)
        except Exception as error:
            assert "expected" in str(error)
        else:
            raise AssertionError("the check was lost")


def test_a_batchnorm_module_plan_has_no_dim_check() -> None:
    module = torch.nn.BatchNorm2d(3).eval()
    scripted, x = script_module(torch.nn.BatchNorm2d(3).eval()), torch.randn(2, 3, 4, 4)
    for _ in range(2):  # the profiled run, then the optimized plan's first
        torch.testing.assert_close(scripted(x), module(x))
    (plan,) = runtime_function(scripted.forward.function).executor.plans.values()
    assert "aten::dim" not in kinds(plan.graph)
    assert "aten::dim" in kinds(runtime_function(scripted.forward.function).graph)


def test_every_value_of_the_lstm_cell_plan_is_typed() -> None:
    scripted = tsjit.script(lstm_cell)
    inputs = [torch.randn(3, 10), torch.randn(3, 20), torch.randn(3, 20), torch.randn(80, 10), torch.randn(80, 20),
              torch.randn(80), torch.randn(80)]
    graph = scripted.graph_for(*inputs)  # the guard around the fused cell (TypeCheck, If) has the profiled types
    tensors = [v for n in graph.nodes() if n.kind not in (prim.TypeCheck, prim.If) for v in n.outputs
               if isinstance(v.type, TensorType)]
    assert tensors and all(str(v.type) == "Float(*, *, device=cpu)" for v in tensors), graph
    for ours, theirs in zip(scripted(*inputs), lstm_cell(*inputs)):
        torch.testing.assert_close(ours, theirs)


def test_gradients_flow_through_optimized_plans() -> None:
    scripted = tsjit.script(checked_linear)
    x, w, b = (torch.randn(4, 3, requires_grad=True), torch.randn(5, 3, requires_grad=True),
               torch.randn(5, requires_grad=True))
    scripted(x, w, b).sum().backward()
    ours = [t.grad for t in (x, w, b)]
    for t in (x, w, b):
        t.grad = None
    checked_linear(x, w, b).sum().backward()
    for mine, expected in zip(ours, (x.grad, w.grad, b.grad)):
        torch.testing.assert_close(mine, expected)


def test_plans_follow_the_default_dtype() -> None:
    def halve(x: torch.Tensor) -> torch.Tensor:
        y = x * 0.5
        if y.dtype == torch.float64:
            return y + 1
        return y

    scripted, x = tsjit.script(halve), torch.ones(2, dtype=torch.int64)
    assert scripted(x).dtype == torch.float32
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        assert torch.equal(scripted(x), halve(x))
    finally:
        torch.set_default_dtype(previous)


def test_in_place_metadata_changes_are_respected() -> None:
    def grow(x: torch.Tensor) -> int:
        x.unsqueeze_(0)
        return x.dim()

    assert tsjit.script(grow)(torch.ones(2)) == 2


def test_the_pipeline_never_fails_on_the_ir_corpus() -> None:
    """Every graph torch.jit printed for tests/ir/corpus, under random specs: the pipeline runs and lints."""
    rng = random.Random(0)

    def spec_for(type_):
        if isinstance(type_, OptionalType) and rng.random() < 0.3:
            return UNDEFINED
        if isinstance(type_, TensorType) or isinstance(type_, OptionalType) and isinstance(type_.elem, TensorType):
            dtype = rng.choice([torch.float32, torch.float64, torch.int64, torch.bool])
            return TensorSpec(True, dtype, rng.randint(0, 4), rng.random() < 0.3, torch.device("cpu"))
        if isinstance(type_, TupleType):
            return tuple(spec_for(element) for element in type_.elements)
        return None

    for path in sorted(CORPUS.glob("*.ir")):
        for _ in range(3):
            graph = parse_ir(path.read_text())
            specialize_types(graph, tuple(spec_for(value.type) for value in graph.inputs))
            optimize_graph(graph)
            assert graph.lint(), path.name
