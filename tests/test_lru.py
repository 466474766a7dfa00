"""tsjit.lru.LRUCache: the least recently used entries go first once the entries' weight passes the limit."""

from __future__ import annotations

from tsjit import log
from tsjit.lru import LRUCache


def test_the_least_recently_used_entries_go_first(monkeypatch, capsys) -> None:
    monkeypatch.setenv("TSJIT_LOG_LEVEL", "unit")
    log.reset()
    cache = LRUCache("unit", lambda: 2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # now "b" is the least recently used
    cache.put("c", 3)
    assert len(cache) == 2 and cache.get("b") is None and cache.get("a") == 1 and cache.get("c") == 3
    assert cache.get("b", "missing") == "missing"
    assert "[DUMP unit] unit cache over its limit of 2: evicted the 1 least recently used, 2 left" in \
        capsys.readouterr().err
    log.reset()


def test_weights_bound_the_total_and_the_newest_entry_always_stays() -> None:
    cache = LRUCache("unit", lambda: 10, weight=len)
    cache.put("a", b"1234")
    cache.put("b", b"1234")
    cache.put("a", b"123456")  # replacing an entry replaces its weight: 10 in all
    assert cache.get("a") == b"123456" and cache.get("b") == b"1234"
    cache.put("big", b"x" * 50)  # over the limit alone: kept, everything older goes
    assert len(cache) == 1 and cache.get("big") == b"x" * 50
    cache.put("c", b"1")
    assert cache.get("big") is None and cache.get("c") == b"1"
    cache.clear()
    assert len(cache) == 0


def test_the_limit_is_read_on_every_insertion() -> None:
    limit = [3]
    cache = LRUCache("unit", lambda: limit[0])
    for key in "abc":
        cache.put(key, key)
    limit[0] = 1
    cache.put("d", "d")
    assert len(cache) == 1 and cache.get("d") == "d"
