"""remove_grad_mode_contexts (MLIR preparation): no_grad() objects with their Enter and Exit go."""

from __future__ import annotations

from pass_case import check_pass

from tsjit.mlir.prepare import remove_grad_mode_contexts


def test_no_grad_blocks_lose_their_context_object_and_grad_mode_is_on():
    check_pass(remove_grad_mode_contexts, """
graph(%x : Tensor):
  %two : int = prim::Constant[value=2]()
  %g : __torch__.torch.autograd.grad_mode.no_grad = prim::CreateObject()
  %i : NoneType = prim::CallMethod[name="__init__"](%g)
  %e : NoneType = prim::Enter(%g)
  %y : Tensor = aten::mul(%x, %two)
  %o : Tensor = prim::Exit(%g)
  %on : bool = aten::is_grad_enabled()
  %r : (Tensor, bool) = prim::TupleConstruct(%y, %on)
  return (%r)""", present=["aten::mul", "prim::Constant[value=1]", "prim::TupleConstruct"],
               absent=["prim::CreateObject", "prim::Enter", "prim::Exit", "aten::is_grad_enabled"],
               run=False)  # the original cannot run outside a compiled program: no no_grad class is defined
