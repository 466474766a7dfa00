"""The child processes of test_mlir_without_dynamo.py.

`python dynamo_free_programs.py opdb FILE NAME...` saves op_db programs (their source and inputs) to FILE: loading
op_db imports torch._dynamo, so that happens in a process of its own. `python dynamo_free_programs.py compile
FILE [CLASS...]` then, in a fresh process, scripts and compiles to linalg-on-tensors every program below, the
demo's LSTM cell, FILE's op_db programs and the torch.nn modules named (tests/conformance/nn_module_table.py's
instances, in evaluation mode), and prints a JSON report: each program's outcome, and the first program after
which torch._dynamo was in sys.modules (null if none). A program torch-mlir does not lower yet still has its
types refined first, which is what may import torch._dynamo.
"""

from __future__ import annotations

import json
import linecache
import math
import os
import sys
from typing import Any

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


# ---- one or more programs per family of operators --------------------------------------------------------------
def elementwise(x: torch.Tensor, y: torch.Tensor):
    z = torch.relu(x) + y
    z = torch.where(z > 0.5, torch.sigmoid(z) * torch.tanh(y), z / 2.0 - 1.0)
    return torch.clamp(z.pow(2.0), -3.0, 3.0).abs().exp() * torch.erf(x).neg()


def elementwise_in_place(x: torch.Tensor, y: torch.Tensor):
    z = x.clone()
    z.add_(y).mul_(2.0)
    return z.relu_(), (x > y).logical_and(x < 1.0).to(torch.float32)


def reductions(x: torch.Tensor, y: torch.Tensor):
    return (x.sum(1), x.mean(0, keepdim=True), torch.amax(x, 1), torch.softmax(x, 1), torch.log_softmax(y, 0),
            x.argmax(1), torch.max(x, 1)[0])


def views(x: torch.Tensor, y: torch.Tensor):
    a = x.t().reshape(-1)
    b = x.unsqueeze(0).permute(2, 0, 1).flatten(1)
    c, d = torch.chunk(y, 2, 1)
    return a, b, torch.cat([c, d.expand(3, 2)], 0), x.view(2, 6).transpose(0, 1).contiguous()


def products(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor):
    h = torch.mm(x, w.t()) + b
    return torch.addmm(b, x, w.t()), torch.matmul(h.unsqueeze(0), w), torch.nn.functional.linear(x, w, b)


def convolutions(image: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor):
    y = torch.conv2d(image, weight, bias, 1, 1)
    y = torch.nn.functional.max_pool2d(torch.relu(y), 2)
    y = torch.nn.functional.avg_pool2d(y, 2)
    return torch.nn.functional.layer_norm(y, [2, 2])


def indexing(x: torch.Tensor, index: torch.Tensor):
    a = x[1:, ::2]
    b = torch.index_select(x, 0, index)
    c = x.masked_fill(x > 0.0, 0.0)
    return a, b, c, x[0], x.narrow(1, 1, 2)


def loops(x: torch.Tensor, n: int):
    acc = torch.zeros_like(x)
    for i in range(3):
        acc = acc * x + float(i)
    k = 0
    while k < n:
        acc = torch.tanh(acc)
        k += 1
    pieces = [acc]
    for _ in range(2):
        pieces.append(pieces[-1] * 2.0)
    return torch.stack(pieces, 0).sum(0)


def layouts(x: torch.Tensor, y: torch.Tensor):
    """Elementwise operators, reductions and tril on a transposed matrix: results laid out as eager lays them."""
    t = x.t()
    a = torch.relu(t) + y
    b = torch.where(a > 0.0, t * 2.0, y).tril()
    c = torch.sigmoid(t).sum(1) + a.amax(0).mean()
    return b.view(-1), c, (a - t).contiguous().view(-1)


def _family_programs() -> dict[str, tuple[Any, list[Any]]]:
    torch.manual_seed(0)
    matrix, other = torch.randn(3, 4), torch.randn(3, 4)
    return {
        "elementwise": (elementwise, [matrix, other]),
        "elementwise_in_place": (elementwise_in_place, [matrix, other]),
        "reductions": (reductions, [matrix, torch.randn(5)]),
        "views": (views, [matrix, torch.randn(3, 4)]),
        "products": (products, [matrix, torch.randn(5, 4), torch.randn(5)]),
        "convolutions": (convolutions, [torch.randn(1, 2, 8, 8), torch.randn(3, 2, 3, 3), torch.randn(3)]),
        "indexing": (indexing, [matrix, torch.tensor([2, 0])]),
        "loops": (loops, [matrix, 2]),
        "layouts": (layouts, [matrix, torch.randn(4, 3)]),
    }


def _demo_program() -> tuple[Any, list[Any]]:
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    import demo

    return demo.lstm_cell, list(demo.example_inputs())


# ---- the op_db programs ----------------------------------------------------------------------------------------
def save_opdb_programs(path: str, names: list[str]) -> None:
    """Each op_db program's source and inputs (mlir_programs' first float32 sample with a spelling)."""
    sys.path[:0] = [os.path.join(ROOT, "tests", "conformance"), os.path.join(ROOT, "tests", "e2e")]
    import mlir_programs

    found = {}
    for name in names:
        call = mlir_programs._first_sample_call(mlir_programs._op_db()[name.removeprefix("opdb:")])
        assert call is not None, f"{name} has no sample with a TorchScript spelling"
        found[name] = (call.source, call.values)
    torch.save(found, path)


def _opdb_function(name: str, source: str) -> Any:
    """The generated function, its source in linecache so that scripting finds it."""
    filename = f"<opdb {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"torch": torch, "math": math, "Tensor": torch.Tensor, "__name__": "opdb_generated"}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["the_fn"]


# ---- torch.nn modules ------------------------------------------------------------------------------------------
def _nn_programs(classes: list[str]) -> dict[str, tuple[Any, list[Any]]]:
    sys.path.insert(0, os.path.join(ROOT, "tests", "conformance"))
    from nn_module_table import ENTRIES

    torch.manual_seed(0)
    return {f"nn:{name}": (ENTRIES[name].make_module().eval(), list(ENTRIES[name].make_inputs())) for name in classes}


# ---- the check -------------------------------------------------------------------------------------------------
def compile_all(opdb_path: str, nn_classes: list[str]) -> dict[str, Any]:
    import tsjit
    import tsjit.mlir

    programs = {**_family_programs(), "demo:lstm_cell": _demo_program(), **_nn_programs(nn_classes)}
    for name, (source, values) in torch.load(opdb_path, weights_only=False).items():
        programs[name] = (_opdb_function(name, source), list(values))
    outcomes, first_importer = {}, None
    for name, (function, values) in programs.items():
        try:
            tsjit.mlir.compile(tsjit.script(function), values, output_type="linalg-on-tensors")
            outcomes[name] = "ok"
        except Exception as error:
            outcomes[name] = f"{type(error).__name__}: {error}"[:300]
        if first_importer is None and "torch._dynamo" in sys.modules:
            first_importer = name
    return {"outcomes": outcomes, "first_importer": first_importer}


if __name__ == "__main__":
    if sys.argv[1] == "opdb":
        save_opdb_programs(sys.argv[2], sys.argv[3:])
    else:
        print(json.dumps(compile_all(sys.argv[2], sys.argv[3:])))
