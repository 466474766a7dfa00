"""tsjit ships its annotations (PEP 561: `tsjit/py.typed`, package data in pyproject.toml), and the public names,
though loaded on first use, have typed signatures: mypy accepts a user's file that uses the API and reports
the misuses in another. torch itself is left out of mypy's view (`--no-site-packages`: Any), which keeps the
check to tsjit's own signatures and to a couple of seconds."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

USER_FILE = textwrap.dedent("""
    from typing import List

    import torch

    import tsjit


    def double(x: torch.Tensor) -> torch.Tensor:
        return x * 2


    scripted: tsjit.ScriptFunction = tsjit.script(double)
    graph: tsjit.Graph = scripted.graph
    future: tsjit.Future = tsjit.fork(scripted, torch.ones(1))
    result = tsjit.wait(future)
    with tsjit.fuser("none"), tsjit.optimized_execution(False):
        pass
    ok: bool = tsjit.isinstance([1], List[int])
    version: str = tsjit.__version__
    names: list[str] = tsjit.export_opnames(tsjit.script(torch.nn.Linear(2, 2)))
    tsjit.save(tsjit.load("model.pt"), "copy.pt")
""")
MISUSES = textwrap.dedent("""
    import tsjit

    with tsjit.fuser(3):
        pass
    with tsjit.optimized_execution("yes"):
        pass
    count: int = tsjit.__version__
    tsjit.parse_ir(42)
""")


def mypy(tmp_path: Path, text: str) -> list[str]:
    """mypy's error lines (`file:line: error: ... [code]`) for `text` as a user's file."""
    pytest.importorskip("mypy")
    user = tmp_path / "user.py"
    user.write_text(text)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", str(tmp_path / "cache"), "--no-site-packages",
         "--follow-imports=silent", "--ignore-missing-imports", "--config-file", "", str(user)],
        capture_output=True, text=True, env={"MYPYPATH": str(ROOT), "PATH": ""}, timeout=300)
    return [line for line in result.stdout.splitlines() if ": error:" in line]


def test_a_users_file_type_checks(tmp_path):
    assert mypy(tmp_path, USER_FILE) == []


def test_misuses_are_reported_by_the_signatures(tmp_path):
    errors = mypy(tmp_path, MISUSES)
    codes = [(int(re.search(r":(\d+): error", line).group(1)), line.rsplit("[", 1)[-1]) for line in errors]
    assert codes == [(4, "arg-type]"), (6, "arg-type]"), (8, "assignment]"), (9, "arg-type]")], errors


def test_py_typed_ships_with_the_package():
    assert (ROOT / "tsjit" / "py.typed").exists()
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'\[tool\.setuptools\.package-data\]\s*tsjit = \["py\.typed"\]', pyproject)
