"""Progress bars for long work (lowering to MLIR, IREE compilation, scripting large models, the op_db run),
drawn by tqdm on a terminal only.

A bar is drawn when stderr is a terminal and TSJIT_PROGRESS is not `0`; otherwise every method is a no-op, so
logs, pipes and the test suite see nothing. tqdm is imported only when a bar is drawn (it costs a first call
nothing otherwise).

    with progress.bar("lowering to linalg-on-tensors", total=4, unit="stage") as bar:
        bar.stage("prepare")      # ends the previous stage (if any) and names the one starting
        ...
        bar.stage("import")
        ...                       # leaving the block ends the last stage
    with progress.bar("scripting Net", total=len(layers), unit="module") as bar:
        for layer in layers:
            ...
            bar.update()
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager


def enabled() -> bool:
    """Whether bars are drawn: stderr is a terminal and TSJIT_PROGRESS is not 0 (read on every call)."""
    if os.environ.get("TSJIT_PROGRESS", "") == "0":
        return False
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


class Bar:
    """A drawn bar (tqdm), or a silent one when `tqdm_bar` is None."""

    def __init__(self, tqdm_bar=None):
        self._bar = tqdm_bar
        self._stage_open = False

    @property
    def shown(self) -> bool:
        return self._bar is not None

    def update(self, count: int = 1) -> None:
        """`count` more units done."""
        if self._bar is not None:
            self._bar.update(count)

    def stage(self, name: str) -> None:
        """The previous stage is done and `name` starts: shown beside the bar while it runs."""
        if self._bar is None:
            return
        if self._stage_open:
            self._bar.update(1)
        self._stage_open = True
        self._bar.set_postfix_str(name)

    def describe(self, text: str) -> None:
        """What the current unit is (an operator's name, a stage): shown beside the bar."""
        if self._bar is not None:
            self._bar.set_postfix_str(text, refresh=False)

    def write(self, text: str) -> None:
        """A line on stderr, above the bar when one is drawn."""
        if self._bar is None:
            sys.stderr.write(text + "\n")
        else:
            self._bar.write(text, file=sys.stderr)

    def close(self) -> None:
        if self._bar is None:
            return
        if self._stage_open:
            self._bar.update(1)
            self._stage_open = False
        self._bar.close()


@contextmanager
def bar(description: str, total: int | None, unit: str = "step") -> Iterator[Bar]:
    """A bar over `total` units (stages, modules, operators), closed when the block ends; silent off a terminal."""
    if not enabled():
        yield Bar()
        return
    from tqdm import tqdm  # deferred: only drawn bars need it

    shown = Bar(tqdm(total=total, desc=description, unit=unit, file=sys.stderr, leave=False, dynamic_ncols=True))
    try:
        yield shown
    finally:
        shown.close()
