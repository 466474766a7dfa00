"""Every file tsjit opens is closed, on success and on failure: saving and loading by path (good archives,
torch.save files, pickles, junk) leaves no ResourceWarning behind once the garbage is collected."""

from __future__ import annotations

import gc
import pickle
import warnings

import pytest
import torch

import tsjit
from tsjit.errors import SerializationError


class Doubler(torch.nn.Module):
    def forward(self, x):
        return x * 2


def _unclosed_files(action) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        action()
        gc.collect()
    return [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]


def test_save_and_load_by_path_close_their_files(tmp_path) -> None:
    path = tmp_path / "doubler.pt"

    def round_trip():
        tsjit.save(tsjit.script(Doubler()), path, _extra_files={"note.txt": "hello"})
        extra = {"note.txt": ""}
        loaded = tsjit.load(path, _extra_files=extra)
        assert extra["note.txt"] == b"hello" and torch.equal(loaded(torch.ones(2)), torch.full((2,), 2.0))
        tsjit.load(path, trusted=False)
        tsjit.load(path.read_bytes())

    assert _unclosed_files(round_trip) == []


@pytest.mark.parametrize("kind", ["torch.save", "pickle", "junk", "truncated archive"])
def test_failed_loads_close_their_files(kind, tmp_path) -> None:
    path = tmp_path / "file.pt"
    if kind == "torch.save":
        torch.save({"w": torch.ones(2)}, path)
    elif kind == "pickle":
        path.write_bytes(pickle.dumps([1, 2]))
    elif kind == "junk":
        path.write_bytes(b"\x00" * 100)
    else:
        tsjit.save(tsjit.script(Doubler()), path)
        path.write_bytes(path.read_bytes()[:-200])

    def fail():
        with pytest.raises(SerializationError):
            tsjit.load(path)

    assert _unclosed_files(fail) == []
