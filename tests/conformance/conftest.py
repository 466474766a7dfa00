"""tests/conformance: after the run, the torch.nn module corpus's pass counts per path, tsjit beside torch.jit
(recorded by nn_module_paths.outcomes, for the classes and modes test_nn_modules.py ran)."""

from __future__ import annotations

import sys


def pytest_terminal_summary(terminalreporter):
    paths = sys.modules.get("nn_module_paths")  # imported only when test_nn_modules.py was collected
    if paths is None or not paths.RESULTS:
        return
    terminalreporter.section("torch.nn modules: (class, mode) pairs matching eager, per path")
    for line in paths.summary_lines():
        terminalreporter.write_line(line)
