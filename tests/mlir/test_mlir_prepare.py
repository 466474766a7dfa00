"""The rewrites tsjit applies before import (tsjit/mlir/prepare.py, remove_mutation.py, loops.py, unroll.py).

Each pass is run on graph text: it reports a change, changes nothing on a second run, leaves a graph that lints,
and (run by tsjit's interpreter) computes what the original computed.
"""

from __future__ import annotations

import pytest
import torch
from mlir_corpus import assert_close

from tsjit.ir.parser import parse_ir
from tsjit.ir.symbols import aten, prim
from tsjit.mlir import prepare, shapes
from tsjit.mlir.loops import loops_to_for_or_while
from tsjit.passes.dead_code_elimination import eliminate_dead_code
from tsjit.passes.remove_mutation import remove_mutation
from tsjit.passes.static_control_flow import eliminate_static_control_flow
from tsjit.runtime.run import run_graph


def graph_of(text: str):
    return parse_ir(text.strip())


def kinds(graph) -> list:
    return [node.kind for node in graph.all_nodes()]


def check_rewrite(text: str, rewrite, inputs: list[tuple]):
    """Run `rewrite` on the graph of `text`: it changes the graph once, keeps it valid and its results."""
    original, graph = graph_of(text), graph_of(text)
    assert rewrite(graph) is True
    assert rewrite(graph) is False
    graph.lint()
    for args in inputs:
        assert_close(run_graph(graph, *args, optimize=False), run_graph(original, *args, optimize=False))
    return graph


ASSERT = """
graph(%x : Tensor, %n : int):
  %msg : str = prim::Constant[value="AssertionError: n must be positive"]()
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %ok : bool = aten::gt(%n, %zero)
   = prim::If(%ok)
    block0():
      -> ()
    block1():
       = prim::RaiseException(%msg, %none)
      -> ()
  %y : Tensor = aten::mul(%x, %n)
  return (%y)
"""


def test_raising_branch_becomes_an_assert():
    graph = check_rewrite(ASSERT, lambda g: prepare.replace_raising_branches(g, checks=True),
                          [(torch.randn(2), 3)])
    assert prim.If not in kinds(graph) and prim.RaiseException not in kinds(graph)
    assert aten._assert_scalar in kinds(graph)
    with pytest.raises(Exception, match="n must be positive"):
        run_graph(graph, torch.randn(2), -1, optimize=False)


def test_raising_branch_is_dropped_without_checks():
    graph = check_rewrite(ASSERT, lambda g: prepare.replace_raising_branches(g, checks=False),
                          [(torch.randn(2), 3)])
    assert aten._assert_scalar not in kinds(graph) and prim.If not in kinds(graph)


def test_not_becomes_not_equal_true():
    text = """
graph(%a : int, %b : int):
  %c : bool = aten::lt(%a, %b)
  %d : bool = aten::__not__(%c)
  return (%d)"""
    graph = check_rewrite(text, prepare.lower_not, [(1, 2), (2, 1)])
    assert aten.ne in kinds(graph)


RANGE = """
graph(%lo : int, %hi : int):
  %step : int = prim::Constant[value=STEP]()
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %n : int = aten::__range_length(%lo, %hi, %step)
  %total : int = prim::Loop(%n, %true, %zero)
    block0(%i : int, %acc : int):
      %v : int = aten::__derive_index(%i, %lo, %step)
      %next : int = aten::add(%acc, %v)
      -> (%true, %next)
  return (%total)
"""


@pytest.mark.parametrize("step", [1, 3, -2])
def test_range_ops_become_int_arithmetic(step):
    bounds = [(lo, hi) for lo in (-3, 0, 4) for hi in (-5, 0, 2, 9)]
    graph = check_rewrite(RANGE.replace("STEP", str(step)), prepare.decompose_range_ops, bounds)
    assert aten.__range_length not in kinds(graph) and aten.__derive_index not in kinds(graph)


def test_unused_containers_constants_and_pure_ops_are_removed():
    text = """
graph(%x : Tensor, %n : int):
  %k : str = prim::Constant[value="a"]()
  %d : Dict(str, Tensor) = prim::DictConstruct(%k, %x)
  %zero : int = prim::Constant[value=0]()
  %c : bool = aten::gt(%n, %zero)
  %y : Tensor = aten::neg(%x)
  return (%y)"""
    graph = check_rewrite(text, eliminate_dead_code, [(torch.randn(2), 1)])
    assert kinds(graph) == [aten.neg]


SELECT = """
graph(%c : bool, %a : Tensor, %b : Tensor):
  %y : Tensor = prim::If(%c)
    block0():
      -> (%a)
    block1():
      -> (%b)
  return (%y)
"""


def refined(text: str, *args):
    graph = graph_of(text)
    shapes.refine_types(graph, [shapes.Abstract(a, True) if not isinstance(a, torch.Tensor)
                                else shapes.Abstract(a.to("meta"), True) for a in args])
    return graph


def test_if_selecting_tensors_of_one_static_type_becomes_where():
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    graph = refined(SELECT, True, a, b)
    assert prepare.select_ifs_to_where(graph) and not prepare.select_ifs_to_where(graph)
    assert prim.If not in kinds(graph) and aten.where in kinds(graph)
    for c in (True, False):
        assert_close(run_graph(graph, c, a, b, optimize=False), a if c else b)


def test_if_selecting_tensors_of_different_shapes_stays():
    graph = refined(SELECT, True, torch.randn(2, 3), torch.randn(3))
    assert not prepare.select_ifs_to_where(graph)


def test_uninitialized_becomes_a_zero_of_its_refined_type():
    text = """
graph(%c : bool, %x : Tensor):
  %u : Tensor = prim::Uninitialized()
  %y : Tensor = prim::If(%c)
    block0():
      -> (%x)
    block1():
      -> (%u)
  return (%y)"""
    graph = refined(text, True, torch.randn(2, 3))
    assert prepare.replace_uninitialized(graph) and not prepare.replace_uninitialized(graph)
    assert prim.Uninitialized not in kinds(graph) and aten.zeros in kinds(graph)
    assert str(graph.outputs[0].type) == "Float(2, 3)"


def test_tuple_inputs_become_one_input_per_element():
    text = """
graph(%x : Tensor, %h : (Tensor, (int, Tensor))):
  %a : Tensor, %rest : (int, Tensor) = prim::TupleUnpack(%h)
  %n : int, %b : Tensor = prim::TupleUnpack(%rest)
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::add(%x, %a, %n)
  %z : Tensor = aten::mul(%y, %b)
  return (%z)"""
    original, graph = graph_of(text), graph_of(text)
    assert prepare.flatten_tuple_inputs(graph) and not prepare.flatten_tuple_inputs(graph)
    assert [str(v.type) for v in graph.inputs] == ["Tensor", "Tensor", "int", "Tensor"]
    x, a, b = torch.randn(3), torch.randn(3), torch.randn(3)
    assert_close(run_graph(graph, x, a, 2, b, optimize=False), run_graph(original, x, (a, (2, b)), optimize=False))


def test_nested_tuple_result_is_returned_flat():
    text = """
graph(%x : Tensor, %pair : (Tensor, Tensor)):
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::add(%x, %x, %one)
  %inner : (Tensor, (Tensor, Tensor)) = prim::TupleConstruct(%y, %pair)
  %t : (Tensor, (Tensor, (Tensor, Tensor))) = prim::TupleConstruct(%x, %inner)
  return (%t)"""
    graph = graph_of(text)
    assert prepare.flatten_tuple_result(graph) and not prepare.flatten_tuple_result(graph)
    assert str(graph.outputs[0].type) == "(Tensor, Tensor, Tensor, Tensor)"
    x, a, b = torch.randn(3), torch.randn(3), torch.randn(3)
    assert_close(run_graph(graph, x, (a, b), optimize=False), (x, x + x, a, b))


def test_prints_and_profiling_are_removed():
    text = """
graph(%x : Tensor):
  %p : Tensor = prim::profile[profiled_type=Float(2)](%x)
  %y : Tensor = aten::neg(%p)
   = prim::Print(%y)
  return (%y)"""
    graph = graph_of(text)
    assert prepare.remove_profiling(graph) and prepare.remove_prints(graph)
    assert kinds(graph) == [aten.neg]


# ---- remove_mutation -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    """
graph(%x : Tensor, %w : Tensor):
  %y : Tensor = aten::matmul(%x, %w)
  %z : Tensor = aten::relu_(%y)
  %one : int = prim::Constant[value=1]()
  %r : Tensor = aten::add(%y, %z, %one)
  return (%r)""",
    """
graph(%x : Tensor, %w : Tensor):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %true : bool = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %acc.1 : Tensor = aten::zeros_like(%x, %none, %none, %none, %none, %none)
  %acc : Tensor = prim::Loop(%three, %true, %acc.1)
    block0(%i : int, %acc.2 : Tensor):
      %acc.3 : Tensor = aten::sub_(%acc.2, %i, %one)
      %acc.4 : Tensor = aten::mul_(%acc.3, %w)
      -> (%true, %acc.4)
  return (%acc)"""], ids=["fresh tensor", "loop-carried tensor"])
def test_writes_nobody_else_sees_become_out_of_place(text):
    graph = check_rewrite(text, remove_mutation, [(torch.randn(2, 2), torch.randn(2, 2))])
    assert not any(node.kind.name.endswith("_") for node in graph.all_nodes())


@pytest.mark.parametrize("text", [
    """
graph(%x : Tensor):
  %y : Tensor = aten::relu_(%x)
  return (%y)""",
    """
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %y : Tensor = aten::clone(%x, %none)
  %row : Tensor = aten::select(%y, %zero, %zero)
  %r : Tensor = aten::relu_(%y)
  return (%row)""",
    """
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %true : bool = prim::Constant[value=1]()
  %y : Tensor = aten::clone(%x, %none)
  %acc : Tensor = prim::Loop(%one, %true, %y)
    block0(%i : int, %acc.2 : Tensor):
      %acc.3 : Tensor = aten::neg_(%acc.2)
      -> (%true, %acc.3)
  %r : Tensor = aten::add(%acc, %y, %one)
  return (%r)"""], ids=["graph input", "viewed before the write", "loop input read after the loop"])
def test_writes_others_can_see_stay(text):
    assert remove_mutation(graph_of(text)) is False


def test_writes_through_a_view_of_a_fresh_tensor_become_scatters():
    text = """
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %false : bool = prim::Constant[value=0]()
  %y : Tensor = aten::clone(%x, %none)
  %row : Tensor = aten::select(%y, %zero, %zero)
  %three : Tensor = aten::tensor(%one, %none, %none, %false)
  %w : Tensor = aten::copy_(%row, %three, %false)
  %tail : Tensor = aten::slice(%y, %zero, %one, %none, %one)
  %t : Tensor = aten::add_(%tail, %one, %one)
  %r : Tensor = aten::relu_(%y)
  return (%y)"""
    graph = check_rewrite(text, remove_mutation, [(torch.randn(3, 2),)])
    assert aten.select_scatter in kinds(graph) and aten.slice_scatter in kinds(graph)
    assert not any(node.kind.name.endswith("_") for node in graph.all_nodes())


def test_number_tensors_become_scalar_tensors():
    text = """
graph(%n : int, %f : float):
  %none : NoneType = prim::Constant()
  %false : bool = prim::Constant[value=0]()
  %a : Tensor = aten::tensor(%n, %none, %none, %false)
  %b : Tensor = aten::tensor(%f, %none, %none, %false)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%a, %b)
  return (%t)"""
    graph = check_rewrite(text, prepare.scalars_to_scalar_tensors, [(3, 1.5)])
    assert aten.tensor not in kinds(graph)
    a, b = run_graph(graph, 3, 1.5, optimize=False)
    assert (a.dtype, b.dtype) == (torch.int64, torch.float32)


def test_no_grad_blocks_lose_their_context_object():
    text = """
graph(%x : Tensor):
  %two : int = prim::Constant[value=2]()
  %g : __torch__.torch.autograd.grad_mode.no_grad = prim::CreateObject()
  %i : NoneType = prim::CallMethod[name="__init__"](%g)
  %e : NoneType = prim::Enter(%g)
  %y : Tensor = aten::mul(%x, %two)
  %o : Tensor = prim::Exit(%g)
  return (%y)"""
    graph = graph_of(text)
    assert prepare.remove_grad_mode_contexts(graph) and not prepare.remove_grad_mode_contexts(graph)
    assert kinds(graph) == [prim.Constant, aten.mul]


# ---- loops -----------------------------------------------------------------------------------------------------
BREAK = """
graph(%x : Tensor, %n : int, %limit : int):
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %r : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %acc : Tensor):
      %next : Tensor = aten::add(%acc, %i, %one)
      %go : bool = aten::lt(%i, %limit)
      -> (%go, %next)
  return (%r)
"""

EARLY_RETURN = """
graph(%x : Tensor, %stop : int):
  %true : bool = prim::Constant[value=1]()
  %max : int = prim::Constant[value=9223372036854775807]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %r : Tensor, %k : int = prim::Loop(%max, %true, %x, %zero)
    block0(%i : int, %acc : Tensor, %j : int):
      %next : Tensor = aten::mul(%acc, %x)
      %j.1 : int = aten::add(%j, %one)
      %go : bool = aten::lt(%j.1, %stop)
      -> (%go, %next, %j.1)
  return (%r)
"""


def test_counted_loop_with_a_condition_is_guarded():
    args = [(torch.randn(2), n, limit) for n in (0, 3, 6) for limit in (-1, 0, 2, 10)]
    graph = check_rewrite(BREAK, loops_to_for_or_while, args)
    (loop,) = [n for n in graph.all_nodes() if n.kind is prim.Loop]
    assert loop.input(1).node.kind is prim.Constant and prim.If in kinds(graph)


def test_while_loop_starting_true_runs_its_first_iteration_before_the_loop():
    graph = check_rewrite(EARLY_RETURN, loops_to_for_or_while, [(torch.randn(2), stop) for stop in (-1, 1, 2, 5)])
    (loop,) = [n for n in graph.all_nodes() if n.kind is prim.Loop]
    assert loop.input(1).node.kind is not prim.Constant


NESTED = """
graph(%x : Tensor):
  %true : bool = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %one : int = prim::Constant[value=1]()
  %r : Tensor = prim::Loop(%three, %true, %x)
    block0(%i : int, %acc : Tensor):
      %inner : Tensor = prim::Loop(%i, %true, %acc)
        block0(%j : int, %acc.2 : Tensor):
          %next : Tensor = aten::add(%acc.2, %j, %one)
          -> (%true, %next)
      %big : bool = aten::gt(%i, %one)
      %out : Tensor = prim::If(%big)
        block0():
          %neg : Tensor = aten::neg(%inner)
          -> (%neg)
        block1():
          -> (%inner)
      -> (%true, %out)
  return (%r)
"""


def test_static_loops_and_ifs_are_unrolled():
    graph = check_rewrite(NESTED, eliminate_static_control_flow, [(torch.randn(3),)])
    assert prim.Loop not in kinds(graph) and prim.If not in kinds(graph)


def test_without_loop_unrolling_only_constant_ifs_go():
    graph = graph_of(NESTED)
    assert eliminate_static_control_flow(graph, unroll_loops=False) is False
    assert prim.Loop in kinds(graph)


# ---- values a compiled program knows ---------------------------------------------------------------------------
DEVICE_CHECK = """
graph(%x : Tensor):
  %cpu : str = prim::Constant[value="cpu"]()
  %cuda : str = prim::Constant[value="cuda"]()
  %d : Device = prim::device(%x)
  %t : str = prim::type(%d)
  %kinds : str[] = prim::ListConstruct(%cpu, %cuda)
  %ok : bool = aten::__contains__(%kinds, %t)
  %nested : bool = prim::is_nested(%x)
  %on_gpu : bool = prim::is_cuda(%x)
  %grad : bool = aten::is_grad_enabled()
  %r : (bool, bool, bool, bool) = prim::TupleConstruct(%ok, %nested, %on_gpu, %grad)
  return (%r)
"""


def test_device_checks_and_grad_mode_fold_to_constants():
    graph = graph_of(DEVICE_CHECK)
    assert prepare.fold_tensor_properties(graph, torch.device("cpu"))
    assert not prepare.fold_tensor_properties(graph, torch.device("cpu"))
    assert prepare.remove_grad_mode_contexts(graph)
    eliminate_static_control_flow(graph)
    eliminate_dead_code(graph, keep_assertions=True)
    graph.lint()
    assert kinds(graph) == [prim.Constant] * 4 + [prim.TupleConstruct]
    assert run_graph(graph, torch.randn(2), optimize=False) == (True, False, False, False)


def test_list_literals_fold_only_when_nothing_writes_them():
    text = """
graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %read : int[] = prim::ListConstruct(%one, %two)
  %written : int[] = prim::ListConstruct(%one)
  %n : int = aten::len(%read)
  %w : int[] = aten::append(%written, %two)
  %m : int = aten::len(%written)
  %r : (int, int) = prim::TupleConstruct(%n, %m)
  return (%r)"""
    graph = graph_of(text)
    assert eliminate_static_control_flow(graph)
    assert run_graph(graph, torch.randn(1), optimize=False) == (2, 2)
    assert kinds(graph).count(aten.len) == 1


def test_identity_tests_of_a_value_with_itself_and_tuple_elements_fold():
    text = """
graph(%x : Tensor, %y : Tensor):
  %same : bool = aten::__isnot__(%x, %x)
  %other : bool = aten::__is__(%x, %y)
  %zero : int = prim::Constant[value=0]()
  %t : (bool, int) = prim::TupleConstruct(%same, %zero)
  %a : bool, %b : int = prim::TupleUnpack(%t)
  %c : int = aten::add(%b, %zero)
  %r : (bool, bool, int) = prim::TupleConstruct(%a, %other, %c)
  return (%r)"""
    graph = graph_of(text)
    assert eliminate_static_control_flow(graph)
    x = torch.randn(1)
    assert run_graph(graph, x, x, optimize=False) == (False, True, 0)
    assert aten.__isnot__ not in kinds(graph) and aten.__is__ in kinds(graph) and aten.add not in kinds(graph)


SIZE_CHECK = """
graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %three : int = prim::Constant[value=3]()
  %expected : int[] = prim::ListConstruct(%three, %three)
  %sizes : int[] = aten::size(%x)
  %wrong : bool = aten::ne(%sizes, %expected)
  %n : int = aten::size(%x, %zero)
  %r : Tensor = prim::If(%wrong)
    block0():
      %y : Tensor = aten::mul(%x, %n)
      -> (%y)
    block1():
      -> (%x)
  return (%r)
"""


def test_sizes_and_dtypes_the_refined_types_state_become_constants():
    from tsjit.passes.fold_static_types import fold_static_types

    x = torch.randn(2, 3)
    graph = refined(SIZE_CHECK, x)
    assert fold_static_types(graph) and not fold_static_types(graph)
    assert aten.size not in kinds(graph)
    eliminate_static_control_flow(graph, unroll_loops=False)
    assert prim.If not in kinds(graph)
    assert_close(run_graph(graph, x, optimize=False), x * 2)


def test_dtype_of_a_refined_tensor_becomes_a_constant():
    from tsjit.passes.fold_static_types import fold_static_types

    text = """
graph(%x : Tensor):
  %d : int = prim::dtype(%x)
  return (%d)"""
    x = torch.randn(2, dtype=torch.float64)
    graph = refined(text, x)
    assert fold_static_types(graph) and kinds(graph) == [prim.Constant]
    assert run_graph(graph, x, optimize=False) == run_graph(graph_of(text), x, optimize=False)


def test_sizes_are_not_folded_where_an_op_changes_sizes_in_place():
    text = """
graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %u : Tensor = aten::unsqueeze_(%x, %zero)
  %n : int = aten::size(%x, %zero)
  %y : Tensor = aten::mul(%x, %n)
  return (%y)"""
    options = prepare.Options(value_semantics=False)
    program = prepare.prepare_function(graph_of(text), [torch.randn(2, 3)], options)
    assert aten.size in kinds(program.graph)
