"""expand_unbind (MLIR preparation): aten::unbind of a known size becomes a ListConstruct of selects."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.mlir.prepare import expand_unbind

UNBIND = """
graph(%x : Float(3, 2)):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %parts : Tensor[] = aten::unbind(%x, %zero)
  %last : Tensor = aten::__getitem__(%parts, %one)
  %n : int = aten::len(%parts)
  %r : Tensor = aten::mul(%last, %n)
  return (%r)"""


def test_an_unbind_of_known_size_becomes_selects():
    check_pass(expand_unbind, UNBIND, inputs=[(torch.randn(3, 2),)],
               present=["aten::select(%x, %zero, %", "aten::select(%x, %zero, %", "aten::select(%x, %zero, %",
                        "Tensor[] = prim::ListConstruct("], absent=["aten::unbind"])


def test_an_unbind_of_unknown_size_stays():
    check_pass(expand_unbind, UNBIND.replace("Float(3, 2)", "Tensor"), changed=False)
