"""The profiling executor: profiled first runs, then a graph fused for the profiled types behind prim::TypeCheck
guards; a failed guard runs the fallback graph, which specializes again as the fusion strategy allows; the switch
to the simple executor, both ways."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

import tsjit
from tsjit.ir.symbols import prim
from tsjit.ir.types import TensorType
from tsjit.runtime import profiling_graph_executor as pge
from tsjit.runtime.function import Function, runtime_function
from tsjit.runtime.graph_executor import GraphExecutor
from tsjit.runtime.interpreter import Code, InterpreterState
from tsjit.runtime.profiling_record import ProfilingRecord, profiled_types


def pointwise(x, y):
    a = torch.sigmoid(x * y + 1.0)
    return torch.tanh(a - x) * y


def fresh_pointwise():
    """pointwise as a new Python function: scripting it makes a new executor (scripting one function twice
    shares its compiled function, executor included)."""
    def pointwise_again(x, y):
        a = torch.sigmoid(x * y + 1.0)
        return torch.tanh(a - x) * y

    return pointwise_again


def kinds(graph) -> list[str]:
    return [str(n.kind) for n in graph.all_nodes()]


@pytest.fixture
def fallbacks(monkeypatch):
    """The Functions of the FallbackGraph subgraphs (built by the interpreter's `_subgraph` with the plan)."""
    from tsjit.runtime import interpreter

    made, real = [], interpreter._subgraph

    def recording(node):
        function = real(node)
        made.append(function)
        return function

    monkeypatch.setattr(interpreter, "_subgraph", recording)
    return made


@pytest.fixture
def strategy():
    previous = tsjit.set_fusion_strategy([("STATIC", 2), ("DYNAMIC", 10)])
    yield
    tsjit.set_fusion_strategy(previous)


def test_new_shapes_after_warm_up_fail_the_guard_and_fall_back_correctly(strategy, fallbacks):
    scripted = tsjit.script(fresh_pointwise())
    x, y = torch.randn(4, 3), torch.randn(4, 3)
    for _ in range(3):  # the profiled run, then the optimized graph
        torch.testing.assert_close(scripted(x, y), pointwise(x, y))
    graph = tsjit.last_executed_optimized_graph()
    assert "prim::TypeCheck" in kinds(graph) and "prim::FusionGroup" in kinds(graph)
    (check,) = [n for n in graph.nodes() if n.kind is prim.TypeCheck]
    assert [t.sizes for t in check.tys("types")] == [(4, 3), (4, 3)]
    assert not any(f.executor.plans for f in fallbacks)
    for shape, other in (((5, 3), (5, 3)), ((4, 3), (1, 3)), ((2, 4, 3), (3,))):  # sizes, a broadcast, ranks
        x, y = torch.randn(shape), torch.randn(other)
        for _ in range(3):
            torch.testing.assert_close(scripted(x, y), pointwise(x, y))
    assert any(f.executor.plans for f in fallbacks)  # the guard failed: the fallback graph ran
    x, y = torch.randn(4, 3), torch.randn(4, 3)
    torch.testing.assert_close(scripted(x, y), pointwise(x, y))  # the first specialization still holds


def test_a_fallback_specializes_to_the_new_shapes():
    scripted = tsjit.script(fresh_pointwise())
    x, y = torch.randn(4, 3), torch.randn(4, 3)
    for _ in range(2):
        scripted(x, y)
    x, y = torch.randn(6, 2), torch.randn(6, 2)
    for _ in range(3):  # the outer guard fails; the fallback profiles once, then fuses for (6, 2)
        torch.testing.assert_close(scripted(x, y), pointwise(x, y))
    inner = tsjit.last_executed_optimized_graph()  # the fallback's, which ran last
    (check,) = [n for n in inner.nodes() if n.kind is prim.TypeCheck]
    assert [t.sizes for t in check.tys("types")] == [(6, 2), (6, 2)]
    assert "prim::FusionGroup" in kinds(inner)


def test_profiles_merge_into_a_dynamic_dimension():
    graph = tsjit.script(pointwise).graph.copy()
    record = ProfilingRecord(graph, 2)
    code = Code(graph)
    for rows in (2, 5):
        InterpreterState(code, (torch.randn(rows, 3), torch.randn(rows, 3))).run()
    assert record.ready()
    seen = profiled_types(graph)
    x = graph.inputs[0]
    assert seen[x].sizes == (None, 3) and seen[x].dtype == torch.float32 and seen[x].requires_grad is False
    assert seen[x] == TensorType.create_from_tensor(torch.randn(2, 3)).merge(
        TensorType.create_from_tensor(torch.randn(5, 3)))
    assert "profiled_type=Float(*, 3" in str(graph)


def test_the_fusion_strategy_counts_the_specializations(fallbacks):
    previous = tsjit.set_fusion_strategy([("STATIC", 1), ("DYNAMIC", 1)])
    try:
        assert previous == [("STATIC", 2), ("DYNAMIC", 10)]
        scripted = tsjit.script(fresh_pointwise())
        behaviors = []
        for rows in (2, 3, 4, 5):
            x, y = torch.randn(rows, 3), torch.randn(rows, 3)
            for _ in range(2):
                torch.testing.assert_close(scripted(x, y), pointwise(x, y))
            graph = tsjit.last_executed_optimized_graph()
            checks = [n for n in graph.nodes() if n.kind is prim.TypeCheck]
            behaviors.append(None if not checks else
                             "STATIC" if checks[0].tys("types")[0].sizes == (rows, 3) else "DYNAMIC")
        # 2 rows: the static specialization; 3 rows: its fallback, the dynamic one; from then on the dynamic guard
        # (any number of rows) holds. A strategy of one static one only: the third shape runs unfused.
        assert behaviors == ["STATIC", "DYNAMIC", "DYNAMIC", "DYNAMIC"]
        tsjit.set_fusion_strategy([("STATIC", 1)])
        scripted = tsjit.script(fresh_pointwise())
        for rows in (2, 3, 4):
            x, y = torch.randn(rows, 3), torch.randn(rows, 3)
            for _ in range(2):
                torch.testing.assert_close(scripted(x, y), pointwise(x, y))
        assert "prim::FusionGroup" not in kinds(tsjit.last_executed_optimized_graph())
        assert [f.executor.remaining_depth for f in fallbacks][-1] == 0
    finally:
        tsjit.set_fusion_strategy(previous)
    with pytest.raises(tsjit.TsjitError, match="fusion strategy"):
        tsjit.set_fusion_strategy([("SOMETIMES", 1)])



def test_the_switch_works_both_ways(monkeypatch):
    graph = tsjit.script(pointwise).graph
    assert type(Function("f", graph.copy()).executor) is pge.ProfilingGraphExecutor
    assert tsjit._jit_set_profiling_executor(False) is True
    try:
        simple = Function("f", graph.copy())
        assert type(simple.executor) is GraphExecutor
        x, y = torch.randn(3), torch.randn(3)
        torch.testing.assert_close(simple(x, y), pointwise(x, y))
        assert "prim::TypeCheck" not in kinds(simple.executor.graph_for([x, y]))
    finally:
        assert tsjit._jit_set_profiling_executor(True) is False
    assert tsjit._jit_set_profiling_mode(False) is True
    try:
        assert type(Function("f", graph.copy()).executor) is GraphExecutor
    finally:
        assert tsjit._jit_set_profiling_mode(True) is False
    assert type(Function("f", graph.copy()).executor) is pge.ProfilingGraphExecutor


def test_the_environment_variable_picks_the_simple_executor():
    code = ("from tsjit.runtime.function import Function; from tsjit.ir.parser import parse_ir\n"
            "graph = parse_ir('graph(%x : Tensor):\\n  return (%x)')\n"
            "print(type(Function('f', graph).executor).__name__)")
    for value, expected in (("0", "GraphExecutor"), ("1", "ProfilingGraphExecutor")):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={**os.environ, "TSJIT_PROFILING_EXECUTOR": value}).stdout
        assert out.strip() == expected


def test_profiling_runs_get_no_entry_and_the_optimized_plan_does():
    scripted = tsjit.script(fresh_pointwise())
    x, y = torch.randn(3), torch.randn(3)
    scripted(x, y)
    executor = runtime_function(scripted.graph_function).executor
    assert scripted._entry is None and "prim::profile" in kinds(next(iter(executor.plans.values())).graph)
    scripted(x, y)
    assert scripted._entry is not None and "prim::profile" not in kinds(next(iter(executor.plans.values())).graph)


def test_the_profiled_first_call_leaves_derivative_splitting_to_the_optimized_plan(monkeypatch):
    """As TorchScript's profiling executor: the first call, which profiles, neither groups nor differentiates (autograd
    records its operators); the optimized plan splits, with the gradients the same."""
    from tsjit.runtime import graph_executor

    split = []
    real = graph_executor.run_derivative_splitting
    monkeypatch.setattr(graph_executor, "run_derivative_splitting", lambda graph: split.append(graph) or real(graph))
    monkeypatch.setattr(graph_executor, "OPTIMIZATION_PIPELINE", tuple(
        graph_executor.run_derivative_splitting if stage is real else stage
        for stage in graph_executor.OPTIMIZATION_PIPELINE))
    scripted = tsjit.script(fresh_pointwise())
    x, y = torch.randn(3, requires_grad=True), torch.randn(3)
    first = scripted(x, y)
    executor = runtime_function(scripted.graph_function).executor
    assert not split and "prim::DifferentiableGraph" not in kinds(next(iter(executor.plans.values())).graph)
    second = scripted(x, y)
    assert len(split) == 1 and "prim::DifferentiableGraph" in kinds(scripted.graph_for(x, y))
    expected = pointwise(x, y)
    expected_gradient, = torch.autograd.grad(expected.sum(), x)
    for result in (first, second):
        torch.testing.assert_close(result, expected)
        torch.testing.assert_close(torch.autograd.grad(result.sum(), x)[0], expected_gradient)


def test_the_profiled_first_call_runs_only_the_required_passes(monkeypatch):
    """As TorchScript's runProfilingInsensitiveOptimizations: before the first result only cleanups run (here the
    required passes); inference and the derivative preserving optimizations wait for the optimized plan, which
    still folds what the spec decides (the rank check) and gives the same result."""
    from tsjit.runtime import graph_executor

    ran = []
    real = graph_executor.run_pass
    monkeypatch.setattr(graph_executor, "run_pass", lambda fn, *a, **k: ran.append(fn.__name__) or real(fn, *a, **k))
    monkeypatch.setattr(pge, "run_pass", lambda fn, *a, **k: ran.append(fn.__name__) or real(fn, *a, **k))

    def checked(x, y):
        if x.dim() != 1:
            raise ValueError("expected a vector")
        return torch.tanh(x * y + 1.0)

    scripted = tsjit.script(checked)
    x, y = torch.randn(3), torch.randn(3)
    torch.testing.assert_close(scripted(x, y), torch.tanh(x * y + 1.0))
    assert set(ran) == {"specialize_autograd_zero", "lower_simple_tuples"}
    torch.testing.assert_close(scripted(x, y), torch.tanh(x * y + 1.0))
    assert {"propagate_shapes", "eliminate_common_subexpression", "peephole_optimize"} <= set(ran)
    assert "aten::dim" not in kinds(scripted.graph_for(x, y))


def test_guards_of_chained_groups_are_eliminated_and_coalesced():
    def two_groups(x, y):
        a = torch.relu(x * y + 2.0)
        s = a.sum(dim=0, keepdim=True)  # not fusible: splits the groups
        return torch.sigmoid(s * y - a)

    scripted = tsjit.script(two_groups)
    x, y = torch.randn(4, 3), torch.randn(4, 3)
    for _ in range(2):
        torch.testing.assert_close(scripted(x, y), two_groups(x, y))
    graph = tsjit.last_executed_optimized_graph()
    assert kinds(graph).count("prim::FusionGroup") == 2
    checks = [n for n in graph.nodes() if n.kind is prim.TypeCheck]
    # the second group reads %a (the first group's output) and the sum of it: both follow from the first check
    assert len(checks) == 1 and sorted(v.debug_name for v in checks[0].inputs) == ["x.1", "y.1"]
    for shape in ((5, 3), (4, 3)):
        x, y = torch.randn(shape), torch.randn(shape)
        torch.testing.assert_close(scripted(x, y), two_groups(x, y))


def test_a_static_group_plans_the_launch_for_the_profiled_sizes_with_its_kernel(monkeypatch):
    from tsjit.codegen import launch

    planned, real = [], launch.LaunchPlanner.__call__
    monkeypatch.setattr(launch.LaunchPlanner, "__call__", lambda self, layout: (planned.append(layout),
                                                                               real(self, layout))[1])
    scripted = tsjit.script(fresh_pointwise())
    x, y = torch.randn(4, 3), torch.randn(1, 3)  # a broadcast
    for _ in range(4):
        torch.testing.assert_close(scripted(x, y), pointwise(x, y))
    assert planned == [((4, 3), (3, 1), (1, 3), (3, 1))]  # when the plan was built, not by the calls


def test_the_profiled_runs_prove_no_binding_and_the_optimized_plan_does(monkeypatch) -> None:
    """The first call's plan calls OpOverloads as they are (runtime/operations.py's operations_without_probes):
    the probe that proves a faster binding is work for the optimized plan, which runs from the second call on."""
    from tsjit.runtime import operations

    probed = []
    monkeypatch.setattr(operations, "_bindings", {})
    # the Operations resolved before, by call: an earlier test's optimized plan of the same operators would be found
    # there, proven already
    monkeypatch.setattr(operations, "_dispatcher_operations", {})
    find_binding = operations._find_binding
    monkeypatch.setattr(operations, "_find_binding", lambda *args: probed.append(args[0]) or find_binding(*args))
    with tsjit.fuser("none"):
        function = tsjit.script(fresh_pointwise())
        x, y = torch.randn(3), torch.randn(3)
        assert torch.allclose(function(x, y), pointwise(x, y))
        assert probed == []
        assert torch.allclose(function(x, y), pointwise(x, y))
    assert probed


def test_profile_nodes_seeing_one_observation_build_its_type_once(monkeypatch):
    """Recording is a comparison and a lookup per profile node: the ten nodes of a chain on one input size share
    the TensorType of what they saw (built once), and still record it each, merged as before."""
    from tsjit.runtime import profiling_record

    graph = tsjit.script(pointwise).graph.copy()
    record = ProfilingRecord(graph, 1)  # kept alive: its profile nodes record while it lives
    built = []
    create = TensorType.create_from_tensor
    monkeypatch.setattr(TensorType, "create_from_tensor", classmethod(lambda cls, t: built.append(t) or create(t)))
    monkeypatch.setattr(profiling_record, "_observed_types", {})
    InterpreterState(Code(graph), (torch.randn(4, 3), torch.randn(4, 3))).run()
    profiles = [n for n in graph.all_nodes() if n.kind is prim.profile and n.inputs]
    assert record.ready() and len(profiles) > 3 and len(built) == 1
    assert {str(n.ty("profiled_type")) for n in profiles} == {str(TensorType.create_from_tensor(torch.randn(4, 3)))}


def test_a_plan_compiled_for_few_runs_generates_no_step_source(monkeypatch):
    """A profiling plan runs once: its steps are plain closures, not generated and compiled source (each distinct
    step shape costs a compile in a fresh process); a Code for many runs still gets the generated steps."""
    from tsjit.runtime import interpreter
    from tsjit.runtime.operations import operations_without_probes

    generated = []
    factory = interpreter._unrolled_step_factory
    monkeypatch.setattr(interpreter, "_unrolled_step_factory",
                        lambda *shape: generated.append(shape) or factory(*shape))
    graph = tsjit.script(pointwise).graph.copy()
    x, y = torch.randn(4, 3), torch.randn(4, 3)
    with operations_without_probes():
        few = Code(graph)
    assert generated == []
    torch.testing.assert_close(InterpreterState(few, (x, y)).run(), pointwise(x, y))
    many = Code(graph)
    assert generated
    torch.testing.assert_close(InterpreterState(many, (x, y)).run(), pointwise(x, y))
