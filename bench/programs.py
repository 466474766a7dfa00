"""The benchmark programs, each built four ways from one description: an eager Python function, the same
function under torch.compile (inductor), a torch.jit function compiled from the same source, and a tsjit
Function running the equivalent graph text."""

from __future__ import annotations

from collections.abc import Callable

import torch

from tests.shared_programs import lstm_cell_s as lstm_cell  # the seeds' LSTM cell (jit-overview.md's LSTMCellS)
from tsjit.ir.parser import parse_ir
from tsjit.runtime.function import Function
from tsjit.runtime.futures import fork, wait

# the chain: unary ops of x, and binary ops of x and the second input y
CHAIN = ["sin", "add", "mul", "cos", "tanh", "sub", "relu", "neg", "sigmoid", "add"] * 10
_BINARY = {"add": "aten::add(%{x}, %y, %one)", "sub": "aten::sub(%{x}, %y, %one)", "mul": "aten::mul(%{x}, %y)"}


def chain_source(length: int = len(CHAIN)) -> str:
    """The Python source of `chain(x, y)`, the first `length` ops of CHAIN."""
    source = ["def chain(x, y):"]
    for op in CHAIN[:length]:
        source.append(f"    x = torch.{op}(x, y)" if op in _BINARY else f"    x = torch.{op}(x)")
    return "\n".join(source + ["    return x\n"])


def chain_variants() -> dict[str, Callable]:
    graph = ["graph(%x : Tensor, %y : Tensor):", "  %one : int = prim::Constant[value=1]()"]
    previous = "x"
    for i, op in enumerate(CHAIN):
        call = _BINARY[op].format(x=previous) if op in _BINARY else f"aten::{op}(%{previous})"
        graph.append(f"  %v{i} : Tensor = {call}")
        previous = f"v{i}"
    graph.append(f"  return (%{previous})\n")
    source = chain_source()
    eager = _eager("chain", source)
    scripted = torch.jit.CompilationUnit(source).chain
    return {"eager": eager, "torch.compile": torch.compile(eager), "torch.jit": scripted,
            "tsjit": Function("chain", parse_ir("\n".join(graph)))}


def _eager(name: str, source: str) -> Callable:
    namespace = {"torch": torch}
    exec(compile(source, f"<bench {name}>", "exec"), namespace)
    return namespace[name]


# fork4: ten matmuls per call, four calls on four different inputs (so no compiler can merge the calls)
MATMULS = 10
_WORK_SOURCE = "def work(a, b):\n" + "    a = torch.mm(a, b)\n" * MATMULS + "    return a\n"
_FORKED_SOURCE = _WORK_SOURCE + """
def forked(a0, a1, a2, a3, b):
    futures = [torch.jit.fork(work, a, b) for a in [a0, a1, a2, a3]]
    return torch.stack([torch.jit.wait(f) for f in futures])

def serial(a0, a1, a2, a3, b):
    return torch.stack([work(a, b) for a in [a0, a1, a2, a3]])
"""


def work_graph() -> str:
    lines = ["graph(%a : Tensor, %b : Tensor):"]
    previous = "a"
    for i in range(MATMULS):
        lines.append(f"  %m{i} : Tensor = aten::mm(%{previous}, %b)")
        previous = f"m{i}"
    return "\n".join(lines + [f"  return (%{previous})"])


def forked_graph() -> str:
    """Four prim::fork nodes running the work subgraph (printed once per node), then four aten::wait."""
    lines = ["graph(%a0 : Tensor, %a1 : Tensor, %a2 : Tensor, %a3 : Tensor, %b : Tensor):",
             "  %zero : int = prim::Constant[value=0]()"]
    lines += [f"  %f{i} : Future[Tensor] = prim::fork_{i}(%a{i}, %b)" for i in range(4)]
    lines += [f"  %r{i} : Tensor = aten::wait(%f{i})" for i in range(4)]
    lines += ["  %rs : Tensor[] = prim::ListConstruct(%r0, %r1, %r2, %r3)",
              "  %out : Tensor = aten::stack(%rs, %zero)", "  return (%out)"]
    bodies = [work_graph().replace("graph(", f"with prim::fork_{i} = graph(", 1) for i in range(4)]
    return "\n".join(lines + bodies) + "\n"


def fork_variants() -> dict[str, Callable]:
    """Each variant takes (a0, a1, a2, a3, b) and returns the four results stacked."""
    compiled = torch.jit.CompilationUnit(_FORKED_SOURCE)
    work = _eager("work", _WORK_SOURCE)
    compiled_serial = torch.compile(lambda a, b: torch.stack([work(x, b) for x in a]))
    tsjit_work = Function("work", parse_ir(work_graph()))
    tsjit_forked = Function("forked", parse_ir(forked_graph()))
    return {
        "eager serial": lambda *a, b: torch.stack([work(x, b) for x in a]),
        "torch.compile serial": lambda *a, b: compiled_serial(a, b),
        "torch.jit serial": lambda *a, b: compiled.serial(*a, b),
        "torch.jit forked": lambda *a, b: compiled.forked(*a, b),
        "tsjit serial": lambda *a, b: torch.stack([tsjit_work(x, b) for x in a]),
        "tsjit forked (graph)": lambda *a, b: tsjit_forked(*a, b),
        "tsjit.fork (Python)": lambda *a, b: torch.stack([wait(f) for f in [fork(tsjit_work, x, b) for x in a]]),
    }


def lstm_variants() -> dict[str, Callable]:
    """The cell six ways: "tsjit script" is what users call (arguments checked against the schema); the other two
    tsjit rows run the same graph on Functions directly, with and without the executor's optimization pipeline."""
    import tsjit

    scripted = tsjit.script(lstm_cell)
    graph = scripted.graph_function.optimized_graph()
    return {"eager": lstm_cell, "torch.compile": torch.compile(lstm_cell), "torch.jit": torch.jit.script(lstm_cell),
            "tsjit script": scripted, "tsjit": Function("lstm_cell", graph.copy()),
            "tsjit unoptimized": Function("lstm_cell", graph.copy(), optimize=False)}


def script_variants(function: Callable) -> dict[str, Callable]:
    """A Python function four ways (eager, torch.compile, torch.jit, tsjit): what users call, for workloads
    where per-call overhead is the question."""
    import tsjit

    return {"eager": function, "torch.compile": torch.compile(function), "torch.jit": torch.jit.script(function),
            "tsjit script": tsjit.script(function)}


# pointwise: a few elementwise ops on tiny tensors, where a call costs nothing but its overhead
def pointwise(x, y):
    z = torch.sigmoid(x * y + x)
    return torch.tanh(z) * y - x


# lstm steps: the cell called from a scripted loop over time (the call inlined, the loop run by the plan)
def lstm_steps(xs, hx, cx, w_ih, w_hh, b_ih, b_hh):
    for t in range(xs.size(0)):
        hx, cx = lstm_cell(xs[t], hx, cx, w_ih, w_hh, b_ih, b_hh)
    return hx, cx


# mlp: nn modules whose forward checks its input (BatchNorm1d's dim check), scripted as modules
def mlp_module() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.BatchNorm1d(64), torch.nn.ReLU(),
                               torch.nn.Linear(64, 32), torch.nn.BatchNorm1d(32), torch.nn.ReLU()).eval()


# encoder: nn.TransformerEncoderLayer (eval), whose forward is mostly checks and branches on its Optional masks
def encoder_module() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.TransformerEncoderLayer(16, 2, 32).eval()


def module_variants(build: Callable[[], torch.nn.Module]) -> dict[str, Callable]:
    """A module six ways, each a callable of one input (tsjit rows as in lstm_variants; the Functions get the
    defaults of the other arguments, as the scripted module's call would)."""
    from tsjit.api.function import bind_arguments
    from tsjit.api.module import script_module
    from tsjit.runtime.function import runtime_function

    module, scripted = build(), script_module(build())
    graph = runtime_function(scripted.forward.function).graph
    optimized, unoptimized = Function("forward", graph.copy()), Function("forward", graph.copy(), optimize=False)
    schema = scripted.forward.schema

    def inputs(x):
        return bind_arguments(schema, (scripted._c, x), {})

    return {"eager": module, "torch.compile": torch.compile(module), "torch.jit": torch.jit.script(build()),
            "tsjit script": scripted, "tsjit": lambda x: optimized(*inputs(x)),
            "tsjit unoptimized": lambda x: unoptimized(*inputs(x))}


# training: forward and backward, the parameters' gradients reset each round (what an optimizer step starts with)
def mlp_function(x, w1, b1, w2, b2, w3, b3):
    h = torch.relu(torch.nn.functional.linear(x, w1, b1))
    h = torch.relu(torch.nn.functional.linear(h, w2, b2))
    return torch.nn.functional.linear(h, w3, b3)


def training_variants(function: Callable, parameters: tuple[torch.Tensor, ...], with_inputs: int) -> dict:
    """One training step of `function` four ways: zero the gradients, call it on (inputs..., parameters...),
    sum every output, backward. Each variant returns the loss and the parameters' gradients."""
    def step(run: Callable) -> Callable:
        def train(*inputs):
            for parameter in parameters:
                parameter.grad = None
            outputs = run(*inputs[:with_inputs], *parameters)
            outputs = outputs if isinstance(outputs, tuple) else (outputs,)
            loss = sum(output.sum() for output in outputs)
            loss.backward()
            return (loss.detach(), *[p.grad for p in parameters])

        return train

    return {name: step(run) for name, run in script_variants(function).items()}
