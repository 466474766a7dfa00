"""Compiled methods under torch.compile: Python its tracer (TorchDynamo) can read.

torch.compile traces Python bytecode. It cannot trace into tsjit's runtime: plans are specialized and run fused
C kernels, and making them runs `compile`, dispatch-mode probes and locks, each a graph break, which
`fullgraph=True` forbids. A scripted function has its Python source, which the tracer reads instead
(api/function.py). A method of a scripted or loaded module (a loaded function is one too) may have none, so
torch.compile is given its graph, calls inlined and unoptimized, as straight-line Python over the nodes'
Operations (generated_plan.py), operators called through their OpOverloads: the tracer reads it as it reads
hand-written torch calls.

That Python must exist before torch.compile traces the call, since making it is the kind of work the tracer
cannot follow. tsjit never loads torch._dynamo, so the plan is made only once something else has
(`prepare_for_torch_compile`, called when a module is scripted or loaded and when a method is first called): a
module made or called before torch.compile is first used runs, under torch.compile, through tsjit's runtime
instead, which is a graph break (an error with `fullgraph=True`).
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Callable
from typing import Any

from tsjit.frontend.torch_tracing_flags import torch_jit_is_tracing
from tsjit.frontend.tracer import get_tracing_state
from tsjit.passes.inliner import inline_calls
from tsjit.runtime.generated_plan import generate_plan
from tsjit.runtime.operations import operations_for_torch_compile

_plans: weakref.WeakKeyDictionary[Any, Callable[..., Any] | None] = weakref.WeakKeyDictionary()


def prepare_for_torch_compile(function: Any) -> None:
    """Make the Python torch.compile will trace for `function` (a GraphFunction), if torch.compile is loaded
    (and no tracer records: making it runs torch calls the trace must not see)."""
    if "torch._dynamo" not in sys.modules or function in _plans:
        return
    if get_tracing_state() is not None or torch_jit_is_tracing():
        return
    graph = function.graph.copy()
    inline_calls(graph)
    with operations_for_torch_compile():
        generated = generate_plan(graph)
    _plans[function] = generated.function if generated is not None else None


def plan_for_torch_compile(function: Any) -> Callable[..., Any] | None:
    """The Python that torch.compile traces for `function`, None if none was made (see above)."""
    return _plans.get(function)
