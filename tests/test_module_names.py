"""Test folders have no __init__.py, so pytest imports every test module and helper under its bare file name: two
files of one name in different folders shadow each other when the whole suite runs (one folder alone passes)."""

from __future__ import annotations

import collections
import pathlib

TESTS = pathlib.Path(__file__).parent


def test_no_two_test_files_share_a_module_name() -> None:
    by_name = collections.defaultdict(list)
    for path in TESTS.rglob("*.py"):
        if path.name not in ("__init__.py", "conftest.py"):
            by_name[path.stem].append(str(path.relative_to(TESTS)))
    assert {name: paths for name, paths in by_name.items() if len(paths) > 1} == {}
