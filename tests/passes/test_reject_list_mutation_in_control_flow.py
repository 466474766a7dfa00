"""reject_list_mutation_in_control_flow (MLIR preparation): a check, never a rewrite."""

from __future__ import annotations

import pytest
from pass_case import check_pass

from tsjit.errors import MLIRError
from tsjit.ir.parser import parse_ir
from tsjit.mlir.prepare import reject_list_mutation_in_control_flow

APPEND_IN_LOOP = """
graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %out : Tensor[] = prim::ListConstruct()
   = prim::Loop(%n, %true)
    block0(%i : int):
      %l : Tensor[] = aten::append(%out, %x)
      -> (%true)
  %k : int = aten::len(%out)
  return (%k)
"""


def test_a_list_appended_to_in_a_loop_is_refused():
    with pytest.raises(MLIRError, match="aten::append writes a list inside a loop or branch"):
        reject_list_mutation_in_control_flow(parse_ir(APPEND_IN_LOOP))


def test_a_list_written_where_it_was_made_passes_unchanged():
    check_pass(reject_list_mutation_in_control_flow, """
graph(%x : Tensor):
  %out : Tensor[] = prim::ListConstruct()
  %l : Tensor[] = aten::append(%out, %x)
  %k : int = aten::len(%out)
  return (%k)""", changed=False, present=["aten::append"])
