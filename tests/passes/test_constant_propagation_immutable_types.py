"""constant_propagation_immutable_types: against torch.jit's pass of the same name."""

from __future__ import annotations

import pytest
from pass_case import check_pass

from tsjit.passes.constant_propagation import constant_propagation_immutable_types

CONSTANTS = {
    "fold_numbers_and_take_the_branch": """graph(%x : Tensor):
  %a : int = prim::Constant[value=2]()
  %b : int = prim::Constant[value=3]()
  %c : int = aten::mul(%a, %b)
  %p : bool = aten::gt(%c, %a)
  %r : Tensor = prim::If(%p)
    block0():
      %t : Tensor = aten::mul(%x, %c)
      -> (%t)
    block1():
      -> (%x)
  return (%r)""",
    "false_branch": """graph(%x : Tensor):
  %f : bool = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %r : Tensor = prim::If(%f)
    block0():
      %y : Tensor = aten::neg(%x)
      -> (%y)
    block1():
      %z : Tensor = aten::add(%x, %x, %1)
      -> (%z)
  return (%r)""",
    "loop_that_never_runs": """graph(%x : Tensor):
  %t : bool = prim::Constant[value=1]()
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = prim::Loop(%0, %t, %x)
    block0(%i : int, %a.1 : Tensor):
      %a.2 : Tensor = aten::add(%a.1, %a.1, %1)
      -> (%t, %a.2)
  return (%a)""",
    "if_outputs_equal_in_both_branches": """graph(%x : Tensor, %c : bool):
  %r : Tensor, %k : int = prim::If(%c)
    block0():
      %2 : int = prim::Constant[value=2]()
      %y : Tensor = aten::neg(%x)
      -> (%y, %2)
    block1():
      %3 : int = prim::Constant[value=2]()
      -> (%x, %3)
  %s : Tensor = aten::mul(%r, %k)
  return (%s)""",
    "loop_carried_value_never_changed": """graph(%x : Tensor, %n : int):
  %t : bool = prim::Constant[value=1]()
  %a : Tensor, %b : int = prim::Loop(%n, %t, %x, %n)
    block0(%i : int, %a.1 : Tensor, %b.1 : int):
      %a.2 : Tensor = aten::mul(%a.1, %b.1)
      -> (%t, %a.2, %b.1)
  %r : Tensor = aten::mul(%a, %b)
  return (%r)""",
    "mutable_values_stay": """graph(%x : Tensor):
  %2 : int = prim::Constant[value=2]()
  %s : str = prim::Constant[value="a"]()
  %l : int[] = prim::ListConstruct(%2, %2)
  %n : int = aten::len(%l)
  %t : Tensor = aten::mul(%x, %n)
  %u : str = aten::add(%s, %s)
  %r : (Tensor, str) = prim::TupleConstruct(%t, %u)
  return (%r)""",
    "nondeterministic_ops_stay": """graph(%x : Tensor):
  %p : float = prim::Constant[value=0.5]()
  %t : bool = prim::Constant[value=1]()
  %d : Tensor = aten::dropout(%x, %p, %t)
  return (%d)""",
}


@pytest.mark.parametrize("name", CONSTANTS)
def test_constant_propagation_agrees_with_torch(name):
    check_pass(constant_propagation_immutable_types, CONSTANTS[name], changed=None,
               oracle="_jit_pass_constant_propagation_immutable_types")


def test_tensor_constants_are_not_folded():
    check_pass(constant_propagation_immutable_types, """
graph(%x : Tensor):
  %t : Tensor = prim::Constant[value={2}]()
  %y : Tensor = aten::mul(%t, %t)
  %z : Tensor = aten::add(%x, %y, %t)
  return (%z)""", changed=False, present=["aten::mul", "aten::add"])
