"""Futures and the thread pool behind fork and wait (seed: jit-overview.md "Evaluation Semantics").

`fork(fn, *args)` starts `fn(*args)` on the pool and returns a Future at once; `wait(future)` returns its value
or raises the exception the forked work raised. In the IR the same pair is

    %fut : Future[Tensor] = prim::fork_0(%x)      # attribute Subgraph: the forked graph
    %y : Tensor = aten::wait(%fut)

A tsjit Function forks through its `run_async`: its InterpreterState suspends at `aten::wait` on an unfinished
future and is resumed on a pool thread when that future completes, so forked graphs never hold a pool thread
while they wait. A plain Python callable can only block; when it blocks on a pool thread, that thread runs other
queued tasks meanwhile, so nested forks cannot deadlock the pool.
"""

from __future__ import annotations

import collections
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

import torch

from tsjit.frontend.torch_tracing_flags import get_tracing_state

Task = Callable[[], None]


class Future(torch.futures.Future):
    """The result of forked work: a value or an exception, set once, with callbacks run on completion.

    It is a `torch.futures.Future` (what torch.jit.fork returns), so `then`, `torch.futures.wait_all` and
    `torch.jit.wait` take it: completing it completes the torch future too. Waiting, though, is tsjit's own
    (a pool thread runs queued tasks while it waits, so nested forks cannot deadlock the pool).
    """

    __slots__ = ("_condition", "_done", "_value", "_exception", "_callbacks")

    def __init__(self):
        super().__init__()
        self._condition = threading.Condition(threading.Lock())
        self._done = False
        self._value: Any = None
        self._exception: BaseException | None = None
        self._callbacks: list[Callable[[Future], None]] = []

    def done(self) -> bool:
        return self._done

    def set_result(self, value: Any) -> None:
        self._complete(value, None)

    def set_exception(self, exception: BaseException) -> None:
        self._complete(None, exception)

    def value(self) -> Any:
        """The value of a completed future; raises the exception it completed with."""
        if self._exception is not None:
            raise self._exception
        return self._value

    def wait(self) -> Any:
        """Block until completed, then return the value (or raise the exception)."""
        self.block_until_done()
        return self.value()

    def block_until_done(self) -> None:
        """Block until completed; on a pool thread, run other queued tasks meanwhile."""
        if self._done:
            return
        if _pool.is_worker_thread():
            _pool.help_until(self)
            return
        with self._condition:
            self._condition.wait_for(self.done)

    def add_done_callback(self, callback: Callable[[Future], None]) -> None:
        """Call `callback(self)` once completed: now if already done, else on the completing thread."""
        with self._condition:
            if not self._done:
                self._callbacks.append(callback)
                return
        callback(self)

    def _complete(self, value: Any, exception: BaseException | None) -> None:
        with self._condition:
            if self._done:
                raise RuntimeError("Future was already completed")
            self._value, self._exception, self._done = value, exception, True
            callbacks, self._callbacks = self._callbacks, []
            self._condition.notify_all()
        _pool.wake_helpers()
        for callback in callbacks:
            callback(self)
        if exception is not None:  # the torch future holds the exception; its `wait` and `value` raise it
            self._set_unwrap_func(_raise)
        torch._C.Future.set_result(self, exception if exception is not None else value)  # runs `then` callbacks

    def __repr__(self) -> str:
        state = "pending" if not self._done else ("failed" if self._exception is not None else "done")
        return f"<tsjit Future {state}>"


def _raise(exception: BaseException) -> None:
    raise exception


class ThreadPool:
    """A fixed set of daemon worker threads running tasks in submission order, started on first use.

    Without `num_threads` it has as many threads as PyTorch's inter-op pool, on which TorchScript runs forked
    work. A worker that must block on a future (`help_until`) runs queued tasks instead of sleeping, so work
    forked from forked work always makes progress however few workers there are.

    When there are no more workers than CPUs this process may use, each worker is placed on its own CPU. Workers
    hand the GIL to each other around every operator, and Linux places a woken thread near the thread that woke
    it, so unplaced workers pile onto one CPU and forked work runs no faster than serial work (bench fork4:
    0.81x serial unplaced, 0.57x placed; torch.jit's GIL-free forks 0.54x).
    """

    def __init__(self, num_threads: int | None = None):
        self.num_threads = num_threads
        self._tasks: collections.deque[Task] = collections.deque()
        self._condition = threading.Condition(threading.Lock())
        self._helpers = 0
        self._workers: list[threading.Thread] = []
        self._local = threading.local()

    def submit(self, task: Task) -> None:
        with self._condition:
            if not self._workers:
                self._start_workers()
            self._tasks.append(task)
            self._condition.notify()

    def is_worker_thread(self) -> bool:
        return getattr(self._local, "is_worker", False)

    def help_until(self, future: Future) -> None:
        """Run queued tasks on this thread until `future` completes."""
        while True:
            with self._condition:
                self._helpers += 1
                try:
                    self._condition.wait_for(lambda: self._tasks or future.done())
                finally:
                    self._helpers -= 1
                if future.done():
                    return
                task = self._tasks.popleft()
            _run_task(task)

    def wake_helpers(self) -> None:
        """Tell workers blocked in `help_until` that some future completed."""
        if self._helpers:
            with self._condition:
                self._condition.notify_all()

    def _start_workers(self) -> None:
        if self.num_threads is None:
            self.num_threads = max(1, torch.get_num_interop_threads())
        cpus = _worker_cpus(self.num_threads)
        for index in range(self.num_threads):
            worker = threading.Thread(target=self._work, args=(cpus[index],), name=f"tsjit-pool-{index}",
                                      daemon=True)
            worker.start()
            self._workers.append(worker)

    def _work(self, cpu: int | None) -> None:
        self._local.is_worker = True
        if cpu is not None:
            os.sched_setaffinity(threading.get_native_id(), {cpu})
        while True:
            with self._condition:
                self._condition.wait_for(lambda: self._tasks)
                task = self._tasks.popleft()
            _run_task(task)


def _worker_cpus(count: int) -> list[int | None]:
    """A distinct CPU for each of `count` workers, or None for each where that is not possible."""
    if not hasattr(os, "sched_getaffinity"):
        return [None] * count
    cpus = sorted(os.sched_getaffinity(0))
    return list(cpus[:count]) if count <= len(cpus) else [None] * count


def _run_task(task: Task) -> None:
    """Run a task; one that raises is a bug (tasks report failures through futures): report it, keep going."""
    try:
        task()
    except Exception:
        sys.excepthook(*sys.exc_info())


_pool = ThreadPool()


def submit(task: Task) -> None:
    """Run `task()` on a pool thread; it must not raise (tasks report failures through their futures)."""
    _pool.submit(task)


def fork(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
    """Start `fn(*args, **kwargs)` on the thread pool and return the Future of its result.

    Objects with a `run_async(*args) -> Future` method (tsjit Functions and Methods) start that way, which lets
    their interpreter suspend at waits instead of blocking a pool thread. While this thread traces, the call runs
    now, recorded as a `prim::fork` (tracer.py `record_fork`), and the Future returned is already complete.
    """
    state = get_tracing_state()
    if state is not None:
        future = Future()
        future.set_result(state.record_fork(future, fn, args, kwargs))
        return future
    run_async = getattr(fn, "run_async", None)
    if run_async is not None and not kwargs:
        return run_async(*args)
    future = Future()
    submit(lambda: complete_with(future, fn, *args, **kwargs))
    return future


def wait(future: Future) -> Any:
    """The value of a forked computation, waiting for it; re-raises the exception the forked work raised.
    While this thread traces, the wait is recorded as an `aten::wait`."""
    state = get_tracing_state()
    if state is not None:
        return state.record_wait(future, future.wait())
    return future.wait()


def complete_with(future: Future, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Complete `future` with `fn(*args, **kwargs)`, or with the exception it raises."""
    try:
        result = fn(*args, **kwargs)
    except Exception as error:
        future.set_exception(error)
        return
    future.set_result(result)
