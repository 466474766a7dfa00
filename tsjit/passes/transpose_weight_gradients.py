"""Weight gradients in the weight's layout: in a backward graph, `t(mm(t(a), b))` becomes `mm(t(b), a)`.

A weight read transposed (`x.mm(w.t())`: linear's, the LSTM cell's) gets its gradient from mm's backward and
then t's backward:

    %at : Tensor = aten::t(%a)
    %p : Tensor = aten::mm(%at, %b)        ->     %bt : Tensor = aten::t(%b)
    %g : Tensor = aten::t(%p)                     %g : Tensor = aten::mm(%bt, %a)

Both compute the same values, but the first returns a transposed view, and autograd's AccumulateGrad copies a
gradient whose strides differ from the parameter's into the parameter's layout, every step (about 30us for a
256x64 weight); the second is contiguous, as eager's mm backward makes it, and saves a transpose too. Products
with the same gradient `b` (the LSTM cell's two weights, both read `x.mm(w.t())`) share one `t(b)` in a block.
Only for
backward graphs (runtime/differentiable_graph_op.py runs it after df's pipeline): in a program's own graph the
strides of what it returns are eager's, and this would change them. Only where the product is read by the
transpose alone.
"""

from __future__ import annotations

from tsjit import log
from tsjit.ir.graph import Graph, Value
from tsjit.ir.symbols import aten


def transpose_weight_gradients(graph: Graph) -> bool:
    """Rewrite each `t(mm(t(a), b))` whose product is read once into `mm(t(b), a)`; whether any was."""
    changed = False
    flipped_by_block: dict[tuple, Value] = {}  # t(b) inserted here, by (b, block): later rewrites in it read it
    for node in list(graph.all_nodes()):
        if node.kind is not aten.t:
            continue
        product = node.inputs[0].node
        if product.kind is not aten.mm or len(product.output().uses) != 1 or product.inputs[0].node.kind is not aten.t:
            continue
        if not log.opt_allowed():
            break
        transposed = product.inputs[0].node
        gradient = product.inputs[1]
        with graph.insert_point_guard(node):
            flipped = flipped_by_block.get((gradient, node.owning_block))
            if flipped is None:
                flipped = flipped_by_block[gradient, node.owning_block] = graph.insert(aten.t, [gradient])
            result = graph.insert(aten.mm, [flipped, transposed.inputs[0]])
        node.output().replace_all_uses_with(result)
        node.destroy()
        product.destroy()
        if not transposed.output().uses:
            transposed.destroy()
        log.graph_update("t(mm(t(a), b)) into mm(t(b), a)")
        changed = True
    return changed
