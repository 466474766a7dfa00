"""The one shape of a pass test (STYLE.md "Text is the test language"):

    graph = check_pass(eliminate_dead_code, '''
    graph(%x : Tensor):
      %y : Tensor = aten::neg(%x)
      return (%x)''', absent=["aten::neg"])

IR text in, the pass run through run_pass (so TSJIT_LINT applies), the `changed` flag asserted and no change on a
second run (`changed=None`: the flag must say whether the printed graph changed; `idempotent=False` for a pass
that, as its torch.jit original, changes the graph on every run), the graph linted, the output
checked (`present`: lines that must appear in this order, each a substring; `absent`: substrings that must not
appear), and the graph run before and after on random inputs (made from the input types, or given as `inputs`)
with the results (or the errors raised) compared. `oracle` is torch.jit's pass (`torch._C._jit_pass_dce`, or a
function of a torch graph) run on the same text parsed by torch._C.parse_ir: the graphs must print the same up
to value names. `constants` turns the named graph inputs into tensor constants first (a frozen module's
weights, which IR text cannot spell).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from typing import Any

import torch

from tsjit.ir import types as T
from tsjit.ir.graph import Graph
from tsjit.ir.parser import parse_ir
from tsjit.passes.pass_runner import run_pass
from tsjit.runtime.run import run_graph


def check_pass(pass_fn: Callable[..., bool], text: str, *, changed: bool | None = True,
               present: Sequence[str] = (), absent: Sequence[str] = (), inputs: Sequence[tuple] | None = None,
               oracle: str | Callable[[Any], Any] | None = None, run: bool = True, idempotent: bool = True,
               constants: dict[str, torch.Tensor] | None = None, **kwargs: Any) -> Graph:
    """Run `pass_fn(graph, **kwargs)` on the graph of `text` and check it as the module docstring says."""
    original, graph = parse_with_constants(text, constants or {}), parse_with_constants(text, constants or {})
    reported = run_pass(pass_fn, graph, **kwargs)
    expected = str(graph) != str(original) if changed is None else changed
    assert reported is expected, f"changed should be {expected}:\n{graph}"
    graph.lint()
    file_check(str(graph), present, absent)
    if idempotent:
        assert run_pass(pass_fn, graph, **kwargs) is False, f"a second run changed the graph again:\n{graph}"
        graph.lint()
    if oracle is not None:
        theirs = torch_graph_after(text, oracle)
        assert normalized(str(graph)) == normalized(theirs), f"torch.jit:\n{theirs}\ntsjit:\n{graph}"
    if run:
        for args in inputs if inputs is not None else random_inputs(original):
            assert_same(_outcome(graph, args), _outcome(original, args))
    return graph


def parse_with_constants(text: str, constants: dict[str, torch.Tensor]) -> Graph:
    """The graph of `text` with the inputs named in `constants` replaced by those tensors as constants."""
    graph = parse_ir(text)
    for value in [v for v in graph.inputs if v.debug_name in constants]:
        with graph.insert_point_guard(next(iter(graph.nodes()), graph.return_node)):
            value.replace_all_uses_with(graph.insert_constant(constants[value.debug_name]))
        graph.erase_input(graph.inputs.index(value))
    return graph


def _outcome(graph: Graph, args: tuple) -> Any:
    """The graph's result, or the error it raised (type and message); random ops draw the same numbers."""
    torch.manual_seed(0)
    try:
        return run_graph(graph, *args, optimize=False)
    except Exception as error:  # the same error before and after is what the pass must keep
        return (type(error).__name__, str(error).splitlines()[0] if str(error) else "")


def file_check(text: str, present: Sequence[str], absent: Sequence[str]) -> None:
    """`present` appear in this order (each after the previous one's line); `absent` appear nowhere."""
    lines, position = text.splitlines(), 0
    for pattern in present:
        found = next((i for i in range(position, len(lines)) if pattern in lines[i]), None)
        assert found is not None, f"{pattern!r} not found after line {position} of:\n{text}"
        position = found + 1
    for pattern in absent:
        assert pattern not in text, f"{pattern!r} should be gone from:\n{text}"


def kinds(graph: Graph) -> list[str]:
    return [str(node.kind) for node in graph.all_nodes()]


def torch_graph_after(text: str, oracle: str | Callable[[Any], Any]) -> str:
    """The text of torch.jit's graph after its pass. Nodes without outputs (` = prim::Print(%x)` in tsjit's
    syntax) lose their ` = ` for torch._C.parse_ir, which spells them that way."""
    text = re.sub(r"^( *) = ", r"\1", text.strip(), flags=re.MULTILINE)
    graph = torch._C.parse_ir(text, parse_tensor_constants=True)
    (getattr(torch._C, oracle) if isinstance(oracle, str) else oracle)(graph)
    return str(graph)


def normalized(text: str) -> str:
    """The text with values renamed %v0, %v1, ... in order of appearance."""
    names: dict[str, str] = {}
    return re.sub(r"%[\w.]+", lambda m: names.setdefault(m.group(0), f"%v{len(names)}"), text.strip())


def random_inputs(graph: Graph, count: int = 3, seed: int = 0) -> list[tuple]:
    """`count` argument tuples for the graph's inputs, from their types (tensors of their refined sizes and
    dtype, or 2x3 floats)."""
    generator = random.Random(seed)
    torch.manual_seed(seed)
    return [tuple(_random_value(v.type, generator) for v in graph.inputs) for _ in range(count)]


def _random_value(type_: T.Type, generator: random.Random) -> Any:
    if isinstance(type_, T.TensorType):
        sizes = [s if s is not None else 3 for s in type_.sizes] if type_.sizes is not None else [2, 3]
        dtype = type_.dtype or torch.float32
        if dtype.is_floating_point:
            return torch.randn(sizes, dtype=dtype)
        return torch.randint(0, 5, sizes).to(dtype)
    if isinstance(type_, T.BoolType):
        return generator.random() < 0.5
    if isinstance(type_, T.IntType):
        return generator.randint(0, 5)
    if isinstance(type_, T.FloatType):
        return generator.uniform(-2, 2)
    if isinstance(type_, T.TupleType):
        return tuple(_random_value(t, generator) for t in type_.elements)
    if isinstance(type_, T.OptionalType):
        return None if generator.random() < 0.5 else _random_value(type_.elem, generator)
    if isinstance(type_, T.NoneType):
        return None
    if isinstance(type_, T.ListType):
        return [_random_value(type_.elem, generator) for _ in range(2)]
    if isinstance(type_, T.StringType):
        return generator.choice(["a", "bc"])
    raise NotImplementedError(f"no random input of type {type_}: give `inputs`")


def assert_same(actual: Any, expected: Any) -> None:
    """Equal results: tensors close (NaNs equal, dtypes and shapes exact), containers element by element."""
    if isinstance(expected, torch.Tensor):
        torch.testing.assert_close(actual, expected, equal_nan=True)
    elif isinstance(expected, tuple | list):
        assert type(actual) is type(expected) and len(actual) == len(expected), f"{actual!r} != {expected!r}"
        for a, e in zip(actual, expected):
            assert_same(a, e)
    elif isinstance(expected, float) and expected != expected:
        assert actual != actual, f"{actual!r} != nan"
    else:
        assert actual == expected and type(actual) is type(expected), f"{actual!r} != {expected!r}"
