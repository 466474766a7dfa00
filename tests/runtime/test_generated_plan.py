"""Generated plans (runtime/generated_plan.py) against the interpreter: the source they generate, identical results
and errors over the runtime corpus, run-time errors naming the node and the source line, the interpreter kept for
fork/wait and TSJIT_INTERPRETER=1, and the plan entries that replace the call key on the hot path."""

from __future__ import annotations

import pytest
import torch
from test_interpreter import IF_GRAPH
from test_runtime_corpus import INPUTS, assert_same, class_types, for_tsjit, graph_names, load, outcome

import tsjit
from tsjit.errors import RuntimeTsjitError, TsjitError
from tsjit.ir.parser import parse_ir
from tsjit.ir.symbols import aten, prim
from tsjit.runtime.function import Function
from tsjit.runtime.generated_plan import generate_plan
from tsjit.runtime.graph_executor import ExecutionPlan
from tsjit.runtime.interpreter import InterpreterError


def body(source: str) -> list[str]:
    """The generated lines between `try:` and `except`, operation names replaced by `op`."""
    lines = source.splitlines()
    inner = lines[lines.index("    try:") + 1:lines.index("    except Exception as error:")]
    return [" ".join("op(" + part.split("(", 1)[1] if part.startswith("op_") else part for part in line.split(" "))
            for line in inner]


def test_the_if_example_frees_each_value_at_its_last_use() -> None:
    assert body(generate_plan(parse_ir(IF_GRAPH)).source) == [
        "        y = op(x, w); del w",
        "        if flag:",
        "            a = op(y)",
        "            z = a; del a",
        "        else:",
        "            z = y",
        "        del y",
        "        r = op(z, x); del z, x",
        "        return r"]


def test_a_tuple_is_built_in_place() -> None:
    graph = parse_ir("""
        graph(%x : Tensor, %y : Tensor):
          %one : int = prim::Constant[value=1]()
          %z : Tensor = aten::mul(%x, %y)
          %t : (Tensor, Tensor, int) = prim::TupleConstruct(%z, %x, %one)
          return (%t)""")
    plan = generate_plan(graph)
    assert body(plan.source) == ["        z = op(x, y); del y", "        t = (z, x, 1, ); del z, x", "        return t"]
    x, y = torch.randn(2), torch.randn(2)
    result = plan.function(x, y)
    assert result[1] is x and result[2] == 1 and torch.equal(result[0], x * y)


def test_loops_become_for_or_while() -> None:
    for_loop = generate_plan(parse_ir("""
        graph(%x : Tensor, %n : int):
          %true : bool = prim::Constant[value=1]()
          %y : Tensor = prim::Loop(%n, %true, %x)
            block0(%i : int, %c : Tensor):
              %d : Tensor = aten::mul(%c, %c)
              -> (%true, %d)
          return (%y)""")).source
    assert "for _ in range(n):" in for_loop and "c = d; del d" in for_loop
    while_loop = generate_plan(parse_ir("""
        graph(%n : int):
          %max : int = prim::Constant[value=9223372036854775807]()
          %one : int = prim::Constant[value=1]()
          %go : bool = aten::gt(%n, %one)
          %k : int = prim::Loop(%max, %go, %n)
            block0(%i : int, %m : int):
              %next : int = aten::floordiv(%m, %one)
              %more : bool = aten::gt(%next, %one)
              -> (%more, %next)
          return (%k)""")).source
    assert "while condition:" in while_loop and "condition, m = more, next" in while_loop


# ---- the generated plan and the interpreter agree ---------------------------------------------------------------
def both_ways(graph, make_args):
    """The outcomes of one plan of `graph` run generated and interpreted, on fresh copies of the arguments (a plan
    of the graph as it is: the profiling executor interprets its profiling plans, and generates optimized ones)."""
    function = Function("corpus", graph, optimize=False)
    plan = function.executor.get_plan(make_args())
    suspends = any(node.kind in (prim.fork, aten.wait) for node in plan.graph.all_nodes())
    assert (plan.generated is None) == suspends
    generated = outcome(plan.run, make_args())
    interpreted = outcome(plan.interpret, make_args())
    return generated, interpreted


def assert_same_outcome(generated, interpreted, where: str) -> None:
    assert generated[0] == interpreted[0], f"{where}: generated {generated!r}, interpreted {interpreted!r}"
    if generated[0] == "error":
        assert type(generated[1]) is type(interpreted[1]), where
        assert str(generated[1]) == str(interpreted[1]), where
        assert generated[1].node is interpreted[1].node, where
    else:
        assert_same(generated[1], interpreted[1], where)


@pytest.mark.parametrize("name", graph_names())
def test_corpus_graph_runs_the_same_generated_and_interpreted(name: str) -> None:
    types = class_types()
    graph = load(name, types)
    for index in range(len(INPUTS[name]())):
        generated, interpreted = both_ways(graph, lambda k=index: [for_tsjit(a, types) for a in INPUTS[name]()[k]])
        assert_same_outcome(generated, interpreted, f"{name} inputs #{index}")


# ---- errors ------------------------------------------------------------------------------------------------------
def test_an_error_names_the_node_its_source_line_and_its_callers() -> None:
    @tsjit.script
    def inner(x, y):
        z = x + 1
        return torch.mm(z, y)

    @tsjit.script
    def outer(x):
        return inner(x, x) * 2

    callee = Function("inner", inner.graph.copy())
    caller = parse_ir("""
        graph(%f : Function, %x : Tensor):
          %y : Tensor = prim::CallFunction(%f, %x, %x)
          return (%y)""")
    with pytest.raises(RuntimeError) as caught:
        Function("caller", caller)(callee, torch.ones(2, 3))
    message = str(caught.value)
    assert isinstance(caught.value, InterpreterError) and isinstance(caught.value.__cause__, RuntimeError)
    call = message.index("  at %y : Tensor = prim::CallFunction(%f, %x, %x)\n")
    failing = message.index(", in inner\n")
    assert call < failing and "return torch.mm(z, y)\n               ~~~~~~~~ <--- HERE\n" in message
    with pytest.raises(RuntimeError, match=r"return torch\.mm\(z, y\)"):
        outer(torch.ones(2, 3))  # inlined: the node keeps its source range


def test_a_raised_exception_keeps_its_class_in_both_ways() -> None:
    @tsjit.script
    def checked(x: int) -> int:
        if x < 0:
            raise ValueError("negative")
        return x

    assert checked(3) == 3
    with pytest.raises(ValueError, match="negative") as caught:
        checked(-1)
    assert isinstance(caught.value, RuntimeTsjitError) and type(caught.value.__cause__) is ValueError


# ---- when the interpreter runs -----------------------------------------------------------------------------------
def test_graphs_that_fork_or_wait_run_in_the_interpreter() -> None:
    @tsjit.script
    def forks(x):
        future = torch.jit.fork(torch.neg, x)
        return torch.jit.wait(future) + 1

    x = torch.ones(2)
    assert torch.equal(forks(x), -x + 1)
    plan = forks._runtime_function().executor.get_plan([x])
    assert plan.generated is None and plan.run == plan.interpret


def test_tsjit_interpreter_forces_the_interpreter(monkeypatch) -> None:
    monkeypatch.setenv("TSJIT_INTERPRETER", "1")
    plan = ExecutionPlan(parse_ir(IF_GRAPH))
    assert plan.generated is None
    x = torch.ones(2, 2)
    assert torch.equal(plan.run(x, x, True), torch.full((2, 2), 2.0))


# ---- the hot path: plan entries ----------------------------------------------------------------------------------
def test_an_entry_runs_its_plan_only_for_its_call_key() -> None:
    function = Function("f", parse_ir("""
        graph(%x : Tensor, %y : Tensor?):
          %r : Tensor = aten::relu(%x)
          return (%r)"""))
    for x, y in [(torch.ones(2), None), (torch.ones(2, dtype=torch.float64), None), (torch.ones(2, 2), None),
                 (torch.ones(2), torch.ones(1)), (torch.ones(2, requires_grad=True), None), (torch.ones(2), None)]:
        assert torch.equal(function(x, y), x.relu())
    with torch.no_grad():
        assert function(torch.ones(2, requires_grad=True), None).requires_grad is False
    assert len(function.executor.plans) == 5  # no grad mode: requires_grad does not count
    with pytest.raises(RuntimeTsjitError, match="takes 2 inputs, got 1"):
        function(torch.ones(2))


def test_without_grad_mode_one_entry_serves_tensors_that_require_grad_and_others(monkeypatch) -> None:
    """A backward graph's executor (a GraphExecutor) runs with grad mode off on saved tensors, some requiring
    grad in one call and not in the next: the call key and the entry leave requires_grad out there, so the entry
    does not miss."""
    from tsjit.runtime import graph_executor

    executor = graph_executor.GraphExecutor(parse_ir("""
        graph(%x : Tensor):
          %r : Tensor = aten::relu(%x)
          return (%r)"""))
    plain, requiring = torch.ones(2), torch.ones(2, requires_grad=True)
    with torch.no_grad():
        executor.run((plain,))
        keys: list = []
        call_key = graph_executor.call_key
        monkeypatch.setattr(graph_executor, "call_key", lambda inputs: keys.append(inputs) or call_key(inputs))
        for x in [requiring, plain, requiring]:
            assert torch.equal(executor.run((x,)), plain)
    assert keys == []


def test_a_script_function_of_tensors_still_checks_its_arguments() -> None:
    @tsjit.script
    def add(x, y):
        return x + y

    x = torch.ones(2)
    assert torch.equal(add(x, x), x + x) and torch.equal(add(x, x), x + x)
    assert add._entry is not None
    with pytest.raises(TsjitError, match="Expected a value of type 'Tensor' for argument 'y'"):
        add(x, 1)
    parameter = torch.nn.Parameter(torch.ones(2))
    assert torch.equal(add(x, parameter), x + 1)  # a Tensor subclass: through the binder
    assert torch.equal(add(x, y=x), x + x)
