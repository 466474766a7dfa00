"""order_outputs_by_first_use: If and Loop outputs sorted by their first use (TorchScript's CanonicalizeOutputs)."""

from __future__ import annotations

from pass_case import check_pass

from tsjit.passes.output_order import order_outputs_by_first_use


def test_if_outputs_follow_their_first_use():
    check_pass(order_outputs_by_first_use, """
graph(%c : bool, %x : Tensor):
  %b : Tensor, %a : Tensor = prim::If(%c)
    block0():
      %n : Tensor = aten::neg(%x)
      -> (%x, %n)
    block1():
      %r : Tensor = aten::relu(%x)
      -> (%r, %x)
  %u : Tensor = aten::mul(%a, %b)
  return (%u)""", present=["%a : Tensor, %b : Tensor = prim::If(%c)", "-> (%n, %x)", "-> (%x, %r)"])


def test_loop_carried_values_follow_their_first_use():
    check_pass(order_outputs_by_first_use, """
graph(%x : Tensor, %n : int):
  %t : bool = prim::Constant[value=1]()
  %b : Tensor, %a : Tensor = prim::Loop(%n, %t, %x, %x)
    block0(%i : int, %b.1 : Tensor, %a.1 : Tensor):
      %b.2 : Tensor = aten::neg(%b.1)
      %a.2 : Tensor = aten::sigmoid(%a.1)
      -> (%t, %b.2, %a.2)
  %s : Tensor = aten::sub(%a, %b)
  return (%s)""", present=["%a : Tensor, %b : Tensor = prim::Loop(%n, %t, %x, %x)",
                         "block0(%i : int, %a.1 : Tensor, %b.1 : Tensor)", "-> (%t, %a.2, %b.2)"])


def test_outputs_in_order_stay():
    check_pass(order_outputs_by_first_use, """
graph(%c : bool, %x : Tensor):
  %a : Tensor = prim::If(%c)
    block0():
      -> (%x)
    block1():
      %r : Tensor = aten::relu(%x)
      -> (%r)
  return (%a)""", changed=False)
