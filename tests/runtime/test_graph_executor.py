"""The graph executor: ArgumentSpecs, the plan cache, refined input types, and the optimization pipeline."""

from __future__ import annotations

import torch

from tsjit.ir.graph import Graph
from tsjit.ir.parser import parse_ir
from tsjit.ir.types import TensorType
from tsjit.runtime import graph_executor
from tsjit.runtime.graph_executor import UNDEFINED, GraphExecutor, TensorSpec, create_argument_spec

GRAPH = """
graph(%x : Tensor, %t : (Tensor, int), %o : Tensor?, %n : int):
  %a : Tensor, %k : int = prim::TupleUnpack(%t)
  %y : Tensor = aten::mul(%x, %a)
  return (%y)
"""


def test_argument_spec_records_tensors_in_inputs_and_tuples() -> None:
    x = torch.ones(2, 3, dtype=torch.float64, requires_grad=True)
    spec = create_argument_spec([x, (torch.ones(4, dtype=torch.int32), 3), None, 7])
    assert spec == (TensorSpec(True, torch.float64, 2, True, torch.device("cpu")),
                    (TensorSpec(True, torch.int32, 1, False, torch.device("cpu")), None), UNDEFINED, None)


def test_argument_spec_ignores_requires_grad_when_grad_mode_is_off() -> None:
    with torch.no_grad():
        (spec,) = create_argument_spec([torch.ones(1, requires_grad=True)])
    assert spec.requires_grad is False


def test_sizes_do_not_matter_but_dtype_and_rank_do() -> None:
    executor = GraphExecutor(parse_ir(GRAPH))
    for x in (torch.ones(2, 3), torch.ones(5, 1), torch.ones(2, 3, dtype=torch.float64), torch.ones(2)):
        torch.testing.assert_close(executor.run([x, (x, 1), None, 0]), x * x)
    assert len(executor.plans) == 3


def test_plans_carry_the_refined_input_types() -> None:
    executor = GraphExecutor(parse_ir(GRAPH))
    x = torch.ones(2, 3)
    plan = executor.get_plan([x, (torch.ones(1, dtype=torch.int64), 1), x, 2])
    types = [value.type for value in plan.graph.inputs]
    assert types[0] == TensorType(dtype=torch.float32, device=torch.device("cpu"), requires_grad=False,
                                  sizes=(None, None))
    assert types[1].elements[0].dtype == torch.int64 and str(types[1].elements[1]) == "int"
    assert types[2].rank == 2 and str(types[3]) == "int"
    assert str(executor.graph.inputs[0].type) == "Tensor"  # the executor's own graph is left alone


def test_optimization_pipeline_runs_every_stage_in_order_and_lints(monkeypatch) -> None:
    calls = []

    def stage(name: str):
        def run(graph: Graph) -> bool:
            calls.append(name)
            return False

        return run

    monkeypatch.setattr(graph_executor, "OPTIMIZATION_PIPELINE", (stage("required"), stage("inference")))
    monkeypatch.setattr(Graph, "lint", lambda graph: calls.append("lint") or True)
    monkeypatch.setenv("TSJIT_LINT", "1")
    GraphExecutor(parse_ir(GRAPH)).get_plan([torch.ones(1), (torch.ones(1), 1), None, 1])
    assert calls == ["required", "lint", "inference", "lint"]


def test_optimize_false_skips_the_pipeline(monkeypatch) -> None:
    monkeypatch.setattr(graph_executor, "OPTIMIZATION_PIPELINE", (lambda graph: 1 / 0,))
    executor = GraphExecutor(parse_ir(GRAPH), optimize=False)
    x = torch.ones(1)
    torch.testing.assert_close(executor.run([x, (x, 1), None, 1]), x)
