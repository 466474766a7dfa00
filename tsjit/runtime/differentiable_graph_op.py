"""Running prim::DifferentiableGraph: the forward graph f on detached inputs, joined to autograd by df.

(seed: jit-overview.md "DifferentiableGraphOp".) The node's Operation detaches its input tensors, runs f with
f's own GraphExecutor (f was optimized after the split, so it runs fused kernels) and hands the results to
autograd through a `torch.autograd.Function` whose backward runs df with df's own GraphExecutor (which also puts weight
gradients in the weights' layout: passes/transpose_weight_gradients.py). df's executor specializes on what
backward passes: gradients autograd has none for arrive as None, which the executor's spec
records as undefined tensors and specialize_autograd_zero folds away; and when backward runs with
`create_graph=True` on values that require grad, df's executor splits df again, so gradients of gradients work
the same way.

The autograd.Function's outputs are the node's own outputs only. The temporaries f computes for df (its
captured outputs past the real ones) are saved with `save_for_backward` beside the captured inputs and outputs,
but are not outputs of the Function: each output costs autograd several microseconds in forward and backward,
and a step of the LSTM cell captures about twenty. Their gradients matter only when a backward is itself
differentiated (`create_graph=True`): then backward first joins the temporaries to autograd through
`_Temporaries`, whose backward runs df with their gradients (the real outputs' given as undefined), so the
gradient reaching f's inputs is df's, as if they had been outputs (df is linear in the vjps).

A step of a small graph (the LSTM cell at batch 1) is mostly per-call overhead, so each op's call, forward and
backward are generated as straight-line Python with the Gradient's index lists resolved (differentiable_function),
the Function's C apply called directly, and, behind the size guard, f's and df's plans found without their
executors testing each input again.

The gradient is packed on the node as TorchScript's packGradient does: `Subgraph` is f, `ReverseSubgraph` is
df, with the index lists of autodiff.Gradient as int-list attributes; a node with only a Subgraph (IR text, a
graph from elsewhere) is differentiated when its Operation is built. Called with grad mode off or no input
requiring grad, the op runs f alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from tsjit.ir.alias_analysis import is_conservative
from tsjit.ir.graph import Graph, Node, Value
from tsjit.ir.symbols import prim
from tsjit.ir.types import OptionalType, TensorType, Type
from tsjit.passes.pass_runner import run_pass
from tsjit.passes.transpose_weight_gradients import transpose_weight_gradients
from tsjit.runtime.autodiff import FALLBACK, Gradient, differentiate, unpack_gradient
from tsjit.runtime.graph_executor import GraphExecutor
from tsjit.runtime.operations import Operation


def differentiable_graph_operation(node: Node) -> Operation:
    """The Operation of a prim::DifferentiableGraph node."""
    gradient = unpack_gradient(node)
    if gradient is None:
        subgraph = node.g("Subgraph").copy()
        while len(subgraph.outputs) > len(node.outputs):  # values a split graph kept for a backward not here
            subgraph.erase_output(len(subgraph.outputs) - 1)
        return DifferentiableGraphOp(differentiate(subgraph), optimize_f=True).call
    if node.has_attribute(FALLBACK):
        fallback = node.g(FALLBACK)
        op = DifferentiableGraphOp(gradient, optimize_f=False, fixed_types=True, plain_tensors=_tensor_inputs(fallback))
        return _SizeGuard(op, fallback).guarded
    return DifferentiableGraphOp(gradient, optimize_f=False).call


class _SizeGuard:
    """A gradient split for known input sizes (autodiff.pack_gradient's `Fallback`): the call runs it when the
    inputs have those sizes, dtypes and devices, and, while grad mode is on, the inputs typed as not requiring grad
    do not (the profiled types are assumptions); other calls run the subgraph split for any sizes (built on the
    first such call). The Operation is the generated `guarded` function itself (one Python call less per
    step), its `guard` attribute this object."""

    def __init__(self, op: DifferentiableGraphOp, subgraph: Graph):
        self.op, self.subgraph = op, subgraph
        self.general: DifferentiableGraphOp | None = None
        self.checks = [(i, _sizes(v.type), v.type.requires_grad is False, v.type.dtype, _device_check(v.type))
                       for i, v in ((i, subgraph.inputs[i]) for i in sorted(_tensor_inputs(subgraph)))]
        self.guarded = self._generate(len(subgraph.inputs))
        self.guarded.guard = self  # type: ignore[attr-defined]

    def _generate(self, count: int) -> Callable[..., Any]:
        """The checks as one straight-line function: for a float matrix of profiled sizes (1, 64) that may
        require grad and an int,

            def guarded(x0, x1):
                grad = is_grad_enabled()
                if type(x0) in plain and x0.shape == sizes_0 and x0.dtype is dtype_0 and x0.is_cpu:
                    return run(x0, x1)
                return fallback((x0, x1))
        """
        namespace: dict[str, Any] = {"is_grad_enabled": torch.is_grad_enabled, "plain": _PLAIN_TENSORS,
                                     "fits": _fits, "run": self.op.call, "fallback": self.fallback}
        tests = []
        for i, sizes, no_grad, dtype, device in self.checks:
            x = f"x{i}"
            namespace[f"sizes_{i}"], namespace[f"dtype_{i}"], namespace[f"device_{i}"] = sizes, dtype, device
            tests.append(f"type({x}) in plain")
            tests.append(f"{x}.shape == sizes_{i}" if type(sizes) is tuple else f"fits({x}.shape, sizes_{i})")
            if no_grad:
                tests.append(f"not (grad and {x}.requires_grad)")
            if dtype is not None:
                tests.append(f"{x}.dtype is dtype_{i}")
            if device is not None:
                tests.append(f"{x}.is_cpu" if device is _CPU else f"{x}.device == device_{i}")
        names = ", ".join(f"x{k}" for k in range(count))
        source = "\n".join([f"def guarded({names}):", "    grad = is_grad_enabled()",
                            f"    if {' and '.join(tests) or 'True'}:", f"        return run({names})",
                            f"    return fallback(({names}{',' if count == 1 else ''}))"])
        exec(compile(source, "<tsjit differentiable graph guard>", "exec"), namespace)
        return namespace["guarded"]

    def fallback(self, inputs: Sequence[Any]) -> Any:
        if self.general is None:
            self.general = DifferentiableGraphOp(differentiate(_any_sizes(self.subgraph)), optimize_f=True)
        return self.general.call(*inputs)


_PLAIN_TENSORS = frozenset({torch.Tensor, torch.nn.Parameter})


def _tensor_inputs(subgraph: Graph) -> frozenset[int]:
    """The positions of the inputs typed Tensor, which _SizeGuard checks to be plain tensors."""
    return frozenset(i for i, v in enumerate(subgraph.inputs) if isinstance(v.type, TensorType))
_CPU = torch.device("cpu")


def _device_check(type_: TensorType) -> torch.device | None:
    """The device a guard compares (_CPU itself for the CPU, tested by the cheaper `is_cpu`), None if unknown."""
    device = type_.device
    if device is None:
        return None
    return _CPU if device.type == "cpu" else device


def _sizes(type_: TensorType) -> tuple | list | None:
    """The sizes a guard compares: a tuple when all are known (compared whole), else a list with None for any."""
    sizes = type_.sizes
    if sizes is None:
        return None
    return tuple(sizes) if None not in sizes else list(sizes)


def _fits(shape: torch.Size, sizes: list | None) -> bool:
    return sizes is None or (len(shape) == len(sizes) and all(s is None or s == d for d, s in zip(shape, sizes)))


def _any_sizes(subgraph: Graph) -> Graph:
    """A copy of the subgraph whose tensor types keep dtype, device and rank only."""
    copy = subgraph.copy()
    values = [*copy.inputs, *(v for node in copy.all_nodes() for v in node.outputs)]
    for value in values:
        type_ = value.type
        if isinstance(type_, TensorType) and type_.sizes is not None:
            value.set_type(TensorType(dtype=type_.dtype, device=type_.device, sizes=(None,) * len(type_.sizes)))
    return copy


class DifferentiableGraphOp:
    """Calls run f and return the node's outputs (one value, or a tuple of several).

    A call, its forward and its backward are generated per op as straight-line Python (differentiable_function
    below), with every index list of the Gradient resolved: a step of a small graph (the LSTM cell) costs little
    more than its operators. With `fixed_types` (the op runs behind _SizeGuard, whose profiled types decide f's
    and so df's input types), df's plan is found by which gradients autograd passed as None alone, not by df's
    executor testing each of its inputs. `plain_tensors`: the positions of inputs that a guard before the call
    has checked to be tensors of a plain class (the call tests them for no other class)."""

    def __init__(self, gradient: Gradient, optimize_f: bool, fixed_types: bool = False,
                 plain_tensors: frozenset[int] = frozenset()):
        self.gradient = gradient
        self.f = GraphExecutor(gradient.f, optimize=optimize_f)
        self.df: GraphExecutor | None = None  # built on the first backward
        self.vjp_outputs = frozenset(gradient.df_input_vjps)
        self.no_vjp_outputs = [k for k in range(gradient.f_real_outputs) if k not in self.vjp_outputs]
        # f's and df's counts (Graph.inputs and outputs build tuples)
        self.f_inputs, self.f_outputs, self.df_outputs = (len(gradient.f.inputs), len(gradient.f.outputs),
                                                          len(gradient.df.outputs))
        # the temporaries df reads and may differentiate: (f's output index, position among df's captured values)
        first, real = len(gradient.df_input_captured_inputs), gradient.f_real_outputs
        self.temporaries = [(i, first + k) for k, i in enumerate(gradient.df_input_captured_outputs)
                            if i >= real and i in self.vjp_outputs]
        self.fixed_types = fixed_types and _complete_types(gradient)
        self.plain_tensors = plain_tensors
        # with fixed types, f's and df's plans' runs by the rest of their executors' call keys (see above)
        self.forward_plans: dict[tuple, Callable[..., Any]] = {}
        self.backward_plans: dict[tuple, Callable[..., Any]] = {}
        self.source = ""  # the generated functions' source, for reading
        self.call = differentiable_function(self)

    def __call__(self, *inputs: Any) -> Any:
        return self.call(*inputs)

    def df_executor(self) -> GraphExecutor:
        if self.df is None:
            self.df = _BackwardExecutor(self.gradient.df)
        return self.df

    def run_df(self, inputs: Sequence[Any]) -> list[Any]:
        return _as_list(self.df_executor().run(inputs), self.df_outputs)

    def forward_plan(self, key: tuple, inputs: Sequence[Any]) -> Callable[..., Any]:
        """The run of f's plan for these inputs (of f's fixed types), remembered by the default dtype and whether
        autocast is on, the rest of f's executor's call key."""
        run = self.forward_plans[key] = self.f.get_plan(inputs).run
        return run

    def backward_plan(self, key: tuple, inputs: Sequence[Any]) -> Callable[..., Any]:
        """The run of df's plan for these inputs, remembered by their backward key when the types are fixed."""
        run = self.df_executor().get_plan(inputs).run
        if self.fixed_types:
            self.backward_plans[key] = run
        return run

    def input_gradients(self, df_inputs: list[Any]) -> list[Any]:
        """df run on its inputs: the gradient of each of f's inputs (None for those df has none for)."""
        input_grads: list[Any] = [None] * self.f_inputs
        for index, grad in zip(self.gradient.df_output_vjps, self.run_df(df_inputs)):
            input_grads[index] = grad
        return input_grads

    def backward_with_grad(self, inputs: Sequence[Any], grads: Sequence[Any], captured: list[Any]) -> tuple:
        """The backward of a backward that is itself differentiated (`create_graph=True`): the temporaries
        joined to autograd first (see the module's doc), then df by its executor, which splits it again."""
        if self.temporaries:
            joined = _Temporaries.apply(self, captured, *inputs)
            for (_, position), tensor in zip(self.temporaries, joined):
                captured[position] = tensor
        real = self.gradient.f_real_outputs
        vjps = [grads[i] if i < real else None for i in self.gradient.df_input_vjps]
        return tuple(self.input_gradients(vjps + captured))


def _complete_types(gradient: Gradient) -> bool:
    """Whether f's tensor inputs and outputs all have a known dtype, rank and device: then, for inputs of f's
    types, df's inputs have known types too (autograd gives each gradient its output's dtype, device and
    shape), but for which gradients are undefined."""
    values = [*gradient.f.inputs, *gradient.f.outputs]
    return all(_known_tensor(v.type) if isinstance(v.type, TensorType) else not _contains_tensor(v.type)
               for v in values)


def _known_tensor(type_: TensorType) -> bool:
    return type_.dtype is not None and type_.sizes is not None and type_.device is not None


def _contains_tensor(type_: Type) -> bool:
    return isinstance(type_, TensorType) or any(_contains_tensor(t) for t in type_.contained_types())


def _holds_tensor(type_: Any) -> bool:
    return isinstance(type_, TensorType) or (isinstance(type_, OptionalType) and isinstance(type_.elem, TensorType))


class _BackwardExecutor(GraphExecutor):
    """df's executor: after the pipeline, its plans compute weight gradients in the weights' own layout
    (passes/transpose_weight_gradients.py), which autograd then keeps as they are."""

    def _optimize(self, graph: Graph) -> None:
        super()._optimize(graph)
        run_pass(transpose_weight_gradients, graph)


def _as_list(result: Any, count: int) -> list[Any]:
    if count == 1:
        return [result]
    return list(result) if count else []


# ---- the generated call, forward and backward ------------------------------------------------------------------
def differentiable_function(op: DifferentiableGraphOp) -> Callable[..., Any]:
    """The op's call: a generated function that, when grad mode is on and a tensor input requires grad, applies a
    torch.autograd.Function made for this op, else runs f alone. For the LSTM cell (f's inputs w_ih, x, w_hh, hx,
    b_ih, b_hh, cx; outputs cy, hy and five temporaries; df's gradients those of w_ih, w_hh, b_ih, b_hh):

        def call(x0, x1, x2, x3, x4, x5, x6):
            if is_grad_enabled() and (isinstance(x0, Tensor) and x0.requires_grad or ...):
                return apply(unwrap(x0) if isinstance(x0, Tensor) else x0, ...)
            o0, o1, o2, o3, o4, o5, o6 = f.run((x0, x1, x2, x3, x4, x5, x6))
            return o0, o1

        def forward(ctx, x0, x1, x2, x3, x4, x5, x6):
            o0, o1, o2, o3, o4, o5, o6 = f.run((x0, x1, x2, x3, x4, x5, x6))
            ctx.materialize_grads = False
            ctx.to_save = (x6, x3, x1, o4, o3, o6, o5, o2, )
            ctx.inputs = (x0, x1, x2, x3, x4, x5, x6)
            return o0, o1

        def backward(ctx, g0, g1):
            c0, c1, c2, c3, c4, c5, c6, c7 = ctx.saved_tensors
            if is_grad_enabled():
                return op.backward_with_grad(ctx.inputs, (g0, g1), [c0, c1, c2, c3, c4, c5, c6, c7])
            inputs = (g0, g1, None, None, None, None, None, c0, c1, c2, c3, c4, c5, c6, c7)
            key = (g0 is None, g1 is None, get_default_dtype(), is_any_autocast_enabled())
            run = backward_plans.get(key) or op.backward_plan(key, inputs)
            d0, d1, d2, d3 = run(*inputs)
            return d0, None, d1, None, d2, d3, None

    Behind the size guard, the inputs it checked to be tensors (`plain_tensors`) are not tested again:
    `x0.requires_grad or ...`, `apply(unwrap(x0), ...)`.

    f's tensor inputs are detached (the seed's DifferentiableGraphOp) unless every output of f is fresh memory
    (_fresh): f runs with grad mode off inside the Function's forward, so detaching only keeps an input from
    coming back as an output or a view of one, which autograd would treat as a view of the input."""
    gradient = op.gradient
    f = gradient.f
    inputs = [f"x{k}" for k in range(op.f_inputs)]
    outputs = [f"o{k}" for k in range(op.f_outputs)]
    tensors = [_holds_tensor(v.type) for v in f.inputs]
    detach = not all(_fresh(v) for v in f.outputs)
    arguments = [f"{x}.detach() if isinstance({x}, Tensor) else {x}" if detach and tensor else x
                 for x, tensor in zip(inputs, tensors)]
    f_inputs = "".join(a + ", " for a in arguments)
    if op.fixed_types:  # f's executor would test each input again, as the guard did
        run_f = (f"{_unpacked(outputs)}(forward_plans.get(forward_key := (get_default_dtype(), "
                 f"is_any_autocast_enabled())) or op.forward_plan(forward_key, ({f_inputs})))({f_inputs})")
    else:
        run_f = f"{_unpacked(outputs)}f.run(({f_inputs}))"
    real = outputs[:gradient.f_real_outputs]
    returned = f"return {', '.join(real)}" + ("," if len(real) == 1 else "")
    is_tensor = [f"isinstance({x}, Tensor) and " if k not in op.plain_tensors else "" for k, x in enumerate(inputs)]
    requires = " or ".join(f"{known}{x}.requires_grad" for x, t, known in zip(inputs, tensors, is_tensor) if t)
    call = [f"def call({', '.join(inputs)}):"]
    if requires:
        unwrapped = ", ".join((f"unwrap({x})" if not known else f"unwrap({x}) if isinstance({x}, Tensor) else {x}")
                              if t else x for x, t, known in zip(inputs, tensors, is_tensor))
        call += [f"    if is_grad_enabled() and ({requires}):",
                 "        if not functorch_active():",
                 f"            result = apply({unwrapped})",
                 "        else:",
                 f"            result = Function.apply({', '.join(inputs)})",
                 f"        return {'result[0]' if len(real) == 1 else 'result'}"]
    call += [f"    {run_f}", f"    return {', '.join(real) or 'None'}"]

    captured = [f.inputs[i] for i in gradient.df_input_captured_inputs]
    captured += [f.outputs[i] for i in gradient.df_input_captured_outputs]
    captured_names = [inputs[i] for i in gradient.df_input_captured_inputs]
    captured_names += [outputs[i] for i in gradient.df_input_captured_outputs]
    saved = [k for k, v in enumerate(captured) if _holds_tensor(v.type)]
    kept = [k for k in range(len(captured)) if k not in saved]
    # ctx.materialize_grads and ctx.to_save: what FunctionCtx's set_materialize_grads and save_for_backward set
    # (attributes of the C node, read when forward returns), set directly: two Python calls less per step
    forward = [f"def forward(ctx, {', '.join(inputs)}):", f"    {run_f}", "    ctx.materialize_grads = False"]
    if saved:
        forward.append(f"    ctx.to_save = ({''.join(captured_names[k] + ', ' for k in saved)})")
    if kept:
        forward.append(f"    ctx.captured = ({''.join(captured_names[k] + ', ' for k in kept)})")
    if op.temporaries:  # for backward_with_grad; inputs are never f's outputs (they are detached, or f's are fresh)
        forward.append(f"    ctx.inputs = ({''.join(x + ', ' for x in inputs)})")
    if op.no_vjp_outputs:
        marked = "".join(real[k] + ", " for k in op.no_vjp_outputs)
        forward.append(f"    ctx.mark_non_differentiable(*[v for v in ({marked}) if isinstance(v, Tensor)])")
    forward.append(f"    {returned}")

    grads = [f"g{k}" for k in range(len(real))]
    values = [f"c{k}" for k in range(len(captured))]
    backward = [f"def backward(ctx, {', '.join(grads)}):"]
    if saved:
        backward.append(f"    {_unpacked([values[k] for k in saved], tuple_=True)}ctx.saved_tensors")
    if kept:
        backward.append(f"    {_unpacked([values[k] for k in kept], tuple_=True)}ctx.captured")
    vjps = [grads[i] if i < len(real) else "None" for i in gradient.df_input_vjps]
    df_inputs = "".join(v + ", " for v in vjps + values)
    backward += ["    if is_grad_enabled():",
                 f"        return op.backward_with_grad({'ctx.inputs' if op.temporaries else '()'}, "
                 f"({''.join(g + ', ' for g in grads)}), [{', '.join(values)}])",
                 f"    inputs = ({df_inputs})"]
    results = [f"d{k}" for k in range(op.df_outputs)]
    if op.fixed_types:
        key = "".join(f"{g} is None, " for g in grads)
        backward += [f"    key = ({key}get_default_dtype(), is_any_autocast_enabled())",
                     "    run = backward_plans.get(key) or op.backward_plan(key, inputs)",
                     f"    {_unpacked(results)}run(*inputs)"]
    else:
        backward.append(f"    {_unpacked(results)}op.df_executor().run(inputs)")
    input_grads = ["None"] * op.f_inputs
    for index, result in zip(gradient.df_output_vjps, results):
        input_grads[index] = result
    backward.append(f"    return {', '.join(input_grads)}" + ("," if len(input_grads) == 1 else ""))

    namespace: dict[str, Any] = {
        "Tensor": torch.Tensor, "is_grad_enabled": torch.is_grad_enabled, "unwrap": _unwrap_if_dead,
        "functorch_active": torch._C._are_functorch_transforms_active, "get_default_dtype": torch.get_default_dtype,
        "is_any_autocast_enabled": torch._C._is_any_autocast_enabled, "f": op.f, "op": op,
        "forward_plans": op.forward_plans, "backward_plans": op.backward_plans}
    source = "\n".join([*call, "", *forward, "", *backward]) + "\n"
    exec(compile(source, "<tsjit differentiable graph>", "exec"), namespace)
    function = type("DifferentiableGraphFunction", (torch.autograd.Function,),
                    {"forward": staticmethod(namespace["forward"]), "backward": staticmethod(namespace["backward"])})
    # torch._C._FunctionBase.apply: what Function.apply calls after its Python part, which outside functorch
    # transforms only unwraps dead functorch wrappers (done in the call) and costs more than the autograd node
    namespace["apply"] = super(torch.autograd.Function, function).apply  # type: ignore[misc]
    namespace["Function"] = function
    function._backward_cls.op = op  # type: ignore[attr-defined]  # `grad_fn.op` of the op's outputs
    # the engine calls the backward node's `apply`, whose Python part (BackwardCFunction.apply) only finds the
    # Function's backward, through two more Python frames, and calls it with the node as ctx: the node calls
    # backward itself (about 1 us less per backward of the LSTM cell)
    function._backward_cls.apply = namespace["backward"]  # type: ignore[attr-defined]
    op.source = source
    return namespace["call"]


def _unpacked(names: list[str], tuple_: bool = False) -> str:
    """The left side of an assignment from a run's result (`a = ` for one value, `a, b = ` for several), or from
    a tuple (`a, = ` for one value)."""
    if not names:
        return ""
    return f"{', '.join(names)}{',' if tuple_ and len(names) == 1 else ''} = "


def _fresh(value: Value) -> bool:
    """Whether a graph output is surely new memory: an operator's result its schema does not alias to an input,
    or a fusion group's output whose subgraph computes it so (a kernel's outputs are new; its fallback
    interpreter's are the subgraph's)."""
    node = value.node
    if node.kind is prim.FusionGroup:
        return _fresh(node.g("Subgraph").outputs[value.offset])
    schema = node.maybe_schema()
    if schema is None or is_conservative(node) or value.offset >= len(schema.returns):
        return False
    return schema.returns[value.offset].alias_info is None


_unwrap_if_dead = torch._C._functorch.unwrap_if_dead


class _Temporaries(torch.autograd.Function):
    """The captured temporaries (op.temporaries) joined to autograd as functions of f's inputs: their gradients
    reach the inputs through df."""

    @staticmethod
    def forward(ctx, op: DifferentiableGraphOp, captured: list, *inputs: Any) -> tuple:  # type: ignore[override]
        ctx.set_materialize_grads(False)
        ctx.op, ctx.captured = op, captured
        return tuple(captured[position].detach() for _, position in op.temporaries)

    @staticmethod
    def backward(ctx, *grads: Any) -> tuple:  # type: ignore[override]
        op: DifferentiableGraphOp = ctx.op
        by_output = {output: grad for (output, _), grad in zip(op.temporaries, grads)}
        vjps = [by_output.get(i) for i in op.gradient.df_input_vjps]
        return (None, None, *op.input_gradients(vjps + list(ctx.captured)))
