"""constant_propagation_immutable_types: against torch.jit's pass of the same name."""

from __future__ import annotations

import pytest
import torch
from pass_case import check_pass

import tsjit
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


def test_identity_of_one_value_with_itself_folds_and_takes_the_branch():
    """tsjit's own rule (torch.jit's pass keeps these): once the If's output is forwarded, `x is not k` tests one
    value against itself, False whatever its type; the If on it then takes its else branch."""
    check_pass(constant_propagation_immutable_types, """
graph(%x : Tensor, %c : bool, %o : int[]?):
  %k : Tensor = prim::If(%c)
    block0():
      -> (%x)
    block1():
      -> (%x)
  %b : bool = aten::__isnot__(%x, %k)
  %r : Tensor = prim::If(%b)
    block0():
      %y : Tensor = aten::neg(%x)
      -> (%y)
    block1():
      -> (%x)
  %s : bool = aten::__is__(%o, %o)
  %t : (Tensor, bool) = prim::TupleConstruct(%r, %s)
  return (%t)""", absent=["aten::__is", "aten::neg"], inputs=[(torch.randn(2), True, None),
                                                            (torch.randn(2), False, [1, 2])])


def test_self_attention_query_is_key_checks_fold_in_the_plan():
    """nn.TransformerEncoderLayer gives its attention one tensor as query, key and value, which then tests
    `query is not key or key is not value`: the executor's plan no longer does, and computes what eager does."""
    torch.manual_seed(0)
    module = torch.nn.TransformerEncoderLayer(8, 2, 16).eval()
    scripted = tsjit.script(module)
    x = torch.randn(3, 2, 8)
    for _ in range(2):  # profiled, then optimized
        torch.testing.assert_close(scripted(x), module(x))
    identity_tests = [n for n in tsjit.last_executed_optimized_graph().all_nodes()
                      if str(n.kind) in ("aten::__is__", "aten::__isnot__")]
    assert identity_tests and not [n for n in identity_tests if n.inputs[0] is n.inputs[1]]
