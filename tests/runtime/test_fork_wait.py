"""fork and wait: forked graphs and Python callables, nesting, exceptions through wait, suspension at wait, and
one Function called from many threads at once."""

from __future__ import annotations

import textwrap
import threading

import pytest
import torch

from tsjit.errors import RuntimeTsjitError
from tsjit.ir.parser import parse_ir
from tsjit.runtime.function import Function
from tsjit.runtime.futures import Future, fork, wait
from tsjit.runtime.run import run_graph


def graph(text: str):
    return parse_ir(textwrap.dedent(text))


SCALE = graph("""\
    graph(%x : Tensor, %k : int):
      %y : Tensor = aten::mul(%x, %k)
      return (%y)""")

# The first forked graph forks again and waits (subgraph sections are numbered per graph, nested ones first).
NESTED = graph("""\
    graph(%x : Tensor):
      %one : int = prim::Constant[value=1]()
      %f : Future[Tensor] = prim::fork_0(%x)
      %g : Future[Tensor] = prim::fork_1(%x)
      %a : Tensor = aten::wait(%f)
      %b : Tensor = aten::wait(%g)
      %r : Tensor = aten::sub(%a, %b, %one)
      return (%r)
    with prim::fork_0 = graph(%x : Tensor):
      %one : int = prim::Constant[value=1]()
      %two : int = prim::Constant[value=2]()
      %inner : Future[Tensor] = prim::fork_0(%x)
      %y : Tensor = aten::mul(%x, %two)
      %z : Tensor = aten::wait(%inner)
      %r : Tensor = aten::add(%y, %z, %one)
      return (%r)
    with prim::fork_0 = graph(%x : Tensor):
      %three : int = prim::Constant[value=3]()
      %y : Tensor = aten::mul(%x, %three)
      return (%y)
    with prim::fork_1 = graph(%x : Tensor):
      %y : Tensor = aten::neg(%x)
      return (%y)""")


def test_nested_forks_in_graphs() -> None:
    x = torch.tensor([1.0, 2.0])
    torch.testing.assert_close(run_graph(NESTED, x), (2 * x + 3 * x) - (-x))


def test_nested_forks_from_python_do_not_exhaust_the_pool() -> None:
    # every level blocks in wait(): the pool threads run the queued inner tasks meanwhile
    def tree(depth: int) -> int:
        if depth == 0:
            return 1
        futures = [fork(tree, depth - 1) for _ in range(3)]
        return sum(wait(f) for f in futures)

    assert wait(fork(tree, 4)) == 81


def test_fork_a_function_and_a_python_callable() -> None:
    scale = Function("scale", SCALE)
    x = torch.ones(3)
    futures = [fork(scale, x, k) for k in range(5)] + [fork(lambda v: v + 1, x)]
    results = [wait(f) for f in futures]
    for k in range(5):
        torch.testing.assert_close(results[k], x * k)
    torch.testing.assert_close(results[5], x + 1)


RAISING = graph("""\
    graph(%x : int):
      %f : Future[int] = prim::fork_0(%x)
      %y : int = aten::wait(%f)
      return (%y)
    with prim::fork_0 = graph(%x : int):
      %msg : str = prim::Constant[value="bad input"]()
      %cls : str = prim::Constant[value="builtins.ValueError"]()
       = prim::RaiseException(%msg, %cls)
      return (%x)""")


def test_an_exception_in_a_forked_graph_travels_through_wait() -> None:
    with pytest.raises(ValueError, match="bad input") as caught:
        run_graph(RAISING, 1)
    assert isinstance(caught.value, RuntimeTsjitError)
    assert caught.value.node.kind == "prim::RaiseException"


def test_an_exception_in_a_forked_python_callable_travels_through_wait() -> None:
    def fail() -> None:
        raise KeyError("missing")

    with pytest.raises(KeyError):
        wait(fork(fail))
    waits = graph("""\
        graph(%f : Future[int]):
          %y : int = aten::wait(%f)
          return (%y)""")
    with pytest.raises(KeyError) as caught:
        run_graph(waits, fork(fail))
    assert caught.value.node.kind == "aten::wait"


WAITS_ON_INPUT = graph("""\
    graph(%f : Future[int], %k : int):
      %v : int = aten::wait(%f)
      %r : int = aten::mul(%v, %k)
      return (%r)""")


def test_forked_graphs_suspend_at_wait_instead_of_holding_pool_threads() -> None:
    gate = Future()
    waiter = Function("waiter", WAITS_ON_INPUT)
    suspended = [fork(waiter, gate, k) for k in range(16)]  # many more than the pool has threads
    # were the 16 waits blocking pool threads, this task could never run before the gate opens
    assert wait(fork(lambda: "pool is free")) == "pool is free"
    assert not any(f.done() for f in suspended)
    gate.set_result(10)
    assert [wait(f) for f in suspended] == [10 * k for k in range(16)]


def test_a_wait_inside_a_called_function_suspends_the_whole_call_stack() -> None:
    gate = Future()
    waiter = Function("waiter", WAITS_ON_INPUT)
    caller = Function("caller", graph("""\
        graph(%g : Function, %f : Future[int], %k : int):
          %r : int = prim::CallFunction(%g, %f, %k)
          %one : int = prim::Constant[value=1]()
          %s : int = aten::add(%r, %one)
          return (%s)"""))
    suspended = [fork(caller, waiter, gate, k) for k in range(16)]
    assert wait(fork(lambda: "pool is free")) == "pool is free"
    gate.set_result(10)
    assert [wait(f) for f in suspended] == [10 * k + 1 for k in range(16)]


def test_a_suspended_graph_resumes_on_a_pool_thread_when_its_future_completes() -> None:
    resumed_on = Function("probe", graph("""\
        graph(%f : Future[int], %g : Function):
          %v : int = aten::wait(%f)
          %t : str = prim::CallFunction(%g)
          return (%t)"""))
    gate = Future()
    future = fork(resumed_on, gate, lambda: threading.current_thread().name)
    gate.set_result(1)  # completed on the main thread
    assert wait(future).startswith("tsjit-pool-")


def test_eight_threads_call_one_function_a_thousand_times() -> None:
    function = Function("scale", SCALE)
    failures: list[str] = []

    def worker(index: int) -> None:
        dtype = torch.float32 if index % 2 else torch.float64  # two ArgumentSpecs, built concurrently
        x = torch.full((3,), float(index), dtype=dtype)
        for k in range(1000):
            result = function(x, k)
            if result.dtype != dtype or result[0].item() != index * k:
                failures.append(f"thread {index}, call {k}: {result}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert len(function.executor.plans) == 2
