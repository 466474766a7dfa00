"""The collector is off while tsjit compiles and as it was afterwards; nothing is frozen out of its reach."""

import gc
import threading
import weakref

import torch

import tsjit
from tsjit import garbage_collection


def test_paused_nests_and_restores_the_collector():
    assert gc.isenabled()
    with garbage_collection.paused():
        assert not gc.isenabled()
        with garbage_collection.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # only the outermost exit turns it back on
    assert gc.isenabled()


def test_paused_leaves_a_disabled_collector_disabled():
    gc.disable()
    try:
        with garbage_collection.paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_paused_restores_after_an_error():
    try:
        with garbage_collection.paused():
            raise ValueError("inside")
    except ValueError:
        pass
    assert gc.isenabled()


def test_concurrent_stages_turn_it_back_on_at_the_last_exit():
    inside, release = threading.Event(), threading.Event()

    def stage():
        with garbage_collection.paused():
            inside.set()
            release.wait()

    thread = threading.Thread(target=stage)
    thread.start()
    inside.wait()
    with garbage_collection.paused():
        pass
    assert not gc.isenabled()  # the other thread is still compiling
    release.set()
    thread.join()
    assert gc.isenabled()


def test_scripting_and_calling_leave_the_collector_on_and_collecting():
    def f(x, y):
        return torch.sigmoid(x * y) + x

    x, y = torch.randn(3), torch.randn(3)
    assert torch.equal(tsjit.script(f)(x, y), f(x, y))
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0  # the process's objects are the user's: none moved out of the collector's reach

    class Cycle:
        pass

    cycle = Cycle()
    cycle.self = cycle
    alive = weakref.ref(cycle)
    del cycle
    gc.collect()
    assert alive() is None
