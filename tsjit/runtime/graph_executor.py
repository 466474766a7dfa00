"""The graph executor: specializes a graph to its inputs, optimizes it, and caches the compiled result.

(seed: jit-overview.md "Graph Executor", "Specialization"; pytorch-ir-2018.md "Graph specialization".) A plan is
specialized to an ArgumentSpec: for each tensor among the inputs, and inside input tuples, whether it is defined, its
dtype, rank, requires_grad (only while grad mode is on) and device; an Optional input given None is typed NoneType. The
spec keys a thread-safe cache of ExecutionPlans (together with the default dtype and whether autocast is on, which
decide the dtypes shape propagation infers, and for methods grad mode, which decides whether parameters need
gradients); calls find their plan by a cheaper key that decides the spec (call_key),
and most calls not even by that: the executor's `run` is the entry of the last plan it ran, a generated function testing
that the inputs still have that plan's key (plan_entry). On a miss the graph is copied, its input types are refined to
what the spec knows, the optimization pipeline runs, and the result is generated as a Python function
(generated_plan.py; the interpreter's Code for graphs that fork or wait):

    graph(%x : Tensor, %n : int)      --  torch.rand(2, 3), 4  -->      graph(%x : Float(*, *, device=cpu), %n : int)

The pipeline (OPTIMIZATION_PIPELINE, seed: "Pre-derivative Optimization" onwards): required passes (undefined
tensors, simple tuples), inference passes (constants, then dtypes, ranks and devices through the graph),
derivative preserving optimizations (dead code, common subexpressions, constant pooling, peephole rules on the
refined types, constant propagation again, so `if x.dim() != 2: raise ...` checks disappear, loop unrolling),
derivative splitting (when grad mode is on and an input requires grad: nodes with gradient formulas grouped into
prim::DifferentiableGraph nodes, each split into a forward graph, optimized and fused, and a backward graph),
post-derivative optimizations (fusion of elementwise operators into compiled kernels, unless TSJIT_FUSION=0).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import torch

from tsjit import garbage_collection, log
from tsjit.errors import RuntimeTsjitError
from tsjit.ir.graph import Graph
from tsjit.ir.symbols import prim
from tsjit.ir.types import ClassType, NoneType, OptionalType, TensorType, TupleType, Type, requires_grad
from tsjit.passes.batch_mm import batch_mm
from tsjit.passes.check_strict_fusion import check_strict_fusion
from tsjit.passes.common_subexpression_elimination import eliminate_common_subexpression
from tsjit.passes.constant_pooling import constant_pooling
from tsjit.passes.constant_propagation import constant_propagation_immutable_types
from tsjit.passes.create_autodiff_subgraphs import create_autodiff_subgraphs, inline_autodiff_subgraph
from tsjit.passes.dead_code_elimination import eliminate_dead_code
from tsjit.passes.graph_fuser import constant_chunks, fuse_graph
from tsjit.passes.loop_invariant_code_motion import loop_invariant_code_motion
from tsjit.passes.loop_unrolling import unroll_loops
from tsjit.passes.lower_tuples import lower_simple_tuples
from tsjit.passes.pass_runner import run_pass
from tsjit.passes.peephole import peephole_optimize
from tsjit.passes.shape_analysis import may_change_tensor_metadata, propagate_shapes
from tsjit.passes.specialize_autograd_zero import specialize_autograd_zero
from tsjit.runtime import executor_options
from tsjit.runtime.autodiff import differentiate, fold_constant_captures, pack_gradient
from tsjit.runtime.futures import Future, submit
from tsjit.runtime.generated_plan import generate_plan
from tsjit.runtime.interpreter import Code, InterpreterState


class TensorSpec(NamedTuple):
    """What a plan is specialized to for one tensor input (sizes are deliberately left out)."""

    defined: bool
    dtype: torch.dtype | None
    rank: int | None
    requires_grad: bool
    device: torch.device | None


UNDEFINED = TensorSpec(False, None, None, False, None)
ArgumentSpec = tuple  # per input: a TensorSpec, a tuple of specs for a tuple input, or None


def create_argument_spec(inputs: Sequence[Any]) -> ArgumentSpec:
    """The ArgumentSpec of one call's inputs. None counts as an undefined tensor."""
    grad_enabled = torch.is_grad_enabled()
    return tuple(_spec_of(value, grad_enabled) for value in inputs)


def _spec_of(value: Any, grad_enabled: bool) -> Any:
    if isinstance(value, torch.Tensor):
        return TensorSpec(True, value.dtype, value.dim(), grad_enabled and value.requires_grad, value.device)
    if isinstance(value, tuple):
        return tuple(_spec_of(element, grad_enabled) for element in value)
    return UNDEFINED if value is None else None


# What GraphExecutor.run computes instead of the ArgumentSpec when its entry misses, much faster: per input a tuple
# (dtype, rank, requires_grad, device) for a tensor, the keys of its elements for a tuple, UNDEFINED for None and
# None for other values, plus whether grad mode is on, the default dtype and whether autocast is on. The key
# decides the spec, and as the spec it records requires_grad only while grad mode is on: a backward graph's
# executor (grad mode off) reads saved tensors that require grad in some calls and not in others (an LSTM's
# first hidden state), and would otherwise switch between two keys of one plan, a miss each time.
_Tensor = torch.Tensor


def _call_key_of(value: Any, grad: bool) -> Any:
    """An input's part of the call key, for anything but a plain torch.Tensor (call_key does those inline)."""
    if isinstance(value, torch.Tensor):
        return value.dtype, value.ndim, grad and value.requires_grad, value.device
    if isinstance(value, tuple):
        return tuple(_call_key_of(element, grad) for element in value)
    return UNDEFINED if value is None else None


def call_key(inputs: Sequence[Any]) -> tuple:
    """The call key of these inputs (see above)."""
    grad = torch.is_grad_enabled()
    return (tuple([(v.dtype, v.ndim, grad and v.requires_grad, v.device) if type(v) is _Tensor
                   else _call_key_of(v, grad) for v in inputs]),
            grad, torch.get_default_dtype(), torch._C._is_any_autocast_enabled())


def plan_entry(key: tuple, run: Callable[..., Any], miss: Callable[..., Any], bound: int = 0,
               defaults: tuple = ()) -> Callable | None:
    """A generated `entry(inputs)` that calls `run(*inputs)` when the inputs' call key is `key`, else `miss(inputs)`,
    deciding it by tests instead of building the key: for two float matrices, with grad mode on,

        def entry(inputs):
            if len(inputs) == 2:
                x0, x1 = inputs
                if (type(x0) is Tensor and x0.dtype is dtype0 and x0.ndim == 2 and x0.requires_grad is False
                        and x0.is_cpu and type(x1) is Tensor and ... and is_grad_enabled() is True
                        and get_default_dtype() is default_dtype and is_any_autocast_enabled() is False):
                    return run(x0, x1)
            return miss(inputs)

    With `bound`, the first `bound` inputs come as parameters of their own (a method's object: `entry(x0,
    inputs)`, `miss(x0, inputs)`); with `defaults`, the last inputs are these values, which the caller leaves out
    (the defaults of trailing arguments: `run(x0, x1, None, False)`), so they are not tested.
    None when an input is a tuple (such calls keep building the key). A tensor of a Tensor subclass misses (its
    key is the same, so `miss` finds the same plan, only slower)."""
    parts, grad, default_dtype, autocast = key
    namespace: dict[str, Any] = {"Tensor": _Tensor, "run": run, "miss": miss, "default_dtype": default_dtype,
                                 "is_grad_enabled": torch.is_grad_enabled, "get_default_dtype": torch.get_default_dtype,
                                 "is_any_autocast_enabled": torch._C._is_any_autocast_enabled,
                                 "tensor_or_tuple": (_Tensor, tuple)}
    given = len(parts) - len(defaults)
    tests = []
    for k, part in enumerate(parts[:given]):
        test = _input_test(f"x{k}", part, grad, namespace)
        if test is None:
            return None
        tests.append(test)
    for k, value in enumerate(defaults, given):
        namespace[f"default_{k}"] = value
    tests += [f"is_grad_enabled() is {grad}", "get_default_dtype() is default_dtype",
              f"is_any_autocast_enabled() is {autocast}"]
    leading = "".join(f"x{k}, " for k in range(bound))
    names = "".join(f"x{k}, " for k in range(bound, given))
    arguments = leading + names + "".join(f"default_{k}, " for k in range(given, len(parts)))
    source = "\n".join([
        f"def entry({leading}inputs):",
        f"    if len(inputs) == {given - bound}:",
        f"        {names or '_'} = inputs" if given > bound else "        pass",
        f"        if {' and '.join(tests)}:",
        f"            return run({arguments})",
        f"    return miss({leading}inputs)"])
    exec(compile(source, "<tsjit plan entry>", "exec"), namespace)
    return namespace["entry"]


def _input_test(name: str, part: Any, grad: bool, namespace: dict[str, Any]) -> str | None:
    """The test that an input's key part is `part` (requires_grad tested only in grad mode), or None for a tuple
    input."""
    if part is UNDEFINED:
        return f"{name} is None"
    if part is None:
        return f"not isinstance({name}, tensor_or_tuple) and {name} is not None"
    if not isinstance(part[0], torch.dtype):
        return None
    dtype, rank, requires_grad, device = part
    namespace[f"dtype_{name}"], namespace[f"device_{name}"] = dtype, device
    on_device = f"{name}.is_cpu" if device.type == "cpu" else f"{name}.device == device_{name}"
    requires = f" and {name}.requires_grad is {requires_grad}" if grad else ""
    return (f"type({name}) is Tensor and {name}.dtype is dtype_{name} and {name}.ndim == {rank}{requires} "
            f"and {on_device}")


def specialize_types(graph: Graph, spec: ArgumentSpec) -> None:
    """Give the graph's inputs the types the spec knows: `Tensor` becomes e.g. `Float(*, *, device=cpu)`."""
    for value, argument in zip(graph.inputs, spec):
        value.set_type(_refined(value.type, argument))


def _refined(type_: Type, spec: Any) -> Type:
    if spec == UNDEFINED and isinstance(type_, OptionalType):
        return NoneType.get()  # this plan only ever sees None here
    if isinstance(spec, TensorSpec) and _holds_tensor(type_):
        if not spec.defined:
            return type_ if isinstance(type_, OptionalType) else TensorType.get().with_undefined(True)
        return TensorType(dtype=spec.dtype, device=spec.device, requires_grad=spec.requires_grad,
                          sizes=(None,) * spec.rank)
    if isinstance(spec, tuple) and isinstance(type_, TupleType) and len(spec) == len(type_.elements):
        return type_.with_contained([_refined(t, s) for t, s in zip(type_.elements, spec)])
    return type_


def _holds_tensor(type_: Type) -> bool:
    return isinstance(type_, TensorType) or (isinstance(type_, OptionalType)
                                             and isinstance(type_.elem, TensorType))


# ---- the optimization pipeline ---------------------------------------------------------------------------------
# Each stage takes the specialized graph, rewrites it in place through run_pass (logging, TSJIT_LINT) and returns
# whether it changed anything.
def run_required_passes(graph: Graph) -> bool:
    """What the spec says about undefined tensors, folded (seed: "Required Passes": specializeUndef: in a
    backward graph, the guards and sums of gradients autograd passed as None), and tuples built only to be taken
    apart (inlined calls leave many) lowered. tsjit's backward graphs hold no GradOf nodes (autodiff.py writes
    their lowered form), so there is nothing to lower there. Dead code is removed once after both, and only if
    they changed something: the graphs come from the frontend's cleanups, already without dead code, and each
    elimination in a graph that writes in place builds an AliasDb (milliseconds before a first result)."""
    changed = run_pass(specialize_autograd_zero, graph, remove_dead=False)
    changed = run_pass(lower_simple_tuples, graph, remove_dead=False) or changed
    if changed:
        run_pass(eliminate_dead_code, graph)
    return changed


def run_inference_passes(graph: Graph) -> bool:
    """Constant propagation, then propagation of the input dtypes, ranks and devices through the graph."""
    changed = run_pass(constant_propagation_immutable_types, graph)
    return run_pass(propagate_shapes, graph) or changed


def run_derivative_preserving_optimizations(graph: Graph) -> bool:
    """Rewrites autograd can still differentiate (seed: "Derivative Preserving Optimization"): dead code, common
    subexpressions, constant pooling, peephole rules (those reading refined types only where no tensor's metadata
    changes in place), then constant propagation to fold what the peephole rules decided; small loops unrolled
    (and the peephole rules and constant propagation again on the copies), loop-invariant nodes moved out of loops,
    and CSE again."""
    changed = run_pass(eliminate_dead_code, graph)
    changed |= run_pass(eliminate_common_subexpression, graph)
    changed |= run_pass(constant_pooling, graph)
    shape_peepholes = not may_change_tensor_metadata(graph)
    changed |= run_pass(peephole_optimize, graph, shape_peepholes=shape_peepholes)
    changed |= run_pass(constant_propagation_immutable_types, graph)
    if run_pass(unroll_loops, graph):
        run_pass(peephole_optimize, graph, shape_peepholes=shape_peepholes)
        run_pass(constant_propagation_immutable_types, graph)
        run_pass(constant_pooling, graph)
        changed = True
    changed |= run_pass(loop_invariant_code_motion, graph)
    return run_pass(eliminate_common_subexpression, graph) or changed


def run_derivative_splitting(graph: Graph) -> bool:
    """For a graph that needs gradients (seed: "Derivate Splitting"): runs of nodes with gradient formulas become
    prim::DifferentiableGraph nodes (passes/create_autodiff_subgraphs.py); each is split into its forward graph
    f and backward graph df (runtime/autodiff.py), f optimized as a graph that needs no gradient (its inputs are
    detached when it runs: fused), and the pair packed on the node for runtime/differentiable_graph_op.py. A
    group whose f fuses nothing is inlined back (TorchScript's InlineAutodiffSubgraphs; see
    set_autodiff_subgraph_inlining): with no kernel to gain, autograd's own nodes run its ops faster than the
    autograd.Function and df would. The nodes left outside run with autograd, op by op."""
    if not needs_gradient(graph):
        return False
    constant_chunks(graph)  # gates.chunk(4, 1) unpacked at once: a prim::ConstantChunk, which has a gradient
    if not run_pass(create_autodiff_subgraphs, graph):
        return False
    for node in [n for n in graph.all_nodes() if n.kind is prim.DifferentiableGraph]:
        gradient = differentiate(node.g("Subgraph"))
        for value in gradient.f.inputs:  # detached when f runs
            if isinstance(value.type, TensorType):
                value.set_type(value.type.with_requires_grad(False))
        for stage in (run_inference_passes, run_derivative_preserving_optimizations,
                      run_post_derivative_optimizations):
            stage(gradient.f)
        fold_constant_captures(gradient)  # sizes that known input sizes decided: df's constants, not f's outputs
        if _AUTODIFF_SUBGRAPH_INLINING[0] and not any(n.kind is prim.FusionGroup for n in gradient.f.nodes()):
            inline_autodiff_subgraph(node)
        else:
            pack_gradient(node, gradient)
    return True


_AUTODIFF_SUBGRAPH_INLINING = [True]


def set_autodiff_subgraph_inlining(enabled: bool) -> None:
    """Whether DifferentiableGraphs whose forward graph fuses nothing are inlined back (on by default); tests of
    the gradient formulas turn it off so that every formula runs (torch.jit's
    `_debug_set_autodiff_subgraph_inlining`). Applies to plans compiled afterwards."""
    _AUTODIFF_SUBGRAPH_INLINING[0] = enabled


def needs_gradient(graph: Graph) -> bool:
    """Whether grad mode is on and a tensor input (or a tensor read from a module attribute: parameters) may
    require grad (TorchScript's needsGradient; the spec types inputs' requires_grad only in grad mode)."""
    if not torch.is_grad_enabled():
        return False
    if any(requires_grad(value.type) for value in graph.inputs):
        return True
    return any(n.kind is prim.GetAttr and isinstance(n.output().type, TensorType)
               and n.output().type.requires_grad is not False for n in graph.all_nodes())


def run_post_derivative_optimizations(graph: Graph) -> bool:
    """Rewrites that break autograd (seed: "Post-derivative optimization"): for graphs where no input requires
    grad (and the forward graphs of DifferentiableGraphs), sums of matrix products batched into one product
    (passes/batch_mm.py: the backward graphs' weight gradients), then fusion of elementwise operators into
    prim::FusionGroup nodes, each run as one compiled C kernel (passes/graph_fuser.py, runtime/fusion.py);
    `tsjit.fuser("none")` or TSJIT_FUSION=0 turn fusion off. Then `with strict_fusion():` blocks are checked
    (passes/check_strict_fusion.py)."""
    changed = run_pass(batch_mm, graph)
    changed = executor_options.fusion_enabled() and run_pass(fuse_graph, graph) or changed
    run_pass(check_strict_fusion, graph)  # `with strict_fusion():` blocks must now be fused whole
    return changed


OPTIMIZATION_PIPELINE: tuple[Callable[[Graph], bool], ...] = (
    run_required_passes,
    run_inference_passes,
    run_derivative_preserving_optimizations,
    run_derivative_splitting,
    run_post_derivative_optimizations,
)


def optimize_graph(graph: Graph) -> None:
    """Run the pipeline top to bottom; with TSJIT_LINT=1 the graph is linted after every stage."""
    for stage in OPTIMIZATION_PIPELINE:
        stage(graph)
        if os.environ.get("TSJIT_LINT") == "1":
            graph.lint()


# ---- the executor ----------------------------------------------------------------------------------------------
class ExecutionPlan:
    """A graph specialized to one ArgumentSpec. `run(*inputs)` runs it: its generated Python function
    (generated_plan.py), or the interpreter for graphs that fork or wait, and for all while TSJIT_INTERPRETER=1.
    Its Code, for the interpreter, is compiled on first use."""

    __slots__ = ("graph", "generated", "run", "_code")

    def __init__(self, graph: Graph):
        self.graph = graph
        self._code: Code | None = None
        self.generated = generate_plan(graph)
        self.run: Callable[..., Any] = self.generated.function if self.generated is not None else self.interpret

    @property
    def code(self) -> Code:
        if self._code is None:
            self._code = Code(self.graph)
        return self._code

    def interpret(self, *inputs: Any) -> Any:
        """Run the plan in the interpreter."""
        return InterpreterState(self.code, inputs).run()


_NO_ENTRY = object()
# How many specialized plans one executor keeps (TSJIT_PLAN_CACHE_SIZE, read when an executor is made): a program
# called with ever new input types would otherwise keep a plan for each. The least recently used plan is evicted,
# with a log line (TSJIT_LOG_LEVEL=graph_executor); a plan is used when a call's key differs from the last one's.
DEFAULT_PLAN_CACHE_SIZE = 128


class GraphExecutor:
    """Runs a graph: picks (or builds) the ExecutionPlan for the inputs' ArgumentSpec, then runs it."""

    def __init__(self, graph: Graph, optimize: bool = True):
        self.graph = graph
        self.optimize = optimize
        # plans by (spec, default dtype, autocast on, grad mode for methods), the least recently used first; their
        # keys by id(plan)
        self._plans: OrderedDict[tuple, ExecutionPlan] = OrderedDict()
        self._plan_keys: dict[int, tuple] = {}
        self._plans_by_call_key: dict[tuple, ExecutionPlan] = {}  # the same plans by call_key (see get_plan)
        self.plan_cache_size = max(1, int(os.environ.get("TSJIT_PLAN_CACHE_SIZE", DEFAULT_PLAN_CACHE_SIZE)))
        self._lock = threading.RLock()  # a same-thread re-entry fails loudly instead of hanging
        self._entries: dict[Any, Callable | None] = {}  # plan_entry by call key (and by miss, see entry())
        self._unoptimized_plans: dict[tuple, ExecutionPlan] = {}  # by plan key, see _unoptimized_plan
        # A method's parameters are attributes of its object input, which the spec does not see: whether they need
        # gradients depends on grad mode alone, so its plans are also keyed by grad mode (torch.jit's legacy
        # ArgumentSpecCreator enters objects and specializes their tensor attributes by grad mode instead).
        self._plans_by_grad_mode = any(isinstance(value.type, ClassType) for value in graph.inputs)

    def run(self, inputs: Sequence[Any]) -> Any:
        """The graph's result for `inputs` (one value, a tuple for several outputs, None for none).

        The first call replaces this method, on the instance, by the entry of its plan (`plan_entry`): later
        calls with the same call key go straight to that plan; others come back here and install their own."""
        key = call_key(inputs)
        plan = self._used(self._plans_by_call_key.get(key)) or self._plan_for_call_key(key, inputs)
        if id(plan) not in self._plan_keys:  # an unoptimized plan (see _unoptimized_plan): no entry leads to it
            return plan.run(*inputs)
        entry = self._entries.get(key, _NO_ENTRY)
        if entry is _NO_ENTRY:
            entry = self._entries[key] = plan_entry(key, plan.run, self._run_by_key)
        self.__dict__["run"] = entry or self._run_by_key
        return plan.run(*inputs)

    _run_by_key = run  # the entries' `miss`

    def entry(self, inputs: Sequence[Any], miss: Callable[..., Any], bound: int = 0,
              defaults: int = 0) -> Callable | None:
        """An entry (`plan_entry`) to the plan for these inputs' call key that calls `miss` on other keys, for callers
        with a check of their own to do first (ScriptFunction and ScriptMethod bind arguments against the schema):
        the first `bound` inputs passed on their own, the last `defaults` ones left to the entry (the values
        given here, which must be what the caller would bind: the arguments' defaults)."""
        key = call_key(inputs)
        plan = self._used(self._plans_by_call_key.get(key)) or self._plan_for_call_key(key, inputs)
        if id(plan) not in self._plan_keys:
            return None
        cache_key = (key, miss, bound, defaults)
        entry = self._entries.get(cache_key, _NO_ENTRY)
        if entry is _NO_ENTRY:
            given = len(inputs) - defaults
            entry = self._entries[cache_key] = plan_entry(key, plan.run, miss, bound, tuple(inputs[given:]))
        return entry

    def run_async(self, inputs: Sequence[Any]) -> Future:
        """Start running on a pool thread; the Future completes with the result (or the error)."""
        future = Future()
        submit(lambda: self._start(inputs, future))
        return future

    def _start(self, inputs: Sequence[Any], future: Future) -> None:
        """On a pool thread: a generated plan runs to completion (it never waits itself; a callee that waits blocks
        while its thread runs other tasks); an interpreted one suspends at waits on unfinished futures."""
        try:
            plan = self.get_plan(inputs)
            if plan.generated is None:
                InterpreterState(plan.code, inputs).run_async(future)  # which completes the future itself
                return
            result = plan.run(*inputs)
        except Exception as error:
            future.set_exception(error)
            return
        future.set_result(result)

    def get_plan(self, inputs: Sequence[Any]) -> ExecutionPlan:
        """The plan for these inputs. Every call computes the cheap `call_key`; only a key not seen before
        computes the ArgumentSpec (which several keys may share) and, for a new spec, compiles a plan."""
        key = call_key(inputs)
        plan = self._used(self._plans_by_call_key.get(key))
        return plan if plan is not None else self._plan_for_call_key(key, inputs)

    def graph_for(self, inputs: Sequence[Any]) -> Graph:
        """The graph the executor runs for these inputs (torch.jit's `graph_for`): their plan's."""
        return self.get_plan(inputs).graph

    @property
    def plans(self) -> dict[ArgumentSpec, ExecutionPlan]:
        """The cached plans by ArgumentSpec (a copy), for tests and debugging."""
        return {spec: plan for (spec, *_), plan in self._plans.items()}

    def _plan_for_call_key(self, call_key: tuple, inputs: Sequence[Any]) -> ExecutionPlan:
        if len(inputs) != len(self.graph.inputs):  # checked once per key: the key's length is the inputs' count
            raise RuntimeTsjitError(f"the graph takes {len(self.graph.inputs)} inputs, got {len(inputs)}")
        key = (create_argument_spec(inputs), *call_key[2:], self._plans_by_grad_mode and call_key[1])
        if self.optimize and not executor_options.optimization_enabled():
            return self._unoptimized_plan(key)
        return self._compile(key, call_key)

    def _unoptimized_plan(self, key: tuple) -> ExecutionPlan:
        """Inputs without a plan yet, inside `optimized_execution(False)`: the graph as emitted, specialized to
        the spec, from plans kept apart. As in torch.jit's executors, the switch is read on every call: a plan
        optimized before keeps running inside the `with`, and outside it the same inputs get their optimized plan
        (the unoptimized one is kept for the next time the switch is off)."""
        with self._lock:
            plan = self._unoptimized_plans.get(key)
            if plan is None:
                plan = self._unoptimized_plans[key] = ExecutionPlan(self._specialized_graph(key[0]))
            return plan

    def _compile(self, key: tuple, call_key: tuple) -> ExecutionPlan:
        with self._lock, garbage_collection.paused():
            plan = self._used(self._plans.get(key))
            if plan is None:
                plan = self._plans[key] = self._build_plan(key[0])
                self._plan_keys[id(plan)] = key
                self._evict()
            self._plans_by_call_key[call_key] = plan
            return plan

    def _build_plan(self, spec: ArgumentSpec) -> ExecutionPlan:
        """A new plan: the graph copied, specialized to the spec and optimized."""
        graph = self._specialized_graph(spec)
        if self.optimize:
            self._optimize(graph)
        return ExecutionPlan(graph)

    def _optimize(self, graph: Graph) -> None:
        """The optimization pipeline a plan's graph goes through (a subclass may add passes after it)."""
        optimize_graph(graph)

    def _specialized_graph(self, spec: ArgumentSpec) -> Graph:
        graph = self.graph.copy()
        specialize_types(graph, spec)
        return graph

    def _used(self, plan: ExecutionPlan | None) -> ExecutionPlan | None:
        """Mark a plan (if any) as the most recently used."""
        if plan is not None:
            with self._lock:
                key = self._plan_keys.get(id(plan))
                if key is not None:
                    self._plans.move_to_end(key)
        return plan

    def _evict(self) -> None:
        """Drop the least recently used plans beyond the cache size, with every way of reaching them."""
        while len(self._plans) > self.plan_cache_size:
            key, evicted = self._plans.popitem(last=False)
            del self._plan_keys[id(evicted)]
            for call_key in [k for k, p in self._plans_by_call_key.items() if p is evicted]:
                del self._plans_by_call_key[call_key]
            self._entries.clear()  # entries call plans directly; each key installs its own again on a miss
            self.__dict__.pop("run", None)
            log.log(log.GRAPH_DUMP, f"plan cache of {len(self._plans) + 1} plans full (TSJIT_PLAN_CACHE_SIZE="
                                    f"{self.plan_cache_size}): evicted the least recently used plan, for {key[0]}")
