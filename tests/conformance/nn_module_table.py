"""Every public nn.Module class of `torch.nn`, with a typical instance and inputs for it, or the reason it has none.

`ENTRIES` maps a class name to Entry(make_module, make_inputs, state): `make_module()` builds the instance
(weights seeded by the caller), `make_inputs()` fresh arguments for `forward`, and `state` names the buffers a
training-mode call updates (compared after the call). `NOT_RUNNABLE` maps the classes that have no instance to
run to why: abstract bases and containers without a `forward` (tests/e2e/module_corpus.py runs those inside
modules). `nn_module_classes()` enumerates the classes from torch itself, so that a class added to torch.nn and
missing from both tables fails test_nn_modules.py.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn


@dataclass
class Entry:
    make_module: Callable[[], nn.Module]
    make_inputs: Callable[[], tuple]
    state: tuple[str, ...] = ()


def nn_module_classes() -> list[str]:
    """The public nn.Module subclasses exported by torch.nn and torch.nn.modules, by name."""
    names = {name for name in dir(nn) if not name.startswith("_")} | set(nn.modules.__all__)
    return sorted(name for name in names
                  if inspect.isclass(getattr(nn, name, None)) and issubclass(getattr(nn, name), nn.Module))


def t(*shape: int) -> Callable[[], Tensor]:
    return lambda: torch.randn(*shape)


def positive(*shape: int) -> Callable[[], Tensor]:
    return lambda: torch.rand(*shape) + 0.1


def probabilities(*shape: int) -> Callable[[], Tensor]:
    return lambda: torch.rand(*shape)


def signs(*shape: int) -> Callable[[], Tensor]:
    return lambda: torch.randint(0, 2, shape).float() * 2 - 1


def labels(*shape: int, high: int) -> Callable[[], Tensor]:
    return lambda: torch.randint(0, high, shape)


def log_probabilities(*shape: int, dim: int = -1) -> Callable[[], Tensor]:
    return lambda: torch.randn(*shape).log_softmax(dim)


def args(*factories: Callable[[], Tensor]) -> Callable[[], tuple]:
    return lambda: tuple(factory() for factory in factories)


def pooled_with_indices(pool: Callable, *shape: int) -> Callable[[], tuple]:
    """(output, indices) of a max pooling with kernel 2: the inputs of MaxUnpool."""
    return lambda: tuple(pool(torch.randn(*shape), 2, return_indices=True))


def ctc_inputs() -> tuple:
    """log_probs (T=6, N=2, C=4), targets (N, S=3) in 1..C-1, input and target lengths."""
    return (torch.randn(6, 2, 4).log_softmax(2), torch.randint(1, 4, (2, 3)), torch.tensor([6, 5]),
            torch.tensor([3, 2]))


def multilabel_margin_inputs() -> tuple:
    """Targets hold class indices, ended by -1."""
    return torch.randn(2, 4), torch.tensor([[3, 0, -1, 1], [1, 2, 3, -1]])


class Calling(nn.Module):
    """Calls a recurrent layer: their `forward` is overloaded (tensor or packed sequence), and TorchScript compiles
    an overloaded forward only where a caller picks one overload (torch.jit's scripted nn.LSTM has no `forward`)."""

    def __init__(self, module: nn.Module):
        super().__init__()
        self.module = module

    def forward(self, x):
        return self.module(x)


BATCH_NORM_STATE = ("running_mean", "running_var", "num_batches_tracked")


def encoder_layer() -> nn.TransformerEncoderLayer:
    return nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)


def decoder_layer() -> nn.TransformerDecoderLayer:
    return nn.TransformerDecoderLayer(8, 2, dim_feedforward=16)


ENTRIES: dict[str, Entry] = {
    # ---- convolutions and linear maps
    "Bilinear": Entry(lambda: nn.Bilinear(3, 4, 5), args(t(2, 3), t(2, 4))),
    "Conv1d": Entry(lambda: nn.Conv1d(2, 3, 3, padding=1), args(t(2, 2, 6))),
    "Conv2d": Entry(lambda: nn.Conv2d(2, 3, 3, stride=2), args(t(1, 2, 6, 6))),
    "Conv3d": Entry(lambda: nn.Conv3d(2, 2, 2), args(t(1, 2, 3, 3, 3))),
    "ConvTranspose1d": Entry(lambda: nn.ConvTranspose1d(2, 3, 3, stride=2), args(t(2, 2, 4))),
    "ConvTranspose2d": Entry(lambda: nn.ConvTranspose2d(2, 3, 3, padding=1), args(t(1, 2, 4, 4))),
    "ConvTranspose3d": Entry(lambda: nn.ConvTranspose3d(2, 2, 2), args(t(1, 2, 2, 2, 2))),
    "Identity": Entry(nn.Identity, args(t(2, 3))),
    "Linear": Entry(lambda: nn.Linear(4, 3), args(t(2, 4))),
    "LazyConv1d": Entry(lambda: nn.LazyConv1d(3, 3), args(t(2, 2, 6))),
    "LazyConv2d": Entry(lambda: nn.LazyConv2d(3, 3), args(t(1, 2, 5, 5))),
    "LazyConv3d": Entry(lambda: nn.LazyConv3d(2, 2), args(t(1, 2, 3, 3, 3))),
    "LazyConvTranspose1d": Entry(lambda: nn.LazyConvTranspose1d(3, 3), args(t(2, 2, 4))),
    "LazyConvTranspose2d": Entry(lambda: nn.LazyConvTranspose2d(3, 3), args(t(1, 2, 4, 4))),
    "LazyConvTranspose3d": Entry(lambda: nn.LazyConvTranspose3d(2, 2), args(t(1, 2, 2, 2, 2))),
    "LazyLinear": Entry(lambda: nn.LazyLinear(3), args(t(2, 4))),
    # ---- activations
    "CELU": Entry(nn.CELU, args(t(3, 4))),
    "ELU": Entry(lambda: nn.ELU(0.5), args(t(3, 4))),
    "GELU": Entry(lambda: nn.GELU(approximate="tanh"), args(t(3, 4))),
    "GLU": Entry(nn.GLU, args(t(3, 4))),
    "Hardshrink": Entry(nn.Hardshrink, args(t(3, 4))),
    "Hardsigmoid": Entry(nn.Hardsigmoid, args(t(3, 4))),
    "Hardswish": Entry(nn.Hardswish, args(t(3, 4))),
    "Hardtanh": Entry(lambda: nn.Hardtanh(-0.5, 0.5), args(t(3, 4))),
    "LeakyReLU": Entry(lambda: nn.LeakyReLU(0.1), args(t(3, 4))),
    "LogSigmoid": Entry(nn.LogSigmoid, args(t(3, 4))),
    "LogSoftmax": Entry(lambda: nn.LogSoftmax(dim=1), args(t(3, 4))),
    "Mish": Entry(nn.Mish, args(t(3, 4))),
    "MultiheadAttention": Entry(lambda: nn.MultiheadAttention(8, 2), args(t(5, 2, 8), t(5, 2, 8), t(5, 2, 8))),
    "PReLU": Entry(lambda: nn.PReLU(3), args(t(2, 3, 4))),
    "RReLU": Entry(nn.RReLU, args(t(3, 4))),
    "ReLU": Entry(nn.ReLU, args(t(3, 4))),
    "ReLU6": Entry(nn.ReLU6, args(t(3, 4))),
    "SELU": Entry(nn.SELU, args(t(3, 4))),
    "SiLU": Entry(nn.SiLU, args(t(3, 4))),
    "Sigmoid": Entry(nn.Sigmoid, args(t(3, 4))),
    "Softmax": Entry(lambda: nn.Softmax(dim=1), args(t(3, 4))),
    "Softmax2d": Entry(nn.Softmax2d, args(t(1, 3, 2, 2))),
    "Softmin": Entry(lambda: nn.Softmin(dim=0), args(t(3, 4))),
    "Softplus": Entry(lambda: nn.Softplus(beta=2.0), args(t(3, 4))),
    "Softshrink": Entry(nn.Softshrink, args(t(3, 4))),
    "Softsign": Entry(nn.Softsign, args(t(3, 4))),
    "Tanh": Entry(nn.Tanh, args(t(3, 4))),
    "Tanhshrink": Entry(nn.Tanhshrink, args(t(3, 4))),
    "Threshold": Entry(lambda: nn.Threshold(0.1, 20.0), args(t(3, 4))),
    # ---- normalization
    "BatchNorm1d": Entry(lambda: nn.BatchNorm1d(3), args(t(4, 3, 5)), BATCH_NORM_STATE),
    "BatchNorm2d": Entry(lambda: nn.BatchNorm2d(3, momentum=None), args(t(2, 3, 4, 4)), BATCH_NORM_STATE),
    "BatchNorm3d": Entry(lambda: nn.BatchNorm3d(2), args(t(2, 2, 2, 2, 2)), BATCH_NORM_STATE),
    "CrossMapLRN2d": Entry(lambda: nn.CrossMapLRN2d(3), args(t(1, 4, 3, 3))),
    "GroupNorm": Entry(lambda: nn.GroupNorm(2, 4), args(t(2, 4, 3))),
    "InstanceNorm1d": Entry(lambda: nn.InstanceNorm1d(3), args(t(2, 3, 5))),
    "InstanceNorm2d": Entry(lambda: nn.InstanceNorm2d(3, affine=True, track_running_stats=True),
                            args(t(2, 3, 4, 4)), BATCH_NORM_STATE),
    "InstanceNorm3d": Entry(lambda: nn.InstanceNorm3d(2, affine=True), args(t(1, 2, 3, 3, 3))),
    "LayerNorm": Entry(lambda: nn.LayerNorm(5), args(t(2, 3, 5))),
    "LazyBatchNorm1d": Entry(nn.LazyBatchNorm1d, args(t(4, 3)), BATCH_NORM_STATE),
    "LazyBatchNorm2d": Entry(nn.LazyBatchNorm2d, args(t(2, 3, 4, 4)), BATCH_NORM_STATE),
    "LazyBatchNorm3d": Entry(nn.LazyBatchNorm3d, args(t(2, 2, 2, 2, 2)), BATCH_NORM_STATE),
    "LazyInstanceNorm1d": Entry(nn.LazyInstanceNorm1d, args(t(2, 3, 5))),
    "LazyInstanceNorm2d": Entry(nn.LazyInstanceNorm2d, args(t(2, 3, 4, 4))),
    "LazyInstanceNorm3d": Entry(nn.LazyInstanceNorm3d, args(t(1, 2, 3, 3, 3))),
    "LocalResponseNorm": Entry(lambda: nn.LocalResponseNorm(2), args(t(1, 4, 3, 3))),
    "RMSNorm": Entry(lambda: nn.RMSNorm(5), args(t(2, 3, 5))),
    "SyncBatchNorm": Entry(lambda: nn.SyncBatchNorm(3), args(t(2, 3, 4)), BATCH_NORM_STATE),
    # ---- dropout
    "AlphaDropout": Entry(lambda: nn.AlphaDropout(0.3), args(t(4, 5))),
    "Dropout": Entry(lambda: nn.Dropout(0.3), args(t(4, 5))),
    "Dropout1d": Entry(lambda: nn.Dropout1d(0.3), args(t(2, 3, 4))),
    "Dropout2d": Entry(lambda: nn.Dropout2d(0.3), args(t(2, 3, 4, 4))),
    "Dropout3d": Entry(lambda: nn.Dropout3d(0.3), args(t(2, 3, 2, 2, 2))),
    "FeatureAlphaDropout": Entry(lambda: nn.FeatureAlphaDropout(0.3), args(t(2, 3, 4, 4))),
    # ---- pooling, padding, resampling and reshaping
    "AdaptiveAvgPool1d": Entry(lambda: nn.AdaptiveAvgPool1d(3), args(t(2, 4, 8))),
    "AdaptiveAvgPool2d": Entry(lambda: nn.AdaptiveAvgPool2d((3, None)), args(t(2, 3, 8, 6))),
    "AdaptiveAvgPool3d": Entry(lambda: nn.AdaptiveAvgPool3d(2), args(t(1, 2, 4, 4, 4))),
    "AdaptiveMaxPool1d": Entry(lambda: nn.AdaptiveMaxPool1d(3), args(t(2, 4, 8))),
    "AdaptiveMaxPool2d": Entry(lambda: nn.AdaptiveMaxPool2d(3, return_indices=True), args(t(2, 3, 8, 6))),
    "AdaptiveMaxPool3d": Entry(lambda: nn.AdaptiveMaxPool3d(2), args(t(1, 2, 4, 4, 4))),
    "AvgPool1d": Entry(lambda: nn.AvgPool1d(2), args(t(2, 3, 6))),
    "AvgPool2d": Entry(lambda: nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False), args(t(1, 2, 6, 6))),
    "AvgPool3d": Entry(lambda: nn.AvgPool3d(2), args(t(1, 2, 4, 4, 4))),
    "ChannelShuffle": Entry(lambda: nn.ChannelShuffle(2), args(t(1, 4, 2, 2))),
    "CircularPad1d": Entry(lambda: nn.CircularPad1d(1), args(t(1, 2, 4))),
    "CircularPad2d": Entry(lambda: nn.CircularPad2d((1, 0, 1, 2)), args(t(1, 1, 3, 3))),
    "CircularPad3d": Entry(lambda: nn.CircularPad3d(1), args(t(1, 1, 2, 2, 2))),
    "ConstantPad1d": Entry(lambda: nn.ConstantPad1d(2, 0.5), args(t(1, 2, 4))),
    "ConstantPad2d": Entry(lambda: nn.ConstantPad2d((1, 0, 2, 1), -1.0), args(t(1, 2, 3, 3))),
    "ConstantPad3d": Entry(lambda: nn.ConstantPad3d(1, 2.0), args(t(1, 1, 2, 2, 2))),
    "Flatten": Entry(nn.Flatten, args(t(2, 3, 4))),
    "Fold": Entry(lambda: nn.Fold(output_size=(4, 5), kernel_size=(2, 2)), args(t(1, 12, 12))),
    "FractionalMaxPool2d": Entry(lambda: nn.FractionalMaxPool2d(2, output_size=(3, 3)), args(t(1, 2, 6, 6))),
    "FractionalMaxPool3d": Entry(lambda: nn.FractionalMaxPool3d(2, output_ratio=0.5), args(t(1, 1, 4, 4, 4))),
    "LPPool1d": Entry(lambda: nn.LPPool1d(2, 2), args(t(1, 2, 6))),
    "LPPool2d": Entry(lambda: nn.LPPool2d(2, 2), args(t(1, 2, 4, 4))),
    "LPPool3d": Entry(lambda: nn.LPPool3d(2, 2), args(t(1, 1, 4, 4, 4))),
    "MaxPool1d": Entry(lambda: nn.MaxPool1d(2), args(t(2, 3, 6))),
    "MaxPool2d": Entry(lambda: nn.MaxPool2d(3, stride=2, padding=1, return_indices=True), args(t(1, 2, 6, 6))),
    "MaxPool3d": Entry(lambda: nn.MaxPool3d(2, ceil_mode=True), args(t(1, 2, 3, 3, 3))),
    "MaxUnpool1d": Entry(lambda: nn.MaxUnpool1d(2), pooled_with_indices(F.max_pool1d, 1, 2, 6)),
    "MaxUnpool2d": Entry(lambda: nn.MaxUnpool2d(2), pooled_with_indices(F.max_pool2d, 1, 2, 4, 4)),
    "MaxUnpool3d": Entry(lambda: nn.MaxUnpool3d(2), pooled_with_indices(F.max_pool3d, 1, 1, 4, 4, 4)),
    "PixelShuffle": Entry(lambda: nn.PixelShuffle(2), args(t(1, 4, 2, 2))),
    "PixelUnshuffle": Entry(lambda: nn.PixelUnshuffle(2), args(t(1, 1, 4, 4))),
    "ReflectionPad1d": Entry(lambda: nn.ReflectionPad1d(2), args(t(1, 2, 4))),
    "ReflectionPad2d": Entry(lambda: nn.ReflectionPad2d((1, 0, 2, 1)), args(t(1, 2, 3, 3))),
    "ReflectionPad3d": Entry(lambda: nn.ReflectionPad3d(1), args(t(1, 1, 2, 2, 2))),
    "ReplicationPad1d": Entry(lambda: nn.ReplicationPad1d(2), args(t(1, 2, 4))),
    "ReplicationPad2d": Entry(lambda: nn.ReplicationPad2d((1, 0, 2, 1)), args(t(1, 2, 3, 3))),
    "ReplicationPad3d": Entry(lambda: nn.ReplicationPad3d(1), args(t(1, 1, 2, 2, 2))),
    "Unflatten": Entry(lambda: nn.Unflatten(1, (2, 2)), args(t(3, 4))),
    "Unfold": Entry(lambda: nn.Unfold(kernel_size=2), args(t(1, 2, 3, 3))),
    "Upsample": Entry(lambda: nn.Upsample(scale_factor=2, mode="bilinear"), args(t(1, 1, 2, 3))),
    "UpsamplingBilinear2d": Entry(lambda: nn.UpsamplingBilinear2d(scale_factor=2), args(t(1, 1, 2, 2))),
    "UpsamplingNearest2d": Entry(lambda: nn.UpsamplingNearest2d(size=(3, 5)), args(t(1, 1, 2, 2))),
    "ZeroPad1d": Entry(lambda: nn.ZeroPad1d(2), args(t(1, 2, 4))),
    "ZeroPad2d": Entry(lambda: nn.ZeroPad2d((1, 0, 2, 1)), args(t(1, 2, 3, 3))),
    "ZeroPad3d": Entry(lambda: nn.ZeroPad3d(1), args(t(1, 1, 2, 2, 2))),
    # ---- distances and losses
    "AdaptiveLogSoftmaxWithLoss": Entry(lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 8]),
                                        args(t(3, 8), labels(3, high=10))),
    "BCELoss": Entry(nn.BCELoss, args(probabilities(3, 4), probabilities(3, 4))),
    "BCEWithLogitsLoss": Entry(lambda: nn.BCEWithLogitsLoss(pos_weight=torch.ones(4) * 2),
                               args(t(3, 4), probabilities(3, 4))),
    "CTCLoss": Entry(nn.CTCLoss, ctc_inputs),
    "CosineEmbeddingLoss": Entry(lambda: nn.CosineEmbeddingLoss(margin=0.2), args(t(3, 5), t(3, 5), signs(3))),
    "CosineSimilarity": Entry(nn.CosineSimilarity, args(t(3, 5), t(3, 5))),
    "CrossEntropyLoss": Entry(lambda: nn.CrossEntropyLoss(label_smoothing=0.1), args(t(3, 5), labels(3, high=5))),
    "GaussianNLLLoss": Entry(nn.GaussianNLLLoss, args(t(3, 4), t(3, 4), positive(3, 4))),
    "HingeEmbeddingLoss": Entry(nn.HingeEmbeddingLoss, args(t(3, 4), signs(3, 4))),
    "HuberLoss": Entry(lambda: nn.HuberLoss(delta=0.5), args(t(3, 4), t(3, 4))),
    "KLDivLoss": Entry(lambda: nn.KLDivLoss(reduction="batchmean"),
                       args(log_probabilities(3, 4), lambda: torch.rand(3, 4).softmax(-1))),
    "L1Loss": Entry(nn.L1Loss, args(t(3, 4), t(3, 4))),
    "LinearCrossEntropyLoss": Entry(lambda: nn.LinearCrossEntropyLoss(4, 5), args(t(3, 4), labels(3, high=5))),
    "MSELoss": Entry(lambda: nn.MSELoss(reduction="sum"), args(t(3, 4), t(3, 4))),
    "MarginRankingLoss": Entry(nn.MarginRankingLoss, args(t(3), t(3), signs(3))),
    "MultiLabelMarginLoss": Entry(nn.MultiLabelMarginLoss, multilabel_margin_inputs),
    "MultiLabelSoftMarginLoss": Entry(nn.MultiLabelSoftMarginLoss,
                                      args(t(2, 4), lambda: torch.randint(0, 2, (2, 4)).float())),
    "MultiMarginLoss": Entry(nn.MultiMarginLoss, args(t(3, 5), labels(3, high=5))),
    "NLLLoss": Entry(lambda: nn.NLLLoss(weight=torch.tensor([1.0, 2.0, 0.5])),
                     args(log_probabilities(4, 3), labels(4, high=3))),
    "NLLLoss2d": Entry(nn.NLLLoss2d, args(log_probabilities(1, 3, 2, 2, dim=1), labels(1, 2, 2, high=3))),
    "PairwiseDistance": Entry(nn.PairwiseDistance, args(t(3, 5), t(3, 5))),
    "PoissonNLLLoss": Entry(nn.PoissonNLLLoss, args(t(3, 4), positive(3, 4))),
    "SmoothL1Loss": Entry(nn.SmoothL1Loss, args(t(3, 4), t(3, 4))),
    "SoftMarginLoss": Entry(nn.SoftMarginLoss, args(t(3, 4), signs(3, 4))),
    "TripletMarginLoss": Entry(lambda: nn.TripletMarginLoss(margin=0.5), args(t(3, 4), t(3, 4), t(3, 4))),
    "TripletMarginWithDistanceLoss": Entry(nn.TripletMarginWithDistanceLoss, args(t(3, 4), t(3, 4), t(3, 4))),
    # ---- embeddings, recurrent and attention layers
    "Embedding": Entry(lambda: nn.Embedding(10, 4, padding_idx=0), args(labels(2, 5, high=10))),
    "EmbeddingBag": Entry(lambda: nn.EmbeddingBag(10, 4, mode="mean"), args(labels(2, 4, high=10))),
    "GRU": Entry(lambda: Calling(nn.GRU(3, 5, batch_first=True)), args(t(2, 4, 3))),
    "GRUCell": Entry(lambda: nn.GRUCell(3, 5), args(t(2, 3))),
    "LSTM": Entry(lambda: Calling(nn.LSTM(3, 4, num_layers=2, dropout=0.5)), args(t(4, 2, 3))),
    "LSTMCell": Entry(lambda: nn.LSTMCell(3, 5), args(t(2, 3))),
    "RNN": Entry(lambda: Calling(nn.RNN(3, 5, nonlinearity="relu", bidirectional=True)),
                 args(t(4, 2, 3))),
    "RNNCell": Entry(lambda: nn.RNNCell(3, 5), args(t(2, 3))),
    "Transformer": Entry(lambda: nn.Transformer(8, 2, 1, 1, dim_feedforward=16), args(t(5, 2, 8), t(3, 2, 8))),
    "TransformerDecoder": Entry(lambda: nn.TransformerDecoder(decoder_layer(), 2), args(t(3, 2, 8), t(5, 2, 8))),
    "TransformerDecoderLayer": Entry(decoder_layer, args(t(3, 2, 8), t(5, 2, 8))),
    "TransformerEncoder": Entry(lambda: nn.TransformerEncoder(encoder_layer(), 2, enable_nested_tensor=False),
                                args(t(5, 2, 8))),
    "TransformerEncoderLayer": Entry(encoder_layer, args(t(5, 2, 8))),
    # ---- containers and wrappers with a forward
    "DataParallel": Entry(lambda: nn.DataParallel(nn.Linear(4, 3)), args(t(2, 4))),
    "Sequential": Entry(lambda: nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2)), args(t(2, 4))),
}

NOT_RUNNABLE: dict[str, str] = {
    "Module": "the base class: its forward is not implemented",
    "Container": "deprecated base class without a forward",
    "RNNBase": "base class of RNN, LSTM and GRU: its forward is not implemented",
    "RNNCellBase": "base class of RNNCell, LSTMCell and GRUCell: its forward is not implemented",
    "ModuleList": "a container without a forward; tests/e2e/module_corpus.py iterates it inside modules",
    "ModuleDict": "a container without a forward; tests/e2e/module_corpus.py iterates it inside modules",
    "ParameterList": "a container without a forward; tests/e2e/module_corpus.py iterates it inside modules",
    "ParameterDict": "a container without a forward; tests/e2e/module_corpus.py iterates it inside modules",
}
