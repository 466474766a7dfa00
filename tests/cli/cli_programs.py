"""Programs the command-line tests name as `cli_programs.py:name`."""

import torch

import tsjit


def lstm_cell(input, hidden: tuple[torch.Tensor, torch.Tensor], w_ih, w_hh, b_ih, b_hh):
    hx, cx = hidden
    gates = torch.mm(input, w_ih.t()) + torch.mm(hx, w_hh.t()) + b_ih + b_hh
    ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
    ingate = torch.sigmoid(ingate)
    forgetgate = torch.sigmoid(forgetgate)
    cellgate = torch.tanh(cellgate)
    outgate = torch.sigmoid(outgate)
    cy = (forgetgate * cx) + (ingate * cellgate)
    hy = outgate * torch.tanh(cy)
    return hy, cy


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
