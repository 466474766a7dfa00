# Whole modules frozen (a Python module object, against torch.jit.freeze): check_pass cannot express that; the
# passes themselves on IR text are the check_pass cases at the end (and test_fold_frozen_conv_*.py).
"""Folding batch_norm, add/sub and mul/div into convolutions of frozen graphs (tsjit.passes.frozen_conv_folding),
against torch.jit.freeze (which nodes are left) and eager PyTorch (results)."""

import pytest
import torch
from freeze_helpers import freeze_both, kinds
from pass_case import check_pass
from torch import Tensor, nn

import tsjit
from tsjit.passes.frozen_conv_folding import (
    fold_frozen_conv_add_or_sub,
    fold_frozen_conv_batchnorm,
    fold_frozen_conv_mul_or_div,
)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit's own

CONVS = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}
NORMS = {1: nn.BatchNorm1d, 2: nn.BatchNorm2d, 3: nn.BatchNorm3d}


class ConvThen(nn.Module):
    """A convolution followed by the operation `op` names (freezing folds the `if` chain down to it)."""

    def __init__(self, dims: int, op: str, other_shape: tuple, bias: bool = True):
        super().__init__()
        self.conv = CONVS[dims](3, 4, 3, bias=bias)
        self.bn = NORMS[dims](4)
        self.bn.running_mean.uniform_(-1, 1)
        self.bn.running_var.uniform_(0.5, 2)
        with torch.no_grad():
            self.bn.weight.uniform_(0.5, 2)
            self.bn.bias.uniform_(-1, 1)
        self.op = op
        self.register_buffer("other", torch.rand(other_shape) + 0.5)

    def forward(self, x: Tensor) -> Tensor:
        y = self.conv(x)
        if self.op == "bn":
            y = self.bn(y)
        elif self.op == "add":
            y = y + self.other
        elif self.op == "sub":
            y = y - self.other
        elif self.op == "mul":
            y = y * self.other
        elif self.op == "div":
            y = y / self.other
        elif self.op == "add_scalar":
            y = y + 2.0
        elif self.op == "mul_scalar":
            y = y * 0.5
        elif self.op == "other_first":
            y = self.other + y
        elif self.op == "alpha":
            y = torch.add(y, self.other, alpha=2)
        elif self.op == "mul_add":
            y = y * self.other + 1.0
        return torch.relu(y)


def channel_shape(dims: int) -> tuple:
    return (1, 4) + (1,) * dims


# (dims, op, shape of `other`, conv bias, whether the op folds into the conv)
CASES = [
    *[(dims, "bn", (1,), True, True) for dims in (1, 2, 3)],
    (2, "bn", (1,), False, True),
    *[(dims, op, channel_shape(dims), True, True) for dims in (1, 2, 3) for op in ("add", "sub", "mul", "div")],
    (2, "add", (1,), True, True),
    (2, "mul", (), True, True),
    (2, "add", channel_shape(2), False, True),
    (2, "mul", channel_shape(2), False, True),
    (2, "add_scalar", (1,), True, True),
    (2, "mul_scalar", (1,), True, True),
    (2, "mul_add", channel_shape(2), True, True),
    (2, "add", (4, 1, 1), True, False),       # right-aligned broadcasting: not per channel by torch.jit's rule
    (2, "mul", (1, 4, 5, 5), True, False),    # varies over space
    (2, "other_first", channel_shape(2), True, False),
    (2, "alpha", channel_shape(2), True, True),
]


def _id(case) -> str:
    dims, op, shape, bias, _ = case
    return f"conv{dims}d-{op}-{'x'.join(map(str, shape)) or 'scalar'}{'' if bias else '-nobias'}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_folding_matches_torch_jit_and_eager(case):
    dims, op, shape, bias, folds = case
    torch.manual_seed(0)
    module = ConvThen(dims, op, shape, bias).eval()
    mine, theirs = freeze_both(module)
    assert kinds(mine.graph) == kinds(theirs.graph)
    left = [k for k in kinds(mine.graph) if not k.startswith("aten::conv")]
    assert (left == ["aten::relu"]) == folds
    x = torch.randn((2, 3) + (7,) * dims)
    torch.testing.assert_close(mine(x), module(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", ["bn", "add", "mul"])
def test_no_folding_without_optimize_numerics(op):
    torch.manual_seed(0)
    module = ConvThen(2, op, channel_shape(2)).eval()
    mine, theirs = freeze_both(module, optimize_numerics=False)
    assert kinds(mine.graph) == kinds(theirs.graph)
    assert len([k for k in kinds(mine.graph) if not k.startswith("aten::conv")]) == 2
    x = torch.randn(2, 3, 7, 7)
    torch.testing.assert_close(mine(x), module(x))


def test_folded_weights_are_named_after_the_originals():
    torch.manual_seed(0)
    frozen = tsjit.freeze(tsjit.script(ConvThen(2, "bn", (1,)).eval()))
    conv = next(n for n in frozen.graph.nodes() if str(n.kind) == "aten::conv2d")
    assert conv.named_input("weight").debug_name == "self.conv.weight_fused_bn"
    assert conv.named_input("bias").debug_name == "self.conv.bias_fused_bn"


def test_conv_output_used_twice_is_not_folded():
    class Twice(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3)
            self.bn = nn.BatchNorm2d(4)

        def forward(self, x: Tensor) -> Tensor:
            y = self.conv(x)
            return self.bn(y) + y

    torch.manual_seed(0)
    module = Twice().eval()
    mine, theirs = freeze_both(module)
    assert "aten::batch_norm" in kinds(mine.graph)
    assert kinds(mine.graph) == kinds(theirs.graph)
    x = torch.randn(1, 3, 6, 6)
    torch.testing.assert_close(mine(x), module(x))


CONV = """
graph(%x : Float(1, 3, 6, 6), %w : Tensor, %b : Tensor, %other : Tensor):
  %ones : int[] = prim::Constant[value=[1, 1]]()
  %zeros : int[] = prim::Constant[value=[0, 0]]()
  %one : int = prim::Constant[value=1]()
  %false : bool = prim::Constant[value=0]()
  %momentum : float = prim::Constant[value=0.1]()
  %eps : float = prim::Constant[value=1.0000000000000001e-05]()
  %y : Tensor = aten::conv2d(%x, %w, %b, %ones, %zeros, %ones, %one)
  THEN
  return (%z)
"""


def conv_weights(other_shape: tuple) -> dict[str, torch.Tensor]:
    return {"w": torch.randn(4, 3, 3, 3), "b": torch.randn(4), "other": torch.rand(other_shape) + 0.5}


def test_pass_conv_output_used_twice_is_not_folded():
    """The batch_norm reads the convolution's result, and so does the add: folding would change the add's."""
    then = """%n : Tensor = aten::batch_norm(%y, %other, %b, %b, %other, %false, %momentum, %eps, %false)
  %z : Tensor = aten::add(%n, %y, %one)"""
    check_pass(fold_frozen_conv_batchnorm, CONV.replace("THEN", then), constants=conv_weights((4,)), changed=False,
               present=["aten::batch_norm"])


@pytest.mark.parametrize("fold, op, shape", [(fold_frozen_conv_add_or_sub, "add(%y, %other, %one)", (4, 1, 1)),
                                             (fold_frozen_conv_mul_or_div, "mul(%y, %other)", (1, 4, 4, 4)),
                                             (fold_frozen_conv_add_or_sub, "add(%other, %y, %one)", (1, 4, 1, 1))])
def test_pass_operands_not_per_output_channel_stay(fold, op, shape):
    """Right-aligned broadcasting, an operand varying over space, the constant first: as torch.jit, no folding."""
    check_pass(fold, CONV.replace("THEN", f"%z : Tensor = aten::{op}"), constants=conv_weights(shape), changed=False,
               present=["aten::conv2d", f"aten::{op.split('(')[0]}("])


@pytest.mark.parametrize("fold, op", [(fold_frozen_conv_add_or_sub, "sub(%y, %other, %one)"),
                                      (fold_frozen_conv_mul_or_div, "div(%y, %other)")])
def test_pass_per_channel_operands_fold(fold, op):
    check_pass(fold, CONV.replace("THEN", f"%z : Tensor = aten::{op}"), constants=conv_weights((1, 4, 1, 1)),
               present=["aten::conv2d"], absent=[f"aten::{op.split('(')[0]}("])
