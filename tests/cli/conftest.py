"""Archives the command-line tests load: one tsjit wrote, and hostile ones crafted by hand (tests/fuzz)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))


@pytest.fixture(scope="session")
def net_archive(tmp_path_factory) -> Path:
    """cli_programs.py's Net, scripted and saved by tsjit."""
    from cli_programs import Net

    import tsjit

    path = tmp_path_factory.mktemp("archives") / "net.pt"
    tsjit.save(tsjit.script(Net()), str(path))
    return path


@pytest.fixture
def hostile_archive(tmp_path) -> Path:
    """An archive whose `__setstate__` writes a file named `pwned` into the working directory."""
    from hostile_archives import setstate_archive

    path = tmp_path / "archive" / "saves.pt"
    path.parent.mkdir()
    path.write_bytes(setstate_archive('    torch.save(state, "pwned")\n'))
    return path
