"""What PyTorch's own "am I being traced?" questions answer while tsjit traces.

Library code asks and takes shortcuts a trace must not record when the answer is no:

    def resize(x):                                  # a library function, traced by tsjit.trace
        if not torch.jit.is_tracing():
            return x[:4]                            # a constant-size shortcut
        return x[: x.size(0) // 2]                  # what a trace must record

`torch.jit.is_tracing()` returns `torch._C._is_tracing()`, and torch.nn.functional, torch.distributions and
Module.__call__ ask `torch._C._get_tracing_state()` directly: both only know torch.jit's C++ tracer. While at
least one tsjit trace runs, these two bindings of `torch._C` are replaced by functions that answer for the tsjit
trace of the calling thread and defer to the originals on every other thread and outside traces; when the last
trace ends the originals are put back. No C++ TracingState is ever created: one would make torch.jit's tracer record
(and dispatch) tsjit's own calls.

Except when torch._dynamo was first imported while they were in place (by the traced code, or by another thread):
its tables of torch functions (what it constant-folds, what it may call) are built on import from the attributes of
`torch._C`, so they hold the replacements, and torch.compile could no longer trace the originals (Module.__call__
asks `torch._C._get_tracing_state()`). The replacements then stay, for good: outside traces they answer as the
originals do.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import types
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from tsjit.frontend.tracer import TracingState


class _ThreadState(threading.local):
    """The trace running on each thread: None by default (a class attribute, so reading it never fails a lookup,
    which would cost `getattr(local, "state", None)` about 0.4 us on every call of a scripted function). It lives
    here rather than in tracer.py so that asking it (every call of a scripted function does) loads no tracer."""

    state: TracingState | None = None


_local = _ThreadState()


def get_tracing_state() -> TracingState | None:
    """The trace running on this thread, or None."""
    return _local.state


@contextlib.contextmanager
def tracing_state(state: TracingState | None) -> Iterator[None]:
    """`state` is this thread's trace (None: no trace) for the duration of the `with`."""
    previous = _local.state
    _local.state = state
    try:
        yield
    finally:
        _local.state = previous

_ORIGINAL_IS_TRACING = torch._C._is_tracing
ORIGINAL_GET_TRACING_STATE = torch._C._get_tracing_state
_lock = threading.Lock()
_active_traces = 0


def is_tracing() -> bool:
    """`tsjit.is_tracing()`, and torch._C._is_tracing while tsjit traces: whether this thread is being traced, by
    tsjit or by torch.jit. Scripted code compiles it (by module and name) to `aten::_get_tracing_state`: False."""
    if get_tracing_state() is not None:
        return not _asked_by_torch_script_if_tracing()
    return _ORIGINAL_IS_TRACING()


def _asked_by_torch_script_if_tracing() -> bool:
    """Whether the question comes, through torch.jit.is_tracing(), from the wrapper `@torch.jit._script_if_tracing`
    makes. Told yes, that wrapper would compile its helper with torch.jit.script and run it there, out of the tsjit
    trace's sight (its result would be recorded as a constant); told no, it runs the helper as Python, and the
    trace records the helper's operations."""
    frame = sys._getframe(2)  # this <- is_tracing <- the asker
    if not _is_torch_jit_trace_function(frame, "is_tracing"):
        return False
    return frame.f_back is not None and _is_torch_jit_trace_function(frame.f_back, "wrapper")


def _is_torch_jit_trace_function(frame: types.FrameType, name: str) -> bool:
    return frame.f_globals.get("__name__") == "torch.jit._trace" and frame.f_code.co_name == name


def is_scripting() -> bool:
    """`tsjit.is_scripting()`: False in Python; scripted code compiles it to `aten::is_scripting`, which is True."""
    return False


def torch_jit_is_tracing() -> bool:
    """Whether torch.jit's C++ tracer records this thread's operators right now (tsjit's own tracer aside)."""
    return ORIGINAL_GET_TRACING_STATE() is not None


def no_trace_running() -> bool:
    """Whether neither tsjit nor torch.jit traces this thread: `get_tracing_state() is None and not
    torch_jit_is_tracing()` in one call, for the hot path of every scripted call."""
    return _local.state is None and ORIGINAL_GET_TRACING_STATE() is None


def _get_tracing_state() -> Any:
    """torch._C._get_tracing_state while tsjit traces: this thread's tsjit TracingState (truthy, but not one
    torch.jit can record into), else torch.jit's own answer."""
    state = get_tracing_state()
    return state if state is not None else ORIGINAL_GET_TRACING_STATE()


# (owner, attribute, replacement): set while any thread traces, put back when the last trace ends. torch's tracing
# questions, and what other modules register (trace_torch_jit_calls.py: calls of torch.jit's compiled code)
REPLACED_WHILE_TRACING: list[tuple[Any, str, Any]] = [(torch._C, "_is_tracing", is_tracing),
                                                      (torch._C, "_get_tracing_state", _get_tracing_state)]
_replaced: list[Any] = []  # the originals, while replaced
_dynamo_was_loaded = False  # whether torch._dynamo was imported when the replacements were put in place
_kept = False  # whether the replacements stay for good (torch._dynamo was imported while they were in place)


@contextlib.contextmanager
def torch_sees_tracing() -> Iterator[None]:
    """For the duration of the `with`, torch's tracing questions answer yes on threads tsjit traces (and the other
    replacements of REPLACED_WHILE_TRACING are in place)."""
    global _active_traces
    with _lock:
        if _active_traces == 0 and not _kept:
            _replace()
        _active_traces += 1
    try:
        yield
    finally:
        with _lock:
            _active_traces -= 1
            if _active_traces == 0 and not _kept:
                _put_back()


def _replace() -> None:
    global _dynamo_was_loaded
    _dynamo_was_loaded = "torch._dynamo" in sys.modules
    _replaced[:] = [getattr(owner, name) for owner, name, _ in REPLACED_WHILE_TRACING]
    for owner, name, replacement in REPLACED_WHILE_TRACING:
        setattr(owner, name, replacement)


def _put_back() -> None:
    """The originals back in place, unless torch._dynamo was imported meanwhile and holds the replacements."""
    global _kept
    if not _dynamo_was_loaded and "torch._dynamo" in sys.modules:
        _kept = True
        return
    for (owner, name, _), original in zip(REPLACED_WHILE_TRACING, _replaced):
        setattr(owner, name, original)
