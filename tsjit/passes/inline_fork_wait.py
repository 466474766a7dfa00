"""Inline `prim::fork` subgraphs where they are forked and replace each `aten::wait` by the inlined result.

(TorchScript's InlineForkWait, torch/csrc/jit/passes/inline_fork_wait.cpp.) A fork may run its subgraph at any
time before the wait on its future, so running it where it is forked keeps the program's meaning; consumers
that have no asynchronous execution (MLIR's torch dialect, which has no fork/wait form) get a sequential graph:

    %fut : Future[Tensor] = prim::fork_0(%x)             %y : Tensor = aten::neg(%x)
    %r : Tensor = aten::wait(%fut)               ->      %s : Tensor = aten::sub(%y, %x, %one)
    %s : Tensor = aten::sub(%r, %x, %one)
    with prim::fork_0 = graph(%a : Tensor):
      %b : Tensor = aten::neg(%a)
      return (%b)

Only forks whose future is only waited on are inlined (a future stored in a list or returned stays a future);
forks in the inlined bodies (a forked function that forks again) are inlined in turn.
"""

from __future__ import annotations

from tsjit import log
from tsjit.ir.graph import Graph, Node
from tsjit.ir.symbols import aten, prim
from tsjit.passes.inliner import insert_graph


def inline_fork_wait(graph: Graph) -> bool:
    """Inline every fork whose future is only waited on, until none is left."""
    changed = False
    while True:
        fork = next((n for n in graph.all_nodes() if _inlinable(n)), None)
        if fork is None or not log.opt_allowed():
            return changed
        _inline_fork(graph, fork)
        changed = True


def _inlinable(node: Node) -> bool:
    return node.kind is prim.fork and all(use.user.kind is aten.wait for use in node.output().uses)


def _inline_fork(graph: Graph, fork: Node) -> None:
    with graph.insert_point_guard(fork):
        (result,) = insert_graph(graph, fork.g("Subgraph"), list(fork.inputs))
    for use in list(fork.output().uses):
        use.user.output().replace_all_uses_with(result)
        use.user.destroy()
    fork.destroy()
