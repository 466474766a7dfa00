"""tests/mlir: the bridge to MLIR. Skipped when the `mlir` extra (torch-mlir, IREE) is not installed.

After the run, the pass rate of the IR corpus per backend (recorded by test_mlir_corpus.py) is printed.
"""

from __future__ import annotations

import importlib.util
import sys

import pytest

_MISSING = [name for name in ("torch_mlir", "iree.compiler", "iree.runtime")
            if importlib.util.find_spec(name.split(".")[0]) is None]


def pytest_collection_modifyitems(config, items):
    if not _MISSING:
        return
    skip = pytest.mark.skip(reason=f"the mlir extra is not installed ({', '.join(_MISSING)} missing)")
    for item in items:
        if "tests/mlir/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter):
    corpus = sys.modules.get("mlir_corpus")  # imported only when the corpus test ran
    if corpus is None or not corpus.RESULTS:
        return
    RESULTS = corpus.RESULTS
    terminalreporter.section("tsjit -> MLIR -> IREE: corpus pass rate per backend")
    for backend, outcomes in RESULTS.items():
        passed = sum(outcomes.values())
        terminalreporter.write_line(f"{backend:18s} {passed:3d} / {len(outcomes):3d} "
                                    f"({100 * passed / len(outcomes):.0f}%)")
