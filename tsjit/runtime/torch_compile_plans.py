"""Compiled methods under torch.compile: Python its tracer (TorchDynamo) can read.

torch.compile traces Python bytecode. It cannot trace into tsjit's runtime: plans are specialized and run fused
C kernels, and making them runs `compile`, dispatch-mode probes and locks, each a graph break, which
`fullgraph=True` forbids. A scripted function has its Python source, which the tracer reads instead
(api/function.py). A method of a scripted or loaded module (a loaded function is one too) may have none, so
torch.compile is given its graph, calls inlined and unoptimized, as straight-line Python over the nodes'
Operations (generated_plan.py), operators called through their OpOverloads: the tracer reads it as it reads
hand-written torch calls.

Making that Python is work the tracer cannot follow, and tsjit never imports torch._dynamo, so it cannot know in
advance whether torch.compile will ever look. The plan is made when the tracer first asks: a method's call under
torch.compile calls `prepare_for_torch_compile`, which carries the mark `torch.compiler.assume_constant_result`
sets, so the tracer runs it as plain Python (not traced) and reads its answer as a constant; the tracer then
reads the plan from the function's attribute and traces it:

    Method.__call__ (traced)  ->  prepare_for_torch_compile(function)   run, not traced: makes the plan once
                              ->  function.torch_compile_plan(self, *inputs)   traced: OpOverload calls
"""

from __future__ import annotations

from typing import Any

from tsjit.frontend.torch_tracing_flags import no_trace_running
from tsjit.passes.inliner import inline_calls
from tsjit.runtime.generated_plan import generate_plan
from tsjit.runtime.operations import operations_for_torch_compile


def prepare_for_torch_compile(function: Any) -> bool:
    """Whether `function` (a method's GraphFunction) has the Python torch.compile traces, as its attribute
    `torch_compile_plan`, made on the first request. No while a tracer records (making it runs torch calls a trace
    must not see; asked again later) or when the graph has no straight-line form."""
    if "torch_compile_plan" not in vars(function):
        if not no_trace_running():
            return False
        graph = function.graph.copy()
        inline_calls(graph)
        with operations_for_torch_compile():
            generated = generate_plan(graph)
        function.torch_compile_plan = generated.function if generated is not None else None
    return function.torch_compile_plan is not None


# torch.compiler.assume_constant_result(prepare_for_torch_compile) sets this mark, but imports torch._dynamo to do
# so; tests/api/test_beside_torch_jit.py checks that the mark is still the one it sets
prepare_for_torch_compile._dynamo_marked_constant = True  # type: ignore[attr-defined]
