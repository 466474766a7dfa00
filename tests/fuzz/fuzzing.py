"""What every fuzzer of tests/fuzz shares: how long it runs, what counts as a finding, and text mutations.

A fuzzer feeds one parser (or the archive loader) inputs drawn by hypothesis. Every input must give a result or
a tsjit error (tsjit.errors.TsjitError); a finding is any other exception, or an input that runs longer than
the per-example deadline (interrupted by SIGALRM, so a hang fails instead of stalling the suite). A crash of the
interpreter fails the run as a whole.

The default run is short (a few seconds per fuzzer in `make test`); long runs set the environment:

    TSJIT_FUZZ_EXAMPLES=20000 TSJIT_FUZZ_DEADLINE=5 python -m pytest -q tests/fuzz --hypothesis-show-statistics
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tsjit.errors import TsjitError

EXAMPLES = int(os.environ.get("TSJIT_FUZZ_EXAMPLES", "60"))
DEADLINE_SECONDS = float(os.environ.get("TSJIT_FUZZ_DEADLINE", "5"))

FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])


class Hang(BaseException):
    """An input ran past the deadline. A BaseException, so that no `except Exception` of the code under test
    can turn it into an ordinary error."""


@contextlib.contextmanager
def deadline(seconds: float = DEADLINE_SECONDS) -> Iterator[None]:
    """Raise Hang in the main thread if the block runs longer than `seconds` (wall clock)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise Hang(f"no result after {seconds} s")

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def result_or_tsjit_error(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`function(*args)`'s result, or the TsjitError it raised (rendered, to exercise its message). Any other
    exception propagates and fails the test; so does a hang."""
    with deadline():
        try:
            return function(*args, **kwargs)
        except TsjitError as error:
            str(error)
            return error


# ---- text mutations ------------------------------------------------------------------------------------------
@st.composite
def mutated_text(draw, corpus: list[str], fragments: list[str]) -> str:
    """A corpus text with a few edits: characters deleted, fragments inserted or substituted, a slice
    duplicated, cut off, or wrapped many times in brackets (deep nesting)."""
    text = draw(st.sampled_from(corpus))
    for _ in range(draw(st.integers(1, 4))):
        text = draw(_edit(text, fragments))
    return text


@st.composite
def _edit(draw, text: str, fragments: list[str]) -> str:
    start = draw(st.integers(0, len(text)))
    end = min(len(text), start + draw(st.integers(0, 12)))
    kind = draw(st.sampled_from(["delete", "insert", "replace", "duplicate", "truncate", "nest"]))
    if kind == "delete":
        return text[:start] + text[end:]
    if kind == "truncate":
        return text[:start]
    if kind == "duplicate":
        return text[:end] + text[start:end] * draw(st.integers(1, 50)) + text[end:]
    if kind == "nest":
        brackets = draw(st.sampled_from(["()", "[]", "{}", "List[]", "Optional[]", "Tuple[]", "Dict(str,)"]))
        depth = draw(st.sampled_from([2, 30, 300, 3000]))
        return text[:start] + brackets[:-1] * depth + text[start:end] + brackets[-1] * depth + text[end:]
    fragment = draw(st.sampled_from(fragments) | st.characters() | st.text(max_size=4))
    return text[:start] + fragment + (text[end:] if kind == "replace" else text[start:])
