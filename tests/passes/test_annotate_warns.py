"""annotate_warns: each aten::warn gets a process-unique warn_id."""

from __future__ import annotations

from pass_case import check_pass

from tsjit.passes.annotate_warns import annotate_warns


def test_each_warning_is_numbered_once(recwarn):
    graph = check_pass(annotate_warns, """
graph(%s : str):
  %2 : int = prim::Constant[value=2]()
   = aten::warn(%s, %2)
   = aten::warn(%s, %2)
  return (%s)""", present=["aten::warn[warn_id=", "aten::warn[warn_id="])
    first, second = (node.i("warn_id") for node in graph.nodes() if str(node.kind) == "aten::warn")
    assert first != second
