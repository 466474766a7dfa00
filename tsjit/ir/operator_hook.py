"""The one way up from ir to ops: what a Node, a Graph or alias analysis asks the operator registry.

ops sits above ir (operators, their schemas and overload matching are written in terms of Graph, Node and
Value), yet three IR operations need operators: a node's schema (`Node.schema`, matched on its input types),
`Graph.insert` (overload matching with implicit conversions, constants inserted), and alias analysis asking
whether an operator was registered `conservative`. They reach ops only through these functions; each imports
ops when called, which breaks the real cycle ir.graph -> ops.matching -> ir.graph. tests/test_layering.py
allows exactly these edges from ir to ops.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tsjit.ir.graph import Graph, Node
    from tsjit.ir.schema import FunctionSchema


def find_schema_for_node(node: Node) -> FunctionSchema | None:
    """The schema of the node's operator that fits its input types (None when none does)."""
    from tsjit.ops import matching  # breaks a real cycle: ops imports ir

    return matching.find_schema_for_node(node)


def node_matches_schema(node: Node, schema: FunctionSchema) -> bool:
    from tsjit.ops import matching  # breaks a real cycle: ops imports ir

    return matching.node_matches_schema(node, schema)


def insert_operator_call(graph: Graph, op: Any, args: Any, kwargs: dict[str, Any], source_range: Any = None) -> Any:
    """Insert a call of operator `op` (see tsjit.ops.matching.insert_operator_call)."""
    from tsjit.ops import matching  # breaks a real cycle: ops imports ir

    return matching.insert_operator_call(graph, op, args, kwargs, source_range=source_range)


def is_conservative(schema: FunctionSchema) -> bool:
    """Whether the operator of `schema` was registered with conservative=True (asked for nearly every node by each
    dead code elimination: the registry's function is looked up once)."""
    if not _REGISTRY_IS_CONSERVATIVE:
        from tsjit.ops import registry  # breaks a real cycle: ops imports ir

        _REGISTRY_IS_CONSERVATIVE.append(registry.is_conservative)
    return _REGISTRY_IS_CONSERVATIVE[0](schema)


_REGISTRY_IS_CONSERVATIVE: list = []
