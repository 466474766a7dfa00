"""return_written_inputs: tensor inputs written in place are cloned first thing and returned as extra outputs."""

from __future__ import annotations

from pass_case import check_pass

from tsjit.passes.remove_mutation import remove_mutation, return_written_inputs, written_inputs


def test_written_inputs_are_cloned_and_returned():
    graph = check_pass(return_written_inputs, """
graph(%x : Tensor, %i : Tensor):
  %zero : int = prim::Constant[value=0]()
  %row : Tensor = aten::select(%x, %zero, %zero)
  %w : Tensor = aten::zero_(%row)
  %r : Tensor = aten::add(%i, %x, %zero)
  return (%r)""", present=["aten::clone(%x", "aten::select(%x.w", "aten::add(%i, %x.w", "return (%r, %x.w)"],
                       run=False)
    assert [v.debug_name for v in written_inputs(graph)] == []
    check_pass(remove_mutation, str(graph), present=["aten::select_scatter"], absent=["aten::zero_"])


def test_inputs_only_read_are_left_alone():
    check_pass(return_written_inputs, """
graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %row : Tensor = aten::select(%x, %zero, %zero)
  %r : Tensor = aten::relu(%row)
  return (%r)""", changed=False)
