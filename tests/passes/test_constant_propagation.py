"""constant_propagation: constant tensors fold too, unless something writes them; against torch.jit's pass."""

from __future__ import annotations

import pytest
import torch
from pass_case import check_pass

from tsjit.passes.constant_propagation import constant_propagation

CASES = {
    "tensor_constants_fold": """graph(%x : Tensor):
  %t : Long(requires_grad=0, device=cpu) = prim::Constant[value={2}]()
  %y : Tensor = aten::mul(%t, %t)
  %one : int = prim::Constant[value=1]()
  %z : Tensor = aten::add(%x, %y, %one)
  return (%z)""",
    "lists_of_constants_fold": """graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %l : int[] = prim::ListConstruct(%1, %2)
  %n : int = aten::len(%l)
  %y : Tensor = aten::mul(%x, %n)
  return (%y)""",
    "written_tensors_stay": """graph(%x : Tensor):
  %t : Long(requires_grad=0, device=cpu) = prim::Constant[value={2}]()
  %one : int = prim::Constant[value=1]()
  %w : Tensor = aten::add_(%t, %one, %one)
  %y : Tensor = aten::mul(%t, %x)
  return (%y)""",
}


@pytest.mark.parametrize("name", CASES)
def test_constant_propagation_agrees_with_torch(name):
    check_pass(constant_propagation, CASES[name], changed=None, oracle="_jit_pass_constant_propagation")


def test_a_folded_tensor_becomes_a_constant():
    check_pass(constant_propagation, CASES["tensor_constants_fold"], present=["prim::Constant[value={4}]", "aten::add"],
               absent=["aten::mul"])


def test_a_frozen_tensor_nobody_writes_folds():
    check_pass(constant_propagation, """
graph(%x : Tensor, %table : Tensor):
  %t : Tensor = aten::neg(%table)
  %none : NoneType = prim::Constant()
  %s : Tensor = aten::sum(%t, %none)
  %1 : int = prim::Constant[value=1]()
  %y : Tensor = aten::add(%x, %s, %1)
  return (%y)""", constants={"table": torch.arange(4.0)}, present=["aten::add"], absent=["aten::neg", "aten::sum"])


def test_a_frozen_tensor_that_is_written_stays():
    check_pass(constant_propagation, """
graph(%x : Tensor, %table : Tensor):
  %t : Tensor = aten::neg(%table)
  %1 : int = prim::Constant[value=1]()
  %c : Tensor = aten::mul(%t, %1)
  %w : Tensor = aten::add_(%c, %x, %1)
  return (%c)""", constants={"table": torch.arange(4.0)}, present=["aten::mul", "aten::add_"], absent=["aten::neg"],
               inputs=[(torch.randn(4),)])
