"""`tsjit.load(f, trusted=False)`: archives whose code reaches outside the program are refused before any of
it runs (and the refusal lists what was found where); `__setstate__` runs under a step budget; archives that stay
inside the program load and run as with trusted=True."""

from __future__ import annotations

import io
import os
import sys

import pytest
import torch

from tsjit.api.archive import load, save
from tsjit.api.archive import load as load_with_limits
from tsjit.errors import SerializationError
from tsjit.ops.outside_world import OUTSIDE_WORLD_OPERATORS, outside_world_effect
from tsjit.ops.registry import get_operators
from tsjit.serialization.archive_reader import ArchiveLimits

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fuzz"))

from hostile_archives import CRAFTED, FORWARD, archive, header, module_pickle, setstate_archive  # noqa: E402

SAVES_IN_SETSTATE = setstate_archive('    torch.save(state, "pwned")\n')
FORWARD_READS = header() + '  def forward(self: __torch__.M, x: Tensor) -> Tensor:\n' \
    '    return torch.from_file("/etc/hostname", None, 1)\n'
HOSTILE = {
    "__setstate__ saves": (SAVES_IN_SETSTATE, "M.__setstate__ calls aten::save"),
    "forward reads a file": (archive(FORWARD_READS, module_pickle("M", b"")), "M.forward calls aten::from_file"),
    "an unused helper function saves": (
        archive(header() + FORWARD + "def helper(x: Tensor) -> None:\n  torch.save(x, \"pwned\")\n",
                module_pickle("M", b"")), "helper calls aten::save"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_archives_are_refused_and_write_nothing(name, tmp_path, monkeypatch):
    data, found = HOSTILE[name]
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SerializationError, match=rf"not trusted(.|\n)*code/__torch__\.py: .*{found}"):
        load(data, trusted=False)
    assert os.listdir(tmp_path) == []


def test_the_same_archive_trusted_writes_a_file(tmp_path, monkeypatch):
    """What trusted=False prevents (torch.jit.load does the same as trusted=True)."""
    monkeypatch.chdir(tmp_path)
    load(SAVES_IN_SETSTATE)
    assert os.listdir(tmp_path) == ["pwned"]


def test_setstate_runs_under_a_step_budget():
    data, _ = CRAFTED["setstate that never ends"]
    with pytest.raises(SerializationError, match=r"step budget of 10000 (.|\n)*max_setstate_steps"):
        load_with_limits(data, trusted=False, _limits=ArchiveLimits(max_setstate_steps=10_000))
    loaded = load_with_limits(setstate_archive("    for i in range(100):\n      self.n = i\n"), trusted=False,
                              _limits=ArchiveLimits(max_setstate_steps=10_000))
    assert loaded.n == 5


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x)) * 2


def test_archives_that_stay_inside_load_untrusted():
    import tsjit

    module = tsjit.script(Net())
    buffer = io.BytesIO()
    save(module, buffer)
    x = torch.randn(4, 3)
    assert torch.equal(load(buffer.getvalue(), trusted=False)(x), module(x))
    theirs = io.BytesIO()
    torch.jit.save(torch.jit.script(Net()), theirs)
    load(theirs.getvalue(), trusted=False)(x)


@pytest.mark.parametrize("kind", sorted(OUTSIDE_WORLD_OPERATORS))
def test_the_table_names_real_operators(kind):
    assert get_operators(kind), f"{kind} is no operator: the table is out of date"
    assert outside_world_effect(kind) == OUTSIDE_WORLD_OPERATORS[kind]


def test_whole_namespaces_are_refused():
    assert outside_world_effect("c10d::allreduce_") and outside_world_effect("_c10d_functional::all_reduce")
    assert outside_world_effect("aten::add") is None and outside_world_effect("prim::Print") is None


def test_eight_threads_call_a_module_loaded_untrusted_a_thousand_times():
    """8 threads x 1,000 calls, the inputs changing among 4 specs (rank, contiguity): every result is eager's."""
    import threading

    import tsjit

    eager = Net()
    buffer = io.BytesIO()
    save(tsjit.script(eager), buffer)
    loaded = load(buffer.getvalue(), trusted=False)
    inputs = [torch.randn(4, 3), torch.randn(2, 5, 3), torch.randn(3, 4).t(), torch.randn(1, 3)]
    with torch.no_grad():
        expected = [eager(x) for x in inputs]
    wrong: list[int] = []
    right: list[int] = []

    def calls(thread: int) -> None:
        for call in range(1000):
            index = (thread + call) % len(inputs)
            (right if torch.allclose(loaded(inputs[index]), expected[index]) else wrong).append(call)

    threads = [threading.Thread(target=calls, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == [] and len(right) == 8000  # (a call that raised would be missing from both)
