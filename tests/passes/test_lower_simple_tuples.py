"""lower_simple_tuples: tuple elements read from the prim::TupleConstruct that built them."""

from __future__ import annotations

from pass_case import check_pass, normalized

from tsjit.passes.lower_tuples import lower_simple_tuples


def test_elements_are_forwarded():
    graph = check_pass(lower_simple_tuples, """
graph(%a : Tensor, %b : int):
  %1 : int = prim::Constant[value=1]()
  %t : (Tensor, int) = prim::TupleConstruct(%a, %b)
  %x : Tensor, %y : int = prim::TupleUnpack(%t)
  %z : int = prim::TupleIndex(%t, %1)
  %s : (int) = prim::TupleSlice[beg=1, end=2](%t)
  %r : (int, Tensor, int, (int)) = prim::TupleConstruct(%y, %x, %z, %s)
  return (%r)""")
    assert normalized(str(graph)) == normalized("""\
graph(%a : Tensor,
      %b : int):
  %2 : (int) = prim::TupleConstruct(%b)
  %r : (int, Tensor, int, (int)) = prim::TupleConstruct(%b, %a, %b, %2)
  return (%r)""")


def test_tuples_whose_construction_is_not_seen_stay():
    check_pass(lower_simple_tuples, """
graph(%t : (Tensor, int)):
  %x : Tensor, %y : int = prim::TupleUnpack(%t)
  return (%x)""", changed=False, present=["prim::TupleUnpack"])
