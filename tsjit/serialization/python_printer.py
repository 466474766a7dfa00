"""The Python printer: Graphs, functions and classes as TorchScript source (torch's python_print.cpp).

The printed source is both what `.code` shows and the serialization format of archives: the frontend compiles
it back into an equivalent graph. For

    graph(%x.1 : Tensor, %n.1 : int):
      %5 : bool = prim::Constant[value=1]()
      %y : Tensor = prim::Loop(%n.1, %5, %x.1)
        block0(%i.1 : int, %y.11 : Tensor):
          %y.3 : Tensor = aten::add(%y.11, %i.1, %10)
          -> (%5, %y.3)
      return (%y)

it prints

    def f(x: Tensor,
        n: int) -> Tensor:
      y = x
      for i in range(n):
        y = torch.add(y, i)
      return y

The rules are torch's, so that `.code` and archives match torch.jit's byte for byte:

- aten ops are `torch.<op>(...)`, other namespaces `ops.<ns>.<op>(...)`; trailing arguments equal to their
  schema defaults are dropped and keyword-only arguments are written as keywords;
- a node pinned to an overload that its input types would not pick (tsjit.ops.matching.pin_overload) is
  `ops.<ns>.<op>.<overload>(...)` (`.default` for the empty overload name), which tsjit loads as exactly that
  overload. torch.jit cannot load such a call: it has no spelling for an overload that matching would not pick
  (`torch.add(2, 3)` always calls `aten::add.int`). Every other node keeps torch's spelling, which matching
  reads back as the node's own overload, so archives without pinned nodes load in torch.jit;
- a value is inlined into its single use when it is unnamed (or returned), single-output, without blocks, and
  would be evaluated in the same order when the expression is parsed again (see `scan_node`); constants are
  always inlined, except long ones; lines whose inlined expression gets long (40 columns) are split again;
- values get names from their debug names (`x.3` -> `x`, uniqued as `x0`, `x1`...) or `_0`, `_1`...;
- loops become `for i in range(n):` or `while c:` with loop-carried values assigned before and at the end of
  the body; ifs assign their outputs at the end of each branch;
- tensors, objects and strings with non-ASCII characters are `CONSTANTS.c<i>`, entries of a constant table
  the archive writer pickles into constants.pkl;
- named types (classes, named tuples, enums, interfaces, functions) a function uses are collected in a
  DependencyTable, so that the archive writer prints them too.
"""

from __future__ import annotations

from typing import Any

import torch

from tsjit.errors import SerializationError
from tsjit.ir import types as T
from tsjit.ir.constants import INT64_MAX, constant_value
from tsjit.ir.literals import quote_string
from tsjit.ir.schema import Argument, FunctionSchema
from tsjit.ir.symbols import Symbol, aten, attr, prim
from tsjit.ops.matching import pinned_overload
from tsjit.ops.registry import DEFAULT_OVERLOAD
from tsjit.serialization.constant_printer import (
    element_type_inferable,
    format_constant,
    goes_to_constant_table,
    same_tensor,
)

# names that are valid identifiers but mean something else when the printed code is read back
RESERVED_NAMES = frozenset({
    "_", "as", "aten", "attribute", "CONSTANTS", "fork", "getattr", "inf", "nan", "infj", "nanj", "ops",
    "__torch__", "and", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif", "else",
    "except", "False", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "None",
    "nonlocal", "not", "or", "pass", "raise", "return", "True", "try", "while", "with", "yield",
    "uninitialized", "unchecked_cast",
})

# the oldest archive version that runs each operator as it behaves today (the `version` record must be at
# least this); below it, loaders apply the operator's upgrader (torch._C._get_operator_version_map())
OPERATOR_VERSIONS: dict[str, int] = {
    **dict.fromkeys(["aten::div.Tensor", "aten::div.Scalar", "aten::div.out", "aten::div.Tensor_mode",
                     "aten::div.Scalar_mode", "aten::div.out_mode", "aten::div_.Tensor", "aten::div_.Scalar",
                     "aten::div_.Tensor_mode", "aten::div_.Scalar_mode"], 4),
    "aten::full": 5, "aten::full.out": 5, "aten::linspace": 8, "aten::linspace.out": 8, "aten::logspace": 9,
    "aten::logspace.out": 9, "aten::gelu": 10, "aten::gelu.out": 10,
}
MIN_PRODUCED_VERSION = 3

_OVERRIDDEN_OP_NAMES = {aten.backward: "torch.autograd.backward", aten.grad: "torch.autograd.grad"}
_CAST_FUNCTIONS = {aten.Int: "int", aten.Float: "float", aten.Bool: "bool", aten.str: "str",
                   prim.Print: "print", aten.sorted: "sorted"}
_IMPLICIT_CASTS = frozenset({aten.ScalarImplicit, aten.FloatImplicit, aten.IntImplicit})
_FORK_KINDS = frozenset({prim.fork, prim.rpc_async, prim.rpc_sync, prim.rpc_remote})
LONG_LINE = 40


class DependencyTable:
    """The named types printed code refers to, in order of first use, each once."""

    def __init__(self):
        self.types: list[Any] = []

    def add(self, named_type: Any) -> None:
        if not any(_same_named_type(named_type, known) for known in self.types):
            self.types.append(named_type)

    def add_contained(self, type_: T.Type) -> None:
        """Register every named type inside `type_` (List[__torch__.M] depends on __torch__.M)."""
        if isinstance(type_, T.ClassType | T.InterfaceType | T.EnumType):
            self.add(type_)
        elif isinstance(type_, T.TupleType) and type_.qualified_name is not None:
            self.add(type_)
        for contained in type_.contained_types():
            self.add_contained(contained)

    def __len__(self) -> int:
        return len(self.types)

    def __getitem__(self, index: int) -> Any:
        return self.types[index]


def _same_named_type(a: Any, b: Any) -> bool:
    if isinstance(a, T.FunctionType) and isinstance(b, T.FunctionType):
        return a.function is b.function
    return a is b or (isinstance(a, T.TupleType) and a == b)


class PythonPrinter:
    """Prints functions and methods into one source text (`.code`; NamedTypePrinter adds whole classes).

    `constant_table` collects the values printed as `CONSTANTS.c<i>` and `deps` the named types used; both
    may be shared between printers (the archive writer shares them between all files). With
    `enforce_importable`, constructs that cannot be read back (Python ops, closures) are errors.
    `type_names` spells named types and functions with other names where it gives one (the archive writer's
    unique names, see serializer.TypeNameUniquer).
    """

    def __init__(self, constant_table: list | None = None, deps: DependencyTable | None = None,
                 enforce_importable: bool = False, type_names: T.TypePrinter | None = None):
        self.out: list[str] = []
        self.level = 0
        self.constant_table = constant_table if constant_table is not None else []
        self.deps = deps if deps is not None else DependencyTable()
        self.enforce_importable = enforce_importable
        self.type_names = type_names
        self.min_version = 0
        self.next_id: dict[str, int] = {}
        self.used_names: set[str] = set()
        self.expr_table: dict[Any, str] = {}
        self.ident_refs: dict[Any, str] = {}
        self.output_inline: set[Any] = set()
        self.annotated_unions: set[Any] = set()
        self.seen_constants: set[Any] = set()
        self.visited_split_uses: dict[Any, int] = {}

    def text(self) -> str:
        return "".join(self.out)

    # ---- names ---------------------------------------------------------------------------------------------
    def gen_name(self, candidate: str) -> str:
        """A name not used in this function and not reserved: `x`, then `x0`, `x1`... (torch's genNameImpl)."""
        name = candidate
        while name in self.used_names or name in RESERVED_NAMES:
            number = self.next_id.get(name, 0)
            self.next_id[name] = number + 1
            name = f"{candidate}{number}"
        self.used_names.add(name)
        return name

    def gen_unique_name_for(self, value) -> str:
        return self.gen_name(make_valid_identifier(debug_name_base(value)) if value.has_debug_name() else "_")

    def use_of(self, value) -> str:
        """How `value` is written where it is used: its assigned name, or its inlined expression."""
        if value in self.ident_refs:
            return self.ident_refs[value]
        if value in self.expr_table:
            return self.expr_table[value]
        raise SerializationError(f"the Python printer reached a use of %{value.debug_name} before its "
                                 "definition")

    def assign_names(self, values) -> None:
        for value in values:
            self.ident_refs[value] = self.gen_unique_name_for(value)

    def alias(self, value, other) -> None:
        """`value` is written like `other` (block inputs of loops share the loop outputs' names); as in torch,
        the alias is an expression, so it is never the first, annotated assignment of a variable."""
        self.expr_table[value] = self.use_of(other)

    def value_list(self, values) -> str:
        return ", ".join(self.use_of(v) for v in values)

    # ---- emitting text -------------------------------------------------------------------------------------
    def indent(self) -> None:
        self.out.append("  " * self.level)

    def write(self, *parts: str) -> None:
        self.out.extend(parts)

    def line(self, text: str) -> None:
        self.indent()
        self.out.append(text + "\n")

    # ---- which values are inlined --------------------------------------------------------------------------
    def can_inline(self, value) -> bool:
        """Whether `value` may be printed as an expression inside its use instead of being assigned."""
        node = value.node
        if len(node.outputs) != 1 or len(value.uses) != 1 or node.blocks:
            return False
        user, offset = value.uses[0]
        # a named value keeps its name, unless it is only returned
        if value.has_debug_name() and user.kind is not prim.Return:
            return False
        # loop-carried inputs need a variable, or the trip count and condition would be evaluated after them;
        # forked subgraphs may use a value several times; isinstance already refined the types it tests
        if (user.kind is prim.Loop and offset >= 2) or user.kind in _FORK_KINDS:
            return False
        return node.kind is not prim.isinstance

    def scan_value(self, block_point, value):
        """Inline `value` if its node is the next one expected by a reverse tree walk (see scan_node)."""
        node = value.node
        if node is block_point and self.can_inline(value):
            block_point = self.scan_node(block_point)
            self.output_inline.add(node)
        elif node.kind is prim.Constant:
            self.output_inline.add(node)
        return block_point

    def scan_node(self, node):
        """Parsing an expression emits its operands left to right, then the operation. Walking a node's inputs
        right to left while walking the emitted nodes backwards finds the inputs that line up with that
        order; those can be printed inline."""
        if node in self.output_inline:
            return node
        for block in node.blocks:
            self.scan_block(block)
        block_point = _previous_non_constant(node)
        for value in reversed(node.inputs):
            block_point = self.scan_value(block_point, value)
        return block_point

    def scan_block(self, block) -> None:
        self.scan_node(block.return_node)
        for node in block.reverse_nodes():
            self.scan_node(node)

    # ---- long lines ----------------------------------------------------------------------------------------
    def is_long_line(self, text: str) -> bool:
        return len(text) + self.level * 2 >= LONG_LINE

    def is_non_constant_inline(self, value) -> bool:
        return value.node.kind is not prim.Constant and value.node in self.output_inline

    def split_long_inlines(self, value) -> None:
        """Assign a long inlined expression to a variable, and with it every inlined operand evaluated before
        it in the same statement, so that the evaluation order stays the same:

            r = foo(x.add_(b), some_long + expression)      wrong:  _0 = some_long + expression
                                                                    r = foo(x.add_(b), _0)
            right:  _0 = x.add_(b); _1 = some_long + expression; r = foo(_0, _1)
        """
        to_split: list[Any] = []
        user, offset = value.uses[0]
        self.scan_long_inlines(user, offset, to_split)
        for inlined in reversed(to_split):
            self.print_output_definition(inlined.node, self.use_of(inlined))

    def scan_long_inlines(self, user, offset: int, to_split: list) -> None:
        present = user in self.visited_split_uses
        stop = self.visited_split_uses[user] + 1 if present else 0
        for index in range(offset, stop - 1, -1):
            previous = user.inputs[index]
            if self.is_non_constant_inline(previous):
                to_split.append(previous)
        self.visited_split_uses[user] = offset
        if not present and user in self.output_inline:
            next_user, next_offset = user.output().uses[0]
            # -1: the use being printed now cannot be split
            self.scan_long_inlines(next_user, next_offset - 1, to_split)

    # ---- statements ----------------------------------------------------------------------------------------
    def print_output_definition(self, node, expression: str) -> None:
        self.assign_names(node.outputs)
        self.indent()
        if node.outputs:
            self.write(self.value_list(node.outputs), " = ")
        self.write(expression, "\n")

    def print_assignment(self, lhs, rhs) -> None:
        """`a, b = x, y`; a single Optional or Union variable is annotated where it is first assigned, so that
        reading the code back gives it that type and not the type of its first value."""
        if not lhs:
            return
        annotation = ""
        if len(lhs) == 1 and lhs[0] not in self.expr_table and _is_union_like(lhs[0].type) and \
                lhs[0] not in self.annotated_unions:
            self.annotated_unions.add(lhs[0])
            annotation = f" : {lhs[0].type.annotation_str(self.type_names)}"
        self.line(f"{self.value_list(lhs)}{annotation} = {self.value_list(rhs)}")

    def print_annotated_assignment(self, lhs, rhs) -> None:
        for target, source in zip(lhs, rhs):
            annotated = self.requires_annotation(target, source)
            annotation = f": {target.type.annotation_str(self.type_names)}" if annotated else ""
            self.line(f"{self.use_of(target)}{annotation} = {self.use_of(source)}")

    def requires_annotation(self, target, source) -> bool:
        """Loop-carried variables are annotated when their type differs from the initial value's; Optional and
        Union variables the first time they are assigned."""
        if not _is_union_like(target.type):
            return target.type != source.type
        if target in self.annotated_unions:
            return False
        self.annotated_unions.add(target)
        return True

    def print_block(self, block, has_other_statements: bool) -> None:
        """The nodes of `block`; `pass` if nothing at all would be printed in it."""
        if not has_other_statements and block.is_empty():
            self.line("pass")
        for node in block.nodes():
            self.print_node(node, print_const=False)

    def print_if(self, node) -> None:
        self.assign_names(node.outputs)
        self.line(f"if {self.use_of(node.inputs[0])}:")
        for keyword, block in zip(("", "else:"), node.blocks):
            if keyword:
                self.line(keyword)
            self.level += 1
            self.print_block(block, bool(node.outputs))
            self.print_assignment(node.outputs, block.outputs)
            self.level -= 1

    def print_loop(self, node) -> None:
        """Loop-carried values are assigned to the loop's outputs before the loop and at the end of each trip;
        the body's block inputs are written with the same names."""
        loop_type = loop_kind(node)
        if loop_type == "modified":
            raise SerializationError("a loop that an optimization turned into a combined while/for loop "
                                     "cannot be printed as Python")
        body = node.blocks[0]
        carried_outputs, carried_inputs = node.outputs, node.inputs[2:]
        self.assign_names(carried_outputs)
        for block_input, output in zip(body.inputs[1:], carried_outputs):
            self.alias(block_input, output)
        self.print_annotated_assignment(carried_outputs, carried_inputs)
        trip_count = body.inputs[0]
        self.assign_names([trip_count])
        if loop_type == "for":
            self.line(f"for {self.use_of(trip_count)} in range({self.use_of(node.inputs[0])}):")
        else:
            # the trip count's name stands for the loop condition in a while loop
            self.print_assignment([trip_count], [node.inputs[1]])
            self.line(f"while {self.use_of(trip_count)}:")
        offset = 1 if loop_type == "for" else 0
        self.level += 1
        self.print_block(body, len(body.inputs) > offset)
        self.print_assignment(body.inputs[offset:], body.outputs[offset:])
        self.level -= 1

    def print_node(self, node, print_const: bool) -> None:
        self.scan_type_dependencies(node)
        self.check_version(node)
        if not print_const and node.kind is prim.Constant:
            return
        printer = _STATEMENT_PRINTERS.get(node.kind)
        if printer is not None:
            printer(self, node)
            return
        expression = self.print_rhs(node)
        long_constant = node.kind is prim.Constant and self.is_long_line(expression)
        if node not in self.output_inline or long_constant:
            self.print_output_definition(node, expression)
            return
        # inlined: the output is written as this expression where it is used
        self.expr_table[node.output()] = expression
        if self.is_long_line(expression):
            self.split_long_inlines(node.output())

    def print_return(self, node) -> None:
        if self.enforce_importable and len(node.inputs) != 1:
            raise SerializationError("exportable methods must have a single return value")
        if node.inputs:
            self.line(f"return {self.value_list(node.inputs)}")

    def print_unpack(self, node) -> None:
        # `a, b, = t`: the trailing comma forces an unpack when read back, also for one element
        self.assign_names(node.outputs)
        targets = f"{self.value_list(node.outputs)}, = " if node.outputs else ""
        self.line(targets + self.use_of(node.inputs[0]))

    def print_set_attr(self, node) -> None:
        obj, new_value = node.inputs
        self.line(f"{self.use_of(obj)}.{node.s(attr.name)} = {self.use_of(new_value)}")

    def print_fork(self, node) -> None:
        """The forked subgraph becomes a local function; its inputs are the fork's inputs."""
        name = self.gen_name("__forked_function")
        subgraph = node.g(attr.Subgraph)
        self.line(f"def {name}():")
        for graph_input, fork_input in zip(subgraph.inputs, node.inputs):
            self.alias(graph_input, fork_input)
        self.print_body(subgraph.block)
        self.print_output_definition(node, f"fork({name})")

    def print_enter(self, node) -> None:
        target, result = node.inputs[0], node.outputs[0]
        suffix = ""
        if result.uses:
            self.ident_refs[result] = self.gen_unique_name_for(result)
            suffix = f" as {self.use_of(result)}"
        self.line(f"with {self.use_of(target)}{suffix}:")
        self.level += 1

    def print_exit(self, node) -> None:
        # an Exit right after its Enter closes an empty with-block
        if node.prev is not None and node.prev.kind is prim.Enter:
            self.line("pass")
        self.level -= 1

    def print_closure(self, node) -> None:
        if self.enforce_importable:
            raise SerializationError("closures are not exportable")
        self.assign_names(node.outputs)
        subgraph = node.g(attr.Subgraph)
        self.assign_names(subgraph.inputs)
        params = ", ".join(f"{self.use_of(v)}: {v.type.annotation_str(self.type_names)}" for v in subgraph.inputs)
        self.line(f"def {self.use_of(node.output())}({params}):")
        self.print_body(subgraph.block)

    def print_module_container_index(self, node) -> None:
        container, key = node.inputs
        result = node.outputs[0]
        self.assign_names([result])
        self.line(f"{self.use_of(result)} : {result.type.annotation_str(self.type_names)} = {self.use_of(container)}"
                  f"[{self.use_of(key)}]")

    # ---- expressions ---------------------------------------------------------------------------------------
    def print_rhs(self, node) -> str:
        """The expression a node computes, e.g. `torch.add(x, y)`."""
        printer = _EXPRESSION_PRINTERS.get(node.kind)
        if printer is not None:
            return printer(self, node)
        if node.kind in _CAST_FUNCTIONS:
            return f"{_CAST_FUNCTIONS[node.kind]}({self.value_list(node.inputs)})"
        if node.kind in _IMPLICIT_CASTS:
            return f"annotate({node.output().type.annotation_str(self.type_names)}, {self.use_of(node.inputs[0])})"
        return self.print_operator_call(node)

    def print_operator_call(self, node) -> str:
        schema = node.maybe_schema()
        arguments = schema.arguments if schema is not None else ()
        count = necessary_arguments(arguments, node.inputs) if schema is not None else len(node.inputs)
        parts = []
        for index, value in enumerate(node.inputs[:count]):
            keyword = f"{arguments[index].name}=" if index < len(arguments) and arguments[index].kwarg_only else ""
            parts.append(keyword + self.use_of(value))
        return f"{op_name(node.kind, pinned_overload(node))}({', '.join(parts)})"

    def print_constant_node(self, node) -> str:
        output_type = node.output().type
        if isinstance(output_type, T.FunctionType):
            self.deps.add(output_type)
            return (self.type_names and self.type_names(output_type)) or function_name(output_type, node)
        value = constant_value(node)
        if value is None:
            return "None"
        return self.print_constant(value, output_type)

    def print_constant(self, value: Any, static_type: T.Type | None = None) -> str:
        """IValue::repr with torch's printer hook: tensors, objects and values holding non-ASCII strings
        go to the constant table."""
        if goes_to_constant_table(value):
            return f"CONSTANTS.c{self.add_constant(value)}"
        return format_constant(self.print_constant, value, static_type, self.type_names)

    def add_constant(self, value: Any) -> int:
        """The index of `value` in the constant table; equal tensors of the same dtype and device share one."""
        if isinstance(value, torch.Tensor):
            for index, known in enumerate(self.constant_table):
                if isinstance(known, torch.Tensor) and same_tensor(known, value):
                    return index
        self.constant_table.append(value)
        return len(self.constant_table) - 1

    def print_value_index(self, node) -> str:
        container = self.use_of(node.inputs[0])
        container = container if container.isidentifier() else f"({container})"
        return f"{container}[{self.use_of(node.inputs[1])}]"

    def print_list_construct(self, node) -> str:
        list_type = node.output().type
        body = f"[{self.value_list(node.inputs)}]"
        if node.inputs and element_type_inferable(list_type.elem):
            return body
        return f"annotate({list_type.annotation_str(self.type_names)}, {body})"

    def print_dict_construct(self, node) -> str:
        dict_type = node.output().type
        pairs = zip(node.inputs[::2], node.inputs[1::2])
        body = "{" + ", ".join(f"{self.use_of(k)}: {self.use_of(v)}" for k, v in pairs) + "}"
        if node.inputs and element_type_inferable(dict_type.key) and element_type_inferable(dict_type.value):
            return body
        return f"annotate({dict_type.annotation_str(self.type_names)}, {body})"

    def print_tuple_construct(self, node) -> str:
        tuple_type = node.output().type
        prefix = tuple_type.annotation_str(self.type_names) if getattr(tuple_type, "qualified_name", None) else ""
        ending = ",)" if len(node.inputs) == 1 else ")"
        return f"{prefix}({self.value_list(node.inputs)}{ending}"

    def print_get_attr(self, node) -> str:
        obj, field = self.use_of(node.inputs[0]), node.s(attr.name)
        if is_valid_identifier(field):
            return f"{obj}.{field}"
        return f"getattr({obj}, {quote_string(field)})"

    def print_call_method(self, node) -> str:
        self_value = node.inputs[0]
        owner_type = self_value.type
        if isinstance(owner_type, T.ClassType | T.InterfaceType):
            self.deps.add(owner_type)
        schema = owner_type.method_schema(node.s(attr.name)) if hasattr(owner_type, "method_schema") else None
        return f"({self.use_of(self_value)}).{node.s(attr.name)}({self.call_arguments(node.inputs[1:], schema)})"

    def print_call_function(self, node) -> str:
        function_type = node.inputs[0].type
        function = function_type.function if isinstance(function_type, T.FunctionType) else None
        schema = getattr(function, "schema", None)
        return f"{self.use_of(node.inputs[0])}({self.call_arguments(node.inputs[1:], schema)})"

    def call_arguments(self, values, schema) -> str:
        """`a, b, ` for a call of a TorchScript function or method, with `name=` before the values of keyword-only
        parameters where the callee's def prints `*` (see _keyword_only_start). `values` are the call's last
        inputs: a method's schema also lists `self`, so they match the schema's trailing arguments."""
        star = _keyword_only_start(schema) if schema is not None else None
        if star is None:
            return "".join(f"{self.use_of(v)}, " for v in values)
        arguments = schema.arguments[len(schema.arguments) - len(values):]
        star -= len(schema.arguments) - len(values)
        return "".join(f"{arguments[k].name + '=' if k >= star else ''}{self.use_of(v)}, "
                       for k, v in enumerate(values))

    def print_unwrap_optional(self, node) -> str:
        # unwrap_optional(None) cannot be typed by schema matching: annotate the None
        value = node.inputs[0]
        argument = self.use_of(value)
        if isinstance(value.type, T.NoneType):
            argument = f"annotate({T.OptionalType(node.output().type).annotation_str(self.type_names)}, {argument})"
        return f"{op_name(node.kind)}({argument})"

    def print_isinstance(self, node) -> str:
        checked = node.tys(attr.types)
        names = [t.annotation_str(self.type_names) for t in checked]
        spelled = names[0] if len(names) == 1 else "(" + ", ".join(names) + ")"
        return f"isinstance({self.use_of(node.inputs[0])}, {spelled})"

    def print_python_op(self, node) -> str:
        name = node.s(attr.name) if node.has_attribute(attr.name) else "python_op"
        if self.enforce_importable:
            raise SerializationError(f"could not export Python function call '{name}'. Remove calls to Python "
                                     "functions before export")
        scalars = node.ss(attr.scalar_args) if node.has_attribute(attr.scalar_args) else []
        return f"^{name}({', '.join(scalars)})({self.value_list(node.inputs)})"

    # ---- dependencies and versions -------------------------------------------------------------------------
    def scan_type_dependencies(self, node) -> None:
        for value in (*node.inputs, *node.outputs):
            self.deps.add_contained(value.type)
        for name in node.attribute_names():
            kind = node.kind_of(name)
            if kind == "ty":
                self.deps.add_contained(node.ty(name))
            elif kind == "tys":
                for type_ in node.tys(name):
                    self.deps.add_contained(type_)

    def check_version(self, node) -> None:
        """The archive version this node needs: the bump of its operator, if any (see OPERATOR_VERSIONS)."""
        if node.kind.ns != "aten" or node.kind.name not in _VERSIONED_NAMES:
            return
        schema = node.maybe_schema()
        if schema is not None:
            self.min_version = max(self.min_version, OPERATOR_VERSIONS.get(schema.operator_name, 0))

    # ---- functions -----------------------------------------------------------------------------------------
    def print_body(self, block) -> None:
        """Constants first (in order of use), then the block and its return, one level deeper."""
        constants: list[Any] = []
        self.build_constant_list(block, constants)
        self.scan_block(block)
        self.level += 1
        for node in constants:
            self.print_node(node, print_const=True)
        self.print_block(block, bool(block.return_node.inputs))
        self.print_node(block.return_node, print_const=False)
        self.level -= 1

    def build_constant_list(self, block, constants: list) -> None:
        for node in (*block.nodes(), block.return_node):
            for value in node.inputs:
                if value.node.kind is prim.Constant and value.node not in self.seen_constants:
                    constants.append(value.node)
                    self.seen_constants.add(value.node)
            for inner in node.blocks:
                self.build_constant_list(inner, constants)

    def print_function(self, function, print_first_argument_type: bool = True) -> None:
        """`def name(arg: T, ...) -> R:` and the body of a function's graph."""
        schema = function_schema(function)
        graph = function.graph
        self.used_names = set()
        self.indent()
        self.write("def ", function.name, "(")
        star = _keyword_only_start(schema)
        for index, (argument, value) in enumerate(zip(schema.arguments, graph.inputs)):
            self.deps.add_contained(argument.type)
            name = self.gen_name(argument.name)
            if index == star:
                self.write(",\n    *" if index > 0 else "*")
            if index > 0 or index == star:
                self.write(",\n    ", name, ": ", argument.type.annotation_str(self.type_names))
            else:
                annotation = f": {argument.type.annotation_str(self.type_names)}" if print_first_argument_type else ""
                self.write(name, annotation)
            if argument.has_default:
                self.write("=", self.print_default(argument))
            self.ident_refs[value] = name
        return_type = schema.returns[0].type if schema.returns else T.NoneType.get()
        self.deps.add_contained(return_type)
        self.write(") -> ", return_type.annotation_str(self.type_names), ":\n")
        self.print_body(graph.block)

    def print_method(self, function) -> None:
        """A method as `.code` shows it: `self` without its type."""
        self.print_function(function, print_first_argument_type=False)

    def print_default(self, argument) -> str:
        value = argument.default_value
        # a BroadcastingList default is one value for the whole list
        if isinstance(argument.type, T.ListType) and isinstance(value, int | float | bool) and argument.N:
            value = [value] * argument.N
        return self.print_constant(value, argument.type)

def _keyword_only_start(schema) -> int | None:
    """Where the def prints `*`: before the first keyword-only parameter when one of them has a default.

    torch.jit prints keyword-only parameters as positional ones (it only scripts those without defaults, and
    its archives lose the rule). Keyword-only parameters with defaults are tsjit's extension: their `*` keeps
    them keyword-only through an archive, and TorchScript's parser (torch.jit.load's) reads it."""
    arguments = schema.arguments
    if not any(a.kwarg_only and a.has_default for a in arguments):
        return None
    return next(k for k, a in enumerate(arguments) if a.kwarg_only)


# ---- tables of node printers ---------------------------------------------------------------------------------
_STATEMENT_PRINTERS = {
    prim.Return: PythonPrinter.print_return,
    prim.Loop: PythonPrinter.print_loop,
    prim.If: PythonPrinter.print_if,
    prim.TupleUnpack: PythonPrinter.print_unpack,
    prim.ListUnpack: PythonPrinter.print_unpack,
    prim.SetAttr: PythonPrinter.print_set_attr,
    prim.fork: PythonPrinter.print_fork,
    prim.Enter: PythonPrinter.print_enter,
    prim.Exit: PythonPrinter.print_exit,
    prim.Closure: PythonPrinter.print_closure,
    prim.ModuleContainerIndex: PythonPrinter.print_module_container_index,
}

_EXPRESSION_PRINTERS = {
    prim.PythonOp: PythonPrinter.print_python_op,
    prim.Uninitialized: lambda self, node: f"uninitialized({node.output().type.annotation_str(self.type_names)})",
    prim.Constant: PythonPrinter.print_constant_node,
    aten.__getitem__: PythonPrinter.print_value_index,
    prim.TupleConstruct: PythonPrinter.print_tuple_construct,
    prim.TupleIndex: lambda self, node: f"({self.use_of(node.inputs[0])})[{self.use_of(node.inputs[1])}]",
    prim.TupleSlice: lambda self, node: (f"({self.use_of(node.inputs[0])})"
                                         f"[{node.i(attr.beg)}:{node.i(attr.end)}]"),
    prim.ListConstruct: PythonPrinter.print_list_construct,
    prim.DictConstruct: PythonPrinter.print_dict_construct,
    prim.CreateObject: lambda self, node: (f"{node.output().type.annotation_str(self.type_names)}.__new__("
                                           f"{node.output().type.annotation_str(self.type_names)})"),
    prim.GetAttr: PythonPrinter.print_get_attr,
    prim.CallFunction: PythonPrinter.print_call_function,
    prim.CallMethod: PythonPrinter.print_call_method,
    aten._unwrap_optional: PythonPrinter.print_unwrap_optional,
    # unchecked_unwrap_optional comes from old archives; it is re-saved as the equivalent unchecked_cast
    prim.unchecked_unwrap_optional: lambda self, node: (
        f"unchecked_cast({node.output().type.annotation_str(self.type_names)}, {self.use_of(node.inputs[0])})"),
    prim.unchecked_cast: lambda self, node: (f"unchecked_cast({node.output().type.annotation_str(self.type_names)}, "
                                             f"{self.use_of(node.inputs[0])})"),
    prim.isinstance: PythonPrinter.print_isinstance,
    prim.tolist: lambda self, node: (f"annotate({node.output().type.annotation_str(self.type_names)}, "
                                     f"{self.use_of(node.inputs[0])}.tolist())"),
    prim.EnumValue: lambda self, node: f"({self.use_of(node.inputs[0])}).value",
    prim.EnumName: lambda self, node: f"({self.use_of(node.inputs[0])}).name",
}

_VERSIONED_NAMES = frozenset(name.split("::")[1].split(".")[0] for name in OPERATOR_VERSIONS)


# ---- helpers ---------------------------------------------------------------------------------------------------
def op_name(kind: Symbol, overload: str | None = None) -> str:
    """`torch.add` for aten::add, `ops.prim.NumToTensor` for other namespaces; with an overload (of a pinned
    node), `ops.aten.add.Scalar` or `ops.aten.add.default`."""
    if overload is not None:
        return f"ops.{kind.ns}.{kind.name}.{overload or DEFAULT_OVERLOAD}"
    if kind in _OVERRIDDEN_OP_NAMES:
        return _OVERRIDDEN_OP_NAMES[kind]
    if kind.ns == "aten":
        return f"torch.{kind.name}"
    return f"ops.{kind.ns}.{kind.name}"


def loop_kind(node) -> str:
    """"for", "while" or "modified" (torch's LoopView::loopType): a for loop has an always-true condition and
    a trip count that is given or used; a while loop has no real trip count."""
    body = node.blocks[0]
    trip_count = _constant_or_missing(node.inputs[0])
    condition_true = _constant_or_missing(node.inputs[1]) is True and _constant_or_missing(body.outputs[0]) is True
    trip_count_given = trip_count is _MISSING or trip_count != INT64_MAX or bool(body.inputs[0].uses)
    if condition_true:
        return "for" if trip_count_given else "while"
    return "modified" if trip_count_given else "while"


_MISSING = object()


def _constant_or_missing(value) -> Any:
    if value.node.kind is not prim.Constant:
        return _MISSING
    return constant_value(value.node)


def necessary_arguments(arguments, inputs) -> int:
    """How many inputs to print: trailing inputs that are constants equal to their defaults are dropped
    (torch's CalculateNecessaryArgs)."""
    if len(arguments) < len(inputs):
        return len(inputs)
    for index in range(len(arguments) - 1, -1, -1):
        argument = arguments[index]
        if index >= len(inputs) or not argument.has_default:
            return index + 1
        actual = _constant_or_missing(inputs[index])
        if actual is _MISSING or not _same_ivalue(actual, argument.default_value):
            return index + 1
    return 0


def _same_ivalue(a: Any, b: Any) -> bool:
    """IValue equality: numbers compare by value, but a bool is never an int."""
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same_ivalue(x, y) for x, y in zip(a, b))
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return False
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - incomparable values are simply different
        return False


def function_name(function_type: T.FunctionType, node) -> str:
    """The qualified name a function constant prints as (from the function, else the node's `name`)."""
    function = function_type.function
    qualname = getattr(function, "qualname", None) or getattr(function, "name", None)
    if qualname is None and node.has_attribute(attr.name):
        qualname = node.s(attr.name)
    if qualname is None:
        raise SerializationError("a function constant has no name")
    return qualname


def function_schema(function):
    """The schema of a function, or one built from its graph (arguments named after the inputs)."""
    schema = getattr(function, "schema", None)
    if schema is not None:
        return schema
    graph = function.graph
    arguments = [Argument(debug_name_base(v) if v.has_debug_name() else f"_{i}", v.type)
                 for i, v in enumerate(graph.inputs)]
    returns = [Argument("", graph.outputs[0].type)] if graph.outputs else []
    return FunctionSchema(function.name, "", arguments, returns)


def debug_name_base(value) -> str:
    """`x` for `x.3` (torch's debugNameBase): a trailing `.<digits>` is dropped."""
    name = value.debug_name
    head, dot, tail = name.rpartition(".")
    return head if dot and tail.isdigit() else name


def make_valid_identifier(candidate: str) -> str:
    """Any character that cannot appear in an identifier becomes `_`; a leading digit gets a `_` before it."""
    prefix = "_" if not candidate or candidate[0].isdigit() else ""
    return prefix + "".join(c if (c.isascii() and c.isalnum()) or c == "_" else "_" for c in candidate)


def is_valid_identifier(name: str) -> bool:
    return bool(name) and name.isascii() and (name[0].isalpha() or name[0] == "_") and \
        all(c.isalnum() or c == "_" for c in name)


def _is_union_like(type_: T.Type) -> bool:
    return isinstance(type_, T.UnionType | T.OptionalType)


def _previous_non_constant(node):
    node = node.prev
    while node.kind is prim.Constant:
        node = node.prev
    return node
