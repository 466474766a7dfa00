"""Python's cyclic garbage collector kept off tsjit's critical path.

A full collection walks every object the collector tracks: with torch imported, 165,000 objects and about 150 ms
of CPU, whatever it frees. Scripting a 10-op function and calling it once allocates enough long-lived objects
(tsjit's lazily imported modules, graphs, schemas) to set one off: over half of that first call's time, where
torch.jit, which allocates few Python objects, runs none. Two measures, as CPython-heavy programs take:

- `paused`: the collector is off while tsjit scripts, optimizes and builds plans (and imports the modules that do
  it), and back on (if it was on) when the outermost such stage on any thread is done; garbage made meanwhile goes
  at the collector's next run. Nothing tsjit compiles relies on the collector running in between.
- The first such stage of the process first moves the objects alive then (torch's modules, mostly, which live as
  long as the process) to the collector's permanent generation (gc.freeze), which no collection walks again.
  Cycles among them that are already garbage are never freed, and gc.get_objects() leaves them out.
  TSJIT_GC_FREEZE=0 leaves them where they are.
"""

from __future__ import annotations

import contextlib
import gc
import os
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_depth = 0  # stages compiling now, on all threads
_was_enabled = False  # whether the collector was on when the outermost stage began
_frozen = False  # whether the first stage has frozen what was alive before it


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Run the body with the collector off; nested and concurrent uses turn it back on once, at the last exit."""
    global _depth, _was_enabled, _frozen
    with _lock:
        if not _frozen:
            _frozen = True
            if os.environ.get("TSJIT_GC_FREEZE", "1") != "0":
                gc.freeze()
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()

