"""Graphs as pictures: a Graph as Graphviz DOT source (`graph_to_dot`), and DOT as SVG by Graphviz's `dot`
(`render_svg`).

The picture shows what the printed text shows, laid out top to bottom:

- every node is a box with its kind and, briefly, its attributes; its printed line is the box's tooltip;
- every use of a value is an edge from its producer to its user, labelled `%name : type`;
- the graph's inputs and outputs, and those of every block and subgraph, are tables with one cell per value;
- a node with blocks (prim::If, prim::Loop) or graph attributes (the Subgraph of prim::FusionGroup,
  prim::DifferentiableGraph, prim::fork) is a cluster titled by its kind, holding the node's box and one nested
  cluster per block (`block0`, ...) or graph attribute (`Subgraph`); dashed edges lead from the node's box into a
  block's inputs and back from its outputs.

`styles` gives nodes a class from STYLES (the pass diff's `removed`, `added` and `kept`): the class colours the
box and becomes the SVG element's class, where tests and style sheets find it. DOT ids follow program order:
`<prefix>n<k>` for the k-th node (the nodes of subgraphs counted where their owner stands), `<prefix>p<k>` and
`<prefix>r<k>` for the input and output tables, `cluster_<prefix>c<k>` for clusters; two graphs drawn into one
picture differ by their prefix.

Nothing here imports torch (the printer, which does, is imported when a label is written); rendering needs
Graphviz's `dot` on PATH (Debian's package `graphviz`).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping

from tsjit.errors import GraphvizError, IRError
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.symbols import Symbol

# node class -> DOT attributes of its box
STYLES: dict[str, dict[str, str]] = {
    "plain": {},
    "removed": {"fillcolor": "#f8cccc", "color": "#c62828", "fontcolor": "#7f0000", "penwidth": "2"},
    "added": {"fillcolor": "#cdeccd", "color": "#2e7d32", "fontcolor": "#0b3d0b", "penwidth": "2"},
    "kept": {"fillcolor": "#eeeeee", "color": "#9e9e9e", "fontcolor": "#424242"},
}
LABEL_LIMIT = 60  # characters of an attribute list or edge label; the tooltip holds the whole line
DOT_TIMEOUT_SECONDS = 300.0
_HEADER = (
    "rankdir=TB; newrank=true; fontname=Helvetica; fontsize=12;",
    'node [shape=box, style="rounded,filled", fillcolor=white, fontname=Helvetica, fontsize=11];',
    'edge [fontname=Helvetica, fontsize=9, color="#555555", fontcolor="#333333"];',
)
_TABLE_NODE = "shape=plaintext, margin=0"
_TABLE = 'BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="4" BGCOLOR="#e3ecf7" COLOR="#5b7bb2"'
_CLUSTER = 'style="rounded,filled"; fillcolor="#fafafa"; color="#8a8a8a";'
_LINK = 'style=dashed, color="#8a8a8a", arrowhead=empty'


def graph_to_dot(graph: Graph, styles: Mapping[Node, str] | None = None) -> str:
    """The DOT source of one graph's picture."""
    return digraph(graph_statements(graph, styles=styles))


def graph_to_svg(graph: Graph, styles: Mapping[Node, str] | None = None) -> str:
    """The SVG picture of one graph (needs Graphviz's `dot`)."""
    return render_svg(graph_to_dot(graph, styles))


def digraph(statements: list[str], name: str = "tsjit") -> str:
    """A DOT digraph of `statements` with tsjit's look."""
    body = [*_HEADER, *statements]
    return f"digraph {quote(name)} {{\n" + "".join(f"  {line}\n" for line in body) + "}\n"


def graph_statements(graph: Graph, prefix: str = "", styles: Mapping[Node, str] | None = None,
                     title: str | None = None) -> list[str]:
    """The DOT statements drawing `graph` (inside a cluster titled `title` when one is given)."""
    drawing = _Drawing(prefix, styles or {})
    statements = drawing.block(graph.block, None, "graph inputs", "graph outputs") + drawing.edges
    if title is None:
        return statements
    return [f"subgraph {quote('cluster_' + prefix)} {{", f"label={quote(title)}; fontsize=14;", *statements, "}"]


def render_svg(dot_source: str) -> str:
    """`dot -Tsvg` of `dot_source`; raises GraphvizError when `dot` is missing or fails."""
    executable = shutil.which("dot")
    if executable is None:
        raise GraphvizError("Graphviz's `dot` is not installed: apt-get install graphviz")
    try:
        finished = subprocess.run([executable, "-Tsvg"], input=dot_source, capture_output=True, text=True,
                                  timeout=DOT_TIMEOUT_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        raise GraphvizError(f"`dot -Tsvg` did not finish within {DOT_TIMEOUT_SECONDS:.0f} s") from None
    if finished.returncode != 0:
        raise GraphvizError(f"`dot -Tsvg` failed with exit status {finished.returncode}: "
                            f"{finished.stderr.strip() or 'no message'}")
    return finished.stdout


def quote(text: str) -> str:
    """`text` as a quoted DOT string whose label shows it literally (line breaks kept)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class _Drawing:
    """One graph's statements: node and table declarations nested in clusters, and the edges (kept apart: an
    edge naming an undeclared node would declare it in whichever cluster the edge stands)."""

    def __init__(self, prefix: str, styles: Mapping[Node, str]):
        self.prefix = prefix
        self.styles = styles
        self.edges: list[str] = []
        self.sources: dict[Value, str] = {}  # value -> the DOT endpoint producing it ("n3", "p0:v1")
        self.counts: dict[str, int] = {}

    def fresh(self, letter: str) -> str:
        count = self.counts.get(letter, 0)
        self.counts[letter] = count + 1
        return f"{self.prefix}{letter}{count}"

    def block(self, block: Block, owner: str | None, inputs_title: str, outputs_title: str) -> list[str]:
        """A block's input table, nodes and output table; `owner` is its node's box (None: the graph)."""
        statements = []
        if block.inputs or owner is None:
            table = self.fresh("p")
            statements.append(_table(table, inputs_title, block.inputs, title_first=True))
            self.sources.update((value, f"{table}:v{index}") for index, value in enumerate(block.inputs))
            if owner is not None:
                self.edges.append(f"{owner} -> {table} [{_LINK}];")
        for node in block.nodes():
            first = self.counts.get("n", 0)
            statements += self.node(node)
            if owner is not None:  # the block below its node's box, whatever its nodes depend on
                self.edges.append(f"{owner} -> {self.prefix}n{first} [style=invis];")
        if block.outputs or owner is None:
            table = self.fresh("r")
            statements.append(_table(table, outputs_title, block.outputs, title_first=False))
            for index, value in enumerate(block.outputs):
                self.use(value, f"{table}:v{index}")
            if owner is not None:
                self.edges.append(f"{table} -> {owner} [{_LINK}, constraint=false];")
        return statements

    def node(self, node: Node) -> list[str]:
        """A node's box, and the cluster around it and its blocks and held graphs when it has any."""
        box = self.fresh("n")
        style = self.styles.get(node, "plain")
        attributes = {"label": _node_label(node), "tooltip": _first_line(node), **STYLES[style]}
        if style != "plain":
            attributes["class"] = style
        declaration = f"{box} [{', '.join(f'{k}={quote(v)}' for k, v in attributes.items())}];"
        for value in node.inputs:
            self.use(value, box)
        nested = [(f"block{index}", block) for index, block in enumerate(node.blocks)]
        nested += [(name, held.block) for name, held in node.held_graphs()]
        self.sources.update((value, box) for value in node.outputs)
        if not nested:
            return [declaration]
        statements = [f"subgraph {quote('cluster_' + self.fresh('c'))} {{", f"label={quote(str(node.kind))};",
                      _CLUSTER, declaration]
        for title, block in nested:
            statements += [f"subgraph {quote('cluster_' + self.fresh('c'))} {{", f"label={quote(title)};",
                           'style="rounded,dashed"; fillcolor=white;',
                           *self.block(block, box, f"{title} inputs", f"{title} outputs"), "}"]
        return [*statements, "}"]

    def use(self, value: Value, target: str) -> None:
        source = self.sources.get(value)
        if source is None:
            raise IRError(f"cannot draw a use of %{value.debug_name}: it is not defined before its use")
        self.edges.append(f"{source} -> {target} [label={quote(_shorten(f'%{value.debug_name} : {value.type}'))}];")


def _table(name: str, title: str, values: tuple[Value, ...], title_first: bool) -> str:
    """A row for the title and a row of one cell per value, each cell a port (`v0`, ...) that edges attach to. An
    HTML-like label rather than a record shape: dot loses edges between a record and a neighbour in its rank."""
    rows = [f'<TR><TD COLSPAN="{max(len(values), 1)}">{_html(title)}</TD></TR>']
    if values:
        rows.append("<TR>" + "".join(f'<TD PORT="v{index}">{_html("%" + value.debug_name)}</TD>'
                                     for index, value in enumerate(values)) + "</TR>")
    table = "".join(rows if title_first else rows[::-1])
    return f"{name} [{_TABLE_NODE}, label=<<TABLE {_TABLE}>{table}</TABLE>>];"


def _html(text: str) -> str:
    """`text` escaped for an HTML-like label."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _node_label(node: Node) -> str:
    # deferred: the printer imports torch (tensor constants), and this module stays torch-free until it draws
    from tsjit.ir.printer import format_attributes

    drawn = tuple(name for name in node.attribute_names() if _is_drawn_elsewhere(node, name))
    if len(drawn) == len(node.attribute_names()):
        return str(node.kind)
    return f"{node.kind}\n{_shorten(format_attributes(node, skip=drawn)[1:-1])}"


def _is_drawn_elsewhere(node: Node, name: Symbol) -> bool:
    """Graph attributes are clusters, and a PythonOp's Python object has no text."""
    return node.kind_of(name) in ("g", "gs") or name.name == "pyobj"


def _first_line(node: Node) -> str:
    # deferred: the printer imports torch (tensor constants), and this module stays torch-free until it draws
    from tsjit.ir.printer import print_node

    return print_node(node).split("\n", 1)[0]


def _shorten(text: str) -> str:
    return text if len(text) <= LABEL_LIMIT else text[: LABEL_LIMIT - 3] + "..."
