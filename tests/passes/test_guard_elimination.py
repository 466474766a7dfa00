"""guard_elimination: implied checks removed, checks moved to the definitions and coalesced.

A check's flag chooses, as in the executor's graphs, between the guarded computation and the same one on the
unchecked values (`guarded(flag, checked, unchecked)`): the pass may make a flag stricter (a check it removed now
fails with the one implying it), never change a result. Every case runs before and after on inputs of the checked
shapes and of others."""

from __future__ import annotations

import torch

from tests.passes.pass_case import check_pass
from tsjit.passes.guard_elimination import guard_elimination

F23 = "Float(2, 3, requires_grad=0, device=cpu)"


def guarded(flag: str, checked: str, unchecked: str, name: str) -> str:
    """IR lines: `%name` is relu of `checked` when `flag` holds, of `unchecked` otherwise."""
    return f"""
  %{name} : Tensor = prim::If(%{flag})
    block0():
      %{name}.f : Tensor = aten::relu(%{checked})
      -> (%{name}.f)
    block1():
      %{name}.s : Tensor = aten::relu(%{unchecked})
      -> (%{name}.s)"""


F13 = "Float(1, 3, requires_grad=0, device=cpu)"
MATCHING_AND_NOT = [(torch.randn(2, 3), torch.randn(1, 3)), (torch.randn(4, 3), torch.randn(1, 3)),
                    (torch.randn(2, 3), torch.randn(2, 3)), (torch.randn(2, 3, dtype=torch.float64),
                                                               torch.randn(1, 3))]


def test_a_check_implied_by_an_elementwise_op_of_checked_inputs_is_removed():
    check_pass(guard_elimination, f"""
graph(%a : Tensor, %c : Tensor):
  %one : int = prim::Constant[value=1]()
  %a.1 : {F23}, %c.1 : {F13}, %ok1 : bool = prim::TypeCheck[types=[{F23}, {F13}]](%a, %c)
  %b : Tensor = aten::mul(%a, %c)
  %b.1 : {F23}, %ok2 : bool = prim::TypeCheck[types=[{F23}]](%b){guarded("ok2", "b.1", "b", "r")}
  %s : Tensor = aten::add(%r, %a.1, %one)
  return (%s)""", present=["prim::TypeCheck", "aten::mul", "prim::If(%ok1)"], absent=["%ok2"],
               inputs=MATCHING_AND_NOT)


def test_an_implied_input_leaves_the_rest_of_its_check_and_the_flags_are_joined():
    graph = check_pass(guard_elimination, f"""
graph(%a : Tensor, %c : Tensor):
  %a.1 : {F23}, %ok1 : bool = prim::TypeCheck[types=[{F23}]](%a)
  %b : Tensor = aten::neg(%a)
  %x : Tensor = aten::relu(%c)
  %b.1 : {F23}, %x.1 : {F13}, %ok2 : bool = prim::TypeCheck[types=[{F23}, {F13}]](%b, %x){guarded(
        "ok2", "b.1", "b", "r")}{guarded("ok2", "x.1", "x", "q")}
  return (%r, %q, %a.1)""", present=["aten::__and__"],
                       inputs=[(torch.randn(2, 3), torch.randn(1, 3)), (torch.randn(3, 3), torch.randn(1, 3)),
                               (torch.randn(2, 3), torch.randn(2, 2))])
    checks = [n for n in graph.nodes() if str(n.kind) == "prim::TypeCheck"]
    assert [len(n.inputs) for n in checks] == [1, 1]  # %b's check is gone, %x's stays (relu of an unchecked %c)


def test_checks_of_inputs_move_to_the_top_and_coalesce():
    graph = check_pass(guard_elimination, f"""
graph(%a : Tensor, %c : Tensor):
  %s : Tensor = aten::sin(%a)
  %a.1 : {F23}, %ok1 : bool = prim::TypeCheck[types=[{F23}]](%a)
  %t : Tensor = aten::cos(%s)
  %c.1 : {F13}, %a.2 : {F23}, %ok2 : bool = prim::TypeCheck[types=[{F13}, {F23}]](%c, %a){guarded(
        "ok1", "a.1", "a", "r")}{guarded("ok2", "c.1", "c", "q")}{guarded("ok2", "a.2", "a", "p")}
  return (%r, %q, %p, %t)""", inputs=MATCHING_AND_NOT)
    first = next(iter(graph.nodes()))
    assert str(first.kind) == "prim::TypeCheck" and len(first.inputs) == 2  # %a once, %c once
    assert sum(str(n.kind) == "prim::TypeCheck" for n in graph.nodes()) == 1


def test_a_check_moves_to_just_after_the_definition_it_checks():
    graph = check_pass(guard_elimination, f"""
graph(%a : Tensor):
  %s : Tensor = aten::sin(%a)
  %t : Tensor = aten::cos(%a)
  %u : Tensor = aten::tan(%a)
  %s.1 : {F23}, %ok : bool = prim::TypeCheck[types=[{F23}]](%s){guarded("ok", "s.1", "s", "r")}
  return (%r, %t, %u)""", inputs=[(torch.randn(2, 3),), (torch.randn(3, 3),)])
    kinds = [str(n.kind) for n in graph.nodes()]
    assert kinds == ["aten::sin", "prim::TypeCheck", "aten::cos", "aten::tan", "prim::If"]


def test_checks_stay_where_tensor_metadata_may_change_in_place():
    check_pass(guard_elimination, f"""
graph(%a : Tensor):
  %zero : int = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %b : Tensor = aten::clone(%a, %none)
  %u : Tensor = aten::unsqueeze_(%b, %zero)
  %b.1 : {F23}, %ok : bool = prim::TypeCheck[types=[{F23}]](%b){guarded("ok", "b.1", "b", "r")}
  return (%r)""", changed=False, inputs=[(torch.randn(3),), (torch.randn(2, 3),)])


def test_nothing_to_do_without_checks():
    check_pass(guard_elimination, """
graph(%a : Float(2, 3)):
  %s : Tensor = aten::sin(%a)
  return (%s)""", changed=False)
