"""Libraries as users get them: a package written into a temporary directory put on sys.path, then imported.

Code found this way behaves as an installed library does (its own module name, `__file__`, globals and source
file), which code defined inside a test module does not."""

from __future__ import annotations

import importlib
import sys
import textwrap
from types import ModuleType


def import_library(tmp_path, monkeypatch, name: str, source: str) -> ModuleType:
    """Write package `name` (its `__init__.py` is `source`) under `tmp_path` and import it; the package and
    the sys.path entry are gone after the test."""
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    module = importlib.import_module(name)
    monkeypatch.setitem(sys.modules, name, module)
    return module
