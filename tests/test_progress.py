"""tsjit/progress.py: bars on a terminal only. In process with a stand-in terminal for what a bar shows, and in a
subprocess under a pseudo-terminal for what a user sees when scripting a model with many submodules."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

from tsjit import progress

REPOSITORY = Path(__file__).resolve().parent.parent
SCRIPT_DEEP = "import sys; sys.path.insert(0, 'tests/cli'); import tsjit; from cli_programs import Deep; " \
              "tsjit.script(Deep())"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_bar_shows_its_stages_on_a_terminal(monkeypatch):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.delenv("TSJIT_PROGRESS", raising=False)
    with progress.bar("lowering to tosa", 2, unit="stage") as bar:
        bar.stage("preparing the graph")
        bar.stage("importing")
        bar.write("a line above the bar")
    shown = terminal.getvalue()
    assert "lowering to tosa" in shown and "preparing the graph" in shown and "importing" in shown
    assert "0/2" in shown and "50%" in shown and "1/2" in shown and "a line above the bar\n" in shown


def test_silent_off_a_terminal_and_under_tsjit_progress_0(monkeypatch):
    for stream, setting in ((io.StringIO(), "1"), (Terminal(), "0")):
        monkeypatch.setattr(sys, "stderr", stream)
        monkeypatch.setenv("TSJIT_PROGRESS", setting)
        with progress.bar("work", 3) as bar:
            bar.stage("one")
            bar.update()
            bar.describe("two")
        assert not bar.shown and stream.getvalue() == ""


def _run_under_a_terminal(code: str, **env: str) -> tuple[int, str]:
    """Run `python -c code` with stderr (and stdout) on a pseudo-terminal; its exit status and what it drew."""
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # (a new one has 0 columns)
    process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL, stdout=terminal,
                               stderr=terminal, cwd=REPOSITORY, env={**os.environ, **env})
    os.close(terminal)
    output = b""
    while True:
        ready, _, _ = select.select([controller], [], [], 600)
        if not ready:
            process.kill()
            break
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        output += chunk
    os.close(controller)
    return process.wait(timeout=60), output.decode(errors="replace")


def test_scripting_many_submodules_draws_a_bar_on_a_terminal_only():
    status, drawn = _run_under_a_terminal(SCRIPT_DEEP, TSJIT_PROGRESS="")
    assert status == 0, drawn
    assert "scripting Deep" in drawn and "/14" in drawn, drawn  # Deep, its Sequential and 12 Linear layers
    piped = subprocess.run([sys.executable, "-c", SCRIPT_DEEP], capture_output=True, text=True, cwd=REPOSITORY,
                           timeout=600)
    assert piped.returncode == 0 and piped.stderr == "" and piped.stdout == ""
