"""Runs op_db's cases (opdb_cases.py) through tsjit and torch.jit on three paths and compares with eager.

Paths: `script` (the generated function scripted once per source, run on every sample that shares it),
`trace` (the function traced on each sample's tensors, its other values bound) and `save_load` (the scripted
function saved as an archive, loaded back and run). An (OpInfo, variant) passes a path when every sample eager
accepts gives the same result: same dtype and shape, values exact for integers and bools and close for floats.
Every call is seeded (torch.manual_seed(0)) as TorchScript's own tests do for random ops; a sample whose eager
result differs from itself under the same seed, and every result of the `empty` family (uninitialized memory), is
compared by dtype and shape only.

    python tests/conformance/opdb_runner.py [--only REGEX] [--every K] [--no-torch-jit] [--write-expected]
        [--shard I/N --json FILE] [--merge FILE...]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import re
import signal
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE), str(HERE.parents[1])]  # the corpus modules, and the tsjit of this checkout

import opdb_cases  # noqa: E402
from opdb_cases import Call, VariantCase, python_function  # noqa: E402

import tsjit  # noqa: E402
from tsjit import progress  # noqa: E402

PATHS = ("script", "trace", "save_load")
PASS = "pass"
OP_TIMEOUT_SECONDS = 120


# ----------------------------------------------------------------------------------------------------------------
# the two compilers, behind one interface
# ----------------------------------------------------------------------------------------------------------------
def _torch_jit_save_load(scripted: Any) -> Any:
    buffer = io.BytesIO()
    torch.jit.save(scripted, buffer)
    buffer.seek(0)
    return torch.jit.load(buffer)


def _tsjit_save_load(scripted: Any) -> Any:
    buffer = io.BytesIO()
    tsjit.save(scripted, buffer)
    return tsjit.load(buffer.getvalue())


@dataclass(frozen=True)
class Compiler:
    name: str
    script: Callable[[Callable], Any]
    trace: Callable[[Callable, tuple], Any]
    save_load: Callable[[Any], Any]


TSJIT = Compiler("tsjit", tsjit.script, lambda f, xs: tsjit.trace(f, xs, check_trace=False), _tsjit_save_load)
TORCH_JIT = Compiler("torch.jit", torch.jit.script, lambda f, xs: torch.jit.trace(f, xs, check_trace=False),
                     _torch_jit_save_load)


# ----------------------------------------------------------------------------------------------------------------
# eager references and comparison
# ----------------------------------------------------------------------------------------------------------------
def fresh(values: list[Any]) -> list[Any]:
    """Copies of a call's tensors (in-place variants write their inputs)."""
    return [v.clone() if isinstance(v, torch.Tensor) else [t.clone() for t in v] if opdb_cases._is_tensor_list(v)
            else v for v in values]


def seeded(function: Callable, values: list[Any]) -> Any:
    torch.manual_seed(0)
    return function(*fresh(values))


def mismatch(expected: Any, actual: Any, values_too: bool = True) -> str | None:
    """Why `actual` is not eager's `expected` (None when it is): dtype, shape, values or the kind of result."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            return f"result is {type(actual).__name__}, eager gives Tensor"
        if actual.dtype != expected.dtype:
            return "wrong dtype"
        if actual.shape != expected.shape:
            return "wrong shape"
        if values_too and not _close(expected, actual):
            return "wrong values"
        return None
    if isinstance(expected, list | tuple):
        if not isinstance(actual, list | tuple) or len(actual) != len(expected):
            return f"result is {type(actual).__name__}, eager gives {type(expected).__name__}"
        return next((m for e, a in zip(expected, actual) if (m := mismatch(e, a, values_too))), None)
    if type(actual) is not type(expected):
        return f"result is {type(actual).__name__}, eager gives {type(expected).__name__}"
    if values_too and not (expected == actual or expected != expected and actual != actual):
        return "wrong values"
    return None


def _close(expected: torch.Tensor, actual: torch.Tensor) -> bool:
    if expected.layout != torch.strided or actual.layout != torch.strided:
        expected, actual = expected.to_dense(), actual.to_dense()
    if expected.dtype.is_floating_point or expected.dtype.is_complex:
        return torch.allclose(actual, expected, rtol=1.3e-6, atol=1e-5, equal_nan=True)
    return torch.equal(actual, expected)


@dataclass
class Reference:
    """Eager's result for a call, and whether it repeats under the same seed."""

    call: Call
    result: Any
    deterministic: bool


def references(case: VariantCase) -> list[Reference]:
    """Eager results of the calls eager accepts (a sample eager rejects is not a question for a compiler)."""
    found = []
    for call in case.calls:
        function = python_function(call.source, case.op_name)
        try:
            first, second = seeded(function, call.values), seeded(function, call.values)
        except Exception:
            continue
        comparable = not opdb_cases.UNINITIALIZED.search(case.op_name) and mismatch(first, second) is None
        found.append(Reference(call, first, comparable))
    return found


# ----------------------------------------------------------------------------------------------------------------
# one (OpInfo, variant) on one path through one compiler
# ----------------------------------------------------------------------------------------------------------------
def cause_of(error: BaseException) -> str:
    """An error as a failure cause, with the names of ops, types and values taken out so that causes group."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    text = lines[0] if lines else ""
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", text)
    text = re.sub(r"\b(aten|prim|torch|Tensor)\.[\w.]+|\b\w+::[\w.]+", "<op>", text)
    text = re.sub(r"\d+", "N", text)
    return f"{type(error).__name__}: {text[:110]}"


def _program(compiler: Compiler, path: str, function: Callable, call: Call, compiled: dict[str, Any]) -> tuple:
    """The compiled program for a call on `path` and the values it takes (scripts are made once per source)."""
    if path == "trace":
        traced_fn, tensors = opdb_cases.partial_on_tensors(function, call)
        torch.manual_seed(0)
        return compiler.trace(traced_fn, tuple(fresh(list(tensors)))), list(tensors)
    if call.source not in compiled:
        scripted = compiler.script(function)
        compiled[call.source] = compiler.save_load(scripted) if path == "save_load" else scripted
    return compiled[call.source], call.values


def run_path(compiler: Compiler, path: str, case: VariantCase, refs: list[Reference]) -> str:
    """PASS or the cause of the first sample that fails."""
    compiled: dict[str, Any] = {}
    for ref in refs:
        try:
            program, values = _program(compiler, path, python_function(ref.call.source, case.op_name), ref.call,
                                       compiled)
            problem = mismatch(ref.result, seeded(program, values), ref.deterministic)
        except Exception as error:  # every compiler error is an outcome to record
            return cause_of(error)
        if problem:
            return f"mismatch: {problem}"
    return PASS


class OpTimeout(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds: int):
    def expire(signum, frame):
        raise OpTimeout(f"no result within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# ----------------------------------------------------------------------------------------------------------------
# the corpus run
# ----------------------------------------------------------------------------------------------------------------
Key = tuple[str, str, str]  # (OpInfo, variant, path)


@dataclass
class Results:
    outcomes: dict[str, dict[Key, str]] = field(default_factory=lambda: collections.defaultdict(dict))
    samples: int = 0  # calls eager accepts, over every (OpInfo, variant)
    functions: int = 0  # generated functions they share (each scripted once per compiler)

    def to_json(self) -> dict:
        return {"samples": self.samples, "functions": self.functions,
                "outcomes": {c: [[*k, o] for k, o in outcomes.items()] for c, outcomes in self.outcomes.items()}}

    def merge_json(self, data: dict) -> None:
        self.samples += data["samples"]
        self.functions += data["functions"]
        for compiler, rows in data["outcomes"].items():
            self.outcomes[compiler].update({tuple(row[:3]): row[3] for row in rows})

    def record(self, compiler: str, key: Key, outcome: str) -> None:
        self.outcomes[compiler][key] = outcome


def run_op(op, results: Results, compilers: tuple[Compiler, ...],
           variants: tuple[str, ...] = opdb_cases.VARIANTS) -> None:
    """The variants of one OpInfo on every path through every compiler."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in opdb_cases.variant_cases(op, variants):
            refs = references(case)
            if not refs:
                continue
            results.samples += len(refs)
            results.functions += len({ref.call.source for ref in refs})
            for compiler in compilers:
                for path in PATHS:
                    try:
                        with time_limit(OP_TIMEOUT_SECONDS):
                            outcome = run_path(compiler, path, case, refs)
                    except OpTimeout as error:
                        outcome = cause_of(error)
                    results.record(compiler.name, (case.op_name, case.variant, path), outcome)


def selected_ops(only: str | None = None, every: int = 1, shard: tuple[int, int] = (0, 1)) -> list:
    """The OpInfos with a call spelling (op_db's lambdas and properties have none), every k-th, or by name;
    shard (i, n) keeps the i-th of n interleaved parts (to run the corpus in several processes)."""
    ops = [op for op in opdb_cases.load_op_db() if opdb_cases.callees(op)][::every]
    ops = [op for op in ops if only is None or re.search(only, opdb_cases.full_name(op))]
    return ops[shard[0]::shard[1]]


def run_corpus(ops: list, compilers: tuple[Compiler, ...], lines: bool = False) -> Results:
    """Run every OpInfo. On a terminal a progress bar counts them (tsjit/progress.py); `lines` prints each one's
    failures on stderr, and off a terminal also a line per OpInfo with its time."""
    results = Results()
    with progress.bar("op_db conformance", len(ops), unit="OpInfo") as bar:
        for index, op in enumerate(ops):
            started = time.monotonic()
            bar.describe(opdb_cases.full_name(op))
            run_op(op, results, compilers)
            bar.update()
            if lines:
                failures = [f"  {c} {k[1]} {k[2]}: {o}" for c, outcomes in results.outcomes.items()
                            for k, o in outcomes.items() if k[0] == opdb_cases.full_name(op) and o != PASS]
                done = [] if bar.shown else \
                    [f"[{index + 1}/{len(ops)}] {opdb_cases.full_name(op)} {time.monotonic() - started:.1f}s"]
                if done or failures:
                    bar.write("\n".join(done + failures))
    return results


# ----------------------------------------------------------------------------------------------------------------
# expectations and the summary
# ----------------------------------------------------------------------------------------------------------------
def check_expectations(results: Results, expected: dict[Key, str]) -> list[str]:
    """What disagrees with the expected-failure list: unexpected failures, unexpected passes, and entries whose
    reason is that torch.jit fails too while torch.jit passes."""
    from opdb_expected_failures import TORCH_JIT_FAILS_TOO

    problems = []
    ours, theirs = results.outcomes["tsjit"], results.outcomes.get("torch.jit")
    for key, outcome in sorted(ours.items()):
        if outcome != PASS and key not in expected:
            problems.append(f"unexpected failure {key}: {outcome}")
        if outcome == PASS and key in expected:
            problems.append(f"unexpected pass {key} (remove it from opdb_expected_failures.py)")
        if key in expected and expected[key] == TORCH_JIT_FAILS_TOO and theirs and theirs.get(key) == PASS:
            problems.append(f"{key} is listed as failing in torch.jit too, but torch.jit passes")
    return problems


def summary(results: Results) -> str:
    """Per variant and path: OpInfos passing / total for tsjit and torch.jit, then the failure causes."""
    ours, theirs = results.outcomes["tsjit"], results.outcomes.get("torch.jit", {})
    lines = [f"{results.samples} samples as calls of {results.functions} generated functions\n",
             f"{'variant':9s} {'path':10s} {'tsjit':>11s} {'torch.jit':>11s} {'torch.jit only':>15s}"]
    for variant in opdb_cases.VARIANTS:
        for path in PATHS:
            keys = [k for k in ours if k[1:] == (variant, path)]
            if not keys:
                continue
            passed = sum(ours[k] == PASS for k in keys)
            if theirs:
                their_passed = f"{sum(theirs.get(k) == PASS for k in keys):5d} / {len(keys):<4d}"
                only = f"{sum(theirs.get(k) == PASS and ours[k] != PASS for k in keys):15d}"
            else:
                their_passed, only = f"{'-':>11s}", f"{'-':>15s}"
            lines.append(f"{variant:9s} {path:10s} {passed:5d} / {len(keys):<4d} {their_passed} {only}")
    for name, outcomes in results.outcomes.items():
        causes = collections.Counter(o for o in outcomes.values() if o != PASS)
        lines.append(f"\n{name}: {sum(causes.values())} failing (OpInfo, variant, path), {len(causes)} causes")
        lines += [f"{count:5d}  {cause}" for cause, count in causes.most_common()]
    return "\n".join(lines)


def write_expected(results: Results, path: Path) -> None:
    """Rewrite the expected-failure list from a run: keeps the entries with a written reason, and lists every
    tsjit failure that torch.jit shares as TORCH_JIT_FAILS_TOO (entries of OpInfos not run are kept)."""
    from opdb_expected_failures import EXPECTED_FAILURES, TORCH_JIT_FAILS_TOO

    ours, theirs = results.outcomes["tsjit"], results.outcomes["torch.jit"]
    entries = {k: v for k, v in EXPECTED_FAILURES.items() if k not in ours or v != TORCH_JIT_FAILS_TOO}
    entries.update({k: TORCH_JIT_FAILS_TOO for k, o in ours.items() if o != PASS and theirs.get(k) != PASS})
    text = path.read_text()
    head = text[:text.index("EXPECTED_FAILURES")]
    body = "".join(f"    {k!r}: {'TORCH_JIT_FAILS_TOO' if v == TORCH_JIT_FAILS_TOO else repr(v)},\n"
                   for k, v in sorted(entries.items()))
    path.write_text(f"{head}EXPECTED_FAILURES: dict[tuple[str, str, str], str] = {{\n{body}}}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="regular expression on OpInfo names (name.variant_test_name)")
    parser.add_argument("--every", type=int, default=1, help="every k-th OpInfo of op_db")
    parser.add_argument("--no-torch-jit", action="store_true", help="run tsjit only")
    parser.add_argument("--write-expected", action="store_true",
                        help="record the failures torch.jit shares in opdb_expected_failures.py")
    parser.add_argument("--quiet", action="store_true",
                        help="no per-OpInfo lines (failures; off a terminal also each OpInfo's time)")
    parser.add_argument("--shard", default="0/1", help="i/n: run the i-th of n interleaved parts of the selection")
    parser.add_argument("--json", type=Path, help="also write the outcomes to this file")
    parser.add_argument("--merge", type=Path, nargs="+", help="summarize the outcomes of shards' --json files")
    options = parser.parse_args(argv)
    from opdb_expected_failures import EXPECTED_FAILURES

    compilers = (TSJIT,) if options.no_torch_jit else (TSJIT, TORCH_JIT)
    started = time.monotonic()
    results = Results()
    if options.merge:
        for part in options.merge:
            results.merge_json(json.loads(part.read_text()))
    else:
        index, count = (int(n) for n in options.shard.split("/"))
        ops = selected_ops(options.only, options.every, (index, count))
        results = run_corpus(ops, compilers, lines=not options.quiet)
    if options.json:
        options.json.write_text(json.dumps(results.to_json()))
    print(summary(results))
    print(f"\n{len({k[0] for k in results.outcomes['tsjit']})} OpInfos in {time.monotonic() - started:.0f} s")
    if options.write_expected:
        write_expected(results, HERE / "opdb_expected_failures.py")
        return 0
    problems = check_expectations(results, EXPECTED_FAILURES)
    print("\n".join(problems) if problems else "every outcome as expected")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
