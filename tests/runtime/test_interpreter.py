"""The interpreter: instruction listings, values dying at their last use, control flow, calls and errors."""

from __future__ import annotations

import re
import textwrap
import weakref

import pytest
import torch

from tsjit.errors import RuntimeTsjitError
from tsjit.ir.parser import parse_ir
from tsjit.ops.registry import register_operator
from tsjit.runtime.function import Function
from tsjit.runtime.interpreter import Code, InterpreterError
from tsjit.runtime.run import run_graph
from tsjit.runtime.script_traceback import HEADER

# ---- instruction listings -------------------------------------------------------------------------------------
IF_GRAPH = """
graph(%x : Tensor, %w : Tensor, %flag : bool):
  %y : Tensor = aten::mm(%x, %w)
  %z : Tensor = prim::If(%flag)
    block0():
      %a : Tensor = aten::relu(%y)
      -> (%a)
    block1():
      -> (%y)
  %r : Tensor = aten::mul(%z, %x)
  return (%r)
"""


def test_code_of_if_moves_last_uses_and_drops_after_the_branch() -> None:
    # %y's last use is inside a branch, so it is dropped after the If; %w dies at the mm.
    assert Code(parse_ir(IF_GRAPH)).dump() == (
        "   0  OP aten::mm          r0, move r1 -> r3\n"
        "   1  JUMP_IF_FALSE        move r2 -> 5\n"
        "   2  OP aten::relu        r3 -> r4\n"
        "   3  MOVE                 move r4 -> r5\n"
        "   4  JUMP                 -> 6\n"
        "   5  MOVE                 r3 -> r5\n"
        "   6  DROP                 move r3\n"
        "   7  OP aten::mul         move r5, move r0 -> r6\n"
        "   8  RET                  move r6\n")


LOOP_GRAPH = """
graph(%z.1 : Tensor, %n : int, %k : Tensor):
  %true : bool = prim::Constant[value=1]()
  %z : Tensor = prim::Loop(%n, %true, %z.1)
    block0(%i : int, %5 : Tensor):
      %z.2 : Tensor = aten::mul(%5, %k)
      -> (%true, %z.2)
  return (%z)
"""


def test_code_of_loop_keeps_loop_invariant_values_until_the_loop_ends() -> None:
    # %k is read in every iteration: not moved in the body, dropped after the loop with the loop's state.
    assert Code(parse_ir(LOOP_GRAPH)).dump() == (
        "   0  MOVE                 move r1, r3, move r0, r8 -> r4, r6, r7, r5\n"
        "   1  LOOP_TEST            move r7 -> _, r9 -> 4\n"
        "   2  OP aten::mul         move r9, r2 -> r10\n"
        "   3  LOOP_BACK            r3, move r10 -> r6, r7 -> 1\n"
        "   4  MOVE                 move r7 -> r11\n"
        "   5  DROP                 move r4, move r5, move r6\n"
        "   6  DROP                 move r2\n"
        "   7  RET                  move r11\n")


@pytest.mark.parametrize("n, expected", [(0, 3.0), (1, 6.0), (3, 24.0)])
def test_loop_runs_trip_count_times(n: int, expected: float) -> None:
    result = run_graph(parse_ir(LOOP_GRAPH), torch.tensor([3.0]), n, torch.tensor([2.0]))
    assert result.item() == expected


def test_while_loop_stops_on_its_condition() -> None:
    graph = parse_ir("""
        graph(%n : int):
          %max : int = prim::Constant[value=9223372036854775807]()
          %one : int = prim::Constant[value=1]()
          %zero : int = prim::Constant[value=0]()
          %c : bool = aten::lt(%zero, %n)
          %total : int, %i : int = prim::Loop(%max, %c, %zero, %zero)
            block0(%it : int, %acc : int, %j : int):
              %acc.1 : int = aten::add(%acc, %j)
              %j.1 : int = aten::add(%j, %one)
              %go : bool = aten::lt(%j.1, %n)
              -> (%go, %acc.1, %j.1)
          return (%total, %i)""")
    assert run_graph(graph, 5) == (10, 5)
    assert run_graph(graph, 0) == (0, 0)


# ---- values die right after their last use ---------------------------------------------------------------------
_probes: list[weakref.ref] = []


@register_operator("tsjit_test::probe(Tensor x) -> Tensor")
def probe(x: torch.Tensor) -> torch.Tensor:
    """A fresh tensor whose lifetime the test watches."""
    result = x.clone()
    _probes.append(weakref.ref(result))
    return result


@register_operator("tsjit_test::dead(int i) -> bool")
def dead(i: int) -> bool:
    return _probes[i]() is None


def run_probed(text: str, *args):
    _probes.clear()
    return run_graph(parse_ir(text), *args, optimize=False)  # the probes are impure: no CSE, no DCE


def test_a_value_dies_right_after_its_last_use() -> None:
    result = run_probed("""
        graph(%x : Tensor):
          %0 : int = prim::Constant[value=0]()
          %a : Tensor = tsjit_test::probe(%x)
          %before : bool = tsjit_test::dead(%0)
          %b : Tensor = aten::neg(%a)
          %after : bool = tsjit_test::dead(%0)
          %r : (bool, bool, Tensor) = prim::TupleConstruct(%before, %after, %b)
          return (%r)""", torch.ones(2))
    assert result[:2] == (False, True)


@pytest.mark.parametrize("flag", [True, False])
def test_a_value_read_in_one_branch_dies_after_the_if_on_both_paths(flag: bool) -> None:
    before, after = run_probed("""
        graph(%x : Tensor, %flag : bool):
          %0 : int = prim::Constant[value=0]()
          %a : Tensor = tsjit_test::probe(%x)
          %y : Tensor = prim::If(%flag)
            block0():
              %b : Tensor = aten::neg(%a)
              -> (%b)
            block1():
              -> (%x)
          %after : bool = tsjit_test::dead(%0)
          %r : (Tensor, bool) = prim::TupleConstruct(%y, %after)
          return (%r)""", torch.ones(2), flag)
    assert after is True


def test_a_value_read_in_a_loop_lives_through_the_loop_and_dies_after_it() -> None:
    alive_inside, dead_after = run_probed("""
        graph(%x : Tensor):
          %0 : int = prim::Constant[value=0]()
          %3 : int = prim::Constant[value=3]()
          %true : bool = prim::Constant[value=1]()
          %a : Tensor = tsjit_test::probe(%x)
          %seen : bool = prim::Loop(%3, %true, %true)
            block0(%i : int, %ok : bool):
              %b : Tensor = aten::neg(%a)
              %gone : bool = tsjit_test::dead(%0)
              %still : bool = aten::__not__(%gone)
              %ok.1 : bool = aten::__and__(%ok, %still)
              -> (%true, %ok.1)
          %after : bool = tsjit_test::dead(%0)
          %r : (bool, bool) = prim::TupleConstruct(%seen, %after)
          return (%r)""", torch.ones(2))
    assert (alive_inside, dead_after) == (True, True)


def test_an_unused_output_is_never_stored() -> None:
    (after,) = run_probed("""
        graph(%x : Tensor):
          %0 : int = prim::Constant[value=0]()
          %a : Tensor = tsjit_test::probe(%x)
          %after : bool = tsjit_test::dead(%0)
          %r : (bool) = prim::TupleConstruct(%after)
          return (%r)""", torch.ones(2))
    assert after is True


# ---- calls -----------------------------------------------------------------------------------------------------
def test_call_function_runs_the_callee_in_a_frame_and_subgraph_nodes_return_only_their_outputs() -> None:
    callee = Function("twice", parse_ir("""
        graph(%x : Tensor):
          %two : int = prim::Constant[value=2]()
          %y : Tensor = aten::mul(%x, %two)
          return (%y)"""))
    graph = parse_ir(textwrap.dedent("""\
        graph(%f : Function, %x : Tensor):
          %y : Tensor = prim::CallFunction(%f, %x)
          %z : Tensor = prim::DifferentiableGraph_0(%y)
          return (%z)
        with prim::DifferentiableGraph_0 = graph(%a : Tensor):
          %b : Tensor = aten::neg(%a)
          return (%b, %a)"""))
    assert run_graph(graph, callee, torch.tensor([1.5])).item() == -3.0


def test_call_function_accepts_python_callables() -> None:
    graph = parse_ir("""
        graph(%f : Function, %x : int):
          %y : int = prim::CallFunction(%f, %x)
          return (%y)""")
    assert run_graph(graph, lambda v: v * 10, 4) == 40


# ---- errors ----------------------------------------------------------------------------------------------------
RAISES = """
graph(%x : int):
  %cls : str = prim::Constant[value="builtins.ValueError"]()
  %msg : str = prim::Constant[value="negative"]()
  %0 : int = prim::Constant[value=0]()
  %c : bool = aten::lt(%x, %0)
   = prim::If(%c)
    block0():
       = prim::RaiseException(%msg, %cls)
      -> ()
    block1():
      -> ()
  return (%x)
"""


def test_raise_exception_raises_the_named_builtin_class_naming_the_node() -> None:
    graph = parse_ir(RAISES)
    assert run_graph(graph, 1) == 1
    with pytest.raises(ValueError, match="negative") as caught:
        run_graph(graph, -1)
    assert isinstance(caught.value, RuntimeTsjitError)
    assert caught.value.node.kind == "prim::RaiseException"
    assert "at prim::RaiseException(%msg, %cls)" in str(caught.value)
    assert type(caught.value.__cause__) is ValueError


def test_an_aten_error_stays_a_runtime_error_and_names_its_callers_then_the_node() -> None:
    callee = Function("bad", parse_ir("""
        graph(%x : Tensor, %y : Tensor):
          %z : Tensor = aten::mm(%x, %y)
          return (%z)"""))
    graph = parse_ir("""
        graph(%f : Function, %x : Tensor):
          %y : Tensor = prim::CallFunction(%f, %x, %x)
          return (%y)""")
    with pytest.raises(RuntimeError) as caught:
        run_graph(graph, callee, torch.ones(2, 3))
    message = str(caught.value)
    assert isinstance(caught.value, InterpreterError)
    call = message.index("  at %y : Tensor = prim::CallFunction(%f, %x, %x)\n")  # outermost first
    failing = re.search(r"  at %z : [^\n]* = aten::mm\(%x, %y\)\n", message).start()  # the callee's plan's node
    assert message.startswith(HEADER) and call < failing
    assert message.endswith(f"RuntimeError: {caught.value.__cause__}\n")
    assert isinstance(caught.value.__cause__, RuntimeError)


def test_wrong_number_of_inputs_is_an_error() -> None:
    with pytest.raises(RuntimeTsjitError, match="takes 3 inputs, got 1"):
        run_graph(parse_ir(IF_GRAPH), torch.ones(1))


def test_results_zero_one_or_several_outputs() -> None:
    assert run_graph(parse_ir("graph(%x : int):\n  return ()"), 1) is None
    assert run_graph(parse_ir("graph(%x : int):\n  return (%x)"), 1) == 1
    assert run_graph(parse_ir("graph(%x : int, %y : str):\n  return (%y, %x)"), 1, "a") == ("a", 1)
