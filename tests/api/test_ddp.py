"""Training beyond one machine: tsjit-scripted models under torch.nn.parallel.DistributedDataParallel.

Two processes on 127.0.0.1 (gloo), started with torch.multiprocessing.spawn, each train an MLP and a small conv
net (with BatchNorm, whose buffers DDP broadcasts from rank 0) for five SGD steps on their own data, once as eager
modules and once scripted by tsjit. Each rank initializes its model from its own seed, so equal results also
show that DDP's start-up broadcast reached the scripted module's parameters and buffers. After the steps, the
scripted models' parameters and buffers must equal eager DDP's, and differ from the start (the steps did
something). One spawn runs all four trainings to pay the processes' start-up once.
"""

from __future__ import annotations

import socket

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn

import tsjit

STEPS = 5
WORLD_SIZE = 2


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(8, 16)
        self.out = nn.Linear(16, 4)

    def forward(self, x):
        return self.out(torch.tanh(self.hidden(x)))


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.norm = nn.BatchNorm2d(6)
        self.head = nn.Linear(6, 4)

    def forward(self, x):
        y = torch.relu(self.norm(self.conv(x)))
        return self.head(y.mean(dim=(2, 3)))


MODELS = {"mlp": (MLP, (4, 8)), "conv": (ConvNet, (4, 3, 8, 8))}


def train(rank: int, model_name: str, scripted: bool) -> dict[str, torch.Tensor]:
    """Five DDP steps of one model on this rank's data; the final state (parameters and buffers)."""
    model_class, input_shape = MODELS[model_name]
    torch.manual_seed(100 + rank)  # ranks start from different weights: DDP's broadcast must make them equal
    model = model_class()
    if scripted:
        model = tsjit.script(model)
    ddp = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    data = torch.Generator().manual_seed(rank)
    for _ in range(STEPS):
        x = torch.randn(input_shape, generator=data)
        target = torch.randn(input_shape[0], 4, generator=data)
        loss = nn.functional.mse_loss(ddp(x), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return {name: value.detach().clone() for name, value in model.state_dict().items()}


def worker(rank: int, port: int, directory: str) -> None:
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD_SIZE)
    try:
        torch.manual_seed(100)
        initial = {name: model_class().state_dict() for name, (model_class, _) in MODELS.items()}
        states = {(name, scripted): train(rank, name, scripted) for name in MODELS for scripted in (False, True)}
        torch.save({"states": states, "initial": initial}, f"{directory}/rank{rank}.pt")
    finally:
        dist.destroy_process_group()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def ddp_results(tmp_path_factory) -> dict:
    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("torch.distributed with gloo is not available")
    directory = tmp_path_factory.mktemp("ddp")
    mp.spawn(worker, args=(free_port(), str(directory)), nprocs=WORLD_SIZE)
    return {rank: torch.load(directory / f"rank{rank}.pt") for rank in range(WORLD_SIZE)}


@pytest.mark.parametrize("model_name", sorted(MODELS))
def test_scripted_model_trains_like_eager_under_ddp(ddp_results, model_name):
    for rank in range(WORLD_SIZE):
        eager = ddp_results[rank]["states"][(model_name, False)]
        scripted = ddp_results[rank]["states"][(model_name, True)]
        assert eager.keys() == scripted.keys()
        for name in eager:
            torch.testing.assert_close(scripted[name], eager[name], msg=f"rank {rank}: {name}")


@pytest.mark.parametrize("model_name", sorted(MODELS))
def test_ranks_agree_and_training_moved_the_parameters(ddp_results, model_name):
    ranks = [ddp_results[rank]["states"][(model_name, True)] for rank in range(WORLD_SIZE)]
    parameters = dict(MODELS[model_name][0]().named_parameters())
    for name in parameters:  # broadcast at start, gradients averaged (buffers differ: each rank's data moves them)
        torch.testing.assert_close(ranks[1][name], ranks[0][name], msg=name)
    moved = [name for name, value in ranks[0].items() if value.is_floating_point()
             and not torch.equal(value, ddp_results[0]["initial"][model_name][name])]
    assert "hidden.weight" in moved or "conv.weight" in moved
    if model_name == "conv":
        assert "norm.running_mean" in moved  # buffers updated by the scripted BatchNorm's forward
