"""TorchScript tracebacks: the message of a run-time error, as torch.jit prints it.

A node fails; the calls that led to it are the call nodes of the frames above it (interpreter frames, or the
generated plans of callers) and, for a node inlined from other functions, its InlinedCall stack. Every one of
them with a source range becomes a frame, outermost first, and the original error ends the message:

    The following operation failed in the TorchScript interpreter.
    Traceback of TorchScript (most recent call last):
      File "model.py", line 9, in outer
        a = x * 2
        return inner(a, y)
               ~~~~~ <--- HERE
      File "model.py", line 5, in inner
        z = x + 1
        return torch.mm(z, y)
               ~~~~~~~~ <--- HERE
    RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)

A node without source text (a graph parsed from IR text, a traced node, which knows its Python line only) is
named by its IR instead. The message is built
only when something fails: the plans that run graphs pay nothing for it until then.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tsjit.errors import RuntimeTsjitError
from tsjit.ir.graph import Node, Value
from tsjit.ir.symbols import prim
from tsjit.source.source_range import SourceRange

HEADER = ("The following operation failed in the TorchScript interpreter.\n"
          "Traceback of TorchScript (most recent call last):\n")
_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)", re.M)


def format_traceback(error: BaseException, nodes: Sequence[Node]) -> str:
    """The message for `error`, raised by `nodes[0]`, which was called from `nodes[1]`, ... (innermost first)."""
    frames = [frame for node in reversed(nodes) for frame in node_frames(node)]
    return HEADER + "".join(frames) + original_error(error, nodes[0])


def node_frames(node: Node) -> list[str]:
    """The traceback frames of one node: its inlined calls, outermost first, then the node itself."""
    calls = node.callstack or ()
    ranges = [call.source_range for call in calls] + [node.source_range]
    if ranges[-1] is None and not calls:
        return [f"  at {describe_node(node)}\n"]
    names = [enclosing_function_name(ranges[0])] + [call.function_name.rsplit(".", 1)[-1] for call in calls]
    return [_frame(name, where, node) for name, where in zip(names, ranges) if where is not None]


def _frame(function_name: str | None, where, node: Node) -> str:
    """A frame with source text; a traced node knows only its Python line (tracer.SourceLocation)."""
    if isinstance(where, SourceRange):
        return where.highlight(function_name=function_name)
    return f"  at {describe_node(node)}  # {where.highlight()}\n"


def original_error(error: BaseException, node: Node) -> str:
    """The last line, as torch.jit ends its message: `RuntimeError: ...` for an operator's error, the qualified
    class for an exception the program raised (`builtins.ValueError: ...`), an assert's message as it is."""
    if type(error) is RuntimeTsjitError:
        return f"{error}\n"
    if node.kind is prim.RaiseException:
        return f"{type(error).__module__}.{type(error).__qualname__}: {error}\n"
    return f"{type(error).__name__}: {error}\n"


def enclosing_function_name(source_range) -> str | None:
    """The name of the innermost `def` around a range of Python source (the frame's function), if any."""
    if not isinstance(source_range, SourceRange):
        return None
    text = source_range.source.text
    line_start = text.rfind("\n", 0, source_range.start) + 1
    indent = len(text[line_start:]) - len(text[line_start:].lstrip(" \t"))
    name = None
    for match in _DEF.finditer(text, 0, line_start):
        if len(match.group(1)) < indent:
            name = match.group(2)
    return name


def describe_node(node: Node) -> str:
    """One line naming a node: `%y : Tensor = aten::mul(%x, %2)` (without its blocks). An input a prim::profile
    passes on (the profiling executor's first runs) is named as the value it profiles."""
    outputs = ", ".join(f"%{v.debug_name} : {v.type}" for v in node.outputs)
    inputs = ", ".join(f"%{_unprofiled(v).debug_name}" for v in node.inputs)
    call = f"{node.kind}({inputs})"
    return f"{outputs} = {call}" if outputs else call


def _unprofiled(value: Value) -> Value:
    return value.node.input() if value.node.kind is prim.profile and value.node.inputs else value
