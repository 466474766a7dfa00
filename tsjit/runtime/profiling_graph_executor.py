"""The profiling graph executor, tsjit's default: profile the first runs, then optimize for what they saw.

(seed: jit-overview.md "Profiling Programs"; TorchScript's ProfilingGraphExecutorImpl.) Calls still find their plan
by the ArgumentSpec (graph_executor.py: dtype, rank, requires_grad and device of the inputs, tested by the plan's
entry), which is what the optimizations before fusion rely on; a plan then goes through two phases:

1. Profiling. The graph, specialized to the spec, gets only the required passes (as TorchScript runs only
   cleanups before profiling: a function called once pays for no optimization), then prim::profile nodes
   (profiling_record.py).
   The first `num_profiled_runs` calls run that graph (autograd records its operators one by one), its
   dispatcher operators called as OpOverloads without the probe that proves a faster binding (a first call
   would pay more for the probes than it saves: runtime/operations.py's operations_without_probes).
2. Optimized. A copy of the profiled graph, its profile nodes removed, gets the rest of the pipeline's stages
   before `run_derivative_splitting` (they only use what the spec guarantees: inference passes, dead code, CSE,
   constant propagation, peephole, unrolling), then the recorded types (sizes, strides, requires_grad, and dtype
   and rank where static types did not know them), the pipeline's stages from `run_derivative_splitting` on
   (DifferentiableGraphs split for the profiled sizes, as TorchScript's runProfilingOptimizations, each guarded
   by them: runtime/differentiable_graph_op.py; fusion), then a prim::TypeCheck on the tensor inputs of each
   fusion group, the group behind a prim::If on the check and a prim::FallbackGraph in the other branch
   (passes/insert_type_guards.py), guard elimination (passes/guard_elimination.py), and the static types back
   outside the guards. Splitting here, not before profiling, also spares a first call the cost of autodiff.

A failed guard runs the fallback graph for that call: TorchScript's fallback-function route, not prim::BailOut. The
fallback is the group's nodes before fusion, run by a profiling executor of its own with one specialization
less to go, so that new shapes get a kernel of their own; the fusion strategy says how many specializations
there are, and of which kind (TorchScript's FusionStrategy, `set_fusion_strategy`):

    [("STATIC", 2), ("DYNAMIC", 10)]   the first two guard the profiled sizes exactly, the next ten only dtype,
                                        device, rank and requires_grad; after twelve, the fallback is not fused.

`_jit_set_profiling_executor(False)` (or TSJIT_PROFILING_EXECUTOR=0) and `_jit_set_profiling_mode(False)` make new
executors the simple one (graph_executor.GraphExecutor: the whole pipeline on the first call of each spec).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

from tsjit import garbage_collection, log
from tsjit.errors import TsjitError
from tsjit.ir.graph import Graph
from tsjit.passes.guard_elimination import guard_elimination
from tsjit.passes.insert_type_guards import insert_type_guards
from tsjit.passes.pass_runner import run_pass
from tsjit.runtime import graph_executor
from tsjit.runtime.generated_plan import generate_plan
from tsjit.runtime.graph_executor import ArgumentSpec, ExecutionPlan, GraphExecutor
from tsjit.runtime.interpreter import Code
from tsjit.runtime.operations import operations_without_probes
from tsjit.runtime.profiling_record import ProfilingRecord, remove_profile_nodes, restore_types, specialize_types

FusionStrategy = list[tuple[str, int]]
FUSION_BEHAVIORS = ("STATIC", "DYNAMIC")
_fusion_strategy: FusionStrategy = [("STATIC", 2), ("DYNAMIC", 10)]
_modes = {"executor": os.environ.get("TSJIT_PROFILING_EXECUTOR", "1") != "0", "profiling": True}
_num_profiled_runs = 1
_executed = threading.local()  # `graph`: the optimized graph this thread ran last


# ---- the switches, with torch.jit's names --------------------------------------------------------------------
def set_fusion_strategy(strategy: Sequence[tuple[str, int]]) -> FusionStrategy:
    """Set how many specializations of each kind a fused graph gets before its fallback stays unfused; returns
    the previous strategy (torch.jit.set_fusion_strategy). Executors made from now on use it."""
    global _fusion_strategy
    checked = [(behavior, count) for behavior, count in strategy]
    for behavior, count in checked:
        if behavior not in FUSION_BEHAVIORS or not isinstance(count, int) or count < 0:
            raise TsjitError(f"a fusion strategy is a list of (\"STATIC\" or \"DYNAMIC\", count >= 0), got "
                             f"{(behavior, count)!r}")
    previous, _fusion_strategy = _fusion_strategy, checked
    return previous


def _jit_set_profiling_executor(flag: bool) -> bool:
    """Whether new executors are profiling executors (torch._C._jit_set_profiling_executor); returns the old."""
    previous, _modes["executor"] = _modes["executor"], bool(flag)
    return previous


def _jit_set_profiling_mode(flag: bool) -> bool:
    """Whether the profiling executor profiles (torch._C._jit_set_profiling_mode): without it, new executors are
    the simple one. Returns the old setting."""
    previous, _modes["profiling"] = _modes["profiling"], bool(flag)
    return previous


def _jit_set_num_profiled_runs(count: int) -> int:
    """How many runs a new plan profiles before it is optimized (at least 1); returns the old count."""
    global _num_profiled_runs
    previous, _num_profiled_runs = _num_profiled_runs, max(1, int(count))
    return previous


def last_executed_optimized_graph() -> Graph | None:
    """The optimized graph of the last run on this thread (torch.jit.last_executed_optimized_graph): None before
    any plan of the profiling executor was optimized."""
    return getattr(_executed, "graph", None)


def make_graph_executor(graph: Graph, optimize: bool = True, remaining_depth: int | None = None) -> GraphExecutor:
    """The executor the switches ask for: a ProfilingGraphExecutor, or the simple GraphExecutor."""
    if _modes["executor"] and _modes["profiling"]:
        return ProfilingGraphExecutor(graph, optimize, remaining_depth)
    return GraphExecutor(graph, optimize)


def fusion_behavior(remaining_depth: int, strategy: FusionStrategy) -> str:
    """Which kind of specialization a graph with `remaining_depth` specializations to go gets: the strategy's
    entries count down from its last one (TorchScript's getCurrentBehavior)."""
    depth = 0
    for behavior, count in reversed(strategy):
        depth += count
        if remaining_depth <= depth:
            return behavior
    return "STATIC"


# ---- the executor ----------------------------------------------------------------------------------------------
class ProfilingPlan(ExecutionPlan):
    """A plan that runs its profiled graph until the record is ready, then its optimized graph (`optimize`)."""

    __slots__ = ("record",)

    def __init__(self, graph: Graph, record: ProfilingRecord | None):
        """While it profiles, the plan is interpreted: its few runs cost less than generating and compiling
        Python source for them (as torch.jit interprets its profiling graph); `optimize` generates the function.
        The Code is compiled now, under the caller's `operations_without_probes`."""
        self.graph, self.generated, self.record = graph, None, record
        self._code = Code(graph) if record is not None else None
        self.run = self.interpret

    def optimize(self, graph: Graph) -> None:
        """From now on run `graph`, recording it as the last executed optimized graph of the thread."""
        self.graph, self._code = graph, None
        self.generated = generate_plan(graph, _executed)
        self.run = self.generated.function if self.generated is not None else self.interpret
        self.record = None

    def interpret(self, *inputs: Any) -> Any:
        if self.record is None:
            _executed.graph = self.graph
        return ExecutionPlan.interpret(self, *inputs)


class ProfilingGraphExecutor(GraphExecutor):
    """GraphExecutor's plans by ArgumentSpec, each profiled on its first runs and then optimized (see above).

    `remaining_depth`: how many more specializations fusion may make (the fusion strategy's total by default);
    at 0 the plan is neither profiled nor fused."""

    def __init__(self, graph: Graph, optimize: bool = True, remaining_depth: int | None = None):
        super().__init__(graph, optimize)
        self.fusion_strategy = list(_fusion_strategy)
        self.remaining_depth = sum(c for _, c in self.fusion_strategy) if remaining_depth is None \
            else remaining_depth
        self.num_profiled_runs = _num_profiled_runs

    def run(self, inputs: Sequence[Any]) -> Any:
        """As GraphExecutor.run, but a plan still profiling gets no entry: each call comes back here."""
        plan = self.get_plan(inputs)
        if isinstance(plan, ProfilingPlan) and plan.record is not None:
            self.__dict__.pop("run", None)
            return plan.run(*inputs)
        return GraphExecutor.run(self, inputs)

    _run_by_key = run  # the entries' `miss`

    def entry(self, inputs: Sequence[Any], miss: Callable[..., Any], bound: int = 0,
              defaults: int = 0) -> Callable | None:
        """As GraphExecutor.entry; None while the plan profiles (its callers then call `run`)."""
        plan = self.get_plan(inputs)
        if isinstance(plan, ProfilingPlan) and plan.record is not None:
            return None
        return GraphExecutor.entry(self, inputs, miss, bound, defaults)

    def get_plan(self, inputs: Sequence[Any]) -> ExecutionPlan:
        """The plan for these inputs, optimized first if its profiled runs are done."""
        plan = GraphExecutor.get_plan(self, inputs)
        if isinstance(plan, ProfilingPlan) and plan.record is not None and plan.record.ready():
            with self._lock, garbage_collection.paused():  # as GraphExecutor._compile: what it makes lives on
                if plan.record is not None:
                    plan.optimize(self._optimized_graph(plan.record.profiled_graph))
        return plan

    def graph_for(self, inputs: Sequence[Any]) -> Graph:
        """The optimized graph for these inputs: while their plan profiles, it runs on them (as torch.jit's
        `graph_for` does)."""
        plan = self.get_plan(inputs)
        while isinstance(plan, ProfilingPlan) and plan.record is not None:
            plan.run(*inputs)
            plan = self.get_plan(inputs)
        return plan.graph

    def _build_plan(self, spec: ArgumentSpec) -> ExecutionPlan:
        """The spec's plan, profiling (or, with no specialization left to make, optimized without fusion)."""
        if not self.optimize:
            return GraphExecutor._build_plan(self, spec)
        graph = self._specialized_graph(spec)
        if self.remaining_depth == 0:
            for stage in _profiling_insensitive_stages():
                stage(graph)
            graph_executor.run_derivative_splitting(graph)  # for the static types: no sizes to fold, no guard
            _lint(graph)
            plan = ProfilingPlan(graph, None)
            plan.optimize(graph)
            return plan
        for stage in _stages_before_profiling():
            stage(graph)
        _lint(graph)
        record = ProfilingRecord(graph, self.num_profiled_runs)
        with operations_without_probes():  # a plan for a few runs: see operations_without_probes
            return ProfilingPlan(graph, record)

    def _optimized_graph(self, profiled: Graph) -> Graph:
        """The profiled graph with the recorded types, fused, guarded, its guards eliminated (see above)."""
        graph = profiled.copy()
        seen = remove_profile_nodes(graph)
        for stage in _profiling_insensitive_stages()[len(_stages_before_profiling()):]:
            stage(graph)  # on the static types: no rewrite here may assume what only the profiled runs saw
        static = specialize_types(seen)
        for stage in _profiling_sensitive_stages():
            stage(graph)
        static = {value: type_ for value, type_ in static.items() if value.node.owning_block is not None}
        behavior = fusion_behavior(self.remaining_depth, self.fusion_strategy)
        run_pass(insert_type_guards, graph, dynamic=behavior == "DYNAMIC", remaining_depth=self.remaining_depth - 1)
        run_pass(guard_elimination, graph)
        restore_types(static)
        _lint(graph)
        log.graph_dump(f"optimized with the profiled types ({behavior}, {self.remaining_depth} specializations "
                       "to go):", graph)
        return graph


def _stages_before_profiling() -> tuple:
    """What a first call runs before its profiled run, as TorchScript's runProfilingInsensitiveOptimizations runs
    only cleanups there: the required passes. Inference and the derivative preserving optimizations wait for the
    optimized graph, so that a function called once pays for none of them."""
    return (graph_executor.run_required_passes,)


def _profiling_insensitive_stages() -> tuple:
    """The pipeline's stages before derivative splitting (looked up when used, so stages added to
    graph_executor.OPTIMIZATION_PIPELINE run here too)."""
    pipeline = graph_executor.OPTIMIZATION_PIPELINE
    return pipeline[:pipeline.index(graph_executor.run_derivative_splitting)]


def _profiling_sensitive_stages() -> tuple:
    """Derivative splitting and post-derivative optimization, as TorchScript's runProfilingOptimizations: the
    DifferentiableGraphs' f and df are split for the profiled sizes (the broadcast gradients' sizes folded,
    the split guarded by the sizes: runtime/differentiable_graph_op.py), f fused."""
    pipeline = graph_executor.OPTIMIZATION_PIPELINE
    return pipeline[pipeline.index(graph_executor.run_derivative_splitting):]


def _lint(graph: Graph) -> None:
    if log.lint_enabled():
        graph.lint()
