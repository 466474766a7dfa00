"""The `tsjit` command run as people run it: a subprocess of `python -m tsjit` or of the installed `tsjit` script
(pyproject.toml's [project.scripts], which `pip install -e .` puts beside the interpreter), on this checkout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).parent / "tsjit"
PROGRAMS = Path(__file__).resolve().parent / "cli_programs.py"


def tsjit(*args: str, script: bool = False, stdin: str | None = None, cwd: str | Path | None = None,
          **env: str) -> subprocess.CompletedProcess:
    """Run `python -m tsjit ARGS` (or the installed `tsjit ARGS`) with this checkout's tsjit first on the path."""
    if script:
        assert SCRIPT.is_file(), f"{SCRIPT} is missing: install the package (pip install -e ., as make does)"
    command = [str(SCRIPT)] if script else [sys.executable, "-m", "tsjit"]
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY), **env}
    return subprocess.run([*command, *args], input=stdin, capture_output=True, text=True, cwd=cwd,
                          env=environment, timeout=600)


def program(name: str) -> str:
    """`cli_programs.py:name`: a function or module of this folder's cli_programs.py."""
    return f"{PROGRAMS}:{name}"
