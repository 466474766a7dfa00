"""`compile`: a TorchScript program through torch-mlir's pipelines to the torch backend contract and a backend.

    prepare (tsjit)  ->  import (tsjit)  ->  frontend pipeline (torch-mlir)  ->  backend pipeline (torch-mlir)

The frontend pipeline is `torchscript-module-to-torch-backend-pipeline` for an object graph (it globalizes the
module hierarchy, inlines the methods and then lowers to the backend contract) and
`torch-function-to-torch-backend-pipeline` for a function. Its result is the "backend contract" (seed:
torch-mlir-architecture.md): value-semantic tensors of known rank and dtype only, which is `output_type="torch"`.
The backend pipelines `torch-backend-to-{linalg-on-tensors,tosa,stablehlo}-backend-pipeline` end by verifying
their own contracts. When a pipeline fails, the MLIRError names the op that blocks it, the TorchScript node it
came from (every imported op is located at its node kind and source position) and torch-mlir's reason.
"""

from __future__ import annotations

import dataclasses
import io
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from tsjit import progress
from tsjit.errors import MLIRError
from tsjit.ir import types as ts
from tsjit.ir.graph import Graph
from tsjit.mlir.comparisons import compare_with_tensor_literals, walk_operations
from tsjit.mlir.importer import FunctionSpec, import_function
from tsjit.mlir.objects import as_module_value, import_object_graph
from tsjit.mlir.prepare import (
    BACKENDS_WITH_ASSERTS,
    BACKENDS_WITHOUT_CONTROL_FLOW,
    Options,
    PreparedProgram,
    prepare_function,
    prepare_module,
)
from tsjit.mlir.script_objects import inline_function_calls, is_script_module, script_module_value
from tsjit.mlir.types import Default, TensorAnnotation, tensor_type

OUTPUT_TYPES = ("torch", "linalg-on-tensors", "tosa", "stablehlo")
_MODULE_PIPELINE = "torchscript-module-to-torch-backend-pipeline"
_FUNCTION_PIPELINE = "torch-function-to-torch-backend-pipeline"


@dataclass(eq=False)
class LoweredModule:
    """The compiled MLIR module and what a caller needs to run it: the entry function's name, the program's
    (flattened) argument types, its TorchScript result type, the (flattened) arguments it writes in place,
    whose new values it returns after its result (tsjit/mlir/prepare.py, `return_written_inputs`), and the
    lengths of the result's lists, returned as their elements (`unpack_list_result`)."""

    module: object  # torch_mlir.ir.Module; its Context is kept alive with it
    output_type: str
    entry: str
    input_types: list[ts.Type]
    result_type: ts.Type
    written_inputs: tuple[int, ...] = ()
    list_lengths: tuple[int, ...] = ()  # the lengths of the result's lists, which come back as their elements

    def __str__(self) -> str:
        return str(self.module)

    def generic_text(self) -> str:
        """The module in MLIR's generic op form: readable by MLIR builds whose custom syntax differs (IREE)."""
        buffer = io.StringIO()
        self.module.operation.print(file=buffer, print_generic_op_form=True)
        return buffer.getvalue()


def compile(target, example_args_or_annotations: Sequence = (), output_type: str = "torch",
            method: str = "forward", *, checks: bool | None = None, unroll: bool | None = None,
            value_semantics: bool | None = None) -> LoweredModule:
    """Lower a program to `output_type` ("torch", "linalg-on-tensors", "tosa" or "stablehlo").

    `target` is a Graph, anything with a `.graph` (a script function), or a module (a ModuleValue, anything
    with `to_module_value()`, or a tsjit ScriptModule, see tsjit.mlir.script_objects), whose `method` is
    compiled. Each argument (after `self`) is described by an
    example value or an annotation: a tensor or `(sizes, dtype)` with -1 for a dynamic size, as torch-mlir's
    annotate_args took them, a tuple of those for a tuple argument, and None or an example scalar otherwise.
    `checks` keeps asserts as runtime checks (default: where the backend lowers them) and `unroll` removes
    static control flow (default: for backends without control flow), see tsjit.mlir.prepare; so does
    `value_semantics`.
    """
    if output_type not in OUTPUT_TYPES:
        raise MLIRError(f"unknown output_type {output_type!r}; expected one of {', '.join(OUTPUT_TYPES)}")
    options = Options(output_type in BACKENDS_WITH_ASSERTS if checks is None else checks, value_semantics,
                      output_type in BACKENDS_WITHOUT_CONTROL_FLOW if unroll is None else unroll)
    stages = 3 if output_type == "torch" else 4
    with progress.bar(f"lowering to {output_type}", stages, unit="stage") as bar:
        bar.stage("preparing the graph")
        program = _prepare(target, example_args_or_annotations, options, method)
        bar.stage("importing into the torch dialect")
        context, module = parse_module(import_program(program, method))
        bar.stage("torch-mlir: the torch backend contract")
        with context:
            run_pipeline(module, _MODULE_PIPELINE if program.module else _FUNCTION_PIPELINE,
                         "the torch backend contract")
        inputs = [v.type for v in program.graph.inputs[1 if program.module else 0:]]
        lowered = LoweredModule(module, "torch", method, inputs, program.result_type or program.graph.outputs[0].type,
                                program.written_inputs, program.list_lengths)
        if output_type == "torch":
            return lowered
        bar.stage(f"torch-mlir: {output_type}")
        return lower(lowered, output_type)


def lower(lowered: LoweredModule, output_type: str) -> LoweredModule:
    """A torch-backend-contract module lowered to a backend; `lowered` itself is left as it is."""
    from torch_mlir import ir  # deferred: optional and slow to import (the mlir extra)

    if lowered.output_type != "torch" or output_type not in OUTPUT_TYPES:
        raise MLIRError(f"cannot lower a {lowered.output_type} module to {output_type}")
    with lowered.module.context:
        module = ir.Module.parse(lowered.module.operation.get_asm(enable_debug_info=True))
        if output_type == "tosa":
            compare_with_tensor_literals(module)  # (tsjit/mlir/comparisons.py: TOSA would compare in f64)
        if output_type != "torch":
            run_pipeline(module, f"torch-backend-to-{output_type}-backend-pipeline", output_type)
    return dataclasses.replace(lowered, module=module, output_type=output_type)


def _prepare(target, examples: Sequence, options: Options, method: str) -> PreparedProgram:
    examples = with_defaults(target, method, examples)
    module = as_module_value(target)
    if module is not None:
        return prepare_module(module, method, examples, options)
    if is_script_module(target):  # (its ModuleValue holds fresh copies of the methods: they are not copied again)
        return prepare_module(script_module_value(target, method), method, examples, options, copy=False)
    graph = target if isinstance(target, Graph) else getattr(target, "graph", None)
    if not isinstance(graph, Graph):
        raise MLIRError(f"cannot compile a {type(target).__name__}: give a Graph, a script function or a module")
    if graph is target:
        return prepare_function(graph, examples, options)
    # a script function's graph calls the functions it uses (prim::CallFunction): inlined into a copy
    return prepare_function(inline_function_calls(graph), examples, options, copy=False)


def with_defaults(target, method: str, examples: Sequence) -> list:
    """The examples, followed by a Default for each argument the call leaves out that declares one (read from
    the schema of a script function or a ScriptModule's method; a bare Graph or ModuleValue has none)."""
    function = getattr(target, method, None) if is_script_module(target) else target
    schema = getattr(function, "schema", None)
    if schema is None or not hasattr(schema, "arguments"):
        return list(examples)
    left_out = [a for a in schema.arguments if a.name != "self"][len(examples):]
    return list(examples) + [Default(a.default_value) for a in itertools.takewhile(lambda a: a.has_default, left_out)]


def import_program(program: PreparedProgram, method: str = "forward") -> str:
    """The torch-dialect text of a prepared program. Under value semantics annotated arguments carry their
    type; otherwise they stay `!torch.tensor` with a `torch.type_bound`, as torch-mlir's annotate_args did."""
    offset = 1 if program.module else 0
    bounds = {} if program.value_semantics else {
        i: _bound(a) for i, a in enumerate(program.annotations) if a is not None}
    if program.module is not None:
        bounds = {i: b for i, b in bounds.items() if i >= offset}
        return import_object_graph(program.module, [method], program.value_semantics, bounds)
    spec = FunctionSpec(method, program.value_semantics, type_bounds=bounds, flatten_tuple_return=True)
    return import_function(program.graph, spec)


def _bound(annotation: TensorAnnotation) -> str:
    return tensor_type([None if s == -1 else s for s in annotation.sizes], annotation.dtype, value_semantics=True)


# ---- torch-mlir --------------------------------------------------------------------------------------------
def parse_module(text: str):
    """A fresh Context with the torch dialect, and `text` parsed (and verified) in it."""
    from torch_mlir import ir  # deferred: optional and slow to import (the mlir extra)
    from torch_mlir.dialects import torch as torch_dialect  # deferred: optional and slow to import (the mlir extra)

    context = ir.Context()
    torch_dialect.register_dialect(context)
    try:
        with context:
            return context, ir.Module.parse(text)
    except ir.MLIRError as error:
        raise MLIRError("the imported torch-dialect module does not verify:\n" + describe_failure(error)) from None


def run_pipeline(module, pipeline: str, goal: str) -> None:
    """Run one torch-mlir pass pipeline in place; a failure says which op blocked reaching `goal`."""
    from torch_mlir import ir, passmanager  # deferred: optional and slow to import (the mlir extra)

    before = module.operation.get_asm(enable_debug_info=True)
    try:
        passmanager.PassManager.parse(f"builtin.module({pipeline})").run(module.operation)
    except ir.MLIRError as error:
        left = _unconverted_torch_ops(module)
        remaining = f"\n  torch ops left unconverted: {', '.join(left)}" if left else ""
        in_pass = failing_pass(before, pipeline)
        where = f"{pipeline}, in pass {in_pass}" if in_pass else pipeline
        raise MLIRError(f"lowering to {goal} failed ({where}):\n{describe_failure(error)}{remaining}") from None


def failing_pass(text: str, pipeline: str) -> str | None:
    """The pass of `pipeline` that fails on the module `text`: the pipeline's passes run one at a time on a copy
    (a failure report then names the torch-mlir pass, not only the pipeline that contains it)."""
    from torch_mlir import ir, passmanager  # deferred: optional and slow to import (the mlir extra)

    module = ir.Module.parse(text)
    for step in pipeline_passes(str(passmanager.PassManager.parse(f"builtin.module({pipeline})"))):
        try:
            manager = passmanager.PassManager.parse(f"builtin.module({step})")
        except ValueError:  # registered only inside its pipeline (StableHLO's chlo-legalize-to-stablehlo): skipped
            continue
        try:
            manager.run(module.operation)
        except ir.MLIRError:
            return re.sub(r"\{.*\}|^func\.func\(|\)$", "", step)
    return None


def pipeline_passes(expanded: str) -> list[str]:
    """The top-level passes of an expanded pipeline, `builtin.module(a,func.func(b{x=1,y=2}),c)` ->
    [`a`, `func.func(b{x=1,y=2})`, `c`]."""
    inner = expanded[expanded.index("(") + 1:expanded.rindex(")")]
    steps, depth, start = [], 0, 0
    for i, char in enumerate(inner):
        depth += char in "({"
        depth -= char in ")}"
        if char == "," and depth == 0:
            steps.append(inner[start:i])
            start = i + 1
    return [*steps, inner[start:]]


_OP_IN_NOTE = re.compile(r'"([a-z_]+\.[\w.]+)"\(')
_OP_IN_MESSAGE = re.compile(r"'([a-z_]+\.[\w.]+)'")


def describe_failure(error) -> str:
    """One line per error diagnostic: the blocking op, the TorchScript node it came from, the reason."""
    lines = []
    for diagnostic in error.error_diagnostics:
        notes = " ".join(n.message for n in diagnostic.notes)
        op = _first_match(_OP_IN_MESSAGE, diagnostic.message) or _first_match(_OP_IN_NOTE, notes)
        blocked = f"blocked by {op}" if op else "error"
        lines.append(f"  {blocked} (from {_node_of(diagnostic.location)}): {diagnostic.message.splitlines()[0]}")
    return "\n".join(lines) or f"  {error}"


def _unconverted_torch_ops(module) -> list[str]:
    """The torch-dialect ops (other than constants) a failed conversion left, with their TorchScript nodes: the
    first diagnostic often names only a constant whose user could not be converted."""
    found: dict[str, None] = {}
    for op in walk_operations(module.operation):
        name = op.operation.name
        if name.startswith("torch.") and not name.startswith(("torch.constant.", "torch_c.")) and \
                not name.endswith((".yield", ".condition")):
            found[f"{name} (from {_node_of(op.location)})"] = None
    return list(found)


def _first_match(pattern: re.Pattern, text: str) -> str | None:
    match = pattern.search(text)
    return match.group(1) if match else None


def _node_of(location) -> str:
    """The TorchScript node kind (and source position) the importer put into an op's location."""
    match = re.search(r'"([a-z_]+::[^"]*)"(\("[^"]*":\d+:\d+\))?', str(location))
    if match is None:
        return "no TorchScript node"
    position = (match.group(2) or "").strip("()")
    return match.group(1) + (f" at {position}" if position else "")
