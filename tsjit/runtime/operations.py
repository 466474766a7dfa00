"""Operations: the Python callable that runs a node, resolved once per node when its Code is compiled.

An Operation takes the node's inputs positionally and returns its single output, a sequence for several
outputs, or None (seed: jit-overview.md "Operation", "Operator"). Where it comes from, in order:

1. Node kinds whose behaviour depends on the node itself (attributes, number of inputs) have a factory in a
   table keyed by kind: the runtime's own (`RUNTIME_NODE_OPERATIONS`: the profiling executor's checks, fused
   kernels, a faster GetAttr) and `tsjit.ops.prim_ops.NODE_OPERATIONS` (TupleConstruct, GetAttr, Constant, ...).
2. Otherwise the node's schema names an Operator. A Python implementation (JIT-only builtins, user
   registrations) is called as is.
3. A dispatcher operator calls its exact `torch.ops` overload. Going through `OpOverload` costs about a
   microsecond in Python; its C entry point `OpOverload._op` saves most of that, but still boxes every argument
   through the JIT schema, so on small tensors it takes ~1.4x the time of the ordinary binding (`torch.add`,
   `Tensor.add_`). Where that binding provably reaches the same overload for the node's argument types, it is
   used instead: the proof is one call under a dispatch mode that records which OpOverload the binding
   dispatches to first (see `_verified_binding`; composite operators like aten::linear, which decompose before
   any dispatch, by their name and what they dispatch first: `_dispatches_to`); aten::size.int and aten::dim,
   which never dispatch, call the Tensor methods that read the same metadata. Trailing arguments that are
   constants equal to their schema defaults are left out of the call (except for such composites), and constant
   keyword-only arguments are bound once, so

       %y : Tensor = aten::add(%a, %b, %one)      # aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)

   runs as `torch._C._VariableFunctions.add(a, b)` reading two registers.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from tsjit.errors import SchemaError
from tsjit.frontend.torch_tracing_flags import torch_jit_is_tracing
from tsjit.ir.constants import constant_value, is_wrapped_number
from tsjit.ir.graph import Node, Value
from tsjit.ir.objects import Object
from tsjit.ir.schema import FunctionSchema
from tsjit.ir.symbols import Symbol, prim
from tsjit.ir.types import BoolType, DeviceType, FloatType, IntType, ListType, NoneType, StringType, TensorType
from tsjit.ops.matching import find_operator_for_node
from tsjit.ops.registry import Operator

Operation = Callable[..., Any]
OperationFactory = Callable[[Node], Operation]
# The graphs being profiled (runtime/profiling_record.py), each with a weak reference to the factory of its
# prim::profile nodes' Operations, which record what they see; the prim::profile nodes of any other graph (or of a
# graph whose record is gone) pass their inputs through. Weak both ways: the record holds its graph.
PROFILED_GRAPHS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class CompiledOperation(NamedTuple):
    """An Operation plus which of the node's inputs it takes (the others are constants it already holds)."""

    operation: Operation
    inputs: tuple[int, ...]


def operation_for_node(node: Node) -> Operation:
    """The callable running `node`, taking all of the node's inputs positionally."""
    operation, inputs = compile_operation(node)
    if inputs == tuple(range(len(node.inputs))):
        return operation
    return lambda *values: operation(*[values[i] for i in inputs])


def compile_operation(node: Node) -> CompiledOperation:
    """The cheapest callable running `node` and the positions of the inputs it must be given."""
    compiled, inputs = _compile_operation(node), node.inputs
    wrapped = tuple([k for k, i in enumerate(compiled.inputs) if _is_wrapped_number_input(inputs[i])])
    if wrapped and not node.kind.name.endswith("_"):
        return CompiledOperation(_promoting_as_numbers(compiled.operation, wrapped), compiled.inputs)
    return compiled


def _compile_operation(node: Node) -> CompiledOperation:
    factory = node_operation_factory(node.kind)
    if factory is not None:
        return CompiledOperation(factory(node), tuple(range(len(node.inputs))))
    operator = _operator_for(node)
    operation = operator.get_operation(node)
    overload = _dispatcher_overload(operation)
    if overload is None:
        return CompiledOperation(operation, tuple(range(len(node.inputs))))
    return _dispatcher_operation(overload, operator.schema, node)


def _is_wrapped_number_input(value: Value) -> bool:
    return value.node.kind is prim.Constant and is_wrapped_number(constant_value(value.node))


def _promoting_as_numbers(operation: Operation, wrapped: tuple[int, ...]) -> Operation:
    """`operation` with the wrapped numbers among its inputs (tsjit.ir.constants.wrapped_number: a traced
    `x.sum() * 1.5`) converted first to the dtype the Python numbers would have promoted to with the other
    tensor inputs, so that the call computes in eager's dtype: ATen lets a wrapped number decide only the category
    (bool < int < float < complex), never the width. In-place operators keep their `self`'s dtype anyway."""

    def promoting(*inputs: Any) -> Any:
        tensors = [v for k, v in enumerate(inputs) if k not in wrapped and isinstance(v, torch.Tensor)]
        if not tensors:
            return operation(*inputs)
        dtype = _promoted_with_numbers(tensors, [inputs[k].item() for k in wrapped])
        converted = [v.to(dtype) if k in wrapped else v for k, v in enumerate(inputs)]
        return operation(*converted)

    return promoting


def _promoted_with_numbers(tensors: list[torch.Tensor], numbers: list[Any]) -> torch.dtype:
    """ATen's result type of `tensors` (those with dimensions first, then 0-dim ones) and then Python `numbers`."""
    dtype, has_dims = tensors[0].dtype, tensors[0].dim() > 0
    for tensor in tensors[1:]:
        dtype = torch.result_type(_stand_in(dtype, has_dims), tensor)
        has_dims = has_dims or tensor.dim() > 0
    for number in numbers:
        dtype = torch.result_type(_stand_in(dtype, has_dims), number)
    return dtype


def _stand_in(dtype: torch.dtype, has_dims: bool) -> torch.Tensor:
    return torch.empty((1,) if has_dims else (), dtype=dtype)


def node_operation_factory(kind: Symbol) -> OperationFactory | None:
    """The factory building operations for nodes of `kind` from the node itself, if that kind has one."""
    factory = RUNTIME_NODE_OPERATIONS.get(kind)
    if factory is None and kind.ns == "prim":  # prim_ops' table holds prim kinds only: aten calls never load it
        factory = _prim_node_operations().get(kind)
    return factory


@functools.cache
def _prim_node_operations() -> dict[Symbol, OperationFactory]:
    """tsjit's prim ops and JIT-only builtins, imported on first use so `import tsjit` stays cheap."""
    importlib.import_module("tsjit.ops.builtins")
    return importlib.import_module("tsjit.ops.prim_ops").NODE_OPERATIONS


def _operator_for(node: Node) -> Operator:
    operator = find_operator_for_node(node)
    if operator is None:  # perhaps a schema only tsjit's builtins register, on import (they append to the kind's
        _prim_node_operations()  # overloads, so an operator found without them is the one found with them)
        operator = find_operator_for_node(node)
    if operator is None:
        raise SchemaError(f"no operator implements {node.kind} for inputs of these types:\n  {node!r}")
    return operator


def _dispatcher_overload(operation: Operation) -> torch._ops.OpOverload | None:
    """The OpOverload behind an operator's operation, or None when its implementation is Python code.

    The registry hands out the OpOverload itself, or (for schemas with keyword-only arguments) an adapter that
    names it as `op_overload`.
    """
    if isinstance(operation, torch._ops.OpOverload):
        return operation
    return getattr(operation, "op_overload", None)


# ---- dispatcher operators ------------------------------------------------------------------------------------
class _CallShape(NamedTuple):
    """How a node's inputs are passed to a dispatcher call."""

    positional: tuple[int, ...]  # node input positions passed positionally
    keywords: tuple[tuple[str, int], ...]  # (argument name, node input position) passed by keyword
    bound: dict[str, Any]  # constant keyword-only arguments, bound once


def _dispatcher_operation(overload: torch._ops.OpOverload, schema: FunctionSchema,
                          node: Node) -> CompiledOperation:
    """The call of `overload` for `node`, remembered by what decides it (see `_call_key`): a graph calls the
    same operator with the same constants and types many times (a 100-op chain: nine distinct calls), and
    deciding a call's shape and binding costs tens of microseconds per node, a first call's largest share."""
    key = _call_key(overload, schema, node)
    try:
        found = None if key is None else _dispatcher_operations.get(key)
    except TypeError:  # a type holding something unhashable
        key = None
    if key is None:
        return _new_dispatcher_operation(overload, schema, node)
    if found is None or found[0] is not overload or found[1] is not schema:
        if len(_dispatcher_operations) >= _DISPATCHER_OPERATIONS_SIZE:
            _dispatcher_operations.clear()
        found = _dispatcher_operations[key] = (overload, schema, _new_dispatcher_operation(overload, schema, node))
    return found[2]


_DISPATCHER_OPERATIONS_SIZE = 4096
# by _call_key: (overload, schema, operation), the first two kept so that the ids in the key stay theirs
_dispatcher_operations: dict[tuple, tuple[torch._ops.OpOverload, FunctionSchema, CompiledOperation]] = {}
# constants of these types are keys by value (with their type: 1, 1.0 and True are equal keys otherwise)
_CONSTANT_KEY_TYPES = frozenset({int, float, bool, str, type(None), torch.device, torch.dtype})


def _call_key(overload: torch._ops.OpOverload, schema: FunctionSchema, node: Node) -> tuple | None:
    """What `_new_dispatcher_operation` reads of a node: the resolution mode, each input's constant value (by
    value and type) or static type, for the overload and schema (by identity: an OpOverload's hash is Python
    code). None when a constant is not a plain value (a tensor, a list), or while torch.jit traces (no binding is
    proven then)."""
    parts: list[Any] = [id(overload), id(schema), getattr(_for_torch_compile, "on", False),
                        getattr(_unprobed, "on", False)]
    for value in node.inputs:
        if value.node.kind is prim.Constant:
            constant = constant_value(value.node)
            if type(constant) not in _CONSTANT_KEY_TYPES:
                return None
            parts.append((type(constant), constant))
        else:
            parts.append(value.type)
    if not parts[3] and not parts[2] and torch_jit_is_tracing():
        return None
    return tuple(parts)


def _new_dispatcher_operation(overload: torch._ops.OpOverload, schema: FunctionSchema,
                              node: Node) -> CompiledOperation:
    shape = _call_shape(schema, node, keep_defaults=_is_composite(overload) and _only_overload(overload, {}))
    if getattr(_for_torch_compile, "on", False):  # the OpOverload itself, which torch.compile's tracer reads
        call = overload
    elif getattr(_unprobed, "on", False):
        call = _METADATA_READERS.get(overload.name()) or overload._op
    else:
        call = _verified_binding(overload, node, shape) or _METADATA_READERS.get(overload.name()) or overload._op
    if shape.bound:
        call = functools.partial(call, **shape.bound)
    if not shape.keywords:
        return CompiledOperation(call, shape.positional)
    return CompiledOperation(_with_keywords(call, len(shape.positional), shape.keywords),
                             shape.positional + tuple(i for _, i in shape.keywords))


@contextlib.contextmanager
def operations_for_torch_compile() -> Iterator[None]:
    """Resolve the Operations of nodes compiled inside the `with` (on this thread) as torch.compile's tracer can
    read them (runtime/torch_compile_plans.py): a dispatcher operator is called through its OpOverload, not its C
    entry point `_op` (opaque to that tracer) nor a binding (which would need a probe, work the tracer's users
    should not pay for)."""
    _for_torch_compile.on = True
    try:
        yield
    finally:
        _for_torch_compile.on = False


_for_torch_compile = threading.local()


@contextlib.contextmanager
def operations_without_probes() -> Iterator[None]:
    """Resolve the Operations of nodes compiled inside the `with` (on this thread) without proving a binding
    (`_verified_binding`): a dispatcher operator is called through its C entry point `OpOverload._op`. For plans
    that run once or twice, the profiling executor's profiling plans: the probe (stand-in arguments, a call under
    a dispatch mode) costs more than a first call saves by the binding; the optimized plan that follows proves
    its bindings, and runs them on every later call."""
    _unprobed.on = True
    try:
        yield
    finally:
        _unprobed.on = False


_unprobed = threading.local()


def compiling_for_few_runs() -> bool:
    """Whether nodes are compiled inside `operations_without_probes` (for a plan that runs once or twice): the
    interpreter then builds plain steps rather than generating faster ones (interpreter.py's _op_step)."""
    return getattr(_unprobed, "on", False)


def _call_shape(schema: FunctionSchema, node: Node, keep_defaults: bool) -> _CallShape:
    """Leave out trailing positional and all keyword-only arguments that are constants equal to their default,
    unless `keep_defaults` (for composites a binding may stand for): a composite operator's binding is only
    proven up to its first dispatch (see `_dispatches_to`), which a default used later (cross_entropy_loss's
    reduction) may not reach, so its call passes every argument and no binding default ever applies."""
    pairs = list(zip(schema.arguments, range(len(node.inputs))))
    positional = [(argument, i) for argument, i in pairs if not argument.kwarg_only]
    while positional and not keep_defaults and _is_default(*positional[-1], node):
        positional.pop()
    keywords, bound = [], {}
    for argument, i in pairs:
        if not argument.kwarg_only or (not keep_defaults and _is_default(argument, i, node)):
            continue
        if _is_constant(node.inputs[i]):
            bound[argument.name] = constant_value(node.inputs[i].node)
        else:
            keywords.append((argument.name, i))
    return _CallShape(tuple(i for _, i in positional), tuple(keywords), bound)


def _is_default(argument, index: int, node: Node) -> bool:
    value = node.inputs[index]
    if not argument.has_default or not _is_constant(value):
        return False
    constant = constant_value(value.node)
    return type(constant) is type(argument.default_value) and constant == argument.default_value


def _is_constant(value: Value) -> bool:
    return value.node.kind is prim.Constant


def _with_keywords(call: Operation, positional: int, keywords: tuple[tuple[str, int], ...]) -> Operation:
    names = tuple(name for name, _ in keywords)

    def operation(*inputs):
        return call(*inputs[:positional], **dict(zip(names, inputs[positional:])))

    return operation


# Operators that read a tensor's metadata without dispatching (so no recorded dispatch can prove a binding), and
# the Tensor methods doing the same read: `x.size(d)` wraps a negative `d` as aten::size.int does. They take
# every argument positionally (neither has defaults).
_METADATA_READERS: dict[str, Operation] = {"aten::size.int": torch._C.TensorBase.size,
                                           "aten::dim": torch._C.TensorBase.dim}


# ---- the verified fast binding -------------------------------------------------------------------------------
_BINDING_NAMESPACES = (torch._C._VariableFunctions, torch._C._nn, torch._C._linalg, torch._C._special,
                       torch._C._fft, torch._C.TensorBase)
_bindings: dict[tuple, Operation | None] = {}
_bindings_lock = threading.RLock()


def _verified_binding(overload: torch._ops.OpOverload, node: Node, shape: _CallShape) -> Operation | None:
    """PyTorch's Python binding of the overload's name, if it dispatches exactly what `overload` does here.

    A binding chooses among its signatures by the Python types of the arguments alone, and the node's static
    types fix those, so one recorded call with stand-in values of the same types proves the choice.
    """
    samples = _sample_arguments(node, shape)
    if samples is None or torch_jit_is_tracing():  # the probe must not run under torch.jit's tracer
        return None
    args, kwargs = samples
    key = (overload, tuple(map(type, args)), tuple((k, type(v)) for k, v in kwargs.items()))
    with _bindings_lock:
        if key not in _bindings:
            _bindings[key] = _find_binding(overload, args, kwargs)
        return _bindings[key]


def _find_binding(overload: torch._ops.OpOverload, args: list, kwargs: dict) -> Operation | None:
    name = overload._schema.name.partition("::")[2]
    candidates = (getattr(namespace, name, None) for namespace in _BINDING_NAMESPACES)
    return next((c for c in candidates if c is not None and _dispatches_to(c, overload, args, kwargs)), None)


def _dispatches_to(binding: Operation, overload: torch._ops.OpOverload, args: list, kwargs: dict) -> bool:
    """Whether `binding` dispatches the same overload with the same arguments as `overload._op`, defaults
    included: a binding's defaults can differ from the schema's (`torch._C._nn.mse_loss(x, y)` does not reduce).

    A composite operator (aten::linear, layer_norm, chunk, dropout...) never reaches a dispatch mode itself: its
    C++ kernel runs first and dispatches the ops it is made of. For one, the binding is taken when its name can
    only mean this overload (the operator's other overloads are `out=` variants, and no `out` is passed) and its
    call does exactly what the overload's does up to the first dispatch, or returns the same value without one
    (`dropout(x, p, False)` returns x): then both run the same kernel with the same arguments (a composite's call
    passes every argument, so that no binding default differing from the schema's can apply later on).
    """
    expected = _first_dispatch(overload._op, args, kwargs)
    if expected is None or _first_dispatch(binding, args, kwargs) != expected:
        return False
    return expected[0] is overload or (_is_composite(overload) and _only_overload(overload, kwargs))


@functools.cache
def _is_composite(overload: torch._ops.OpOverload) -> bool:
    return torch._C._dispatch_has_kernel_for_dispatch_key(overload.name(), "CompositeImplicitAutograd")


def _only_overload(overload: torch._ops.OpOverload, kwargs: dict) -> bool:
    """Whether a call without `out=` of the overload's operator name can reach no other overload."""
    if "out" in kwargs:
        return False
    packet = overload.overloadpacket
    others = (getattr(packet, name) for name in packet.overloads() if name != overload._overloadname)
    return all(any(argument.is_out for argument in other._schema.arguments) for other in others)


_RETURNED = "returned without dispatching"


def _first_dispatch(call: Operation, args: list, kwargs: dict) -> tuple | None:
    """(OpOverload, arguments, keyword arguments) of the first dispatch `call` makes, (_RETURNED, result) for a
    call that returns without dispatching, or None for one that raises before its first dispatch."""
    recorder = _FirstDispatch()
    try:
        with recorder:
            result = call(*args, **kwargs)
        return (_RETURNED, _comparable(result))
    except Exception:  # the recorder stops the call at its first dispatch; a call that rejects fails here
        pass
    return recorder.first


class _FirstDispatch(TorchDispatchMode):
    """Records the first dispatch under it (tensors by identity) and stops the call right there."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False  # else TorchDispatchMode wraps __torch_dispatch__ in a guard that imports torch._dynamo

    def __init__(self):
        super().__init__()
        self.first: tuple | None = None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.first = (func, _comparable(args), _comparable(kwargs or {}))
        raise _Stopped()


class _Stopped(Exception):
    """Raised by _FirstDispatch to abandon the recorded call."""


def _comparable(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return ("tensor", id(value))
    if isinstance(value, list | tuple):
        return tuple(map(_comparable, value))
    if isinstance(value, dict):
        return tuple(sorted((key, _comparable(v)) for key, v in value.items()))
    return value


def _sample_arguments(node: Node, shape: _CallShape) -> tuple[list, dict] | None:
    """Stand-ins for the call's arguments: constants as they are, others by static type (None if unsure)."""
    args = [_sample(node.inputs[i]) for i in shape.positional]
    kwargs = {name: _sample(node.inputs[i]) for name, i in shape.keywords}
    kwargs.update(shape.bound)
    if any(a is _UNSURE for a in args) or any(v is _UNSURE for v in kwargs.values()):
        return None
    return args, kwargs


_UNSURE = object()


def _sample(value: Value) -> Any:
    """A value with the Python type `value` always has at run time, or _UNSURE when that type can vary."""
    if _is_constant(value) and not isinstance(value.type, TensorType):
        return constant_value(value.node)
    return _sample_of_type(value.type)


def _sample_of_type(type_) -> Any:
    if isinstance(type_, TensorType):  # of the known rank, so that composites taking a dim can run (chunk)
        return torch.empty((1,) * (type_.rank or 1), device="meta")
    if isinstance(type_, ListType):
        element = _sample_of_type(type_.elem)
        return _UNSURE if element is _UNSURE else [element]
    for static_type, sample in _SAMPLES:
        if isinstance(type_, static_type):
            return sample
    return _UNSURE


_SAMPLES: Sequence[tuple[type, Any]] = ((BoolType, False), (IntType, 1), (FloatType, 1.0), (StringType, "x"),
                                        (NoneType, None), (DeviceType, torch.device("cpu")))


# ---- node kinds the runtime implements -------------------------------------------------------------------------
def _profile(node: Node) -> Operation:
    """prim::profile records types for the profiling executor; running it passes its inputs through.

        %13 : Tensor = prim::profile[profiled_type=Float(4, 4, ...), seen_none=0](%4)
    """
    recorder = PROFILED_GRAPHS.get(node.graph)
    factory = recorder() if recorder is not None and node.kind is prim.profile else None
    if factory is not None:
        return factory(node)
    if not node.inputs:
        return lambda: None
    return (lambda value: value) if len(node.inputs) == 1 else (lambda *values: values)


def _type_check(node: Node) -> Operation:
    """prim::TypeCheck: the inputs, then whether each tensor matches its profiled type exactly.

        %40 : Float(8, ...), %41 : Float(8, ...), %42 : bool = prim::TypeCheck[types=[Float(8, ...), ...]](%x, %y)
    """
    return type_check_function(node.tys("types"))


def type_check_function(types: Sequence[TensorType]) -> Operation:
    """`check(*tensors)`: the tensors, then whether each has every property its type knows (TorchScript's
    TensorType::matchTensor; requires_grad as autograd sees it), generated as one expression (a guard runs on
    every call of an optimized plan):

        def check(x0):
            return x0, (x0 is not None and x0.dtype is dtype0 and x0.is_cpu and x0.shape == sizes0
                        and (x0.requires_grad is False or not is_grad_enabled()))
    """
    namespace: dict[str, Any] = {"is_grad_enabled": torch.is_grad_enabled}
    tests = [_matches(f"x{k}", type_, k, namespace) for k, type_ in enumerate(types)]
    names = "".join(f"x{k}, " for k in range(len(types)))
    source = (f"def check({names}):\n"
              f"    return {names}({' and '.join(tests) or 'True'})\n")
    exec(compile(source, "<tsjit type check>", "exec"), namespace)
    return namespace["check"]


def _matches(name: str, type_: TensorType, k: int, namespace: dict[str, Any]) -> str:
    """The test that tensor `name` has every property `type_` knows."""
    if type_.undefined:
        return f"{name} is None"
    tests = [f"{name} is not None"]
    if type_.dtype is not None:
        namespace[f"dtype{k}"] = type_.dtype
        tests.append(f"{name}.dtype is dtype{k}")
    if type_.device is not None:
        namespace[f"device{k}"] = type_.device
        tests.append(f"{name}.is_cpu" if type_.device.type == "cpu" else f"{name}.device == device{k}")
    if type_.sizes is not None:
        tests.append(_dims_test(f"{name}.shape", type_.sizes, f"sizes{k}", namespace))
    if type_.strides is not None:
        tests.append(_dims_test(f"{name}.stride()", type_.strides, f"strides{k}", namespace))
    if type_.requires_grad is True:  # autograd sees requires_grad only while grad mode is on
        tests.append(f"{name}.requires_grad and is_grad_enabled()")
    elif type_.requires_grad is False:
        tests.append(f"({name}.requires_grad is False or not is_grad_enabled())")
    return " and ".join(tests)


def _dims_test(read: str, dims: tuple[int | None, ...], name: str, namespace: dict[str, Any]) -> str:
    """`read` (sizes or strides) equal to `dims` where known, of their length."""
    if None not in dims:
        namespace[name] = tuple(dims)
        return f"{read} == {name}"
    known = [f"{read}[{i}] == {d}" for i, d in enumerate(dims) if d is not None]
    return " and ".join([f"len({read}) == {len(dims)}", *known])


def _requires_grad_check(node: Node) -> Operation:
    """prim::RequiresGradCheck: the inputs, then whether each tensor's requires_grad is the profiled one."""
    expected = tuple(t.requires_grad for t in node.tys("types"))

    def operation(*tensors):
        grad = torch.is_grad_enabled()
        return (*tensors, all(grad and t.requires_grad == e for t, e in zip(tensors, expected)))

    return operation


def _create_object(node: Node) -> Operation:
    """prim::CreateObject: a new Object of the output's class type, its attributes not yet set."""
    class_type = node.output().type
    return lambda: Object(class_type)


def _fusion_group(node: Node) -> Operation:
    """prim::FusionGroup: a compiled kernel for its subgraph, guarded, with the subgraph as fallback."""
    from tsjit.runtime.fusion import fusion_group_operation  # breaks a real cycle: fusion imports this module

    return fusion_group_operation(node)


def _differentiable_graph(node: Node) -> Operation:
    """prim::DifferentiableGraph: its forward graph run, joined to autograd by its backward graph."""
    # breaks a real cycle: differentiable_graph_op imports this module (through graph_executor)
    from tsjit.runtime.differentiable_graph_op import differentiable_graph_operation

    return differentiable_graph_operation(node)


def _get_attr(node: Node) -> Operation:
    """prim::GetAttr: `getattr(obj, name)`, but a runtime Object's slot read straight from its attribute dict.

    `getattr` on an Object first misses its class and its slots, then falls back to `Object.__getattr__`; the
    direct read costs a third of that (a module's forward reads every parameter this way). Names that are the
    Object's own slots, attributes not set yet and methods still go through `getattr`.
    """
    name = node.s("name")
    if name in Object.__slots__:
        return lambda obj: getattr(obj, name)

    def get_attr(obj):
        if type(obj) is Object:
            value = obj._attributes.get(name, _NOT_SET)
            if value is not _NOT_SET:
                return value
        return getattr(obj, name)

    return get_attr


_NOT_SET = object()


RUNTIME_NODE_OPERATIONS: dict[Symbol, OperationFactory] = {
    prim.profile: _profile,
    prim.profile_ivalue: _profile,
    prim.TypeCheck: _type_check,
    prim.RequiresGradCheck: _requires_grad_check,
    prim.CreateObject: _create_object,
    prim.GetAttr: _get_attr,
    prim.FusionGroup: _fusion_group,
    prim.DifferentiableGraph: _differentiable_graph,
}
