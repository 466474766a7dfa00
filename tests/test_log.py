"""Logging and the optimization limiter as the passes use them: TSJIT_OPT_LIMIT stops a pass's rewrites after N,
TSJIT_LOG_LEVEL shows each rewrite. (Each pass is tested in tests/passes/test_<pass>.py.)"""

from __future__ import annotations

import tsjit
from tsjit import log
from tsjit.passes.dead_code_elimination import eliminate_dead_code


def test_optimization_limit_stops_rewrites(monkeypatch):
    """TSJIT_OPT_LIMIT lets the first N rewrites of a pass through, to bisect a miscompilation."""
    text = """\
graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::neg(%x)
  %b : Tensor = aten::relu(%x)
  %c : Tensor = aten::sigmoid(%x)
  return (%1)"""
    monkeypatch.setenv("TSJIT_OPT_LIMIT", "dead_code_elimination=2")
    log.reset()
    try:
        graph = tsjit.parse_ir(text)
        assert eliminate_dead_code(graph)
        assert len(list(graph.nodes())) == 2
    finally:
        monkeypatch.delenv("TSJIT_OPT_LIMIT")
        log.reset()


def test_rewrites_are_logged(monkeypatch, capsys):
    monkeypatch.setenv("TSJIT_LOG_LEVEL", ">dead_code_elimination")
    log.reset()
    try:
        graph = tsjit.parse_ir("""\
graph(%x : Tensor):
  %a : Tensor = aten::neg(%x)
  return (%x)""")
        eliminate_dead_code(graph)
    finally:
        monkeypatch.delenv("TSJIT_LOG_LEVEL")
        log.reset()
    assert "[UPDATE dead_code_elimination] removing dead aten::neg node" in capsys.readouterr().err
