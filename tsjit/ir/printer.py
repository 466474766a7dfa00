"""Graph text: `print_graph` writes a Graph exactly as PyTorch's `Graph::print` (torch/csrc/jit/ir/ir.cpp).

    graph(%x.1 : Tensor,
          %n.1 : int):
      %5 : bool = prim::Constant[value=1]()
      %x : Tensor = prim::Loop(%n.1, %5, %x.1) # f.py:4:4
        block0(%i.1 : int, %x.23 : Tensor):
          %x.5 : Tensor = aten::add(%x.23, %i.1, %5)
          -> (%5, %x.5)
       = prim::Print(%x)
      return (%x)

The rules, all PyTorch's:
- values print as `%` + debug name (the unique number when unnamed), with ` : ` + `str(type)` where declared;
  graph inputs are separated by `,` + newline + six spaces, everything else by `, `;
- a node is indented two spaces per nesting level; its outputs, then ` = ` even when there are none (so a
  node without outputs starts with ` = `), its kind, `[name=value, ...]` when it has attributes, its inputs;
- blocks follow their node one level deeper as `blockN(inputs):`, their nodes, and `-> (outputs)`;
- a node with a `Subgraph` attribute prints as `prim::FusionGroup_0(...)`, numbered in print order, and its
  graph follows the main one as `with prim::FusionGroup_0 = graph(...)` (recursively, numbered per graph);
- `prim::PythonOp` prints as `^name[attributes](scalar arguments)(inputs)`; tsjit keeps the Python-side name
  and scalar arguments in the attributes `name` (str) and `scalar_args` (list of their printed forms);
- attribute values print as C++ IValue::repr does (see `format_ivalue`), tensors as `tensor_text` shows.
"""

from __future__ import annotations

import enum
from typing import Any

import torch

from tsjit.errors import IRError
from tsjit.ir import types
from tsjit.ir.literals import format_complex, format_double, quote_string
from tsjit.ir.symbols import Symbol, attribute_symbol, prim
from tsjit.ir.tensor_text import format_tensor
from tsjit.ir.types import EnumValue

SUBGRAPH = attribute_symbol("Subgraph")
PYTHON_OP_NAME = attribute_symbol("name")
PYTHON_OP_SCALARS = attribute_symbol("scalar_args")
PYTHON_OP_OBJECT = attribute_symbol("pyobj")  # the Python callable itself: PyTorch never prints it
GRAPH_INPUT_SEPARATOR = ",\n      "
# the Node methods that read and write an attribute of each kind (`is` and `is_` are Python keywords)
ATTRIBUTE_GETTERS = {"i": "i", "f": "f", "c": "c", "s": "s", "t": "t", "g": "g", "ty": "ty", "ival": "ival",
                     "is": "is_", "fs": "fs", "cs": "cs", "ss": "ss", "ts": "ts", "gs": "gs", "tys": "tys"}
ATTRIBUTE_SETTERS = {kind: getter + "_" for kind, getter in ATTRIBUTE_GETTERS.items()}


def print_graph(graph, print_source_locations: bool = False) -> str:
    """The canonical text of `graph`, with `# file:line:col` comments if asked for."""
    return _Printer(print_source_locations, groups=[]).graph(graph)


def print_node(node, print_source_locations: bool = False) -> str:
    """One node (and its blocks) as C++ `operator<<(Node)` prints it: no indentation, subgraphs inline."""
    out: list[str] = []
    _Printer(print_source_locations, groups=None).node(out, node, level=0)
    return "".join(out)


class _Printer:
    """One print of one graph: `groups` collects the subgraph nodes to print after it (None: print inline)."""

    def __init__(self, print_source_locations: bool, groups: list | None):
        self.print_source_locations = print_source_locations
        self.groups = groups

    def graph(self, graph) -> str:
        assert self.groups is not None, "a whole graph prints its subgraph groups after it"
        out = ["graph(", _values_with_types(graph.inputs, GRAPH_INPUT_SEPARATOR), "):\n"]
        for node in graph.nodes():
            self.node(out, node, level=1)
        out.append(f"  return ({_refs(graph.outputs)})\n")
        for index, group in enumerate(self.groups):
            subgraph_text = _Printer(self.print_source_locations, groups=[]).graph(group.g(SUBGRAPH))
            out.append(f"with {group.kind}_{index} = {subgraph_text}")
        return "".join(out)

    def node(self, out: list[str], node, level: int) -> None:
        out.append(_indent(level) + _values_with_types(node.outputs) + " = " + self.head(node))
        out.append(f"({_refs(node.inputs)})")
        if node.scope:
            out.append(f", scope: {node.scope}")
        out.append(self.source_comment(node) + "\n")
        for index, block in enumerate(node.blocks):
            out.append(f"{_indent(level + 1)}block{index}({_values_with_types(block.inputs)}):\n")
            for inner in block.nodes():
                self.node(out, inner, level + 2)
            out.append(f"{_indent(level + 2)}-> ({_refs(block.outputs)})\n")

    def head(self, node) -> str:
        """Everything between ` = ` and the inputs: the kind (or group name) and the attributes."""
        if node.kind is prim.PythonOp:
            return _python_op_head(node)
        if node.has_attribute(SUBGRAPH) and self.groups is not None:
            head = f"{node.kind}_{len(self.groups)}"
            self.groups.append(node)
            if len(node.attribute_names()) > 1 and node.kind is not prim.DifferentiableGraph:
                head += format_attributes(node, skip=(SUBGRAPH,))
            return head
        return str(node.kind) + (format_attributes(node) if node.attribute_names() else "")

    def source_comment(self, node) -> str:
        """` # file:line:col` for nodes whose source range has a file name (as C++ `file_line_col`)."""
        source_range = node.source_range
        if not self.print_source_locations or source_range is None or not source_range.filename:
            return ""
        line, column = source_range.line_col()
        return f" # {source_range.filename}:{line}:{column}"


def _indent(level: int) -> str:
    return "  " * level


def _refs(values) -> str:
    return ", ".join("%" + v.debug_name for v in values)


def _values_with_types(values, separator: str = ", ") -> str:
    return separator.join(f"%{v.debug_name} : {v.type}" for v in values)


def _python_op_head(node) -> str:
    # %2 : Tensor = ^python_side[]()(%x.1)
    # %3 : Float(2, ...) = ^MyFn[inplace=0, module="__main__", Subgraph=<Graph>](2.5)(%x)
    name = node.s(PYTHON_OP_NAME) if node.has_attribute(PYTHON_OP_NAME) else "PythonOp"
    scalars = node.ss(PYTHON_OP_SCALARS) if node.has_attribute(PYTHON_OP_SCALARS) else []
    attributes = format_attributes(node, skip=(PYTHON_OP_NAME, PYTHON_OP_SCALARS, PYTHON_OP_OBJECT))
    return f"^{name}{attributes}({', '.join(scalars)})"


# ------------------------------------------------------------------------------------------------- attributes

def format_attributes(node, skip: tuple[Symbol, ...] = ()) -> str:
    """`[name=value, ...]` in the order the attributes were set."""
    names = [name for name in node.attribute_names() if name not in skip]
    return "[" + ", ".join(f"{name.name}={format_attribute(node, name)}" for name in names) + "]"


def format_attribute(node, name: Symbol) -> str:
    """One attribute value as C++ `Node::printAttrValue` writes it."""
    kind = node.kind_of(name)
    value = getattr(node, ATTRIBUTE_GETTERS[kind])(name)
    if kind == "ival":
        return format_ivalue(value, _static_type_of_value(node, name))
    return _ATTRIBUTE_FORMATTERS[kind](value)


def _static_type_of_value(node, name: Symbol) -> Any:
    """A constant's output type says what its `value` holds (`int[]` for an empty list, for instance)."""
    if node.kind is prim.Constant and name.name == "value" and len(node.outputs) == 1:
        return node.outputs[0].type
    return None


def _format_typed_list(element_type: types.Type) -> Any:
    return lambda values: format_ivalue(list(values), types.ListType(element_type))


_ATTRIBUTE_FORMATTERS = {
    "i": str,
    "f": lambda value: format_double(value),
    "c": lambda value: format_complex(value),
    "s": lambda value: quote_string(value),
    "t": format_tensor,
    "g": lambda value: "<Graph>",
    "is": _format_typed_list(types.IntType.get()),
    "fs": _format_typed_list(types.FloatType.get()),
    "cs": _format_typed_list(types.ComplexType.get()),
    "ss": _format_typed_list(types.StringType.get()),
    "ts": lambda value: "[<Tensors>]",
    "gs": lambda value: "[<Graphs>]",
    "ty": str,
    "tys": lambda value: "[" + ", ".join(str(t) for t in value) + "]",
}


# ------------------------------------------------------------------------------------------------- constants

# --------------------------------------------------------------------------------------------------- ivalues

def format_ivalue(value: Any, static_type: Any = None) -> str:
    """C++ IValue::repr with ir.cpp's tensor formatter; `static_type` is the value's TorchScript type when
    known (it decides list and dict annotations), else it is inferred from the value."""
    for python_type, formatter in _IVALUE_FORMATTERS:
        if isinstance(value, python_type):
            return formatter(value, static_type)
    raise IRError(f"cannot print a constant of Python type {type(value).__name__}")


def _format_list(values: list, static_type: Any) -> str:
    # `[1, 2]`, `annotate(List[int], [])`, `annotate(List[Optional[int]], [1, None])`, `[<Tensors>]`
    element = static_type.elem if isinstance(static_type, types.ListType) else _element_type(values)
    if isinstance(element, types.TensorType):
        return "[<Tensors>]"
    body = "[" + ", ".join(format_ivalue(v, element) for v in values) + "]"
    if values and _inferable_from_members(element):
        return body
    return f"annotate({types.ListType(element).annotation_str()}, {body})"


def _format_dict(items: dict, static_type: Any) -> str:
    # `{"a": 1}`, `annotate(Dict[str, Optional[int]],{"a": None})` (no space after the comma, as in C++)
    dict_type = static_type if isinstance(static_type, types.DictType) else _dict_type(items)
    body = "{" + ", ".join(f"{format_ivalue(k, dict_type.key)}: {format_ivalue(v, dict_type.value)}"
                           for k, v in items.items()) + "}"
    if items and _inferable_from_members(dict_type.value):
        return body
    return f"annotate({dict_type.annotation_str()},{body})"


def _format_tuple(values: tuple, static_type: Any) -> str:
    elements = static_type.elements if isinstance(static_type, types.TupleType) else (None,) * len(values)
    body = ", ".join(format_ivalue(v, t) for v, t in zip(values, elements))
    return f"({body},)" if len(values) == 1 else f"({body})"


def _element_type(values: list) -> types.Type:
    """The element type a list's members imply; Any when there are none or they have no common type."""
    try:
        list_type = types.type_of(values)
    except Exception:  # noqa: BLE001 - type_of reports empty or mixed lists with TsjitError
        return types.AnyType.get()
    return list_type.elem if isinstance(list_type, types.ListType) else types.AnyType.get()


def _dict_type(items: dict) -> types.DictType:
    try:
        dict_type = types.type_of(items)
    except Exception:  # noqa: BLE001 - as above
        dict_type = None
    if isinstance(dict_type, types.DictType):  # what type_of gives every dict it can type
        return dict_type
    return types.DictType(types.StringType.get(), types.AnyType.get())


def _inferable_from_members(element: types.Type) -> bool:
    """c10's elementTypeCanBeInferredFromMembers: unions, optionals, Scalar, interfaces and Any are not."""
    return not isinstance(element, types.UnionType | types.OptionalType | types.NumberType
                          | types.InterfaceType | types.AnyType)


_IVALUE_FORMATTERS: tuple[tuple[Any, Any], ...] = (
    (type(None), lambda value, _: "None"),
    (EnumValue, lambda value, _: f"{value.enum_type.qualified_name}.{value.name}"),
    (enum.Enum, lambda value, _: f"{types.enum_type_of_member(value).qualified_name}.{value.name}"),  # before int
    (bool, lambda value, _: "True" if value else "False"),
    (int, lambda value, _: str(value)),
    (float, lambda value, _: format_double(value)),
    (complex, lambda value, _: format_complex(value)),
    (str, lambda value, _: quote_string(value)),
    (torch.Tensor, lambda value, _: format_tensor(value)),
    (torch.device, lambda value, _: f"torch.device({quote_string(str(value))})"),
    (tuple, _format_tuple),
    (list, _format_list),
    (dict, _format_dict),
)
