"""constant_pooling: one constant per value, at the top; against torch.jit's pass."""

from __future__ import annotations

import pytest
from pass_case import check_pass

from tsjit.passes.constant_pooling import constant_pooling

POOLING = {
    "constants_in_branches": """graph(%x : Tensor, %c : bool):
  %r : Tensor = prim::If(%c)
    block0():
      %1 : int = prim::Constant[value=1]()
      %t : Tensor = aten::add(%x, %x, %1)
      -> (%t)
    block1():
      %2 : int = prim::Constant[value=1]()
      %u : Tensor = aten::sub(%x, %x, %2)
      -> (%u)
  return (%r)""",
    "int_and_bool_stay_apart": """graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %t : bool = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=1]()
  %s : str = prim::Constant[value="a"]()
  %s2 : str = prim::Constant[value="a"]()
  %r : (int, bool, int, str, str) = prim::TupleConstruct(%1, %t, %2, %s, %s2)
  return (%r)""",
}


@pytest.mark.parametrize("name", POOLING)
def test_constant_pooling_agrees_with_torch(name):
    check_pass(constant_pooling, POOLING[name], changed=None, oracle="_jit_pass_constant_pooling", idempotent=False)


def test_every_run_moves_each_constant_to_the_front():
    """As torch.jit's ConstantPooling, each constant in turn moves before the first node, so a run reverses the
    order of the constants at the top: a pooled graph with two constants changes again on every run."""
    graph = check_pass(constant_pooling, POOLING["int_and_bool_stay_apart"], idempotent=False,
                       present=["str", "bool", "int"])
    assert constant_pooling(graph) and str(graph).index("int = prim::Constant") < str(graph).index("str =")


def test_equal_constants_become_one():
    graph = check_pass(constant_pooling, POOLING["constants_in_branches"],
                       present=["prim::Constant[value=1]", "prim::If"])
    assert str(graph).count("prim::Constant") == 1
