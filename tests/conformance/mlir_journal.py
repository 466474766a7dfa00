"""A program's progress through mlir_runner's stages, in a file its worker process's death leaves behind: which
outcomes it finished, and which stage (torch-mlir's pipelines, IREE) was running when the process died."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

CRASHED = "crashed: the worker process died"


class Journal:
    """A program's progress, one JSON line per event in a file that outlives its worker process: the outcomes it
    finished (with its timings and CPU seconds so far), and the stage it began last and has not ended. Should the
    worker die, the parent reads which stage killed it, and the program's next attempt skips the outcomes it has.

        {"event": "attempt", "attempt": 3}
        {"event": "begin", "keys": ["fx tosa"], "stage": "torch-mlir's tosa pipeline"}
        {"event": "end"}
        {"event": "outcomes", "outcomes": {"fx tosa": "pass"}, "timing": {...}, "cpu": 4.2}
        {"event": "done"}
    """

    def __init__(self, path: Path):
        self.path = path
        self.outcomes: dict[str, str] = {}
        self.timing: dict[str, dict[str, float]] = {}
        self.cpu = 0.0
        self._clock: Callable[[], float] | None = None
        self._since = self._earlier = 0.0
        self.running: dict | None = None
        self.attempt: int | None = None
        self.done = False
        lines = path.read_text().splitlines() if path.exists() else []
        for line in lines:
            try:
                event = json.loads(line)
            except ValueError:  # (the last line of a worker killed while writing it)
                continue
            self._apply(event)

    def _apply(self, event: dict) -> None:
        kind = event["event"]
        if kind == "attempt":
            self.attempt, self.running, self.done = event["attempt"], None, False
        elif kind == "begin":
            self.running = event
        elif kind == "end":
            self.running = None
        elif kind == "outcomes":
            self.outcomes.update(event["outcomes"])
            self.timing, self.cpu = event["timing"], event.get("cpu", self.cpu)
        elif kind == "done":
            self.done = True

    def _append(self, event: dict) -> None:
        with self.path.open("a") as file:  # (closed, so flushed: what a dying process wrote stays written)
            file.write(json.dumps(event) + "\n")
        self._apply(event)

    def start(self, attempt: int, clock: Callable[[], float]) -> None:
        """A new attempt, in a new process; `clock` reads the CPU seconds it has spent, which count after those of
        earlier attempts (each up to its last outcome: what a crashed stage spent died with its process)."""
        self._clock, self._since, self._earlier = clock, clock(), self.cpu
        self._append({"event": "attempt", "attempt": attempt})

    def spent(self) -> float:
        """The program's CPU seconds over its attempts."""
        return self.cpu if self._clock is None else self._earlier + self._clock() - self._since

    @contextmanager
    def stage(self, keys: list[str], stage: str) -> Iterator[None]:
        """Work that may kill the process (torch-mlir, IREE), for the outcomes `keys` it serves."""
        self._append({"event": "begin", "keys": keys, "stage": stage})
        try:
            yield
        finally:
            self._append({"event": "end"})

    def record(self, outcomes: dict[str, str]) -> None:
        self._append({"event": "outcomes", "outcomes": outcomes, "timing": self.timing, "cpu": self.spent()})

    def finish(self) -> None:
        self._append({"event": "done"})

    def blame_crash(self) -> bool:
        """After the process died in this attempt: the stage it began and did not end becomes the outcome of the
        keys it served. False when it died outside every stage."""
        if self.running is None:
            return False
        self.record({key: f"{CRASHED} in {self.running['stage']}" for key in self.running["keys"]})
        return True
