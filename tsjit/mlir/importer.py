"""Import a Graph into MLIR's `torch` dialect, node for node (seed: torch-mlir-architecture.md, "The torch dialect").

The torch dialect is almost one to one with the JIT IR, so the importer is a table of rules keyed by node kind
(`_NODE_RULES`) with one default: a node with a schema becomes the op named after its schema,
`aten::add.Tensor` -> `torch.aten.add.Tensor`, or `torch.operator "aten.foo.bar"` when this build of torch-mlir
has no such op. Everything is written in MLIR's generic operation form, which is the same for every op; MLIR
parses it and prints the readable form:

    %y : Tensor = aten::add(%x, %x, %one)    %y = "torch.aten.add.Tensor"(%x, %x, %one)
                                                   : (!torch.vtensor, !torch.vtensor, !torch.int) -> (!torch.vtensor)

Control flow keeps its structure: prim::If becomes `torch.prim.If` with two regions ending in
`torch.prim.If.yield`, prim::Loop becomes `torch.prim.Loop` whose region ends in `torch.prim.Loop.condition`.
Where a value flows into a slot of a wider type (an `int` yielded for an `int?` result, a refined tensor returned
as a plain one), `torch.derefine` or `torch.tensor_static_info_cast` makes the types meet, as torch-mlir's own
importer did.

Tensors are imported with value semantics (`!torch.vtensor`, after tsjit.mlir.prepare removed in-place writes):
torch-mlir's MaximizeValueSemantics cannot carry non-value tensors through prim::If and prim::Loop, while a
functional graph needs no conversion at all. `FunctionSpec(value_semantics=False)` gives the form torch-mlir's
TorchScript importer produced: `!torch.tensor` everywhere and a `torch.type_bound` on annotated arguments.
Module attributes always hold non-value tensors (`!torch.tensor`), so under value semantics a GetAttr of a
tensor is followed by `torch.copy.to_vtensor`.
"""

from __future__ import annotations

import functools
import itertools
import re
import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy
import torch

from tsjit.errors import MLIRError
from tsjit.ir import types as ts
from tsjit.ir.constants import constant_value
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.symbols import Symbol, prim
from tsjit.mlir.types import mlir_dtype, mlir_type

_SIMPLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*|[0-9]+")


@functools.lru_cache(maxsize=1)
def _registry_context():
    """A context with the torch dialect loaded, used to ask which ops this torch-mlir build registers."""
    from torch_mlir import ir  # deferred: optional and slow to import (the mlir extra)
    from torch_mlir.dialects import torch as torch_dialect  # deferred: optional and slow to import (the mlir extra)

    context = ir.Context()
    torch_dialect.register_dialect(context)
    return context


@functools.cache
def is_registered_op(name: str) -> bool:
    """Whether `name` (e.g. `torch.aten.add.Tensor`) is an op of the torch dialect in this build."""
    return _registry_context().is_registered_operation(name)


def schema_op_name(schema) -> str:
    """`aten::add.Tensor` -> `torch.aten.add.Tensor`; the empty overload adds nothing."""
    ns, _, name = schema.name.partition("::")
    overload = f".{schema.overload_name}" if schema.overload_name else ""
    return f"torch.{ns}.{name}{overload}"


# ---- text of the generic form ----------------------------------------------------------------------------------
def mlir_string(text: str) -> str:
    """A quoted MLIR string literal; bytes that are not printable ASCII are written as `\\XX`."""
    out = []
    for byte in text.encode("utf-8"):
        char = chr(byte)
        out.append(char if 32 <= byte < 127 and char not in '"\\' else f"\\{byte:02X}")
    return '"' + "".join(out) + '"'


def f64_attribute(value: float) -> str:
    """A float attribute by bit pattern, exact for every double including nan and inf."""
    return f"0x{struct.unpack('<Q', struct.pack('<d', value))[0]:016X} : f64"


def dense_attribute(tensor: torch.Tensor) -> str:
    """`dense<"0x...">` of a tensor's bytes (little endian; bools take a byte each) with its builtin type."""
    data = tensor.detach().cpu().contiguous()
    dims = "".join(f"{size}x" for size in data.shape)
    payload = _tensor_bytes(data).hex().upper()
    return f'dense<"0x{payload}"> : tensor<{dims}{mlir_dtype(data.dtype)}>'


def _tensor_bytes(tensor: torch.Tensor) -> bytes:
    if tensor.dtype == torch.bfloat16:
        return tensor.view(torch.int16).numpy().tobytes()
    return numpy.ascontiguousarray(tensor.numpy()).tobytes()


def _location(node: Node | None) -> str:
    """`loc("aten::add"("file.py":3:4))`: the node kind names the op in diagnostics, the source says where."""
    if node is None:
        return "loc(unknown)"
    position = _source_position(node.source_range)
    return f"loc({mlir_string(str(node.kind))}{position})"


def _source_position(source_range) -> str:
    if source_range is None or getattr(source_range, "filename", None) is None:
        return ""
    line, column = source_range.start_line_col()
    return f"({mlir_string(source_range.filename)}:{line}:{column})"


class Emitter:
    """Writes operations in MLIR's generic form, one per line, and hands out fresh SSA names."""

    def __init__(self, depth: int = 0):
        self.lines: list[str] = []
        self.depth = depth
        self._temporaries = itertools.count()
        self.location: str = "loc(unknown)"

    def fresh(self) -> str:
        """A name no TorchScript value can have (`$` never appears in debug names)."""
        return f"%$t{next(self._temporaries)}"

    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def op(self, name: str, operands: Sequence[tuple[str, str]] = (), result_types: Sequence[str] = (),
           attributes: str = "", results: Sequence[str] | None = None) -> list[str]:
        """Emit `"name"(operands) {attributes} : (types) -> (types)`; operands are (ssa name, type) pairs."""
        results = list(results) if results is not None else [self.fresh() for _ in result_types]
        self.line(_assignment(results) + _call(name, operands) + _attribute_dict(attributes)
                  + _signature(operands, result_types) + " " + self.location)
        return results

    def op_with_regions(self, name: str, operands: Sequence[tuple[str, str]], result_types: Sequence[str],
                        regions: Sequence[Callable[[], None]], results: Sequence[str]) -> None:
        """Emit an op whose regions are written by the callbacks, each one block, one level deeper."""
        location = self.location
        self.line(_assignment(results) + _call(name, operands) + " ({")
        for i, write_region in enumerate(regions):
            if i:
                self.line("}, {")
            self.depth += 1
            write_region()
            self.depth -= 1
        self.line("})" + _signature(operands, result_types) + " " + location)
        self.location = location

    # ---- constants ---------------------------------------------------------------------------------------------
    def constant(self, value, type_: ts.Type | None, value_semantics: bool) -> tuple[str, str]:
        """Emit the ops producing a Python constant; returns its name and MLIR type."""
        for python_type, op, attribute, result_type in _SCALAR_CONSTANTS:
            if isinstance(value, python_type):
                return self.op(op, (), [result_type], attribute(value))[0], result_type
        if isinstance(value, torch.Tensor):
            return self.tensor_literal(value, value_semantics)
        if isinstance(value, list | tuple):
            return self._container_constant(value, type_, value_semantics)
        if isinstance(value, dict):
            return self._dict_constant(value, type_, value_semantics)
        raise MLIRError(f"constant {value!r} of type {type(value).__name__} has no torch-dialect form")

    def tensor_literal(self, tensor: torch.Tensor, value_semantics: bool) -> tuple[str, str]:
        """`torch.vtensor.literal` (or `torch.tensor.literal`) holding the tensor's data."""
        type_ = mlir_type(ts.TensorType(dtype=tensor.dtype, sizes=tuple(tensor.shape)), value_semantics)
        op = "torch.vtensor.literal" if value_semantics else "torch.tensor.literal"
        return self.op(op, (), [type_], f"value = {dense_attribute(tensor)}")[0], type_

    def _container_constant(self, value, type_: ts.Type | None, value_semantics: bool) -> tuple[str, str]:
        """A list or tuple constant becomes a ListConstruct / TupleConstruct of constants."""
        if type_ is None or isinstance(type_, ts.AnyType):
            type_ = ts.type_of(value)
        is_list = isinstance(type_, ts.ListType)
        element_types = [type_.elem] * len(value) if is_list else list(type_.contained_types())
        elements = [self.constant(v, t, value_semantics) for v, t in zip(value, element_types)]
        result_type = mlir_type(type_, value_semantics)
        op = "torch.prim.ListConstruct" if is_list else "torch.prim.TupleConstruct"
        return self.op(op, elements, [result_type])[0], result_type

    def _dict_constant(self, value: dict, type_: ts.Type | None, value_semantics: bool) -> tuple[str, str]:
        """A dict constant (a module attribute) becomes a DictConstruct of constant keys and values."""
        if not isinstance(type_, ts.DictType):
            type_ = ts.type_of(value)
        keys = [self.constant(k, type_.key, value_semantics) for k in value]
        values = [self.constant(v, type_.value, value_semantics) for v in value.values()]
        result_type = mlir_type(type_, value_semantics)
        return self.op("torch.prim.DictConstruct", keys + values, [result_type],
                       _segment_sizes(len(keys), len(values)))[0], result_type


# Python type, op, its attribute for a value, result type. bool comes before int, since a bool is an int.
_SCALAR_CONSTANTS: tuple[tuple[type, str, Callable[[object], str], str], ...] = (
    (type(None), "torch.constant.none", lambda v: "", "!torch.none"),
    (bool, "torch.constant.bool", lambda v: f"value = {str(v).lower()}", "!torch.bool"),
    (int, "torch.constant.int", lambda v: f"value = {v} : i64", "!torch.int"),
    (float, "torch.constant.float", lambda v: f"value = {f64_attribute(v)}", "!torch.float"),
    (str, "torch.constant.str", lambda v: f"value = {mlir_string(v)}", "!torch.str"),
    (torch.device, "torch.constant.device", lambda v: f"value = {mlir_string(str(v))}", "!torch.Device"),
)


def _segment_sizes(*sizes: int) -> str:
    """The attribute that splits the operands of an op with several variadic operand groups."""
    return f"operandSegmentSizes = array<i32: {', '.join(map(str, sizes))}>"


def _assignment(results: Sequence[str]) -> str:
    return ", ".join(results) + " = " if results else ""


def _call(name: str, operands: Sequence[tuple[str, str]]) -> str:
    return f'"{name}"(' + ", ".join(name for name, _ in operands) + ")"


def _attribute_dict(attributes: str) -> str:
    return f" {{{attributes}}}" if attributes else ""


def _signature(operands: Sequence[tuple[str, str]], result_types: Sequence[str]) -> str:
    return " : (" + ", ".join(t for _, t in operands) + ") -> (" + ", ".join(result_types) + ")"


def is_tensor_type(mlir_type_text: str) -> bool:
    return mlir_type_text.startswith(("!torch.vtensor", "!torch.tensor"))


def _is_value_tensor(mlir_type_text: str) -> bool:
    return mlir_type_text.startswith("!torch.vtensor")


def tuple_elements(tuple_type: str) -> list[str]:
    """`!torch.tuple<vtensor<[2,3],f32>, int>` -> [`!torch.vtensor<[2,3],f32>`, `!torch.int`]."""
    inner = tuple_type[len("!torch.tuple<"):-1]
    elements, depth, start = [], 0, 0
    for i, char in enumerate(inner):
        depth += {"<": 1, "[": 1, "(": 1, ">": -1, "]": -1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            elements.append(inner[start:i].strip())
            start = i + 1
    if inner.strip():
        elements.append(inner[start:].strip())
    return ["!torch." + e for e in elements]


def _non_value(value_tensor_type: str) -> str:
    """`!torch.vtensor<[2],f32>` -> `!torch.tensor<[2],f32>`."""
    return "!torch.tensor" + value_tensor_type[len("!torch.vtensor"):]


def _value_of(tensor_type: str) -> str:
    """`!torch.tensor<[2],f32>` -> `!torch.vtensor<[2],f32>`."""
    return "!torch.vtensor" + tensor_type[len("!torch.tensor"):]


# ---- functions -------------------------------------------------------------------------------------------------
@dataclass
class ClassInfo:
    """What the importer needs to know about a module class: its attributes' declared types and its methods."""

    qualified_name: str
    attributes: dict[str, ts.Type] = field(default_factory=dict)
    methods: dict[str, Graph] = field(default_factory=dict)


@dataclass
class FunctionSpec:
    """How to import one graph as a `func.func`."""

    symbol: str
    value_semantics: bool = True
    private: bool = False
    type_bounds: Mapping[int, str] = field(default_factory=dict)  # input index -> `!torch.vtensor<...>`
    flatten_tuple_return: bool = False


def function_result_types(graph: Graph, spec: FunctionSpec) -> list[str]:
    """The func's result types: the graph output's type, or a returned tuple's elements when flattened."""
    output_type = graph.outputs[0].type
    if spec.flatten_tuple_return and isinstance(output_type, ts.TupleType):
        return [mlir_type(t, spec.value_semantics) for t in output_type.elements]
    return [mlir_type(output_type, spec.value_semantics)]


class FunctionImporter(Emitter):
    """Imports one Graph as a `func.func`: its nodes op for op through `_NODE_RULES`."""

    def __init__(self, graph: Graph, spec: FunctionSpec, classes: Mapping[str, ClassInfo] | None = None):
        super().__init__(depth=1)
        self.graph = graph
        self.spec = spec
        self.classes = classes or {}
        self.values: dict[Value, tuple[str, str]] = {}  # value -> (SSA name, MLIR type)

    def run(self) -> str:
        """The text of the function."""
        arguments = self._arguments()
        self.import_block_nodes(self.graph.block)
        self.emit_return(self.graph.outputs[0])
        visibility = "private " if self.spec.private else ""
        return (f"func.func {visibility}@{mlir_symbol(self.spec.symbol)}({arguments})"
                f" -> ({', '.join(function_result_types(self.graph, self.spec))}) {{\n"
                + "\n".join(self.lines) + "\n}")

    def _arguments(self) -> str:
        arguments = []
        for i, value in enumerate(self.graph.inputs):
            bound = self.spec.type_bounds.get(i)
            attributes = f" {{torch.type_bound = {bound}}}" if bound else ""
            arguments.append(f"{self.define(value)}: {self.type_of(value)}{attributes}")
        return ", ".join(arguments)

    # ---- values ------------------------------------------------------------------------------------------------
    def type_of(self, value: Value) -> str:
        return mlir_type(value.type, self.spec.value_semantics)

    def define(self, value: Value) -> str:
        """Name the op result that is `value`, from its debug name (or its unique number if that won't do)."""
        name = value.debug_name
        name = f"%{name}" if _SIMPLE_NAME.fullmatch(name) else f"%$v{value.unique}"
        self.values[value] = (name, self.type_of(value))
        return name

    def use(self, value: Value) -> tuple[str, str]:
        """The (name, type) operand for a value defined earlier."""
        operand = self.values.get(value)
        if operand is None:
            raise MLIRError(f"%{value.debug_name} is used before it is defined")
        return operand

    def bind(self, value: Value, name: str, type_: str) -> None:
        """Make `value` refer to an op result, converting from `type_` to the value's own type if needed."""
        target = self.type_of(value)
        self.values[value] = (self.coerce((name, type_), target), target)

    def coerce(self, operand: tuple[str, str], target: str) -> str:
        """`operand` as a `target`-typed value: derefine to a wider type, or a tensor static info cast."""
        name, have = operand
        if have == target:
            return name
        if have.startswith("!torch.tuple<") and target.startswith("!torch.tuple<"):
            return self._coerce_tuple(operand, target)
        op = "torch.tensor_static_info_cast" if is_tensor_type(have) and is_tensor_type(target) else "torch.derefine"
        return self.op(op, [operand], [target])[0]

    def _coerce_tuple(self, operand: tuple[str, str], target: str) -> str:
        """A tuple converted element by element (unpack, coerce, construct): `torch.derefine` only widens, and a
        tuple whose elements need both a widening and a tensor cast (a method's `(Tensor, Tensor)` result where
        the caller's type is `(Tensor<[5,2,8]>, Tensor?)`) has no single op."""
        have, want = tuple_elements(operand[1]), tuple_elements(target)
        if len(have) != len(want):
            raise MLIRError(f"cannot convert {operand[1]} to {target}")
        elements = self.op("torch.prim.TupleUnpack", [operand], have)
        converted = [(self.coerce((e, h), w), w) for e, h, w in zip(elements, have, want)]
        return self.op("torch.prim.TupleConstruct", converted, [target])[0]

    def coerce_all(self, values: Iterable[Value], targets: Sequence[str]) -> list[tuple[str, str]]:
        return [(self.coerce(self.use(v), t), t) for v, t in zip(values, targets)]

    # ---- nodes ---------------------------------------------------------------------------------------------
    def import_block_nodes(self, block: Block) -> None:
        for node in block.nodes():
            self.location = _location(node)
            _NODE_RULES.get(node.kind, FunctionImporter.import_schema_op)(self, node)

    def emit_return(self, output: Value) -> None:
        self.location = "loc(unknown)"
        result_types = function_result_types(self.graph, self.spec)
        if len(result_types) == 1 and not (self.spec.flatten_tuple_return
                                           and isinstance(output.type, ts.TupleType)):
            self.op("func.return", self.coerce_all([output], result_types))
            return
        elements = self.op("torch.prim.TupleUnpack", [self.use(output)], result_types)
        self.op("func.return", list(zip(elements, result_types)))

    def import_schema_op(self, node: Node) -> None:
        """The default rule: `torch.<ns>.<name>.<overload>`, or `torch.operator` when not registered."""
        schema = node.maybe_schema()
        if schema is None:
            raise MLIRError(f"cannot import {node.kind}: no schema matches "
                            f"({', '.join(str(v.type) for v in node.inputs)}) and it has no import rule")
        name = schema_op_name(schema)
        if is_registered_op(name):
            self.simple_op(node, name)
        else:
            self.simple_op(node, "torch.operator", f"name = {mlir_string(name[len('torch.'):])}")

    def simple_op(self, node: Node, name: str, attributes: str = "") -> None:
        """An op with the node's inputs as operands and its outputs as results."""
        operands = [self.use(v) for v in node.inputs]
        results = [self.define(v) for v in node.outputs]
        self.op(name, operands, [self.type_of(v) for v in node.outputs], attributes, results)

    def import_constant(self, node: Node) -> None:
        output = node.output()
        name, type_ = self.constant(constant_value(node), output.type, self.spec.value_semantics)
        self.bind(output, name, type_)

    def import_if(self, node: Node) -> None:
        result_types = [self.type_of(v) for v in node.outputs]
        regions = [functools.partial(self._if_region, block, result_types) for block in node.blocks]
        results = [self.define(v) for v in node.outputs]
        self.op_with_regions("torch.prim.If", [self.use(node.input())], result_types, regions, results)

    def _if_region(self, block: Block, result_types: list[str]) -> None:
        self.import_block_nodes(block)
        self.location = "loc(unknown)"
        self.op("torch.prim.If.yield", self.coerce_all(block.outputs, result_types))

    def import_loop(self, node: Node) -> None:
        """`torch.prim.Loop %trip, %cond, init(...)`: the block takes (iteration, carried...) and ends with
        `torch.prim.Loop.condition %continue, iter(carried...)`."""
        carried_types = [mlir_type(_carried_type(node, i), self.spec.value_semantics) for i in range(len(node.outputs))]
        trip_count, condition = (self.use(v) for v in node.inputs[:2])
        operands = [trip_count, condition, *self.coerce_all(node.inputs[2:], carried_types)]
        results = [self.fresh() for _ in node.outputs]
        region = functools.partial(self._loop_region, node.blocks[0], carried_types)
        self.op_with_regions("torch.prim.Loop", operands, carried_types, [region], results)
        for value, name, type_ in zip(node.outputs, results, carried_types):
            self.bind(value, name, type_)

    def _loop_region(self, block: Block, carried_types: list[str]) -> None:
        """The block arguments take the carried types; a block input typed differently gets a conversion."""
        names = [self.fresh() for _ in block.inputs]
        types = ["!torch.int", *carried_types]
        self.depth -= 1
        self.line("^bb0(" + ", ".join(f"{n}: {t}" for n, t in zip(names, types)) + "):")
        self.depth += 1
        for value, name, type_ in zip(block.inputs, names, types):
            self.bind(value, name, type_)
        self.import_block_nodes(block)
        self.location = "loc(unknown)"
        condition = self.use(block.outputs[0])
        self.op("torch.prim.Loop.condition", [condition, *self.coerce_all(block.outputs[1:], carried_types)])

    def import_list_construct(self, node: Node) -> None:
        """Elements are derefined to the element type where it is wider (`int` into `int?[]`); tensors are
        passed as they are, so that torch-mlir still sees their shapes through the list."""
        element_type = mlir_type(node.output().type.elem, self.spec.value_semantics)
        operands = [self.use(v) for v in node.inputs]
        operands = [o if is_tensor_type(o[1]) else (self.coerce(o, element_type), element_type) for o in operands]
        self.op("torch.prim.ListConstruct", operands, [self.type_of(node.output())],
                results=[self.define(node.output())])

    def import_tuple_construct(self, node: Node) -> None:
        element_types = [mlir_type(t, self.spec.value_semantics) for t in node.output().type.elements]
        operands = self.coerce_all(node.inputs, element_types)
        self.op("torch.prim.TupleConstruct", operands, [self.type_of(node.output())],
                results=[self.define(node.output())])

    def import_dict_construct(self, node: Node) -> None:
        """The JIT interleaves keys and values (k0, v0, k1, v1); the op takes all keys, then all values."""
        inputs = [self.use(v) for v in node.inputs]
        keys, values = inputs[0::2], inputs[1::2]
        self.op("torch.prim.DictConstruct", keys + values, [self.type_of(node.output())],
                _segment_sizes(len(keys), len(values)), results=[self.define(node.output())])

    # ---- objects -----------------------------------------------------------------------------------------------
    def _declared_attribute_type(self, node: Node) -> str:
        """The attribute's type as its class declares it (tensors are non-value there)."""
        class_name = node.input(0).type.qualified_name
        info = self.classes.get(class_name)
        if info is None or node.s("name") not in info.attributes:
            raise MLIRError(f"{node.kind}: class {class_name} has no attribute {node.s('name')!r} in the "
                            f"object graph")
        return mlir_type(info.attributes[node.s("name")], value_semantics=False)

    def import_get_attr(self, node: Node) -> None:
        declared = self._declared_attribute_type(node)
        attribute = f"name = {mlir_string(node.s('name'))}"
        name = self.op("torch.prim.GetAttr", [self.use(node.input())], [declared], attribute)[0]
        target = self.type_of(node.output())
        if _is_value_tensor(target) and not _is_value_tensor(declared):
            name = self.op("torch.copy.to_vtensor", [self._refined_as(name, declared, target)], [target])[0]
            declared = target
        elif target.startswith("!torch.optional<vtensor") and declared.startswith("!torch.tensor"):
            # a tensor slot read as `Optional[Tensor]` (tsjit.mlir.script_objects declares an optional attribute
            # by the tensor it holds): copied to a value tensor, which `bind` then derefines to the optional
            value_type = _value_of(declared)
            name = self.op("torch.copy.to_vtensor", [(name, declared)], [value_type])[0]
            declared = value_type
        self.bind(node.output(), name, declared)

    def _refined_as(self, name: str, have: str, value_type: str) -> tuple[str, str]:
        """A non-value tensor cast to the static information of a value tensor type (or the reverse)."""
        target = _non_value(value_type) if _is_value_tensor(value_type) else value_type
        return self.coerce((name, have), target), target

    def import_set_attr(self, node: Node) -> None:
        """A value tensor stored into an attribute is copied to a non-value tensor first."""
        declared = self._declared_attribute_type(node)
        name, type_ = self.use(node.input(1))
        if _is_value_tensor(type_) and not _is_value_tensor(declared):
            type_ = _non_value(type_)
            name = self.op("torch.copy.to_tensor", [(name, _value_of(type_))], [type_])[0]
        operands = [self.use(node.input(0)), (self.coerce((name, type_), declared), declared)]
        self.op("torch.prim.SetAttr", operands, [], f"name = {mlir_string(node.s('name'))}")

    def import_call_method(self, node: Node) -> None:
        """Arguments are converted to the callee's parameter types, the result back to the node's type."""
        callee = self._callee(node)
        spec = FunctionSpec(method_symbol(node.input(0).type.qualified_name, node.s("name")),
                            self.spec.value_semantics)
        parameter_types = [mlir_type(v.type, spec.value_semantics) for v in callee.inputs]
        operands = [self.use(node.input(0)), *self.coerce_all(node.inputs[1:], parameter_types[1:])]
        result_types = function_result_types(callee, spec)
        result = self.op("torch.prim.CallMethod", operands, result_types, f"name = {mlir_string(node.s('name'))}")
        self.bind(node.output(), result[0], result_types[0])

    def _callee(self, node: Node) -> Graph:
        class_name, method = node.input(0).type.qualified_name, node.s("name")
        info = self.classes.get(class_name)
        if info is None or method not in info.methods:
            raise MLIRError(f"prim::CallMethod: class {class_name} has no method {method!r} in the object graph")
        return info.methods[method]

    def import_unchecked_cast(self, node: Node) -> None:
        """`prim::unchecked_cast` of a value that already has a tensor type (shape refinement saw through the
        Optional) is a static info cast: torch-mlir's op wants its result to be a subtype of its operand, and a
        plain `!torch.vtensor` is not one of a refined tensor. A cast to a wider type (`float` to `number`, once
        refinement typed the value `float`) is a `torch.derefine`, which `bind` makes: torch-mlir's op only narrows."""
        operand = self.use(node.input())
        widens = node.input().type.is_subtype_of(node.output().type)
        if widens or (is_tensor_type(operand[1]) and is_tensor_type(self.type_of(node.output()))):
            self.bind(node.output(), *operand)
        else:
            self.simple_op(node, "torch.prim.unchecked_cast")

    def import_raise(self, node: Node) -> None:
        """`torch.prim.RaiseException` always takes the message and the (optional) exception class."""
        operands = [self.use(v) for v in node.inputs]
        if len(operands) == 1:
            operands.append(self.constant(None, None, self.spec.value_semantics))
        self.op("torch.prim.RaiseException", operands)

    def import_unsupported(self, node: Node) -> None:
        raise MLIRError(f"cannot import {node.kind}: {_UNSUPPORTED[node.kind]}")


_UNSUPPORTED = {
    prim.CallFunction: "function calls must be inlined first (TorchScript inlines them when compiling)",
    prim.fork: "fork/wait has no torch-dialect form",
    prim.isinstance: "isinstance checks must be resolved from static types first",
    prim.TypeCheck: "optimized (profiled) graphs are not imported; import the graph before optimization",
    prim.TensorExprGroup: "fusion groups are not imported; import the graph before optimization",
    prim.profile: "profiled graphs are not imported; import the graph before profiling",
}


def mlir_symbol(name: str) -> str:
    """A symbol name, quoted when it is not a bare identifier (`@"__torch__.M.forward"` parses either way)."""
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", name) else mlir_string(name)


def method_symbol(class_name: str, method: str) -> str:
    """The func of a method, named as torch-mlir's importer named it: `__torch__.M.forward`."""
    return f"{class_name}.{method}"


def _unpack_rule(op: str) -> Callable[[FunctionImporter, Node], None]:
    return lambda importer, node: importer.simple_op(node, op)



def _carried_type(loop: Node, i: int) -> ts.Type:
    """The type of a loop's i-th carried value in every iteration: refinement may type the value entering the
    loop, the body's and the result differently (`w = w.unsqueeze(-1)` in the body: Float(3) in, Float(3, 1)
    out), and sizes and ranks they do not share are unknown (a cast between the two would not verify)."""
    block = loop.blocks[0]
    types = [loop.outputs[i].type, loop.inputs[2 + i].type, block.inputs[1 + i].type, block.outputs[1 + i].type]
    if not all(isinstance(t, ts.TensorType) for t in types):
        return types[0]
    return functools.reduce(ts.TensorType.merge, types)

_NODE_RULES: dict[Symbol, Callable[[FunctionImporter, Node], None]] = {
    prim.Constant: FunctionImporter.import_constant,
    prim.If: FunctionImporter.import_if,
    prim.Loop: FunctionImporter.import_loop,
    prim.ListConstruct: FunctionImporter.import_list_construct,
    prim.TupleConstruct: FunctionImporter.import_tuple_construct,
    prim.DictConstruct: FunctionImporter.import_dict_construct,
    prim.ListUnpack: _unpack_rule("torch.prim.ListUnpack"),
    prim.TupleUnpack: _unpack_rule("torch.prim.TupleUnpack"),
    prim.Uninitialized: _unpack_rule("torch.prim.Uninitialized"),
    prim.GetAttr: FunctionImporter.import_get_attr,
    prim.SetAttr: FunctionImporter.import_set_attr,
    prim.CallMethod: FunctionImporter.import_call_method,
    prim.RaiseException: FunctionImporter.import_raise,
    prim.unchecked_cast: FunctionImporter.import_unchecked_cast,
    **{kind: FunctionImporter.import_unsupported for kind in _UNSUPPORTED},
}


def import_function(graph: Graph, spec: FunctionSpec, classes: Mapping[str, ClassInfo] | None = None) -> str:
    """The `func.func` text of a graph."""
    return FunctionImporter(graph, spec, classes).run()
