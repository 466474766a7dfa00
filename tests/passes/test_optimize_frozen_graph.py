"""optimize_frozen_graph: freeze's pipeline (dropout removal, then the foldings until none applies)."""

from __future__ import annotations

from pass_case import check_pass
from test_fold_frozen_conv_batchnorm import CONV_BN, weights

from tsjit.passes.frozen_graph_optimizations import optimize_frozen_graph

DROPOUT_AND_CONV_BN = CONV_BN.replace("  return (%z)", """  %p : float = prim::Constant[value=0.5]()
  %d : Tensor = aten::dropout(%z, %p, %false)
  return (%d)""")


def test_dropout_goes_and_batch_norm_folds():
    check_pass(optimize_frozen_graph, DROPOUT_AND_CONV_BN, constants=weights(), present=["aten::conv2d"],
               absent=["aten::batch_norm", "aten::dropout"])


def test_without_numerics_only_dropout_goes():
    check_pass(optimize_frozen_graph, DROPOUT_AND_CONV_BN, constants=weights(), optimize_numerics=False,
               present=["aten::batch_norm"], absent=["aten::dropout"])
