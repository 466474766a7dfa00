"""Programs the command-line tests name as `cli_programs.py:name`."""

import sys
from pathlib import Path

import torch

import tsjit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the cli loads this file by its path
from shared_programs import lstm_cell  # noqa: E402, F401  (named `cli_programs.py:lstm_cell` by the tests)


def scale(x, factor: int):
    return x * factor + x.sum()


def mismatched(x, y):
    z = x + 1
    return torch.mm(z, y)


def not_script(x):
    return x.nonexistent_method()


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 2)

    def forward(self, x):
        return torch.relu(self.linear(x)) * 2

    @tsjit.export
    def twice(self, x):
        return self.forward(x) + self.forward(x)


class Deep(torch.nn.Module):
    """Twelve submodules: scripting it shows a progress bar on a terminal."""

    def __init__(self):
        super().__init__()
        self.layers = torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(12)])

    def forward(self, x):
        return self.layers(x)
