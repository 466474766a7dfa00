"""Inlined call stacks: where an inlined node was called from (C++ InlinedCallStack).

Inlining copies a callee's nodes into its caller; each copy keeps the callee's source range (so graphs print
`# file:line:col` of the callee's line, as torch.jit's inlined graphs do) and gains the call that brought it
there. `Node.callstack` is a tuple of InlinedCall, outermost call first:

    def inner(x, y):                       def outer(x, y):
        return torch.mm(x, y)    <-            return inner(x * 2, y)

Inlining `inner` into `outer` gives `aten::mm` the source range of `torch.mm(x, y)` and the callstack
`(InlinedCall("inner", <range of "inner" in outer>),)`; inlining `outer` somewhere else puts outer's call site
in front. A run-time error at the node prints one TorchScript traceback frame per entry, then the node's own.
"""

from __future__ import annotations

from typing import NamedTuple

from tsjit.source.source_range import SourceRange


class InlinedCall(NamedTuple):
    """One call an inlined node went through: the function called, and the call's source range in its caller."""

    function_name: str
    source_range: SourceRange | None


def prefix_callstack(node, calls: tuple[InlinedCall, ...]) -> None:
    """Put `calls` (outermost first) in front of the callstack of `node` and of every node in its blocks."""
    node.callstack = calls + (node.callstack or ())
    for block in node.blocks:
        for inner in block.nodes():
            prefix_callstack(inner, calls)
