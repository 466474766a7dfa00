"""A pass's effect as one picture: the graph before and after the pass side by side, the nodes the pass removed
red on the left, the nodes it added green on the right, the nodes it kept grey on both sides.

How nodes are matched: by identity. Passes rewrite the graph in place, so a node that survives a pass is the very
Node object it was before; `diff_pass` keeps a copy of the graph for the left picture and pairs each original node
with its copy by position (Graph.copy clones every block and held subgraph in program order, so the k-th node of
`nodes_with_held_graphs` of the copy is the copy of the k-th of the original). A node the pass destroyed is removed,
a node not there before is added, and a node rebuilt rather than edited shows as removed and added: the picture
tells what the pass did to the graph's objects, not what an ideal diff of the text would say. A kept node whose
inputs changed stays grey; its edges show the change.

    diff = diff_pass("eliminate_common_subexpression", graph)   # runs the pass on `graph`, in place
    open("cse.svg", "w").write(diff.svg())
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tsjit.errors import IRError
from tsjit.ir.graph import Graph, Node
from tsjit.ir.graphviz import digraph, graph_statements, render_svg
from tsjit.passes import registry
from tsjit.passes.pass_runner import run_pass


@dataclass
class PassDiff:
    """What one pass did to a graph: the graph before (a copy), after (the graph itself), and the nodes it
    removed (nodes of `before`) and added (nodes of `after`)."""

    name: str
    before: Graph
    after: Graph
    changed: bool
    removed: list[Node] = field(default_factory=list)
    added: list[Node] = field(default_factory=list)

    def dot(self) -> str:
        """Both pictures side by side in one DOT digraph."""
        removed, added = set(self.removed), set(self.added)
        before = {node: "removed" if node in removed else "kept" for node in self.before.nodes_with_held_graphs()}
        after = {node: "added" if node in added else "kept" for node in self.after.nodes_with_held_graphs()}
        verdict = "changed" if self.changed else "unchanged"
        return digraph(graph_statements(self.before, "before_", before, f"before {self.name}")
                       + graph_statements(self.after, "after_", after, f"after {self.name} ({verdict})"),
                       name=f"{self.name} diff")

    def svg(self) -> str:
        """The picture (needs Graphviz's `dot`)."""
        return render_svg(self.dot())


def diff_pass(pass_: str | Callable[..., bool], graph: Graph) -> PassDiff:
    """Run a pass (a registry name or alias, or the function) on `graph` in place through `run_pass`, and say
    what it removed and added."""
    function = registry.lookup(pass_).load() if isinstance(pass_, str) else pass_
    before = graph.copy()
    originals = list(graph.nodes_with_held_graphs())
    copies = list(before.nodes_with_held_graphs())
    if len(copies) != len(originals):
        raise IRError(f"the copy of the graph has {len(copies)} nodes, the graph {len(originals)}")
    copy_of = dict(zip(originals, copies))
    changed = run_pass(function, graph)
    after = list(graph.nodes_with_held_graphs())
    survivors = set(after)
    return PassDiff(function.__name__, before, graph, changed,
                    removed=[copy_of[node] for node in originals if node not in survivors],
                    added=[node for node in after if node not in copy_of])
