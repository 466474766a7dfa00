"""insert_type_guards: a fusion group behind a prim::TypeCheck of its tensor inputs, with a fallback graph.

The graphs run before and after on inputs of the profiled shapes and of others (a broadcast the group was not
fused for, another dtype): the fallback must give the group's results."""

from __future__ import annotations

import torch

from tests.passes.pass_case import check_pass
from tsjit.passes.insert_type_guards import insert_type_guards

F23 = "Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)"
F13 = "Float(1, 3, strides=[3, 1], requires_grad=0, device=cpu)"
GROUP = f"""
graph(%x : Float(*, *, device=cpu), %y : Float(*, *, device=cpu)):
  %r : {F23} = prim::FusionGroup_0(%x, %y)
  return (%r)
with prim::FusionGroup_0 = graph(%a : {F23}, %b : {F13}):
  %one : int = prim::Constant[value=1]()
  %s : {F23} = aten::add(%a, %b, %one)
  %t : {F23} = aten::sigmoid(%s)
  return (%t)
"""
INPUTS = [(torch.randn(2, 3), torch.randn(1, 3)), (torch.randn(2, 3), torch.randn(2, 3)),
          (torch.randn(5, 3), torch.randn(1, 3)), (torch.randn(2, 3, dtype=torch.float64), torch.randn(1, 3))]


def test_a_group_gets_a_static_type_check_and_a_fallback():
    check_pass(insert_type_guards, GROUP, inputs=INPUTS, remaining_depth=3, present=[
        "prim::TypeCheck[types=[Float(2, 3, requires_grad=0, device=cpu), Float(1, 3, requires_grad=0, device=cpu)]]",
        "prim::If(", "block0():", "prim::FusionGroup_0(", "block1():",
        "prim::FallbackGraph_1[remaining_depth=3](%x, %y)",
        "with prim::FusionGroup_0", "with prim::FallbackGraph_1 = graph(%a : Tensor,"])


def test_a_dynamic_check_leaves_the_sizes_out():
    check_pass(insert_type_guards, GROUP, inputs=INPUTS, dynamic=True,
               present=["prim::TypeCheck[types=[Float(*, *, requires_grad=0, device=cpu), Float(*, *, requires_grad=0"])


def test_nothing_to_guard_without_fusion_groups():
    check_pass(insert_type_guards, """
graph(%x : Float(2, 3)):
  %r : Tensor = aten::relu(%x)
  return (%r)""", changed=False)
