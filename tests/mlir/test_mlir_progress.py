"""Progress on a terminal while lowering and compiling: the lowering's stages, and IREE's compilation phase by
phase (the artifact the same, byte for byte, as one go's). Off a terminal nothing is drawn (tests/test_progress.py)."""

from __future__ import annotations

import io
import sys

import torch

import tsjit.mlir
from tsjit.ir.parser import parse_ir
from tsjit.mlir import iree

GRAPH = """graph(%x : Tensor):
  %c : float = prim::Constant[value=0.4375]()
  %y : Tensor = aten::mul(%x, %c)
  %z : Tensor = aten::tanh(%y)
  return (%z)
"""


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_lowering_stages_and_iree_phases_on_a_terminal(monkeypatch, tmp_path):
    monkeypatch.setenv("TSJIT_CACHE_DIR", str(tmp_path))  # nothing cached: IREE compiles
    monkeypatch.delenv("TSJIT_PROGRESS", raising=False)
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    lowered = tsjit.mlir.compile(parse_ir(GRAPH), [torch.randn(5)], output_type="tosa")
    run = iree.compile(lowered)
    shown = terminal.getvalue()
    for stage in ("lowering to tosa", "preparing the graph", "importing into the torch dialect",
                  "torch-mlir: the torch backend contract", "torch-mlir: tosa"):
        assert stage in shown, stage
    for phase in ("IREE: compiling the tosa module for llvm-cpu", *iree._PHASES):
        assert phase in shown, phase
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert run.vmfb == iree._run_iree_compile(lowered.generic_text(), "tosa", [])
    x = torch.randn(5)
    torch.testing.assert_close(run(x), torch.tanh(x * 0.4375))
