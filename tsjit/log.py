"""JIT logging and the optimization limiter (seed: jit-overview.md "JIT Logging", "JIT Optimization Limiter").

Logging is switched on per module with TSJIT_LOG_LEVEL, a colon-separated list of module names (the last
component: `dead_code_elimination`, `constant_pooling`, ...). A bare name enables GRAPH_DUMP, `>name` also
GRAPH_UPDATE, `>>name` also GRAPH_DEBUG:

    TSJIT_LOG_LEVEL='>>dead_code_elimination:constant_pooling' python -m tsjit.opt -p dce,constant_pooling f.ir

TSJIT_OPT_LIMIT limits how many rewrites a pass may make, to bisect a miscompilation:
`TSJIT_OPT_LIMIT='dead_code_elimination=3'` lets the first three `opt_allowed()` calls in that module say yes.
TSJIT_LINT=1 makes `run_pass` lint the graph after every pass. TSJIT_FUSION=0 (read whenever the executor builds a
plan) turns off the fusion of elementwise operators into compiled kernels (tsjit.runtime.graph_executor); its log
names are `graph_fuser` (which nodes were grouped), `fusion` (groups that run interpreted) and `compiler`.

The environment is read when first needed; `reset()` re-reads it (tests change it).
"""

from __future__ import annotations

import os
import sys
import threading

GRAPH_DUMP, GRAPH_UPDATE, GRAPH_DEBUG = 1, 2, 3
_LEVEL_NAMES = {GRAPH_DUMP: "DUMP", GRAPH_UPDATE: "UPDATE", GRAPH_DEBUG: "DEBUG"}

_lock = threading.Lock()
_levels: dict[str, int] | None = None
_limits: dict[str, int] | None = None
_counts: dict[str, int] = {}


def reset() -> None:
    """Forget the parsed environment and the rewrite counts."""
    global _levels, _limits
    with _lock:
        _levels, _limits = None, None
        _counts.clear()


def _parse_levels(text: str) -> dict[str, int]:
    levels = {}
    for entry in filter(None, text.split(":")):
        name = entry.lstrip(">")
        depth = len(entry) - len(name)
        levels[_module_key(name)] = min(GRAPH_DUMP + depth, GRAPH_DEBUG)
    return levels


def _parse_limits(text: str) -> dict[str, int]:
    limits = {}
    for entry in filter(None, text.split(":")):
        name, _, count = entry.partition("=")
        limits[_module_key(name)] = int(count) if count.strip().isdigit() else 0
    return limits


def _module_key(name: str) -> str:
    """`tsjit.passes.dead_code_elimination`, `dead_code_elimination.py` -> `dead_code_elimination`."""
    name = name.strip().removesuffix(".py").removesuffix(".cpp")
    return name.rsplit(".", 1)[-1].rsplit("/", 1)[-1]


def _config() -> tuple[dict[str, int], dict[str, int]]:
    global _levels, _limits
    if _levels is None or _limits is None:
        with _lock:
            _levels = _parse_levels(os.environ.get("TSJIT_LOG_LEVEL", ""))
            _limits = _parse_limits(os.environ.get("TSJIT_OPT_LIMIT", ""))
    return _levels, _limits


def _caller_module(depth: int) -> str:
    return _module_key(sys._getframe(depth + 1).f_globals.get("__name__", ""))


def is_enabled(module: str, level: int) -> bool:
    """Whether `module` logs at `level`."""
    return _config()[0].get(_module_key(module), 0) >= level


def log(level: int, message: str, *, module: str | None = None) -> None:
    """Write `message` to stderr if the calling module (or `module`) logs at `level`."""
    if not _config()[0]:  # nothing logs (the usual case): no caller lookup, passes call this for every rewrite
        return
    module = _module_key(module) if module else _caller_module(1)
    if is_enabled(module, level):
        prefix = f"[{_LEVEL_NAMES[level]} {module}] "
        sys.stderr.write("".join(prefix + line + "\n" for line in str(message).splitlines() or [""]))


def graph_dump(message: str, graph) -> None:
    """GRAPH_DUMP: a whole graph, after a pass or at a milestone."""
    if not _config()[0]:
        return
    module = _caller_module(1)
    if is_enabled(module, GRAPH_DUMP):
        log(GRAPH_DUMP, f"{message}\n{graph}", module=module)


def graph_update(message: str) -> None:
    """GRAPH_UPDATE: one transformation (a node removed, a constant folded)."""
    if _config()[0]:
        log(GRAPH_UPDATE, message, module=_caller_module(1))


def graph_debug(message: str) -> None:
    """GRAPH_DEBUG: internals useful when debugging a pass."""
    if _config()[0]:
        log(GRAPH_DEBUG, message, module=_caller_module(1))


def opt_allowed(module: str | None = None) -> bool:
    """Whether the calling pass may make one more rewrite under TSJIT_OPT_LIMIT."""
    limits = _config()[1]
    if not limits:  # no limit set (the usual case): passes ask before every rewrite
        return True
    key = _module_key(module) if module else _caller_module(1)
    limit = limits.get(key)
    if limit is None:
        return True
    with _lock:
        _counts[key] = _counts.get(key, 0) + 1
        return _counts[key] <= limit


def lint_enabled() -> bool:
    """TSJIT_LINT=1: lint after every pass (the test suite sets it)."""
    return os.environ.get("TSJIT_LINT", "") not in ("", "0")
