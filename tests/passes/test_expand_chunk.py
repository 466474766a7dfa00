"""expand_chunk (MLIR preparation): aten::chunk of a known size becomes a ListConstruct of slices."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.mlir.prepare import expand_chunk

CHUNK = """
graph(%x : Float(7, 2)):
  %zero : int = prim::Constant[value=0]()
  %three : int = prim::Constant[value=3]()
  %parts : Tensor[] = aten::chunk(%x, %three, %zero)
  %r : Tensor = aten::cat(%parts, %zero)
  %n : int = aten::len(%parts)
  %t : (Tensor, int) = prim::TupleConstruct(%r, %n)
  return (%t)"""


def test_a_chunk_of_known_size_becomes_slices_as_torch_chunk_splits():
    check_pass(expand_chunk, CHUNK, inputs=[(torch.randn(7, 2),)],
               present=["aten::slice(%x, %zero, %", "aten::slice(%x, %zero, %", "aten::slice(%x, %zero, %",
                        "Tensor[] = prim::ListConstruct("], absent=["aten::chunk"])


def test_a_chunk_of_unknown_size_stays():
    check_pass(expand_chunk, CHUNK.replace("Float(7, 2)", "Tensor"), changed=False)
