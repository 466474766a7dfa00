"""Recurrent layers unrolled before import (tsjit/mlir/rnn.py): scripted nn.LSTM / nn.GRU / nn.RNN modules compiled
for each backend, run on IREE and compared with eager PyTorch."""

from __future__ import annotations

import pytest
import torch
from mlir_corpus import assert_close
from torch import nn

import tsjit
import tsjit.mlir
import tsjit.mlir.iree
from tsjit.errors import MLIRError
from tsjit.ir.symbols import aten
from tsjit.mlir.pipelines import _prepare
from tsjit.mlir.prepare import Options

BACKENDS = ("linalg-on-tensors", "tosa", "stablehlo")


class Returning(nn.Module):
    def __init__(self, rnn: nn.Module):
        super().__init__()
        self.rnn = rnn

    def forward(self, x):
        return self.rnn(x)


class LSTMWithState(nn.Module):
    def __init__(self, rnn: nn.Module):
        super().__init__()
        self.rnn = rnn

    def forward(self, x, h: tuple[torch.Tensor, torch.Tensor]):
        return self.rnn(x, h)


class WithState(nn.Module):
    def __init__(self, rnn: nn.Module):
        super().__init__()
        self.rnn = rnn

    def forward(self, x, h: torch.Tensor):
        return self.rnn(x, h)


def _lstm_state(layers_directions: int, batch: int, hidden: int, cell: int | None = None):
    return torch.randn(layers_directions, batch, hidden), torch.randn(layers_directions, batch, cell or hidden)


CASES = {
    "lstm": (lambda: Returning(nn.LSTM(3, 5)), lambda: (torch.randn(4, 2, 3),)),
    "lstm_two_layers_bidirectional_batch_first": (
        lambda: Returning(nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True)),
        lambda: (torch.randn(2, 5, 3),)),
    "lstm_with_state_no_bias": (lambda: LSTMWithState(nn.LSTM(3, 5, bias=False)),
                                lambda: (torch.randn(3, 2, 3), _lstm_state(1, 2, 5))),
    "lstm_projection_with_state": (lambda: LSTMWithState(nn.LSTM(3, 6, num_layers=2, proj_size=2)),
                                   lambda: (torch.randn(3, 2, 3), _lstm_state(2, 2, 2, 6))),
    "gru": (lambda: Returning(nn.GRU(3, 5)), lambda: (torch.randn(4, 2, 3),)),
    "gru_two_layers_bidirectional_with_state": (
        lambda: WithState(nn.GRU(3, 4, num_layers=2, bidirectional=True)),
        lambda: (torch.randn(3, 2, 3), torch.randn(4, 2, 4))),
    "rnn_tanh_batch_first": (lambda: Returning(nn.RNN(3, 4, batch_first=True)), lambda: (torch.randn(2, 3, 3),)),
    "rnn_relu_two_layers": (lambda: Returning(nn.RNN(3, 4, num_layers=2, nonlinearity="relu")),
                            lambda: (torch.randn(3, 2, 3),)),
}


def _module(name: str) -> nn.Module:
    torch.manual_seed(0)
    return CASES[name][0]().eval()


def _inputs(name: str) -> tuple:
    torch.manual_seed(1)
    return CASES[name][1]()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(CASES))
def test_recurrent_module_matches_eager(name, backend):
    module, inputs = _module(name), _inputs(name)
    lowered = tsjit.mlir.compile(tsjit.script(module), inputs, output_type=backend)
    with torch.no_grad():
        expected = module(*inputs)
    assert_close(tsjit.mlir.iree.compile(lowered)(*inputs), expected)


def test_layers_are_unrolled_into_aten_ops():
    program = _prepare(tsjit.script(_module("lstm")), _inputs("lstm"), Options(), "forward")
    kinds = [node.kind for node in program.graph.all_nodes()]
    assert aten.lstm not in kinds
    assert kinds.count(aten.sigmoid) == 3 * 4  # three gates, four time steps


def test_dynamic_sequence_length_is_refused():
    with pytest.raises(MLIRError, match="static sequence length"):
        tsjit.mlir.compile(tsjit.script(_module("gru")), [([-1, 2, 3], torch.float32)])


def test_training_dropout_between_layers_is_kept():
    module = Returning(nn.LSTM(3, 4, num_layers=2, dropout=0.5)).train()
    program = _prepare(tsjit.script(module), (torch.randn(3, 2, 3),), Options(), "forward")
    assert [node.kind for node in program.graph.all_nodes()].count(aten.dropout) == 1
