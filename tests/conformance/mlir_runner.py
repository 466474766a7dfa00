"""The MLIR conformance corpus (mlir_programs.py) through tsjit and through torch-mlir's FX route, on IREE.

Every program goes two ways to each backend (linalg-on-tensors, TOSA, StableHLO), is compiled by IREE for the CPU
(llvm-cpu), run, and compared with eager PyTorch:

    tsjit  tsjit.script -> tsjit.mlir.compile (torch dialect, the torch backend contract) -> backend pipeline
    fx     torch.export -> torch_mlir.fx.export_and_import(..., output_type=backend)   (the anchor; tests only)

A route "expresses" a program when its front end takes it (tsjit.script, torch.export). The table gives, per
backend and route, the programs lowered and matching eager / total, over the programs both routes express and
over all, and linalg-on-tensors' share of the op_db functions eager runs reproducibly (see `eager`). tsjit's
outcomes are checked against mlir_conformance_failures.py: an unexpected failure and an unexpected pass both fail
the run.

`--routes` and `--backends` choose what runs (default all; `--routes tsjit --backends linalg-on-tensors` gives the
linalg share alone), and the table shows only what ran.

Programs run in worker processes (a ProcessPoolExecutor, `--jobs`, default os.cpu_count()): each lowers its
program on the selected routes, compiles the modules with IREE and runs them. A worker that dies (torch-mlir and
IREE abort on a few programs) breaks the pool. Each program keeps a journal (mlir_journal.py), a file the worker's death
leaves behind: the outcomes it finished and the stage it began last. The pool's unfinished programs run again,
resuming after what they finished; a program that breaks a pool of several workers twice runs alone, and when a
pool of one worker breaks, the crash is its program's: the stage it died in becomes the outcome of the routes and
backends that stage served ("crashed: the worker process died in torch-mlir's tosa pipeline"), and the program
runs once more for the rest. IREE artifacts are cached on disk (tsjit.mlir.iree), so a second run only lowers and
runs. The FX route's outcomes do not depend on tsjit's lowering: they are cached on disk
(`--fx-cache`, see fx_cache_key) by the program's source and data and the versions of torch, torch-mlir and IREE,
so that a rerun pays only tsjit's route. Each record keeps the CPU seconds its program cost (the worker's own and
those of its child processes, iree-compile's included, over its attempts), which the table sums, and those of its
stages (lowering per route, IREE's compilations), and the code version it was measured with: `--json FILE
--resume` accumulates a whole-corpus run across sessions, and the table says which versions it mixes.

    python tests/conformance/mlir_runner.py [--corpus opdb,nn,e2e] [--only REGEX] [--every K] [--jobs N]
        [--routes tsjit,fx] [--backends linalg-on-tensors,tosa,stablehlo] [--timeout SECONDS]
        [--shard I/N] [--json FILE [--resume]] [--merge FILE...] [--failures] [--write-expected]
        [--fx-cache DIR | --no-fx-cache]
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import hashlib
import importlib.metadata
import inspect
import json
import multiprocessing
import os
import re
import resource
import signal
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE), str(HERE.parent / "e2e"), str(HERE.parent), str(HERE.parents[1])]  # corpora (and the
# programs they share), and this checkout's tsjit

import mlir_programs  # noqa: E402
from mlir_journal import CRASHED, Journal  # noqa: E402
from mlir_programs import CORPORA, Program  # noqa: E402

ROUTES = ("tsjit", "fx")
BACKENDS = ("linalg-on-tensors", "tosa", "stablehlo")
WITHOUT_CONTROL_FLOW = ("tosa", "stablehlo")
PASS = "pass"
NOT_EXPRESSED = "not expressed"
PROGRAM_TIMEOUT_SECONDS = 600
# a worker's address space: the alarm cannot stop work inside torch-mlir or LLVM, and one program (the FX route of
# e2e:function:tensor_advanced_indexing) grew past 16 GiB there; over the limit LLVM aborts, and the pool records
# a crash (run_all) instead of the machine running out of memory
WORKER_MEMORY_BYTES = 8 << 30
TIMED_OUT = "no result within"
DEFAULT_FX_CACHE = Path.home() / ".cache" / "tsjit" / "mlir-fx-route"
# The FX route's entry function is renamed from export_and_import's `main` to tsjit's: where both routes lower a
# program to the same module (most op_db functions), the text is then identical and IREE compiles it once.
FX_ENTRY = "forward"


@dataclass(frozen=True)
class Selection:
    """What a run asks of each program: the routes, the backends, and the seconds it may take. Handed to every
    worker with each program (spawned workers import this file afresh: settings of the parent's module would not
    reach them)."""

    routes: tuple[str, ...] = ROUTES
    backends: tuple[str, ...] = BACKENDS
    timeout: int = PROGRAM_TIMEOUT_SECONDS

    def keys(self, route: str, backends: tuple[str, ...] | list[str] | None = None) -> list[str]:
        """The outcome keys (`tsjit tosa`) of a route on `backends` (default: the selected ones)."""
        return [f"{route} {backend}" for backend in (self.backends if backends is None else backends)]


# ---- eager ------------------------------------------------------------------------------------------------------
def eager(program: Program, module: Any) -> tuple[Any, bool]:
    """Eager's result and whether its values are reproducible: the same again under the same seed and under
    another seed. A program whose values change with the seed draws random numbers (rand_like, multinomial,
    dropout in training), one that does not repeat reads uninitialized memory (empty): no compiled program
    reproduces those values (IREE has its own generator), so they are compared by dtype and shape, and the op_db
    share leaves them out of its denominator (torch-mlir's e2e suite, too, checks random ops only through
    statistics the test program computes)."""
    first, second = _seeded(module, program.inputs()), _seeded(module, program.inputs())
    other_seed = _seeded(module, program.inputs(), seed=3)
    return first, _mismatch(first, second, values=True) is None and _mismatch(first, other_seed, values=True) is None


def _seeded(callable_: Any, inputs: tuple, seed: int = 2) -> Any:
    torch.manual_seed(seed)
    return callable_(*inputs)


def _mismatch(expected: Any, got: Any, values: bool, path: str = "result") -> str | None:
    """Why `got` is not `expected`: dtype, shape, values (to 1e-4) or the kind of result; None when equal."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            return f"{path}: {type(got).__name__} instead of a tensor"
        if (got.dtype, got.shape) != (expected.dtype, expected.shape):
            return f"{path}: {got.dtype}{list(got.shape)} instead of {expected.dtype}{list(expected.shape)}"
        if values and not torch.allclose(got, expected.detach(), atol=1e-4, rtol=1e-4, equal_nan=True):
            return f"{path}: wrong values"
        return None
    if isinstance(expected, tuple | list):
        if not isinstance(got, tuple | list) or len(got) != len(expected):
            return f"{path}: {type(got).__name__} instead of {len(expected)} elements"
        return next((m for i, (e, g) in enumerate(zip(expected, got))
                     if (m := _mismatch(e, g, values, f"{path}[{i}]"))), None)
    if isinstance(expected, float) and isinstance(got, int | float):
        return None if not values or abs(got - expected) <= 1e-4 * max(1.0, abs(expected)) else f"{path}: {got}"
    return None if not values or got == expected else f"{path}: {got!r} instead of {expected!r}"


# ---- the two routes ---------------------------------------------------------------------------------------------
def tsjit_route(program: Program, backends: list[str], journal: Journal, timing: dict
                ) -> tuple[dict[str, Any], str | None]:
    """tsjit's lowered module per backend (or the error that stopped it), or why tsjit.script refused."""
    import tsjit
    import tsjit.mlir
    from tsjit.mlir.pipelines import lower

    started = _cpu_seconds()
    try:
        with journal.stage([f"tsjit {b}" for b in backends], "tsjit.script"):
            target = tsjit.script(program.build())
    except Exception as error:  # noqa: BLE001  (a program the front end refuses is not expressed)
        return {}, cause_of(error)
    torch_level: dict[bool, Any] = {}
    lowered: dict[str, Any] = {}
    for backend in backends:
        variant = backend in WITHOUT_CONTROL_FLOW
        try:
            if variant not in torch_level:
                served = [f"tsjit {b}" for b in backends if (b in WITHOUT_CONTROL_FLOW) == variant]
                with journal.stage(served, "tsjit.mlir.compile (to the torch dialect)"):
                    torch_level[variant] = _guarded(lambda v=variant: tsjit.mlir.compile(
                        target, program.inputs(), checks=not v, unroll=v))
            with journal.stage([f"tsjit {backend}"], f"torch-mlir's {backend} pipeline"):
                lowered[backend] = lower(_raise_error(torch_level[variant]), backend)
        except Exception as error:  # noqa: BLE001
            lowered[backend] = error
    timing["lower"] = timing.get("lower", 0.0) + _cpu_seconds() - started
    return lowered, None


def fx_route(program: Program, module: Any, backends: list[str], journal: Journal, timing: dict
             ) -> tuple[dict[str, Any], str | None]:
    """torch-mlir's FX route per backend: torch.export and export_and_import to the torch backend contract once,
    then each backend's pipeline on a copy. (export_and_import(output_type=backend) runs the same decompositions,
    import and torch-backend pipeline, which do not depend on the backend, before lowering: three times the cost
    for the same three modules.)"""
    from torch_mlir import fx, ir
    from torch_mlir.compiler_utils import OutputType, lower_mlir_module

    from tsjit.ir import types as ts
    from tsjit.mlir.pipelines import LoweredModule

    started = _cpu_seconds()
    inputs = program.inputs()
    keys = [f"fx {b}" for b in backends]
    try:
        with journal.stage(keys, "torch.export"):
            exported = torch.export.export(module, inputs, strict=False)
    except Exception as error:  # noqa: BLE001
        return {}, cause_of(error)
    expected = _seeded(module, program.inputs())
    input_types = [ts.TensorType.create_from_tensor(t) for t in _leaves(inputs) if isinstance(t, torch.Tensor)]
    with journal.stage(keys, "torch-mlir's FX import (export_and_import)"):
        contract = _guarded(lambda: fx.export_and_import(exported, output_type="torch"))
    lowered: dict[str, Any] = {}
    for backend in backends:
        try:
            with _raise_error(contract).context, journal.stage([f"fx {backend}"], f"torch-mlir's {backend} pipeline"):
                mlir = ir.Module.parse(contract.operation.get_asm())
                mlir = lower_mlir_module(False, OutputType.get(backend), mlir)
                _entry(mlir).attributes["sym_name"] = ir.StringAttr.get(FX_ENTRY)
            # inputs the program writes (batch_norm's running statistics) come back first, before its results
            mutated = _result_count(mlir) - len(_leaves([expected]))
            result_type = ts.TupleType([ts.TensorType.get()] * mutated + [_result_type(expected)]) if mutated \
                else _result_type(expected)
            lowered[backend] = LoweredModule(mlir, backend, FX_ENTRY, input_types, result_type)
            lowered[backend].mutated_inputs = mutated
        except Exception as error:  # noqa: BLE001
            lowered[backend] = error
    timing["lower"] = timing.get("lower", 0.0) + _cpu_seconds() - started
    return lowered, None


def _result_count(module) -> int:
    from torch_mlir import ir

    return len(ir.FunctionType(ir.TypeAttr(_entry(module).attributes["function_type"]).value).results)


def _entry(module):
    """The module's (first) function: export_and_import's `main`."""
    return next(op for op in module.body.operations if op.operation.name == "func.func").operation


class _Function(torch.nn.Module):
    """A function as the module torch.export takes."""

    def __init__(self, function):
        super().__init__()
        self.function = function

    def forward(self, *args):
        return self.function(*args)


def _leaves(values) -> list:
    return [leaf for v in values for leaf in (_leaves(v) if isinstance(v, tuple | list) else [v])]


def _result_type(result: Any):
    """The TorchScript type of eager's result as the compiled program returns it (lists come back as tuples)."""
    from tsjit.ir import types as ts

    if isinstance(result, tuple | list):
        return ts.TupleType([_result_type(r) for r in result])
    return ts.TensorType.create_from_tensor(result) if isinstance(result, torch.Tensor) else ts.type_of(result)


def _guarded(build):
    try:
        return build()
    except Exception as error:  # noqa: BLE001  (kept, and raised again for each backend that needs it)
        return error


def _raise_error(value):
    if isinstance(value, Exception):
        raise value
    return value


# ---- IREE ---------------------------------------------------------------------------------------------------------
def on_iree(lowered: Any, program: Program, expected: Any, deterministic: bool, timing: dict) -> str:
    """PASS, or why the lowered module did not compile, run or match eager."""
    import tsjit.mlir.iree as iree

    if isinstance(lowered, Exception):
        return cause_of(lowered)
    try:
        text = lowered.generic_text() if hasattr(lowered, "generic_text") else _generic_text(lowered.module)
        started = _cpu_seconds()
        vmfb = iree.compile_cached(text, iree.input_type(lowered.output_type))
        timing["iree"] = timing.get("iree", 0.0) + _cpu_seconds() - started
        got = _seeded(iree.CompiledProgram(vmfb, lowered), _leaves(program.inputs()))
        if getattr(lowered, "mutated_inputs", 0):
            got = got[-1]
    except Exception as error:  # noqa: BLE001
        return cause_of(error)
    problem = _mismatch(canonical_signs(program.name, expected), canonical_signs(program.name, got),
                        values=deterministic)
    return f"mismatch: {problem}" if problem else PASS


# Results eager defines only up to the sign of each vector, by program: the result's index and the dimension its
# vectors run along. torch.linalg.eigh's eigenvectors (the columns) are "not unique" ("different hardware and
# software may compute different eigenvectors", as torch's documentation says): LAPACK's signs are one valid choice.
UP_TO_SIGN: dict[str, dict[int, int]] = {"opdb:linalg.eigh": {1: -2}}


def canonical_signs(name: str, result: Any) -> Any:
    """The result with each vector UP_TO_SIGN names turned so that its entry of largest magnitude is positive
    (both routes' results and eager's are compared so); other results as they are."""
    where = UP_TO_SIGN.get(name)
    if not where or not isinstance(result, tuple | list):
        return result
    turned = list(result)
    for index, dim in where.items():
        vectors = turned[index]
        if isinstance(vectors, torch.Tensor) and vectors.numel():
            largest = vectors.gather(dim, vectors.abs().argmax(dim, keepdim=True))
            turned[index] = vectors * torch.where(largest < 0, -1.0, 1.0).to(vectors.dtype)
    return type(result)(turned)


def _generic_text(module) -> str:
    return module.operation.get_asm(print_generic_op_form=True)


def cause_of(error: BaseException) -> str:
    """A failure as the runner records it: for a pipeline failure the torch-mlir pass and the op that stopped
    it (`convert-torch-to-linalg: torch.aten.foo`), else the error's first line."""
    text = f"{type(error).__name__}: {error}"
    found_pass = re.search(r"in pass ([\w-]+)", text)
    found_op = re.search(r"blocked by ([\w.]+)", text)
    if found_pass:
        return f"{found_pass.group(1)}: {found_op.group(1) if found_op else 'error'}"
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first[:100]


# ---- one program, in a worker ----------------------------------------------------------------------------------
def run_program(name: str, fx_cache: Path | None, selection: Selection, journal_path: Path, attempt: int) -> dict:
    """The selected routes of one program on the selected backends: outcomes, whether each route expressed it,
    timings, and the CPU seconds it cost. The FX route's outcomes come from `fx_cache` when it holds them; what the
    journal holds (an earlier attempt, ended by a crash) is not done again."""
    warnings.simplefilter("ignore")
    _limit_memory(WORKER_MEMORY_BYTES)
    signal.signal(signal.SIGALRM, lambda signum, frame: _expire(selection.timeout))
    signal.alarm(selection.timeout)
    journal = Journal(journal_path)
    journal.start(attempt, _cpu_seconds)
    record: dict[str, Any] = {"name": name, "eager": True, "routes": list(selection.routes),
                              "backends": list(selection.backends)}
    try:
        _run_program(record, fx_cache, selection, journal)
    except TimeoutError as error:
        record["failure"] = str(error)
    finally:
        signal.alarm(0)
    journal.finish()
    record.update(outcomes=journal.outcomes, timing=journal.timing, cpu=journal.spent())
    return record


def _limit_memory(limit: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft > limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard if hard == resource.RLIM_INFINITY else min(hard, limit)))


def _cpu_seconds() -> float:
    """This process's CPU time and that of its finished child processes (iree-compile)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _expire(seconds: int):
    raise TimeoutError(f"{TIMED_OUT} {seconds} s")


def _run_program(record: dict, fx_cache: Path | None, selection: Selection, journal: Journal) -> None:
    program = mlir_programs.program(record["name"])
    if program is None:
        record["eager"] = False
        return
    try:
        built = program.build()
        module = built if program.is_module else _Function(built)
        expected, deterministic = eager(program, module)
    except Exception:  # noqa: BLE001  (a program eager rejects is not a question for a compiler)
        record["eager"] = False
        return
    record["reproducible"] = deterministic
    cache_file = fx_cache / f"{fx_cache_key(program, module, selection.backends)}.json" \
        if fx_cache and "fx" in selection.routes else None
    cached = json.loads(cache_file.read_text()) if cache_file and cache_file.exists() else None
    if cached is not None:
        journal.timing["fx"] = cached["timing"]
        journal.record(cached["outcomes"])
        record["fx_cached"] = True
    for route in selection.routes:
        left = [b for b in selection.backends if f"{route} {b}" not in journal.outcomes]
        if not left:
            continue
        timing = journal.timing.setdefault(route, {})
        lowered, refused = tsjit_route(program, left, journal, timing) if route == "tsjit" else \
            fx_route(program, module, left, journal, timing)
        for backend in left:
            if refused:
                outcome = f"{NOT_EXPRESSED}: {refused}"
            else:
                with journal.stage([f"{route} {backend}"], f"IREE ({route}'s {backend} module)"):
                    outcome = on_iree(lowered[backend], program, expected, deterministic, timing)
            journal.record({f"{route} {backend}": outcome})
    if cache_file and cached is None:
        outcomes = {key: journal.outcomes[key] for key in selection.keys("fx")}
        _write_atomically(cache_file, json.dumps({"name": record["name"], "timing": journal.timing.get("fx", {}),
                                                  "outcomes": outcomes}))


# ---- the FX route's cache -----------------------------------------------------------------------------------
def fx_cache_key(program: Program, module: Any, backends: tuple[str, ...] = BACKENDS) -> str:
    """What the FX route's outcomes depend on, hashed: the program (its name, the source of its builder, inputs
    and classes, the module's description, and every tensor it holds or receives), the backends, the versions of
    torch, torch-mlir and IREE, and the code that lowers, compares and runs it: the functions of this file the FX
    route calls (not the whole file, so that editing the table or the pool keeps the cache) and tsjit.mlir.iree
    (the FX route uses none of tsjit's lowering)."""
    import tsjit.mlir.iree

    digest = hashlib.sha256()
    parts = [program.name, _source_of(program.build), _source_of(program.make_inputs), repr(module),
             *sorted({_source_of(type(m)) for m in module.modules()}), torch.__version__,
             *(importlib.metadata.version(d) for d in ("torch-mlir", "iree-base-compiler", "iree-base-runtime")),
             *(_source_of(code) for code in _FX_OUTCOME_CODE), repr((FX_ENTRY, PASS, NOT_EXPRESSED, CRASHED)),
             repr(tuple(backends)), Path(tsjit.mlir.iree.__file__).read_text()]
    if isinstance(module, _Function):
        parts.append(_source_of(module.function))
    for part in parts:
        digest.update(part.encode() + b"\0")
    for tensor in [*module.state_dict().values(), *_leaves(program.inputs())]:
        digest.update(_tensor_bytes(tensor) if isinstance(tensor, torch.Tensor) else repr(tensor).encode())
    return digest.hexdigest()


# What the FX route's outcomes are computed by, in this file (fx_cache_key hashes their source): the work on a
# program, not what carries its outcomes (run_program, _run_program's bookkeeping, the journal, this cache), so that
# mending those keeps the cache.
_FX_OUTCOME_CODE = (eager, _seeded, _mismatch, fx_route, _result_count, _entry, _Function, _leaves, _result_type,
                    _guarded, _raise_error, on_iree, _generic_text, cause_of)


def _source_of(thing: Any) -> str:
    try:
        return inspect.getsource(thing)
    except (OSError, TypeError):  # (built-in, or defined where no source is kept)
        return getattr(thing, "__qualname__", repr(thing))


def _tensor_bytes(tensor: torch.Tensor) -> bytes:
    """A tensor's dtype, layout, shape and values (a sparse one's by its dense values)."""
    sparse = tensor.layout != torch.strided
    flat = (tensor.to_dense() if sparse else tensor).detach().cpu().contiguous().reshape(-1)
    kind = f"{flat.dtype}{tensor.layout if sparse else ''}{list(tensor.shape)}"
    return kind.encode() + flat.view(torch.uint8).numpy().tobytes()


def _write_atomically(path: Path, text: str) -> None:
    """Written under a temporary name and renamed, so that workers running at once never read half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(text)
    temporary.replace(path)


# ---- the pool -------------------------------------------------------------------------------------------------
def run_all(names: list[str], jobs: int, progress: bool = False, records: dict | None = None,
            fx_cache: Path | None = None, commit: str = "", selection: Selection = Selection(),
            initializer: Callable[[], None] | None = None) -> dict[str, dict]:
    """Every program's record, from `jobs` worker processes. `records` receives them as they come (a JSONFile saves
    each), each stamped with the code version `commit`. Programs that break a pool of several workers twice run
    alone; a crash in a pool of one worker is its program's (see Run.after_crash). `initializer` runs in each
    worker before its programs (tests inject a crash with it)."""
    with tempfile.TemporaryDirectory(prefix="mlir-runner-") as journals:
        run = Run({} if records is None else records, selection, fx_cache, commit, progress, Path(journals),
                  initializer)
        strikes: collections.Counter = collections.Counter()
        pending = list(names)
        while pending:
            shared = [n for n in pending if strikes[n] < 2]
            groups = ([(shared, jobs)] if shared else []) + [([n], 1) for n in pending if strikes[n] >= 2]
            pending = []
            for group, workers in groups:
                broken = run.pool(group, workers)
                if min(workers, len(group)) == 1:
                    pending += run.after_crash(broken)
                else:
                    strikes.update(broken)
                    pending += broken
        return run.records


@dataclass
class Run:
    """What the pools of one run_all share, and the count of pools started (each program's journal names the pool
    of its last attempt)."""

    records: dict
    selection: Selection
    fx_cache: Path | None
    commit: str
    progress: bool
    journals: Path
    initializer: Callable[[], None] | None
    pools: int = field(default=0)

    def journal_path(self, name: str) -> Path:
        return self.journals / f"{hashlib.sha256(name.encode()).hexdigest()[:24]}.jsonl"

    def pool(self, names: list[str], jobs: int) -> list[str]:
        """Run `names` in a fresh pool; the names left unfinished when a worker died."""
        self.pools += 1
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=context,
                                                    initializer=self.initializer) as pool:
            futures = {pool.submit(run_program, name, self.fx_cache, self.selection, self.journal_path(name),
                                   self.pools): name for name in names}
            broken = []
            for future in concurrent.futures.as_completed(futures):
                try:
                    self.records[futures[future]] = {**future.result(), "commit": self.commit}
                except concurrent.futures.process.BrokenProcessPool:
                    broken.append(futures[future])
                    continue
                if self.progress:
                    _print_progress(self.records[futures[future]], len(self.records))
        return broken

    def after_crash(self, broken: list[str]) -> list[str]:
        """After a pool of one worker broke, the names to run again. The program the worker was running (its
        journal began in this pool and is not done) crashed: the stage it died in becomes the outcome of the
        keys that stage served, and it runs again for the rest; if it died outside every stage (eager, building
        the program), its record says it crashed. The other programs had not started."""
        again = []
        for name in broken:
            journal = Journal(self.journal_path(name))
            if journal.attempt != self.pools or journal.done or journal.blame_crash():
                again.append(name)
                continue
            self.records[name] = {"name": name, "eager": True, "routes": list(self.selection.routes),
                                  "backends": list(self.selection.backends), "outcomes": journal.outcomes,
                                  "timing": journal.timing, "cpu": journal.cpu, "commit": self.commit,
                                  "failure": f"{CRASHED} outside its lowering and IREE stages"}
            if self.progress:
                _print_progress(self.records[name], len(self.records))
        return again


def _print_progress(record: dict, count: int) -> None:
    failing = {k: o for k, o in record["outcomes"].items() if o != PASS}
    print(f"[{count}] {record['name']}", *(f"  {k}: {o}" for k, o in sorted(failing.items())),
          sep="\n", file=sys.stderr, flush=True)


class JSONFile(dict):
    """Records written to a JSON file as each arrives, so that an interrupted run keeps what it measured. The
    records the file already holds are kept (a program run again replaces its own): a whole-corpus run accumulates
    across sessions, shard by shard (one process per file at a time; --merge combines files)."""

    def __init__(self, path: Path):
        super().__init__(json.loads(path.read_text()) if path.exists() else {})
        self.path = path

    def __setitem__(self, key: str, value: dict) -> None:
        super().__setitem__(key, value)
        self.path.write_text(json.dumps(self))


def code_version() -> str:
    """The commit of this checkout (`+dirty` when tsjit/ or tests/ has uncommitted changes): what a record was
    measured with, so that a table accumulated across sessions says which versions it mixes."""
    import subprocess

    def git(*args: str) -> str:
        found = subprocess.run(["git", "-C", str(HERE), *args], capture_output=True, text=True)
        return found.stdout.strip() if found.returncode == 0 else ""

    commit = git("rev-parse", "--short=12", "HEAD") or "unknown"
    return commit + ("+dirty" if git("status", "--porcelain", "--", "../../tsjit", "..") else "")


# ---- the table ----------------------------------------------------------------------------------------------------
def outcome(record: dict, route: str, backend: str) -> str:
    return record["outcomes"].get(f"{route} {backend}", record.get("failure", NOT_EXPRESSED))


def asked(record: dict, route: str, backend: str | None = None) -> bool:
    """Whether the record's run asked for the route (on the backend). Records made before --routes and --backends
    asked for all."""
    return route in record.get("routes", ROUTES) and (backend is None or backend in record.get("backends", BACKENDS))


def ran(records: list[dict]) -> tuple[list[str], list[str]]:
    """The routes and the backends some record asked for, in the table's order."""
    routes = [route for route in ROUTES if any(asked(r, route) for r in records)]
    backends = [backend for backend in BACKENDS if any(asked(r, route, backend) for r in records for route in routes)]
    return routes, backends


def expressed(record: dict, route: str) -> bool:
    """Whether the route's front end took the program (a route not asked for took nothing)."""
    first = record.get("backends", BACKENDS)[0]
    return asked(record, route) and not outcome(record, route, first).startswith(NOT_EXPRESSED)


def table(records: dict[str, dict]) -> str:
    """Per corpus and backend: lowered-and-matching / total per route, tsjit beside FX on the programs both express
    (`both`) and on all; only the routes and backends that ran."""
    ran_eagerly = [r for r in records.values() if r["eager"]]
    routes, backends = ran(ran_eagerly)
    both_routes = len(routes) == len(ROUTES)
    per_route = " ".join(f"{route:>7s}" for route in routes)
    lines = [f"{'corpus':6s} {'backend':18s} " + (f"{'both':>5s} {per_route}   " if both_routes else "") +
             f"{'all':>5s} {per_route}"]
    for corpus in ("all", *CORPORA):
        chosen = [r for r in ran_eagerly if corpus == "all" or r["name"].startswith(corpus + ":")]
        both = [r for r in chosen if all(expressed(r, route) for route in ROUTES)]
        for backend in backends:
            def cells(rows, backend=backend):
                asking = [r for r in rows if any(asked(r, route, backend) for route in routes)]
                passed = (sum(asked(r, route, backend) and outcome(r, route, backend) == PASS for r in asking)
                          for route in routes)
                return f"{len(asking):5d} " + " ".join(f"{n:7d}" for n in passed)
            if chosen:
                lines.append(f"{corpus:6s} {backend:18s} " + (f"{cells(both)}   " if both_routes else "") +
                             cells(chosen))
    linalg = ("tsjit", "linalg-on-tensors")
    opdb = [r for r in ran_eagerly if r["name"].startswith("opdb:") and asked(r, *linalg)]
    reproducible = [r for r in opdb if r.get("reproducible", True)]
    if reproducible:
        passed = sum(outcome(r, *linalg) == PASS for r in reproducible)
        lines.append(f"\nlinalg-on-tensors (tsjit): {passed} / {len(reproducible)} op_db functions eager runs "
                     f"reproducibly ({100 * passed / len(reproducible):.1f}%; {len(opdb) - len(reproducible)} more "
                     f"draw random numbers or read uninitialized memory: compared by dtype and shape, not counted)")
    lines.append(compile_cost(ran_eagerly, routes, backends))
    commits = collections.Counter(r.get("commit", "unknown") for r in records.values())
    lines.append("code versions: " + ", ".join(f"{c} ({n} programs)" for c, n in commits.most_common()))
    return "\n".join(lines)


def coverage(records: dict[str, dict], corpora: tuple[str, ...] = CORPORA) -> str:
    """How much of each corpus the records cover (programs eager rejects and op_db functions without a sample
    count as covered: they were looked at)."""
    names = mlir_programs.program_names(corpora)
    parts = []
    for corpus in corpora:
        total = [n for n in names if n.startswith(corpus + ":")]
        parts.append(f"{corpus} {sum(n in records for n in total)}/{len(total)}")
    return "covers " + ", ".join(parts)


def compile_cost(records: list[dict], routes: list[str], backends: list[str]) -> str:
    """Median CPU seconds per program (its process's and iree-compile's: on a shared machine wall-clock time
    measures the other load) of lowering to the backends and of IREE's compilations, per route over the programs
    it lowered and, side by side, over the programs both lowered."""
    lowered = {route: {r["name"]: r["timing"][route] for r in records if "lower" in r["timing"].get(route, {})}
               for route in routes}
    cached = "; the FX route's as first measured where its outcomes were cached" if "fx" in routes else ""
    lines = [f"\ncompile cost, median CPU seconds per program (lowering to {', '.join(backends)}; IREE's "
             f"compilations, cache hits where the disk cache had the artifact{cached}):",
             f"{'route':24s} {'programs':>8s} {'lowering':>9s} {'IREE':>7s}"]
    lines += [_cost_row(route, list(lowered[route].values())) for route in routes]
    if len(routes) > 1:
        common = sorted(set.intersection(*(set(timings) for timings in lowered.values())))
        lines += [_cost_row(f"{route} (both lowered)", [lowered[route][n] for n in common]) for route in routes]
    cpu = [r["cpu"] for r in records if "cpu" in r]
    if cpu:
        lines.append(f"CPU per program: median {statistics.median(cpu):.1f} s, total {sum(cpu):.0f} s over "
                     f"{len(cpu)} programs" + (f" (FX route from the cache for "
                                               f"{sum(bool(r.get('fx_cached')) for r in records)})" if cached else ""))
    return "\n".join(lines)


def _cost_row(label: str, timings: list[dict]) -> str:
    if not timings:
        return f"{label:24s} {0:8d} {'-':>9s} {'-':>7s}"
    lowering = statistics.median(t["lower"] for t in timings)
    compiling = statistics.median(t.get("iree", 0.0) for t in timings)
    return f"{label:24s} {len(timings):8d} {lowering:9.2f} {compiling:7.2f}"


def causes(records: dict[str, dict], route: str = "tsjit") -> str:
    """The failure causes of a route, most frequent first, per backend it ran on."""
    lines = []
    for backend in ran(list(records.values()))[1]:
        counted = collections.Counter(outcome(r, route, backend) for r in records.values()
                                      if r["eager"] and asked(r, route, backend) and outcome(r, route, backend) != PASS)
        lines.append(f"\n{route} {backend}: {sum(counted.values())} failing")
        lines += [f"{n:5d}  {cause}" for cause, n in counted.most_common()]
    return "\n".join(lines)


# ---- expectations -------------------------------------------------------------------------------------------------
def check_expectations(records: dict[str, dict], expected: dict[tuple[str, str], str]) -> list[str]:
    """tsjit's outcomes against the expected-failure list: unexpected failures and unexpected passes."""
    problems = []
    for name, record in sorted(records.items()):
        if not record["eager"]:
            continue
        for backend in BACKENDS:
            if not asked(record, "tsjit", backend):
                continue
            failure = outcome(record, "tsjit", backend)
            listed = (name, backend) in expected
            if failure != PASS and not listed:
                problems.append(f"unexpected failure {name} {backend}: {failure}")
            if failure == PASS and listed:
                problems.append(f"unexpected pass {name} {backend} (remove it from mlir_conformance_failures.py)")
    return problems


def write_expected(records: dict[str, dict], path: Path) -> None:
    """Rewrite the expected-failure list from a run (entries of programs and backends not run are kept)."""
    from mlir_conformance_failures import EXPECTED_FAILURES

    entries = {k: v for k, v in EXPECTED_FAILURES.items() if k[0] not in records or
               not asked(records[k[0]], "tsjit", k[1])}
    entries.update({(name, backend): outcome(r, "tsjit", backend) for name, r in records.items() if r["eager"]
                    for backend in BACKENDS
                    if asked(r, "tsjit", backend) and outcome(r, "tsjit", backend) != PASS})
    text = path.read_text()
    head = text[:text.index("EXPECTED_FAILURES:")]
    body = "".join(f"    {k!r}: {v!r},\n" for k, v in sorted(entries.items()))
    path.write_text(f"{head}EXPECTED_FAILURES: dict[tuple[str, str], str] = {{\n{body}}}\n")


def select(corpora: tuple[str, ...], only: str | None, every: int, shard: tuple[int, int]) -> list[str]:
    names = mlir_programs.program_names(corpora)[::every]
    names = [n for n in names if only is None or re.search(only, n)]
    return names[shard[0]::shard[1]]


def _listed(allowed: tuple[str, ...]) -> Callable[[str], tuple[str, ...]]:
    """An option's comma-separated choices among `allowed`, in `allowed`'s order."""
    def parse(text: str) -> tuple[str, ...]:
        chosen = set(text.split(","))
        if not chosen <= set(allowed):
            raise argparse.ArgumentTypeError(f"{', '.join(sorted(chosen - set(allowed)))}: not one of {allowed}")
        return tuple(a for a in allowed if a in chosen)
    return parse


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default=",".join(CORPORA), help="comma-separated: opdb, nn, e2e")
    parser.add_argument("--only", help="regular expression on program names (opdb:abs, nn:Linear, e2e:module:x)")
    parser.add_argument("--every", type=int, default=1, help="every k-th program")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    parser.add_argument("--routes", type=_listed(ROUTES), default=ROUTES, help="comma-separated: tsjit, fx")
    parser.add_argument("--backends", type=_listed(BACKENDS), default=BACKENDS,
                        help="comma-separated: " + ", ".join(BACKENDS))
    parser.add_argument("--timeout", type=int, default=PROGRAM_TIMEOUT_SECONDS, help="seconds per program")
    parser.add_argument("--shard", default="0/1", help="i/n: the i-th of n interleaved parts of the selection")
    parser.add_argument("--json", type=Path, help="also write the records to this file (its records are kept)")
    parser.add_argument("--resume", action="store_true",
                        help="with --json: skip programs the file has a record of (except those that timed out "
                             "and those whose record lacks a selected route or backend)")
    parser.add_argument("--merge", type=Path, nargs="+", help="summarize the records of --json files")
    parser.add_argument("--failures", action="store_true", help="print the failure causes per backend")
    parser.add_argument("--write-expected", action="store_true", help="record tsjit's failures as expected")
    parser.add_argument("--quiet", action="store_true", help="no per-program progress lines")
    parser.add_argument("--fx-cache", type=Path, default=DEFAULT_FX_CACHE,
                        help=f"the FX route's outcomes, cached (default {DEFAULT_FX_CACHE})")
    parser.add_argument("--no-fx-cache", action="store_true", help="run the FX route of every program")
    options = parser.parse_args(argv)
    from mlir_conformance_failures import EXPECTED_FAILURES

    started = time.monotonic()
    records: dict[str, dict] = {}
    commit = code_version()
    if options.merge:
        for part in options.merge:
            records.update(json.loads(part.read_text()))
    else:
        if options.resume and not options.json:
            parser.error("--resume needs --json FILE")
        index, count = (int(n) for n in options.shard.split("/"))
        names = select(tuple(options.corpus.split(",")), options.only, options.every, (index, count))
        records = JSONFile(options.json) if options.json else {}
        selection = Selection(options.routes, options.backends, options.timeout)
        if options.resume:  # (a program that ran out of time ran on a loaded machine: it runs again)
            names = [n for n in names if n not in records or records[n].get("failure", "").startswith(TIMED_OUT)
                     or not all(asked(records[n], r, b) for r in selection.routes for b in selection.backends)]
        run_all(names, options.jobs, not options.quiet, records, None if options.no_fx_cache else options.fx_cache,
                commit, selection)
    print(table(records))
    print(coverage(records, tuple(options.corpus.split(","))))
    if options.failures:
        print(*(causes(records, route) for route in ran(list(records.values()))[0]), sep="\n")
    print(f"\n{len(records)} programs in {time.monotonic() - started:.0f} s")
    if options.write_expected:  # (from every record given: the table above lists the code versions they mix)
        write_expected(records, HERE / "mlir_conformance_failures.py")
        return 0
    problems = check_expectations(records, EXPECTED_FAILURES)
    print("\n".join(problems) if problems else "every tsjit outcome as expected")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
