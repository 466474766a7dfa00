"""transpose_weight_gradients: `t(mm(t(a), b))` becomes `mm(t(b), a)`, the same values in the weight's layout."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.passes.transpose_weight_gradients import transpose_weight_gradients


def test_a_transposed_weight_gradient_is_computed_in_the_weights_layout():
    graph = check_pass(transpose_weight_gradients, """
graph(%x : Tensor, %g : Tensor):
  %xt : Tensor = aten::t(%x)
  %p : Tensor = aten::mm(%xt, %g)
  %w : Tensor = aten::t(%p)
  return (%w)""", present=["aten::t(%g)", "aten::mm("], absent=["aten::t(%x)", "aten::t(%p)"],
                       inputs=[(torch.randn(3, 4), torch.randn(3, 5))])
    result = graph.outputs[0]
    assert str(result.node.kind) == "aten::mm"


def test_products_read_elsewhere_or_not_of_a_transpose_stay():
    check_pass(transpose_weight_gradients, """
graph(%x : Tensor, %g : Tensor):
  %xt : Tensor = aten::t(%x)
  %p : Tensor = aten::mm(%xt, %g)
  %w : Tensor = aten::t(%p)
  %q : Tensor = aten::mm(%x, %g)
  %v : Tensor = aten::t(%q)
  return (%w, %p, %v)""", changed=False, inputs=[(torch.randn(3, 3), torch.randn(3, 3))])


def test_products_of_one_gradient_share_its_transpose():
    # the LSTM cell's two weights: both products read the gates' gradient %g
    graph = check_pass(transpose_weight_gradients, """
graph(%x : Tensor, %h : Tensor, %g : Tensor):
  %xt : Tensor = aten::t(%x)
  %p : Tensor = aten::mm(%xt, %g)
  %w : Tensor = aten::t(%p)
  %ht : Tensor = aten::t(%h)
  %q : Tensor = aten::mm(%ht, %g)
  %v : Tensor = aten::t(%q)
  return (%w, %v)""", present=["aten::t(%g)"], absent=["aten::t(%x)", "aten::t(%h)"],
                       inputs=[(torch.randn(3, 4), torch.randn(3, 2), torch.randn(3, 5))])
    assert [str(n.kind) for n in graph.nodes()].count("aten::t") == 1
