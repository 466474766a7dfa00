"""Python's cyclic garbage collector paused while tsjit compiles, and nothing more.

`paused` turns the collector off while tsjit scripts, optimizes and builds plans (and imports the modules that do
it), and back on (if it was on) when the outermost such stage on any thread is done. Why this is worth it, and
why it is all a library should do:

- What compiling allocates lives as long as what it compiled (graphs, plans, schemas, modules): a collection in
  the middle of it walks those objects and frees none of them. Paused, they are walked once, by the first young
  collection after the stage, and compiling counts as one young collection rather than dozens; so the
  collections that come due every ten or so younger ones come due later.
- A full collection walks every tracked object (about 165,000 with torch imported, ~120 ms). `import torch`
  leaves one almost due (more objects made since its last full collection than a quarter of those it kept), so
  whatever allocates next pays it: without the pause, scripting a 10-op function and calling it once did.
  tsjit does not freeze objects out of the collector's reach or keep it off outside its own stages: the process
  is the user's. What keeps later collections cheap is tsjit keeping few objects alive (its caches hold results,
  not the Python ast of the files they came from).
- Nothing tsjit compiles relies on the collector running in between; garbage made meanwhile goes at the next run.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_depth = 0  # stages compiling now, on all threads
_was_enabled = False  # whether the collector was on when the outermost stage began


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Run the body with the collector off; nested and concurrent uses turn it back on once, at the last exit."""
    global _depth, _was_enabled
    with _lock:
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
