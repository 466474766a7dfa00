"""torch.nn modules that torch-mlir's FX route lowers, through tsjit's route on IREE against eager: one test per
class of failure the MLIR conformance corpus found (tests/conformance/mlir_runner.py --corpus nn,e2e)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from mlir_corpus import assert_close
from torch import nn

import tsjit
import tsjit.mlir
from tsjit.mlir import iree


def normalized(x: torch.Tensor):
    return F.group_norm(x, 2), F.instance_norm(x)


def test_size_checks_of_norms_fold_for_linalg():
    """F.group_norm and F.instance_norm check `list(x.size()[2:])` multiplied in a loop: with known sizes the
    list ops and the loop fold, else linalg's type conversion stops on them (and instance_norm's missing weight
    and bias are given: torch-mlir's decomposition crashes without them)."""
    x = torch.randn(2, 4, 3, 3)
    run = iree.compile(tsjit.mlir.compile(tsjit.script(normalized), [x], output_type="linalg-on-tensors"))
    assert_close(run(x), normalized(x))


class PartlyLowered(nn.Module):
    """Modules calling operators torch-mlir lowers only for some arguments, or not at all (the RNN cells)."""

    def __init__(self, cross_entropy: bool, cosine: bool):
        super().__init__()
        self.cell = nn.GRUCell(4, 3)
        self.lstm_cell = nn.LSTMCell(4, 3)
        self.tanh_cell, self.relu_cell = nn.RNNCell(4, 3), nn.RNNCell(4, 3, nonlinearity="relu")
        self.pad = nn.CircularPad1d((2, 1))
        self.pool = nn.AdaptiveAvgPool1d(3)  # windows of a length that does not divide 4
        self.logits_loss = nn.BCEWithLogitsLoss(pos_weight=torch.ones(4) * 2)
        self.probability_loss = nn.BCELoss()
        self.cosine_loss = nn.CosineEmbeddingLoss(margin=0.2) if cosine else None
        self.cross_entropy = nn.CrossEntropyLoss(label_smoothing=0.1) if cross_entropy else None

    def forward(self, x, y, labels, signs):
        losses = [self.logits_loss(x, torch.sigmoid(y)), self.probability_loss(torch.sigmoid(x), torch.sigmoid(y))]
        if self.cosine_loss is not None:
            losses.append(self.cosine_loss(x, y, signs))
        if self.cross_entropy is not None:
            losses.append(self.cross_entropy(x, labels))
        cells = (self.cell(x), self.lstm_cell(x), self.tanh_cell(x), self.relu_cell(x))
        return cells, self.pad(x), self.pool(x), torch.stack(losses)


@pytest.mark.parametrize("backend", ["linalg-on-tensors", "tosa", "stablehlo"])
def test_operators_lowered_only_in_part_are_decomposed(backend):
    torch.manual_seed(0)
    # TOSA: IREE rejects cross entropy's `tosa.cast` (the FX route's too); StableHLO: IREE's mean of the cosine
    # loss differs from eager on these inputs (its elements match)
    module = PartlyLowered(cross_entropy=backend != "tosa", cosine=backend != "stablehlo").eval()
    args = (torch.randn(3, 4), torch.randn(3, 4), torch.tensor([0, 3, 1]), torch.tensor([1.0, -1.0, 1.0]))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(module), list(args), output_type=backend))
    assert_close(run(*args), tuple(module(*args)))


def test_attention_called_with_three_tensors_takes_the_composite_path():
    """`query is not key` decides nn.MultiheadAttention's fast path (`_native_multi_head_attention`, not in the
    torch dialect): a compiled function's arguments are distinct values, so it is True."""
    torch.manual_seed(0)
    attention = nn.MultiheadAttention(8, 2).eval()
    args = [torch.randn(5, 2, 8) for _ in range(3)]
    run = iree.compile(tsjit.mlir.compile(tsjit.script(attention), args, output_type="linalg-on-tensors"))
    assert_close(run(*args), tuple(r.detach() for r in attention(*args)))


class MaskedSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x, mask: torch.Tensor):
        return self.attention(x, x, x, key_padding_mask=mask, need_weights=False)[0]


def test_attention_with_a_key_padding_mask_decides_its_fast_path_checks():
    """The fast-path checks with a bool key_padding_mask fold (`mask is not None` of an argument given a tensor,
    `mask.is_floating_point()` of its refined dtype, `torch.is_autocast_enabled()`, `all([...])` of a list
    comprehension): left standing, the untaken branches kept a bool mask typed float and the fused kernel."""
    torch.manual_seed(0)
    attention = MaskedSelfAttention().eval()
    args = [torch.randn(2, 5, 8), torch.tensor([[False] * 4 + [True], [False] * 5])]
    run = iree.compile(tsjit.mlir.compile(tsjit.script(attention), args, output_type="linalg-on-tensors"))
    assert_close(run(*args), attention(*args).detach())


class ComparedWithNumbers(nn.Module):
    """torch-mlir's decompositions of softplus (in mish) and hardshrink, and F.huber_loss, compare a float tensor
    with a float number, which its TOSA conversion does in f64 (illegal in TOSA)."""

    def forward(self, x, y):
        return F.mish(x), F.softplus(x, beta=2.0), F.hardshrink(x, 0.5), F.huber_loss(x, y, delta=0.5), x > 0.25


def test_comparisons_with_numbers_stay_in_the_tensor_dtype_on_tosa():
    module = ComparedWithNumbers()
    args = (torch.randn(3, 4) * 3, torch.randn(3, 4))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(module), list(args), output_type="tosa"))
    assert_close(run(*args), module(*args))


def test_instance_norm_with_running_statistics_in_evaluation_uses_them():
    """torch-mlir's instance_norm normalizes by the input's statistics even when use_input_stats is False."""
    torch.manual_seed(0)
    norm = nn.InstanceNorm2d(3, affine=True, track_running_stats=True)
    norm(torch.randn(4, 3, 5, 5) * 2 + 1)  # running statistics away from 0 and 1
    norm.eval()
    x = torch.randn(2, 3, 4, 4)
    run = iree.compile(tsjit.mlir.compile(tsjit.script(norm), [x], output_type="linalg-on-tensors"))
    assert_close(run(x), norm(x).detach())


class ChannelsAndFolds(nn.Module):
    """nn.PReLU with a weight per channel (torch-mlir's decomposition broadcast it along the last dimension) on
    inputs of rank 2 and 4, one weight on ranks 1 and 4, and nn.Fold (aten::col2im, which torch-mlir does not lower)
    with strides, dilation and padding, batched and not."""

    def __init__(self):
        super().__init__()
        self.per_channel, self.single = nn.PReLU(3, init=0.1), nn.PReLU(init=0.3)
        self.fold = nn.Fold((4, 5), (2, 2))
        self.strided = nn.Fold((5, 6), (2, 3), dilation=(1, 2), padding=(1, 0), stride=(2, 1))

    def forward(self, line, rows, image, columns, sparse):
        return (self.single(line), self.per_channel(rows), self.per_channel(image), self.single(image),
                self.fold(columns), self.fold(columns[0]), self.strided(sparse))


@pytest.mark.parametrize("backend", ["linalg-on-tensors", "tosa", "stablehlo"])
def test_prelu_weights_per_channel_and_fold(backend):
    torch.manual_seed(0)
    module = ChannelsAndFolds()
    module.per_channel.weight.data = torch.tensor([0.1, -0.5, 2.0])
    args = (torch.randn(3), torch.randn(2, 3), torch.randn(2, 3, 4, 5), torch.randn(2, 12, 12), torch.randn(1, 18, 6))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(module), list(args), output_type=backend))
    assert_close(run(*args), module(*args))
