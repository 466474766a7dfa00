"""PyTorch's op database (`op_db`) as TorchScript programs: for every OpInfo, the call forms torch.jit's own op
tests script (`torch.X(...)`, `x.X(...)`, `x.X_(...)`, `torch.ops.aten.X(...)`) and its CPU sample inputs.

A sample becomes a call: tensors, lists of tensors and plain values (bool, int, float, complex, str and
homogeneous lists of numbers) are parameters of the generated function, with annotations; everything else (None,
dtypes, devices, layouts, memory formats, mixed tuples) is written into the source as a literal, as torch's
jit_metaprogramming_utils does. Samples whose parameters and literals agree share one function, so one
scripted function serves many samples (and shapes) of an (OpInfo, variant).
"""

from __future__ import annotations

import ast
import copy
import functools
import linecache
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import torch

VARIANTS = ("function", "method", "inplace", "aten")
SECOND_DTYPES = (torch.int64, torch.int32, torch.bool, torch.uint8, torch.int16, torch.int8)
# samples per dtype of one OpInfo, spread evenly over what it generates (linspace and logspace generate hundreds
# of scalar combinations, each traced on its own): what keeps the whole corpus within this machine's CPU
MAX_SAMPLES_PER_DTYPE = 16
# results compared by dtype and shape only: the values are whatever memory held, even when seeded
UNINITIALIZED = re.compile(r"(^|[._])empty")


TENSOR_ANNOTATIONS = ("Tensor", "list[Tensor]", "list[Optional[Tensor]]")


class NotExpressible(Exception):
    """A sample argument that has no TorchScript spelling (a Python callable, a numpy array, ...)."""


@dataclass
class Call:
    """One sample as a call of a generated function: the function's source and the values it takes."""

    source: str
    values: list[Any]
    tensor_positions: list[int]


@dataclass
class VariantCase:
    """An (OpInfo, variant): its call spelling and its samples, as calls grouped by generated source."""

    op_name: str
    variant: str
    callee: str | LambdaCall  # "torch.sum", "torch.ops.aten.sum", ".sum" / ".sum_" (a method of the first
    # argument), or the OpInfo's lambda
    calls: list[Call] = field(default_factory=list)
    skipped_samples: int = 0


def full_name(op) -> str:
    """`name.variant_test_name`, as op_db's test ids spell an OpInfo."""
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


def load_op_db() -> list:
    """op_db (importing it costs seconds: PyTorch's test infrastructure comes along)."""
    from torch.testing._internal.common_methods_invocations import op_db

    return list(op_db)


def sample_dtypes(op) -> list[torch.dtype]:
    """float32 and the first integer or bool dtype the OpInfo supports on CPU."""
    supported = op.supported_dtypes("cpu")
    chosen = [torch.float32] if torch.float32 in supported else []
    chosen += [dtype for dtype in SECOND_DTYPES if dtype in supported][:1]
    return chosen


def _resolve(root: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        root = getattr(root, part, None)
        if root is None:
            return None
    return root


def _aten_packet(name: str) -> Any:
    try:
        return getattr(torch.ops.aten, name)
    except (AttributeError, RuntimeError):
        return None


def callees(op) -> dict[str, str | LambdaCall]:
    """The call spellings an OpInfo has, per variant (the ones torch.jit's op tests use); the function variant
    of an OpInfo whose `op` is a lambda over torch calls is that lambda's body (see LambdaCall)."""
    found: dict[str, str | LambdaCall] = {}
    if callable(_resolve(torch, op.name)):
        found["function"] = LambdaCall.of(op.op) or f"torch.{op.name}"
    if op.method_variant is not None and callable(getattr(torch.Tensor, op.name, None)):
        found["method"] = f".{op.name}"
    if op.inplace_variant is not None and callable(getattr(torch.Tensor, op.name + "_", None)):
        found["inplace"] = f".{op.name}_"
    if op.aten_name and _aten_packet(op.aten_name) is not None:
        found["aten"] = f"torch.ops.aten.{op.aten_name}"
    return found


@dataclass(frozen=True)
class LambdaCall:
    """An OpInfo's `op` written as a lambda whose body calls torch with the lambda's parameters (the samples give
    the lambda's arguments, not the torch function's): `op=lambda tensors, equation: torch.einsum(equation,
    tensors)`, `op=lambda x, n, **kwargs: torch.polygamma(n, x, **kwargs)`. A call is spelled as the body with
    the parameters replaced by the arguments. Lambdas that call anything but torch and their parameters
    (`wrapper_set_seed(...)`) or take `*args` are not, and the OpInfo's name is called instead."""

    parameters: tuple[str, ...]
    keywords: str | None  # the `**kwargs` parameter's name
    body: ast.expr

    @staticmethod
    def of(function: Any) -> LambdaCall | None:
        code = getattr(function, "__code__", None)
        if getattr(function, "__name__", "") != "<lambda>" or code is None:
            return None
        found = [node for node in _lambdas_at(code.co_filename, code.co_firstlineno)
                 if [a.arg for a in node.args.args] == list(code.co_varnames[:code.co_argcount])]
        if len(found) != 1 or found[0].args.vararg or found[0].args.kwonlyargs or found[0].args.defaults:
            return None
        node = found[0]
        keywords = node.args.kwarg.arg if node.args.kwarg else None
        parameters = tuple(a.arg for a in node.args.args)
        names = {n.id for n in ast.walk(node.body) if isinstance(n, ast.Name)}
        return LambdaCall(parameters, keywords, node.body) if names <= {*parameters, keywords, "torch"} else None

    def spell(self, actuals: list[str], keyword_actuals: dict[str, str]) -> str:
        """The body called with these spelled arguments."""
        bound = dict(zip(self.parameters, actuals))
        bound.update((k, v) for k, v in keyword_actuals.items() if k in self.parameters)
        extra = {k: v for k, v in keyword_actuals.items() if k not in self.parameters}
        if len(actuals) > len(self.parameters) or len(bound) < len(self.parameters) or (extra and not self.keywords):
            raise NotExpressible("arguments the OpInfo's lambda does not take")
        return ast.unparse(_Substitute(bound, self.keywords, extra).visit(copy.deepcopy(self.body)))


class _Substitute(ast.NodeTransformer):
    """A lambda body's parameters replaced by argument expressions, its `**kwargs` by keyword arguments."""

    def __init__(self, bound: dict[str, str], keywords: str | None, extra: dict[str, str]):
        self.bound, self.keywords, self.extra = bound, keywords, extra

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return ast.parse(self.bound[node.id], mode="eval").body if node.id in self.bound else node

    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        spread = [k for k in node.keywords if k.arg is None and getattr(k.value, "id", None) == self.keywords]
        node.keywords = [k for k in node.keywords if k not in spread] + [
            ast.keyword(k, ast.parse(v, mode="eval").body) for k, v in self.extra.items() if spread]
        return node


@functools.cache
def _parsed(filename: str) -> ast.Module:
    return ast.parse(Path(filename).read_text(), filename)


def _lambdas_at(filename: str, line: int) -> list[ast.Lambda]:
    return [n for n in ast.walk(_parsed(filename)) if isinstance(n, ast.Lambda) and n.lineno == line]


# ----------------------------------------------------------------------------------------------------------------
# values -> parameters or literals
# ----------------------------------------------------------------------------------------------------------------
def _is_tensor_list(value: Any) -> bool:
    return isinstance(value, list | tuple) and len(value) > 0 and all(isinstance(v, torch.Tensor) for v in value)


def _number_list_annotation(value: Any) -> str | None:
    if not isinstance(value, list | tuple) or not value:
        return None
    for python, annotation in ((bool, "list[bool]"), (int, "list[int]"), (float, "list[float]")):
        if all(type(v) is python for v in value):
            return annotation
    return None


def annotation_of(value: Any, callee: str = "", key: int | str = 0) -> str | None:
    """The parameter annotation for a sample value (argument `key` of `callee`, a position or a keyword), or None
    when it is written as a literal instead."""
    if isinstance(value, torch.Tensor):
        return "Tensor"
    if _is_tensor_list(value):
        return _tensor_list_annotation(callee, key)
    if type(value) in (bool, int, float, complex, str):
        return type(value).__name__
    return _number_list_annotation(value)


def _tensor_list_annotation(callee: str, key: int | str) -> str:
    """`list[Tensor]`, or `list[Optional[Tensor]]` where the operator's schemas take only `Tensor?[]` there
    (`_unsafe_masked_index`'s indices: List[Tensor] is no subtype of List[Optional[Tensor]], and only some
    operators have a `hacked_twin` overload taking `Tensor[]`, as `index_put` has)."""
    packet = _aten_packet(callee.rsplit(".", 1)[-1])
    types = set()
    for overload in packet.overloads() if packet is not None else ():
        arguments = getattr(packet, overload)._schema.arguments
        named = [a for a in arguments if a.name == key] if isinstance(key, str) else arguments[key:key + 1]
        types.update(str(a.type) for a in named)
    if "List[Optional[Tensor]]" in types and "List[Tensor]" not in types:
        return "list[Optional[Tensor]]"
    return "list[Tensor]"


def literal(value: Any) -> str:
    """TorchScript source for a value that is not a parameter."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "float('nan')"
        return {math.inf: "math.inf", -math.inf: "-math.inf"}.get(value, repr(value))
    if isinstance(value, int | str):
        return repr(value)
    if isinstance(value, torch.dtype | torch.layout | torch.memory_format):
        return str(value)
    if isinstance(value, torch.device):
        return f"torch.device({str(value)!r})"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + "".join(literal(v) + ", " for v in value) + ")"
    raise NotExpressible(f"{type(value).__name__} argument")


def _as_parameter(value: Any) -> Any:
    """The value the generated function receives (a tuple of numbers or tensors becomes the List it is typed)."""
    return list(value) if isinstance(value, tuple) else value


def make_call(callee: str | LambdaCall, args: list[Any], kwargs: dict[str, Any], tensors_only: bool = False
              ) -> Call:
    """The generated function for one sample's positional and keyword arguments; with `tensors_only`, only
    tensors are parameters and every other value is a literal (as the MLIR corpus compiles a program)."""
    formals, actuals, values, tensors = [], [], [], []
    keyword_actuals: dict[str, str] = {}
    for position, (key, value) in enumerate([*((None, a) for a in args), *kwargs.items()]):
        annotation = annotation_of(value, callee if isinstance(callee, str) else "", position if key is None else key)
        if tensors_only and annotation not in TENSOR_ANNOTATIONS:
            annotation = None
        if annotation is None:
            spelled = literal(value)
        else:
            spelled = f"a{len(formals)}"
            if annotation in TENSOR_ANNOTATIONS:
                tensors.append(len(values))
            formals.append(f"{spelled}: {annotation}")
            values.append(_as_parameter(value))
        actuals.append(spelled if key is None else f"{key}={spelled}")
        if key is not None:
            keyword_actuals[key] = spelled
    if isinstance(callee, LambdaCall):
        call = callee.spell(actuals[:len(args)], keyword_actuals)
    elif callee.startswith("."):
        if not formals or not isinstance(args[0] if args else None, torch.Tensor):
            raise NotExpressible("method call without a tensor self")
        call = f"{actuals[0]}{callee}({', '.join(actuals[1:])})"
    else:
        call = f"{callee}({', '.join(actuals)})"
    source = f"def the_fn({', '.join(formals)}):\n    return {call}\n"
    return Call(source, values, tensors)


def variant_cases(op, variants: tuple[str, ...] = VARIANTS) -> list[VariantCase]:
    """The (OpInfo, variant) cases of one OpInfo with their calls over its CPU samples."""
    spellings = {v: c for v, c in callees(op).items() if v in variants}
    cases = {v: VariantCase(full_name(op), v, c) for v, c in spellings.items()}
    for dtype in sample_dtypes(op):
        torch.manual_seed(0)
        samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))
        for sample in samples[::-(-len(samples) // MAX_SAMPLES_PER_DTYPE)]:
            args = [sample.input, *sample.args]
            for case in cases.values():
                if case.variant == "inplace" and getattr(sample, "broadcasts_input", False):
                    continue
                try:
                    case.calls.append(make_call(case.callee, args, dict(sample.kwargs)))
                except NotExpressible:
                    case.skipped_samples += 1
    return [case for case in cases.values() if case.calls]


# ----------------------------------------------------------------------------------------------------------------
# generated source -> Python function (with its source visible to inspect, so both compilers can script it)
# ----------------------------------------------------------------------------------------------------------------
_functions: dict[str, Callable] = {}


def python_function(source: str, tag: str) -> Callable:
    """The Python function for a generated source; its source is registered with linecache under a unique name."""
    cached = _functions.get(source)
    if cached is not None:
        return cached
    filename = f"<opdb {re.sub(r'[^A-Za-z0-9_.]', '_', tag)} {len(_functions)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"torch": torch, "math": math, "Tensor": torch.Tensor, "Optional": Optional,
                 "__name__": "opdb_generated"}
    exec(compile(source, filename, "exec"), namespace)
    function = _functions[source] = namespace["the_fn"]
    return function


def partial_on_tensors(function: Callable, call: Call) -> tuple[Callable, tuple]:
    """`function` with its non-tensor values bound, taking only the tensors (what tracing records), and them."""
    names = [f"t{i}" for i in range(len(call.tensor_positions))]
    constants = {f"v{i}": value for i, value in enumerate(call.values)}
    by_position = dict(zip(call.tensor_positions, names))
    actuals = [by_position.get(i, f"v{i}") for i in range(len(call.values))]
    source = f"def the_traced({', '.join(names)}):\n    return the_fn({', '.join(actuals)})\n"
    namespace = {"the_fn": function, "__name__": "opdb_generated", **constants}
    exec(compile(source, "<opdb trace wrapper>", "exec"), namespace)
    return namespace["the_traced"], tuple(call.values[i] for i in call.tensor_positions)
