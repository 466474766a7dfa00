"""The whole e2e corpus through tsjit -> MLIR -> IREE on every backend, compared with eager PyTorch (issue 7).

Every function of corpus.py and every module of module_corpus.py is scripted by tsjit, compiled by
`tsjit.mlir.compile` (modules through the object-graph route) for linalg-on-tensors, TOSA and StableHLO, compiled
by IREE for the CPU, run on the case's example inputs and compared with eager. A case either passes or is listed
in mlir_expected_failures.py for that backend with the reason; the test fails on an unexpected pass as well as on
an unexpected failure, so the list stays true. conftest.py prints the pass rate per backend after the run.

To stay fast, the cases selected for a run are worked through once, in one batch, before the first test reports:
each case is scripted once, its torch-level module built once per variant (linalg keeps asserts and control
flow; TOSA and StableHLO share one with asserts dropped and static control flow unrolled) and lowered per
backend, while IREE compiles the lowered modules in threads (iree-compile is a subprocess). Cases run in
spawned worker processes, one per core: torch-mlir aborts the process on a few programs, which then fails
that case instead of the session. Artifacts are cached by content (tsjit.mlir.iree), so a second run only
runs the programs.

    .venv/bin/python tests/e2e/test_mlir_e2e.py      # prints every failure with its error, by backend
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import multiprocessing.connection
import os
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pytest
import torch

pytest.importorskip("torch_mlir")
pytest.importorskip("iree.compiler")
pytest.importorskip("iree.runtime")

from corpus import CASES  # noqa: E402
from mlir_expected_failures import BACKENDS, EXPECTED_FAILURES  # noqa: E402
from module_corpus import MODULE_CASES  # noqa: E402

import tsjit.mlir  # noqa: E402
import tsjit.mlir.iree as iree  # noqa: E402
from tsjit.api import script  # noqa: E402
from tsjit.api.module import script_module  # noqa: E402
from tsjit.mlir.pipelines import lower  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

WITHOUT_CONTROL_FLOW = ("tosa", "stablehlo")
RESULTS: dict[str, dict[str, bool]] = {}  # backend -> case -> passed; conftest.py prints the pass rates
TIMING: dict[str, float] = {}  # "batch" -> seconds the batch took
WORKERS = max(2, os.cpu_count() or 2)


# ---- the cases -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class E2ECase:
    """One corpus program: how to script it, make its inputs and run it eagerly (seeded like the other e2e
    tests, so that eager and compiled runs see the same inputs)."""

    name: str
    build: Callable[[], object]  # the eager program (a fresh module, or the function)
    make_inputs: Callable[[], tuple]
    is_module: bool

    def inputs(self) -> tuple:
        torch.manual_seed(1 if self.is_module else 0)
        return self.make_inputs()

    def scripted(self):
        return script_module(self.build()) if self.is_module else script(self.build())

    def expected(self):
        program, inputs = self.build(), self.inputs()
        torch.manual_seed(2)
        return program(*inputs)


def _cases() -> dict[str, E2ECase]:
    found = {f"function:{c.name}": E2ECase(f"function:{c.name}", (lambda c=c: c.function), c.make_inputs, False)
             for c in CASES}
    found.update({f"module:{c.name}": E2ECase(f"module:{c.name}", c.build, c.make_inputs, True)
                  for c in MODULE_CASES})
    return found


ALL_CASES = _cases()


# ---- one case, all its backends --------------------------------------------------------------------------------
@dataclass
class Attempt:
    """Where one (case, backend) got to: an error, or a lowered module whose IREE compilation is under way."""

    case: E2ECase
    backend: str
    error: str | None = None
    lowered: object = None
    artifact: concurrent.futures.Future | None = None
    expected: object = None


def run_case(name: str, backends: list[str]) -> dict[str, str | None]:
    """Every backend of one case: its failure, or None for a pass. IREE compiles in threads (iree-compile is a
    subprocess) while the next backend is lowered."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(backends)) as pool:
        attempts = start_case(ALL_CASES[name], backends, pool)
        return {a.backend: finish(a) for a in attempts}


def start_case(case: E2ECase, backends: Iterable[str], pool: concurrent.futures.Executor) -> list[Attempt]:
    """Script, run eagerly, lower for each backend and hand the IREE compilations to `pool`."""
    attempts = [Attempt(case, backend) for backend in backends]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected, target = case.expected(), case.scripted()
    except Exception as error:  # noqa: BLE001  (a case that cannot be scripted or run fails on every backend)
        for attempt in attempts:
            attempt.error = f"scripting or eager run: {_first_line(error)}"
        return attempts
    torch_level: dict[bool, object] = {}
    for attempt in attempts:
        attempt.expected = expected
        _lower(attempt, target, torch_level, pool)
    return attempts


def _lower(attempt: Attempt, target, torch_level: dict, pool: concurrent.futures.Executor) -> None:
    """The backend's module from the torch-level module of its variant (built once), and its IREE compilation."""
    variant = attempt.backend in WITHOUT_CONTROL_FLOW
    try:
        if variant not in torch_level:
            torch_level[variant] = _torch_module(target, attempt.case.inputs(), variant)
        if isinstance(torch_level[variant], Exception):
            raise torch_level[variant]
        attempt.lowered = lower(torch_level[variant], attempt.backend)
        text = attempt.lowered.generic_text()
    except Exception as error:  # noqa: BLE001
        attempt.error = f"compile: {_first_line(error)}"
        return
    attempt.artifact = pool.submit(iree.compile_cached, text, iree.input_type(attempt.backend))


def _torch_module(target, inputs: tuple, without_control_flow: bool):
    """The torch-backend-contract module of a variant, or the error that stopped it (reported per backend)."""
    try:
        return tsjit.mlir.compile(target, inputs, checks=not without_control_flow, unroll=without_control_flow)
    except Exception as error:  # noqa: BLE001
        return error


def finish(attempt: Attempt) -> str | None:
    """Run the compiled program on fresh inputs and compare with eager: None when it matches, else why not."""
    if attempt.error is not None:
        return attempt.error
    try:
        program = iree.CompiledProgram(attempt.artifact.result(), attempt.lowered)
        got = program(*attempt.case.inputs())
    except Exception as error:  # noqa: BLE001
        return f"IREE: {_first_line(error)}"
    return mismatch(got, attempt.expected)


def mismatch(got, expected, path: str = "result") -> str | None:
    """Compiled result against eager: tensors to 1e-4 (dtype and shape exact), scalars, tuples; None if equal."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            return f"{path}: expected a tensor, got {type(got).__name__}"
        if (got.dtype, got.shape) != (expected.dtype, expected.shape):
            return f"{path}: {got.dtype}{list(got.shape)} instead of {expected.dtype}{list(expected.shape)}"
        close = torch.allclose(got, expected.detach(), atol=1e-4, rtol=1e-4, equal_nan=True)
        return None if close else f"{path}: wrong values"
    if isinstance(expected, tuple | list):
        if not isinstance(got, tuple | list) or len(got) != len(expected):
            return f"{path}: expected {len(expected)} elements, got {got!r}"
        return next((m for i, (a, b) in enumerate(zip(got, expected)) if (m := mismatch(a, b, f"{path}[{i}]"))),
                    None)
    if isinstance(expected, float) and isinstance(got, int | float):
        return None if abs(got - expected) <= 1e-4 * max(1.0, abs(expected)) else f"{path}: {got} != {expected}"
    return None if got == expected else f"{path}: {got!r} instead of {expected!r}"


def _first_line(error: Exception) -> str:
    text = f"{type(error).__name__}: {error}"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " | ".join(lines[:3])[:400]


# ---- the batch, in worker processes ----------------------------------------------------------------------------
def _worker(connection) -> None:
    """A worker process: runs the cases it is sent, one at a time, and sends back their outcomes."""
    warnings.simplefilter("ignore")
    while (task := connection.recv()) is not None:
        connection.send(run_case(*task))


class _Worker:
    """A spawned worker process and the case it is running. torch-mlir and IREE abort the process on some
    programs (LLVM's "SmallVector unable to grow", a segmentation fault in the MLIR printer): a worker that dies
    fails its case on every backend, and a fresh worker takes over."""

    def __init__(self, context):
        self.connection, child = context.Pipe()
        self.process = context.Process(target=_worker, args=(child,), daemon=True)
        self.process.start()
        child.close()
        self.task: tuple[str, list[str]] | None = None

    def send(self, task: tuple[str, list[str]]) -> None:
        self.task = task
        self.connection.send(task)

    def stop(self) -> None:
        try:
            self.connection.send(None)
        except OSError:
            pass
        self.process.join(timeout=10)


def run_batch(selected: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str | None]:
    """Every selected (case, backend) worked through: the failure of each, None for a pass. Cases run in
    `WORKERS` spawned processes, so that a crash costs one case and the cores are used."""
    by_case: dict[str, list[str]] = {}
    for name, backend in selected:
        by_case.setdefault(name, []).append(backend)
    started, outcomes = time.monotonic(), {}
    tasks = list(by_case.items())
    context = multiprocessing.get_context("spawn")
    workers = [_Worker(context) for _ in range(min(WORKERS, len(tasks)))]
    for worker in workers:
        if tasks:
            worker.send(tasks.pop(0))
    while any(w.task for w in workers):
        _collect(workers, tasks, outcomes, context)
    for worker in workers:
        worker.stop()
    TIMING["batch"] = TIMING.get("batch", 0.0) + time.monotonic() - started
    return outcomes


def _collect(workers: list[_Worker], tasks: list, outcomes: dict, context) -> None:
    """Wait for a worker to finish (or die), record its case's outcomes and give it the next case."""
    busy = [w for w in workers if w.task]
    ready = multiprocessing.connection.wait([w.connection for w in busy] + [w.process.sentinel for w in busy])
    for i, worker in enumerate(workers):
        if worker.task is None or (worker.connection not in ready and worker.process.sentinel not in ready):
            continue
        name, backends = worker.task
        try:
            results = worker.connection.recv()
        except (EOFError, OSError):
            worker.process.join()
            crash = f"crashed: the process died (exit code {worker.process.exitcode}) in torch-mlir or IREE"
            results = dict.fromkeys(backends, crash)
            worker = workers[i] = _Worker(context)
        outcomes.update({(name, b): r for b, r in results.items()})
        worker.task = None
        if tasks:
            worker.send(tasks.pop(0))


# ---- the tests -------------------------------------------------------------------------------------------------
_outcomes: dict[tuple[str, str], str | None] = {}


@pytest.fixture(scope="module")
def batch(request) -> dict[tuple[str, str], str | None]:
    """The outcomes of all (case, backend) pairs this session selected, computed once."""
    selected = [(item.callspec.params["name"], item.callspec.params["backend"]) for item in request.session.items
                if getattr(item, "originalname", None) == "test_e2e_on_iree" and hasattr(item, "callspec")]
    missing = [key for key in selected if key not in _outcomes]
    _outcomes.update(run_batch(missing))
    return _outcomes


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(ALL_CASES))
def test_e2e_on_iree(name: str, backend: str, batch) -> None:
    if (name, backend) not in batch:
        batch.update(run_batch([(name, backend)]))
    failure = batch[(name, backend)]
    reason = EXPECTED_FAILURES[backend].get(name)
    RESULTS.setdefault(backend, {})[name] = failure is None
    if failure is not None:
        assert reason is not None, f"unexpected failure on {backend}: {failure}"
        return
    assert reason is None, f"unexpected pass: remove {name!r} from EXPECTED_FAILURES[{backend!r}] ({reason})"


def test_expected_failures_name_corpus_cases() -> None:
    for backend, failures in EXPECTED_FAILURES.items():
        assert backend in BACKENDS
        unknown = sorted(set(failures) - set(ALL_CASES))
        assert not unknown, f"{backend}: not in the corpus: {unknown}"
        assert all(reason.strip() for reason in failures.values()), f"{backend}: an entry without a reason"


# ---- by hand: every failure with its error ---------------------------------------------------------------------
def main() -> None:
    outcomes = run_batch([(name, backend) for name in ALL_CASES for backend in BACKENDS])
    for backend in BACKENDS:
        failures = {n: f for (n, b), f in outcomes.items() if b == backend and f is not None}
        print(f"== {backend}: {len(ALL_CASES) - len(failures)} / {len(ALL_CASES)} pass")
        for name, failure in sorted(failures.items()):
            listed = "   " if name in EXPECTED_FAILURES[backend] else "NEW"
            print(f"{listed} {name}: {failure}")
    print(f"batch: {TIMING['batch']:.0f} s")


if __name__ == "__main__":
    main()
