"""Running under torch.jit's tracer: `torch.jit.trace` over a module that holds tsjit code.

torch.jit's C++ tracer records every operator dispatched while its TracingState is set, so tsjit's work during
such a trace must be only the program's own operators:

- operations.py proves a fast binding by one call under a dispatch mode that stops it at its first dispatch; a
  call stopped mid-way under the tracer leaves the tracer's state half-written (PyTorch then crashes), and even a
  finished probe would be recorded into the user's trace. No probe runs while torch.jit traces (the node keeps
  its exact-overload Operation).
- a plan is specialized to its inputs and grad mode and runs fused C kernels, which the tracer cannot see: a
  traced call would record nothing for the ops they replace, and torch.jit.trace's check (a second trace
  without grad) would see other operators in another order. A compiled function called while torch.jit traces
  runs its graph in the interpreter instead (`run_for_torch_jit_tracer`), and fusion.py's FusionGroups, should
  one run, interpret their subgraph.

Both ask `torch_tracing_flags.torch_jit_is_tracing()`, which reads `torch._C._get_tracing_state` as PyTorch
defines it: while tsjit itself traces, it is replaced by one that also answers for tsjit's tracer.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from tsjit.runtime.function import Function
from tsjit.runtime.interpreter import Code, InterpreterState


def run_for_torch_jit_tracer(function: Function, inputs: Sequence[Any]) -> Any:
    """Run a compiled function (a runtime Function) the way torch.jit's tracer should see it: its graph (calls
    inlined, not specialized to the inputs, not optimized) in the interpreter. Two traces then record the same
    operators in the same order whatever the grad mode and the plans compiled before, as `torch.jit.trace`'s
    check (a second trace, without grad, compared with the first) requires."""
    code = _codes.get(function)
    if code is None:
        code = _codes[function] = Code(function.graph)
    return InterpreterState(code, inputs).run()


_codes: weakref.WeakKeyDictionary[Function, Code] = weakref.WeakKeyDictionary()
