"""The executor's switches, as torch.jit keeps them: whether plans are optimized (`tsjit.optimized_execution`,
per thread, as torch's `_set_graph_executor_optimize`) and whether the fuser runs (`tsjit.fuser`, process-wide;
without an override, TSJIT_FUSION=0 turns it off). The executor reads the first on each call without a plan
for its inputs (graph_executor.py's `_unoptimized_plan`), the second when it optimizes a plan, which then keeps
its fusion groups."""

from __future__ import annotations

import os
import threading

_thread = threading.local()
_fusion_override: bool | None = None  # None: TSJIT_FUSION decides


def optimization_enabled() -> bool:
    return getattr(_thread, "optimize", True)


def set_optimization_enabled(flag: bool) -> bool:
    """Set this thread's flag; returns the previous one."""
    previous = optimization_enabled()
    _thread.optimize = flag
    return previous


def fusion_enabled() -> bool:
    if _fusion_override is not None:
        return _fusion_override
    return os.environ.get("TSJIT_FUSION", "1") != "0"


def set_fusion_enabled(flag: bool | None) -> bool | None:
    """Turn the fuser on or off for the process (None: as TSJIT_FUSION says); returns the previous override."""
    global _fusion_override
    previous, _fusion_override = _fusion_override, flag
    return previous
