"""Execution plans as straight-line Python: a graph generated as the source of one Python function.

What torch.fx does for a GraphModule, done here for the graph executor's optimized plans: every value becomes a
local variable, every node one direct call of its resolved Operation (operations.py), If and Loop become Python
`if` and `for`/`while`, and constants are literals or globals of the generated function. There is no dispatch
loop and no register file, so a plan's call costs about what the same calls written by hand cost. For

    graph(%x : Tensor, %w : Tensor, %flag : bool):
      %y : Tensor = aten::mm(%x, %w)
      %z : Tensor = prim::If(%flag)
        block0():
          %a : Tensor = aten::relu(%y)
          -> (%a)
        block1():
          -> (%y)
      %r : Tensor = aten::mul(%z, %x)
      return (%r)

`generate_plan(graph).source` is

    def plan(x, w, flag):
        try:
            y = op_0(x, w)                  # aten::mm
            if flag:
                a = op_1(y)                 # aten::relu
                z = a; del a
            else:
                z = y
            del y
            r = op_2(z, x); del z, x        # aten::mul
            return r
        except Exception as error:
            raise plan_error(error, nodes)

Values are freed at their last use exactly where the interpreter frees its registers (last_uses.py): a `del`
after the node that moves them, or after the If or Loop holding their last use; values of scalar types (int,
float, bool, ...) hold no memory worth freeing and are never deleted. An exception is re-raised as the
interpreter raises it (`interpreter.node_error`): the failing node is the one on the line the traceback stopped
at in the generated function, so naming it costs nothing until something fails.

Graphs that fork or wait run in the interpreter, which can suspend at a wait; so do graphs whose source Python
cannot compile (more than 20 nested loops), and every graph while TSJIT_INTERPRETER=1.
"""

from __future__ import annotations

import keyword
import math
import os
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from tsjit.ir.constants import constant_value
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.symbols import aten, prim
from tsjit.ir.types import BoolType, DeviceType, FloatType, IntType, NoneType, StringType
from tsjit.runtime.interpreter import (
    SUBGRAPH_KINDS,
    InterpreterError,
    callee_finder,
    node_error,
)
from tsjit.runtime.last_uses import find_last_uses
from tsjit.runtime.operations import compile_operation

_SUSPENDING_KINDS = frozenset({prim.fork, aten.wait})
_CALL_KINDS = frozenset({prim.CallFunction, prim.CallMethod}) | SUBGRAPH_KINDS
_SCALAR_TYPES = (IntType, FloatType, BoolType, NoneType, StringType, DeviceType)
_LITERAL_CLASSES = (bool, int, str, type(None))
_INFINITE_TRIP = 2**63 - 1  # the trip count of a `while` loop


def interpreter_forced() -> bool:
    """TSJIT_INTERPRETER=1: run every plan in the interpreter (for debugging, and to compare with)."""
    return os.environ.get("TSJIT_INTERPRETER") == "1"


class GeneratedPlan:
    """A graph's generated Python function: `function(*inputs)` returns the graph's result like
    InterpreterState.run (one output, a tuple of several, None for none)."""

    def __init__(self, source: str, function: Callable[..., Any]):
        self.source = source
        self.function = function


def generate_plan(graph: Graph, executed_in: Any = None) -> GeneratedPlan | None:
    """The graph as a Python function, or None when it must run in the interpreter (fork/wait, too deeply nested).
    With `executed_in` (a threading.local), each run first sets its `graph` to this graph (what the profiling
    executor's last_executed_optimized_graph reads: one attribute store per call)."""
    if interpreter_forced() or _suspends(graph.block):
        return None
    generator = _Generator(graph, executed_in)
    source = "\n".join(generator.lines) + "\n"
    namespace = dict(generator.globals)
    try:
        code = compile(source, f"<tsjit plan {id(generator):x}>", "exec")
    except (SyntaxError, RecursionError, MemoryError):  # "too many statically nested blocks", deep nesting
        return None
    exec(code, namespace)
    return GeneratedPlan(source, namespace["plan"])


def _suspends(block: Block) -> bool:
    return any(node.kind in _SUSPENDING_KINDS or any(_suspends(b) for b in node.blocks) for node in block.nodes())


# ---- errors ----------------------------------------------------------------------------------------------------
def plan_error(error: Exception, nodes: Sequence[Node | None]) -> Exception:
    """The exception to raise for `error`, caught in a generated plan whose line k ran `nodes[k]`.

    As in the interpreter: a new InterpreterError naming the failing node; an InterpreterError from a called
    plan gets the calling node appended ("called from"); one raised by anything else passes through."""
    node = nodes[error.__traceback__.tb_lineno]
    if isinstance(error, InterpreterError):
        if node is None or node.kind not in _CALL_KINDS:
            return error
        return _called_from(error, node)
    return node_error(error, [node])


def _called_from(error: InterpreterError, node: Node) -> Exception:
    if not error.nodes or error.__cause__ is None:  # raised as it is (a step budget spent): nothing to extend
        return error
    return node_error(error.__cause__, [*error.nodes, node])


# ---- generating the source ---------------------------------------------------------------------------------------
class _Generator:
    """Walks the graph once, writing one line (or one `if`/`for`/`while` header) per node, and remembers which
    node each line runs (`nodes`, indexed by line number) for plan_error."""

    def __init__(self, graph: Graph, executed_in: Any = None):
        self.last_uses = find_last_uses(graph)
        self.names: dict[Value, str] = {}
        self.taken: set[str] = set()
        self.globals: dict[str, Any] = {"plan_error": plan_error}
        self.nodes: list[Node | None] = [None]  # line numbers count from 1
        self.lines: list[str] = []
        self.globals["nodes"] = self.nodes
        parameters = ", ".join(self.local(v) for v in graph.inputs)
        self.line(0, f"def plan({parameters}):")
        self.line(1, "try:")
        if executed_in is not None:
            self.globals.update(executed_in=executed_in, executed_graph=graph)
            self.line(2, "executed_in.graph = executed_graph")
        self.block(graph.block, 2)
        self.line(2, f"return {self.result(graph.block.return_node.inputs)}", graph.block.return_node)
        self.line(1, "except Exception as error:")
        self.line(2, "raise plan_error(error, nodes)")

    # ---- names -----------------------------------------------------------------------------------------------
    def local(self, value: Value) -> str:
        """A fresh local variable for `value`, named after its debug name."""
        base = re.sub(r"\W", "_", value.debug_name)
        base = f"v_{base}" if not base or not base[0].isalpha() or keyword.iskeyword(base) else base
        name, k = base, 0
        while name in self.taken or name in self.globals:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        self.names[value] = name
        return name

    def fresh(self, base: str) -> str:
        name, k = base, 0
        while name in self.taken:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        return name

    def global_(self, prefix: str, value: Any) -> str:
        name = f"{prefix}_{len(self.globals)}"
        self.globals[name] = value
        return name

    def read(self, value: Value) -> str:
        return self.names[value]

    def reads(self, values: Iterable[Value]) -> str:
        return ", ".join(self.read(v) for v in values)

    def result(self, values: Sequence[Value]) -> str:
        if len(values) == 1:
            return self.read(values[0])
        return f"({self.reads(values)},)" if values else "None"

    # ---- lines -----------------------------------------------------------------------------------------------
    def line(self, depth: int, text: str, node: Node | None = None) -> None:
        self.lines.append("    " * depth + text)
        self.nodes.append(node)

    def deletions(self, node: Node, values: Iterable[Value]) -> str:
        """`; del a, b` for the values among `values` worth freeing (each once), or ''."""
        names = dict.fromkeys(self.names[v] for v in values if self.freeable(v))
        return f"; del {', '.join(names)}" if names else ""

    def freeable(self, value: Value) -> bool:
        return value.node.kind is not prim.Constant and not isinstance(value.type, _SCALAR_TYPES)

    def moved(self, node: Node) -> list[Value]:
        """The inputs of `node` it reads for the last time."""
        return [v for i, v in enumerate(node.inputs) if self.last_uses.moves[(node, i)]]

    def block(self, block: Block, depth: int) -> None:
        for node in block.nodes():
            self.node(node, depth)
            dropped = self.last_uses.drops.get(node, ())
            if any(self.freeable(v) for v in dropped):
                self.line(depth, self.deletions(node, dropped)[2:], node)

    def nested_block(self, block: Block, targets: Sequence[str | None], depth: int) -> None:
        """The body of an `if`, `else`, `for` or `while`: the block, then its results into `targets`."""
        start = len(self.lines)
        self.block(block, depth)
        self.block_results(block.return_node, targets, depth)
        if len(self.lines) == start:
            self.line(depth, "pass")

    def node(self, node: Node, depth: int) -> None:
        if node.kind is prim.Constant:
            self.constant(node, depth)
        elif node.kind is prim.If:
            self.if_(node, depth)
        elif node.kind is prim.Loop:
            self.loop(node, depth)
        elif node.kind is prim.TupleConstruct:
            self.tuple_construct(node, depth)
        elif node.kind in _CALL_KINDS:
            self.call(node, depth, _call_operation(node), range(len(node.inputs)))
        else:
            operation, positions = compile_operation(node)
            self.call(node, depth, operation, positions)

    def call(self, node: Node, depth: int, operation: Callable, positions: Sequence[int]) -> None:
        """`outputs = op_k(inputs)`, deleting the inputs read for the last time."""
        function = self.global_("op", operation)
        arguments = ", ".join(self.read(node.inputs[i]) for i in positions)
        assigned = self.assignment(node.outputs)
        deleted = self.deletions(node, self.moved(node))
        if assigned and any(not v.uses for v in node.outputs):  # `a, _ = ...`: an unread result dies right away
            deleted = f"{deleted}, _" if deleted else "; del _"
        self.line(depth, f"{assigned}{function}({arguments}){deleted}", node)

    def tuple_construct(self, node: Node, depth: int) -> None:
        """`t = (a, b,)`: a tuple built where it is needed, not by a call (a plan returning several values builds
        one on every call)."""
        deleted = self.deletions(node, self.moved(node))
        if node.output().uses:
            self.line(depth, f"{self.local(node.output())} = ({''.join(self.read(v) + ', ' for v in node.inputs)})"
                             f"{deleted}", node)
        elif deleted:
            self.line(depth, deleted[2:], node)

    def assignment(self, outputs: Sequence[Value]) -> str:
        """The left-hand side of a call's line: `y = `, `a, b = ` or nothing for results nobody reads."""
        used = [v for v in outputs if v.uses]
        if not used:
            return ""
        if len(outputs) == 1:
            return f"{self.local(outputs[0])} = "
        return ", ".join(self.local(v) if v.uses else "_" for v in outputs) + " = "

    def constant(self, node: Node, depth: int) -> None:
        """Constants are literals or globals; one that cannot be built fails only when its line runs."""
        output = node.output()
        if not output.uses:
            return
        try:
            value = constant_value(node)  # what prim_ops' prim::Constant operation returns, without loading it
        except Exception as error:
            self.call(node, depth, _raiser(error), ())
            return
        if type(value) in _LITERAL_CLASSES or (type(value) is float and math.isfinite(value)):
            self.names[output] = repr(value)
        else:
            self.names[output] = self.global_("const", value)

    def if_(self, node: Node, depth: int) -> None:
        self.line(depth, f"if {self.read(node.inputs[0])}:", node)
        outputs = [self.local(v) if v.uses else None for v in node.outputs]
        for k, block in enumerate(node.blocks):
            if k:
                self.line(depth, "else:", node)
            self.nested_block(block, outputs, depth + 1)

    def block_results(self, returned: Node, targets: Sequence[str | None], depth: int) -> None:
        """A block's results into `targets` (None: not stored), as one parallel assignment."""
        pairs = [(t, self.read(v)) for t, v in zip(targets, returned.inputs) if t is not None]
        deleted = self.deletions(returned, self.moved(returned))
        if pairs:
            self.line(depth, f"{', '.join(t for t, _ in pairs)} = {', '.join(s for _, s in pairs)}{deleted}",
                      returned.owning_block.owning_node)
        elif deleted:
            self.line(depth, deleted[2:], returned.owning_block.owning_node)

    def loop(self, node: Node, depth: int) -> None:
        """prim::Loop(trip, condition, *initial) with body block(iteration, *carried) -> (condition, *carried).

        The carried values are the body's parameters, which are also the Loop's outputs (one variable each).
        A loop whose condition starts and stays the constant True is a `for` over `range(trip)`; otherwise a
        `while` on the condition, with a counter unless the trip count is the `while` loop's maximum."""
        body = node.blocks[0]
        trip, condition, *initial = node.inputs
        iteration, *carried = body.inputs
        names = [self.local(v) for v in carried]
        for output, name in zip(node.outputs, names):
            self.names[output] = name
        moved = self.deletions(node, self.moved(node))
        if names:
            self.line(depth, f"{', '.join(names)} = {self.reads(initial)}{moved}", node)
        elif moved:
            self.line(depth, moved[2:], node)
        returned = body.return_node
        if _is_true(condition) and _is_true(returned.inputs[0]):
            counter = self.local(iteration) if iteration.uses else "_"
            self.line(depth, f"for {counter} in range({self.read(trip)}):", node)
            self.nested_block(body, [None, *names], depth + 1)
        else:
            self.while_loop(node, depth, names)
        unread = [n for n, v in zip(names, node.outputs) if not v.uses and self.freeable(v)]
        if unread:
            self.line(depth, f"del {', '.join(unread)}", node)

    def while_loop(self, node: Node, depth: int, names: list[str]) -> None:
        body = node.blocks[0]
        trip, condition = node.inputs[:2]
        iteration = body.inputs[0]
        flag = self.fresh("condition")
        self.line(depth, f"{flag} = {self.read(condition)}", node)
        counted = iteration.uses or not (_is_constant(trip) and _constant(trip) >= _INFINITE_TRIP)
        if counted:
            counter = self.local(iteration) if iteration.uses else self.fresh("iteration")
            self.line(depth, f"{counter} = 0", node)
            self.line(depth, f"while {flag} and {counter} < {self.read(trip)}:", node)
        else:
            self.line(depth, f"while {flag}:", node)
        self.nested_block(body, [flag, *names], depth + 1)
        if counted:
            self.line(depth + 1, f"{counter} += 1", node)


def _is_constant(value: Value) -> bool:
    return value.node.kind is prim.Constant


def _constant(value: Value) -> Any:
    return constant_value(value.node)


def _is_true(value: Value) -> bool:
    return _is_constant(value) and _constant(value) is True


def _raiser(error: Exception) -> Callable[[], Any]:
    def operation():
        raise error

    return operation


def _call_operation(node: Node) -> Callable[..., Any]:
    """The Operation of a call node (prim::CallFunction, prim::CallMethod, subgraph nodes): the callee's plan
    runs on its own executor, a Python callee is just called; the result has the node's number of outputs (a
    subgraph may return extra values after them)."""
    find, count = callee_finder(node), len(node.outputs)

    def operation(*values):
        callee, arguments = find(list(values))
        executor = getattr(callee, "executor", None)
        if executor is None:
            return callee(*arguments)
        result = executor.run(arguments)
        if len(executor.graph.outputs) == count:
            return result
        if count == 0:
            return None
        return result[0] if count == 1 else result[:count]  # the callee returned more (so a tuple)

    return operation
