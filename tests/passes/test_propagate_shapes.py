"""propagate_shapes: dtype, rank and device flow from the specialized inputs through operators (run on meta
tensors), control flow and containers; what cannot be known stays unrefined, and the pass never fails."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.ir.parser import parse_ir
from tsjit.passes.shape_analysis import may_change_tensor_metadata, propagate_shapes
from tsjit.runtime.graph_executor import create_argument_spec, specialize_types

CPU = torch.device("cpu")


def propagated(text: str, *inputs, run: bool = True, idempotent: bool = True):
    """The graph after propagating from the input types the executor's spec gives for `inputs` (the text
    specialize_types prints), checked by check_pass on those inputs; its types by debug name."""
    graph = parse_ir(text)
    specialize_types(graph, create_argument_spec(inputs))
    graph = check_pass(propagate_shapes, str(graph), changed=None, inputs=[inputs], run=run,
                       idempotent=idempotent)
    values = {}
    for node in graph.all_nodes():
        for block in node.blocks:
            values.update((v.debug_name, v) for v in block.inputs)
        values.update((v.debug_name, v) for v in node.outputs)
    return graph, {name: value.type for name, value in values.items()}


def test_the_lstm_cell_is_float_matrices_throughout() -> None:
    _, types = propagated("""
        graph(%x : Tensor, %w : Tensor, %b : Tensor):
          %one : int = prim::Constant[value=1]()
          %four : int = prim::Constant[value=4]()
          %wt : Tensor = aten::t(%w)
          %mm : Tensor = aten::mm(%x, %wt)
          %gates : Tensor = aten::add(%mm, %b, %one)
          %chunks : Tensor[] = aten::chunk(%gates, %four, %one)
          %i : Tensor, %f : Tensor, %c : Tensor, %o : Tensor = prim::ListUnpack(%chunks)
          %s : Tensor = aten::sigmoid(%i)
          %r : (Tensor, Tensor) = prim::TupleConstruct(%s, %o)
          return (%r)""", torch.randn(3, 10), torch.randn(80, 10), torch.randn(80))
    matrix = "Float(*, *, device=cpu)"
    assert {str(types[n]) for n in ("wt", "mm", "gates", "i", "o", "s")} == {matrix}
    assert str(types["chunks"]) == "Tensor[]"  # list types stay invariant `Tensor[]`, so schemas still match
    assert str(types["r"]) == f"({matrix}, {matrix})"


def test_dtypes_follow_type_promotion_and_sizes_follow_complete_inputs() -> None:
    _, types = propagated("""
        graph(%x : Tensor, %s : float):
          %half : float = prim::Constant[value=0.5]()
          %y : Tensor = aten::mul(%x, %half)
          %z : Tensor = aten::mul(%x, %s)
          %cmp : Tensor = aten::gt(%x, %half)
          %r : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%y, %z, %cmp)
          return (%r)""", torch.ones(2, 3, dtype=torch.int32), 2.0)
    assert types["y"] == types["z"] == torch_type(torch.float32, 2)
    assert types["cmp"] == torch_type(torch.bool, 2)
    _, types = propagated("""
        graph(%x : Tensor):
          %two : int = prim::Constant[value=2]()
          %three : int = prim::Constant[value=3]()
          %none : NoneType = prim::Constant()
          %sizes : int[] = prim::ListConstruct(%two, %three)
          %z : Tensor = aten::zeros(%sizes, %none, %none, %none, %none)
          %y : Tensor = aten::add(%x, %z, %two)
          return (%y)""", torch.ones(3))
    assert types["z"].sizes == (2, 3) and types["z"].device is None  # a factory without device=: unknown
    assert types["y"].sizes == (None, None) and types["y"].dtype == torch.float32  # broadcast: the 1-sized run


def torch_type(dtype, rank):
    from tsjit.ir.types import TensorType

    return TensorType(dtype=dtype, device=CPU, sizes=(None,) * rank)


def test_if_outputs_keep_what_both_branches_agree_on_and_raising_branches_do_not_count() -> None:
    _, types = propagated("""
        graph(%x : Tensor, %c : bool):
          %zero : int = prim::Constant[value=0]()
          %msg : str = prim::Constant[value="no"]()
          %y : Tensor = prim::If(%c)
            block0():
              %u : Tensor = aten::unsqueeze(%x, %zero)
              -> (%u)
            block1():
              -> (%x)
          %z : Tensor = prim::If(%c)
            block0():
               = prim::RaiseException(%msg)
              %dead : Tensor = prim::Uninitialized()
              -> (%dead)
            block1():
              %n : Tensor = aten::neg(%x)
              -> (%n)
          %r : (Tensor, Tensor) = prim::TupleConstruct(%y, %z)
          return (%r)""", torch.ones(2, dtype=torch.float64), True)
    assert types["y"].dtype == torch.float64 and types["y"].rank is None  # ranks 2 and 1 disagree
    assert types["z"] == torch_type(torch.float64, 1)


def test_loops_carry_types_to_a_fixed_point() -> None:
    _, types = propagated("""
        graph(%x : Tensor, %n : int):
          %true : bool = prim::Constant[value=1]()
          %zero : int = prim::Constant[value=0]()
          %one : int = prim::Constant[value=1]()
          %same : Tensor, %grows : Tensor = prim::Loop(%n, %true, %x, %x)
            block0(%i : int, %a : Tensor, %b : Tensor):
              %a2 : Tensor = aten::add(%a, %a, %one)
              %b2 : Tensor = aten::unsqueeze(%b, %zero)
              -> (%true, %a2, %b2)
          %r : (Tensor, Tensor) = prim::TupleConstruct(%same, %grows)
          return (%r)""", torch.ones(2, 2), 3)
    assert types["same"] == types["a"] == types["a2"] == torch_type(torch.float32, 2)
    assert types["grows"].rank is None  # and no dtype: unsqueeze of an unknown rank cannot run
    assert types["b"].rank is None  # inside the body too: the first iteration's rank-2 would be wrong later


def test_unknown_or_failing_operators_stay_unrefined_without_failing() -> None:
    _, types = propagated("""
        graph(%x : Tensor, %m : Tensor, %k : int):
          %nz : Tensor = aten::nonzero(%x)
          %sel : Tensor = aten::masked_select(%x, %m)
          %sq : Tensor = aten::squeeze(%x)
          %sum : Tensor = aten::sum(%x, %k)
          %r : (Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%nz, %sel, %sq, %sum)
          return (%r)""", torch.ones(2, 3), torch.ones(2, 3, dtype=torch.bool), 1)
    assert str(types["nz"]) == "Tensor"  # data-dependent: no meta kernel
    assert types["sq"].rank is None and types["sq"].dtype == torch.float32  # which sizes are 1 is unknown
    assert str(types["sum"]) == "Tensor"  # an unknown int argument


def test_rank_rules_cover_unknown_int_arguments() -> None:
    _, types = propagated("""
        graph(%x : Tensor, %i : int):
          %zero : int = prim::Constant[value=0]()
          %minus : int = prim::Constant[value=-1]()
          %n : int = aten::size(%x, %zero)
          %sizes : int[] = prim::ListConstruct(%n, %minus)
          %flat : Tensor = aten::view(%x, %sizes)
          %row : Tensor = aten::select(%x, %zero, %i)
          %r : (Tensor, Tensor) = prim::TupleConstruct(%flat, %row)
          return (%r)""", torch.ones(2, 3, 4), 1)
    assert types["flat"] == torch_type(torch.float32, 2) and types["row"] == torch_type(torch.float32, 2)


def test_stale_refinements_are_erased() -> None:
    _, types = propagated("""
        graph(%x : Tensor):
          %y : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::relu(%x)
          %obj : Float(2, 3) = prim::Uninitialized()
          %r : (Tensor, Tensor) = prim::TupleConstruct(%y, %obj)
          return (%r)""", torch.ones(5, 7, dtype=torch.float64))
    assert types["y"] == torch_type(torch.float64, 2) and str(types["obj"]) == "Tensor"


def test_in_place_metadata_changes_turn_refinement_off() -> None:
    text = """
        graph(%x : Tensor):
          %zero : int = prim::Constant[value=0]()
          %y : Tensor = aten::relu(%x)
          %u : Tensor = aten::unsqueeze_(%x, %zero)
          return (%y)"""
    graph, types = propagated(text, torch.ones(2), run=False)  # not run: unsqueeze_ resizes the shared input
    assert may_change_tensor_metadata(graph)
    assert str(types["y"]) == "Tensor"
    assert not may_change_tensor_metadata(parse_ir(text.replace("unsqueeze_", "unsqueeze")))
    out = parse_ir("""
        graph(%x : Tensor, %o : Tensor):
          %y : Tensor = aten::neg(%x, %o)
          return (%y)""")
    assert may_change_tensor_metadata(out)  # `out=` arguments are resized


def test_in_the_pass_test_shape():
    check_pass(propagate_shapes, """
graph(%x : Float(2, 3), %y : Float(3)):
  %1 : int = prim::Constant[value=1]()
  %true : bool = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %dims : int[] = prim::ListConstruct(%1)
  %a : Tensor = aten::add(%x, %y, %1)
  %s : Tensor = aten::sum(%a, %dims, %true, %none)
  return (%s)""", present=["Float(2, 3) = aten::add", "Float(2, 1) = aten::sum"])


def test_constant_chunk_pieces_get_their_sizes_when_the_input_has_them() -> None:
    graph = parse_ir("""
        graph(%x : Float(2, 10, strides=[10, 1], requires_grad=0, device=cpu), %y : Float(2, *, device=cpu)):
          %a : Tensor, %b : Tensor, %c : Tensor = prim::ConstantChunk[chunks=3, dim=1](%x)
          %d : Tensor, %e : Tensor = prim::ConstantChunk[chunks=2, dim=1](%y)
          return (%a, %b, %c, %d, %e)""")
    assert propagate_shapes(graph)
    assert [v.type.sizes for v in graph.outputs] == [(2, 4), (2, 4), (2, 2), (2, None), (2, None)]
    torch.testing.assert_close(torch.ones(2, 10).chunk(3, 1)[2], torch.ones(2, 2))  # eager's last, smaller piece
