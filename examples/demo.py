"""The main job: the seed's LSTM cell through every stage of tsjit.

1. script it (Python source -> Tree -> Graph), print its graph;
2. print the graph the executor optimizes (specializes, propagates types, fuses) and runs for these inputs;
3. print its TorchScript code (the Python printer);
4. run it and compare with eager PyTorch;
5. save it as a TorchScript archive, load it back (and with torch.jit.load), run both;
6. freeze the module (parameters become constants) and run it;
7. lower it to MLIR (linalg-on-tensors), compile it with IREE, run it and compare.
"""

from __future__ import annotations

import io

import torch

import tsjit
import tsjit.mlir
import tsjit.mlir.iree


def lstm_cell(input, hidden, w_ih, w_hh, b_ih, b_hh):
    # type: (Tensor, Tuple[Tensor, Tensor], Tensor, Tensor, Tensor, Tensor) -> Tuple[Tensor, Tensor]
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


class LSTMCell(torch.nn.Module):
    """The same cell as a module with its weights as parameters: what gets saved as an archive."""

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.w_ih = torch.nn.Parameter(torch.randn(4 * hidden_size, input_size))
        self.w_hh = torch.nn.Parameter(torch.randn(4 * hidden_size, hidden_size))
        self.b_ih = torch.nn.Parameter(torch.randn(4 * hidden_size))
        self.b_hh = torch.nn.Parameter(torch.randn(4 * hidden_size))

    def forward(self, input: torch.Tensor,
                hidden: tuple[torch.Tensor, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        return lstm_cell(input, hidden, self.w_ih, self.w_hh, self.b_ih, self.b_hh)


def example_inputs(batch: int = 3, features: int = 10, hidden: int = 20):
    torch.manual_seed(0)
    return (torch.randn(batch, features), (torch.randn(batch, hidden), torch.randn(batch, hidden)),
            torch.randn(4 * hidden, features), torch.randn(4 * hidden, hidden),
            torch.randn(4 * hidden), torch.randn(4 * hidden))


def max_difference(actual, expected) -> float:
    return max((a - e).abs().max().item() for a, e in zip(actual, expected))


def section(title: str) -> None:
    print(f"\n== {title} ==")


def main() -> None:
    inputs = example_inputs()
    expected = lstm_cell(*inputs)

    scripted = tsjit.script(lstm_cell)
    section("1. tsjit.script(lstm_cell).graph")
    print(scripted.graph)

    section("2. the graph the executor runs for these inputs (specialized to their ArgumentSpec, dtypes and "
            "ranks propagated, elementwise ops fused into a C kernel)")
    print(scripted.graph_for(*inputs))

    section("3. its TorchScript code")
    print(scripted.code)

    section("4. run vs eager PyTorch")
    print(f"max abs difference: {max_difference(scripted(*inputs), expected):.3g}")

    section("5. save and load the cell as a module")
    module = LSTMCell(10, 20)
    scripted_module = tsjit.script(module)
    buffer = io.BytesIO()
    tsjit.save(scripted_module, buffer)
    print(f"archive: {len(buffer.getvalue())} bytes")
    module_inputs = inputs[:2]
    module_expected = module(*module_inputs)
    buffer.seek(0)
    reloaded = tsjit.load(buffer)
    print(f"tsjit.load: max abs difference {max_difference(reloaded(*module_inputs), module_expected):.3g}")
    buffer.seek(0)
    by_torch = torch.jit.load(buffer)
    print(f"torch.jit.load: max abs difference {max_difference(by_torch(*module_inputs), module_expected):.3g}")

    section("6. the module frozen: parameters become constants (tsjit.freeze)")
    frozen = tsjit.freeze(scripted_module.eval())
    print(frozen.graph)
    print(f"frozen: max abs difference {max_difference(frozen(*module_inputs), module_expected):.3g}")

    section("7. lowered to MLIR (linalg-on-tensors) and run on IREE")
    lowered = tsjit.mlir.compile(scripted, inputs, output_type="linalg-on-tensors")
    print(lowered)
    on_iree = tsjit.mlir.iree.compile(lowered)(*inputs)
    print(f"IREE vs eager PyTorch: max abs difference {max_difference(on_iree, expected):.3g}")


if __name__ == "__main__":
    main()
