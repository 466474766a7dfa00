"""fork/wait and closures in scripted code: torch.jit's graphs (prim::fork with a Subgraph of the captured
values), eager's and torch.jit's results, exceptions through wait, archives both ways, and torch.jit's errors.

Nested `def`s come from TorchScript source (CompilationUnit strings, archives); torch.jit's Python frontend,
like tsjit's, rejects them (tests/frontend/test_python_ast.py).
"""

# ruff: noqa: UP006, UP035  (programs written as TorchScript users do)

from __future__ import annotations

import textwrap
from typing import List, Tuple

import pytest
import torch
from test_ir_emitter import normalized
from torch import Tensor

import tsjit
from tsjit.api import CompilationUnit, script
from tsjit.errors import CompileError

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit's own




def same_graph(ours, theirs) -> None:
    assert normalized(str(ours.graph)) == normalized(str(theirs.graph))


# ---- forking functions, builtins and methods ---------------------------------------------------------------------
def scale(x, k: int = 2):
    return x * k


def pair(x, k: int) -> Tuple[Tensor, int]:
    return x * k, k + 1


def fork_function(x):
    fut = torch.jit.fork(scale, x, 3)
    return torch.jit.wait(fut)


def fork_builtins_and_keywords(x):
    a = torch.jit.fork(torch.neg, x)
    b = torch.jit._fork(scale, x, k=4)
    c = torch.jit.fork(torch.add, x, x, alpha=2)
    return torch.jit.wait(a) + torch.jit._wait(b) + torch.jit.wait(c)


def tsjit_fork_and_wait(x):
    c = tsjit.fork(torch.add, x, x, alpha=2)
    return tsjit.wait(c)


def torch_fork_and_wait(x):
    c = torch.jit.fork(torch.add, x, x, alpha=2)
    return torch.jit.wait(c)


def fork_in_loops(x):
    futs: List[torch.jit.Future[Tuple[Tensor, int]]] = []
    for k in range(3):
        futs.append(torch.jit.fork(pair, x, k))
    more = [torch.jit.fork(scale, x, k) for k in range(2)]
    total = torch.jit.wait(more[0]) + torch.jit.wait(more[1])
    n = 0
    for fut in futs:
        y, m = torch.jit.wait(fut)
        total = total + y
        n += m
    return total, n


def forks_again(x):
    inner = torch.jit.fork(scale, x, 5)
    return torch.jit.wait(inner) - x


def nested_forks(x):
    fut = torch.jit.fork(forks_again, x)
    y = x * 2
    return torch.jit.wait(fut) + y


def unused_fork(x):
    torch.jit.fork(scale, x)
    return x


FUNCTIONS = [fork_function, fork_builtins_and_keywords, fork_in_loops, nested_forks, unused_fork]


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_functions_give_torch_jit_graphs(fn):
    same_graph(script(fn), torch.jit.script(fn))


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_functions_match_eager_and_torch_jit(fn):
    x = torch.randn(3)
    expected = fn(x)
    torch.testing.assert_close(script(fn)(x), expected)
    torch.testing.assert_close(torch.jit.script(fn)(x), expected)


def test_tsjit_fork_is_torch_jit_fork():
    same_graph(script(tsjit_fork_and_wait), torch.jit.script(torch_fork_and_wait))
    x = torch.randn(2)
    torch.testing.assert_close(script(tsjit_fork_and_wait)(x), 3 * x)


def test_fork_result_is_a_future_of_the_call():
    graph = script(fork_in_loops).graph
    forks = [n for n in graph.all_nodes() if n.kind == "prim::fork"]
    assert [str(f.output().type) for f in forks] == ["Future[(Tensor, int)]", "Future[Tensor]"]
    assert [str(v.type) for v in forks[0].g("Subgraph").inputs] == ["Tensor", "int"]


def test_inlined_graph_keeps_forked_calls():
    # like torch.jit, inlining stops at the forked subgraph
    ours, theirs = script(nested_forks), torch.jit.script(nested_forks)
    assert normalized(str(ours.inlined_graph)) == normalized(str(theirs.inlined_graph))


class Sub(torch.nn.Module):
    def forward(self, x):
        return x * 2


class ForkingModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = Sub()

    def helper(self, x, k: int):
        return x + k

    def forward(self, x):
        f1 = torch.jit.fork(self.sub, x)
        f2 = torch.jit.fork(self.helper, x, 3)
        return torch.jit.wait(f1) + torch.jit.wait(f2)


def test_module_methods_fork():
    ours, theirs = script(ForkingModule()), torch.jit.script(ForkingModule())
    same_graph(ours, theirs)
    assert ours.code == theirs.code
    x = torch.randn(4)
    torch.testing.assert_close(ours(x), ForkingModule()(x))


# ---- exceptions --------------------------------------------------------------------------------------------------
def fails_when_positive(x):
    if bool(x.sum() > 0):
        raise ValueError("positive input")
    return x


def waits_on_failing(x):
    return torch.jit.wait(torch.jit.fork(fails_when_positive, x))


def waits_on_nested_failing(x):
    fut = torch.jit.fork(waits_on_failing, x)
    y = x + 1
    return torch.jit.wait(fut) + y


@pytest.mark.parametrize("fn", [waits_on_failing, waits_on_nested_failing], ids=lambda f: f.__name__)
def test_exceptions_in_forked_work_come_out_of_wait(fn):
    scripted = script(fn)
    with pytest.raises(ValueError, match="positive input"):
        scripted(torch.ones(2))
    torch.testing.assert_close(scripted(-torch.ones(2)), fn(-torch.ones(2)))


# ---- closures (TorchScript source) -------------------------------------------------------------------------------
CLOSURE_PROGRAMS = {
    "captures": """
        def f(x):
            k = int(x.numel())
            def inner():
                return x * k + 2
            fut = torch.jit.fork(inner)
            return torch.jit.wait(fut)
        """,
    "nested_closures": """
        def f(x):
            def inner():
                def inner2():
                    return x + 1
                f = torch.jit.fork(inner2)
                return torch.jit.wait(f) * 2
            fut = torch.jit.fork(inner)
            return torch.jit.wait(fut)
        """,
    "in_a_loop": """
        def f(x):
            for i in range(3):
                def inner():
                    return x + i
                fut = torch.jit.fork(inner)
                x = torch.jit.wait(fut)
            return x
        """,
    "control_flow_and_locals": """
        def f(x):
            z = x
            def inner():
                z = x * 2
                if bool(z.sum() > 0):
                    return z
                return -z
            fut = torch.jit.fork(inner)
            return torch.jit.wait(fut) + z
        """,
    "declared_return_type": """
        def f(x):
            def inner() -> int:
                return 1
            fut = torch.jit.fork(inner)
            return torch.jit.wait(fut)
        """,
    "renamed_and_arguments_ignored": """
        def f(x):
            def inner():
                return x
            g = inner
            fut = torch.jit.fork(g, 3)
            return torch.jit.wait(fut)
        """,
    "unforked": """
        def f(x):
            def inner():
                return x
            return x
        """,
}


# the exit transform's values (constants, uninitialized stand-ins) are placed outside the closure, so forks of
# closures that return early capture a few unused values, not the same ones as torch.jit's
CAPTURES_EXIT_VALUES = {"control_flow_and_locals"}


def forked_kinds(graph) -> list[list[str]]:
    return [[str(n.kind) for n in fork.g("Subgraph").all_nodes()]
            for fork in graph.all_nodes() if fork.kind == "prim::fork"]


def torch_forked_kinds(graph) -> list[list[str]]:
    def walk(block):
        for node in block.nodes():
            yield node.kind()
            for inner in node.blocks():
                yield from walk(inner)

    return [list(walk(fork.g("Subgraph"))) for fork in graph.nodes() if fork.kind() == "prim::fork"]


@pytest.mark.parametrize("name", sorted(CLOSURE_PROGRAMS))
def test_closures_match_torch_jit(name):
    source = textwrap.dedent(CLOSURE_PROGRAMS[name])
    ours, theirs = CompilationUnit(source).f, torch.jit.CompilationUnit(source).f
    if name in CAPTURES_EXIT_VALUES:
        assert forked_kinds(ours.graph) == torch_forked_kinds(theirs.graph)
    else:
        same_graph(ours, theirs)
    x = torch.randn(3)
    torch.testing.assert_close(ours(x.clone()), theirs(x.clone()))


def test_closure_capturing_nothing_forks_without_inputs():
    # torch.jit fails an internal assert on this one
    fn = CompilationUnit(textwrap.dedent("""
        def f(x):
            def inner():
                return None
            return torch.jit.wait(torch.jit.fork(inner))
        """)).f
    fork = next(n for n in fn.graph.nodes() if n.kind == "prim::fork")
    assert not fork.inputs and not fork.g("Subgraph").inputs
    assert fn(torch.ones(1)) is None


# ---- archives ----------------------------------------------------------------------------------------------------
class ForkingArchive(torch.nn.Module):
    def forward(self, x):
        a = fork_in_loops(x)[0]
        b = torch.jit.wait(torch.jit.fork(self.double, x))
        return a + b + nested_forks(x)

    def double(self, x):
        return torch.jit.wait(torch.jit.fork(torch.mul, x, 2))


def test_archives_load_both_ways(tmp_path):
    x = torch.randn(3)
    expected = ForkingArchive()(x)
    ours, theirs = tmp_path / "ours.pt", tmp_path / "theirs.pt"
    tsjit.save(script(ForkingArchive()), str(ours))
    torch.jit.save(torch.jit.script(ForkingArchive()), str(theirs))
    assert "def __forked_function" in torch.jit.load(str(theirs)).code
    torch.testing.assert_close(tsjit.load(str(ours))(x), expected)
    torch.testing.assert_close(torch.jit.load(str(ours))(x), expected)
    torch.testing.assert_close(tsjit.load(str(theirs))(x), expected)


# ---- errors ------------------------------------------------------------------------------------------------------
ERRORS = {
    "no_arguments": ("""
        def f(x):
            fut = torch.jit.fork()
            return x
        """, "Expected at least one argument to fork()"),
    "closure_with_parameters": ("""
        def f(x):
            def inner(a):
                return a + x
            fut = torch.jit.fork(inner, x)
            return torch.jit.wait(fut)
        """, "Cannot fork lambda with parameters"),
    "closure_called": ("""
        def f(x):
            def inner():
                return x
            return inner()
        """, "cannot call a closure"),
    "break_in_closure_in_loop": ("""
        def f(x):
            for i in range(3):
                def inner():
                    break
            return x
        """, "SyntaxError: 'break' outside loop"),
    "defined_after_the_def": ("""
        def f(x):
            def inner():
                return y
            y = x
            return torch.jit.wait(torch.jit.fork(inner))
        """, "undefined value y"),
    "not_callable": ("""
        def f(x):
            fut = torch.jit.fork(3, x)
            return x
        """, "cannot call a value of type 'int'"),
    "untyped_default": ("""
        def f(x):
            def inner(a=1):
                return x
            return x
        """, "Keyword arguments with defaults need to be type-hinted (TorchScript C++ frontend)"),
    "closure_out_of_scope": ("""
        def f(x, c: bool):
            if c:
                def inner():
                    return x
            return torch.jit.wait(torch.jit.fork(inner))
        """, "inner"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch_jit(name):
    source, message = ERRORS[name]
    source = textwrap.dedent(source)
    with pytest.raises(CompileError) as ours:
        CompilationUnit(source)
    with pytest.raises(RuntimeError) as theirs:
        torch.jit.CompilationUnit(source)
    assert message in str(ours.value) and message in str(theirs.value)
    assert "<--- HERE" in str(ours.value)
