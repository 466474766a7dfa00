"""check_strict_fusion: a `with strict_fusion():` block holding anything but prim::FusionGroup nodes is refused,
naming its unfused operators (TorchScript's CheckStrictFusion); a check, never a rewrite. The scripted cases,
beside torch.jit, are in tests/api/test_torch_jit_api.py."""

from __future__ import annotations

import pytest
from pass_case import check_pass

from tsjit.errors import CompileError
from tsjit.ir.parser import parse_ir
from tsjit.passes.check_strict_fusion import check_strict_fusion

BLOCK = """
graph(%x : Float(4, strides=[1], device=cpu)):
  %sf : {cls} = prim::CreateObject()
  %1 : NoneType = prim::Enter(%sf)
{body}
  %2 : Tensor = prim::Exit(%sf)
  return (%y)
"""
FUSED = """\
  %y : Float(4, strides=[1], device=cpu) = prim::FusionGroup_0(%x)
with prim::FusionGroup_0 = graph(%x : Float(4, strides=[1], device=cpu)):
  %y : Float(4, strides=[1], device=cpu) = aten::neg(%x)
  return (%y)"""
STRICT_FUSION = "__torch__.torch.jit.strict_fusion"


def block(body: str, cls: str = STRICT_FUSION) -> str:
    text = BLOCK.format(cls=cls, body=body)
    if "with prim::FusionGroup_0" in body:  # the subgraph goes after the graph
        main, subgraph = body.split("\nwith ", 1)
        text = BLOCK.format(cls=cls, body=main) + "with " + subgraph
    return text


def test_a_fused_block_passes_unchanged():
    check_pass(check_strict_fusion, block(FUSED), changed=False, run=False, present=["prim::FusionGroup_0"])


def test_an_unfused_operator_is_named():
    graph = parse_ir(block("  %y : Float(4, strides=[1], device=cpu) = aten::neg(%x)"))
    with pytest.raises(CompileError, match=r"Found unfused operators: \n\taten::neg\(Tensor self\) -> Tensor"):
        check_strict_fusion(graph)


def test_a_mangled_copy_of_the_class_is_recognized():
    graph = parse_ir(block("  %y : Float(4, strides=[1], device=cpu) = aten::neg(%x)",
                           "__torch__.torch.jit.___torch_mangle_3.strict_fusion"))
    with pytest.raises(CompileError, match="Found unfused operators"):
        check_strict_fusion(graph)


def test_other_with_blocks_are_not_checked():
    check_pass(check_strict_fusion, block("  %y : Float(4, strides=[1], device=cpu) = aten::neg(%x)",
                                          "__torch__.torch.autograd.grad_mode.no_grad"),
               changed=False, run=False, present=["aten::neg"])
