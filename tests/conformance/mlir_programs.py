"""The MLIR conformance corpus as programs: op_db's functions, torch.nn's modules and the e2e corpus.

A program is named `corpus:name` and rebuilt from its name alone, so that worker processes (which receive names,
not closures) build only what they run:

    opdb:NAME          the OpInfo's function variant (`torch.NAME(...)`) on its first float32 CPU sample whose
                       call has a TorchScript spelling; tensors are parameters, every other value a literal in the
                       source (as torch-mlir's TorchScript e2e tests wrote them: both routes then see one program)
    nn:CLASS           nn_module_table's instance of the class, in evaluation mode
    e2e:function:NAME  tests/e2e/corpus.py's functions and module_corpus.py's modules (e2e:module:NAME)
"""

from __future__ import annotations

import functools
import os
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
E2E = os.path.join(os.path.dirname(HERE), "e2e")
for folder in (HERE, E2E):
    if folder not in sys.path:
        sys.path.insert(0, folder)

import opdb_cases  # noqa: E402
from nn_module_table import ENTRIES  # noqa: E402

CORPORA = ("opdb", "nn", "e2e")


@dataclass(frozen=True)
class Program:
    """One corpus program: a fresh eager program (a function or a module) and fresh inputs, both seeded."""

    name: str
    build: Callable[[], object]
    make_inputs: Callable[[], tuple]
    is_module: bool

    def inputs(self) -> tuple:
        torch.manual_seed(1)
        return tuple(v.clone() if isinstance(v, torch.Tensor) else v for v in self.make_inputs())


# ---- op_db ------------------------------------------------------------------------------------------------------
@functools.cache
def _op_db() -> dict[str, object]:
    """The OpInfos with a function variant, by name."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {opdb_cases.full_name(op): op for op in opdb_cases.load_op_db()
                if "function" in opdb_cases.callees(op)}


def _first_sample_call(op) -> opdb_cases.Call | None:
    """The function call of the OpInfo's first float32 sample that has a spelling, tensors as the only parameters."""
    if torch.float32 not in op.supported_dtypes("cpu"):
        return None
    torch.manual_seed(0)
    callee = opdb_cases.callees(op)["function"]
    for sample in op.sample_inputs("cpu", torch.float32, requires_grad=False):
        try:
            return opdb_cases.make_call(callee, [sample.input, *sample.args], dict(sample.kwargs),
                                        tensors_only=True)
        except opdb_cases.NotExpressible:
            continue
    return None


def _opdb_program(name: str) -> Program | None:
    call = _first_sample_call(_op_db()[name])
    if call is None:
        return None
    function = opdb_cases.python_function(call.source, name)
    return Program(f"opdb:{name}", lambda: function, lambda: tuple(call.values), False)


# ---- torch.nn and the e2e corpus --------------------------------------------------------------------------------
def _nn_program(name: str) -> Program:
    entry = ENTRIES[name]

    def build():
        torch.manual_seed(0)
        return entry.make_module().eval()

    return Program(f"nn:{name}", build, entry.make_inputs, True)


@functools.cache
def _e2e_cases() -> dict:
    from corpus import CASES
    from module_corpus import MODULE_CASES

    found = {f"function:{c.name}": (lambda c=c: c.function, c.make_inputs, False) for c in CASES}
    found.update({f"module:{c.name}": (c.build, c.make_inputs, True) for c in MODULE_CASES})
    return found


def _e2e_program(name: str) -> Program:
    build, make_inputs, is_module = _e2e_cases()[name]
    return Program(f"e2e:{name}", build, make_inputs, is_module)


# ---- the corpus -------------------------------------------------------------------------------------------------
def program_names(corpora: tuple[str, ...] = CORPORA) -> list[str]:
    """Every program of the selected corpora, by name (cheap: no sample is made)."""
    names = []
    if "opdb" in corpora:
        names += [f"opdb:{name}" for name in _op_db()]
    if "nn" in corpora:
        names += [f"nn:{name}" for name in sorted(ENTRIES)]
    if "e2e" in corpora:
        names += [f"e2e:{name}" for name in _e2e_cases()]
    return names


def program(name: str) -> Program | None:
    """The program of a name; None for an OpInfo without a float32 sample that has a TorchScript spelling."""
    corpus, _, rest = name.partition(":")
    return {"opdb": _opdb_program, "nn": _nn_program, "e2e": _e2e_program}[corpus](rest)
