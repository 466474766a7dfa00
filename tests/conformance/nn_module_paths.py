"""Running one torch.nn module class through every path, by tsjit and by torch.jit, against eager PyTorch.

`outcomes(name, mode)` builds the class's instance from nn_module_table.ENTRIES (weights seeded), in training
or evaluation mode, and returns, per path, PASS, MISMATCH or the first line of the error the path raised:

    script        tsjit.script (or torch.jit.script), then a call
    trace         a trace on other inputs of the same sizes, then a call
    save->load    tsjit.save of the scripted module, then tsjit.load and a call (torch.jit.save, torch.jit.load)
    tsjit->torch  tsjit.save, then torch.jit.load and a call
    torch->tsjit  torch.jit.save of torch.jit's scripted module, then tsjit.load and a call

A call passes when its results and the state it leaves (the entry's buffers: running statistics) equal eager's.
Random operators (dropout in training mode, RReLU, fractional pooling) see the same seed on every path.
"""

from __future__ import annotations

import functools
import io
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

import torch
from nn_module_table import ENTRIES
from torch import nn

import tsjit
from tsjit.serialization.serializer import serialize

E2E = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "e2e")
if E2E not in sys.path:
    sys.path.insert(0, E2E)
from trace_oracle import same  # noqa: E402  (the comparison the tracing tests use; needs E2E on sys.path)

PASS, MISMATCH = "pass", "mismatch"
PATHS = ("script", "trace", "save->load", "tsjit->torch", "torch->tsjit")
MODES = ("train", "eval")
RESULTS: dict[tuple[str, str], dict[str, dict[str, str]]] = {}  # (class, mode) -> what `outcomes` found


def build(name: str, mode: str) -> nn.Module:
    torch.manual_seed(0)
    return ENTRIES[name].make_module().train(mode == "train")


def inputs(name: str, seed: int = 1) -> tuple:
    torch.manual_seed(seed)
    return ENTRIES[name].make_inputs()


def observe(module: Callable, name: str) -> tuple[Any, dict[str, Any]]:
    """The module's results on the entry's inputs, and the state the call left."""
    arguments = inputs(name)
    torch.manual_seed(2)
    result = module(*arguments)
    return result, {attribute: getattr(module, attribute) for attribute in ENTRIES[name].state}


def first_line(error: BaseException) -> str:
    lines = [line for line in str(error).splitlines() if line.strip()]
    return f"{type(error).__name__}: {lines[0] if lines else ''}"[:200]


def attempt(step: Callable[[], Any]) -> tuple[Any, str | None]:
    """The step's value and None, or None and the error it raised."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return step(), None
    except Exception as error:  # every error is an outcome to record
        return None, first_line(error)


def check(name: str, expected: Any, module: Callable[[], Callable]) -> str:
    """PASS or MISMATCH for the module's call against eager's, or the error building or calling it raised."""
    observed, error = attempt(lambda: observe(module(), name))
    if error is not None:
        return error
    return PASS if same(expected, observed) else MISMATCH


def torch_archive(module: Any) -> bytes:
    buffer = io.BytesIO()
    torch.jit.save(module, buffer)
    return buffer.getvalue()


def torch_load(data: bytes) -> Any:
    return torch.jit.load(io.BytesIO(data))


def traced(trace: Callable, name: str, mode: str) -> Any:
    """A trace on other inputs, seeded as `after_one_call` seeds its call: tracing runs forward once."""
    module, arguments = build(name, mode), inputs(name, seed=3)
    torch.manual_seed(2)
    return trace(module, arguments, check_trace=False)


def after_one_call(name: str, mode: str) -> nn.Module:
    """Eager's instance after the call a trace makes (buffers updated, lazy parameters materialized)."""
    module, arguments = build(name, mode), inputs(name, seed=3)
    torch.manual_seed(2)
    module(*arguments)
    return module


def saved_and_loaded(module: Any, save: Callable, loaders: dict[str, Callable]) -> dict[str, tuple[Any, str | None]]:
    """Per path, the module `save`d and loaded back, or the error of scripting, saving or loading it."""
    scripted, error = module
    if error is None:
        data, error = attempt(lambda: save(scripted))
    if error is not None:
        return dict.fromkeys(loaders, (None, error))
    return {path: attempt(functools.partial(load, io.BytesIO(data))) for path, load in loaders.items()}


def in_mode(module: Any, mode: str) -> Any:
    return module.train(mode == "train")


@functools.cache
def outcomes(name: str) -> dict[str, dict[str, dict[str, str]]]:
    """{mode: {"tsjit": {path: outcome}, "torch.jit": {path: outcome}}} for the class's instance.

    Each scripted or loaded module serves both modes, eval first: it leaves the state as it found it, so the
    training-mode call starts from the state eager's does. Archives are saved before any call, in training mode.
    torch.jit scripts the class once: after a failure it keeps a half-built class type and fails the next try with
    "Can't redefine method" instead."""
    ours = attempt(lambda: tsjit.script(build(name, "train")))
    theirs = attempt(lambda: torch.jit.script(build(name, "train")))
    loaded = {**saved_and_loaded(ours, serialize, {"save->load": tsjit.load, "tsjit->torch": torch.jit.load}),
              **saved_and_loaded(theirs, torch_archive, {"torch->tsjit": tsjit.load, "torch->torch": torch.jit.load})}
    modules = {"script": ours, "torch.jit": theirs, **loaded}
    return {mode: mode_outcomes(name, mode, modules) for mode in ("eval", "train")}


def mode_outcomes(name: str, mode: str, modules: dict[str, tuple[Any, str | None]]) -> dict[str, dict[str, str]]:
    """Every path in one mode: the shared modules switched to it, and fresh traces."""
    expected, error = attempt(lambda: observe(build(name, mode), name))
    assert error is None, f"eager {name} fails on its inputs: {error}"
    traced_expected = observe(after_one_call(name, mode), name)

    def run(path: str) -> str:
        module, error = modules[path]
        return error or check(name, expected, lambda: in_mode(module, mode))

    RESULTS[name, mode] = result = {
        "tsjit": {
            "script": run("script"),
            "trace": check(name, traced_expected, lambda: traced(tsjit.trace, name, mode)),
            **{path: run(path) for path in ("save->load", "tsjit->torch", "torch->tsjit")},
        },
        "torch.jit": {
            "script": run("torch.jit"),
            "trace": check(name, traced_expected, lambda: traced(torch.jit.trace, name, mode)),
            "save->load": run("torch->torch"),
        },
    }
    return result


def summary_lines() -> list[str]:
    """Pass counts per path for tsjit and torch.jit (its own save->load: torch.jit.save, torch.jit.load), over all
    (class, mode) pairs run and over those torch.jit scripts."""
    scripted = [key for key, result in RESULTS.items() if result["torch.jit"]["script"] == PASS]
    lines = [f"{'path':14s} {'tsjit':>7s} {'torch.jit':>10s}   of {len(RESULTS)} pairs; "
             f"tsjit on the {len(scripted)} pairs torch.jit scripts"]
    for path in PATHS:
        ours = sum(result["tsjit"][path] == PASS for result in RESULTS.values())
        theirs = sum(result["torch.jit"].get(path) == PASS for result in RESULTS.values())
        on_scripted = sum(RESULTS[key]["tsjit"][path] == PASS for key in scripted)
        shown = str(theirs) if path in RESULTS[next(iter(RESULTS))]["torch.jit"] else "-"
        lines.append(f"{path:14s} {ours:7d} {shown:>10s}   {on_scripted:d} / {len(scripted)}")
    return lines
