"""The plan cache of a GraphExecutor is bounded (TSJIT_PLAN_CACHE_SIZE): beyond it the least recently used plan is
evicted, with a log line, and calls keep giving the right results; a plan in use is not evicted."""

from __future__ import annotations

import torch

from tsjit import log
from tsjit.ir.parser import parse_ir
from tsjit.runtime.function import Function

GRAPH = """graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::add(%x, %x, %one)
  return (%y)
"""
INPUTS = [torch.ones(2), torch.ones(2, 2), torch.ones(2, dtype=torch.float64), torch.ones(2, 2, 2)]


def bounded_function(size: int, monkeypatch) -> Function:
    monkeypatch.setenv("TSJIT_PLAN_CACHE_SIZE", str(size))
    return Function("f", parse_ir(GRAPH))


def test_the_least_recently_used_plan_is_evicted_with_a_log_line(monkeypatch, capsys):
    monkeypatch.setenv("TSJIT_LOG_LEVEL", "graph_executor")
    log.reset()
    try:
        function = bounded_function(2, monkeypatch)
        for x in INPUTS[:2]:
            function(x)
        function(INPUTS[0])  # now the most recently used: the plan for INPUTS[1] goes first
        assert torch.equal(function(INPUTS[2]), INPUTS[2] * 2)
        kept = {(spec[0].dtype, spec[0].rank) for spec in function.executor.plans}
        assert kept == {(torch.float32, 1), (torch.float64, 1)}
        assert "evicted the least recently used plan" in capsys.readouterr().err
    finally:
        monkeypatch.delenv("TSJIT_LOG_LEVEL")
        log.reset()


def test_calls_stay_right_while_specs_rotate_through_a_small_cache(monkeypatch):
    function = bounded_function(2, monkeypatch)
    for call in range(40):
        x = INPUTS[call % len(INPUTS)]
        assert torch.equal(function(x), x * 2)
    assert len(function.executor.plans) == 2
