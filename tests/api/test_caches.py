"""Process-lifetime caches keyed by user objects let go of them: a function, an enum class or a NamedTuple made at
run time and scripted is freed once the program drops it (a server scripting ever new programs keeps no garbage),
while scripting the same object twice still gives the same result. So are traced functions, scripted module
instances, and the torch.jit functions and modules tsjit converted. (A scripted module's class stays, as in
torch.jit, whose concrete type store keeps it too.)

Every file tsjit opens is closed: a program saving and loading archives, running the command line's `show` on
one and scripting from a file, run with `-W error::ResourceWarning`, reports no unclosed file."""

# no `from __future__ import annotations`: the annotations name classes local to the functions below, which the
# functions' bodies name too, so that the scripted functions find them as closure variables

import enum
import gc
import os
import subprocess
import sys
import textwrap
import weakref
from pathlib import Path
from typing import NamedTuple

import pytest
import torch

import tsjit

ROOT = Path(__file__).resolve().parents[2]


def scripted_closure() -> weakref.ref:
    def add_one(x):
        return x + 1

    scripted = tsjit.script(add_one)
    assert tsjit.script(add_one) is scripted
    assert torch.equal(scripted(torch.ones(2)), torch.full((2,), 2.0))
    return weakref.ref(add_one)


def scripted_enum() -> weakref.ref:
    class Color(enum.Enum):
        RED = 1
        GREEN = 2

    def value_of(color: Color) -> int:
        return color.value if color == Color.GREEN else 0  # Color in the body: a closure variable

    assert tsjit.script(value_of)(Color.GREEN) == 2
    return weakref.ref(Color)


def scripted_named_tuple() -> weakref.ref:
    class Pair(NamedTuple):
        first: torch.Tensor
        second: torch.Tensor

    def total(pair: Pair) -> torch.Tensor:
        return Pair(pair.second, pair.first).first + pair.second

    assert torch.equal(tsjit.script(total)(Pair(torch.ones(1), torch.ones(1))), torch.full((1,), 2.0))
    return weakref.ref(Pair)


def test_scripted_functions_enums_and_named_tuples_are_freed_when_dropped() -> None:
    references = [scripted_closure(), scripted_enum(), scripted_named_tuple()]
    gc.collect()
    assert [reference() for reference in references] == [None, None, None]


def traced_closure() -> weakref.ref:
    def double(x):
        return x * 2

    traced = tsjit.trace(double, (torch.ones(2),))
    assert torch.equal(traced(torch.full((2,), 3.0)), torch.full((2,), 6.0))
    return weakref.ref(double)


def scripted_module_instance() -> weakref.ref:
    class AddOne(torch.nn.Module):
        def forward(self, x):
            return x + 1

    module = AddOne()
    assert torch.equal(tsjit.script(module)(torch.ones(1)), torch.full((1,), 2.0))
    return weakref.ref(module)


def converted_torch_jit_function() -> weakref.ref:
    @torch.jit.script
    def minus_one(x):
        return x - 1

    def calls(x):
        return minus_one(x) * 2

    assert torch.equal(tsjit.trace(calls, (torch.ones(2),))(torch.ones(2)), torch.zeros(2))
    assert torch.equal(tsjit.script(minus_one)(torch.ones(2)), torch.zeros(2))
    return weakref.ref(minus_one)


def converted_torch_jit_module() -> weakref.ref:
    class Holder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.sub = torch.jit.script(torch.nn.ReLU())

        def forward(self, x):
            return self.sub(x) + 1

    model = Holder()
    assert torch.equal(tsjit.trace(model, torch.ones(2))(-torch.ones(2)), torch.ones(2))
    return weakref.ref(model.sub)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_traced_functions_scripted_modules_and_converted_torch_jit_objects_are_freed() -> None:
    references = [traced_closure(), scripted_module_instance(), converted_torch_jit_function(),
                  converted_torch_jit_module()]
    gc.collect()
    assert [reference() for reference in references] == [None, None, None, None]


FILES_PROGRAM = textwrap.dedent("""
    import contextlib, gc, io, os, sys
    import torch, tsjit
    from tsjit.cli import main

    directory = sys.argv[1]
    sys.path.insert(0, directory)
    import program                                   # scripted from its file

    function, module = tsjit.script(program.scaled), tsjit.script(program.Net())
    tsjit.save(module, os.path.join(directory, "net.pt"))
    module.save(os.path.join(directory, "net_method.pt"))
    function.save(os.path.join(directory, "function.pt"))
    torch.jit.save(torch.jit.script(program.Net()), os.path.join(directory, "torch_jit.pt"))
    buffer = io.BytesIO()
    tsjit.save(module, buffer)
    buffer.seek(0)
    x = torch.randn(2, 3)
    for loaded in (tsjit.load(os.path.join(directory, "net.pt")), tsjit.load(buffer),
                   tsjit.load(os.path.join(directory, "net_method.pt"), trusted=False)):
        assert torch.allclose(loaded(x), module(x))
    assert torch.equal(tsjit.load(os.path.join(directory, "function.pt"))(x, 2), function(x, 2))
    tsjit.load(os.path.join(directory, "torch_jit.pt"))
    with contextlib.redirect_stdout(io.StringIO()) as shown:
        assert main(["show", os.path.join(directory, "net.pt")]) == 0
        assert main(["show", os.path.join(directory, "program.py") + ":scaled"]) == 0
    assert "aten::relu" in shown.getvalue()
    del function, module, loaded
    gc.collect()
    print("done")
""")

FILES_PROGRAM_SOURCE = textwrap.dedent("""
    import torch

    def scaled(x, n: int):
        return torch.relu(x) * n

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(3, 3)

        def forward(self, x):
            return self.linear(x).sin()
""")


def test_every_file_tsjit_opens_is_closed(tmp_path) -> None:
    (tmp_path / "program.py").write_text(FILES_PROGRAM_SOURCE)
    (tmp_path / "files.py").write_text(FILES_PROGRAM)
    done = subprocess.run([sys.executable, "-W", "error::ResourceWarning", "-X", "dev", str(tmp_path / "files.py"),
                           str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stderr[-3000:]
    assert "ResourceWarning" not in done.stderr, done.stderr[-3000:]
