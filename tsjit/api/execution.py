"""How scripted code runs, as torch.jit's switches say: `optimized_execution`, `fuser` and `strict_fusion`.

    with tsjit.fuser("none"):           # plans optimized while it is on fuse nothing ("fuser0"/"fuser1": fuse)
        f(x)
    with tsjit.optimized_execution(False):
        f(x)                            # inputs without an optimized plan run the graph as emitted

    @tsjit.script
    def g(x):
        with tsjit.strict_fusion():     # or torch.jit.strict_fusion(): fails to compile a plan where the block
            return x * 2 + 1            # is not fused whole (passes/check_strict_fusion.py)

As in torch.jit (runtime/executor_options.py): `optimized_execution` is read on every call that has no optimized
plan yet, so after the `with` the same inputs get their optimized plan, while one optimized before keeps running
inside it (torch.jit's profiling executor returns its optimized plan before it looks at the switch). The fuser is
read when a plan is optimized, which the profiling executor does after the profiled runs: a plan optimized before
keeps its fusion groups (or their absence), in torch.jit as here, where the fuser's flags are read by the fusion
passes of the optimized plan it builds once.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

from tsjit.errors import ScriptWarning
from tsjit.frontend.torch_tracing_flags import is_scripting
from tsjit.passes.check_strict_fusion import STRICT_FUSION_CLASS
from tsjit.runtime import executor_options

# torch.jit's fuser names, and whether tsjit's fuser (one CPU kernel generator) runs under each: "fuser0" is the
# legacy fuser, "fuser1" NNC, "fuser3" oneDNN Graph; "fuser2" (nvFuser) fuses nothing on the CPU, "none" nothing.
FUSERS = {"fuser0": True, "fuser1": True, "fuser2": False, "fuser3": True, "none": False}


@contextlib.contextmanager
def optimized_execution(should_optimize: bool) -> Iterator[None]:
    """Whether calls inside the `with` (on this thread) without an optimized plan for their inputs get one (True),
    or run the graph as emitted (False)."""
    previous = executor_options.set_optimization_enabled(should_optimize)
    try:
        yield
    finally:
        executor_options.set_optimization_enabled(previous)


@contextlib.contextmanager
def fuser(name: str) -> Iterator[None]:
    """Switch the fuser for plans optimized inside the `with`, by torch.jit's fuser names (see FUSERS)."""
    if name not in FUSERS:
        raise ValueError(f"unrecognized fuser option (name: {name})")
    previous = executor_options.set_fusion_enabled(FUSERS[name])
    try:
        yield
    finally:
        executor_options.set_fusion_enabled(previous)


class strict_fusion:  # noqa: N801  (torch.jit's name)
    """`with tsjit.strict_fusion():` in scripted code: the block must be fused whole, else compiling its plan
    raises "Found unfused operators". Compiled as torch.jit's class of the same name (one class name for both,
    which the check recognizes); in Python it does nothing but warn, as torch.jit's does."""

    _jit_override_qualname = STRICT_FUSION_CLASS

    def __init__(self) -> None:
        if not is_scripting():
            warnings.warn("Only works in script mode", ScriptWarning, stacklevel=2)

    def __enter__(self) -> None:
        pass

    def __exit__(self, type: Any, value: Any, tb: Any) -> None:
        pass
