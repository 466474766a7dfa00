"""Training through tsjit: a scripted model and its eager twin take the same optimizer steps, and their losses and
parameters stay equal (float64, so fused kernels and eager agree to rounding).

The scripted models' parameters require grad, so the executor puts the ops with gradient formulas into
prim::DifferentiableGraphs (forward graphs fused, backward graphs run by autograd). Those whose forward graph
fuses nothing are inlined back by default; the training runs keep them all (so every model trains through its
formulas), and a check of the default plans sees the LSTM models keep theirs, so a regression to op-by-op
autograd is noticed.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest
import torch
from torch import nn

import tsjit
from tsjit.api.function import bind_arguments
from tsjit.runtime.function import runtime_function
from tsjit.runtime.graph_executor import set_autodiff_subgraph_inlining


class LSTMCell(nn.Module):
    """The seeds' LSTM cell (jit-overview.md "Graph Executor") with its weights as parameters."""

    def __init__(self, features: int, hidden: int):
        super().__init__()
        self.w_ih = nn.Parameter(torch.randn(4 * hidden, features) / 4)
        self.w_hh = nn.Parameter(torch.randn(4 * hidden, hidden) / 4)
        self.b_ih = nn.Parameter(torch.randn(4 * hidden) / 4)
        self.b_hh = nn.Parameter(torch.randn(4 * hidden) / 4)

    def forward(self, x: torch.Tensor, hx: torch.Tensor, cx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        gates = x.mm(self.w_ih.t()) + hx.mm(self.w_hh.t()) + self.b_ih + self.b_hh
        ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
        ingate = torch.sigmoid(ingate)
        forgetgate = torch.sigmoid(forgetgate)
        cellgate = torch.tanh(cellgate)
        outgate = torch.sigmoid(outgate)
        cy = (forgetgate * cx) + (ingate * cellgate)
        hy = outgate * torch.tanh(cy)
        return hy, cy


class CellModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = LSTMCell(6, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hx = torch.zeros(x.size(0), 8, dtype=x.dtype)
        hy, cy = self.cell(x, hx, hx)
        return hy + cy


class LSTMLoop(nn.Module):
    """The cell over 32 time steps, in a scripted loop."""

    def __init__(self):
        super().__init__()
        self.cell = LSTMCell(6, 8)

    def forward(self, xs: torch.Tensor) -> torch.Tensor:
        hx = torch.zeros(xs.size(1), 8, dtype=xs.dtype)
        cx = hx
        for t in range(xs.size(0)):
            hx, cx = self.cell(xs[t], hx, cx)
        return hx


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(4 * 4 * 4, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.pool(torch.relu(self.conv(x)))
        return self.fc(y.reshape(y.size(0), -1))


def mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3))


def encoder() -> nn.Module:
    return nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)


CORPUS: dict[str, tuple[Callable[[], nn.Module], Callable[[], torch.Tensor]]] = {
    "lstm_cell": (CellModel, lambda: torch.randn(4, 6)),
    "lstm32": (LSTMLoop, lambda: torch.randn(32, 2, 6)),
    "mlp": (mlp, lambda: torch.randn(8, 6)),
    "convnet": (ConvNet, lambda: torch.randn(3, 1, 8, 8)),
    "encoder": (encoder, lambda: torch.randn(5, 3, 8)),
}
OPTIMIZERS = {"sgd": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9), "adam": lambda p: torch.optim.Adam(p, lr=0.01)}


def _train(model: Callable, parameters, inputs: list[torch.Tensor], optimizer_name: str) -> list[torch.Tensor]:
    optimizer = OPTIMIZERS[optimizer_name](parameters)
    losses = []
    for x in inputs:
        optimizer.zero_grad()
        loss = (model(x) ** 2).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return losses


@pytest.mark.parametrize("optimizer_name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_five_steps_match_eager(name: str, optimizer_name: str) -> None:
    set_autodiff_subgraph_inlining(False)
    try:
        _five_steps_match_eager(name, optimizer_name)
    finally:
        set_autodiff_subgraph_inlining(True)


def _five_steps_match_eager(name: str, optimizer_name: str) -> None:
    build, make_input = CORPUS[name]
    torch.manual_seed(0)
    eager = build().double()
    twin = copy.deepcopy(eager)
    scripted = tsjit.script(twin)
    inputs = [make_input().double() for _ in range(5)]
    eager_losses = _train(eager, eager.parameters(), inputs, optimizer_name)
    tsjit_losses = _train(scripted, twin.parameters(), inputs, optimizer_name)
    torch.testing.assert_close(tsjit_losses, eager_losses)
    for (key, expected), actual in zip(eager.named_parameters(), twin.parameters()):
        torch.testing.assert_close(actual, expected, msg=lambda m, key=key: f"{key}: {m}")


@pytest.mark.parametrize("name", ["lstm32", "lstm_cell"])
def test_training_plans_hold_differentiable_graphs(name: str) -> None:
    build, make_input = CORPUS[name]
    torch.manual_seed(0)
    scripted = tsjit.script(build().double())
    inputs = bind_arguments(scripted.forward.schema, (scripted._c, make_input().double()), {})
    graph = runtime_function(scripted.forward.function).executor.get_plan(inputs).graph
    assert "prim::DifferentiableGraph" in str(graph), graph
