"""Number the warnings: every aten::warn gets a distinct `warn_id`, so each warns once, as Python does.

    = aten::warn(%msg, %level)      ->      = aten::warn[warn_id=0](%msg, %level)
"""

from __future__ import annotations

import itertools
import threading

from tsjit import log
from tsjit.ir.graph import Graph
from tsjit.ir.symbols import aten

_ids = itertools.count()
_lock = threading.Lock()


def annotate_warns(graph: Graph) -> bool:
    """Give each aten::warn without one a process-unique `warn_id`; returns whether any was added."""
    changed = False
    for node in graph.all_nodes():
        if node.kind is aten.warn and not node.has_attribute("warn_id") and log.opt_allowed():
            with _lock:
                node.i_("warn_id", next(_ids))
            changed = True
    return changed
