"""Batching matrix products: a sum of several aten::mm results becomes one prim::MMTreeReduce (TorchScript's
BatchMM, its tree reduction).

(seed: jit-overview.md "Post-derivative optimization".) A backward graph of a recurrent loop sums the weight's
gradient over the steps, one product per step, each a tiny matmul:

    %a : Tensor = aten::mm(%h0t, %g0)
    %b : Tensor = aten::mm(%h1t, %g1)
    %s : Tensor = aten::add(%a, %b, %one)     ->    %r : Tensor = prim::MMTreeReduce(%h0t, %h1t, %h2t, %g0, %g1, %g2)
    %c : Tensor = aten::mm(%h2t, %g2)
    %r : Tensor = aten::add(%s, %c, %one)

`sum_i mm(A_i, B_i)` is `mm(cat(A_i, dim=1), cat(B_i, dim=0))`: one matmul over the concatenated operands, which
costs about one step's product. A tree is a maximal set of aten::add nodes (alpha the constant 1) whose operands
are aten::mm results or other such adds, each read only by the tree, all in one block; it is replaced when it has
at least MIN_TREE_SIZE products, none of whose operands a node between it and the root writes (AliasDb). The
operands' shapes are not known here (backward graphs are not profiled): prim::MMTreeReduce checks them when it
runs and adds the products one by one when they do not concatenate (the adds broadcast, or dtypes differ), see
tsjit/ops/builtins/tensor_ops.py. Like fusion, it is a post-derivative optimization: graphs with an input that
requires grad are left alone.
"""

from __future__ import annotations

from tsjit import log
from tsjit.ir.alias_analysis import AliasDb
from tsjit.ir.constants import constant_value
from tsjit.ir.graph import Graph, Node, Value
from tsjit.ir.symbols import aten, prim
from tsjit.ir.types import TensorType, requires_grad

MIN_TREE_SIZE = 3


def batch_mm(graph: Graph) -> bool:
    """Replace sums of at least MIN_TREE_SIZE matrix products by prim::MMTreeReduce; whether any was."""
    if any(requires_grad(value.type) for value in graph.inputs):
        return False
    products = [n for n in graph.all_nodes() if n.kind is aten.mm]
    if len(products) < MIN_TREE_SIZE:
        return False
    roots = list(dict.fromkeys(root for n in products if (root := _tree_root(n)) is not None))
    trees = [(root, leaves) for root in roots if len(leaves := _leaves(root)) >= MIN_TREE_SIZE]
    if not trees:
        return False
    alias_db = AliasDb(graph)
    trees = [(root, leaves) for root, leaves in trees if not _operands_written_before(root, leaves, alias_db)]
    changed = False
    for root, leaves in trees:
        if not log.opt_allowed():
            break
        _replace_tree(graph, root, leaves)
        changed = True
    return changed


def _is_sum(node: Node) -> bool:
    """`aten::add(a, b, 1)` of two tensors (the int constant 1 as alpha)."""
    if node.kind is not aten.add or len(node.inputs) != 3:
        return False
    alpha = node.inputs[2].node
    return (alpha.kind is prim.Constant and type(constant_value(alpha)) is int and constant_value(alpha) == 1
            and all(isinstance(v.type, TensorType) for v in node.inputs[:2]))


def _only_use(value: Value) -> Node | None:
    """The node reading `value`, when exactly one node reads it once."""
    return value.uses[0].user if len(value.uses) == 1 else None


def _tree_root(product: Node) -> Node | None:
    """The last add of the tree a product feeds (None when its result is not summed)."""
    root = None
    node = _only_use(product.output())
    while node is not None and _is_sum(node) and node.owning_block is product.owning_block:
        root = node
        user = _only_use(node.output())
        node = user if user is not None and _is_sum(user) and user.owning_block is node.owning_block else None
    return root


def _leaves(root: Node) -> list[Node]:
    """The products a tree sums, in operand order; empty when an operand is neither a product nor a sum."""
    leaves: list[Node] = []
    pending = list(reversed(root.inputs[:2]))
    while pending:
        operand = pending.pop()
        producer = operand.node
        if producer.owning_block is not root.owning_block or len(operand.uses) != 1:
            return []
        if producer.kind is aten.mm:
            leaves.append(producer)
        elif _is_sum(producer):
            pending += reversed(producer.inputs[:2])
        else:
            return []
    return leaves


def _operands_written_before(root: Node, leaves: list[Node], alias_db: AliasDb) -> bool:
    """Whether a node between the first product and the root writes memory a product's operands may alias
    (the products move down to the root)."""
    operands = [v for leaf in leaves for v in leaf.inputs]
    first = leaves[0]
    for leaf in leaves:
        first = leaf if leaf.is_before(first) else first
    node = first.next
    while node is not None and node is not root:
        if alias_db.writes_to_alias(node, operands):
            return True
        node = node.next
    return False


def _replace_tree(graph: Graph, root: Node, leaves: list[Node]) -> None:
    inputs = [leaf.inputs[0] for leaf in leaves] + [leaf.inputs[1] for leaf in leaves]
    with graph.insert_point_guard(root):
        reduce = graph.insert_node(graph.create(prim.MMTreeReduce, inputs, 1))
    reduce.output().copy_metadata(root.output())
    root.output().replace_all_uses_with(reduce.output())
    log.graph_update(f"a sum of {len(leaves)} aten::mm into a prim::MMTreeReduce")
    tree = [root]
    while tree:
        node = tree.pop()
        producers = [v.node for v in node.inputs[:2]]
        node.destroy()
        tree += [p for p in producers if p.kind is not aten.mm]
    for leaf in leaves:
        leaf.destroy()
