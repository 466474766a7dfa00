"""A process-lifetime cache that keeps its most recently used entries within a bound.

Caches of compiled artifacts (IREE modules in tsjit/mlir/iree.py, loaded kernel libraries in
tsjit/codegen/compiler.py) are keyed by the programs users write, so a long-running process that compiles ever new
programs would otherwise keep all of them. `LRUCache` drops the least recently used entries once the entries'
total weight (1 each, or e.g. their size in bytes) passes a limit, and logs each eviction in its owner's log name
(TSJIT_LOG_LEVEL=name). The limit is a function, read on every insertion, so that an environment variable set
later (by a test, by a user) takes effect. Thread-safe: compilations run on worker threads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from tsjit import log

V = TypeVar("V")


class LRUCache(Generic[V]):
    """`get` marks an entry as just used; `put` inserts and evicts the least recently used entries until the
    rest weigh at most `limit()`, never the entry just inserted (a single entry over the limit is kept until the
    next insertion: its caller needs it now)."""

    def __init__(self, name: str, limit: Callable[[], int], weight: Callable[[V], int] = lambda value: 1):
        self.name = name
        self.limit = limit
        self.weight = weight
        self._entries: OrderedDict[Hashable, V] = OrderedDict()
        self._total = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable, default=None):
        """The entry of `key` (now the most recently used), else `default`."""
        with self._lock:
            if key not in self._entries:
                return default
            self._entries.move_to_end(key)
            return self._entries[key]

    def put(self, key: Hashable, value: V) -> None:
        with self._lock:
            if key in self._entries:
                self._total -= self.weight(self._entries.pop(key))
            self._entries[key] = value
            self._total += self.weight(value)
            self._evict(self.limit())

    def _evict(self, limit: int) -> None:
        evicted = 0
        while self._total > limit and len(self._entries) > 1:
            _, value = self._entries.popitem(last=False)
            self._total -= self.weight(value)
            evicted += 1
        if evicted:
            log.log(log.GRAPH_DUMP, f"{self.name} cache over its limit of {limit}: evicted the {evicted} least "
                                    f"recently used, {len(self._entries)} left", module=self.name)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._total = 0
