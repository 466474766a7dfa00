"""Fusion in the executor's pipeline: scripted elementwise chains run as FusionGroups and give eager's results;
the seed's LSTM cell is one kernel after its matmuls; kernels compile in the background while the subgraph
runs; inputs and parameters requiring grad keep autograd; TSJIT_FUSION=0 and a missing compiler change nothing."""

from __future__ import annotations

import threading

import pytest
import torch
from shared_programs import lstm_cell_s as lstm_cell

import tsjit
import tsjit.codegen.compiler as compiler
import tsjit.runtime.fusion as fusion
from tsjit.api.module import script_module
from tsjit.ir.symbols import prim
from tsjit.lru import LRUCache


def fusion_groups(graph) -> list:
    return [n for n in graph.all_nodes() if n.kind is prim.FusionGroup]


def guarded_block(graph):
    """The block the graph's guard (prim::TypeCheck, then prim::If) runs when the check passes."""
    (branch,) = [n for n in graph.nodes() if n.kind is prim.If]
    return branch.blocks[0]


def gelu_like(x, y, scale: float):
    inner = torch.tanh(0.79788456 * (x + 0.044715 * x * x * x)) * scale
    return 0.5 * x * (1 + inner) - torch.sigmoid(y) / 3


def two_outputs(x, y):
    a = torch.relu(x - y)
    b = torch.exp(-a) * y
    return a, b.clamp(-1, 1)


def with_control_flow(x, n: int):
    for _ in range(n):
        x = torch.sin(x) * 0.5 + torch.cos(x)
    if bool(x.sum() > 0):
        x = torch.abs(x).sqrt() - 1
    return x


BENCH_CHAIN = ["sin", "add", "mul", "cos", "tanh", "sub", "relu", "neg", "sigmoid", "add"] * 10


def long_chain(x, y):
    for op in BENCH_CHAIN:
        x = getattr(torch, op)(x, y) if op in ("add", "sub", "mul") else getattr(torch, op)(x)
    return x


def long_chain_source() -> str:
    lines = ["def chain(x, y):"]
    for op in BENCH_CHAIN:
        lines.append(f"    x = torch.{op}(x, y)" if op in ("add", "sub", "mul") else f"    x = torch.{op}(x)")
    return "\n".join([*lines, "    return x\n"])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(4,), (3, 5), (0,), (64, 1000)])
def test_scripted_chains_fuse_and_match_eager(dtype, shape) -> None:
    x, y = torch.randn(shape, dtype=dtype), torch.randn(shape, dtype=dtype)
    for function, args in ((gelu_like, (x, y, 1.5)), (two_outputs, (x, y))):
        scripted = tsjit.script(function)
        torch.testing.assert_close(scripted(*args), function(*args))
        assert fusion_groups(scripted.graph_for(*args)), function.__name__


def test_the_benchmark_chain_is_one_kernel() -> None:
    scripted = tsjit.CompilationUnit(long_chain_source()).chain
    x, y = torch.randn(4), torch.randn(4)
    graph = scripted.graph_for(x, y)  # the profiling executor's: the kernel behind a check of the profiled types
    assert [str(n.kind) for n in graph.nodes()] == ["prim::TypeCheck", "prim::If"]
    assert [str(n.kind) for n in guarded_block(graph).nodes()] == ["prim::FusionGroup"]
    for _ in range(3):
        x, y = torch.randn(4), torch.randn(4)
        torch.testing.assert_close(scripted(x, y), long_chain(x, y))


def test_groups_inside_loops_and_branches() -> None:
    scripted, x = tsjit.script(with_control_flow), torch.randn(6)
    torch.testing.assert_close(scripted(x, 3), with_control_flow(x, 3))
    assert len(fusion_groups(scripted.graph_for(x, 3))) >= 2


def test_outputs_never_alias_the_inputs() -> None:
    scripted = tsjit.script(two_outputs)
    x, y = torch.randn(5), torch.randn(5)
    a, b = scripted(x, y)
    a.add_(100)
    b.add_(100)
    torch.testing.assert_close((x, y), (x.clone(), y.clone()))
    torch.testing.assert_close(scripted(x, y), two_outputs(x, y))


def test_inputs_requiring_grad_get_an_unfused_plan_with_gradients() -> None:
    scripted = tsjit.script(gelu_like)
    x, y = torch.randn(6, requires_grad=True), torch.randn(6, requires_grad=True)
    assert not fusion_groups(scripted.graph_for(x, y, 2.0))
    scripted(x, y, 2.0).sum().backward()
    ours = (x.grad, y.grad)
    x.grad = y.grad = None
    gelu_like(x, y, 2.0).sum().backward()
    torch.testing.assert_close(ours, (x.grad, y.grad))
    with torch.no_grad():
        assert fusion_groups(scripted.graph_for(x, y, 2.0))
        torch.testing.assert_close(scripted(x, y, 2.0), gelu_like(x, y, 2.0))


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(8))

    def forward(self, x):
        return torch.tanh(x * self.weight) + torch.sigmoid(self.weight)


def test_parameters_requiring_grad_fall_back_to_autograd() -> None:
    module = Scaled()
    scripted, x = script_module(module), torch.randn(8)
    scripted(x).sum().backward()
    ours, module.weight.grad = module.weight.grad, None  # the scripted module shares the parameter
    module(x).sum().backward()
    torch.testing.assert_close(ours, module.weight.grad)
    with torch.no_grad():
        torch.testing.assert_close(scripted(x), module(x))


def test_fusion_can_be_switched_off(monkeypatch) -> None:
    monkeypatch.setenv("TSJIT_FUSION", "0")  # read when a plan is built: a new function has none yet
    scripted = tsjit.CompilationUnit(long_chain_source()).chain
    x, y = torch.randn(4), torch.randn(4)
    assert not fusion_groups(scripted.graph_for(x, y))
    torch.testing.assert_close(scripted(x, y), long_chain(x, y))


def test_without_a_compiler_the_groups_are_interpreted(monkeypatch) -> None:
    monkeypatch.setattr(compiler, "find_compiler", lambda: None)
    scripted = tsjit.CompilationUnit(long_chain_source()).chain  # no kernel compiled yet
    x, y = torch.randn(7), torch.randn(7)
    assert fusion_groups(scripted.graph_for(x, y))
    torch.testing.assert_close(scripted(x, y), long_chain(x, y))


def test_a_plan_meets_inputs_of_other_shapes_and_layouts() -> None:
    scripted = tsjit.script(two_outputs)
    x, y = torch.randn(4, 3), torch.randn(4, 3)
    torch.testing.assert_close(scripted(x, y), two_outputs(x, y))
    for a, b in ((x.t(), y.t()), (x, y[:1]), (x[:, :1], y)):  # one plan: same dtypes and ranks
        torch.testing.assert_close(scripted(a, b), two_outputs(a, b))


def lstm_inputs(batch: int, inputs: int, hidden: int, dtype=torch.float32) -> list[torch.Tensor]:
    shapes = ((batch, inputs), (batch, hidden), (batch, hidden), (4 * hidden, inputs), (4 * hidden, hidden),
              (4 * hidden,), (4 * hidden,))
    return [torch.randn(shape, dtype=dtype) for shape in shapes]


def count_fallbacks(monkeypatch) -> list:
    """The calls of FusionGroup fallbacks (of plans built from now on), as they happen."""
    calls = []
    interpreted = fusion.interpreted
    monkeypatch.setattr(fusion, "interpreted",
                        lambda subgraph: (lambda run: lambda *v: (calls.append(v), run(*v))[1])(interpreted(subgraph)))
    return calls


@pytest.fixture
def fallbacks(monkeypatch):
    """Counts FusionGroup fallbacks; kernels compile on the first call, which waits for them (TSJIT_SYNC_COMPILE)."""
    monkeypatch.setenv("TSJIT_SYNC_COMPILE", "1")
    return count_fallbacks(monkeypatch)


def test_the_lstm_cell_after_its_matmuls_is_one_kernel(fallbacks) -> None:
    scripted = tsjit.script(lstm_cell)
    with torch.no_grad():
        graph = scripted.graph_for(*lstm_inputs(3, 10, 20))
        assert [str(n.kind) for n in graph.nodes() if n.kind is not prim.Constant] == [
            "aten::t", "aten::mm", "aten::t", "aten::mm", "prim::TypeCheck", "prim::If", "prim::TupleConstruct"]
        assert [str(n.kind) for n in guarded_block(graph).nodes()] == ["prim::FusionGroup"]
        (group,) = fusion_groups(graph)
        assert [str(n.kind) for n in group.g("Subgraph").nodes() if n.kind is not prim.Constant] == [
            "aten::add", "aten::add", "aten::add", "prim::ConstantChunk", "aten::sigmoid", "aten::sigmoid",
            "aten::tanh", "aten::sigmoid", "aten::mul", "aten::mul", "aten::add", "aten::tanh", "aten::mul"]
        for sizes in ((3, 10, 20), (1, 4, 1), (0, 3, 5), (64, 30, 100), (2000, 8, 39)):  # the last on threads
            args = lstm_inputs(*sizes)
            torch.testing.assert_close(scripted(*args), lstm_cell(*args))
        args = lstm_inputs(5, 6, 7, torch.float64)
        torch.testing.assert_close(scripted(*args), lstm_cell(*args))
    assert not fallbacks


def test_kernel_outputs_are_fresh_contiguous_tensors_on_every_call(fallbacks) -> None:
    """The kernel's call allocates outputs like an input of their shape when one is contiguous (empty_like), else
    by their sizes; either way they are new tensors laid out as eager's (contiguous: the kernel takes row-major
    inputs only), on every call."""
    scripted = tsjit.script(two_outputs)
    layouts = [(torch.randn(3, 8), torch.randn(3, 8)), (torch.randn(3, 8), torch.randn(8)),
               (torch.randn(1, 8), torch.randn(3, 1)), (torch.randn(3, 8), torch.randn(3, 8)[:, :1])]
    for x, y in layouts * 2:
        before = (x.clone(), y.clone())
        a, b = scripted(x, y)
        expected = two_outputs(x, y)
        assert (a.stride(), b.stride()) == (expected[0].stride(), expected[1].stride())
        assert len({a.data_ptr(), b.data_ptr(), x.data_ptr(), y.data_ptr()}) == 4
        torch.testing.assert_close((a, b), expected)
        a.add_(100)
        b.add_(100)
        torch.testing.assert_close((x, y), before)
    assert not fallbacks


def test_the_lstm_cell_agrees_with_torch_jit(fallbacks) -> None:
    with torch.no_grad():
        args = lstm_inputs(4, 8, 16)
        reference = torch.jit.script(lstm_cell)
        expected = reference(*args)
        torch.testing.assert_close(tsjit.script(lstm_cell)(*args), expected)
        assert not fallbacks


SMALL_CHAIN = "def chain(x, y):\n    return torch.relu(x - y) * torch.exp(-y)\n"


def small_chain(x, y):
    return torch.relu(x - y) * torch.exp(-y)


def test_kernels_compile_in_the_background_and_replace_the_subgraph(monkeypatch, tmp_path) -> None:
    fusion.wait_for_kernels(600)  # earlier tests' kernels: not compiled into this test's cache
    monkeypatch.setenv("TSJIT_CACHE_DIR", str(tmp_path))  # nothing cached, on disk or in memory
    monkeypatch.setattr(compiler, "_loaded", LRUCache("compiler", compiler.loaded_limit))
    monkeypatch.delenv("TSJIT_SYNC_COMPILE", raising=False)
    release, started = threading.Event(), threading.Event()
    compile_ = compiler._compile

    def slow_compile(*args):
        started.set()
        assert release.wait(600)
        return compile_(*args)

    monkeypatch.setattr(compiler, "_compile", slow_compile)
    calls = count_fallbacks(monkeypatch)
    scripted = tsjit.CompilationUnit(SMALL_CHAIN).chain  # a new function: no plan, no kernel yet
    x, y = torch.randn(6), torch.randn(6)
    torch.testing.assert_close(scripted(x, y), small_chain(x, y))  # the profiling run: nothing fused yet
    for _ in range(2):  # while the kernel compiles, the calls run the subgraph and do not wait
        torch.testing.assert_close(scripted(x, y), small_chain(x, y))
    assert started.wait(120) and len(calls) == 2
    release.set()
    fusion.wait_for_kernels(600)
    torch.testing.assert_close(scripted(x, y), small_chain(x, y))
    assert len(calls) == 2 and len(list(tmp_path.rglob("*.so"))) == 1
