"""tests/e2e: after the run, the pass rate per backend of the corpus through tsjit -> MLIR -> IREE (recorded by
test_mlir_e2e.py, which is skipped when the `mlir` extra is not installed) and the time its batch took."""

from __future__ import annotations

import sys


def pytest_terminal_summary(terminalreporter):
    e2e = sys.modules.get("test_mlir_e2e")  # imported only when the MLIR e2e test was collected
    if e2e is None or not e2e.RESULTS:
        return
    terminalreporter.section("tsjit -> MLIR -> IREE: e2e corpus pass rate per backend")
    for backend, outcomes in e2e.RESULTS.items():
        passed = sum(outcomes.values())
        terminalreporter.write_line(f"{backend:18s} {passed:3d} / {len(outcomes):3d} "
                                    f"({100 * passed / len(outcomes):.0f}%)")
    if "batch" in e2e.TIMING:
        terminalreporter.write_line(f"(compiled and run in {e2e.TIMING['batch']:.0f} s)")
